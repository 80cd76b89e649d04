"""numpy's edges and the cases where numpy itself cannot answer (contract/, histogram/)."""

from __future__ import annotations

import numpy as np
import polars as pl

from support.strategies import Case


def edges_of(hist: pl.DataFrame) -> np.ndarray:
    start = hist["bin_start"].to_physical().cast(pl.Float64).to_numpy()
    end = hist["bin_end"].to_physical().cast(pl.Float64).to_numpy()
    return np.append(start, end[-1:])


def span_overflows(case: Case) -> bool:
    """Whether numpy's width overflows its arithmetic: `max - min` is infinite in float64, or in
    float32 for a Float32 column's own extremes (numpy then computes in float32)."""
    if not isinstance(case.bins, int):
        return False
    values, _ = case.valid_numpy()
    if case.range is not None:
        lo, hi = case.range
    elif len(values):
        lo, hi = values.min(), values.max()
    else:
        return False
    if not np.isfinite([lo, hi]).all():
        return False
    with np.errstate(over="ignore"):
        return not np.isfinite(hi - lo)  # in float32 for float32 extremes


def collapses(case: Case) -> bool:
    """Whether equal edges computed without overflow (as ours are: each a weighted mean of the
    ends) collapse in the column's precision: a Float32 column's range beyond float32 rounds
    several of them to infinity, and numpy and we both refuse the bins."""
    assert isinstance(case.bins, int)
    values, _ = case.valid_numpy()
    lo, hi = case.range if case.range is not None else (values.min(), values.max())
    t = np.arange(case.bins + 1) / case.bins
    edges = float(lo) - float(lo) * t + float(hi) * t
    if case.series.dtype == pl.Float32:
        with np.errstate(over="ignore"):
            edges = edges.astype(np.float32)
    return not (np.diff(edges) > 0).all()
