"""The package's functions and expression namespaces (``polars_gpu_hist`` re-exports them; the
package module itself holds only its public names, so that ``dir()`` lists nothing else)."""

from __future__ import annotations

import builtins
import contextlib
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Union

import polars as pl

from polars_gpu_hist import _args, _cuda, _internal
from polars_gpu_hist._args import (
    BinsArg,
    Closed,
    DdBinsArg,
    DdRangeArg,
    Device,
    HistBins,
    Kernel,
    RangeArg,
)
from polars_gpu_hist._polars_hist import build_plugin_call, hist_expr

_PLUGIN_PATH = Path(__file__).parent

IntoExpr = Union[pl.Expr, str]


def _pickled(kwargs: dict[str, Any]) -> bytes:
    """Options for the native functions, pickled as Polars pickles a plugin's kwargs."""
    return pickle.dumps(kwargs, protocol=5)


# How the plugin's out-of-memory error reads once Polars has wrapped it (src/error.rs).
_OUT_OF_MEMORY = "out of memory: could not allocate"
# How a call that Ctrl-C stopped reads once Polars has wrapped it (src/error.rs INTERRUPTED).
_INTERRUPTED = "interrupted (Ctrl-C): the call stopped early"


@contextlib.contextmanager
def _memory_errors() -> Iterator[None]:
    """Turns the plugin's out-of-memory error, which Polars hands on as a ComputeError, back
    into a ``MemoryError`` where we run the query ourselves, and a call Ctrl-C stopped into
    Python's ``KeyboardInterrupt`` (its pending SIGINT handler runs now, not later)."""
    try:
        yield
    except pl.exceptions.ComputeError as e:
        text = str(e)
        if _INTERRUPTED in text:
            _internal.raise_interrupted()
        if _OUT_OF_MEMORY in text:
            start = text.index(_OUT_OF_MEMORY)
            raise MemoryError(text[start:].split("\n")[0]) from e
        raise


def gpu_available() -> bool:
    """Whether an NVIDIA GPU, its driver and NVRTC can be used by this process."""
    return _internal.gpu_available()


def _expr(column: IntoExpr | pl.Series) -> pl.Expr:
    if isinstance(column, str):
        return pl.col(column)
    if isinstance(column, pl.Series):
        return pl.lit(column)
    if not isinstance(column, pl.Expr):
        raise TypeError(
            f"expected a column name, an expression or a Series, got {type(column).__name__}"
        )
    return column


