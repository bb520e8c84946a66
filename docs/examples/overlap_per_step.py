"""Overlap and exposed communication per step and rank, plotted (docs/python.md "Example").

    python docs/examples/overlap_per_step.py TRACE... [-o overlap.png]

With no trace given it reads the two-rank PyTorch job of tests/golden/kineto_two_ranks. Prints
one line per (step, rank) and writes a figure: per rank, each step's time split into compute
alone, overlap and exposed communication, and the overlap percentage.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: a file, no window
import matplotlib.pyplot as plt  # noqa: E402

import c3scope  # noqa: E402

HERE = Path(__file__).resolve().parent
DEFAULT = sorted((HERE.parent.parent / "tests" / "golden" / "kineto_two_ranks").glob("rank*.json"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", nargs="*", default=[str(p) for p in DEFAULT])
    ap.add_argument("-o", "--output", default="overlap_per_step.png")
    args = ap.parse_args()

    job = c3scope.open(args.traces)
    steps = job.steps()
    if steps.empty:
        raise SystemExit("no steps in these traces (ProfilerStep#N or --step ranges)")
    # Per (step, rank): compute alone, overlap, exposed communication (all ns).
    steps["compute_alone_ns"] = steps["compute_ns"] - steps["overlap_ns"]
    table = steps[["index", "rank", "step_ns", "compute_alone_ns", "overlap_ns",
                   "exposed_comm_ns", "overlap_pct"]].sort_values(["index", "rank"])
    print(f"{'step':>5} {'rank':>5} {'step ms':>9} {'overlap ms':>11} {'exposed comm ms':>16} {'overlap %':>10}")
    for row in table.itertuples(index=False):
        print(f"{row.index:>5} {row.rank:>5} {row.step_ns / 1e6:>9.3f} {row.overlap_ns / 1e6:>11.3f} "
              f"{row.exposed_comm_ns / 1e6:>16.3f} {row.overlap_pct:>10.1f}")

    ranks = sorted(table["rank"].unique())
    fig, axes = plt.subplots(1, len(ranks), figsize=(4 * len(ranks), 3.5), squeeze=False,
                             sharey=True)
    for ax, rank in zip(axes[0], ranks):
        t = table[table["rank"] == rank]
        x = [str(i) for i in t["index"]]
        ms = 1e6
        ax.bar(x, t["compute_alone_ns"] / ms, label="compute alone")
        ax.bar(x, t["overlap_ns"] / ms, bottom=t["compute_alone_ns"] / ms, label="overlap")
        ax.bar(x, t["exposed_comm_ns"] / ms, bottom=(t["compute_alone_ns"] + t["overlap_ns"]) / ms,
               label="exposed communication")
        ax.set_title(f"rank {rank}")
        ax.set_xlabel("step")
        for xi, pct in zip(x, t["overlap_pct"]):
            ax.annotate(f"{pct:.0f}%", (xi, 0), textcoords="offset points", xytext=(0, 3),
                        ha="center", fontsize=8)
    axes[0][0].set_ylabel("GPU time (ms)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(args.output, dpi=100)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
