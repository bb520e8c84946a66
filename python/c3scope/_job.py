"""c3scope.open, Job and compare: the Python face of the analyzer's pipeline."""

from __future__ import annotations

import json
import os
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional, Sequence, Union

import numpy as np
import pandas as pd

from . import _core
from ._core import UsageError
from ._frames import categorical, frame, sql_frame

PathLike = Union[str, os.PathLike]

_KINDS = list(_core.kinds())
_CLASSES = list(_core.classes())


def _paths(paths: Union[PathLike, Iterable[PathLike]]) -> list[str]:
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    try:
        out = [os.fspath(p) for p in paths]
    except TypeError as e:
        raise UsageError(
            "paths: give a trace, folder or summary path, or a list of them"
        ) from e
    return out


def _progress_bar(total: int, enabled: Optional[bool]):
    """A factory of a tqdm bar (the notebook one in Jupyter) when tqdm is there and progress is
    not off; the bar is made only once the work has taken half a second."""
    if enabled is False or total < 2:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return lambda: tqdm(total=total, unit="input", desc="c3scope", leave=False)


def _in_background(work: Callable[[], Any], core: "_core.Job", progress=None) -> Any:
    """Runs `work` (C++ that releases the GIL) on a thread, so that Ctrl-C reaches the main
    thread: it cancels the work, waits for it to stop, and raises KeyboardInterrupt. `progress`:
    a factory of a progress bar, shown once the work has taken half a second."""
    result: dict[str, Any] = {}

    def target() -> None:
        try:
            result["value"] = work()
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
            result["error"] = e

    thread = threading.Thread(target=target, name="c3scope", daemon=True)
    core.reset_cancel()
    thread.start()
    bar = None
    waited = 0.0
    try:
        while thread.is_alive():
            thread.join(0.1)
            waited += 0.1
            if progress is not None and bar is None and waited >= 0.5:
                bar = progress()
            if bar is not None:
                bar.n = core.done()
                bar.refresh()
    except BaseException:  # Ctrl-C, or anything else here: the work stops before we go on
        core.cancel()
        thread.join()
        raise
    finally:
        if bar is not None:
            bar.close()
    if "error" in result:
        raise result["error"]
    return result.get("value")