def histogram_expr(
    expr: IntoExpr,
    bins: BinsArg = 10,
    *,
    range: RangeArg = None,
    weights: IntoExpr | None = None,
    density: bool = False,
    closed: Closed = "left",
    flow: bool = False,
    device: Device = "auto",
    kernel: Kernel = "auto",
    by: IntoExpr | None = None,
) -> pl.Expr:
    """The histogram of ``expr`` as an expression: one row per bin, a Struct with fields
    ``bin_start``, ``bin_end`` and ``count``, with counts identical to ``numpy.histogram``.

    This is ``pl.col(...).gpu_hist.histogram(...)`` as a function that type checkers see.

    Parameters
    ----------
    expr
        The column: a name or an expression.
    bins
        The number of equal-width bins over ``range`` (or over the [min, max] of the column's
        valid values); a sequence of strictly increasing edges (numbers, or dates, datetimes,
        durations for temporal columns); one of numpy's estimators ``"auto"``, ``"fd"``,
        ``"doane"``, ``"scott"``, ``"stone"``, ``"rice"``, ``"sturges"``, ``"sqrt"``; or
        ``"integer"``: one bin per integer (integer and temporal columns).
    range
        ``(min, max)`` of the equal-width bins (numbers, or temporal values for temporal
        columns; numpy float32 scalars make float32 edges, as in numpy).
    weights
        A column of the same length: ``count`` becomes the sum of the weights in each bin
        (Float64). A null in either the value or its weight skips the row.
    density
        numpy's density: ``count / bin width / total``, so the histogram integrates to 1.
    closed
        ``"left"``: bins ``[a, b)`` with the last bin closed, as numpy. ``"right"``: bins
        ``(a, b]`` with the first bin closed, as Polars' ``Expr.hist``.
    flow
        Add an underflow row ``[-inf, first edge)`` first and an overflow row
        ``(last edge, +inf]`` last (null edges for temporal columns), as boost-histogram's
        flow bins: they count the values outside the edges, NaN in the overflow. A value equal
        to the last edge stays in the last bin, which is closed (numpy's rule; Polars' with
        ``closed="right"``), where boost-histogram would put it in the overflow. Nulls are
        counted nowhere (``null_count()`` has them).
    device
        ``"auto"`` (the fastest available: see :func:`explain`), ``"cpu"`` or ``"gpu"``.
    kernel
        On the GPU, pin the kernel family instead of letting the plan choose (benchmarks and
        tests): ``"shared"``, ``"packed"``, ``"segmented"`` or ``"global"``.
    by
        A group key (integers, strings, booleans, temporal, Categorical, Enum; not floats):
        every group's histogram in one pass. All groups share one binning (with ``bins=int``
        and no ``range``, the range of the whole column); rows are the groups in order of
        first appearance (a null key is a group), each with all its bins, and the Struct starts
        with the key field. ``density`` normalizes each group.

    Returns
    -------
    pl.Expr
        A Struct column with one row per bin; in ``group_by().agg()`` a list of them per group.
        ``bin_start``/``bin_end`` are Float64, or the column's own dtype for Date, Datetime
        (its time zone kept) and Duration. ``count`` is UInt64, or Float64 with ``weights`` or
        ``density``.
    """
    kwargs: dict[str, Any] = _args.histogram_kwargs(
        bins, range, density, closed, flow, device, kernel
    )
    args = [_expr(expr)]
    if by is not None:
        key = _expr(by)
        args.append(key)
        # Inside group_by().agg() and over() Polars hands the plugin the key without its name:
        # the name the query gives it travels with the options.
        kwargs = {"options": kwargs, "key": key.meta.output_name(raise_if_undetermined=False)}
    if weights is not None:
        args.append(_expr(weights))
    return _plugin("histogram" if by is None else "histogram_by", args, kwargs)


def _plugin(function_name: str, args: list[pl.Expr], kwargs: dict[str, Any]) -> pl.Expr:
    """A call of the plugin's `function_name`: one row per bin (or cell), whatever the input's
    length."""
    # Ctrl-C stops the query's long calls (chained again if a SIGINT handler, as Jupyter's
    # around each cell, displaced the action since).
    _internal.watch_ctrl_c()
    # Polars' own registration, without its per-call search for the library (_polars_hist.py).
    return build_plugin_call(function_name, args, _pickled(kwargs), None)


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
        weights: IntoExpr | None = None,
        density: bool = False,
        closed: Closed = "left",
        flow: bool = False,
        device: Device = "auto",
        kernel: Kernel = "auto",
        by: IntoExpr | None = None,
    ) -> pl.Expr:
        """One row per bin: see :func:`histogram_expr` for the arguments and the result."""
        return histogram_expr(
            self._expr,
            bins,
            range=range,
            weights=weights,
            density=density,
            closed=closed,
            flow=flow,
            device=device,
            kernel=kernel,
            by=by,
        )

    def hist(
        self,
        bins: HistBins = None,
        *,
        bin_count: int | None = None,
        include_category: bool = False,
        include_breakpoint: bool = False,
        device: Device = "auto",
    ) -> pl.Expr:
        """A drop-in for Polars' ``Expr.hist``: the same arguments, defaults and frame (schema,
        right-closed bins, ``category`` labels, UInt32 ``count``), computed in one call of the
        plugin; ``device`` is the one extra argument. See :func:`hist_expr`."""
        return hist_expr(
            self._expr,
            bins,
            bin_count=bin_count,
            include_category=include_category,
            include_breakpoint=include_breakpoint,
            device=device,
        )


