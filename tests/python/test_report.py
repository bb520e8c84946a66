"""job.report() is the CLI's `analyze --json`, key for key, on generated and real traces, with
and without options; summaries round-trip; the DataFrames are the report's rows."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pandas as pd
import pytest

import c3scope
from conftest import GOLDEN, cli_json, run_cli

TWO = [GOLDEN / "kineto_two_ranks" / "rank0.json", GOLDEN / "kineto_two_ranks" / "rank1.json"]
WHY = [GOLDEN / "why_critical_path_two_ranks" / f"rank{i}.json" for i in (0, 1)]


def _open(inputs, **kw):
    return c3scope.open([str(i) for i in inputs], **kw)


def test_report_equals_cli_on_generated_traces(cli, synthetic, tmp_path):
    job = c3scope.open(str(synthetic))
    assert job.report() == cli_json(cli, tmp_path, [synthetic])


def test_report_equals_cli_on_pytorch_traces(cli, tmp_path):
    assert _open(TWO).report() == cli_json(cli, tmp_path, TWO)
    twelve = sorted((GOLDEN / "kineto_twelve_ranks").glob("rank*.json"))
    assert _open(twelve).report() == cli_json(cli, tmp_path, twelve)


def test_report_equals_cli_with_options(cli, tmp_path):
    job = _open(WHY, what_if=["rank:1=on-time", "comm=hidden"], kernel_wait_us=10,
                micro_idle_us=5, queue_limit=4, sequence_length=2, overlap_threshold=0.3,
                min_samples=2, step="ProfilerStep")
    expected = cli_json(cli, tmp_path, WHY, "--what-if", "rank:1=on-time", "--what-if",
                        "comm=hidden", "--kernel-wait-us", "10", "--micro-idle-us", "5",
                        "--queue-limit", "4", "--sequence-length", "2", "--overlap-threshold",
                        "0.3", "--min-samples", "2", "--step", "ProfilerStep")
    assert job.report() == expected
    assert len(job.critical_path()) == len(expected["why"]["critical_path"]["steps"])


@pytest.mark.parametrize("name", ["hta_trace_diff_control.json.gz", "hta_nccl_data.json.gz"])
def test_report_equals_cli_on_real_pytorch_traces(cli, shared, tmp_path, name):
    f = shared / "kineto" / name
    assert _open([f]).report() == cli_json(cli, tmp_path, [f])


def test_report_equals_cli_on_real_ranks_and_hta_path(cli, shared, tmp_path):
    files = [shared / "kineto" / f"hta_sampled_rank-{i}.json.gz" for i in (0, 1)]
    job = _open(files, hta_critical_path=True, hta_rounding=True)
    expected = cli_json(cli, tmp_path, files, "--hta-critical-path", "--hta-rounding")
    assert job.report() == expected
    hta = job.hta_critical_path()
    assert len(hta) == 2
    assert list(hta["length_us"]) == [h["length_us"] for h in expected["hta_critical_path"]]
    assert hta["nodes"].dtype == np.int64


def test_report_equals_cli_on_nsys(cli, shared, tmp_path):
    f = shared / "nsys" / "pipit_saxpy_nsys.sqlite"
    assert _open([f]).report() == cli_json(cli, tmp_path, [f])


def test_summary_equals_cli_and_reopens(cli, tmp_path):
    job = _open(TWO)
    out = tmp_path / "cli.summary.json"
    r = run_cli(cli, "analyze", *map(str, TWO), "--summary", str(out))
    assert r.returncode == 0, r.stderr
    assert job.summary() == json.loads(out.read_text())
    assert c3scope.summary(job) == job.summary()
    mine = tmp_path / "py.summary.json.gz"
    job.save_summary(mine)
    assert json.loads(gzip.decompress(mine.read_bytes())) == job.summary()
    # A summary is an input like a trace: the same report as the CLI's from that summary.
    again = c3scope.open(str(mine))
    assert again.report() == cli_json(cli, tmp_path, [mine])
    with pytest.raises(c3scope.UsageError):
        job.save_summary(mine)  # exists: only with force
    job.save_summary(mine, force=True)
    with pytest.raises(c3scope.UsageError):
        job.save_summary(TWO[0], force=True)  # never over an input
    assert TWO[0].read_text().startswith("{")


def test_frames_are_the_report_rows():
    job = _open(TWO)
    r = job.report()
    ranks = job.ranks()
    assert list(ranks["rank"]) == [x["rank"] for x in r["ranks"]]
    assert ranks["exposed_comm_ns"].dtype == np.int64
    assert ranks["idle_causes.host_wait_ns"].dtype == np.int64
    assert "devices" not in ranks
    devices = job.devices()
    assert len(devices) == sum(len(x["devices"]) for x in r["ranks"])
    steps = job.steps()
    assert len(steps) == len(r["steps"]["per_rank"])
    assert steps["step_ns"].dtype == np.int64
    assert list(steps.columns[:4]) == ["rank", "process", "index", "name"]
    assert len(job.job_steps()) == len(r["steps"]["job"])
    summary = job.collective_summary()
    assert list(summary["op"]) == [c["op"] for c in r["collectives"]]
    assert len(job.interference()) == len(r["interference"])
    contention = job.contention()
    assert len(contention) == len(r["contention"])
    assert contention["launch_queue_max_ns"].dtype == "Int64"  # null in the report: nullable
    x = job.cross_rank()
    assert x.matched == r["cross_rank"]["matched"]
    assert len(x.collectives) == len(r["cross_rank"]["collectives"])
    assert list(x.clock_offsets["offset_ns"]) == [c["offset_ns"] for c in r["cross_rank"]["clock_offsets"]]
    assert len(job.idle_causes()) == len(r["why"]["idle_per_stream"])
    assert len(job.launch_stats()) == len(r["why"]["launches"])
    assert len(job.queue_length()) == len(r["why"]["queues"])
    assert len(job.critical_path()) == len(r["why"]["critical_path"]["steps"])
    assert len(job.late_ranks()) == len(r["why"]["critical_path"]["late_ranks"])
    assert len(job.kernel_sequences()) == len(r["why"]["sequences"]["top"])
    assert isinstance(job.overall(), pd.Series)
    assert job.overall()["busy_ns"] == r["overall"]["busy_ns"]


def test_collectives_equal_cli_csv(cli, tmp_path):
    job = _open(TWO)
    out = tmp_path / "c.csv"
    r = run_cli(cli, "analyze", *map(str, TWO), "--csv", str(out))
    assert r.returncode == 0, r.stderr
    expected = pd.read_csv(out)
    got = job.collectives()
    assert list(got.columns) == list(expected.columns)
    assert len(got) == len(expected) == 6
    assert got["start_ns"].dtype == np.int64
    pd.testing.assert_frame_equal(got.reset_index(drop=True), expected, check_dtype=False)


def test_text_is_the_cli_text(cli):
    job = _open(TWO)
    r = run_cli(cli, "analyze", *map(str, TWO), "--steps")
    assert r.returncode == 0
    assert job.text(steps=True) == r.stdout
