"""Statistics of a histogram result column, as expressions: the ``quantile``, ``mean``, ``std``
and ``sum`` that :class:`polars_gpu_hist.Histogram` gives, from the Struct column of
``gpu_hist.histogram`` (fields ``bin_start``, ``bin_end``, ``count``).

Each function takes that column (a name or an expression) and returns a one-value expression::

    import polars as pl
    import polars_gpu_hist.stats as hs

    res = df.select(pl.col("delay").gpu_hist.histogram(bins=100))
    res.select(hs.quantile("delay", 0.5), hs.mean("delay").alias("mean"))

They work on the rows of one histogram: for a result made with ``by=``, group the rows by the
key (``res.group_by(pl.col("delay").struct.field("origin")).agg(hs.mean("delay"))``); for
``group_by().agg()``'s lists, ``explode`` them first. The method is the one the module
``polars_gpu_hist._stats`` describes and ``Histogram.quantile`` documents: the values in each
bin spread evenly over it, the piecewise-linear CDF inverted for ``quantile``, the bin centres
weighted by the counts for ``mean`` and ``std``. An empty histogram gives NaN (no warning: an
expression cannot give one). A result with ``flow=True`` needs ``flow=True`` here too, which
leaves its first and last rows (the under- and overflow) out. Temporal edges give a
``quantile`` and ``mean`` of the edges' dtype (time zone kept) and a ``std`` as a Duration
(Date edges: whole days), an empty one null. For an n-D result (``histogramdd``), Polars
raises that it has no field ``bin_start``: use ``Histogram(...).quantile(q, axis=i)``.
"""

from __future__ import annotations

from typing import Union

import polars as pl

__all__ = ["mean", "quantile", "std", "sum"]

IntoExpr = Union[pl.Expr, str]


def quantile(hist: IntoExpr, q: float, *, flow: bool = False) -> pl.Expr:
    """The ``q``-quantile (``q`` in [0, 1]) of a histogram result column, as
    ``Histogram.quantile``: linear within the bin where the cumulative counts pass ``q``.

    Parameters
    ----------
    hist
        The Struct column of ``gpu_hist.histogram`` (a name or an expression).
    q
        A number in [0, 1]: 0.5 is the median.
    flow
        ``True`` for a result made with ``flow=True``: its first and last rows are left out.

    Returns
    -------
    pl.Expr
        One value: Float64, or the edges' dtype for temporal edges; NaN for an empty histogram
        (null for temporal edges).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_gpu_hist.stats as hs
    >>> df = pl.DataFrame({"x": [0.5, 1.5, 1.6, 3.5]})
    >>> res = df.select(pl.col("x").gpu_hist.histogram(4, range=(0, 4)))
    >>> res.select(hs.quantile("x", 0.5)).item()
    1.5
    """
    # Histogram.quantile's check of `q`, which needs numpy: imported here, not with the module.
    from polars_gpu_hist._histogram.statistics import TIE_SLACK, check_q

    qs = check_q(q)
    if qs.ndim != 0:
        raise TypeError(f"`q` must be one number here (call quantile once per q), got {q!r}")
    b = _Bins(hist, flow)
    total = b.count.sum()
    cumulative = b.count.cum_sum()
    # A target just short of a cumulative count is that count, as in Histogram.quantile
    # (`_stats.TIE_SLACK`).
    rounded = pl.lit(float(qs)) * total
    close = (cumulative >= rounded) & (cumulative - rounded <= total * TIE_SLACK)
    target = cumulative.filter(close).first().fill_null(rounded)
    before = cumulative - b.count
    # The first bin whose cumulative counts pass the target; q = 1 (or rounding past the total)
    # ends at the last non-empty bin's end, and an empty histogram has no quantile.
    inside = (before <= target) & (cumulative > target)
    # Clipped: sums of weights round, and a point must stay on its bin.
    fraction = ((target - before) / b.count).clip(0.0, 1.0)
    point = b.start + fraction * (b.end - b.start)
    value = (
        point.filter(inside)
        .first()
        .fill_null(b.end.filter(b.count > 0).last())
        .fill_null(float("nan"))
    )
    return b.as_edges(value).alias(b.name)


