#!/usr/bin/env python3
"""c3scope-mpi against c3scope (docs/scale.md): the `analyze`, `compare` and `export` lines of golden
cases run serially with c3scope and under an oversubscribed mpirun with c3scope-mpi at 1, 2, 3
and 4 processes; the exit code, standard output, c3scope's lines on standard error and every file
written must be the same. Then the failures: an input that cannot be read, a process that stops
answering, one that leaves early and one that is killed, each ending the job in bounded time.
With --export: export's own cases (a job of twelve PyTorch ranks on different clocks, converted
and as c3scope traces, pids that collide, unreadable inputs, real PyTorch and Nsight traces).

  run_mpi.py --c3scope BIN --c3scope-mpi BIN [--case DIR]... [--all-golden] [--np 1,2,3,4]
             [--faults] [--export]
"""
import argparse
import filecmp
import json
import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def traces_dir():
    d = os.environ.get("C3SCOPE_TRACES") or os.path.join(os.path.dirname(ROOT), "shared", "traces")
    return os.path.abspath(d)


def mpi_env():
    env = dict(os.environ)
    # Containers run as root; this machine has fewer cores than processes.
    env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    env["OMPI_MCA_rmaps_base_oversubscribe"] = "1"
    # Only shared memory and self on one machine: no network probing.
    env.setdefault("OMPI_MCA_btl", "self,vader")
    env.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
    # A container without ssh: Open MPI 4 looks for its remote launcher even for one machine.
    if shutil.which("ssh") is None and shutil.which("rsh") is None:
        env.setdefault("OMPI_MCA_plm_rsh_agent", "false")
    return env


def mpirun(np_, argv):
    return ["mpirun", "--oversubscribe", "-np", str(np_)] + argv


def commands(case):
    """The case's `c3scope ...` lines as argument lists ($TRACES expanded)."""
    out = []
    with open(os.path.join(case, "cmd")) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("c3scope "):
                continue
            line = line.replace("$TRACES", traces_dir())
            out.append(shlex.split(line)[1:])
    return out


def c3_lines(text):
    # mpirun adds its own report of a non-zero exit; c3scope's lines are compared.
    return [l for l in text.splitlines() if l.startswith("c3scope")]


def run(argv, cwd, timeout=300):
    p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                       env=mpi_env())
    return p.returncode, p.stdout, c3_lines(p.stderr)


MPI_COMMANDS = ("analyze", "compare", "export")


def outputs(cmds):
    """The files analyze, compare and export write."""
    out = set()
    for c in cmds:
        if c[0] not in MPI_COMMANDS:
            continue
        for flag, value in zip(c, c[1:]):
            if flag in ("--json", "--csv", "--summary", "--md", "--junit", "-o", "--output") and \
                    not value.startswith("/dev/"):
                out.add(value)
    return sorted(out)


def check_case(args, case, failures):
    cmds = commands(case)
    if any(traces_dir() in " ".join(c) for c in cmds) and not os.path.isdir(traces_dir()):
        print(f"skip {case}: no {traces_dir()}")
        return
    work = tempfile.mkdtemp(prefix="c3mpi-")
    try:
        base = os.path.join(work, "serial")
        shutil.copytree(case, base)
        want = []
        for c in cmds:
            want.append(run([args.c3scope] + c, base))
        for np_ in args.np:
            d = os.path.join(work, f"np{np_}")
            shutil.copytree(case, d)
            for c, w in zip(cmds, want):
                if c[0] not in MPI_COMMANDS:  # other commands make inputs: run them alike
                    run([args.c3scope] + c, d)
                    continue
                got = run(mpirun(np_, [args.c3scope_mpi] + c), d)
                if got != w:
                    failures.append(f"{os.path.basename(case)} np={np_}: {shlex.join(c)}\n"
                                    f"  c3scope:     rc={w[0]} err={w[2]}\n"
                                    f"  c3scope-mpi: rc={got[0]} err={got[2]}"
                                    + ("\n  stdout differs" if got[1] != w[1] else ""))
            for rel in outputs(cmds):
                a, b = os.path.join(base, rel), os.path.join(d, rel)
                if os.path.exists(a) != os.path.exists(b) or (
                        os.path.exists(a) and not filecmp.cmp(a, b, shallow=False)):
                    failures.append(f"{os.path.basename(case)} np={np_}: file {rel} differs")
        print(f"{os.path.basename(case)}: {len(cmds)} commands x {len(args.np)} process counts")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def check_local(args, failures):
    """--local DIR (every process on this one host) against the folder analyzed serially."""
    case = os.path.join(ROOT, "tests", "golden", "kineto_twelve_ranks")
    want = run([args.c3scope, "analyze", case, "--json", "/dev/stdout"], ROOT)
    for np_ in args.np:
        got = run(mpirun(np_, [args.c3scope_mpi, "analyze", "--local", case, "--json",
                               "/dev/stdout"]), ROOT)
        if got != want:
            failures.append(f"--local np={np_}: rc={got[0]} err={got[2]} (c3scope: rc={want[0]})")
    print(f"--local: {len(args.np)} process counts")


