"""The native module (src/python.rs and src/python/): the expression plugin's library, and every
class and function the package calls. tests/native/test_stub.py holds this file and the module's
exports equal, both ways; `make test` type-checks the package against it (mypy --strict)."""

from os import PathLike
from typing import Literal, final

from polars import Series

from polars_gpu_hist._native.options import (
    PickledHistKwargs,
    PickledHistogramArguments,
    PickledHistogramDdOptions,
    PickledHistogramOptions,
)

__version__: str
MAX_BINS: int

# Registration (src/python.rs): the Python layer's guards.
def raise_interrupted() -> None: ...
def ensure_room(nbytes: int) -> None: ...
def watch_ctrl_c() -> None: ...

# The GPU and its prebuilt kernels (src/python/kernels.rs).
def gpu_available() -> bool: ...
def gpu_info() -> str: ...
def set_kernel_bundle(path: str | PathLike[str]) -> None: ...
def build_kernel_bundle(
    path: str | PathLike[str],
    archs: list[int] | None = None,
    ptx_archs: list[int] | None = None,
    threads: int = 4,
) -> list[tuple[str, int, int, int, int, int]]: ...
def merge_kernel_bundles(path: str | PathLike[str], inputs: list[str | PathLike[str]]) -> int: ...

# Host data outside a query (src/python/host.rs).
def explain(
    dtype: Series,
    rows: int,
    pickled_options: PickledHistogramOptions,
    weighted: bool,
    location: Literal["host", "pinned", "device"],
    device: int | None = None,
) -> str: ...
def histogram_series(
    values: Series,
    pickled_options: PickledHistogramOptions,
    weights: Series | None = None,
    *,
    api: Literal["polars", "numpy"],
) -> Series: ...
def histogramdd_series(
    columns: list[Series],
    pickled_options: PickledHistogramDdOptions,
    weights: Series | None = None,
    *,
    api: Literal["polars", "numpy"],
) -> Series: ...
def histogram_buffers(
    values: Series, pickled_options: PickledHistogramOptions, weights: Series | None = None
) -> tuple[bytes, bytes]: ...
def hist_series(values: Series, pickled_kwargs: PickledHistKwargs) -> Series: ...
def estimate_from_extremes(
    rule: str, n: int, extremes: Series, range: tuple[float, float] | None = None
) -> int | None: ...

# Pins (src/python/pins.rs).
def pin(series: Series, device: int | None = None) -> int: ...
def unpin(series: Series) -> bool: ...
def unpin_all() -> None: ...
def is_pinned(series: Series) -> bool: ...
def pinned() -> tuple[int, int]: ...
def pinned_device(series: Series) -> int | None: ...
def device_of(ptr: int, what: str) -> int: ...

# The typed values the calls take (src/python/values.rs).
@final
class DeviceSample:
    """Arrays in GPU memory of one dtype and length (checked), and their float64 weights."""

    def __new__(
        cls, columns: list[tuple[int, int, str, int]], weights: int | None = None
    ) -> DeviceSample: ...
    @property
    def rows(self) -> int: ...
    @property
    def ndim(self) -> int: ...

@final
class EdgeTarget:
    """Where an axis's edges go: a device address and the dtype to write there."""

    def __new__(cls, ptr: int, typestr: str) -> EdgeTarget: ...

@final
class DeviceTarget:
    """Arrays the caller allocated for a call's results, and the stream to queue on."""

    def __new__(
        cls, stream: int, counts: int, cells: int, edges: list[EdgeTarget | None]
    ) -> DeviceTarget: ...

@final
class HistogramOptions:
    """A 1-D histogram's options (src/options.rs), parsed once from their pickle."""

    def __new__(cls, pickled: PickledHistogramOptions) -> HistogramOptions: ...

@final
class HistogramDdOptions:
    """An n-D histogram's options (src/options.rs), parsed once from their pickle."""

    def __new__(cls, pickled: PickledHistogramDdOptions) -> HistogramDdOptions: ...

@final
class DataExtremes:
    """The extremes of all of a column's data, exact values of their kind."""

    @staticmethod
    def empty() -> DataExtremes: ...
    @staticmethod
    def float16(lo: float, hi: float) -> DataExtremes: ...
    @staticmethod
    def float32(lo: float, hi: float) -> DataExtremes: ...
    @staticmethod
    def float64(lo: float, hi: float) -> DataExtremes: ...
    @staticmethod
    def integer(lo: int, hi: int) -> DataExtremes: ...

