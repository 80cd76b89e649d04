"""The package's functions and expression namespaces (``polars_gpu_hist`` re-exports them; the
package module itself holds only its public names, so that ``dir()`` lists nothing else)."""

from __future__ import annotations

import builtins
import pickle
from collections.abc import Sequence
from typing import Any, Literal, Union

import polars as pl

from polars_gpu_hist import _native
from polars_gpu_hist._args import arguments as _args
from polars_gpu_hist._args import plain_kwargs as _plain_kwargs
from polars_gpu_hist._args import quantile_bins as _quantile_bins
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
from polars_gpu_hist._expr import docstrings as _docstrings
from polars_gpu_hist._expr.polars_hist import build_plugin_call, hist_call, hist_expr, hist_of_call
from polars_gpu_hist._expr.row_namespace import RowBinningMethods, RowBinningSeriesMethods
from polars_gpu_hist._inputs import host as _host
from polars_gpu_hist._native import cuda_arrays as _cuda
from polars_gpu_hist._native import options as _options

IntoExpr = Union[pl.Expr, str]
# Whose exception types a native call raises (src/boundary.rs `Api`).
Api = Literal["polars", "numpy"]


def _pickled(kwargs: _options.Kwargs | bytes) -> bytes:
    """Options for the native functions, pickled (once) as Polars pickles a plugin's kwargs."""
    return kwargs if isinstance(kwargs, bytes) else pickle.dumps(kwargs, protocol=5)


def gpu_available() -> bool:
    """Whether an NVIDIA GPU, its driver and NVRTC can be used by this process."""
    return _native.gpu_available()


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
    by: ByArg = None,
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
        valid values); strictly increasing edges (numbers, or dates, datetimes, durations for
        temporal columns); numpy's estimators ``"auto"``, ``"fd"``, ``"doane"``, ``"scott"``,
        ``"stone"``, ``"rice"``, ``"sturges"``, ``"sqrt"``; ``"integer"``: one bin per integer
        (integer and temporal columns); or time bins of a temporal column: a Polars duration
        (``"1h"``, ``"90m"``, ``"1w"``, ``"1mo"``, ``"1q"``, ``"1y"``, a ``timedelta``,
        ``pl.duration(...)``), stepped in the column's time zone as ``pl.datetime_range``
        steps, from ``dt.truncate``'s boundary before the data; or equi-height bins,
        :func:`quantile_bins` (edges at numpy's quantiles of the valid values: the expression
        then takes its whole column, each group's in ``group_by().agg()``; not with ``by``).
    range
        ``(min, max)`` of the equal-width bins (numbers or temporal values; numpy float32
        scalars make float32 edges); time bins start at min, end at the first edge >= max.
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
        tests): ``"shared"``, ``"packed"``, ``"batched"``, ``"global"``, ``"private"``,
        ``"banked"`` or ``"radix"``. ``"spill"`` and ``"segmented"`` are deprecated (a
        ``DeprecationWarning``; the next release refuses them).
    by
        Group keys: a column (integers, strings, booleans, temporal, Categorical, Enum; not
        floats), a list of them, or a ``pl.struct`` of them: every group's histogram in one
        pass. All groups share one binning (with ``bins=int`` and no ``range``, the range of
        the whole column); rows are the groups (combinations of key values) in order of first
        appearance, a null a value of its own in each key, each group with all its bins. The
        Struct starts with one field per key, in order. ``density`` normalizes each group.
        Equals ``group_by(keys, maintain_order=True).agg(...)`` with the same binning.

    Returns
    -------
    pl.Expr
        A Struct column with one row per bin; in ``group_by().agg()`` a list of them per group.
        ``bin_start``/``bin_end`` are Float64, or the column's own dtype for Date, Datetime
        (its time zone kept) and Duration. ``count`` is UInt64, or Float64 with ``weights`` or
        ``density``.
    """
    __tracebackhide__ = True  # IPython shows the caller's frame
    if isinstance(bins, _quantile_bins.QuantileBins):
        return _quantile_expr(expr, bins, range, weights, density, closed, flow, device, kernel, by)
    plain = _plain_kwargs.plain_histogram_kwargs(bins, range, density, closed, flow, device, kernel)
    if plain is not None and by is None and weights is None:
        return _plugin("histogram", [_expr(expr)], plain)
    options = _args.histogram_kwargs(
        bins, range, density=density, closed=closed, flow=flow, device=device, kernel=kernel
    )
    kwargs: _options.Kwargs = options
    args = [_expr(expr)]
    if by is not None:
        keys, names = _args.by_keys(by)
        args.extend(keys)
        # Inside group_by().agg() and over() Polars hands the plugin the keys without their
        # names: the names the query gives them travel with the options.
        kwargs = {"options": options, "keys": names}
    if weights is not None:
        _args.refuse_weighted_estimator(bins)
        _args.refuse_weighted_kernel(options["kernel"])
        args.append(_expr(weights))
    return _plugin("histogram" if by is None else "histogram_by", args, kwargs)


def _quantile_expr(
    expr: IntoExpr,
    bins: _quantile_bins.QuantileBins,
    range: RangeArg,
    weights: IntoExpr | None,
    density: bool,
    closed: Closed,
    flow: bool,
    device: Device,
    kernel: Kernel,
    by: ByArg,
) -> pl.Expr:
    """`bins=quantile_bins(k)` in an expression: the edges need the whole column (each group's
    in `group_by().agg()`), so the query hands it over whole and the histogram of its edges is
    counted as `histogram` counts a Series."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    if by is not None:
        raise ValueError(
            "`by=` shares one binning between the groups, but `bins=quantile_bins(...)` takes "
            "each column's own quantiles: use `group_by(...).agg(...)` for per-group quantile "
            "bins, or explicit edges with `by=`"
        )
    _quantile_bins.refuse_range(range)
    # The options checked here, where they are written (any edges stand in for the data's).
    _args.histogram_kwargs(
        [0, 1], None, density=density, closed=closed, flow=flow, device=device, kernel=kernel
    )
    count = pl.Float64 if density or weights is not None else pl.UInt64
    dtype = pl.Struct({"bin_start": pl.Float64, "bin_end": pl.Float64, "count": count})

    def counted(columns: Sequence[pl.Series]) -> pl.Series:
        values = columns[0]
        edges = bins.edges(values)
        kwargs = _args.histogram_kwargs(
            edges,
            None,
            density=density,
            closed=closed,
            flow=flow,
            device=device,
            kernel=kernel,
            repeated_edges=True,
        )
        w = columns[1] if len(columns) > 1 else None
        return _host_histogram(values, w, kwargs, api="polars").alias(values.name)

    args = [_expr(expr)] if weights is None else [_expr(expr), _expr(weights)]
    # Named as Polars names it: after the first input, as the plugin's output is.
    return pl.map_batches(args, counted, return_dtype=dtype)


