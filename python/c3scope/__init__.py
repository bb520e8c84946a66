"""c3scope: concurrent computation and communication on GPUs, analyzed from Python.

Every analysis of ``c3scope analyze`` as pandas DataFrames, computed by the same C++ library
the command runs (docs/python.md)::

    import c3scope
    job = c3scope.open(["rank0.json.gz", "rank1.json.gz"])
    job.ranks()[["rank", "overlap_pct", "exposed_comm_ns"]]
    job.steps()
    job.activities(kind="kernel", rank=0)

Errors are :class:`UsageError` (a bad argument) and :class:`TraceError` (an input that cannot
be used), both :class:`Error`, each carrying the CLI's one-line message.
"""

from __future__ import annotations

from ._core import Error, TraceError, UsageError
from ._job import CompareResult, CrossRank, Job, compare, open, summary

__all__ = [
    "open",
    "compare",
    "summary",
    "Job",
    "CompareResult",
    "CrossRank",
    "Error",
    "UsageError",
    "TraceError",
    "__version__",
]
__version__ = "0.1.0"
