"""A fill of one CuPy column counted into CuPy arrays, left on its GPU: what a Dask partition
contributes without copying its counts to the host (a million counts are 8 MB a partition),
merged there and copied once, at the end.

The kernels count the axis with three flow bins, ``[below, bins.., above, NaN]``, in one pass;
``Histogram.count_cuda_into`` reads the flow from them and leaves the bins where they are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from polars_gpu_hist._histogram.histogram import Histogram

# The flow tuple of the native histogram: rows, null, nan, underflow, overflow, and the under-
# and overflow's weights and squared weights.
Flow = tuple[int, int, int, int, int, float, float, float, float]


def counted(template: Histogram, column: Any, weights: Any) -> tuple[Any, Any, Flow]:
    """The counts (float64 sums when weighted) of a CuPy ``column`` by ``template``'s binning
    (one axis; the template is not changed), left on the column's GPU; the sums of the squared
    weights (or None); the flow."""
    import cupy

    (bins,) = template.shape
    cells = bins + 3

    def into(sample: Any, squares_ptr: int | None) -> tuple[Any, Any, Flow]:
        stream = cupy.cuda.get_current_stream().ptr
        rows = cupy.empty(cells, cupy.uint64)
        if squares_ptr is None:
            flow = template._core.count_cuda_into(sample, None, stream, cells, rows.data.ptr)
            return rows[1 : bins + 1], None, flow
        sums, squares = cupy.empty(cells, cupy.float64), cupy.empty(cells, cupy.float64)
        pointers = (sums.data.ptr, squares.data.ptr)
        flow = template._core.count_cuda_into(
            sample, squares_ptr, stream, cells, rows.data.ptr, pointers
        )
        return sums[1 : bins + 1], squares[1 : bins + 1], flow

    result: tuple[Any, Any, Flow] = template._count_cuda([column], weights, into)
    return result
