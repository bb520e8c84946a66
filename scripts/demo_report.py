#!/usr/bin/env python3
"""The end of scripts/demo: what `c3scope analyze` says about the trace the demo wrote (overlap,
exposed communication) and what the numbers mean, every line within 120 columns.

  demo_report.py analysis RESULTS.json ANALYSIS.json TRACE
      RESULTS.json: c3bench --json (schema c3bench/1); ANALYSIS.json: c3scope analyze --json of
      TRACE with --step '^concurrent: ' (each case's concurrent phase is a step).
  demo_report.py wrap < TEXT
      copies TEXT, breaking lines longer than 120 columns at spaces (continuations indented).

Every sentence of "what the numbers say" is printed only when the numbers show it, so that a run
on real GPUs, another preset or another sweep never reads a story its numbers do not tell.
"""
import json
import sqlite3
import sys

WIDTH = 120


def wrap(line, width=WIDTH):
    """`line` as lines of at most `width` columns, broken at spaces, continuations indented by
    the line's own indentation plus 4. A word longer than a line is not cut."""
    if len(line) <= width:
        return [line]
    lead = line[:len(line) - len(line.lstrip(" "))]
    indent = lead + "    "
    out, cur = [], lead
    for word in line[len(lead):].split(" "):
        if cur.strip() and len(cur) + 1 + len(word) > width:
            out.append(cur)
            cur = indent + word
        elif not cur.strip():
            cur += word
        else:
            cur += " " + word
    out.append(cur)
    return out


def say(text=""):
    for line in wrap(text):
        print(line)


def ms(ns):
    return f"{ns / 1e6:.2f}"


def span(values, fmt):
    lo, hi = min(values), max(values)
    return fmt(lo) if fmt(lo) == fmt(hi) else f"{fmt(lo)} to {fmt(hi)}"


COMPUTE_NAMES = {"gemm": "the GEMM", "triad": "the triad", "fma": "the FMA loop"}
COMM_NAMES = {"allreduce": "the AllReduce", "allgather": "the AllGather",
              "reducescatter": "the ReduceScatter", "alltoall": "the AllToAll",
              "sendrecv": "the SendRecv"}


def op_names(results):
    """("the GEMM", "the AllReduce") when every result has the same kinds, else generic words."""
    comps = {(r.get("compute") or "").split(":")[0] for r in results}
    comms = {(r.get("comm") or "").split(":")[0] for r in results}
    comp = COMPUTE_NAMES.get(comps.pop(), "the compute") if len(comps) == 1 else "the compute"
    comm = COMM_NAMES.get(comms.pop(), "the communication") if len(comms) == 1 else "the communication"
    return comp, comm


def gemm_blocks_and_sms(trace):
    """(largest compute-kernel grid in blocks, the device's SM count) from the trace, or None."""
    try:
        db = sqlite3.connect(f"file:{trace}?mode=ro", uri=True)
        row = db.execute(
            "SELECT MAX(k.grid_x * k.grid_y * k.grid_z), MIN(d.sm_count) FROM kernel k"
            " JOIN string s ON s.id = k.name_id"
            " JOIN device d ON d.process_id = k.process_id AND d.device_id = k.device_id"
            " WHERE s.value NOT LIKE 'nccl%'").fetchone()
        db.close()
    except sqlite3.Error:
        return None
    if row is None or row[0] is None or row[1] is None:
        return None
    return int(row[0]), int(row[1])


