"""The traces' rows as DataFrames: dtypes, and row counts equal to SQL counts on the same files;
Job.sql's read-only, hardened connection."""

from __future__ import annotations

import sqlite3

import numpy as np
import pandas as pd
import pytest

import c3scope
from conftest import GOLDEN

TWO = [str(GOLDEN / "kineto_two_ranks" / f"rank{i}.json") for i in (0, 1)]


def _count(path: str, sql: str) -> int:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return db.execute(sql).fetchone()[0]


def _all(job: c3scope.Job, sql: str) -> int:
    return sum(_count(f, sql) for f in job.databases().values())


@pytest.fixture(scope="module")
def job(synthetic) -> c3scope.Job:
    return c3scope.open(str(synthetic))


def test_activities_dtypes_and_counts(job):
    a = job.activities()
    assert list(a.columns) == ["start_ns", "end_ns", "kind", "class", "name", "rank", "process",
                               "device_id", "stream_id", "bytes"]
    assert a["start_ns"].dtype == np.int64 and a["end_ns"].dtype == np.int64
    assert a["bytes"].dtype == np.int64
    assert a["device_id"].dtype == np.int16 and a["stream_id"].dtype == np.int32
    assert a["rank"].dtype == np.int32
    for col in ("kind", "class", "name", "process"):
        assert isinstance(a[col].dtype, pd.CategoricalDtype), col
    assert set(a["kind"].cat.categories) == {"kernel", "memcpy", "memset"}
    assert set(a["class"].cat.categories) == {"compute", "communication", "memory", "other"}
    kernels = _all(job, "SELECT count(*) FROM kernel")
    copies = _all(job, "SELECT count(*) FROM memcpy")
    sets = _all(job, "SELECT count(*) FROM memset")
    skipped = job.report()["counts"]["skipped_rows"]
    assert len(a) + skipped == kernels + copies + sets
    assert (a["kind"] == "kernel").sum() == job.report()["counts"]["kernels"]
    assert (a["end_ns"] >= a["start_ns"]).all()
    # The same rows SQL gives, by kind and rank.
    assert len(job.activities(kind="memcpy")) == copies
    by_rank = a.groupby("rank", observed=True).size()
    assert sorted(by_rank.index) == [0, 1]
    assert len(job.activities(rank=1)) == by_rank[1]
    assert len(job.activities(kind="kernel", rank=0)) == ((a["kind"] == "kernel") & (a["rank"] == 0)).sum()
    assert len(job.activities(rank=99)) == 0


def test_kernel_names_equal_sql(job):
    k = job.kernels()
    assert len(k) == _all(job, "SELECT count(*) FROM kernel")
    for col in ("grid", "block", "registers_per_thread", "shared_memory_bytes"):
        assert k[col].dtype == np.int64
    sql = job.sql(
        "SELECT s.value AS name, count(*) AS n FROM rank0.kernel k JOIN rank0.string s "
        "ON s.id = k.name_id GROUP BY s.value"
    )
    mine = k[k["rank"] == 0].groupby("name", observed=True).size()
    assert dict(zip(sql["name"], sql["n"])) == {str(n): int(c) for n, c in mine.items()}
    grid = job.sql("SELECT sum(grid_x * grid_y * grid_z) AS g FROM rank0.kernel")["g"][0]
    assert k.loc[k["rank"] == 0, "grid"].sum() == grid


def test_nvtx_and_api_calls_equal_sql(job):
    n = job.nvtx()
    assert len(n) == _all(job, "SELECT count(*) FROM nvtx_range WHERE end_ns IS NOT NULL")
    assert n["start_ns"].dtype == np.int64 and n["rank"].dtype == np.int64
    assert isinstance(n["name"].dtype, pd.CategoricalDtype)
    calls = job.api_calls()
    assert len(calls) == _all(job, "SELECT count(*) FROM api_call") > 0
    assert calls["start_ns"].dtype == np.int64
    assert set(calls["trace"].cat.categories) == set(job.databases())


def test_pytorch_inputs_are_converted_for_sql():
    job = c3scope.open(TWO)
    assert set(job.databases()) == {"rank0", "rank1"}
    a = job.activities()
    assert len(a) == job.report()["counts"]["kernels"] == 12
    both = job.sql("SELECT (SELECT count(*) FROM rank0.kernel) + (SELECT count(*) FROM rank1.kernel) AS n")
    assert both["n"][0] == 12
    assert len(job.api_calls()) > 0


def test_sql_types_and_nulls(job):
    df = job.sql("SELECT 1 AS i, NULL AS n, 2.5 AS r, 'x' AS t UNION ALL SELECT NULL, NULL, NULL, NULL")
    assert str(df["i"].dtype) == "Int64" and df["i"].isna().tolist() == [False, True]
    assert df["r"].dtype == np.float64 and np.isnan(df["r"][1])
    assert df["t"][0] == "x" and df["t"].isna().tolist() == [False, True]
    assert df["n"].isna().all()
    mixed = job.sql("SELECT 1 AS v UNION ALL SELECT 'a'")
    assert mixed["v"].tolist() == ["1", "a"]


@pytest.mark.parametrize("query", [
    "DELETE FROM rank0.kernel",
    "CREATE TABLE x(a)",
    "ATTACH DATABASE '/tmp/x.db' AS x",
    "SELECT 1; SELECT 2",
    "SELEC nothing",
    "PRAGMA rank0.journal_mode = WAL",
])
def test_sql_refuses_writes_and_bad_queries(job, query):
    with pytest.raises(c3scope.UsageError):
        job.sql(query)


