"""A first pass that reads no data: the extremes and the number of values of a column from the
statistics Parquet files keep per row group (min, max, null count, value count), where they
are exact for what the bins need, read through pyarrow (optional: without it the pass reads
the column). Where a statistic is missing or cannot be trusted the answer is the reason, and
the scan reads the column instead (:func:`extremes` returns a :class:`Refused`).

What is trusted, and why:

- min and max of integer columns, and of float columns unless an extreme is NaN (old writers
  let NaN in) or zero (Parquet keeps no sign of a zero: a writer may record -0.0 for 0.0);
- the number of valid values of integer columns (values minus nulls); not of float columns,
  whose NaN the statistics do not count (the rules that need the number read then);
- only top-level columns, numeric in the file and in Polars' schema alike (no cast by the
  scan), and every row kept: a ``where``, or ``reader_options`` that change what is read,
  make the scan read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, NamedTuple, Union

import polars as pl

from polars_gpu_hist._scan import passes
from polars_gpu_hist._scan.source import Dataset

_INTEGERS = (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64)
_FLOATS = (pl.Float32, pl.Float64)


class Refused(NamedTuple):
    """Why the statistics do not answer (the scan reads the column instead)."""

    reason: str


@dataclass(frozen=True)
class Found:
    """What the statistics answer: the valid values' extremes (None without values), their
    number where it is known exactly, and how many row groups of how many files said so."""

    extremes: passes.Extremes
    count: int | None
    row_groups: int
    files: int

    def describe(self) -> str:
        return (
            f"Parquet statistics of {self.row_groups:,} row groups in {self.files:,} "
            f"file{'s' if self.files != 1 else ''} (no data read)"
        )


Answer = Union[Found, Refused]


def extremes(
    dataset: Dataset, column: str, dtype: pl.DataType, weights: str | None, need_count: bool
) -> Answer:
    """The extremes of ``column`` (and the number of its valid values with ``need_count``)
    from the files' statistics, or why they cannot be taken from there."""
    if dataset.format is None:
        return Refused(
            "a frame's rows come through its query: statistics are read for files given as "
            "paths (histogram_scan)"
        )
    if dataset.format != "parquet":
        return Refused(f"{dataset.format.upper()} files keep no statistics")
    if not dataset.files:
        return Refused("the files are not local (statistics are read from local files)")
    if dataset.where is not None:
        return Refused("`where` keeps some rows: the statistics describe all of them")
    if dataset.reader_options:
        return Refused("`reader_options` may change what is read")
    if dataset.partitions and column in dataset.partitions:
        return Refused(f"{column!r} is a partition key, not a column of the files")
    if dtype not in _INTEGERS and dtype not in _FLOATS:
        return Refused(f"statistics are used for integer and float columns, not {dtype}")
    if need_count and dtype in _FLOATS:
        return Refused("the statistics do not count NaN: the number of values is read")
    try:
        import pyarrow.parquet as pq
    except ImportError:
        return Refused("pyarrow is not installed (it reads the statistics)")
    lo: Any = None
    hi: Any = None
    count = 0
    groups = 0
    names = [column] + ([weights] if weights is not None else [])
    for path in dataset.files:
        try:
            metadata = pq.ParquetFile(path).metadata
        except (OSError, ValueError) as e:
            return Refused(f"cannot read the metadata of {path} ({e})")
        where = _columns(metadata, names)
        if isinstance(where, Refused):
            return Refused(f"{os.path.basename(path)}: {where.reason}")
        for g in range(metadata.num_row_groups):
            group = metadata.row_group(g)
            if group.num_rows == 0:
                continue
            groups += 1
            if weights is not None:
                w = group.column(where[1]).statistics
                if w is None or not w.has_null_count or w.null_count:
                    # Rows with a null weight do not count: their values are no extremes.
                    return Refused(f"weights {weights!r} may hold nulls (row group {g} of {path})")
            chunk = group.column(where[0])
            s = chunk.statistics
            if s is None or not s.has_null_count:
                return Refused(f"row group {g} of {path} has no statistics of {column!r}")
            valid = chunk.num_values - s.null_count
            count += valid
            if valid == 0:
                continue
            if not s.has_min_max:
                return Refused(f"row group {g} of {path} has no min/max of {column!r}")
            a, b = s.min, s.max
            refused = _untrusted(a, b, dtype)
            if refused:
                return Refused(f"row group {g} of {path}: {refused}")
            lo = a if lo is None or a < lo else lo
            hi = b if hi is None or b > hi else hi
    kind = passes.extremes_kind(dtype)
    return Found(
        passes.Extremes(kind, lo, hi),
        count if dtype in _INTEGERS else None,
        groups,
        len(dataset.files),
    )


def _columns(metadata: Any, names: list[str]) -> list[int] | Refused:
    """The indices of the top-level columns ``names`` in a file's row groups."""
    schema = metadata.schema
    found = []
    for name in names:
        index = next(
            (i for i in range(metadata.num_columns) if schema.column(i).path == name), None
        )
        if index is None:
            return Refused(f"no top-level column {name!r} in its statistics")
        found.append(index)
    return found


def _untrusted(lo: Any, hi: Any, dtype: pl.DataType) -> str | None:
    """Why a row group's min and max cannot be taken as they are, or None."""
    if dtype in _INTEGERS:
        if not isinstance(lo, int) or not isinstance(hi, int):
            return f"min/max of an integer column read as {type(lo).__name__}"
        return None
    if not isinstance(lo, float) or not isinstance(hi, float):
        return f"min/max of a float column read as {type(lo).__name__}"
    if lo != lo or hi != hi:
        return "a NaN min/max (written by an old writer)"
    if lo == 0.0 or hi == 0.0:
        return "a zero min/max (Parquet statistics keep no sign of zero)"
    return None