def _plugin(function_name: str, args: list[pl.Expr], kwargs: _options.Kwargs | bytes) -> pl.Expr:
    """A call of the plugin's `function_name` (`kwargs` pickled or not): one row per bin."""
    # Ctrl-C stops the query's long calls (chained again if a SIGINT handler, as Jupyter's
    # around each cell, displaced the action since).
    _native.watch_ctrl_c()
    # Polars' own registration, without its per-call search for the library (_polars_hist.py).
    return build_plugin_call(function_name, args, _pickled(kwargs), None)


@pl.api.register_expr_namespace("gpu_hist")
class GpuHistNamespace(RowBinningMethods):
    """Histograms of an expression: ``pl.col("x").gpu_hist.histogram(...)``, and Polars' row
    binning (``bin_intervals``, ``bin_quantiles``, ``bin_ranks``, ``cut``, ``qcut``)."""

    def __init__(self, expr: pl.Expr) -> None:
        self._expr = expr

    @_docstrings.like(histogram_expr, drop=("expr",))
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
        by: ByArg = None,
    ) -> pl.Expr:
        """The histogram of this expression: one row per bin, a Struct of ``bin_start``,
        ``bin_end`` and ``count``, with the counts of ``numpy.histogram`` (the function form,
        seen by type checkers, is :func:`histogram_expr`).

        Examples
        --------
        >>> df = pl.DataFrame({"x": [0.5, 1.5, 1.5, 2.5, 9.0]})
        >>> df.select(pl.col("x").gpu_hist.histogram(bins=3, range=(0, 3))).unnest("x").rows()
        [(0.0, 1.0, 1), (1.0, 2.0, 2), (2.0, 3.0, 1)]
        """
        __tracebackhide__ = True  # IPython shows the caller's frame
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

    @_docstrings.like("polars_gpu_hist._expr.polars_hist:hist_expr", drop=("expr",))
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
        plugin; ``device`` is the one extra argument (the function form is :func:`hist_expr`).

        Examples
        --------
        >>> df = pl.DataFrame({"x": [0.5, 1.5, 1.5, 2.5, 9.0]})
        >>> df.select(pl.col("x").gpu_hist.hist(bins=[0, 1, 2, 3]))["x"].to_list()
        [1, 2, 1]
        """
        return hist_expr(
            self._expr,
            bins,
            bin_count=bin_count,
            include_category=include_category,
            include_breakpoint=include_breakpoint,
            device=device,
        )


@pl.api.register_series_namespace("gpu_hist")
class GpuHistSeriesNamespace(RowBinningSeriesMethods):
    """Histograms of a Series: ``s.gpu_hist.histogram(...)``, as the expression namespace, and
    its row binning."""

    def __init__(self, series: pl.Series) -> None:
        self._series = series

    @_docstrings.like(
        histogram_expr,
        drop=("expr", "by"),
        replace={
            "weights": """weights
                A Series (or array) of the same length: ``count`` becomes the sum of the weights
                in each bin (Float64). A null in either the value or its weight skips the row."""
        },
        returns="""pl.Series
            A Struct Series named like this one, one row per bin: ``bin_start``, ``bin_end``
            (Float64, or the column's own dtype for Date, Datetime and Duration) and ``count``
            (UInt64, or Float64 with ``weights`` or ``density``).""",
    )
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
        """The histogram of this Series: one row per bin, as the expression's
        ``gpu_hist.histogram`` gives it, with the counts of ``numpy.histogram``.

        Examples
        --------
        >>> s = pl.Series("x", [0.5, 1.5, 1.5, 2.5, 9.0])
        >>> s.gpu_hist.histogram(bins=3, range=(0, 3)).struct.unnest().rows()
        [(0.0, 1.0, 1), (1.0, 2.0, 2), (2.0, 3.0, 1)]
        """
        __tracebackhide__ = True  # IPython shows the caller's frame
        s = self._series
        quantiles = isinstance(bins, _quantile_bins.QuantileBins)
        if quantiles:
            bins = _quantile_bins.resolve(bins, s, range)
        kwargs = _args.histogram_kwargs(
            bins,
            range,
            density=density,
            closed=closed,
            flow=flow,
            device=device,
            kernel=kernel,
            repeated_edges=quantiles,
        )
        if weights is not None:
            _args.refuse_weighted_estimator(bins)
            _args.refuse_weighted_kernel(kwargs["kernel"])
        return _host_histogram(s, weights, kwargs, api="polars").alias(s.name)

    @_docstrings.like(
        "polars_gpu_hist._expr.polars_hist:hist_expr",
        drop=("expr",),
        returns="""pl.DataFrame
            One row per bin: ``breakpoint`` (Float64, when asked: the default here),
            ``category`` (Categorical, when asked: the default here) and ``count`` (UInt32), as
            Polars' ``Series.hist``; a frame of ``count`` alone when neither is asked for.""",
    )
    def hist(
        self,
        bins: HistBins = None,
        *,
        bin_count: int | None = None,
        include_category: bool = True,
        include_breakpoint: bool = True,
        device: Device = "auto",
    ) -> pl.DataFrame:
        """A drop-in for Polars' ``Series.hist``: the same arguments, defaults (here
        ``include_category`` and ``include_breakpoint`` are True, as Polars has them for a
        Series) and DataFrame, computed in one call of the plugin.

        Examples
        --------
        >>> s = pl.Series("x", [0.5, 1.5, 1.5, 2.5, 9.0])
        >>> s.gpu_hist.hist(bins=[0, 1, 2, 3]).rows()
        [(1.0, '[0.0, 1.0]', 1), (2.0, '(1.0, 2.0]', 2), (3.0, '(2.0, 3.0]', 1)]
        """
        s = self._series
        call = hist_call(
            bins,
            bin_count=bin_count,
            include_category=include_category,
            include_breakpoint=include_breakpoint,
            device=device,
        )
        if call is None:
            # Polars' own hist takes the call (edges known only when the query runs).
            expr = hist_of_call(pl.col(s.name), call, bins, include_category, include_breakpoint)
            out = s.to_frame().select(expr).to_series()
        else:
            # The plugin's own function, without a query around it (at 10,000 rows the query
            # costs more than the counting); its errors are the expression's.
            pickled, dtype = call
            out = _native.hist_series(s, pickled)
            out = out if dtype is None else out.cast(dtype)
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
    __tracebackhide__ = True  # IPython shows the caller's frame
    iface = _cuda.cuda_array(data)
    quantiles = isinstance(bins, _quantile_bins.QuantileBins)
    if quantiles:
        bins = _quantile_bins.resolve(
            bins, _quantile_bins.host_copy(data) if iface else data, range
        )
    kwargs = _args.histogram_kwargs(
        bins,
        range,
        density=density,
        closed=closed,
        flow=flow,
        device=device,
        kernel=kernel,
        repeated_edges=quantiles,
    )
    if weights is not None:
        _args.refuse_weighted_estimator(bins)
        _args.refuse_weighted_kernel(kwargs["kernel"])
    if iface is not None:
        sample = _cuda.sample([_cuda.column(iface)], weights)
        _cuda.sync_stream(iface)
        options = _native.HistogramOptions(_options.pickled_histogram_options(kwargs))
        series, _report, _ms = _native.histogram_cuda(["x"], sample, options)
        return series.struct.unnest()
    return _host_histogram(data, weights, kwargs, api="polars").struct.unnest()