def shift_times(path, us):
    """A PyTorch trace's clock moved by `us` microseconds (another host's clock)."""
    with open(path) as f:
        doc = json.load(f)
    for e in doc["traceEvents"]:
        if "ts" in e:
            e["ts"] += us
    with open(path, "w") as f:
        json.dump(doc, f)


def check_export(args, failures):
    """export at each process count against c3scope export: the same file byte for byte."""
    twelve = os.path.join(ROOT, "tests", "golden", "kineto_twelve_ranks")
    with tempfile.TemporaryDirectory(prefix="c3mpi-export-") as case:
        ranks = os.path.join(case, "ranks")
        os.makedirs(ranks)
        for i in range(12):
            shutil.copy(os.path.join(twelve, f"rank{i}.json"), ranks)
        # Ranks on clocks of their own: the alignment moves them (by matched collective ends).
        for i, us in ((1, 5000.0), (5, -7000.0), (10, 123.5)):
            shift_times(os.path.join(ranks, f"rank{i}.json"), us)
        # A rank given twice (a copy): its pid is taken, so the second gets a free one.
        os.makedirs(os.path.join(case, "copy"))
        shutil.copy(os.path.join(ranks, "rank0.json"), os.path.join(case, "copy"))
        os.makedirs(os.path.join(case, "mixed"))
        # Inputs that cannot be read: the lowest one's line, nothing written. One that is not a
        # trace (process 0 finds it), and traces each missing a table, which fail where they are
        # read: counting the processes (process), loading for the alignment (kernel), rendering
        # (nvtx_range).
        bad = os.path.join(case, "bad")
        os.makedirs(bad)
        for i in range(6):
            shutil.copy(os.path.join(ranks, f"rank{i}.json"), bad)
        with open(os.path.join(bad, "rank2.json"), "w") as f:
            f.write('{"traceEvents": [ {"ph": "X", ')
        damaged = os.path.join(case, "damaged")
        os.makedirs(damaged)
        for i, table in ((4, "process"), (6, "kernel"), (8, "nvtx_range"), (9, None)):
            db = os.path.join(damaged, f"rank{i}.sqlite")
            subprocess.run([args.c3scope, "import", os.path.join(ranks, f"rank{i}.json"), "-o",
                            db], check=True, capture_output=True)
            if table:
                with sqlite3.connect(db) as c:
                    c.execute(f"DROP TABLE {table}")
        with open(os.path.join(case, "cmd"), "w") as f:
            f.write("c3scope import ranks/rank3.json -o mixed/rank3.sqlite\n"
                    "c3scope import ranks/rank7.json -o mixed/rank7.sqlite\n"
                    "c3scope export ranks -o job.json\n"
                    "c3scope export ranks -o job.json\n"
                    "c3scope export ranks/rank0.json mixed ranks/rank11.json copy/rank0.json "
                    "-o mixed.json\n"
                    "c3scope export mixed -o /dev/stdout\n")
        check_case(args, case, failures)
        # The failures at 2 and 4 processes (the damaged inputs are then on different ones).
        with open(os.path.join(case, "cmd"), "w") as f:
            f.write("c3scope export bad -o bad.json\n"
                    "c3scope export ranks/rank1.json missing.json -o bad.json\n"
                    "c3scope export damaged/rank9.sqlite ranks damaged/rank8.sqlite -o bad.json\n"
                    "c3scope export ranks damaged/rank6.sqlite damaged/rank8.sqlite -o bad.json\n"
                    "c3scope export damaged -o bad.json\n"
                    "c3scope export ranks -o ranks/rank1.json --force\n")
        check_case(argparse.Namespace(**{**vars(args), "np": [2, 4]}), case, failures)
        # A process that stops answering while the others export: the job ends within the
        # timeout, naming it, and writes nothing.
        env = mpi_env()
        env["C3SCOPE_MPI_TIMEOUT"] = "3"
        env["C3SCOPE_MPI_TEST_FAULT"] = "stop:1"
        try:
            p = subprocess.run(mpirun(3, [args.c3scope_mpi, "export", "ranks", "-o", "f.json"]),
                               cwd=case, capture_output=True, text=True, timeout=60, env=env)
            if p.returncode == 0 or os.path.exists(os.path.join(case, "f.json")) or \
                    not re.search(r"process 1 \(host .*\) has not answered for \d+ s", p.stderr):
                failures.append(f"export, a process stopped: rc={p.returncode} "
                                f"{p.stderr.strip()[-300:]}")
        except subprocess.TimeoutExpired:
            failures.append("export, a process stopped: the job did not end within 60 s")
    # Real traces: PyTorch profiler ranks and an Nsight Systems export, converted; one renders
    # into more than one piece on its way to process 0.
    with tempfile.TemporaryDirectory(prefix="c3mpi-export-real-") as case:
        with open(os.path.join(case, "cmd"), "w") as f:
            f.write("c3scope export $TRACES/kineto/hta_sampled_rank-0.json.gz "
                    "$TRACES/kineto/hta_sampled_rank-1.json.gz $TRACES/kineto/hta_nccl_data.json.gz "
                    "$TRACES/nsys/pipit_saxpy_nsys.sqlite -o real.json\n")
        check_case(args, case, failures)


