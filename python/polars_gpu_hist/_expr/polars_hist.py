"""A drop-in for Polars' ``Expr.hist``: the same frame, computed in one call of the plugin.

``hist_expr`` reproduces ``pl.Expr.hist`` (polars 2.1): its arguments and defaults, its output (a
UInt32 ``count`` column named like the input, or a Struct of ``breakpoint``, ``category`` and
``count``), its bins (right-closed ``(a, b]``, the first bin ``[a, b]``; breaks from the data with
Polars' own min/max and arithmetic), its category labels and its errors. The plugin's ``hist``
(src/python/hist.rs) makes the whole frame; ``category`` crosses the plugin boundary as String and
is cast to Categorical here, once.
"""

from __future__ import annotations

import functools
import inspect
import operator
import pickle
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Literal

import polars as pl
from polars.plugins import register_plugin_function

from polars_gpu_hist import _native
from polars_gpu_hist._args.arguments import MAX_BINS
from polars_gpu_hist._native.options import PickledHistKwargs, pickled_hist_kwargs

if TYPE_CHECKING:
    from polars_gpu_hist._args.arguments import Device, HistBins

__all__ = ["hist_expr"]

# Columns of at least this many values are counted by the kernels (src/python/hist.rs); the
# tests lower it so that small inputs take the kernels' path too.
_KERNEL_FROM: int | None = None

try:  # Polars' own float display settings (pl.Config), where this Polars keeps them
    import polars._plr as _plr
except ImportError:  # pragma: no cover - older module name
    from polars import polars as _plr  # type: ignore[attr-defined,no-redef]


def _library() -> str:
    """The plugin's shared library as Polars names it (relative to the environment, so that a
    serialized query runs where the same environment is installed elsewhere), found once:
    Polars would search the folder on every call."""
    folder = _native.PLUGIN_PATH
    library = next(p for p in folder.iterdir() if p.suffix in (".so", ".pyd", ".dll"))
    try:
        return str(library.relative_to(Path(sys.prefix)))
    except ValueError:
        return str(library.resolve())


# How a plugin call's output relates to its input rows: "histogram" (one row per bin, its own
# length), "rows" (one row per input row, computed from the whole column or group, as `rank`),
# "elementwise" (each row from its own value: Polars streams it and runs it on any slice).
Shape = Literal["histogram", "rows", "elementwise"]

_SHAPES: dict[str, dict[str, bool]] = {
    "histogram": {"is_elementwise": False, "changes_length": True},
    "rows": {"is_elementwise": False, "changes_length": False},
    "elementwise": {"is_elementwise": True, "changes_length": False},
}


def _direct_builder() -> Callable[..., pl.Expr] | None:
    """The plugin call and its cast built through Polars' own bindings, as its
    ``register_plugin_function`` and ``Expr.cast`` build them, minus their per-call argument
    handling (a third of a small query's time on two cores), or None where this Polars'
    bindings are not the ones known here (the public functions are used then)."""
    try:
        from polars._utils.wrap import wrap_expr
        from polars.datatypes import parse_into_datatype_expr

        flags: dict[str, Any] = {
            "input_wildcard_expansion": False,
            "returns_scalar": False,
            "cast_to_supertype": False,
            "pass_name_to_apply": False,
        }
        if "is_deterministic" in inspect.signature(register_plugin_function).parameters:
            flags["is_deterministic"] = True
        library = _library()
        register = _plr.register_plugin_function
    except Exception:  # pragma: no cover - another Polars layout: the public path
        return None

    @functools.lru_cache(maxsize=16)
    def datatype(dtype: Any) -> Any:
        return parse_into_datatype_expr(dtype)._pydatatype_expr

    def build(
        function: str, args: list[pl.Expr], kwargs: bytes, dtype: Any, shape: Shape = "histogram"
    ) -> pl.Expr:
        pyexprs = [a._pyexpr for a in args]
        expr = register(
            plugin_path=library,
            function_name=function,
            args=pyexprs,
            kwargs=kwargs,
            **flags,
            **_SHAPES[shape],
        )
        if dtype is not None:
            expr = expr.cast(datatype(dtype), True, False)
        return wrap_expr(expr)

    return build


def _public_builder(
    function: str, args: list[pl.Expr], kwargs: bytes, dtype: Any, shape: Shape = "histogram"
) -> pl.Expr:
    out = register_plugin_function(
        plugin_path=_native.PLUGIN_PATH,
        function_name=function,
        args=args,
        kwargs=pickle.loads(kwargs),
        **_SHAPES[shape],
    )
    return out if dtype is None else out.cast(dtype)


