#!/usr/bin/env python3
"""Golden tests: runs the cases of tests/golden/ (docs/testing.md).

A case is a folder holding its inputs, a `cmd` file and the `expected` transcript. The driver
copies the folder into a scratch folder, runs the lines of `cmd` there one by one, writes what
each printed into a transcript, normalises it (paths, times, the version) and compares it with
`expected`, byte for byte.

Lines of `cmd` (blank lines and lines starting with # are left out; words split as the shell
splits them; `$TRACES` is the folder of the real traces, ../shared/traces or $C3SCOPE_TRACES):

  c3scope ARGS...   run the CLI: its stdout, then its stderr and exit status when there are any
  sql DB FILE       run FILE's SQL statements on the SQLite file DB (made if missing): build an
                    input (an Nsight Systems export, rows added to a trace) or query a result;
                    each statement that returns rows prints a header and its rows
  cat FILE          print a file the commands wrote
  json FILE         print a JSON file the commands wrote, one value a line (for files written
                    on one line, such as summaries: a diff then shows what changed)
  gzip IN OUT       compress IN into OUT (no name, no time: the same bytes every run)
  ls                list the files of the scratch folder (what a command left behind)

A case that names a real trace ($TRACES/...) that is not there is skipped (exit 77), saying so.

  run_golden.py --c3scope build/bin/c3scope tests/golden/kineto_one_rank # one case
  run_golden.py --c3scope build/bin/c3scope tests/golden/*/              # every case
  C3_GOLDEN_UPDATE=1 run_golden.py ...     # rewrite `expected` with what the commands print now
"""
import argparse
import difflib
import gzip
import json
import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile

SKIP = 77


class Skip(Exception):
    pass


class CaseError(Exception):
    pass


def sql_value(v):
    if v is None:
        return "NULL"
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, bytes):
        return "X'" + v.hex() + "'"
    return str(v)


def statements(text):
    """The SQL statements of a script, split where sqlite3 says a statement is complete."""
    out, cur = [], ""
    for line in text.splitlines(keepends=True):
        cur += line
        if sqlite3.complete_statement(cur):
            if cur.strip():
                out.append(cur.strip())
            cur = ""
    if cur.strip() and not all(l.strip().startswith("--") for l in cur.strip().splitlines()):
        raise CaseError("unfinished SQL statement at the end: " + cur.strip()[:80])
    return out


def run_sql(db, script):
    lines = []
    con = sqlite3.connect(db, isolation_level=None)
    try:
        for stmt in statements(script):
            try:
                cur = con.execute(stmt)
            except sqlite3.Error as e:
                raise CaseError(f"{db}: {e} in: {stmt[:200]}")
            if cur.description is None:
                continue
            lines.append("|".join(d[0] for d in cur.description))
            for row in cur.fetchall():
                lines.append("|".join(sql_value(v) for v in row))
    finally:
        con.close()
    return "".join(l + "\n" for l in lines)


