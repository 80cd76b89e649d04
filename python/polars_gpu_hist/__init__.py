"""Numpy-exact histograms of Polars columns, on NVIDIA GPUs and all CPU cores.

Importing this package registers the ``gpu_hist`` expression namespace::

    import polars as pl
    import polars_gpu_hist  # noqa: F401

    df.select(pl.col("x").gpu_hist.histogram(bins=100))
"""

from __future__ import annotations

import builtins
import math
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
    "histogram2d",
    "histogram_expr",
    "histogram_scan",
    "histogramdd",
]

_PLUGIN_PATH = Path(__file__).parent

BinsArg: TypeAlias = Union[int, Sequence[float]]
RangeArg: TypeAlias = Union[tuple[float, float], Sequence[float], None]
Closed: TypeAlias = Literal["left", "right"]
Device: TypeAlias = Literal["auto", "cpu", "gpu"]
Kernel: TypeAlias = Literal["auto", "shared", "packed", "segmented", "global"]


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
    by: pl.Expr | str | None = None,
) -> pl.Expr:
    """The histogram of ``expr`` as an expression; see :meth:`GpuHistNamespace.histogram`."""
    args = [_expr(expr)]
    key = None if by is None else _expr(by)
    if key is not None:
        # The plugin groups by the key's physical values (Categorical codes, for one) and
        # returns each group's first row; the key itself, in its own dtype, is gathered there.
        args.append(key.to_physical())
    if weights is not None:
        args.append(_expr(weights))
    hist = register_plugin_function(
        plugin_path=_PLUGIN_PATH,
        function_name="histogram" if key is None else "histogram_by",
        args=args,
        kwargs=_kwargs(bins, range, density, closed, device, kernel),
        is_elementwise=False,
        changes_length=True,
    )
    if key is None:
        return hist
    key_name = key.meta.output_name()
    return hist.struct.with_fields(key.gather(pl.field(key_name)).alias(key_name))


def _expr(column: pl.Expr | str | pl.Series) -> pl.Expr:
    if isinstance(column, str):
        return pl.col(column)
    if isinstance(column, pl.Series):
        return pl.lit(column)
    return column


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
        by: pl.Expr | str | None = None,
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
            On the GPU, pin the kernel family instead of letting the plan choose; for
            benchmarks and tests. ``"shared"`` (replicated shared-memory counters),
            ``"packed"`` (16-bit shared-memory counters, twice the bins), ``"segmented"``
            (bins partitioned, then counted a partition at a time; any bin count) and
            ``"global"`` (global atomics). Weighted sums and n-D histograms take ``"shared"``
            or ``"global"``.
        by
            A group key (a column name or expression: integers, strings, booleans, temporal):
            every group's histogram in one pass, as a 2-D histogram with the group as an axis.
            All groups share one binning (with ``bins=int`` and no ``range``, the range of the
            whole column), so each group's rows equal ``group_by().agg()`` of this histogram
            with the same ``range`` or edges; ``density`` normalizes each group. Rows are the
            groups in order of first appearance (a null key is a group), each with all its bins,
            and the Struct starts with the key field. Much faster than ``group_by().agg()``,
            which calls the plugin once per group.

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
            by=by,
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


def _dd_bins(bins: Any, dims: int) -> list[int | list[float]]:
    """numpy.histogramdd's ``bins``: one int for all, or a sequence with one entry per dimension."""
    if isinstance(bins, (str, bytes, bool)):
        raise TypeError(f"`bins` must be an int or one entry per dimension, got {bins!r}")
    try:
        return [_bins(operator.index(bins))] * dims
    except TypeError:
        pass
    entries = list(bins)
    if len(entries) != dims:
        raise ValueError(
            f"`bins` has {len(entries)} entries for {dims} dimensions: give one per dimension"
        )
    return [_bins(entry) for entry in entries]


