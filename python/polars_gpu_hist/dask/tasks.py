"""The tasks of ``polars_gpu_hist.dask`` graphs, run on the workers: a partition's partial, the
merge of partials, and the Histogram made once from the total.

A partial is small and cheap to move: the flat counts (one contiguous array: CuPy, left on the
GPU that counted the partition, or numpy), the squared weights of a weighted histogram, the
flow, and a zero-row sample of each column type seen (which fixes the result's dtypes and names
by the native rules at the end, where mixing dtypes that numpy would bin differently raises as
a merge of Histograms does). The binning travels once, as the graph's one ``Spec`` key, not in
every task; its arguments are checked once per worker thread (each thread counts its partials
with its own template, never filled).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, NamedTuple

import numpy as np
import polars as pl

from polars_gpu_hist._histogram.histogram import Histogram
from polars_gpu_hist.dask import gpu_partials as _device_cells

Flow = tuple[int, int, int, int, int, float, float, float, float]


class Spec:
    """A histogram's arguments, checked on the client, and its token (each thread's template is
    keyed by it)."""

    def __init__(self, kwargs: dict[str, Any], token: str) -> None:
        self.kwargs = kwargs
        self.token = token

    def histogram(self) -> Histogram:
        """A fresh, empty histogram of this binning."""
        return Histogram(**self.kwargs)

    def template(self) -> Histogram:
        """This binning's histogram for the calling thread, its arguments checked once per
        thread: partials are counted by it and never added to it (``Histogram._counted``), and
        each thread has its own, so that the native lock does not make a worker's threads
        count one at a time."""
        by_token = _TEMPLATES.by_token
        template = by_token.get(self.token)
        if template is None:
            if len(by_token) >= 8:
                by_token.pop(next(iter(by_token)))
            template = by_token[self.token] = self.histogram()
        return template

    def __dask_tokenize__(self) -> str:
        return self.token


class _Templates(threading.local):
    def __init__(self) -> None:
        self.by_token: dict[str, Histogram] = {}


_TEMPLATES = _Templates()


class Partial(NamedTuple):
    """What one partition (or a merge of several) contributes."""

    # Flat: uint64 counts, or float64 sums of weights; a CuPy array on the GPU that counted
    # the partition, else numpy.
    counts: Any
    squares: Any  # sums of squared weights (weighted histograms), or None
    flow: Flow
    # Several axes: the flow cells, (counts or sums, squares or None) on the host; else None.
    cells: Any
    # One zero-row sample (the columns, and the weights or None) per column type seen.
    probes: tuple[tuple[tuple[Any, ...], Any], ...]


# How a partition holds its columns: one column (an array block or a Series), an (m, d) block
# of rows, or a frame with the columns' names and the weights' (or None).
Layout = Any


def fill(spec: Spec, part: Any, weights: Any, layout: Layout) -> Partial:
    """The partial of one partition (with its weights: a block, or None), whatever it holds:
    numpy, pandas, Polars on the host; CuPy, cuDF, PyTorch in GPU memory, counted there."""
    columns, weights = _split(part, weights, layout)
    probe = _probe(columns, weights)
    values, w, nulls = _device_columns(columns, weights)
    template = spec.template()
    if not len(values[0]):  # an empty partition adds nothing (and launches nothing)
        partial = _zeros(template, probe)
    elif len(values) == 1 and _library(values[0]) == "cupy":
        # Counted into CuPy arrays, left on the GPU: merged there, copied to the host once.
        partial = Partial(*_device_cells.counted(template, values[0], w), None, (probe,))
    else:
        counts, squares, flow, cells = template._counted(*values, weights=w)
        partial = Partial(
            counts.to_numpy(),
            None if squares is None else squares.to_numpy(),
            flow,
            None if cells is None else tuple(None if c is None else c.to_numpy() for c in cells),
            (probe,),
        )
    if nulls:
        flow = partial.flow
        partial = partial._replace(flow=(flow[0] + nulls, flow[1] + nulls, *flow[2:]))
    return partial


def _zeros(template: Histogram, probe: tuple[tuple[Any, ...], Any]) -> Partial:
    """The partial of no rows."""
    cells = int(np.prod(template.shape))
    outside = (
        0 if len(template.shape) == 1 else int(np.prod([n + 2 for n in template.shape])) - cells
    )
    no_flow: Flow = (0, 0, 0, 0, 0, 0.0, 0.0, 0.0, 0.0)
    if not template.weighted:
        counted = None if not outside else (np.zeros(outside, np.uint64), None)
        return Partial(np.zeros(cells, np.uint64), None, no_flow, counted, (probe,))
    summed = None if not outside else (np.zeros(outside), np.zeros(outside))
    return Partial(np.zeros(cells), np.zeros(cells), no_flow, summed, (probe,))


def _split(part: Any, weights: Any, layout: Layout) -> tuple[tuple[Any, ...], Any]:
    if layout == "column":
        return (part,), weights
    if layout == "rows":
        # Contiguous copies in GPU memory, where fills read columns of stride 1 (on the host
        # the fill's conversion copies them anyway).
        copy = getattr(part, "__cuda_array_interface__", None) is not None
        columns = (part[:, j] for j in range(part.shape[1]))
        return tuple(c.copy() if copy else c for c in columns), weights
    names, weights_name = layout
    return tuple(part[n] for n in names), None if weights_name is None else part[weights_name]


def merge(*partials: Partial) -> Partial:
    """The sum of partials (counts, squares and flow added; probes of new types kept)."""
    first = partials[0]
    if len(partials) == 1:
        return first
    counts = _sum([p.counts for p in partials])
    squares = None if first.squares is None else _sum([p.squares for p in partials])
    flow: Any = tuple(sum(values) for values in zip(*(p.flow for p in partials)))
    cells = None
    if all(p.cells is not None for p in partials):
        cells = tuple(
            None if first.cells[i] is None else _sum([p.cells[i] for p in partials])
            for i in range(2)
        )
    probes: dict[tuple[str, ...], tuple[tuple[Any, ...], Any]] = {}
    for p in partials:
        for probe in p.probes:
            probes.setdefault(_signature(probe), probe)
    return Partial(counts, squares, flow, cells, tuple(probes.values()))


def _sum(arrays: list[Any]) -> Any:
    """The sum of equal-shaped arrays in one new array (inputs may be read-only buffers): on
    their GPU where they all lie on one (CuPy), else on the host."""
    homes = {_gpu_of(a) for a in arrays}
    home = homes.pop() if len(homes) == 1 else None
    if home is None:
        arrays = [_on_host(a) for a in arrays]
    with contextlib.nullcontext() if home is None else _cupy().cuda.Device(home):
        total = arrays[0] + arrays[1]
        for a in arrays[2:]:
            total += a
    return total


def _library(data: Any) -> str:
    return type(data).__module__.split(".")[0]


def _gpu_of(a: Any) -> int | None:
    """The GPU holding a CuPy array; None for a host array."""
    return int(a.device.id) if _library(a) == "cupy" else None


def _on_host(a: Any) -> Any:
    return a.get() if _library(a) == "cupy" else a


def _cupy() -> Any:
    import cupy

    return cupy


def finish(spec: Spec, *partials: Partial) -> Histogram:
    """The Histogram of the partials' sum: the zero-row samples fix its dtypes and names (and
    refuse a mix of dtypes numpy would bin differently), then it takes the sums (copied to the
    host once, where they were summed on a GPU)."""
    total = merge(*partials)
    h = spec.histogram()
    for columns, weights in total.probes:
        h.fill(*columns, weights=weights)  # no rows: nothing is counted, nor launched
    squares = None if total.squares is None else pl.Series(_on_host(total.squares))
    cells = None
    if total.cells is not None:
        cells = (
            pl.Series(total.cells[0]),
            None if total.cells[1] is None else pl.Series(total.cells[1]),
        )
    h._core.set_contents(pl.Series(_on_host(total.counts)), squares, total.flow, cells)
    return h


def _device_columns(columns: tuple[Any, ...], weights: Any) -> tuple[tuple[Any, ...], Any, int]:
    """cuDF Series as CuPy arrays, counted where they lie (no copy where there is no null);
    rows with a null in any of them dropped, and counted as null in the flow. Other columns as
    they are."""
    found = [c for c in (*columns, weights) if _is_cudf(c)]
    if not found:
        return columns, weights, 0
    nulls = sum(int(c.null_count) for c in found)
    valid = None
    if nulls:
        valid = found[0].notna().values
        for c in found[1:]:
            valid &= c.notna().values
    dropped = 0 if valid is None else len(valid) - int(valid.sum())

    def device(c: Any) -> Any:
        if not _is_cudf(c):
            return c
        return c.values if valid is None else c.fillna(0).values[valid]

    return tuple(device(c) for c in columns), device(weights), dropped


def _is_cudf(data: Any) -> bool:
    return type(data).__module__.split(".")[0] == "cudf"


def _probe(columns: tuple[Any, ...], weights: Any) -> tuple[tuple[Any, ...], Any]:
    return tuple(_zero_rows(c) for c in columns), None if weights is None else _zero_rows(weights)


def _zero_rows(data: Any) -> Any:
    """A zero-row host sample of ``data``'s type (its name too, for a pandas or Polars
    Series), holding no reference to the partition."""
    if isinstance(data, pl.Series):
        return data.clear()
    module = type(data).__module__.split(".")[0]
    if module in ("pandas", "cudf"):
        empty = data.iloc[:0]
        return empty.to_pandas() if module == "cudf" else empty.copy()
    if module == "torch":
        return data[:0].cpu().numpy()
    dtype = getattr(data, "dtype", None)
    if dtype is not None:
        return np.empty(0, np.dtype(dtype))
    return np.asarray(data)[:0].copy()


def _signature(probe: tuple[tuple[Any, ...], Any]) -> tuple[str, ...]:
    columns, weights = probe
    return tuple(str(getattr(x, "dtype", type(x))) for x in (*columns, weights))


# `by=`: the partials are the expression's rows, per group and bin.


def fill_by(
    frame: Any, column: str, keys: list[str], weights: str | None, kwargs: dict[str, Any]
) -> pl.DataFrame:
    """The grouped histogram of one partition (pandas or cuDF), as the expression's rows."""
    from polars_gpu_hist._expr.functions import histogram_expr

    names = [column, *keys] + ([weights] if weights is not None else [])
    part = frame[names]
    if _is_cudf(part):
        polars_frame = pl.from_arrow(part.to_arrow())
    else:
        polars_frame = pl.from_pandas(part, nan_to_null=False)
    assert isinstance(polars_frame, pl.DataFrame)
    expr = histogram_expr(column, by=keys, weights=weights, **kwargs)
    return polars_frame.select(expr).unnest(column)


def merge_by(keys: list[str], *frames: pl.DataFrame) -> pl.DataFrame:
    """Partials of groups summed: the union of the groups, in order of first appearance."""
    if len(frames) == 1:
        return frames[0]
    together = pl.concat(frames, how="vertical_relaxed")
    cells = [*keys, "bin_start", "bin_end"]
    return together.group_by(cells, maintain_order=True).agg(pl.col("count").sum())