@pl.api.register_series_namespace("gpu_hist")
class GpuHistSeriesNamespace:
    """Histograms of a Series: ``s.gpu_hist.histogram(...)``, as the expression namespace."""

    def __init__(self, series: pl.Series) -> None:
        self._series = series

    def histogram(
        self,
        bins: BinsArg = 10,
        *,
        range: RangeArg = None,
        weights: Any = None,
        density: bool = False,
        closed: Closed = "left",
        flow: bool = False,
        device: Device = "auto",
        kernel: Kernel = "auto",
    ) -> pl.Series:
        """The histogram as a Struct Series named like this one (:func:`histogram_expr`);
        ``weights`` is a Series (or array) of the same length."""
        s = self._series
        kwargs = _args.histogram_kwargs(bins, range, density, closed, flow, device, kernel)
        return _host_histogram(s, weights, kwargs).alias(s.name)

    def hist(
        self,
        bins: HistBins = None,
        *,
        bin_count: int | None = None,
        include_category: bool = True,
        include_breakpoint: bool = True,
        device: Device = "auto",
    ) -> pl.DataFrame:
        """A drop-in for Polars' ``Series.hist``: the same arguments, defaults and DataFrame
        (``breakpoint``, ``category``, ``count``, or ``count`` alone), computed in one call of
        the plugin. See :func:`hist_expr`."""
        s = self._series
        expr = hist_expr(
            pl.col(s.name),
            bins,
            bin_count=bin_count,
            include_category=include_category,
            include_breakpoint=include_breakpoint,
            device=device,
        )
        with _memory_errors():
            out = s.to_frame().select(expr).to_series()
        if include_category or include_breakpoint:
            return out.struct.unnest()
        return out.to_frame()


def histogram(
    data: Any,
    bins: BinsArg = 10,
    *,
    range: RangeArg = None,
    weights: Any = None,
    density: bool = False,
    closed: Closed = "left",
    flow: bool = False,
    device: Device = "auto",
    kernel: Kernel = "auto",
) -> pl.DataFrame:
    """The histogram of a Series, an array-like, or an array in GPU memory, as a DataFrame
    (``bin_start``, ``bin_end``, ``count``), with the arguments and results of
    :func:`histogram_expr`. Arrays of more than one dimension are flattened, as numpy does.

    Arrays exposing ``__cuda_array_interface__`` (CuPy, PyTorch, Numba) are counted on the GPU
    where they lie, without a copy to the host; their ``weights`` must be a float64 array in GPU
    memory of the same length.
    """
    kwargs = _args.histogram_kwargs(bins, range, density, closed, flow, device, kernel)
    iface = _cuda.cuda_array(data)
    if iface is not None:
        length = iface["shape"][0]
        weights_ptr = _cuda.weights_pointer(weights, length)
        _cuda.sync_stream(iface)
        series, _report, _ms = _internal.histogram_cuda(
            "x", int(iface["data"][0]), length, iface["typestr"], _pickled(kwargs), weights_ptr
        )
        return series.struct.unnest()
    return _host_histogram(data, weights, kwargs).struct.unnest()


def _host_histogram(data: Any, weights: Any, kwargs: dict[str, Any]) -> pl.Series:
    """The histogram of host data under the plugin's `kwargs`, as a Struct Series named ``x``.

    The counts come from the plugin's own function called directly, without a query around it
    (at 1,000 rows the query costs more than the counting). Where that fails, the same call as
    a query raises the error exactly as the expression does: the data and its weights sit in a
    frame of their own under fixed names, so no name of the caller's can collide."""
    values = _host_series(data, "x")
    w = None if weights is None else _host_series(weights, "w", "weights")
    if w is not None and w.len() != values.len():
        raise ValueError(
            f"`weights` has {w.len()} values but the data has {values.len()}: give one weight "
            "per value"
        )
    try:
        return _internal.histogram_series(values, _pickled(kwargs), w)
    except MemoryError:
        raise
    except Exception:
        pass  # the query below raises it as the expression does
    frame = pl.DataFrame({"x": values})
    args = [pl.col("x")]
    if w is not None:
        frame = frame.with_columns(w.alias("w"))
        args.append(pl.col("w"))
    with _memory_errors():
        return frame.select(_plugin("histogram", args, kwargs)).to_series()


