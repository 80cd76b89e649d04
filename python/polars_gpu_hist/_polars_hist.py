"""A drop-in for Polars' ``Expr.hist``: the same frame, counted by this package's kernels.

``hist_expr`` reproduces ``pl.Expr.hist`` (polars 2.1): its arguments, its output (a UInt32
``count`` column named like the input, or a Struct of ``breakpoint``, ``category`` and
``count``), its bins (right-closed ``(a, b]``, the first bin ``[a, b]``; edges from the data
with Polars' own arithmetic), its category labels and its errors. The counts come from
``histogram_expr(..., closed="right")``, which bins exactly as Polars does; the labels come
from Polars' own ``hist`` of no rows over the same edges; the rest is Polars expressions, so
the result is lazy-friendly (``select``, ``with_columns``, ``group_by().agg()``, streaming).
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any, Callable

import polars as pl

if TYPE_CHECKING:
    from polars_gpu_hist import Device, HistBins

__all__ = ["hist_expr"]

# Polars' default bin count when neither `bins` nor `bin_count` is given.
_DEFAULT_BIN_COUNT = 10
# The plugin's bin limit (src/bins.rs MAX_BINS); beyond it Polars' own `hist` does the work.
_MAX_BINS = 1 << 28
# Bytes a bin takes at the peak of the frame Polars builds from the plugin's rows (edges,
# labels, the copies `list.eval` makes): about 200 measured at 2^24 bins, with room to spare.
# Polars' allocations abort the process when they fail, so the room is checked first.
_BYTES_PER_BIN = 256
_CHECK_ROOM_FROM = 1 << 20
_NAN = float("nan")


def hist_expr(
    expr: pl.Expr | str,
    bins: HistBins = None,
    *,
    bin_count: int | None = None,
    include_category: bool = True,
    include_breakpoint: bool = True,
    device: Device = "auto",
) -> pl.Expr:
    """Polars' ``Expr.hist`` with the counting done on the GPU or on all CPU cores.

    ``hist_expr(pl.col("x"), ...)`` gives the same frame as ``pl.col("x").hist(...)``: same
    schema, bins, labels and counts, in ``select``, ``with_columns`` (where Polars allows it:
    as many bins as rows), ``group_by().agg()``, lazy or eager, in-memory or streaming.

    Parameters
    ----------
    expr
        A numeric column (a name or an expression). As in Polars, other dtypes (Date,
        Datetime, Duration, Decimal, Boolean, String, ...) raise ``InvalidOperationError``
        when the query runs.
    bins
        Bin edges (a list, Series, NumPy array or expression), as Polars takes them: each bin
        is ``(a, b]``, the first ``[a, b]``, and values outside the edges are not counted.
        Edges that are not strictly increasing raise ``ComputeError``, null edges
        ``InvalidOperationError``; fewer than two edges give no bins.
    bin_count
        The number of equal bins spanning the data (Polars' rule: ``[min, max]``; a single
        value ``v`` or equal values span ``[v - 0.5, v + 0.5]``, no values ``[0, 1]``).
        ``bins`` and ``bin_count`` together raise ``ComputeError``; neither means 10 bins.
    include_category
        Include the ``category`` field: the bin as Polars labels it (``"(2.75, 4.5]"``), a
        Categorical, formatted by Polars itself under the current ``pl.Config``. Both fields
        are included by default, as ``Series.hist`` does; Polars' ``Expr.hist`` leaves them
        out by default, so pass both as ``False`` for its bare ``count`` column.
    include_breakpoint
        Include the ``breakpoint`` field: the bin's upper edge (Float64).
    device
        ``"auto"``, ``"cpu"`` or ``"gpu"``, as for ``gpu_hist.histogram``.

    Returns
    -------
    pl.Expr
        One row per bin, named like the input: the ``count`` (UInt32, Polars' index type)
        alone, or a Struct of ``breakpoint`` (when asked), ``category`` (when asked) and
        ``count``; in ``group_by().agg()`` a list of them per group.

    Notes
    -----
    Where this package's kernels cannot follow Polars, Polars' own ``hist`` runs instead, so
    the result is still Polars' (at Polars' speed):

    - ``bins`` as an expression (its edges are known only when the query runs), or with a
      NaN or infinite edge, fewer than two edges or more than 2^28 bins; ``bin_count=0`` or
      above 2^28 (the plugin's limit);
    - equal bins of a float column holding NaN or ±inf, or whose ``max - min`` overflows. The
      plugin refuses a data range with ±inf, where Polars makes NaN or infinite edges and
      counts (almost) nothing; it gives an all-NaN column numpy's edges over [0, 1] where
      Polars' are NaN; and it keeps finite edges where Polars' width overflows. The column's
      sum and ``max - min`` tell: reductions taken twice because Polars cannot share them
      between the two branches without copying the column.

    Int128, UInt128 and Float16 columns are cast to Float64 for the plugin (Polars bins every
    value as its float64 too).

    In ``group_by().agg()`` each group is a call of the plugin plus the labels: with many
    small groups Polars' own ``hist`` is faster (1,000 groups of 2,000 rows: 0.25 s against
    0.6 s on the 2-core development machine); ``gpu_hist.histogram(by=..., closed="right")``
    counts every group in one pass, over bins shared by all groups.

    One known difference: when the data's maximum is zero and the column holds both ``0.0``
    and ``-0.0``, the sign Polars prints for that edge in ``category`` depends on the order
    its ``max`` kernel meets them, and this may print the other (``"(-0.5, 0.0]"`` for
    ``"(-0.5, -0.0]"``). Counts and breakpoint values are the same.
    """
    column = pl.col(expr) if isinstance(expr, str) else expr
    flags = {
        "include_category": bool(include_category),
        "include_breakpoint": bool(include_breakpoint),
    }

    def polars_hist(x: pl.Expr) -> pl.Expr:
        return x.hist(bins=bins, bin_count=bin_count, **flags)

    if device not in ("auto", "cpu", "gpu"):
        raise ValueError(f'`device` must be "auto", "cpu" or "gpu", got {device!r}')
    if bins is not None and bin_count is not None:
        raise pl.exceptions.ComputeError(
            "can only provide one of `bin_count` or `bins`: pass the edges as `bins` or the "
            "number of equal bins as `bin_count`"
        )
    if bins is None:
        count = _bin_count(bin_count)
        if count == 0 or count > _MAX_BINS:
            return polars_hist(column)
        edges = None
    else:
        edges = _edges(bins)
        if edges is None or len(edges) - 1 > _MAX_BINS:
            return polars_hist(column)
        count = len(edges) - 1

    if count >= _CHECK_ROOM_FROM:
        from polars_gpu_hist import _internal

        # MemoryError here, where the call is written, rather than an abort in Polars.
        _internal.ensure_room(count * _BYTES_PER_BIN)

    def build(x: pl.Expr, dtype: pl.DataType) -> pl.Expr:
        if not (dtype.is_integer() or dtype.is_float()):
            # Polars raises its own InvalidOperationError for this dtype when the query runs.
            return polars_hist(x)
        name = x.meta.output_name(raise_if_undetermined=False)
        values = x
        if dtype in (pl.Int128, pl.UInt128, pl.Float16):
            # The plugin does not read these; Polars bins every value as its float64 anyway.
            values = x.cast(pl.Float64)
        if edges is None and dtype.is_float():
            out = _uniform_float(values, count, flags, device)
        else:
            hist = _histogram(values, count if edges is None else edges, device)
            out = _assemble(hist, {}, {}, flags, count)
        return out.name.keep() if name is None else out.alias(name)

    return column.pipe_with_dtype(build)


def _bin_count(bin_count: Any) -> int:
    """Polars' ``bin_count``: None means 10; it must convert to an unsigned integer."""
    if bin_count is None:
        return _DEFAULT_BIN_COUNT
    count = operator.index(bin_count)
    if count < 0:
        raise OverflowError("can't convert negative int to unsigned: `bin_count` must be >= 0")
    return count