def test_sql_budget_ends_a_query_that_does_not(job):
    # A cross join of every kernel with itself 4 times is far beyond the work budget of files
    # this size: stopped with one line, not hung.
    with pytest.raises((c3scope.TraceError, c3scope.UsageError)) as e:
        job.sql("SELECT count(*) FROM rank0.kernel a, rank0.kernel b, rank0.kernel c, "
                "rank0.kernel d, rank0.kernel e")
    assert "\n" not in str(e.value)
    # The budget is each query's: the next one runs.
    assert job.sql("SELECT count(*) AS n FROM rank0.kernel")["n"][0] > 0


def test_sql_statement_forms(job):
    assert job.sql("SELECT 1 AS one; -- a comment\n ;")["one"][0] == 1
    empty = job.sql("SELECT start_ns FROM rank0.kernel WHERE 0")
    assert list(empty.columns) == ["start_ns"] and len(empty) == 0
    # A schema is attached when the query names it, in any case or quoted.
    assert job.sql('SELECT count(*) AS n FROM "RANK1".kernel')["n"][0] > 0
    with pytest.raises(c3scope.UsageError, match="no such table"):
        job.sql("SELECT count(*) FROM kernel")  # tables are named with their trace


def test_sql_over_more_traces_than_sqlite_attaches():
    twelve = sorted(str(p) for p in (GOLDEN / "kineto_twelve_ranks").glob("rank*.json"))
    job = c3scope.open(twelve)
    names = sorted(job.databases())
    assert len(names) == 12
    every = " UNION ALL ".join(f"SELECT count(*) AS n FROM {n}.kernel" for n in names)
    with pytest.raises(c3scope.UsageError, match="at most"):
        job.sql(every)
    total = sum(job.sql(f"SELECT count(*) AS n FROM {n}.kernel")["n"][0] for n in names)
    assert total == job.report()["counts"]["kernels"]
    assert len(job.api_calls()) == sum(
        job.sql(f"SELECT count(*) AS n FROM {n}.api_call")["n"][0] for n in names)


def test_summaries_hold_no_rows(tmp_path):
    job = c3scope.open(TWO)
    path = tmp_path / "s.summary.json"
    job.save_summary(path)
    s = c3scope.open(str(path))
    assert s.report()["counts"]["kernels"] == 12
    with pytest.raises(c3scope.UsageError, match="summaries"):
        s.activities()


REAL = ["kineto/hta_nccl_data.json.gz", "kineto/hta_negative_queue_rank0.json.gz",
        "kineto/hta_sampled_rank-0.json.gz", "kineto/hta_sampled_rank-1.json.gz",
        "kineto/hta_trace_diff_control.json.gz", "nsys/pipit_saxpy_nsys.sqlite"]


@pytest.mark.parametrize("name", REAL)
def test_every_call_on_real_traces(shared, name):
    job = c3scope.open(str(shared / name))
    r = job.report()
    for call in ("ranks", "devices", "steps", "job_steps", "collectives", "collective_summary",
                 "interference", "contention", "idle_causes", "launch_stats", "queue_length",
                 "critical_path", "late_ranks", "kernel_sequences", "hta_critical_path"):
        assert isinstance(getattr(job, call)(), pd.DataFrame), call
    assert len(job.ranks()) == len(r["ranks"])
    x = job.cross_rank()
    assert len(x.clock_offsets) == len(r["cross_rank"]["clock_offsets"])
    a = job.activities()
    counts = r["counts"]
    assert len(a) == counts["kernels"] + counts["memcpy"] + counts["memset"]
    assert (a["kind"] == "kernel").sum() == counts["kernels"]
    assert a["start_ns"].dtype == np.int64
    dbs = job.databases()
    assert len(dbs) == 1
    (schema,) = dbs
    kernels = job.sql(f"SELECT count(*) AS n FROM {schema}.kernel")["n"][0]
    assert len(job.kernels()) + counts["skipped_rows"] >= kernels >= len(job.kernels())
    assert len(job.nvtx()) >= 0 and len(job.api_calls()) == job.sql(
        f"SELECT count(*) AS n FROM {schema}.api_call")["n"][0]
    assert len(job.collectives()) == sum(c["count"] for c in r["collectives"])


@pytest.mark.parametrize("inputs", ["synthetic", "two"])
def test_rows_kept_or_loaded_again_are_equal(synthetic, inputs):
    paths = [str(synthetic)] if inputs == "synthetic" else TWO
    kept = c3scope.open(paths, rows=True)
    again = c3scope.open(paths, rows=False)
    assert kept.report() == again.report()
    for call in ("activities", "kernels", "nvtx", "collectives"):
        a, b = getattr(kept, call)(), getattr(again, call)()
        pd.testing.assert_frame_equal(a, b, check_categorical=False)
        assert len(a) > 0


def test_aligned_times_add_the_clock_offsets():
    job = c3scope.open(TWO)
    offsets = {c["process"]: c["offset_ns"] for c in job.report()["cross_rank"]["clock_offsets"]}
    assert offsets["rank 1"] == -170000  # rank 1's clock reads 170 us ahead
    own, aligned = job.activities(), job.activities(aligned=True)
    shift = aligned["start_ns"] - own["start_ns"]
    assert (shift[own["rank"] == 1] == -170000).all() and (shift[own["rank"] == 0] == 0).all()
    assert ((aligned["end_ns"] - own["end_ns"]) == shift).all()
    k = job.kernels(aligned=True)
    launched = k["launch_start_ns"] != np.iinfo(np.int64).min
    assert ((k["launch_start_ns"] - job.kernels()["launch_start_ns"])[launched & (k["rank"] == 1)] == -170000).all()
    n, na = job.nvtx(), job.nvtx(aligned=True)
    assert ((na["start_ns"] - n["start_ns"])[n["rank"] == 1] == -170000).all()