def _host_series(data: Any, name: str, what: str = "column") -> pl.Series:
    """A Series of host data: Series as they are, arrays flattened as numpy flattens them;
    ``what`` names it in the error an Object Series raises."""
    if not isinstance(data, pl.Series):
        if getattr(data, "ndim", 1) > 1:
            data = data.reshape(-1)
        data = pl.Series(name, data)
    _args.refuse_object(data, what)
    return data


def histogramdd(
    *columns: Any,
    bins: DdBinsArg = 10,
    range: DdRangeArg = None,
    weights: Any = None,
    density: bool = False,
    closed: Closed = "left",
    flow: bool = False,
    device: Device = "auto",
    kernel: Kernel = "auto",
) -> Any:
    """The n-D histogram of 2 to 8 columns: counts identical to ``numpy.histogramdd``.

    ``columns`` are column names or expressions (the result is an expression), Series or
    array-likes, or one ``(n, d)`` host array whose columns are the dimensions (a DataFrame),
    or arrays in GPU memory with ``__cuda_array_interface__``: several 1-D arrays or one
    ``(n, d)`` array, counted where they lie (a DataFrame; ``weights`` then a float64 GPU
    array).

    The result has one row per cell in row-major order, with fields ``<column>_start`` and
    ``<column>_end`` for each column and ``count`` (UInt64; Float64 with ``weights`` or
    ``density``). The columns are binned as numpy bins the sample they make (their common
    dtype). A row counts only when every coordinate is valid: rows with a null in any column
    are dropped; NaN values are not counted (numpy refuses them).

    Parameters
    ----------
    bins
        One entry for every dimension, or one per dimension: a number of equal bins, edges, or
        a rule (see :func:`histogram_expr`; an estimator is applied to each column alone).
    range
        ``None``, or one ``(min, max)`` (or ``None``) per dimension for its equal bins.
    weights
        A column (name or expression) of the same length: ``count`` sums the weights (Float64).
    density
        numpy's density: ``count / (product of the cell's widths) / total``.
    closed, flow, device, kernel
        As for :func:`histogram_expr` (``flow`` adds flow bins to every axis).
    """
    if not columns:
        raise ValueError("histogramdd needs 2 to 8 columns, got none")
    device_columns = _cuda.columns(columns)
    if device_columns is not None:
        ptrs, strides, length, typestr = device_columns
        weights_ptr = _cuda.weights_pointer(weights, length)
        kwargs = _pickled(
            _args.dd_kwargs(len(ptrs), bins, range, density, closed, flow, device, kernel)
        )
        names = [f"x{j}" for j in builtins.range(len(ptrs))]
        series, _report, _ms = _internal.histogramdd_cuda(
            names, ptrs, strides, length, typestr, kwargs, weights_ptr
        )
        return series.struct.unnest()
    if len(columns) == 1 and getattr(columns[0], "ndim", 1) == 2:
        matrix = columns[0]
        columns = tuple(matrix[:, j] for j in builtins.range(matrix.shape[1]))
    if not 2 <= len(columns) <= 8:
        raise ValueError(
            f"histogramdd takes 2 to 8 columns, got {len(columns)}"
            + (": use histogram for one column" if len(columns) == 1 else "")
        )
    options = _args.dd_kwargs(len(columns), bins, range, density, closed, flow, device, kernel)
    if all(isinstance(c, (str, pl.Expr)) for c in columns):
        args = [_expr(c) for c in columns]
        if weights is not None:
            args.append(_expr(weights))
        return _plugin("histogramdd", args, {"options": options, "weighted": weights is not None})
    return _host_histogramdd(columns, weights, options)


def _host_histogramdd(columns: Any, weights: Any, options: dict[str, Any]) -> pl.DataFrame:
    """The n-D histogram of host Series or array-likes under the plugin's `options`: a frame of
    them, then the plugin."""
    series = [
        c if isinstance(c, pl.Series) else pl.Series(f"x{i}", c) for i, c in enumerate(columns)
    ]
    for c in series:
        _args.refuse_object(c)
    names = [c.name for c in series]
    for name in names:
        if names.count(name) > 1:
            raise ValueError(
                f"column {name!r} appears twice: give each dimension its own name (`.alias`)"
            )
    frame = pl.DataFrame(series)
    args = [pl.col(n) for n in frame.columns]
    # The weights' column must not replace a column of the same name.
    weights_name = "__weights" + "_" * max((len(n) for n in frame.columns), default=0)
    if weights is not None:
        w = _host_series(weights, weights_name, "weights")
        if w.len() != frame.height:
            raise ValueError(
                f"`weights` has {w.len()} values but the columns have {frame.height} rows: give "
                "one weight per row"
            )
        frame = frame.with_columns(w.alias(weights_name))
        args.append(pl.col(weights_name))
    expr = _plugin("histogramdd", args, {"options": options, "weighted": weights is not None})
    with _memory_errors():
        return frame.select(expr).to_series().struct.unnest()


