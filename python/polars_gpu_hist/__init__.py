"""Numpy-exact histograms of Polars columns, on NVIDIA GPUs and all CPU cores.

Importing this package registers the ``gpu_hist`` expression namespace::

    import polars as pl
    import polars_gpu_hist  # noqa: F401

    df.select(pl.col("x").gpu_hist.histogram(bins=100))
"""

from __future__ import annotations

import operator
import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Union

import polars as pl
from polars.plugins import register_plugin_function

from polars_gpu_hist._nvrtc import preload_nvrtc

preload_nvrtc()

from polars_gpu_hist import _internal  # noqa: E402
from polars_gpu_hist._internal import __version__  # noqa: E402

if TYPE_CHECKING:
    from typing_extensions import TypeAlias

__all__ = [
    "GpuHistNamespace",
    "Histogram",
    "__version__",
    "explain",
    "gpu_available",
    "histogram",
    "histogram_expr",
    "histogram_scan",
]

_PLUGIN_PATH = Path(__file__).parent

BinsArg: TypeAlias = Union[int, Sequence[float]]
RangeArg: TypeAlias = Union[tuple[float, float], Sequence[float], None]
Closed: TypeAlias = Literal["left", "right"]
Device: TypeAlias = Literal["auto", "cpu", "gpu"]
Kernel: TypeAlias = Literal["auto", "shared", "global"]


def _pickled(kwargs: dict[str, Any]) -> bytes:
    """Options for the native functions, pickled as Polars pickles a plugin's kwargs."""
    return pickle.dumps(kwargs, protocol=5)


def gpu_available() -> bool:
    """Whether an NVIDIA GPU, its driver and NVRTC can be used by this process."""
    return _internal.gpu_available()


def _bins(bins: Any) -> int | list[float]:
    """An int (numpy integers too) or a list of float edges (any sequence or array)."""
    if isinstance(bins, bool) or isinstance(bins, (str, bytes)):
        raise TypeError(f"`bins` must be an int or a sequence of edges, got {bins!r}")
    try:
        count = operator.index(bins)
    except TypeError:
        pass
    else:
        if count < 1:
            raise ValueError(f"`bins` must be a positive integer, got {count}")
        return count
    try:
        return [float(edge) for edge in bins]
    except TypeError:
        raise TypeError(
            f"`bins` must be an int or a sequence of edges, got {type(bins).__name__}"
        ) from None


def _range(range: Any) -> tuple[float, float] | None:
    if range is None:
        return None
    try:
        lo, hi = range
        return float(lo), float(hi)
    except (TypeError, ValueError):
        raise TypeError(f"`range` must be a pair (min, max), got {range!r}") from None


def _kwargs(
    bins: Any, range: Any, density: bool, closed: str, device: str, kernel: str = "auto"
) -> dict[str, Any]:
    return {
        "bins": _bins(bins),
        "range": _range(range),
        "density": bool(density),
        "closed": str(closed),
        "device": str(device),
        "kernel": None if kernel == "auto" else str(kernel),
    }


def histogram_expr(
    expr: pl.Expr | str,
    bins: BinsArg = 10,
    *,
    range: RangeArg = None,
    weights: pl.Expr | str | None = None,
    density: bool = False,
    closed: Closed = "left",
    device: Device = "auto",
    kernel: Kernel = "auto",
) -> pl.Expr:
    """The histogram of ``expr`` as an expression; see :meth:`GpuHistNamespace.histogram`."""
    args = [pl.col(expr) if isinstance(expr, str) else expr]
    if weights is not None:
        args.append(pl.col(weights) if isinstance(weights, str) else weights)
    return register_plugin_function(
        plugin_path=_PLUGIN_PATH,
        function_name="histogram",
        args=args,
        kwargs=_kwargs(bins, range, density, closed, device, kernel),
        is_elementwise=False,
        changes_length=True,
    )


@pl.api.register_expr_namespace("gpu_hist")
class GpuHistNamespace:
    """Histograms of an expression: ``pl.col("x").gpu_hist.histogram(...)``."""

    def __init__(self, expr: pl.Expr) -> None:
        self._expr = expr

    def histogram(
        self,
        bins: BinsArg = 10,
        *,
        range: RangeArg = None,
        weights: pl.Expr | str | None = None,
        density: bool = False,
        closed: Closed = "left",
        device: Device = "auto",
        kernel: Kernel = "auto",
    ) -> pl.Expr:
        """One row per bin: a Struct with fields ``bin_start``, ``bin_end`` and ``count``.

        Counts are identical to ``numpy.histogram`` with the same arguments; nulls, NaN and
        values outside the bins are not counted.

        Parameters
        ----------
        bins
            The number of equal-width bins over ``range`` (or over the [min, max] of the
            column's valid values), or a sequence of strictly increasing edges.
        range
            ``(min, max)`` of the equal-width bins. Not allowed with explicit edges.
        weights
            A column name or expression of the same length: ``count`` becomes the sum of the
            weights in each bin (Float64). A null in either the value or its weight skips the row.
        density
            numpy's density: ``count / bin width / total``, so the histogram integrates to 1.
        closed
            ``"left"``: bins ``[a, b)`` with the last bin closed, as numpy.
            ``"right"``: bins ``(a, b]`` with the first bin closed, as Polars' ``Expr.hist``.
        device
            ``"auto"`` (the fastest available: see :func:`explain`), ``"cpu"`` or ``"gpu"``.
        kernel
            On the GPU, pin the kernel family (``"shared"`` or ``"global"``) instead of
            letting the plan choose; for benchmarks and tests.

        Returns
        -------
        pl.Expr
            A Struct column with one row per bin; in ``group_by().agg()`` a list of them per group.
            ``bin_start``/``bin_end`` are Float64, or the column's own dtype for Date, Datetime
            and Duration. ``count`` is UInt64, or Float64 with ``weights`` or ``density``.
        """
        return histogram_expr(
            self._expr,
            bins,
            range=range,
            weights=weights,
            density=density,
            closed=closed,
            device=device,
            kernel=kernel,
        )