def check_faults(args, failures):
    case = os.path.join(ROOT, "tests", "golden", "kineto_twelve_ranks")
    work = tempfile.mkdtemp(prefix="c3mpi-fault-")
    try:
        d = os.path.join(work, "in")
        shutil.copytree(case, d)
        # An input that cannot be read: the same one line as c3scope's, exit 2, nothing written.
        with open(os.path.join(d, "rank7.json"), "w") as f:
            f.write('{"traceEvents": [ {"ph": "X", ')
        want = run([args.c3scope, "analyze", ".", "--json", "r.json"], d)
        got = run(mpirun(3, [args.c3scope_mpi, "analyze", ".", "--json", "r.json"]), d)
        if want[0] != 2 or got[0] != 2 or not got[2] or got[2] != want[2] or \
                os.path.exists(os.path.join(d, "r.json")):
            failures.append(f"unreadable input: c3scope rc={want[0]} {want[2]}, "
                            f"c3scope-mpi rc={got[0]} {got[2]}")
        os.remove(os.path.join(d, "rank7.json"))
        mpi = args.c3scope_mpi
        launch = ["mpirun", "--oversubscribe"]
        empty = os.path.join(work, "empty")
        os.makedirs(empty)
        # Different per process (launchers need not pass the environment to every node):
        # process 0's C3SCOPE_MPI_TIMEOUT is every process's; a --rules file one machine lacks.
        for what, argv, expect in (
                ("a timeout only process 0 has wrong",
                 launch + ["-np", "1", "env", "C3SCOPE_MPI_TIMEOUT=abc", mpi, "analyze", d, ":",
                           "-np", "1", mpi, "analyze", d], "C3SCOPE_MPI_TIMEOUT='abc'"),
                ("a --rules file on one machine only",
                 launch + ["-np", "1", "-wdir", os.path.join(ROOT, "tests", "golden",
                                                            "analyze_summaries"),
                           mpi, "compare", "--rules", "all.rules", os.path.join(d, "rank0.json"),
                           os.path.join(d, "rank1.json"), ":", "-np", "1", "-wdir", empty, mpi,
                           "compare", "--rules", "all.rules", os.path.join(d, "rank0.json"),
                           os.path.join(d, "rank1.json")], "--rules all.rules: cannot read"),
                ("--local with --hta-critical-path",
                 launch + ["-np", "2", mpi, "analyze", "--local", d, "--hta-critical-path"],
                 "--hta-critical-path reads every input on process 0")):
            try:
                got = run(argv, d, timeout=60)
            except subprocess.TimeoutExpired:
                failures.append(f"{what}: the job did not end within 60 s")
                continue
            if got[0] != 2 or not any(expect in l for l in got[2]):
                failures.append(f"{what}: rc={got[0]} {got[2]}")
            print(f"{what}: exit {got[0]}")
        # A process whose --local folder is missing has no share; the other's files are read.
        want = run([args.c3scope, "analyze", d, "--json", "/dev/stdout"], ROOT)
        got = run(launch + ["-np", "1", "-wdir", d, mpi, "analyze", "--local", d, "--json",
                            "/dev/stdout", ":", "-np", "1", "-wdir", empty, mpi, "analyze",
                            "--local", os.path.join(empty, "none"), "--json", "/dev/stdout"],
                  ROOT)
        if got != want:
            failures.append(f"--local, one folder missing: rc={got[0]} {got[2]}")
        # Process 0 working long on its own (--hta-critical-path re-reads every input) is not
        # silence: heartbeats have a thread of their own.
        env = mpi_env()
        env["C3SCOPE_MPI_TIMEOUT"] = "1"
        traces = os.path.join(traces_dir(), "kineto")
        if os.path.isdir(traces):
            files = [os.path.join(traces, f) for f in ("hta_trace_diff_control.json.gz",
                                                       "hta_sampled_rank-0.json.gz")]
            p = subprocess.run(launch + ["-np", "2", mpi, "analyze"] + files * 3 +
                               ["--hta-critical-path", "--json", "/dev/null"], cwd=d,
                               capture_output=True, text=True, timeout=120, env=env)
            if p.returncode != 0:
                failures.append(f"long work on process 0: rc={p.returncode} "
                                f"{p.stderr.strip()[-300:]}")
        # A process that stops answering, leaves early or dies: the job ends within the timeout.
        for fault, expect in (("stop", r"process 1 \(host .*\) has not answered for \d+ s"),
                              ("exit", None), ("kill", None)):
            env = mpi_env()
            env["C3SCOPE_MPI_TIMEOUT"] = "3"
            env["C3SCOPE_MPI_TEST_FAULT"] = f"{fault}:1"
            t0 = time.monotonic()
            try:
                p = subprocess.run(mpirun(3, [args.c3scope_mpi, "analyze", ".", "--json",
                                              "f.json"]),
                                   cwd=d, capture_output=True, text=True, timeout=60, env=env)
            except subprocess.TimeoutExpired:
                failures.append(f"{fault}: the job did not end within 60 s")
                continue
            took = time.monotonic() - t0
            ok = p.returncode != 0 and not os.path.exists(os.path.join(d, "f.json"))
            if expect and not re.search(expect, p.stderr):
                ok = False
            if not ok:
                failures.append(f"{fault}: rc={p.returncode} after {took:.1f} s; "
                                f"stderr: {p.stderr.strip()[-400:]}")
            print(f"fault {fault}: exit {p.returncode} after {took:.1f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--c3scope", required=True)
    ap.add_argument("--c3scope-mpi", required=True)
    ap.add_argument("--case", action="append", default=[])
    ap.add_argument("--all-golden", action="store_true",
                    help="every golden case with an analyze line")
    ap.add_argument("--np", default="1,2,3,4")
    ap.add_argument("--faults", action="store_true")
    ap.add_argument("--export", action="store_true", help="export's own cases")
    ap.add_argument("--make-trace", help="c3_gui_make_trace: also a generated job of 24 ranks on "
                    "6 hosts with tensor, data and pipeline parallel communicators")
    args = ap.parse_args()
    args.np = [int(x) for x in args.np.split(",")]
    args.c3scope = os.path.abspath(args.c3scope)
    args.c3scope_mpi = os.path.abspath(args.c3scope_mpi)
    if shutil.which("mpirun") is None:
        print("no mpirun (scripts/setup installs openmpi-bin): skipped")
        return 77
    failures = []
    if args.all_golden:
        g = os.path.join(ROOT, "tests", "golden")
        for name in sorted(os.listdir(g)):
            cmd = os.path.join(g, name, "cmd")
            if os.path.exists(cmd) and any(l.startswith(tuple(f"c3scope {c}"
                                                              for c in MPI_COMMANDS))
                                           for l in open(cmd)):
                args.case.append(os.path.join(g, name))
    for case in args.case:
        check_case(args, os.path.abspath(case), failures)
    if args.make_trace:
        with tempfile.TemporaryDirectory(prefix="c3mpi-job-") as case:
            subprocess.run([args.make_trace, os.path.join(case, "job"), "--ranks", "24", "--tp",
                            "2", "--pp", "3", "--ranks-per-host", "4", "--steps", "50",
                            "--slow-rank", "1.2"], check=True, capture_output=True)
            with open(os.path.join(case, "cmd"), "w") as f:
                f.write("c3scope analyze job --why --steps --json r.json --csv c.csv "
                        "--what-if comm=hidden --what-if rank:23=on-time\n"
                        "c3scope analyze job --summary s.json.gz\n"
                        "c3scope analyze s.json.gz job/rank3.sqlite --json r2.json\n"
                        "c3scope compare s.json.gz job --json cmp.json --md cmp.md\n")
            check_case(args, case, failures)
    if args.export:
        check_export(args, failures)
    else:
        check_local(args, failures)
    if args.faults:
        check_faults(args, failures)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