def _dd_range(range: Any, dims: int) -> list[tuple[float, float] | None]:
    if range is None:
        return []
    entries = list(range)
    if len(entries) != dims:
        raise ValueError(
            f"`range` has {len(entries)} entries for {dims} dimensions: give one (or None) per "
            "dimension"
        )
    return [_range(entry) for entry in entries]


def _dd_kwargs(
    dims: int,
    bins: Any,
    range: Any,
    density: bool,
    closed: str,
    device: str,
    kernel: str,
) -> dict[str, Any]:
    return {
        "bins": _dd_bins(bins, dims),
        "range": _dd_range(range, dims),
        "density": bool(density),
        "closed": str(closed),
        "device": str(device),
        "kernel": None if kernel == "auto" else str(kernel),
    }


def histogramdd(
    *columns: Any,
    bins: Any = 10,
    range: Sequence[RangeArg] | None = None,
    weights: Any = None,
    density: bool = False,
    closed: Closed = "left",
    device: Device = "auto",
    kernel: Kernel = "auto",
) -> Any:
    """The n-D histogram of 2 to 8 columns: counts identical to ``numpy.histogramdd``.

    ``columns`` are column names or expressions (the result is an expression), Series or
    array-likes (the result is a DataFrame), or arrays in GPU memory with
    ``__cuda_array_interface__``: several 1-D arrays or one ``(n, d)`` array, counted where they
    lie (a DataFrame; ``weights`` then a float64 GPU array).

    The result has one row per cell in row-major order of the linearized index, with fields
    ``<column>_start`` and ``<column>_end`` for each column and ``count`` (UInt64; Float64 with
    ``weights`` or ``density``). A row is counted only when every coordinate is valid: rows with
    a null in any column are dropped, and so are rows with a NaN where a range comes from the
    data. Bins are numpy.histogramdd's: ``linspace`` edges in the sample's precision and
    ``searchsorted`` on them, the last bin closed.

    Parameters
    ----------
    bins
        One int for every dimension, or one entry per dimension: an int (equal bins) or a
        sequence of strictly increasing edges.
    range
        ``None``, or one ``(min, max)`` (or ``None``) per dimension for its equal bins.
    weights
        A column (name or expression) of the same length: ``count`` sums the weights (Float64).
    density
        numpy's density: ``count / (product of the cell's widths) / total``.
    closed
        ``"left"``: ``[a, b)`` bins, the last closed, as numpy. ``"right"``: ``(a, b]`` bins, the
        first closed, over the same edges.
    device, kernel
        As for :meth:`GpuHistNamespace.histogram`.
    """
    if len(columns) == 1 and _cuda_array(columns[0], ndim=2) is not None:
        return _histogramdd_cuda(
            columns, bins, range, weights, density, closed, device, kernel
        ).unnest("x0")
    if columns and all(_cuda_array(c) is not None for c in columns):
        return _histogramdd_cuda(
            columns, bins, range, weights, density, closed, device, kernel
        ).unnest("x0")
    kwargs = {
        "options": _dd_kwargs(len(columns), bins, range, density, closed, device, kernel),
        "weighted": weights is not None,
    }
    if all(isinstance(c, (str, pl.Expr)) for c in columns):
        args = [_expr(c) for c in columns]
        if weights is not None:
            args.append(_expr(weights))
        return register_plugin_function(
            plugin_path=_PLUGIN_PATH,
            function_name="histogramdd",
            args=args,
            kwargs=kwargs,
            is_elementwise=False,
            changes_length=True,
        )
    # Series and array-likes: a frame of them, then the expression above.
    series = [
        c if isinstance(c, pl.Series) else pl.Series(f"x{i}", c) for i, c in enumerate(columns)
    ]
    frame = pl.DataFrame(series)
    names = frame.columns
    if weights is not None:
        w = weights if isinstance(weights, pl.Series) else pl.Series("__weights", weights)
        frame = frame.with_columns(w.alias("__weights"))
    expr = histogramdd(
        *names,
        bins=bins,
        range=range,
        weights=None if weights is None else "__weights",
        density=density,
        closed=closed,
        device=device,
        kernel=kernel,
    )
    return frame.select(expr).unnest(names[0])


