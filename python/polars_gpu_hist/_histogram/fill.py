"""What ``Histogram.fill`` takes, made into what the native histogram takes: one column per
axis, as Polars Series for host data."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl


def columns(data: tuple[Any, ...], d: int) -> list[Any]:
    """One column per axis, from ``fill``'s positional arguments."""
    if len(data) == d:
        return list(data)
    if len(data) != 1:
        raise TypeError(
            f"this histogram has {d} axes: fill takes {d} columns (or one object holding them), "
            f"got {len(data)} arguments; pass weights as weights=..."
        )
    (whole,) = data
    if isinstance(whole, pl.DataFrame):
        if whole.width != d:
            raise TypeError(
                f"fill takes one column per axis ({d}); got a DataFrame of {whole.width} "
                "columns: select them"
            )
        return whole.get_columns()
    if isinstance(whole, (tuple, list)) and len(whole) == d and all(map(is_sequence, whole)):
        return list(whole)
    ndim = getattr(whole, "ndim", None)
    if ndim == 2 and whole.shape[1] == d and d > 1:
        return [whole[:, i] for i in range(d)]
    raise TypeError(
        f"this histogram has {d} axes: fill takes {d} columns, a DataFrame or tuple of them, "
        f"or an (n, {d}) array"
    )


def as_series(data: Any, name: str) -> pl.Series:
    """A Polars Series of ``data`` without a copy where Polars can avoid one."""
    if isinstance(data, pl.Series):
        return data
    if isinstance(data, pl.DataFrame):
        if data.width != 1:
            raise TypeError(
                f"fill takes one column; got a DataFrame of {data.width} columns: pass df[column]"
            )
        return data.to_series()
    if isinstance(data, (pl.LazyFrame, pl.Expr)):
        raise TypeError(
            f"fill takes data, not a {type(data).__name__}: use histogram_scan for a LazyFrame"
        )
    if type(data).__module__.split(".")[0] == "pandas":
        converted = pl.from_pandas(data, nan_to_null=False)
        return converted if isinstance(converted, pl.Series) else as_series(converted, name)
    ndim = getattr(data, "ndim", 1)
    if ndim != 1:
        raise ValueError(f"fill takes a 1-D array per axis, got {ndim} dimensions")
    return pl.Series(name, data)


def is_sequence(x: Any) -> bool:
    return isinstance(x, (Sequence, np.ndarray, pl.Series)) and not isinstance(x, (str, bytes))