def _edges(bins: Any) -> list[float] | None:
    """Finite, strictly increasing float edges (two or more), or None where Polars' own
    ``hist`` must take ``bins`` as it is (an expression, NaN or infinite edges, fewer than two
    edges, a non-numeric Series). Raises Polars' errors for null or non-increasing edges."""
    if isinstance(bins, list):
        bins = pl.Series(bins)  # as Polars does, with its errors for mixed lists
    elif type(bins).__module__ == "numpy" and getattr(bins, "ndim", None) == 1:
        bins = pl.Series(bins)
    if not isinstance(bins, pl.Series):
        return None
    if bins.null_count() > 0:
        raise pl.exceptions.InvalidOperationError(
            "nulls not supported in 'bins' argument: every edge must be a number"
        )
    if not bins.dtype.is_numeric():
        return None
    edges = bins.cast(pl.Float64).to_list()
    if len(edges) < 2 or not all(e - e == 0.0 for e in edges):
        return None
    if any(b - a <= 0.0 for a, b in zip(edges, edges[1:])):
        raise pl.exceptions.ComputeError(
            "bins must increase monotonically: each edge must be greater than the one before"
        )
    return edges


def _histogram(values: pl.Expr, bins: Any, device: str, **kwargs: Any) -> pl.Expr:
    from polars_gpu_hist import histogram_expr

    return histogram_expr(values, bins, closed="right", device=device, **kwargs)


Get = Callable[[str], pl.Expr]