# A plugin call: (function, args, pickled kwargs, dtype to cast to or None[, shape]) ->
# expression. Every expression of the package is built here (`polars_gpu_hist._functions._plugin`).
build_plugin_call: Callable[..., pl.Expr] = _direct_builder() or _public_builder


def _float_format() -> dict[str, Any]:
    """``pl.Config``'s float display as it is now: the plugin prints the labels with it."""
    precision = _plr.get_float_precision()
    thousands = _plr.get_thousands_separator() or ""
    decimal = _plr.get_decimal_separator() or "."
    return {
        "precision": precision,
        "full": _plr.get_float_fmt() == "full",
        "thousands": thousands,
        "decimal": decimal,
    }


def _flag(name: str, value: Any) -> bool:
    """A bool, as Polars takes it (a TypeError otherwise, as Polars raises)."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return bool(value)
    raise TypeError(
        f"`{name}` must be a bool (True or False), got {type(value).__name__} {value!r}"
    )


def hist_expr(
    expr: pl.Expr | str,
    bins: HistBins = None,
    *,
    bin_count: int | None = None,
    include_category: bool = False,
    include_breakpoint: bool = False,
    device: Device = "auto",
) -> pl.Expr:
    """Polars' ``Expr.hist`` with the counting done on the GPU or on all CPU cores.

    ``hist_expr(pl.col("x"), ...)`` gives the same frame as ``pl.col("x").hist(...)``: same
    schema, bins, labels and counts, in ``select``, ``with_columns`` (where Polars allows it:
    as many bins as rows), ``group_by().agg()``, ``over()``, lazy or eager, in-memory or
    streaming. The defaults are ``Expr.hist``'s.

    Parameters
    ----------
    expr
        A numeric column (a name or an expression). Other dtypes (Date, Datetime, Decimal,
        Boolean, String, ...) raise when the query runs, as in Polars (there an
        ``InvalidOperationError``; here a ``ComputeError`` that says the same).
    bins
        Bin edges (a list, Series or NumPy array), as Polars takes them: each bin is
        ``(a, b]``, the first ``[a, b]``, and values outside the edges are not counted. Edges
        that are not strictly increasing raise ``ComputeError``, null edges
        ``InvalidOperationError``, both here where the expression is written; fewer than two
        edges give no bins. An expression (edges known only when the query runs) or a
        non-numeric Series is handed to Polars' own ``hist``.
    bin_count
        The number of equal bins spanning the data (Polars' rule: ``[min, max]``; a single
        value ``v`` or equal values span ``[v - 0.5, v + 0.5]``, no values ``[0, 1]``).
        ``bins`` and ``bin_count`` together raise ``ComputeError``; neither means 10 bins.
        At most 2^28 (this package's limit; Polars itself aborts on an allocation that size):
        more raises ``ValueError``.
    include_category
        Include the ``category`` field: the bin as Polars labels it (``"(2.75, 4.5]"``), a
        Categorical, formatted under the ``pl.Config`` in force when the expression is built.
    include_breakpoint
        Include the ``breakpoint`` field: the bin's upper edge (Float64).
    device
        ``"auto"``, ``"cpu"`` or ``"gpu"``, as for ``gpu_hist.histogram``, for columns of
        4,096 values or more; smaller ones are counted on the calling thread whatever the
        device (a GPU launch would cost more than the counting).

    Returns
    -------
    pl.Expr
        One row per bin, named like the input: the ``count`` (Polars' index type, UInt32)
        alone, or a Struct of ``breakpoint`` (when asked), ``category`` (when asked) and
        ``count``; in ``group_by().agg()`` a list of them per group.

    Notes
    -----
    Small columns (fewer than 4,096 values) are counted on the calling thread by Polars' rule;
    larger ones by this package's kernels, which evaluate the same rule. Breaks that are not
    finite and strictly increasing (a NaN or infinite data range, NaN or infinite edges) are
    always counted by Polars' rule, literally. Int128, UInt128 and Float16 columns are binned
    as their float64 values, as Polars does.
    """
    __tracebackhide__ = True  # IPython shows the caller's frame
    column = pl.col(expr) if isinstance(expr, str) else expr
    call = hist_call(
        bins,
        bin_count=bin_count,
        include_category=include_category,
        include_breakpoint=include_breakpoint,
        device=device,
    )
    return hist_of_call(column, call, bins, include_category, include_breakpoint)


def hist_of_call(
    column: pl.Expr,
    call: tuple[PickledHistKwargs, Any] | None,
    bins: HistBins,
    include_category: bool,
    include_breakpoint: bool,
) -> pl.Expr:
    """The expression of a checked :func:`hist_call` (`bins` and the flags as the user gave
    them, for Polars' own ``hist`` where the call is None)."""
    if call is None:
        # Edges known only when the query runs, or of a type Polars converts itself.
        polars_bins: Any = bins
        return column.hist(
            bins=polars_bins,
            include_category=include_category,
            include_breakpoint=include_breakpoint,
        )
    if not isinstance(column, pl.Expr):
        raise TypeError(f"expected a column name or an expression, got {type(column).__name__}")
    pickled, dtype = call
    return build_plugin_call("hist", [column], pickled, dtype)


def hist_call(
    bins: HistBins,
    *,
    bin_count: int | None,
    include_category: bool,
    include_breakpoint: bool,
    device: Device,
) -> tuple[PickledHistKwargs, Any] | None:
    """The `hist` plugin's pickled kwargs and the dtype its result is cast to (None: no cast),
    from ``Expr.hist``'s arguments, checked where they are written; None where Polars' own
    ``hist`` takes the call (edges known only when the query runs, or of a type Polars
    converts itself)."""
    category = _flag("include_category", include_category)
    breakpoint = _flag("include_breakpoint", include_breakpoint)
    if device not in ("auto", "cpu", "gpu"):
        raise ValueError(f'`device` must be "auto", "cpu" or "gpu", got {device!r}')
    if bins is not None and bin_count is not None:
        raise pl.exceptions.ComputeError(
            "can only provide one of `bin_count` or `bins`: pass the edges as `bins` or the "
            "number of equal bins as `bin_count`"
        )
    edges = None
    if bins is None:
        count = _bin_count(bin_count)
    else:
        edges = _edges(bins)
        if edges is None:
            return None
        count = None
    # The labels' format follows pl.Config as it is now: part of the kwargs, and of their key.
    label_format = tuple(_float_format().items()) if category else None
    if bins is None:
        # No edges: the same bytes for the same count, flags and format.
        pickled = _plain_kwargs(count, breakpoint, str(device), _KERNEL_FROM, label_format)
    else:
        pickled = _kwargs(edges, count, breakpoint, device, _KERNEL_FROM, label_format)
    return pickled, _output_dtype(category, breakpoint)


LabelFormat = tuple[tuple[str, Any], ...]


def _kwargs(
    edges: list[float] | None,
    count: int | None,
    breakpoint: bool,
    device: str,
    kernel_from: int | None,
    label_format: LabelFormat | None,
) -> PickledHistKwargs:
    """The plugin's kwargs (src/python/hist.rs `HistKwargs`), pickled; category labels where
    `label_format` (`_float_format()`'s items) is given."""
    kwargs: dict[str, Any] = {
        "bins": edges,
        "bin_count": count,
        "include_category": label_format is not None,
        "include_breakpoint": breakpoint,
        "device": device,
    }
    if label_format is not None:
        kwargs["format"] = dict(label_format)
    if kernel_from is not None:
        kwargs["kernel_from"] = kernel_from
    return pickled_hist_kwargs(kwargs)


@functools.lru_cache(maxsize=64)
def _plain_kwargs(
    count: int | None,
    breakpoint: bool,
    device: str,
    kernel_from: int | None,
    label_format: LabelFormat | None,
) -> PickledHistKwargs:
    """`_kwargs` without edges, pickled once per combination (the arguments are checked values
    of exact types: an int or None, a bool, a device's name, and `pl.Config`'s float format as
    `_float_format` reads it: an int or None, bools and strings)."""
    return _kwargs(None, count, breakpoint, device, kernel_from, label_format)


@functools.lru_cache(maxsize=8)
def _output_dtype(category: bool, breakpoint: bool) -> Any:
    """The dtype Polars' ``hist`` returns where the plugin's differs (String categories, a
    64-bit index type), else None: no cast."""
    index = pl.get_index_type()
    if not category:
        if index == pl.UInt32:
            return None
        return pl.Struct({"breakpoint": pl.Float64, "count": index}) if breakpoint else index
    fields: dict[str, Any] = {}
    if breakpoint:
        fields["breakpoint"] = pl.Float64
    fields["category"] = pl.Categorical
    fields["count"] = index
    return pl.Struct(fields)


def _bin_count(bin_count: Any) -> int | None:
    """Polars' ``bin_count``: None means 10; it must convert to an unsigned integer, and this
    package takes at most 2^28 bins."""
    if bin_count is None:
        return None
    count = operator.index(bin_count)
    if count < 0:
        raise OverflowError("can't convert negative int to unsigned: `bin_count` must be >= 0")
    if count > MAX_BINS:
        raise ValueError(
            f"`bin_count` is {count}, more than the {MAX_BINS} (2^28) bins a histogram holds: "
            "ask for fewer bins"
        )
    return count


def _edges(bins: Any) -> list[float] | None:
    """The edges as floats, or None where Polars' own ``hist`` must take ``bins`` as it is (an
    expression, a scalar, a non-numeric Series). Raises Polars' errors for null or
    non-increasing edges (Polars' test: ``b - a <= 0``, so NaN and ``inf - inf`` pass)."""
    numpy_edges = type(bins).__module__ == "numpy" and getattr(bins, "ndim", None) == 1
    if not isinstance(bins, (list, pl.Series)) and not numpy_edges:
        return None
    # Refused before any edge is converted: 2^28 edges take gigabytes as Python floats.
    if len(bins) - 1 > MAX_BINS:
        raise ValueError(
            f"`bins` gives {len(bins) - 1} bins, more than the {MAX_BINS} (2^28) a histogram "
            "holds: give fewer edges"
        )
    if not isinstance(bins, pl.Series):
        bins = pl.Series(bins)  # as Polars does, with its errors for mixed lists
    if bins.null_count() > 0:
        raise pl.exceptions.InvalidOperationError(
            "nulls not supported in 'bins' argument: every edge must be a number"
        )
    if not (bins.dtype.is_integer() or bins.dtype.is_float()):
        return None
    edges: list[float] = bins.cast(pl.Float64).to_list()
    if any(b - a <= 0.0 for a, b in zip(edges, edges[1:])):
        raise pl.exceptions.ComputeError(
            "bins must increase monotonically: each edge must be greater than the one before"
        )
    return edges


def _bench_floor_expr(expr: pl.Expr, *, panic: bool = False) -> pl.Expr:
    """For benchmarks only (benches/swaps.py), not part of the API: a plugin call that does no
    work and returns one value, the floor under the cost of any plugin call; with ``panic`` it
    panics inside the plugin instead (tests of the boundary)."""
    kwargs = pickle.dumps({"noop": True, "panic": panic}, protocol=5)
    return build_plugin_call("bench_floor", [expr], kwargs, None)


def _bench_floor_struct_expr(expr: pl.Expr, bins: int, *, hist: bool = False) -> pl.Expr:
    """For benchmarks only, not part of the API: a plugin call that counts nothing and returns
    ``histogram``'s shape (a Struct of ``bin_start``, ``bin_end``, ``count``, ``bins`` rows),
    the floor under the cost of a call with that output; with ``hist``, the shape of ``hist``
    with both fields (``breakpoint``, ``category`` cast to Categorical as ``hist``'s is,
    ``count``)."""
    kwargs = pickle.dumps({"bins": bins, "hist": hist}, protocol=5)
    cast = _output_dtype(True, True) if hist else None
    return build_plugin_call("bench_floor_struct", [expr], kwargs, cast)


def as_bins(frame: pl.DataFrame) -> pl.DataFrame:
    """A frame of ``hist``'s rows (``breakpoint``, ``category``, ``count``, and any group keys)
    as the expression's bins: ``bin_start``, ``bin_end``, ``count``, for the plots. A bin ends
    at its breakpoint and starts at the one before; the first bin's start is read from its
    category label (``[a, b]``), so a frame needs both fields. Other frames pass unchanged."""
    if "breakpoint" not in frame.columns or "bin_start" in frame.columns:
        return frame
    if "category" not in frame.columns:
        raise ValueError(
            "this hist frame has breakpoints but no category: its first bin's start is "
            "unknown; make it with include_category=True (and include_breakpoint=True)"
        )
    keys = [c for c in frame.columns if c not in ("breakpoint", "category", "count")]
    end = pl.col("breakpoint").cast(pl.Float64)
    # The first label's start, as Polars printed it (pl.Config's separators undone; with a
    # lowered float precision, as rounded as the label).
    fmt = _float_format()
    first = (
        pl.col("category")
        .first()
        .cast(pl.String)
        .str.extract(r"^[\[(]\s*(.+?),\s", 1)  # a thousands separator has no space after it
    )
    if fmt["thousands"]:
        first = first.str.replace_all(fmt["thousands"], "", literal=True)
    if fmt["decimal"] != ".":
        first = first.str.replace_all(fmt["decimal"], ".", literal=True)
    start = end.shift(1).fill_null(first.cast(pl.Float64, strict=False))
    if keys:
        start = start.over(keys)
    return frame.select(*keys, start.alias("bin_start"), end.alias("bin_end"), "count")
