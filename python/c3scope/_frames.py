"""DataFrames from the analyzer's report (JSON schema c3scope-analyze/1) and columns.

Nested objects of a row become dotted columns (``idle_causes.host_wait_ns``), as
``pandas.json_normalize`` names them; integer columns stay int64 (nullable ``Int64`` where the
report says null); lists stay Python lists in an object column.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd


def flatten(row: dict, prefix: str = "", out: dict | None = None) -> dict:
    """One report row with nested objects as dotted keys."""
    if out is None:
        out = {}
    for key, value in row.items():
        name = prefix + key
        if isinstance(value, dict) and value:
            flatten(value, name + ".", out)
        elif isinstance(value, dict):
            out[name] = {}
        else:
            out[name] = value
    return out


def _column(name: str, values: list) -> Any:
    present = [v for v in values if v is not None]
    if not present:
        # Times are int64 ns even where no row has one (a nullable column, not object).
        if name.endswith("_ns") or name.endswith("_bytes"):
            return pd.array(values, dtype="Int64")
        return pd.array(values, dtype=object)
    if all(isinstance(v, bool) for v in present):
        if len(present) == len(values):
            return np.array(values, dtype=bool)
        return pd.array(values, dtype="boolean")
    if all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        if len(present) == len(values):
            return np.array(values, dtype=np.int64)
        return pd.array(values, dtype="Int64")
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return np.array([np.nan if v is None else float(v) for v in values], dtype=np.float64)
    return pd.array(values, dtype=object)


def frame(rows: Iterable[dict], first: Sequence[str] = (), drop: Sequence[str] = ()) -> pd.DataFrame:
    """A DataFrame of report rows: `first` columns first, `drop` keys left out (sub-tables)."""
    flat = []
    for r in rows:
        r = {k: v for k, v in r.items() if k not in drop}
        flat.append(flatten(r))
    names: list[str] = []
    seen = set()
    for col in first:
        if any(col in r for r in flat) and col not in seen:
            names.append(col)
            seen.add(col)
    for r in flat:
        for col in r:
            if col not in seen:
                names.append(col)
                seen.add(col)
    data = {n: _column(n, [r.get(n) for r in flat]) for n in names}
    return pd.DataFrame(data, columns=names) if names else pd.DataFrame()


def categorical(codes: np.ndarray, categories: list[str]) -> pd.Categorical:
    """A categorical over `codes` (indices into `categories`, -1 for missing) without a Python
    object per row; equal strings in `categories` become one category."""
    unique: dict[str, int] = {}
    remap = np.empty(len(categories), dtype=np.int64)
    for i, c in enumerate(categories):
        remap[i] = unique.setdefault(c, len(unique))
    cats = list(unique)
    if len(cats) != len(categories):
        codes = np.where(codes >= 0, remap[np.clip(codes, 0, None)], -1)
    return pd.Categorical.from_codes(codes, categories=pd.Index(cats, dtype=object))


def sql_frame(result: dict) -> pd.DataFrame:
    """A DataFrame of Job.sql's typed columns: INTEGER int64 (Int64 with NULLs), REAL float64,
    TEXT object (None for NULL), a column of NULLs only object."""
    data = {}
    for name, kind, values, nulls in zip(
        result["names"], result["types"], result["values"], result["nulls"]
    ):
        if kind == "int":
            if nulls.any():
                col = pd.arrays.IntegerArray(values, nulls.astype(bool))
            else:
                col = values
        elif kind == "real":
            col = values
        elif kind == "text":
            col = pd.array(values, dtype=object)
        else:
            col = pd.array([None] * values, dtype=object)
        key = name
        n = 1
        while key in data:  # SELECT a.x, b.x: the second is x_1, as pandas.read_sql would not
            key = f"{name}_{n}"
            n += 1
        data[key] = col
    return pd.DataFrame(data)