def analysis(results_path, analysis_path, trace):
    with open(results_path, encoding="utf-8") as f:
        bench = json.load(f)
    with open(analysis_path, encoding="utf-8") as f:
        an = json.load(f)

    say("== c3scope analyze: overlap and exposed communication (docs/analyze.md)")
    o = an["overall"]
    pct = o.get("overlap_pct")
    say(f"   whole trace (alone and serial phases too, where nothing can overlap): "
        f"{ms(o['comm_ns'])} ms of communication, "
        f"{'-' if pct is None else f'{pct:.1f}'}% of it hidden under compute (overlap), "
        f"{ms(o['exposed_comm_ns'])} ms exposed (nothing computing meanwhile); "
        f"compute {ms(o['compute_ns'])} ms, span {ms(o['span_ns'])} ms")
    for rank in an.get("ranks", []):
        for d in rank.get("devices", []):
            p = d.get("overlap_pct")
            say(f"   device {d['device']}: overlap {'-' if p is None else f'{p:.1f}'}%, "
                f"exposed communication {ms(d['exposed_comm_ns'])} ms")

    steps = {}
    for s in an.get("steps", {}).get("job", []):
        name = s.get("name", "")
        if name.startswith("concurrent: "):
            steps[name[len("concurrent: "):]] = s
    ok = [r for r in bench["results"] if r.get("status") == "ok" and r.get("realized_speedup") is not None]
    if steps:
        print()
        say("   each case's concurrent phase (analyze --step '^concurrent: '): how much of its "
            "communication compute hid")
        rows = [(r["case"], r["label"], steps[r["label"]]) for r in ok if r["label"] in steps]
        # What every case shares ("gemm:... + ") is said once.
        shared = rows[0][1].split(" + ")[0] + " + " if rows else ""
        if len(rows) > 1 and all(label.startswith(shared) for _, label, _ in rows):
            say(f"   every case: {shared[:-3]}")
            rows = [(case, label[len(shared):], s) for case, label, s in rows]
        w = max([len("configuration")] + [len(label) for _, label, _ in rows])
        say(f"   {'case':>4}  {'configuration':<{w}}  {'span ms':>8}  {'comm ms':>8}  "
            f"{'overlap %':>9}  {'exposed comm ms':>15}")
        for case, label, s in rows:
            p = s.get("overlap_pct")
            say(f"   {case:>4}  {label:<{w}}  {ms(s['span_ns']):>8}  {ms(s['comm_ns']):>8}  "
                f"{'-' if p is None else f'{p:.1f}':>9}  {ms(s['exposed_comm_ns']):>15}")

    print()
    say("== what the numbers say")
    told = False
    plain = [r for r in ok if not r.get("knobs")]
    # The plain cases gained nothing: T_c3 within 5% of the ideal's gap of T_comp + T_comm.
    stuck = [r for r in plain if r["fraction_of_ideal"] < 0.1]
    if stuck:
        told = True
        ids = ", ".join(str(r["case"]) for r in stuck)
        say(f"* The plain cases ({ids}: compute and communication launched together, no knob) "
            f"gained almost nothing: "
            f"realized speedup {span([r['realized_speedup'] for r in stuck], lambda v: f'{v:.2f}x')} "
            f"where {span([r['ideal_speedup'] for r in stuck], lambda v: f'{v:.2f}x')} was possible "
            f"(fraction of ideal {span([r['fraction_of_ideal'] for r in stuck], lambda v: f'{v:.2f}')}).")
        # Why: compute was not slowed, and the communication's own time grew by about the
        # compute's: it waited for the compute instead of sharing the GPU with it.
        waited = [r for r in stuck
                  if r.get("compute_slowdown") is not None and r["compute_slowdown"] < 0.02
                  and r.get("t_comm_c3") and r.get("t_comm") and r.get("t_comp")
                  and r["t_comm_c3"]["median_ns"] - r["t_comm"]["median_ns"]
                  >= 0.8 * r["t_comp"]["median_ns"]]
        if len(waited) == len(stuck):
            comp, comm = op_names(waited)
            say(f"  Why: {comp} ran at full speed (slow_cp "
                f"{span([100 * r['compute_slowdown'] for r in waited], lambda v: f'{v:+.1f}%')}) while "
                f"{comm} took about {comp}'s time longer than alone (slow_cm "
                f"{span([100 * r['comm_slowdown'] for r in waited], lambda v: f'{v:+.0f}%')}): "
                f"launched after {comp}, it waited for it, then ran alone.")
            grid = gemm_blocks_and_sms(trace)
            if grid and grid[0] >= grid[1]:
                say(f"  {comp[0].upper() + comp[1:]} launches up to {grid[0]} blocks for {grid[1]} SMs: "
                    f"it fills every SM, and blocks that run are never preempted (whatever the stream "
                    f"priority), so {comm} gets SMs only as {comp} ends (docs/sim-model.md; measured "
                    f"on an H200: docs/validation.md).")
        low = [steps[r["label"]]["overlap_pct"] for r in stuck
               if r["label"] in steps and steps[r["label"]].get("overlap_pct") is not None]
        if low and max(low) < 20:
            say(f"  analyze shows the same: only {span(low, lambda v: f'{v:.1f}%')} of their "
                f"communication overlapped compute; the rest was exposed.")
    # Chunked schedules: the best case by fraction of ideal, if it gained.
    chunked = [r for r in ok if "chunks=" in (r.get("knobs") or "")
               and not r["knobs"].endswith("chunks=1") and r["fraction_of_ideal"] >= 0.2]
    if chunked:
        told = True
        best = max(chunked, key=lambda r: r["realized_speedup"])
        s = steps.get(best["label"], {})
        hid = s.get("overlap_pct")
        say(f"* Pipelining helps: split into chunks, chunk i's communication runs while chunk i+1 "
            f"computes. Best: case {best['case']} ({best['label']}), realized speedup "
            f"{best['realized_speedup']:.2f}x of an ideal {best['ideal_speedup']:.2f}x (fraction of "
            f"ideal {best['fraction_of_ideal']:.2f})"
            + (f", {hid:.1f}% of its communication hidden" if hid is not None else "") + ".")
        if best.get("decomposition_loss_comm") is not None:
            say(f"  The price: smaller pieces run less efficiently (decomposition loss: compute "
                f"{100 * (best.get('decomposition_loss_comp') or 0):+.1f}%, communication "
                f"{100 * best['decomposition_loss_comm']:+.1f}%).")
    if not told:
        say("* No case gained nothing and no pipelined schedule helped: see the table's frac "
            "column and the overlap above.")
    if bench.get("simulated"):
        say("  (simulated: these are the node model's predictions, not measurements)")


def main(argv):
    if len(argv) >= 2 and argv[1] == "wrap":
        for line in sys.stdin:  # line by line: c3bench's rows show as they come
            for part in wrap(line.rstrip("\n")):
                print(part, flush=True)
        return 0
    if len(argv) == 5 and argv[1] == "analysis":
        analysis(argv[2], argv[3], argv[4])
        return 0
    print("usage: demo_report.py analysis RESULTS.json ANALYSIS.json TRACE | wrap < TEXT",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