def _let(
    columns: dict[str, pl.Expr], scalars: dict[str, pl.Expr], body: Callable[[Get], pl.Expr]
) -> pl.Expr:
    """``body`` over ``columns`` and ``scalars``, each computed once.

    Polars shares a common subexpression only in lazy queries (and not across these), and
    ``struct.with_fields`` takes only length-preserving expressions; every other reference to
    an expression computes it again (the plugin, for one). So the values are packed into one
    list element and ``body`` runs inside ``list.eval``, where ``get(name)`` reads a value
    instead of computing it; its rows are the expression's rows. For short columns (bins):
    ``list.eval`` copies what it reads.
    """
    packed = pl.struct(
        *(e.implode().alias(k) for k, e in columns.items()),
        *(e.alias(k) for k, e in scalars.items()),
    )

    def get(name: str) -> pl.Expr:
        value = pl.element().struct.field(name)
        return value.explode() if name in columns else value.first()

    return packed.implode().list.eval(body(get)).explode()


def _plugin_edges(hist: pl.Expr) -> pl.Expr:
    """The n + 1 edges of the plugin's rows."""
    return hist.struct.field("bin_start").first().append(hist.struct.field("bin_end"))


def _head_if(column: pl.Expr, condition: pl.Expr) -> pl.Expr:
    """``column`` where the scalar ``condition`` holds, else no rows: a slice, not a copy."""
    return column.head(pl.when(condition).then(column.len()).otherwise(0))


def _uniform_float(values: pl.Expr, count: int, flags: dict[str, bool], device: str) -> pl.Expr:
    """Equal bins of a float column: the plugin's where its sum is finite, else Polars' own
    (see :func:`hist_expr`'s notes). The branch not taken gets no rows, which costs nothing."""
    # A finite sum rules out NaN and ±inf; a finite max - min an overflowing width, where the
    # plugin keeps finite edges and counts every value but Polars' edges overflow.
    odd = ~values.sum().is_finite() | ~(values.max() - values.min()).is_finite()
    plugin = _histogram(_head_if(values, ~odd), count, device)
    polars = _head_if(values, odd).hist(bin_count=count, **flags)
    return _assemble(plugin, {"polars": polars}, {"valid": values.count()}, flags, count)


def _assemble(
    hist: pl.Expr,
    others: dict[str, pl.Expr],
    scalars: dict[str, pl.Expr],
    flags: dict[str, bool],
    n_bins: int,
) -> pl.Expr:
    """Polars' output from the plugin's rows; with ``others["polars"]`` (Polars' own result
    for a column the plugin got no rows of), that result where the plugin got none."""
    fallback = "polars" in others

    def body(get: Get) -> pl.Expr:
        rows = get("hist")
        edges = _plugin_edges(rows).cast(pl.Float64)
        count = rows.struct.field("count")
        columns = {"edges": edges, "count": count.cast(pl.get_index_type())}
        values = {}
        if fallback:
            # The plugin counts every valid value of a column it gets: no counts from valid
            # values means the column went to Polars' own `hist`.
            columns["polars"] = get("polars")
            values["skipped"] = (get("valid") > 0) & (count.sum() == 0)
        if not flags["include_category"]:
            return output({**columns, **values}.__getitem__)
        # The labels read the edges several times: computed once, read in `output`.
        values["accepted"] = ~(edges.diff() <= 0.0).any()
        return _let(columns, values, output)

    def output(get: Get) -> pl.Expr:
        edges, count = get("edges"), get("count").alias("count")
        fields = []
        if flags["include_breakpoint"]:
            fields.append(edges.slice(1).alias("breakpoint"))
        if flags["include_category"]:
            fields.append(_labels(edges, get("accepted"), n_bins).alias("category"))
        out = pl.struct(*fields, count) if fields else count
        if fallback:
            out = pl.when(get("skipped")).then(get("polars")).otherwise(out)
        return out

    return _let({"hist": hist, **others}, scalars, body)


def _polars_labels(edges: pl.Expr) -> pl.Expr:
    """Polars' own labels for ``edges`` (of an empty column: no counting)."""
    return edges.head(0).hist(bins=edges, include_category=True).struct.field("category")


def _labels(edges: pl.Expr, accepted: pl.Expr, n_bins: int) -> pl.Expr:
    """``[e0, e1]``, ``(e1, e2]``, ... as Polars formats them (its float display, under the
    current ``pl.Config``), taken from Polars' ``hist`` itself.

    Polars refuses explicit edges where one is not above the one before (``accepted`` is
    false), which equal bins can produce (ties from a tiny width, an overflowing one). Then
    each edge is printed beside a NaN (``[e0, NaN, e1, NaN, ...]`` passes Polars' check) and
    the halves are joined. Only one of the two ways gets edges; the other makes no labels.
    """
    direct = _polars_labels(_head_if(edges, accepted))
    beside_nan = pl.concat_list(_head_if(edges, ~accepted), pl.lit(_NAN)).explode()
    pieces = _polars_labels(beside_nan).cast(pl.String)
    lower = pieces.gather_every(2).head(n_bins).str.strip_suffix(", NaN]")
    upper = pieces.gather_every(2, offset=1).str.strip_prefix("(NaN")
    return direct.append((lower + upper).cast(pl.Categorical))