def histogram(
    data: Any,
    bins: BinsArg = 10,
    *,
    range: RangeArg = None,
    weights: Any = None,
    density: bool = False,
    closed: Closed = "left",
    device: Device = "auto",
    kernel: Kernel = "auto",
) -> pl.DataFrame:
    """The histogram of a Series, an array-like, or an array in GPU memory, as a DataFrame
    (``bin_start``, ``bin_end``, ``count``), with the arguments and results of the
    ``gpu_hist.histogram`` expression.

    Arrays exposing ``__cuda_array_interface__`` (CuPy, PyTorch, Numba) are counted on the GPU
    where they lie, without a copy to the host; their ``weights`` must be a float64 array in GPU
    memory of the same length.
    """
    cuda = _cuda_array(data)
    if cuda is not None:
        return _histogram_cuda(cuda, bins, range, weights, density, closed, device, kernel).unnest(
            "x"
        )
    x = data if isinstance(data, pl.Series) else pl.Series("x", data)
    frame = pl.DataFrame({"x": x})
    w = None
    if weights is not None:
        frame = frame.with_columns(
            w=weights if isinstance(weights, pl.Series) else pl.Series("w", weights)
        )
        w = "w"
    out = frame.select(
        histogram_expr(
            "x",
            bins,
            range=range,
            weights=w,
            density=density,
            closed=closed,
            device=device,
            kernel=kernel,
        )
    )
    return out.unnest("x")


def explain(
    data: Any,
    bins: BinsArg = 10,
    *,
    range: RangeArg = None,
    weights: bool = False,
    closed: Closed = "left",
    device: Device = "auto",
    kernel: Kernel = "auto",
) -> str:
    """Which backend would compute this histogram and why; on the GPU, the kernel, grid and
    shared memory the plan chooses. ``data`` is a Series, an array (host or GPU) or a dtype
    (then for 2^29 rows).
    """
    kwargs = _pickled(_kwargs(bins, range, False, closed, device, kernel))
    cuda = _cuda_array(data)
    if cuda is not None:
        typestr, length = cuda["typestr"], cuda["shape"][0]
        return _internal.explain(
            _DTYPE_OF_TYPESTR.get(typestr[1:], typestr), length, kwargs, bool(weights), True
        )
    if isinstance(data, (pl.DataType, type)):
        return _internal.explain(str(data), 1 << 29, kwargs, bool(weights), False)
    s = data if isinstance(data, pl.Series) else pl.Series(data)
    return _internal.explain(str(s.dtype), len(s), kwargs, bool(weights), False)


_DTYPE_OF_TYPESTR = {
    "f4": "Float32",
    "f8": "Float64",
    "i1": "Int8",
    "i2": "Int16",
    "i4": "Int32",
    "i8": "Int64",
    "u1": "UInt8",
    "u2": "UInt16",
    "u4": "UInt32",
    "u8": "UInt64",
}


def _cuda_array(data: Any) -> dict[str, Any] | None:
    """The CUDA array interface of ``data`` (a 1-D, contiguous, unmasked array), if it has one."""
    iface = getattr(data, "__cuda_array_interface__", None)
    if iface is None:
        return None
    shape = tuple(iface["shape"])
    if len(shape) != 1:
        raise ValueError(f"expected a 1-D array in GPU memory, got shape {shape}")
    strides = iface.get("strides")
    itemsize = int(iface["typestr"][2:])
    if strides is not None and shape[0] > 1 and strides[0] != itemsize:
        raise ValueError("the array in GPU memory must be contiguous (make a contiguous copy)")
    if iface.get("mask") is not None:
        raise ValueError("masked arrays in GPU memory are not supported")
    return iface


def _histogram_cuda(
    iface: dict[str, Any],
    bins: Any,
    range: Any,
    weights: Any,
    density: bool,
    closed: str,
    device: str,
    kernel: str,
) -> pl.DataFrame:
    length = iface["shape"][0]
    weights_ptr = None
    if weights is not None:
        w = _cuda_array(weights)
        if w is None or w["typestr"][1:] != "f8" or w["shape"][0] != length:
            raise ValueError(
                "weights of an array in GPU memory must be a float64 GPU array of the same length"
            )
        weights_ptr = w["data"][0]
    _sync_stream(iface)
    kwargs = _pickled(_kwargs(bins, range, density, closed, device, kernel))
    series, _plan, _kernel_ms = _internal.histogram_cuda(
        "x", iface["data"][0], length, iface["typestr"], kwargs, weights_ptr
    )
    return series.to_frame()


def _sync_stream(iface: dict[str, Any]) -> None:
    """Honour the producer's stream (CUDA array interface v3): its writes must be complete."""
    stream = iface.get("stream")
    if stream:
        import ctypes

        cuda = ctypes.CDLL("libcuda.so.1")
        if cuda.cuStreamSynchronize(ctypes.c_void_p(stream)) != 0:
            raise RuntimeError("cuStreamSynchronize failed on the array's stream")


# The mergeable histogram and the scan over larger-than-memory data build on the helpers above.
from polars_gpu_hist._accumulator import Histogram  # noqa: E402
from polars_gpu_hist._scan import histogram_scan  # noqa: E402