def histogram2d(
    x: Any,
    y: Any,
    *,
    bins: Any = 10,
    range: Sequence[RangeArg] | None = None,
    weights: Any = None,
    density: bool = False,
    closed: Closed = "left",
    device: Device = "auto",
    kernel: Kernel = "auto",
) -> Any:
    """The 2-D histogram of ``x`` and ``y``: :func:`histogramdd` of two columns (the basis of
    heatmaps and of mutual information); counts identical to ``numpy.histogram2d``."""
    return histogramdd(
        x,
        y,
        bins=bins,
        range=range,
        weights=weights,
        density=density,
        closed=closed,
        device=device,
        kernel=kernel,
    )


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


def _cuda_array(data: Any, ndim: int = 1) -> dict[str, Any] | None:
    """The CUDA array interface of ``data`` (a C-contiguous, unmasked array of ``ndim``
    dimensions), if it has one; ``None`` also for a GPU array of another ``ndim`` when 2 is
    asked for (the caller then tries 1)."""
    iface = getattr(data, "__cuda_array_interface__", None)
    if iface is None:
        return None
    shape = tuple(iface["shape"])
    if len(shape) != ndim:
        if ndim == 2:
            return None
        raise ValueError(f"expected a 1-D array in GPU memory, got shape {shape}")
    strides = iface.get("strides")
    itemsize = int(iface["typestr"][2:])
    contiguous = tuple(itemsize * math.prod(shape[i + 1 :]) for i in builtins.range(ndim))
    if strides is not None and shape[0] > 1 and tuple(strides) != contiguous:
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


def _histogramdd_cuda(
    columns: Sequence[Any],
    bins: Any,
    range: Any,
    weights: Any,
    density: bool,
    closed: str,
    device: str,
    kernel: str,
) -> pl.DataFrame:
    """histogramdd of GPU arrays: one ``(n, d)`` array (column j at offset j, stride d) or
    several 1-D arrays of one dtype."""
    matrix = _cuda_array(columns[0], ndim=2) if len(columns) == 1 else None
    if matrix is not None:
        length, dims = matrix["shape"]
        itemsize = int(matrix["typestr"][2:])
        base = matrix["data"][0]
        ptrs = [base + j * itemsize for j in builtins.range(dims)]
        strides = [dims] * dims
        typestr = matrix["typestr"]
        ifaces = [matrix]
    else:
        ifaces = [_cuda_array(c) for c in columns]
        typestrs = {i["typestr"] for i in ifaces}
        lengths = {i["shape"][0] for i in ifaces}
        if len(typestrs) != 1 or len(lengths) != 1:
            raise ValueError(
                f"arrays in GPU memory must share one dtype and length, got {sorted(typestrs)} "
                f"and lengths {sorted(lengths)}"
            )
        length, typestr = lengths.pop(), typestrs.pop()
        dims = len(ifaces)
        ptrs = [i["data"][0] for i in ifaces]
        strides = [1] * dims
    weights_ptr = None
    if weights is not None:
        w = _cuda_array(weights)
        if w is None or w["typestr"][1:] != "f8" or w["shape"][0] != length:
            raise ValueError(
                "weights of arrays in GPU memory must be a float64 GPU array of the same length"
            )
        weights_ptr = w["data"][0]
    for iface in ifaces:
        _sync_stream(iface)
    kwargs = _pickled(_dd_kwargs(dims, bins, range, density, closed, device, kernel))
    names = [f"x{j}" for j in builtins.range(dims)]
    series, _plan, _kernel_ms = _internal.histogramdd_cuda(
        names, ptrs, strides, length, typestr, kwargs, weights_ptr
    )
    return series.to_frame()


# The mergeable histogram and the scan over larger-than-memory data build on the helpers above.
from polars_gpu_hist._accumulator import Histogram  # noqa: E402
from polars_gpu_hist._scan import histogram_scan  # noqa: E402
