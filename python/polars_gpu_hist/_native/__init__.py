"""The seam: the one place in the package that imports the compiled module (``_internal``,
src/python.rs). Everything else reaches the native side through the names below, so that what
crosses the boundary is listed, and typed by ``_internal.pyi``, in one place."""

from pathlib import Path

from polars_gpu_hist._native.nvrtc import preload_nvrtc

# NVRTC where pip put it, found before the native module's first use loads it (CUDA is loaded
# dynamically: the same wheel imports and runs without a driver).
preload_nvrtc()

from polars_gpu_hist._internal import (  # noqa: E402
    MAX_BINS,
    DataExtremes,
    DeviceSample,
    DeviceTarget,
    EdgeTarget,
    Histogram,
    HistogramDdOptions,
    HistogramOptions,
    ScanSink,
    __version__,
    device_of,
    ensure_room,
    estimate_from_extremes,
    explain,
    gpu_available,
    hist_series,
    histogram_buffers,
    histogram_cuda,
    histogram_cuda_counts,
    histogram_cuda_into,
    histogram_series,
    histogramdd_series,
    pin,
    pinned,
    pinned_device,
    raise_interrupted,
    set_kernel_bundle,
    unpin,
    unpin_all,
    watch_ctrl_c,
)

# The folder of the compiled library: what Polars' plugin registration is given.
PLUGIN_PATH = Path(__file__).parent.parent

# Kernels compiled when the wheel was built (the first GPU call then compiles nothing). Only the
# path is set here: the bundle is read on the first GPU call.
set_kernel_bundle(PLUGIN_PATH / "kernels.bundle")

__all__ = [
    "MAX_BINS",
    "PLUGIN_PATH",
    "DataExtremes",
    "DeviceSample",
    "DeviceTarget",
    "EdgeTarget",
    "Histogram",
    "HistogramDdOptions",
    "HistogramOptions",
    "ScanSink",
    "__version__",
    "device_of",
    "ensure_room",
    "estimate_from_extremes",
    "explain",
    "gpu_available",
    "hist_series",
    "histogram_buffers",
    "histogram_cuda",
    "histogram_cuda_counts",
    "histogram_cuda_into",
    "histogram_series",
    "histogramdd_series",
    "pin",
    "pinned",
    "pinned_device",
    "raise_interrupted",
    "set_kernel_bundle",
    "unpin",
    "unpin_all",
    "watch_ctrl_c",
]