def histogram2d(
    x: Any,
    y: Any,
    *,
    bins: DdBinsArg = 10,
    range: DdRangeArg = None,
    weights: Any = None,
    density: bool = False,
    closed: Closed = "left",
    flow: bool = False,
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
        flow=flow,
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
    flow: bool = False,
    device: Device = "auto",
    kernel: Kernel = "auto",
) -> str:
    """Which backend would compute this histogram and why; on the GPU, the kernels, grid and
    shared memory the plan chooses, and where compiled kernels are kept. ``data`` is a Series,
    an array (host or GPU) or a dtype (then for 2^29 rows).
    """
    kwargs = _pickled(_args.histogram_kwargs(bins, range, False, closed, flow, device, kernel))
    # The dtype crosses as an empty Series of it (every dtype can, not every dtype object can).
    iface = _cuda.cuda_array(data)
    if iface is not None:
        empty = pl.Series(values=[], dtype=_dtype_of_typestr(iface["typestr"]))
        return _internal.explain(empty, iface["shape"][0], kwargs, bool(weights), "device")
    if isinstance(data, (pl.DataType, type)):
        try:
            empty = pl.Series(values=[], dtype=data)
        except (TypeError, ValueError, pl.exceptions.PolarsError) as e:
            raise TypeError(f"explain takes a Series, an array or a Polars dtype: {e}") from None
        _args.refuse_object(empty)
        return _internal.explain(empty, 1 << 29, kwargs, bool(weights), "host")
    s = data if isinstance(data, pl.Series) else pl.Series(data)
    _args.refuse_object(s)
    location = "pinned" if _internal.is_pinned(s) else "host"
    return _internal.explain(s.clear(), len(s), kwargs, bool(weights), location)


def _dtype_of_typestr(typestr: str) -> pl.DataType:
    import numpy as np

    return pl.Series(np.empty(0, dtype=np.dtype(typestr))).dtype


def pin(data: pl.Series | pl.DataFrame) -> int:
    """Keep a column (or every column of a frame) in GPU memory: later histograms of it, with
    any bins or range, read the device copy instead of copying it again (a fraction of a
    millisecond for a GiB instead of tens). Returns the device bytes it takes.

    Nothing is kept on the GPU unless pinned: a column's memory may belong to numpy, pyarrow
    or a memory-mapped file, which can change it in place, and the plugin cannot tell. Pinning
    is your promise that the memory stays as it is until :func:`unpin`; a pin holds a reference
    to the column, so Polars cannot free or reuse its memory meanwhile.
    """
    if isinstance(data, pl.DataFrame):
        return sum(pin(s) for s in data.get_columns())
    _check_pinnable(data, "pin")
    return int(_internal.pin(data))


def _check_pinnable(data: object, what: str) -> None:
    if not isinstance(data, pl.Series):
        raise TypeError(
            f"`{what}` takes a Polars Series or DataFrame, got {type(data).__name__}: pass the "
            "column itself (df['x']), not its name"
        )


def unpin(data: pl.Series | pl.DataFrame | None = None) -> None:
    """Drop the pin of a column (or of every column of a frame), or every pin (no argument)."""
    if data is None:
        _internal.unpin_all()
    elif isinstance(data, pl.DataFrame):
        for s in data.get_columns():
            _internal.unpin(s)
    else:
        _check_pinnable(data, "unpin")
        _internal.unpin(data)


def pinned() -> tuple[int, int]:
    """(pinned columns, device bytes they take)."""
    columns, nbytes = _internal.pinned()
    return int(columns), int(nbytes)
