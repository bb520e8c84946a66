#!/usr/bin/env python3
"""c3scope's "why" analyses against Holistic Trace Analysis (HTA 0.5.0) on real PyTorch traces.

A manual check: no test suite runs it (scripts/hta-check makes the venv with HTA and runs it).
Per trace, `c3scope analyze FILE --why --json OUT` against HTA's public functions:
  1. idle time per stream: HTA get_idle_time_breakdown(ranks=[r], visualize=False,
     show_idle_interval_stats=True) (its interval statistics give the gap counts) against the JSON's
     why.idle_per_stream (why.streams): host wait, kernel wait, other and their total. c3scope's
     comm wait (0 on these single-rank files) is printed and counted into "other".
  2. CUDA launch statistics: HTA get_cuda_kernel_launch_stats(ranks=[r], visualize=False)
     (one row per launch) against why.launches (per signature): rows = the sum of the counts,
     and the sums of call (cpu), GPU and launch-delay durations.
  3. the critical path of the first ProfilerStep: HTA critical_path_analysis(rank=r,
     annotation="ProfilerStep", instance_id=0) with HTA's defaults (its loader's filter kept:
     this is HTA's number as users get it), its length (the sum of the weights of the edges on
     the path), edges and get_critical_path_breakdown() by bound_by, against `c3scope analyze
     --hta-critical-path` (the JSON's hta_critical_path: HTA's model rebuilt by c3scope), equal
     to 0.001 us; and, informational, against c3scope's own path of the step
     (why.critical_path.steps[]: step_ns, path_ns, parts), which differs by definition.

How HTA is run:
  - The whole timeline, as c3scope reads it. HTA's Trace.load_traces() calls
    Trace._filter_irrelevant_gpu_kernels(), which keeps only the CPU events that start before
    the last ProfilerStep starts (with include_last_profiler_step=True: before it ends) and the
    GPU events whose launching CPU event it kept, and drops every other event. This script
    replaces that one method with a no-op before loading (a monkeypatch of
    hta.common.trace.Trace; no other HTA code is changed or copied). Everything else is HTA's,
    its timestamp rounding included: on files with fractional-microsecond timestamps it rounds
    each start up and each end down to whole microseconds.
  - Each trace in a child process (this file with --hta-worker) under a time limit
    (--hta-timeout, default 180 s): items HTA has not finished by then are skipped, with the
    reason printed (a skip does not fail the check, unless every trace is skipped).

Tolerances (all numbers in microseconds; c3scope's nanoseconds are divided by 1000):
  - idle per stream: c3scope = HTA + the overlap adjustment, exactly (0.001 us). HTA takes each
    gap as an operation's start minus the previous one's end in start order, negative where two
    operations of a stream overlap (HTA adds those as kernel wait); c3scope measures from the
    furthest end so far. The adjustment, sum(gap from the furthest end, 0 when negative) -
    sum(HTA's gap), is computed from HTA's loaded events and applies to kernel wait and the
    total. On files with fractional timestamps: within 1 us per gap of the stream, a practical
    tolerance rather than a bound (HTA's rounding moves each gap by less than 2 us and can move a
    gap across the 30 us kernel-wait threshold).
  - launch statistics: rows equal; sums equal (0.001 us), or on files with fractional
    timestamps within 2 us per row (HTA's rounding shortens each call and each GPU operation,
    and moves each delay, by less than 2 us; c3scope keeps the nanoseconds).
  A file has fractional timestamps when `c3scope analyze --hta-rounding` gives other numbers
  than the plain run; its numbers are then printed too (rows "c3 --hta-rounding", not checked).

Exit status: 0 when every checked number is equal within these tolerances, 1 otherwise, 2 on a
usage error.
  perf/hta/why_check.py --c3scope build/bin/c3scope [--hta-timeout 180] [--keep DIR] [TRACE ...]
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

EXACT_US = 0.001
KINETO_GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
CATEGORIES = ("host_wait", "kernel_wait", "other")


# --- HTA side (the child process) -------------------------------------------------------------


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.replace(tmp, path)


def overlap_adjustment(ta, rank):
    """Per stream, from HTA's loaded events: the sum of gaps from the furthest end so far (0 when
    an operation starts before it) minus the sum of HTA's start-order gaps, in us; how many
    operations start before the furthest end of the ones before them; how many gaps are > 0."""
    df = ta.t.get_trace(rank)
    sym = ta.t.symbol_table.get_sym_id_map()
    cats = [sym[c] for c in KINETO_GPU_CATS if c in sym]
    gpu = df[df["stream"].ne(-1) & df["cat"].isin(cats)]
    out = {}
    for stream, ops in gpu.groupby("stream"):
        ops = ops.sort_values(by="ts")
        end = ops["ts"] + ops["dur"]
        hta_gap = ops["ts"] - end.shift(1)
        from_furthest = ops["ts"] - end.cummax().shift(1)
        adjust = float((from_furthest.clip(lower=0) - hta_gap).sum())
        out[str(int(stream))] = {"adjust": adjust, "overlaps": int((from_furthest < 0).sum()),
                                 "positive_gaps": int((from_furthest > 0).sum())}
    return out


def hta_worker(trace_dir, out_path):
    import logging
    logging.disable(logging.WARNING)
    import hta.common.trace
    from hta.trace_analysis import TraceAnalysis

    # The whole timeline: no filtering of the events from the last ProfilerStep on.
    hta_filter = hta.common.trace.Trace._filter_irrelevant_gpu_kernels
    hta.common.trace.Trace._filter_irrelevant_gpu_kernels = lambda self, *a, **k: None

    res = {}
    t0 = time.perf_counter()
    ta = TraceAnalysis(trace_dir=trace_dir)
    r = ta.t.get_ranks()[0]
    res["rank"] = int(r)
    res["load_s"] = time.perf_counter() - t0

    idle, stats = ta.get_idle_time_breakdown(ranks=[r], visualize=False,
                                             show_idle_interval_stats=True)
    streams = {}
    for row in idle.itertuples():
        s = streams.setdefault(str(int(row.stream)), {c: 0.0 for c in CATEGORIES})
        s[row.idle_category] = float(row.idle_time)
    for stream, count in stats.groupby("stream")["count"].sum().items():
        streams.setdefault(str(int(stream)), {c: 0.0 for c in CATEGORIES})["gaps"] = int(count)
    adj = overlap_adjustment(ta, r)
    for stream, s in streams.items():
        s.setdefault("gaps", 0)
        s.update(adj.get(stream, {"adjust": 0.0, "overlaps": 0, "positive_gaps": 0}))
    res["idle"] = streams

    ls = ta.get_cuda_kernel_launch_stats(ranks=[r], visualize=False)[r]
    res["launch"] = {"rows": int(len(ls)), "cpu": float(ls["cpu_duration"].sum()),
                     "gpu": float(ls["gpu_duration"].sum()),
                     "delay": float(ls["launch_delay"].sum())}
    res["analyses_s"] = time.perf_counter() - t0
    write_json(out_path, res)  # what the parent gets if the critical path runs out of time

    df = ta.t.get_trace(r)
    sym = ta.t.symbol_table.get_sym_id_map()
    names = {v: k for k, v in sym.items() if "ProfilerStep" in k}  # HTA's own match
    steps = df[df["name"].isin(list(names))]
    if steps.empty:
        res["cp"] = {"skipped": "no ProfilerStep annotation in the trace"}
    else:
        first = steps.iloc[0]  # instance_id=0 is the first of these rows, in the trace's order
        t1 = time.perf_counter()
        # The critical path as HTA's users get it: loaded again with HTA's own filter.
        hta.common.trace.Trace._filter_irrelevant_gpu_kernels = hta_filter
        ta = TraceAnalysis(trace_dir=trace_dir)
        got = ta.critical_path_analysis(rank=r, annotation="ProfilerStep", instance_id=0)
        if got is None or not got[1]:
            res["cp"] = {"skipped": "HTA's critical_path_analysis failed"}
        else:
            g = got[0]
            bd = g.get_critical_path_breakdown()
            bound = bd.groupby("bound_by")["duration"].sum()
            res["cp"] = {"step": names[first["name"]], "ts": float(first["ts"]),
                         "dur": float(first["dur"]),
                         "length": float(sum(e.weight for e in g.critical_path_edges_set)),
                         "edges": len(g.critical_path_edges_set),
                         "by_bound": {k: float(v) for k, v in bound.items() if k and v},
                         "s": time.perf_counter() - t1}
    write_json(out_path, res)
    return 0


# --- c3scope side and the comparison (the parent) ---------------------------------------------


def run_c3scope(c3scope, path, out, extra):
    t0 = time.perf_counter()
    r = subprocess.run([c3scope, "analyze", path, "--why", "--json", out, *extra],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"c3scope analyze {' '.join(extra)} failed: {r.stderr.strip()}")
    with open(out) as f:
        report = json.load(f)
    report["why"]["hta_critical_path"] = report.get("hta_critical_path", [])
    return report["why"], time.perf_counter() - t0


def c3_numbers(why):
    """Idle per stream and launch sums of one c3scope report, in us."""
    rows = why.get("idle_per_stream", why.get("streams"))
    if rows is None:
        raise RuntimeError("c3scope's JSON has no why.idle_per_stream / why.streams")
    idle = {}
    for s in rows:
        key = str(s["stream"])
        if key in idle:
            raise RuntimeError(f"stream {key} on two devices or processes: not one rank")
        idle[key] = {"host_wait": s["host_wait_ns"] / 1e3, "kernel_wait": s["kernel_wait_ns"] / 1e3,
                     "other": (s["other_ns"] + s.get("comm_wait_ns", 0)) / 1e3,
                     "comm_wait": s.get("comm_wait_ns", 0) / 1e3,
                     "total": s["idle_ns"] / 1e3, "gaps": s["gaps"]}
    la = why["launches"]
    launch = {"rows": sum(x["count"] for x in la),
              "cpu": sum(x["cpu_duration_ns"] for x in la) / 1e3,
              "gpu": sum(x["gpu_duration_ns"] for x in la) / 1e3,
              "delay": sum(x["launch_delay_ns"] for x in la) / 1e3}
    return idle, launch


def num(x, sign=False):
    if float(x).is_integer():
        return f"{int(x):{'+' if sign and x else ''},}"
    return f"{x:{'+' if sign else ''},.3f}"


def row(label, values, note=""):
    cells = "".join(f"{v:>14}" if isinstance(v, str) else f"{num(v):>14}" for v in values)
    print(f"  {label:<22}{cells}  {note}".rstrip())


def compare(c3, hta, expect, tol):
    """Whether c3scope's numbers equal HTA's plus the expected differences within tol."""
    return all(abs(c3[k] - hta[k] - expect.get(k, 0.0)) <= tol for k in hta)


def idle_table(idle, idle_r, hta_idle, rounded):
    failed = []
    cols = (*CATEGORIES, "total")
    print(f"  {'idle per stream':<22}" + "".join(f"{c:>14}" for c in cols) + f"{'gaps':>14}"
          + "  result")
    none_c3 = {**dict.fromkeys((*cols, "comm_wait"), 0.0), "gaps": 0}
    none_hta = {**dict.fromkeys(CATEGORIES, 0.0), "gaps": 0, "adjust": 0.0, "overlaps": 0,
                "positive_gaps": 0}
    for s in sorted(set(idle) | set(hta_idle), key=int):
        # A stream only one side lists counts as no idle time on the other.
        c3, h = idle.get(s, none_c3), dict(hta_idle.get(s, none_hta))
        h["total"] = sum(h[c] for c in CATEGORIES)
        expect = {"kernel_wait": h["adjust"], "total": h["adjust"]}
        tol = max(c3["gaps"], h["gaps"]) * 1.0 if rounded else EXACT_US
        ok = compare({k: c3[k] for k in cols}, {k: h[k] for k in cols}, expect, tol)
        same = compare({k: c3[k] for k in cols}, {k: h[k] for k in cols}, {}, EXACT_US)
        if same:
            note = "equal to HTA"
        elif ok and rounded:
            note = f"HTA's rounding: within 1 us per gap ({num(tol)} us)"
        elif ok:
            note = f"equal to HTA + overlap adjustment ({h['overlaps']} overlapping op(s))"
        else:
            note = "DIFFERS from HTA"
            failed.append(f"idle of stream {s}")
        if c3["gaps"] != h["gaps"] and not rounded:
            note += f"; HTA's gaps include {h['gaps'] - h['positive_gaps']} of <= 0 us"
        if c3["comm_wait"]:
            note += f"; c3scope's other includes comm wait {num(c3['comm_wait'])}"
        row(f"s{s} c3scope", [c3[k] for k in cols] + [c3["gaps"]], note)
        if not same:
            row("    HTA", [h[k] for k in cols] + [h["gaps"]])
            if rounded:
                rr = idle_r.get(s, none_c3)
                row("    c3 --hta-rounding", [rr[k] for k in cols] + [rr["gaps"]])
            else:
                row("    expected diff", [num(expect.get(k, 0.0), True) for k in cols])
    return failed


def launch_table(launch, launch_r, hl, rounded):
    cols = ("rows", "cpu", "gpu", "delay")
    tol = 2.0 * hl["rows"] if rounded else EXACT_US
    same = compare(launch, hl, {}, EXACT_US)
    ok = launch["rows"] == hl["rows"] and compare(launch, hl, {}, tol)
    print(f"  {'launch statistics':<22}" + "".join(
        f"{c:>14}" for c in ("rows", "call sum", "GPU sum", "delay sum")) + "  result")
    note = ("equal to HTA" if same else
            f"rows equal; sums within HTA's rounding, 2 us per row ({num(tol)} us)" if ok else
            "DIFFERS from HTA")
    row("c3scope", [launch[k] for k in cols], note)
    if not same:
        row("    HTA", [hl[k] for k in cols])
        row("    c3scope - HTA", [num(launch[k] - hl[k], True) for k in cols])
        if rounded:
            row("    c3 --hta-rounding", [launch_r[k] for k in cols])
    return [] if ok else ["launch statistics"]


def check_trace(a, path, root):
    name = os.path.basename(path)
    work = os.path.join(root, name.replace(".json.gz", "").replace(".json", ""))
    tdir = os.path.join(work, "trace")
    os.makedirs(tdir, exist_ok=True)
    link = os.path.join(tdir, name)
    if not os.path.exists(link):
        os.symlink(os.path.abspath(path), link)

    why, c3_s = run_c3scope(a.c3scope, path, os.path.join(work, "c3scope.json"),
                            ["--hta-critical-path"])
    why_r, _ = run_c3scope(a.c3scope, path, os.path.join(work, "c3scope-rounded.json"),
                           ["--hta-rounding"])
    idle, launch = c3_numbers(why)
    idle_r, launch_r = c3_numbers(why_r)
    rounded = (idle, launch) != (idle_r, launch_r)

    out = os.path.join(work, "hta.json")
    t0 = time.perf_counter()
    timed_out = False
    try:
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--hta-worker", tdir, out],
                           capture_output=True, text=True, timeout=a.hta_timeout)
        if r.returncode != 0 and not os.path.exists(out):
            tail = "\n".join(r.stderr.strip().splitlines()[-5:])
            raise RuntimeError(f"HTA failed on {name}:\n{tail}")
    except subprocess.TimeoutExpired:
        timed_out = True
    hta_s = time.perf_counter() - t0
    hta = {}
    if os.path.exists(out):
        with open(out) as f:
            hta = json.load(f)

    print(f"== {name}: rank {hta.get('rank', '?')}; c3scope {c3_s:.2f} s, HTA {hta_s:.1f} s; "
          + ("fractional timestamps (HTA rounds starts up, ends down to whole us)"
             if rounded else "whole-microsecond timestamps"))
    if "idle" not in hta:
        print(f"  SKIPPED: HTA did not load and analyse it within {a.hta_timeout} s")
        return [], True
    failed = idle_table(idle, idle_r, hta["idle"], rounded)
    failed += launch_table(launch, launch_r, hta["launch"], rounded)
    failed += print_cp(why, hta, timed_out, a.hta_timeout)
    return [f"{name}: {x}" for x in failed], False


# HTA's bound_by names for c3scope's hta_critical_path.bound_by_us keys.
BOUND_BY = {"cpu": "cpu_bound", "launch": "gpu_kernel_launch_overhead",
            "kernel_kernel": "gpu_kernel_kernel_overhead", "compute": "gpu_compute_bound",
            "communication": "gpu_communication_bound"}


def print_cp(why, hta, timed_out, limit):
    """HTA's critical path against c3scope's rebuild of it (checked) and its own (informational);
    returns what differs."""
    cp = hta.get("cp")
    head = "  critical path"
    if cp is None:
        reason = f"HTA did not finish it within {limit} s" if timed_out else "HTA gave none"
        print(f"{head}: skipped, {reason}")
        return []
    if "skipped" in cp:
        print(f"{head}: skipped, {cp['skipped']}")
        return []
    print(f"{head} of {cp['step']}, HTA instance_id=0 (window {num(cp['dur'])}):")
    print(f"    HTA: length {num(cp['length'])} ({cp['edges']} edges): "
          + ", ".join(f"{k} {num(v)}" for k, v in sorted(cp["by_bound"].items())))
    failed = []
    mine = why.get("hta_critical_path", [])
    if not mine or "length_us" not in mine[0]:
        print("    c3scope --hta-critical-path: " + (mine[0].get("refused", "no length")
                                                       if mine else "no hta_critical_path"))
        failed.append("HTA's critical path")
    else:
        h = mine[0]
        by = {BOUND_BY[k]: v for k, v in h["bound_by_us"].items() if v}
        same = (abs(h["length_us"] - cp["length"]) <= EXACT_US and h["path_edges"] == cp["edges"]
                and set(by) == set(cp["by_bound"])
                and all(abs(by[k] - cp["by_bound"][k]) <= EXACT_US for k in by))
        print(f"    c3scope --hta-critical-path: length {num(h['length_us'])} ({h['path_edges']} "
              "edges): " + ", ".join(f"{k} {num(v)}" for k, v in sorted(by.items()))
              + f"  {'equal to HTA' if same else 'DIFFERS from HTA'}")
        if not same:
            failed.append("HTA's critical path")
    ours = [x for x in why.get("critical_path", {}).get("steps", []) if x["name"] == cp["step"]]
    if not ours:
        print("    c3scope's own path: none for this step in why.critical_path.steps")
        return failed
    p = ours[0]
    parts = {k.removesuffix("_ns"): v / 1e3 for k, v in p["parts"].items() if v}
    path = p["path_ns"] / 1e3
    gpu = path - parts.get("host", 0) - parts.get("idle", 0)
    print(f"    c3scope's own path: step {num(p['step_ns'] / 1e3)}, path {num(path)}: "
          + ", ".join(f"{k} {num(v)}" for k, v in parts.items())
          + f"; path - host - idle = {num(gpu)}")
    agree = abs(cp["length"] - path) <= 1
    print(f"    (informational) HTA - c3scope's own path = {num(cp['length'] - path, True)}"
          + ("" if agree else " (HTA: gaps between top-level CPU ops and sync edges weigh 0, GPU "
             "work past the window counts; c3scope: the path spans the step)"))
    return failed


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--hta-worker":
        return hta_worker(sys.argv[2], sys.argv[3])
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--c3scope", required=True)
    ap.add_argument("--hta-timeout", type=int, default=180,
                    help="seconds HTA may take per trace (default 180)")
    ap.add_argument("--keep", default="", help="keep the JSON outputs in this folder")
    ap.add_argument("traces", nargs="*",
                    help="PyTorch traces (default: ../shared/traces/kineto/*.json.gz)")
    a = ap.parse_args()
    traces = a.traces or sorted(glob.glob(os.path.join(repo, "..", "shared", "traces", "kineto",
                                                       "*.json.gz")))
    if not traces:
        print("why_check.py: no traces given and none in ../shared/traces/kineto", file=sys.stderr)
        return 2
    for p in traces:
        if not os.path.isfile(p):
            print(f"why_check.py: {p}: no such file", file=sys.stderr)
            return 2
    from importlib.metadata import version
    print(f"c3scope {a.c3scope} against HTA {version('HolisticTraceAnalysis')} (pandas "
          f"{version('pandas')}), whole timeline; every number in us")
    root = a.keep or tempfile.mkdtemp(prefix="c3scope-hta-check-")
    failed, skipped = [], []
    try:
        for p in traces:
            try:
                f, s = check_trace(a, p, root)
            except RuntimeError as e:
                print(f"== {os.path.basename(p)}: ERROR {e}")
                f, s = [f"{os.path.basename(p)}: error"], False
            failed += f
            if s:
                skipped.append(os.path.basename(p))
    finally:
        if not a.keep:
            shutil.rmtree(root, ignore_errors=True)
    note = f"; skipped (HTA too slow): {', '.join(skipped)}" if skipped else ""
    if failed:
        print(f"hta-check: DIFFERENCES beyond the tolerances: {'; '.join(failed)}{note}")
        return 1
    if len(skipped) == len(traces):
        print(f"hta-check: nothing compared{note}")
        return 1
    print(f"hta-check: {len(traces) - len(skipped)} trace(s) equal within the tolerances{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
