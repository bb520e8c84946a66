"""docs/examples/overlap_per_step.py runs headless and prints what job.steps() says."""

from __future__ import annotations

import os
import subprocess
import sys

import c3scope
from conftest import GOLDEN, ROOT


def test_example_runs_headless(tmp_path):
    out = tmp_path / "overlap.png"
    env = dict(os.environ, MPLBACKEND="Agg")
    env.pop("DISPLAY", None)
    r = subprocess.run([sys.executable, str(ROOT / "docs" / "examples" / "overlap_per_step.py"),
                        "-o", str(out)], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert out.stat().st_size > 5000 and out.read_bytes()[:4] == b"\x89PNG"
    lines = r.stdout.splitlines()
    steps = c3scope.open(sorted(str(p) for p in (GOLDEN / "kineto_two_ranks").glob("rank*.json"))).steps()
    assert len(lines) == 1 + len(steps) + 1
    first = lines[1].split()
    row = steps.sort_values(["index", "rank"]).iloc[0]
    assert int(first[0]) == row["index"] and int(first[1]) == row["rank"]
    assert float(first[3]) == round(row["overlap_ns"] / 1e6, 3)