# Arrays in GPU memory (src/python/device.rs): 1-D or n-D as the options' type says.
@final
class DeviceArray:
    """An array left in GPU memory, shown through ``__cuda_array_interface__``."""

    @property
    def __cuda_array_interface__(self) -> dict[str, object]: ...
    @property
    def device(self) -> int: ...

def histogram_cuda(
    names: list[str], sample: DeviceSample, options: HistogramOptions | HistogramDdOptions
) -> tuple[Series, str, float]: ...
def histogram_cuda_counts(
    sample: DeviceSample,
    options: HistogramOptions | HistogramDdOptions,
    edge_typestrs: list[str | None],
) -> tuple[DeviceArray, list[tuple[DeviceArray | None, Series | None]], str]: ...
def histogram_cuda_into(
    sample: DeviceSample,
    options: HistogramOptions | HistogramDdOptions,
    target: DeviceTarget,
) -> tuple[list[Series | None], str]: ...

# `polars_gpu_hist.Histogram`'s native half (src/python/histogram.rs). A flow is (rows, null,
# nan, underflow, overflow, then the underflow's and overflow's sums of weights and of squares).

@final
class Histogram:
    """The mergeable histogram behind ``polars_gpu_hist.Histogram`` (src/accumulator/)."""

    def __new__(
        cls, pickled_arguments: PickledHistogramArguments, data_range: DataExtremes | None = None
    ) -> Histogram: ...
    def fill(self, columns: list[Series], weights: Series | None = None) -> None: ...
    def fill_cuda(self, sample: DeviceSample, squared_weights: int | None = None) -> None: ...
    def counted(
        self, columns: list[Series], weights: Series | None = None
    ) -> tuple[
        Series,
        Series | None,
        tuple[int, int, int, int, int, float, float, float, float],
        tuple[Series, Series | None] | None,
    ]: ...
    def counted_cuda(
        self, sample: DeviceSample, squared_weights: int | None = None
    ) -> tuple[
        Series,
        Series | None,
        tuple[int, int, int, int, int, float, float, float, float],
        tuple[Series, Series | None] | None,
    ]: ...
    def count_cuda_into(
        self,
        sample: DeviceSample,
        squared_weights: int | None,
        stream: int,
        cells: int,
        rows: int,
        sums: tuple[int, int] | None = None,
    ) -> tuple[int, int, int, int, int, float, float, float, float]: ...
    def set_contents(
        self,
        counts: Series,
        squares: Series | None,
        flow: tuple[int, int, int, int, int, float, float, float, float],
        cells: tuple[Series, Series | None] | None = None,
    ) -> None: ...
    def flow_cells(self) -> tuple[Series, Series | None] | None: ...
    def merge(self, other: Histogram) -> Histogram: ...
    def empty_like(self) -> Histogram: ...
    def reshaped(self, axes: list[tuple[int, list[int] | None]], weighted: bool) -> Histogram: ...
    def counts(self) -> Series: ...
    def squared_weights(self) -> Series | None: ...
    def edges(self, axis: int) -> Series: ...
    def to_series(self, name: str, axis_names: list[str], density: bool = False) -> Series: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(state: bytes) -> Histogram: ...
    def flow(self) -> tuple[int, int, int, int, int, float, float, float, float]: ...
    @property
    def shape(self) -> list[int]: ...
    @property
    def closed(self) -> Literal["left", "right"]: ...
    @property
    def weighted(self) -> bool: ...
    @property
    def dtypes(self) -> list[str | None]: ...

@final
class ScanSink:
    """A scan's fill inside Polars' streaming engine (src/python/scan.rs, src/accumulator/
    sink.rs): the plugin `scan_fill` counts every morsel into it."""

    def __new__(cls, histogram: Histogram, device: Literal["cpu", "gpu"]) -> ScanSink: ...
    @property
    def token(self) -> int: ...
    @property
    def rows(self) -> int: ...
    @property
    def profile(self) -> tuple[int, float]: ...
    @property
    def counting(self) -> str: ...
    def raise_failure(self) -> None: ...
    def finish(self) -> Histogram: ...
    def close(self) -> None: ...

# Tests' and benchmarks' hooks (src/python/hooks.rs).
def _histogram_by_report(
    values: Series, keys: Series, pickled_options: PickledHistogramOptions
) -> tuple[Series, str]: ...
def _histogram_report(
    values: Series, pickled_options: PickledHistogramOptions, weights: Series | None = None
) -> tuple[Series, str]: ...
def _proof_walks(
    bins: int, range: tuple[float, float], dtype: str, range_type: str
) -> tuple[tuple[bool, float], tuple[bool, float]] | None: ...
def _time_histogram(
    values: Series, pickled_options: PickledHistogramOptions, reps: int
) -> float: ...
