"""Numpy-exact histograms of Polars columns, on NVIDIA GPUs and all CPU cores.

Importing this package registers the ``gpu_hist`` namespace on expressions, Series, LazyFrames
and DataFrames::

    import polars as pl
    import polars_gpu_hist as gh

    df.select(pl.col("x").gpu_hist.histogram(bins=100))   # the namespace
    df.select(gh.histogram_expr("x", bins=100))             # the same, seen by type checkers
    pl.scan_parquet("big/*.parquet").gpu_hist.histogram("x", bins=100)  # streamed, any size
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from polars_gpu_hist._args.arguments import (
    BinsArg,
    ByArg,
    Closed,
    DdBinsArg,
    DdRangeArg,
    Device,
    HistBins,
    Kernel,
    RangeArg,
)
from polars_gpu_hist._args.quantile_bins import QuantileBins, quantile_bins
from polars_gpu_hist._engine.explain import explain
from polars_gpu_hist._engine.pins import pin, pinned, unpin
from polars_gpu_hist._expr.frames import GpuHistDataFrameNamespace, GpuHistLazyFrameNamespace
from polars_gpu_hist._expr.functions import (
    GpuHistNamespace,
    GpuHistSeriesNamespace,
    gpu_available,
    histogram,
    histogram2d,
    histogram_expr,
    histogramdd,
)
from polars_gpu_hist._expr.polars_hist import hist_expr
from polars_gpu_hist._native import __version__

if _TYPE_CHECKING:
    from polars_gpu_hist._histogram.histogram import Flow, Histogram
    from polars_gpu_hist._scan.scan import histogram_scan

__all__ = [
    "BinsArg",
    "ByArg",
    "Closed",
    "DdBinsArg",
    "DdRangeArg",
    "Device",
    "Flow",
    "GpuHistDataFrameNamespace",
    "GpuHistLazyFrameNamespace",
    "GpuHistNamespace",
    "GpuHistSeriesNamespace",
    "HistBins",
    "Histogram",
    "Kernel",
    "QuantileBins",
    "RangeArg",
    "__version__",
    "explain",
    "gpu_available",
    "hist_expr",
    "histogram",
    "histogram2d",
    "histogram_expr",
    "histogram_scan",
    "histogramdd",
    "pin",
    "pinned",
    "quantile_bins",
    "unpin",
]

# Public names whose modules are imported on first use: the accumulator needs numpy (0.06 to
# 0.16 s), which `import polars_gpu_hist` must not pay for (issue 33).
_LAZY = {
    "Flow": "_histogram.histogram",
    "Histogram": "_histogram.histogram",
    "histogram_scan": "_scan.scan",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
