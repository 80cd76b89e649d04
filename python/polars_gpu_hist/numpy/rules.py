"""numpy's rules that the numpy drop-in follows on the host and on the device alike: the dtype
of equal bins' edges, the type explicit edges compare in, density, and one entry per dimension
of an n-D argument."""

from __future__ import annotations

from typing import Any

import numpy as np


def edge_dtype(a_dtype: np.dtype, bins: Any, range: Any) -> np.dtype:
    """The dtype numpy gives equal bins' edges: `result_type(first_edge, last_edge, a)`, made
    floating (float32 for float32 data and a range of Python floats or float32 scalars)."""
    if range is None:
        bin_type = a_dtype
    else:
        lo, hi = range
        bin_type = np.result_type(lo, hi, np.empty(0, dtype=a_dtype))
    if np.issubdtype(bin_type, np.integer) or bin_type == np.bool_:
        bin_type = np.result_type(bin_type, float)
    return np.dtype(bin_type)


def explicit(bins: Any) -> bool:
    return not isinstance(bins, (str, int, np.integer))


def as_numpy_compares(bins: Any, sample_dtype: np.dtype) -> Any:
    """Explicit edges in the type numpy's `searchsorted` compares them in with a sample of
    `sample_dtype` (their common type): integers, compared exactly, where that is an integer
    type (int64 edges with an int64 sample, uint64 with uint64); float64 where numpy promotes
    to it (uint64 beside int64 edges, float edges)."""
    if not explicit(bins) or sample_dtype.kind not in "iub":
        return bins
    edges = np.asarray(bins)
    if edges.dtype.kind not in "iu":
        return bins
    if np.result_type(sample_dtype, edges.dtype).kind in "iu":
        return edges.tolist()
    return edges.astype(np.float64).tolist()


def dd_as_numpy_compares(bins: Any, dims: int, sample_dtype: np.dtype) -> Any:
    """`as_numpy_compares` for each dimension's edges (numpy stacks the sample first)."""
    if isinstance(bins, (str, int, np.integer)):
        return bins
    entries = list(bins)
    if len(entries) != dims:
        return bins
    return [as_numpy_compares(b, sample_dtype) for b in entries]


def density(counts: Any, widths: list[Any], lib: Any) -> Any:
    """numpy's `n / db / n.sum()` (n-D: divided by each axis's widths in turn, then by the
    total of the counts)."""
    out = counts.astype(lib.float64) if hasattr(counts, "astype") else counts.double()
    total = out.sum()
    for axis, w in enumerate(widths):
        shape = [1] * len(widths)
        shape[axis] = -1
        out = out / w.reshape(shape)
    return out / total


def known_bins(bins: Any) -> int | None:
    """The number of bins when the arguments say it (a count, or edges), else None."""
    if isinstance(bins, str):
        return None
    if isinstance(bins, (int, np.integer)):
        return int(bins)
    return len(bins) - 1


def entry(value: Any, i: int, dims: int) -> Any:
    if value is None or isinstance(value, (str, int, np.integer)):
        return value
    entries = list(value)
    return entries[i] if len(entries) == dims else value


def dd_edge_dtype(sample_dtype: np.dtype, range: Any, empty: bool) -> np.dtype:
    """numpy.histogramdd's dtype for equal bins' edges: `linspace` of the sample's extremes (its
    dtype; an empty sample's (0, 1) are Python ints) or of the range (its scalars' type)."""
    if range is None:
        floating = np.issubdtype(sample_dtype, np.floating) and not empty
        kind = sample_dtype if floating else np.float64
    else:
        lo, hi = range
        kind = np.result_type(lo, hi, 1.0)
    return np.dtype(kind)