def mean(hist: IntoExpr, *, flow: bool = False) -> pl.Expr:
    """The mean of the bin centres weighted by the counts, as ``Histogram.mean``; arguments and
    result as :func:`quantile`.

    >>> df.select(pl.col("x").gpu_hist.histogram(4, range=(0, 4))).select(hs.mean("x")).item()
    1.75
    """
    b = _Bins(hist, flow)
    return b.as_edges(b.mean()).alias(b.name)


def std(hist: IntoExpr, *, ddof: int = 0, flow: bool = False) -> pl.Expr:
    """The standard deviation of the bin centres weighted by the counts, dividing by
    ``total - ddof`` (numpy's default ``ddof=0``), as ``Histogram.std``; Float64, or a Duration
    for temporal edges; NaN where ``total <= ddof``.

    >>> df.select(pl.col("x").gpu_hist.histogram(4, range=(0, 4))).select(hs.std("x")).item()
    1.0897247358851685
    """
    if isinstance(ddof, bool) or not isinstance(ddof, int) or ddof < 0:
        raise ValueError(f"`ddof` must be an int >= 0, got {ddof!r}")
    b = _Bins(hist, flow)
    spread = (b.count * (b.centre - b.mean()) ** 2).sum()
    denominator = b.count.sum() - ddof
    value = pl.when(denominator > 0).then((spread / denominator).sqrt()).otherwise(float("nan"))
    return b.as_span(value).alias(b.name)


def sum(hist: IntoExpr, *, flow: bool = False) -> pl.Expr:
    """The total in the bins, as ``Histogram.sum()``: the sum of ``count`` (UInt64 rows, or
    Float64 sums of weights), a result's flow rows left out with ``flow=True`` as for
    :func:`quantile` (``pl.col(name).struct.field("count").sum()`` counts them in, as
    ``Histogram.sum(flow=True)`` does).

    >>> df.select(pl.col("x").gpu_hist.histogram(4, range=(0, 4))).select(hs.sum("x")).item()
    4
    """
    b = _Bins(hist, flow)
    return b.keep(b.struct.struct.field("count")).sum().alias(b.name)


def _struct(hist: IntoExpr) -> pl.Expr:
    if isinstance(hist, str):
        return pl.col(hist)
    if not isinstance(hist, pl.Expr):
        raise TypeError(
            "expected the histogram result column (a name or an expression of the Struct that "
            f"gpu_hist.histogram returns), got {type(hist).__name__}"
        )
    return hist


class _Bins:
    """The bins of a histogram result column as Float64 expressions (temporal edges as their
    physical numbers), the flow rows left out where asked."""

    def __init__(self, hist: IntoExpr, flow: bool) -> None:
        if not isinstance(flow, bool):
            raise TypeError(f"`flow` must be True or False, got {flow!r}")
        self.struct = struct = _struct(hist)
        self.flow = flow
        self.name = struct.meta.output_name(raise_if_undetermined=False) or "value"
        self.start_field = struct.struct.field("bin_start")

        def number(field: str) -> pl.Expr:
            return self.keep(struct.struct.field(field).to_physical().cast(pl.Float64))

        self.start, self.end, self.count = number("bin_start"), number("bin_end"), number("count")
        # Halves first: the midpoint of two large edges stays finite.
        self.centre = self.start / 2 + self.end / 2

    def keep(self, e: pl.Expr) -> pl.Expr:
        """``e`` without the flow rows (the first and the last) where the result has them."""
        if not self.flow:
            return e
        row = pl.int_range(pl.len())
        return e.filter((row > 0) & (row < pl.len() - 1))

    def mean(self) -> pl.Expr:
        return (self.count * self.centre).sum() / self.count.sum()

    def as_edges(self, value: pl.Expr) -> pl.Expr:
        """A position as the edges' dtype (Float64 stays; temporal edges' physical numbers
        become their dtype again, time zone kept)."""
        return value.cast(pl.dtype_of(self.start_field), strict=False)  # NaN: null for dates

    def as_span(self, value: pl.Expr) -> pl.Expr:
        """A width as the difference of two positions: Float64 for numbers, a Duration for
        temporal edges."""
        return self.as_edges(value) - self.as_edges(pl.lit(0.0))