class Case:
    def __init__(self, folder, c3scope, traces, version):
        self.folder = os.path.abspath(folder)
        self.name = os.path.basename(self.folder.rstrip("/"))
        self.c3scope = c3scope
        self.traces = os.path.abspath(traces)
        self.version = version

    def words(self, line):
        try:
            words = shlex.split(line)
        except ValueError as e:
            raise CaseError(f"cmd: {e}: {line}")
        out = []
        for w in words:
            if "$TRACES" in w:
                path = w.replace("$TRACES", self.traces)
                if not os.path.exists(path):
                    raise Skip(f"needs the real trace {w} ({path} is not here; "
                               "set C3SCOPE_TRACES to the folder of ../shared/traces)")
                w = path
            out.append(w)
        return out

    def normalise(self, text):
        # The longest paths first: the scratch folders hold each other's names.
        for path, name in sorted([(self.work, "$WORK"), (self.tmp, "$TMPDIR"),
                                  (self.traces, "$TRACES")], key=lambda p: -len(p[0])):
            text = text.replace(path, name)
        text = re.sub(r"c3scope-open-[A-Za-z0-9]{6}", "c3scope-open-XXXXXX", text)
        text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "<time>", text)
        # The import's wall time: "(6 events, 1.2 KiB in 17.1 ms)".
        text = re.sub(r"( in )\d+(\.\d+)? (ns|us|µs|ms|s|min)\)$", r"\1<elapsed>)", text,
                      flags=re.M)
        if self.version:
            text = text.replace("c3scope " + self.version, "c3scope <version>")
        return text

    def step(self, line):
        w = self.words(line)
        head = "$ " + line + "\n"
        env = dict(os.environ, TMPDIR=self.tmp, LC_ALL="C", TZ="UTC", NO_COLOR="1")
        if w[0] == "c3scope":
            try:
                r = subprocess.run([self.c3scope] + w[1:], cwd=self.work, env=env,
                                   stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
            except subprocess.TimeoutExpired:
                raise CaseError(f"timed out after 300 s: {line}")
            out = r.stdout.decode("utf-8", "replace")
            err = r.stderr.decode("utf-8", "replace")
            text = head + out
            if err:
                text += "[stderr]\n" + err
            if r.returncode != 0:
                text += f"[exit {r.returncode}]\n"
            return text
        if w[0] == "sql" and len(w) == 3:
            with open(os.path.join(self.work, w[2]), encoding="utf-8") as f:
                return head + run_sql(os.path.join(self.work, w[1]), f.read())
        if w[0] == "cat" and len(w) == 2:
            p = os.path.join(self.work, w[1])
            if not os.path.exists(p):
                return head + "[no such file]\n"
            with open(p, encoding="utf-8", errors="replace") as f:
                text = f.read()
            return head + text + ("" if text.endswith("\n") or not text else "\n[no newline]\n")
        if w[0] == "json" and len(w) == 2:
            with open(os.path.join(self.work, w[1]), encoding="utf-8") as f:
                doc = json.load(f)
            return head + json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
        if w[0] == "gzip" and len(w) == 3:
            with open(os.path.join(self.work, w[1]), "rb") as f:
                data = f.read()
            with open(os.path.join(self.work, w[2]), "wb") as f:
                f.write(gzip.compress(data, mtime=0))
            return ""
        if w[0] == "ls" and len(w) == 1:
            names = sorted(os.listdir(self.work))
            return head + "".join(n + "\n" for n in names)
        raise CaseError(f"cmd: unknown line: {line}")

    def transcript(self):
        with open(os.path.join(self.folder, "cmd"), encoding="utf-8") as f:
            lines = [l.rstrip("\n") for l in f]
        lines = [l for l in lines if l.strip() and not l.lstrip().startswith("#")]
        if not lines:
            raise CaseError("cmd has no commands")
        for l in lines:
            self.words(l)  # skip before running anything when a real trace is missing
        scratch = tempfile.mkdtemp(prefix="c3-golden-" + self.name + "-")
        try:
            self.work = os.path.join(scratch, "work")
            self.tmp = os.path.join(scratch, "tmp")
            os.mkdir(self.tmp)
            shutil.copytree(self.folder, self.work,
                            ignore=lambda d, names: [n for n in names if n in ("cmd", "expected")])
            return self.normalise("".join(self.step(l) for l in lines))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


def run_case(folder, args, version):
    case = Case(folder, args.c3scope, args.traces, version)
    try:
        got = case.transcript()
    except Skip as e:
        print(f"{case.name}: skipped: {e}")
        return SKIP
    except (CaseError, OSError) as e:
        print(f"{case.name}: FAILED: {e}")
        return 1
    expected_path = os.path.join(case.folder, "expected")
    if os.environ.get("C3_GOLDEN_UPDATE") == "1":
        with open(expected_path, "w", encoding="utf-8") as f:
            f.write(got)
        print(f"{case.name}: expected rewritten")
        return 0
    try:
        with open(expected_path, encoding="utf-8") as f:
            want = f.read()
    except FileNotFoundError:
        want = ""
    if got == want:
        print(f"{case.name}: ok")
        return 0
    sys.stdout.writelines(difflib.unified_diff(want.splitlines(keepends=True),
                                               got.splitlines(keepends=True),
                                               case.name + "/expected", "what it prints now"))
    print(f"\n{case.name}: FAILED: the output differs from {expected_path} (above). If the change "
          "is intended, rewrite it with C3_GOLDEN_UPDATE=1 and review the diff (docs/testing.md).")
    return 1


def main():
    p = argparse.ArgumentParser(description="Runs golden test cases (docs/testing.md).")
    p.add_argument("--c3scope", required=True, help="the c3scope binary")
    here = os.path.dirname(os.path.abspath(__file__))
    default_traces = os.environ.get("C3SCOPE_TRACES") or os.path.join(
        here, "..", "..", "..", "shared", "traces")
    p.add_argument("--traces", default=default_traces, help="the folder of the real traces")
    p.add_argument("cases", nargs="+", help="case folders")
    args = p.parse_args()
    args.c3scope = os.path.abspath(args.c3scope)
    v = subprocess.run([args.c3scope, "--version"], capture_output=True, text=True)
    version = v.stdout.strip().split()[-1] if v.returncode == 0 and v.stdout.strip() else ""
    results = [run_case(c, args, version) for c in args.cases]
    if any(r == 1 for r in results):
        return 1
    return SKIP if results and all(r == SKIP for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