def open(  # noqa: A001 - c3scope.open, like tarfile.open
    paths: Union[PathLike, Iterable[PathLike]],
    step: Optional[str] = None,
    range: Optional[str] = None,  # noqa: A002 - the CLI's --range
    rules: Optional[PathLike] = None,
    hta_rounding: bool = False,
    workers: Optional[int] = None,
    *,
    progress: Optional[bool] = None,
    salvage: bool = False,
    overlap_threshold: Optional[float] = None,
    min_samples: Optional[int] = None,
    kernel_wait_us: Optional[float] = None,
    micro_idle_us: Optional[float] = None,
    runtime_cutoff_us: Optional[float] = None,
    delay_cutoff_us: Optional[float] = None,
    queue_limit: Optional[int] = None,
    sequence_length: Optional[int] = None,
    what_if: Sequence[str] = (),
    hta_critical_path: bool = False,
    hta_step: int = 0,
    rows: Optional[bool] = None,
) -> "Job":
    """Opens traces and analyzes them as ``c3scope analyze`` does.

    Args:
      paths: c3scope traces, PyTorch profiler JSON (.json or .json.gz), Nsight Systems SQLite
        exports, folders of them, or summary files (``analyze --summary``); one or a list.
      step: steps are the NVTX / annotation ranges whose name matches this RE2 expression
        (``--step``; default ProfilerStep#N, else c3bench cases).
      range: only time inside ranges whose name matches (``--range``).
      rules: a classification rules file (``--rules``).
      hta_rounding: round PyTorch timestamps as HTA does (``--hta-rounding``).
      workers: inputs mapped at once (default: one per core).
      progress: a progress bar (tqdm, when installed) for opens longer than half a second;
        False: none.
      rows: keep the traces' rows from the analysis (activities(), kernels() and nvtx() then
        read no file): True, False (less memory: about 46 bytes per activity; they are loaded
        again when asked for), or None: kept while the trace inputs add up to at most 2 GiB.
      salvage, overlap_threshold, min_samples, kernel_wait_us, micro_idle_us, runtime_cutoff_us,
      delay_cutoff_us, queue_limit, sequence_length, what_if, hta_critical_path, hta_step: the
        analyze flags of the same names (docs/analyze.md); None keeps the default, or a summary
        input's.

    Returns:
      a :class:`Job`, analyzed. Ctrl-C stops the work (KeyboardInterrupt).

    Raises:
      UsageError: a bad argument (a pattern that does not compile, a value out of range).
      TraceError: an input that cannot be used (missing, not a trace, damaged, hostile).
    """
    o = _core.JobOptions()
    o.step = step or ""
    o.range = range or ""
    o.rules = os.fspath(rules) if rules is not None else ""
    o.hta_rounding = bool(hta_rounding)
    o.salvage = bool(salvage)
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or not 1 <= workers <= 4096):
        raise UsageError(f"workers {workers!r}: give a whole number from 1 to 4096, or None")
    o.workers = workers or 0
    for flag, value in (("min_samples", min_samples), ("queue_limit", queue_limit),
                        ("sequence_length", sequence_length), ("hta_step", hta_step)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or not -(1 << 62) < value < (1 << 62)):
            raise UsageError(f"{flag} {value!r}: give a whole number")
    for flag, value in (("min_samples", min_samples), ("sequence_length", sequence_length)):
        if value is not None and not 0 <= value <= (1 << 30):
            raise UsageError(f"{flag} {value}: out of range (docs/analyze.md)")
    for flag, value in (("overlap_threshold", overlap_threshold),
                        ("kernel_wait_us", kernel_wait_us), ("micro_idle_us", micro_idle_us),
                        ("runtime_cutoff_us", runtime_cutoff_us),
                        ("delay_cutoff_us", delay_cutoff_us)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise UsageError(f"{flag} {value!r}: give a number")
    o.overlap_threshold = overlap_threshold
    o.min_samples = min_samples
    o.kernel_wait_us = kernel_wait_us
    o.micro_idle_us = micro_idle_us
    o.runtime_cutoff_us = runtime_cutoff_us
    o.delay_cutoff_us = delay_cutoff_us
    o.queue_limit = queue_limit
    o.sequence_length = sequence_length
    if isinstance(what_if, str):
        what_if = [what_if]
    o.what_if = list(what_if)
    o.hta_critical_path = bool(hta_critical_path)
    o.hta_step = int(hta_step)
    o.rows = -1 if rows is None else int(bool(rows))
    core = _core.Job(_paths(paths), o)
    job = Job(core, o)
    _in_background(core.run, core, _progress_bar(core.total(), progress))
    return job


@dataclass
class CrossRank:
    """Cross-rank results (docs/analyze.md "Cross-rank"): ``collectives`` (one row per matched
    collective: arrival skew, straggler), ``ranks`` (waits, times straggler), ``clock_offsets``
    (how each rank's clock was aligned), and the counts of matched, unmatched and tied ones."""

    collectives: pd.DataFrame
    ranks: pd.DataFrame
    clock_offsets: pd.DataFrame
    matched: int = 0
    unmatched: int = 0
    tied: int = 0


class Job:
    """An analyzed job: one or many ranks' traces (or summaries) opened by :func:`open`.

    The report is computed once; the traces are opened again (once) the first time their rows
    are asked for (:meth:`activities`, :meth:`kernels`, :meth:`nvtx`, :meth:`api_calls`,
    :meth:`sql`). Times are int64 nanoseconds on each rank's trace clock.
    """

    def __init__(self, core: "_core.Job", options: "_core.JobOptions") -> None:
        self._core = core
        self._options = options
        self._report: Optional[dict] = None
        self._loaded = False

    # ---- the report ----

    def report(self) -> dict:
        """The report as ``c3scope analyze --json`` writes it (schema c3scope-analyze/1), as a
        new dict each call."""
        return json.loads(self._core.report_json())

    def _r(self) -> dict:
        if self._report is None:
            self._report = self.report()
        return self._report

    def text(self, steps: bool = False, why: bool = False) -> str:
        """The text report ``c3scope analyze`` prints (``--steps``, ``--why``)."""
        return self._core.text(steps, why).decode("utf-8", "replace")

    @property
    def notes(self) -> list[str]:
        """Notes on the inputs (a file given twice, c3scope outputs skipped in a folder)."""
        return list(self._core.notes())

    def __repr__(self) -> str:
        r = self._r()
        return (
            f"<c3scope.Job: {len(r.get('ranks', []))} rank(s), "
            f"{r.get('counts', {}).get('kernels', 0)} kernels, inputs {r.get('inputs', [])!r}>"
        )

    def ranks(self) -> pd.DataFrame:
        """One row per rank (process): its time breakdown, overlap, exposed communication, idle
        causes (report ``ranks``, without ``devices``)."""
        return frame(self._r()["ranks"], first=("rank", "label"), drop=("devices",))

    def devices(self) -> pd.DataFrame:
        """One row per (rank, device): the breakdown of each GPU (report ``ranks[].devices``)."""
        rows = []
        for rank in self._r()["ranks"]:
            for d in rank.get("devices", []):
                rows.append({"rank": rank.get("rank"), "label": rank.get("label"), **d})
        return frame(rows, first=("rank", "label", "device"))

    def overall(self) -> pd.Series:
        """The whole job's breakdown (report ``overall``) as a Series."""
        return frame([self._r()["overall"]]).iloc[0]

    def steps(self) -> pd.DataFrame:
        """One row per (rank, step): its window, step time and breakdown (report
        ``steps.per_rank``)."""
        return frame(self._r().get("steps", {}).get("per_rank", []),
                     first=("rank", "process", "index", "name", "start_ns", "end_ns", "step_ns"))

    def job_steps(self) -> pd.DataFrame:
        """One row per step of the job: the slowest rank's step time and the ranks' mean
        breakdown (report ``steps.job``)."""
        return frame(self._r().get("steps", {}).get("job", []),
                     first=("index", "name", "ranks", "step_ns"))

    def collectives(self) -> pd.DataFrame:
        """One row per collective activity (each NCCL kernel or copy): the rows of ``analyze
        --csv`` (docs/analyze.md "CSV")."""
        import io

        text = _in_background(self._core.csv, self._core)
        return pd.read_csv(io.BytesIO(text), keep_default_na=False,
                           na_values=[""], dtype={"comm_id": object, "name": object})

    def collective_summary(self) -> pd.DataFrame:
        """One row per collective operation: count, sizes, overlap, bandwidths (report
        ``collectives``)."""
        return frame(self._r()["collectives"], first=("op",))

    def interference(self) -> pd.DataFrame:
        """One row per kernel signature that ran both alone and overlapped: the slowdown
        (report ``interference``)."""
        return frame(self._r()["interference"], first=("signature", "class"))

    def contention(self) -> pd.DataFrame:
        """One row per (rank, device): SM oversubscription, copy sharing, launch queueing
        (report ``contention``)."""
        return frame(self._r()["contention"], first=("rank", "device"))

    def cross_rank(self) -> CrossRank:
        """Skew, waits, stragglers and clock offsets across ranks (report ``cross_rank``)."""
        c = self._r().get("cross_rank", {})
        return CrossRank(
            collectives=frame(c.get("collectives", []), first=("comm_id", "seq", "op")),
            ranks=frame(c.get("ranks", []), first=("rank", "label")),
            clock_offsets=frame(c.get("clock_offsets", []), first=("process",)),
            matched=int(c.get("matched", 0)),
            unmatched=int(c.get("unmatched", 0)),
            tied=int(c.get("tied", 0)),
        )

    # ---- why a step takes as long as it does (report "why") ----

    def _why(self) -> dict:
        return self._r().get("why", {})

    def idle_causes(self) -> pd.DataFrame:
        """Idle time per stream split into host wait, kernel wait, communication wait and other
        (report ``why.idle_per_stream``; HTA's idle time breakdown)."""
        return frame(self._why().get("idle_per_stream", []),
                     first=("rank", "process", "device", "stream"))

    def launch_stats(self) -> pd.DataFrame:
        """Per kernel signature: launch call and kernel durations, launch delay, HTA's outlier
        counts (report ``why.launches``)."""
        return frame(self._why().get("launches", []), first=("signature", "count"))

    def queue_length(self) -> pd.DataFrame:
        """Per stream: launched and unfinished operations, maximum, percentiles, time at the
        queue limit (report ``why.queues``)."""
        return frame(self._why().get("queues", []), first=("rank", "process", "device", "stream"))

    def critical_path(self) -> pd.DataFrame:
        """One row per job step: the critical path across ranks, its parts, peer waits and the
        what-ifs replayed on it (report ``why.critical_path.steps``)."""
        return frame(self._why().get("critical_path", {}).get("steps", []),
                     first=("index", "name", "step_ns", "path_ns"))

    def late_ranks(self) -> pd.DataFrame:
        """Ranks whose late arrival others waited for on the critical path (report
        ``why.critical_path.late_ranks``)."""
        return frame(self._why().get("critical_path", {}).get("late_ranks", []),
                     first=("rank", "process"))

    def kernel_sequences(self) -> pd.DataFrame:
        """The most frequent kernel sequences (report ``why.sequences.top``)."""
        return frame(self._why().get("sequences", {}).get("top", []), first=("count",))

    def hta_critical_path(self) -> pd.DataFrame:
        """With ``open(..., hta_critical_path=True)``: HTA's critical path of one step of each
        PyTorch input (report ``hta_critical_path``)."""
        return frame(self._r().get("hta_critical_path", []), first=("input",))

    # ---- the traces' rows ----

    def _load(self) -> None:
        if not self._loaded:
            _in_background(self._core.load, self._core)
            self._loaded = True

    def _processes(self) -> dict:
        self._load()
        return self._core.processes()

    def _offsets(self, labels: list) -> np.ndarray:
        """Each process's clock offset (report ``cross_rank.clock_offsets``), by process code."""
        by_label = {c.get("process"): int(c.get("offset_ns", 0))
                    for c in self._r().get("cross_rank", {}).get("clock_offsets", [])}
        return np.array([by_label.get(label, 0) for label in labels], dtype=np.int64)

    @staticmethod
    def _shift(col: np.ndarray, offsets: np.ndarray, process: np.ndarray) -> None:
        """Adds each row's process offset to `col` in place, leaving unknown times (INT64_MIN)."""
        if not offsets.any() or len(col) == 0:
            return
        known = col != np.iinfo(np.int64).min
        col[known] += offsets[process[known]]

    def activities(self, kind: Optional[str] = None, rank: Optional[int] = None,
                   aligned: bool = False) -> pd.DataFrame:
        """One row per GPU activity (kernel, memcpy, memset), in the analyzer's order (process,
        device, start).

        Columns: ``start_ns``, ``end_ns`` (int64, the rank's trace clock), ``kind`` and
        ``class`` (categoricals: docs/metrics.md "Classes"), ``name`` (categorical),
        ``rank`` (int32, -1 when the trace states none), ``process`` (categorical label),
        ``device_id`` (int16), ``stream_id`` (int32), ``bytes`` (int64, 0 for kernels).

        Args:
          kind: "kernel", "memcpy" or "memset"; None: all.
          rank: only this rank's rows; None: all.
          aligned: times on the job's aligned clock (each rank's clock offset added, as the
            cross-rank metrics and the Perfetto export align them); False: each rank's own.
        """
        return self._activities(kind, rank, shapes=False, aligned=aligned)

    def kernels(self, rank: Optional[int] = None, aligned: bool = False) -> pd.DataFrame:
        """The kernels, with :meth:`activities`' columns and the launch shape: ``grid``
        (blocks), ``block`` (threads per block), ``registers_per_thread``,
        ``shared_memory_bytes`` (-1 when unknown), and ``launch_start_ns``/``launch_end_ns``
        (the launch call; INT64_MIN when unknown) where the trace has launch calls."""
        return self._activities("kernel", rank, shapes=True, aligned=aligned)

    def _activities(self, kind: Optional[str], rank: Optional[int], shapes: bool,
                    aligned: bool) -> pd.DataFrame:
        if kind is not None and kind not in _KINDS:
            raise UsageError(f"kind {kind!r}: give one of {', '.join(_KINDS)}, or None")
        if rank is not None and (isinstance(rank, bool) or not isinstance(rank, (int, np.integer))):
            raise UsageError(f"rank {rank!r}: give a rank number, or None")
        procs = self._processes()
        cols = self._core.activities(
            None if kind is None else _KINDS.index(kind),
            None if rank is None else int(rank),
            shapes,
        )
        names = self._core.names()
        if aligned:
            offsets = self._offsets(procs["label"])
            for col in ("start_ns", "end_ns", "launch_start_ns", "launch_end_ns"):
                if col in cols:
                    self._shift(cols[col], offsets, cols["process"])
        data = {
            "start_ns": cols["start_ns"],
            "end_ns": cols["end_ns"],
            "kind": categorical(cols["kind"], _KINDS),
            "class": categorical(cols["class"], _CLASSES),
            "name": categorical(cols["name"], names),
            "rank": cols["rank"],
            "process": categorical(cols["process"], procs["label"]),
            "device_id": cols["device_id"],
            "stream_id": cols["stream_id"],
            "bytes": cols["bytes"],
        }
        for extra in ("grid", "block", "registers_per_thread", "shared_memory_bytes",
                      "launch_start_ns", "launch_end_ns"):
            if extra in cols:
                data[extra] = cols[extra]
        return pd.DataFrame(data, copy=False)

    def nvtx(self, aligned: bool = False) -> pd.DataFrame:
        """One row per NVTX range or PyTorch annotation: ``process`` (label), ``rank``,
        ``thread_id``, ``domain``, ``name`` (categoricals), ``start_ns``, ``end_ns``,
        ``depth`` (push/pop nesting), ``start_end`` (an nvtxRangeStart/End range), ``color``
        (ARGB, -1 when none); in (process, start) order. ``aligned``: as :meth:`activities`."""
        procs = self._processes()
        c = self._core.nvtx()
        if aligned:
            offsets = self._offsets(procs["label"])
            for col in ("start_ns", "end_ns"):
                self._shift(c[col], offsets, c["process"])
        ranks = np.asarray(procs["rank"])
        return pd.DataFrame(
            {
                "process": categorical(c["process"], procs["label"]),
                "rank": ranks[c["process"]] if len(ranks) else np.empty(0, dtype=np.int64),
                "thread_id": c["thread_id"],
                "domain": categorical(c["domain"], c["domains"]),
                "name": categorical(c["name"], c["names"]),
                "start_ns": c["start_ns"],
                "end_ns": c["end_ns"],
                "depth": c["depth"],
                "start_end": c["start_end"].astype(bool),
                "color": c["color"],
            },
            copy=False,
        )

    def databases(self) -> dict[str, str]:
        """The schema name each trace is attached under in :meth:`sql` (``rank<N>`` by the rank
        the trace states, else ``trace<i>`` in input order) and its SQLite file (a temporary
        conversion for PyTorch and Nsight inputs, removed with the job)."""
        return dict(_in_background(self._core.databases, self._core))

    def sql(self, query: str) -> pd.DataFrame:
        """Runs one read-only SQL statement over the job's traces (docs/schema.md), each
        attached under its name (:meth:`databases`): ``SELECT count(*) FROM rank0.kernel``.

        The connection is hardened as every c3scope reader is: reads only, the files' own views
        and triggers do not run (query the tables), a work budget ends a query that does not.
        INTEGER columns are int64 (Int64 with NULLs), REAL float64, TEXT object.

        Raises:
          UsageError: the query does not parse, writes, or holds more than one statement.
          TraceError: a file cannot be read.
        """
        if not isinstance(query, str):
            raise UsageError("query: give the SQL text as a str")
        return sql_frame(_in_background(lambda: self._core.sql(query), self._core))

    def api_calls(self) -> pd.DataFrame:
        """One row per CUDA runtime or driver API call the traces hold (collector traces
        recorded with ``--cuda-api``, PyTorch and Nsight imports): ``trace`` (the schema name of
        :meth:`databases`), ``process_id``, ``thread_id``, ``api``, ``cbid``, ``name``,
        ``correlation_id``, ``start_ns``, ``end_ns``, ``return_value``."""
        parts = []
        for schema in self.databases():
            df = self.sql(
                f'SELECT a.process_id, a.thread_id, a.api, a.cbid, s.value AS name, '
                f'a.correlation_id, a.start_ns, a.end_ns, a.return_value '
                f'FROM "{schema}".api_call a JOIN "{schema}".string s ON s.id = a.name_id '
                f'ORDER BY a.process_id, a.start_ns'
            )
            df.insert(0, "trace", schema)
            parts.append(df)
        out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
        for col in ("trace", "api", "name"):
            if col in out:
                out[col] = out[col].astype("category")
        return out

    # ---- summaries ----

    def summary(self) -> dict:
        """The rank summaries (schema c3scope-summary/5) ``analyze --summary`` writes."""
        return json.loads(self._core.summary_json())

    def save_summary(self, path: PathLike, force: bool = False) -> None:
        """Writes the summaries to `path` (gzip-compressed when it ends in .gz) as ``analyze
        --summary`` does: never over an input, and over an existing file only with
        ``force=True``; the file appears whole or not at all."""
        self._core.save_summary(os.fspath(path), bool(force))


def summary(job: Job) -> dict:
    """The rank summaries of `job` (schema c3scope-summary/5): :meth:`Job.summary`."""
    if not isinstance(job, Job):
        raise UsageError("summary: give a Job (c3scope.open)")
    return job.summary()


@dataclass
class CompareResult:
    """What ``c3scope compare`` says: ``exit_code`` (0 no regression, 1 a regression or a broken
    budget, 3 inconclusive), ``verdict``, ``headline``, ``text`` (the text report),
    ``report`` (the JSON, schema c3scope-compare/1, as a dict), ``markdown`` and ``junit``."""

    exit_code: int
    verdict: str
    headline: str
    text: str
    report: dict = field(repr=False)
    markdown: str = field(repr=False)
    junit: str = field(repr=False)

    def metrics(self) -> pd.DataFrame:
        """One row per compared metric (report ``metrics``)."""
        return frame(self.report.get("metrics", []), first=("name",))


def _run(side: Union[Job, PathLike, None], o: "_core.JobOptions"):
    if side is None or isinstance(side, Job):
        return side
    return _core.open_run(os.fspath(side), o)


def compare(
    base: Union[Job, PathLike, None],
    cand: Union[Job, PathLike],
    *,
    threshold: Union[float, str] = 5,
    alpha: float = 0.01,
    min_samples: int = 5,
    top: int = 20,
    budget: Optional[PathLike] = None,
    step: Optional[str] = None,
    rules: Optional[PathLike] = None,
    hta_rounding: bool = False,
) -> CompareResult:
    """Compares a candidate run with a baseline as ``c3scope compare`` does: the same metrics,
    statistics, budgets, verdicts and exit-code meaning.

    Args:
      base, cand: Jobs (:func:`open`), or what compare takes: traces, folders, summary files,
        c3bench JSON results. base None: check `cand` against `budget` only.
      threshold: relative change that counts as a regression, in percent (5 or "5%").
      alpha, min_samples, top, budget, step, rules, hta_rounding: the compare flags of the same
        names (docs/compare.md).
    """
    if base is None and budget is None:
        raise UsageError(
            "one run given: compare(base, cand), or check budgets with compare(None, cand, "
            "budget=FILE)"
        )
    for flag, value in (("min_samples", min_samples), ("top", top)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise UsageError(f"{flag} {value!r}: give a whole number")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
        raise UsageError(f"alpha {alpha!r}: give a number")
    if not 1e-12 <= alpha <= 0.5:
        raise UsageError(f"alpha {alpha!r}: give a value from 1e-12 to 0.5")
    if not 2 <= min_samples <= (1 << 30):
        raise UsageError(f"min_samples {min_samples!r}: give 2 or more")
    if not 0 <= top <= 100000:
        raise UsageError(f"top {top!r}: give 0 to 100000")
    fraction = _core.percent(str(threshold))
    o = _core.JobOptions()
    o.step = step or ""
    o.rules = os.fspath(rules) if rules is not None else ""
    o.hta_rounding = bool(hta_rounding)
    b, c = _run(base, o), _run(cand, o)
    budget_path = os.fspath(budget) if budget is not None else ""
    if isinstance(c, Job) and (b is None or isinstance(b, Job)):
        d = _core.compare(None if b is None else b._core, c._core, fraction, alpha,
                          min_samples, top, budget_path)
    else:
        if isinstance(b, Job):
            b = _core.open_run_from_job(b._core)
        if isinstance(c, Job):
            c = _core.open_run_from_job(c._core)
        d = _core.compare_runs(b, c, fraction, alpha, min_samples, top, budget_path)
    return CompareResult(
        exit_code=d["exit_code"],
        verdict=d["verdict"],
        headline=d["headline"],
        text=d["text"],
        report=json.loads(d["json"]),
        markdown=d["markdown"],
        junit=d["junit"],
    )
