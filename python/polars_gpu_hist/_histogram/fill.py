"""What ``Histogram.fill`` takes, made into what the native histogram takes: one column per
axis, as Polars Series for host data."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from polars_gpu_hist._inputs import host as _host


def columns(data: tuple[Any, ...], d: int) -> list[Any]:
    """One column per axis, from ``fill``'s positional arguments."""
    __tracebackhide__ = True  # IPython shows the caller's frame
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


def as_series(data: Any, name: str, *, flatten: bool) -> pl.Series:
    """A Polars Series of ``data`` without a copy where Polars can avoid one (``_inputs``' one
    rule for host data); ``flatten`` (one axis) flattens arrays of several dimensions as numpy
    does, else a column must be 1-D."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    if isinstance(data, pl.DataFrame):
        if data.width != 1:
            raise TypeError(
                f"fill takes one column; got a DataFrame of {data.width} columns: pass df[column]"
            )
        return _host.storage(data.to_series())
    if isinstance(data, (pl.LazyFrame, pl.Expr)):
        raise TypeError(
            f"fill takes data, not a {type(data).__name__}: use histogram_scan for a LazyFrame"
        )
    what = "weights" if name == "weights" else "data"
    return _host.series(data, name, what, flatten=flatten)


def is_sequence(x: Any) -> bool:
    return isinstance(x, (Sequence, np.ndarray, pl.Series)) and not isinstance(x, (str, bytes))
