#!/usr/bin/env python3
"""c3scope-mpi at scale (issue 27, docs/scale.md "Measured"): generated jobs of N ranks x about
100,000 GPU activities each (c3_gui_make_trace: tensor, data and pipeline parallel communicators,
8 ranks per host) analyzed by `mpirun -np P c3scope-mpi analyze` at P = 1, 2 and 4 processes
(oversubscribed where the machine has fewer cores), next to `c3scope analyze` on the same job.
Prints, per job and process count: wall time, the speed-up over 1 process (the baseline measured
in the same run), process 0's peak resident memory (its outputs written) and the other processes'
largest, and the reduce's time and memory on process 0 (C3SCOPE_MPI_STATS).

  perf/scale/bench_scale.py [--ranks 64,256] [--activities 100000] [--np 1,2,4] [--keep DIR]
                            [--bin build/bin]
Steps are the job's "step N" ranges (--step), so each step's critical path is joined as in a
profiled training job.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def mpi_env():
    env = dict(os.environ)
    env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    env["OMPI_MCA_rmaps_base_oversubscribe"] = "1"
    env.setdefault("OMPI_MCA_btl", "self,vader")
    env.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
    if shutil.which("ssh") is None and shutil.which("rsh") is None:
        env.setdefault("OMPI_MCA_plm_rsh_agent", "false")
    return env


# A step of a large model: 32 layers, 24 short kernels per layer and pass, tensor and pipeline
# parallel: (3 + 48 + 1) * 32 + 4 + 1 + 1 = 1,670 GPU activities and 65 collectives per rank.
PER_STEP = 1670
STEP = "^step [0-9]+$"  # the synthetic job's step ranges


def make_job(make_trace, d, ranks, activities):
    steps = max(1, round(activities / PER_STEP))
    tp, pp = 2, 2 if ranks % 4 == 0 else 1
    subprocess.run([make_trace, d, "--ranks", str(ranks), "--steps", str(steps), "--layers", "32",
                    "--small-kernels", "24", "--tp", str(tp), "--pp", str(pp),
                    "--ranks-per-host", "8", "--no-api"],
                   check=True, stdout=subprocess.DEVNULL)
    return steps * PER_STEP


def timed(argv, env):
    t0 = time.monotonic()
    p = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit(f"bench_scale: {' '.join(argv)} failed ({p.returncode}): {p.stderr[-500:]}")
    return wall


def timed_peak(argv, env):
    """Wall time and the program's own peak resident memory (GNU time's %M)."""
    t0 = time.monotonic()
    p = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit(f"bench_scale: {' '.join(argv)} failed ({p.returncode}): {p.stderr[-500:]}")
    return wall, int(p.stderr.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", default="64,256")
    ap.add_argument("--activities", type=int, default=100000)
    ap.add_argument("--np", default="1,2,4")
    ap.add_argument("--keep")
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    args = ap.parse_args()
    c3scope = os.path.join(args.bin, "c3scope")
    mpi = os.path.join(args.bin, "c3scope-mpi")
    make_trace = os.path.join(args.bin, "c3_gui_make_trace")
    for b in (c3scope, mpi, make_trace):
        if not os.path.exists(b):
            sys.exit(f"bench_scale: no {b} (build with MPI and the GUI's test tools)")
    if shutil.which("mpirun") is None:
        sys.exit("bench_scale: no mpirun (scripts/setup installs openmpi-bin)")
    work = args.keep or tempfile.mkdtemp(prefix="c3-scale-")
    env = mpi_env()
    cores = os.cpu_count()
    print(f"c3scope-mpi at scale on {cores} cores (processes beyond that are oversubscribed)")
    print(f"{'ranks':>6} {'procs':>5} {'wall s':>8} {'x 1 proc':>8} {'peak MB p0':>11} "
          f"{'others MB':>9} {'reduce s':>9} {'reduce %':>8} {'reduce MB':>9}")
    peaks = {}  # (ranks, processes) -> (process 0's peak MB, the others' largest)
    try:
        for ranks in [int(x) for x in args.ranks.split(",")]:
            d = os.path.join(work, f"job{ranks}")
            if not os.path.isdir(d):
                t0 = time.monotonic()
                per = make_job(make_trace, d, ranks, args.activities)
                print(f"  (made {ranks} ranks x {per} activities in "
                      f"{time.monotonic() - t0:.0f} s: "
                      f"{sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d)) / 1e9:.2f}"
                      " GB)")
            wall, peak_kb = timed_peak([c3scope, "analyze", d, "--step", STEP, "--json",
                                        "/dev/null"], env)
            print(f"{ranks:>6} {'c3scope':>5} {wall:>8.2f} {'':>8} {peak_kb / 1024:>11.0f}")
            base = None
            for np_ in [int(x) for x in args.np.split(",")]:
                stats = os.path.join(work, f"stats{ranks}_{np_}.json")
                env["C3SCOPE_MPI_STATS"] = stats
                # --bind-to none: Open MPI binds each of 1 or 2 processes to a single core.
                wall = timed(["mpirun", "-np", str(np_), "--bind-to", "none", mpi, "analyze", d,
                              "--step", STEP, "--json", "/dev/null"], env)
                st = json.load(open(stats))
                base = base or wall
                # Process 0's peak with its outputs written; the others' largest.
                p0 = max(st["process_0_final_peak_kb"], st["per_process"][0]["peak_kb"]) / 1024
                others = max([p["peak_kb"] for p in st["per_process"][1:]] or [0]) / 1024
                print(f"{ranks:>6} {np_:>5} {wall:>8.2f} {base / wall:>8.2f} {p0:>11.0f} "
                      f"{others:>9.0f} {st['reduce_s']:>9.2f} {100 * st['reduce_s'] / wall:>8.1f} "
                      f"{st['reduce_kb'] / 1024:>9.0f}")
                sys.stdout.flush()
                peaks[(ranks, np_)] = (p0, others)
        # Issue 27's memory target: each process's peak within 1.25x from the smallest job to the
        # largest, at the same processes and at the same ranks per process.
        sizes = sorted({r for r, _ in peaks})
        if len(sizes) >= 2:
            small, large = sizes[0], sizes[-1]

            def ratio(a, b, k):
                return f"{peaks[a][k] / peaks[b][k]:.2f}x" if peaks[b][k] > 0 else "-"
            for np_ in sorted({p for _, p in peaks}):
                if (small, np_) in peaks and (large, np_) in peaks:
                    print(f"peak {large} against {small} ranks on {np_} process(es): process 0 "
                          f"{ratio((large, np_), (small, np_), 0)}, others "
                          f"{ratio((large, np_), (small, np_), 1)}")
            for p1 in sorted({p for _, p in peaks}):
                p2 = p1 * large // small
                if large % small == 0 and (small, p1) in peaks and (large, p2) in peaks:
                    print(f"peak {large} ranks on {p2} against {small} on {p1} (ranks per process "
                          f"the same): process 0 {ratio((large, p2), (small, p1), 0)}, largest "
                          f"process {max(peaks[(large, p2)]) / max(peaks[(small, p1)]):.2f}x")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
