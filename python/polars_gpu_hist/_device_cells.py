"""A fill of CuPy arrays counted into CuPy arrays, left on their GPU: what a Dask partition
contributes without copying its counts to the host (a million counts are 8 MB a partition),
merged there and copied once, at the end.

The kernels count every axis with three flow bins, ``[below, bins.., above, NaN]``, in one pass
(``Histogram.count_cuda_into``); :func:`split` takes the bins and the flow apart by the rule of
``split_flow`` (src/accumulator/flow.rs): a row with NaN on some axis is NaN, else the first
axis on which it lies outside decides below or above.
"""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from polars_gpu_hist._accumulator import Histogram

# The flow tuple of the native histogram: rows, null, nan, underflow, overflow, and the under-
# and overflow's weights and squared weights.
Flow = tuple[int, int, int, int, int, float, float, float, float]


def counted(template: Histogram, columns: list[Any], weights: Any) -> tuple[Any, Any, Flow]:
    """The counts (flat, row-major; float64 sums when weighted), the squared weights (or
    None) and the flow of CuPy ``columns``, counted by ``template``'s binning (which is not
    changed), the counts left on the columns' GPU."""
    import cupy

    shape = tuple(template.shape)
    cells = math.prod(n + 3 for n in shape)
    rows = len(columns[0])

    def into(sample: Any, squares_ptr: int | None) -> tuple[Any, Any, Flow]:
        stream = cupy.cuda.get_current_stream().ptr
        counts = cupy.empty(cells, cupy.uint64)
        sums = None
        if squares_ptr is not None:
            sums = (cupy.empty(cells, cupy.float64), cupy.empty(cells, cupy.float64))
        pointers = None if sums is None else (sums[0].data.ptr, sums[1].data.ptr)
        template._native.count_cuda_into(
            sample, squares_ptr, stream, cells, counts.data.ptr, pointers
        )
        return split(counts, sums, shape, rows)

    result: tuple[Any, Any, Flow] = template._count_cuda(columns, weights, into)
    return result


def split(
    counts: Any, sums: tuple[Any, Any] | None, shape: tuple[int, ...], rows: int
) -> tuple[Any, Any, Flow]:
    """The bins and the flow of cells counted with flow bins (numpy or CuPy arrays, left where
    they are; the flow's sums copied to the host): ``(bins, squares or None, flow)``, the bins
    the row counts or, with ``sums`` (of the weights and of their squares), the weights'.
    ``rows``: the rows of the fill, every one in some cell (arrays in GPU memory hold no null).
    """
    xp = sys.modules[type(counts).__module__.split(".")[0]]
    extended = tuple(n + 3 for n in shape)
    inside = tuple(slice(1, n + 1) for n in shape)
    not_nan = tuple(slice(0, n + 2) for n in shape)

    def outside(grid: Any) -> list[Any]:
        # Per axis in order, below then above: the rows inside every axis before it and NaN
        # on none after it.
        sums = []
        for k, n in enumerate(shape):
            for at in (0, n + 1):
                cells = (*inside[:k], at, *not_nan[k + 1 :])
                sums.append(grid[cells].sum())
        return sums

    def bins(grid: Any) -> Any:
        return xp.ascontiguousarray(grid[inside]).reshape(-1)

    def on_host(sums: list[Any]) -> list[Any]:
        stacked = xp.stack(sums)
        values: list[Any] = (stacked.get() if hasattr(stacked, "get") else stacked).tolist()
        return values

    grid = counts.reshape(extended)
    not_nan_rows, *flow_rows = on_host([grid[not_nan].sum(), *outside(grid)])
    below, above = sum(flow_rows[0::2]), sum(flow_rows[1::2])
    flow: Any = [rows, 0, rows - not_nan_rows, below, above, 0.0, 0.0, 0.0, 0.0]
    if sums is None:
        return bins(grid), None, tuple(flow)
    weights, squares = (s.reshape(extended) for s in sums)
    flow_sums = on_host([*outside(weights), *outside(squares)])
    half = len(flow_sums) // 2
    flow[5:] = (
        sum(flow_sums[:half][0::2]),
        sum(flow_sums[:half][1::2]),
        sum(flow_sums[half:][0::2]),
        sum(flow_sums[half:][1::2]),
    )
    return bins(weights), bins(squares), tuple(flow)