def _host_histogram(
    data: Any, weights: Any, kwargs: _options.HistogramKwargs, *, api: Api
) -> pl.Series:
    """The histogram of host data under the plugin's `kwargs`, as a Struct Series named ``x``:
    the plugin's own function called directly, without a query around it (at 1,000 rows the
    query costs more than the counting), raising the exception types of `api` (the
    caller's: Polars' for the package's functions, numpy's for the numpy drop-in)."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    _check_weights_shape(data, weights)
    values = _host_series(data, "x", "data")
    w = None if weights is None else _host_series(weights, "w", "weights")
    if w is not None and w.len() != values.len():
        raise ValueError(
            f"`weights` has {w.len()} values but the data has {values.len()}: give one weight "
            "per value"
        )
    return _native.histogram_series(values, _options.pickled_histogram_options(kwargs), w, api=api)


def _check_weights_shape(data: Any, weights: Any) -> None:
    """numpy's rule where either side has more than one dimension: the weights have the data's
    shape (each is flattened alike; weights of another shape would pair values wrongly)."""
    if weights is None or (isinstance(data, pl.Series) and isinstance(weights, pl.Series)):
        return
    shape, weights_shape = _shape(data), _shape(weights)
    if shape is None or weights_shape is None or (len(shape) <= 1 and len(weights_shape) <= 1):
        return
    if shape != weights_shape:
        raise ValueError(
            f"`weights` has shape {weights_shape} but the data has shape {shape}: give one "
            "weight per value, in the data's shape"
        )


def _shape(data: Any) -> tuple[int, ...] | None:
    """The shape of an array-like (a Series is one-dimensional); None where it has none."""
    if isinstance(data, pl.Series):
        return (data.len(),)
    shape = getattr(data, "shape", None)
    if shape is not None:
        return tuple(int(n) for n in shape)
    if not isinstance(data, (list, tuple)):
        return None
    # Nested lists, as numpy reads their shape from the first entry at each depth.
    dims = []
    while isinstance(data, (list, tuple)):
        dims.append(len(data))
        data = data[0] if data else None
    return tuple(dims)


def _host_series(data: Any, name: str, what: str = "column") -> pl.Series:
    """A Series of host data: Series as they are, arrays flattened as numpy flattens them;
    ``what`` names it in the error an Object Series raises."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    series = _host.series(data, name, what)
    _args.refuse_object(series, what)
    return series


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
        One entry for every dimension, or one per dimension: a number of equal bins, edges, a
        rule or time bins (see :func:`histogram_expr`; an estimator bins each column alone).
    range
        ``None``, or one ``(min, max)`` (or ``None``) per dimension for its equal bins.
    weights
        A column (name or expression) of the same length: ``count`` sums the weights (Float64).
    density
        numpy's density: ``count / (product of the cell's widths) / total``.
    closed, flow, device, kernel
        As for :func:`histogram_expr` (``flow`` adds flow bins to every axis).
    """
    __tracebackhide__ = True  # IPython shows the caller's frame
    if not columns:
        raise ValueError("histogramdd needs 2 to 8 columns, got none")
    if len(columns) > 1 and any(getattr(c, "ndim", 1) == 2 for c in columns):
        # numpy's `histogramdd(sample, bins)` spelled here: `bins` taken for a second column.
        raise ValueError(
            f"histogramdd got an (n, d) array among {len(columns)} positional arguments: an "
            "(n, d) array is the whole sample, and `bins`, `range` and the rest are keywords "
            "(`histogramdd(sample, bins=(64, 64))`)"
        )
    sample = _cuda.columns(columns, weights)
    if sample is not None:
        device_options = _args.dd_kwargs(
            sample.ndim,
            bins,
            range,
            density=density,
            closed=closed,
            flow=flow,
            device=device,
            kernel=kernel,
        )
        if weights is not None:
            _args.refuse_weighted_kernel(device_options["kernel"])
        native = _native.HistogramDdOptions(_options.pickled_histogramdd_options(device_options))
        names = [f"x{j}" for j in builtins.range(sample.ndim)]
        series, _report, _ms = _native.histogram_cuda(names, sample, native)
        return series.struct.unnest()
    if len(columns) == 1 and getattr(columns[0], "ndim", 1) == 2:
        matrix = columns[0]
        columns = tuple(matrix[:, j] for j in builtins.range(matrix.shape[1]))
    if not 2 <= len(columns) <= 8:
        raise ValueError(
            f"histogramdd takes 2 to 8 columns, got {len(columns)}"
            + (": use histogram for one column" if len(columns) == 1 else "")
        )
    options = _args.dd_kwargs(
        len(columns),
        bins,
        range,
        density=density,
        closed=closed,
        flow=flow,
        device=device,
        kernel=kernel,
    )
    if weights is not None:
        for rule in options["bins"]:
            _args.refuse_weighted_estimator(rule)
        _args.refuse_weighted_kernel(options["kernel"])
    if all(isinstance(c, (str, pl.Expr)) for c in columns):
        args = [_expr(c) for c in columns]
        if weights is not None:
            args.append(_expr(weights))
        return _plugin("histogramdd", args, {"options": options, "weighted": weights is not None})
    return _host_histogramdd(columns, weights, options, api="polars")


def _host_histogramdd(
    columns: Any, weights: Any, options: _options.HistogramDdKwargs, *, api: Api
) -> pl.DataFrame:
    """The n-D histogram of host Series or array-likes under the plugin's `options`, by the
    plugin's own function without a query around it, raising the exception types of `api`."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    series = [_host.series(c, f"x{i}", flatten=False) for i, c in enumerate(columns)]
    for c in series:
        _args.refuse_object(c)
    names = [c.name for c in series]
    for name in names:
        if names.count(name) > 1:
            raise ValueError(
                f"column {name!r} appears twice: give each dimension its own name (`.alias`)"
            )
    lengths = {c.len() for c in series}
    if len(lengths) > 1:
        raise ValueError(
            "the columns have different lengths ("
            + ", ".join(f"{c.name!r}: {c.len()}" for c in series)
            + "): give every dimension one value per row"
        )
    rows = series[0].len()
    w = None
    if weights is not None:
        w = _host_series(weights, "weights", "weights")
        if w.len() != rows:
            raise ValueError(
                f"`weights` has {w.len()} values but the columns have {rows} rows: give one "
                "weight per row"
            )
    out = _native.histogramdd_series(
        series, _options.pickled_histogramdd_options(options), w, api=api
    )
    return out.struct.unnest()


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
    __tracebackhide__ = True  # IPython shows the caller's frame
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
