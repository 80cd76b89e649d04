"""The lazy namespace's results: ``lf.gpu_hist.histogram(...)`` and ``lf.gpu_hist.hist(...)``
(and ``df.gpu_hist``) run the frame's query in Polars' streaming engine through the scan's
pipeline, in bounded memory, and give the frame the expression would give (the same schema,
counts and edges): ``lf.select(pl.col(c).gpu_hist.histogram(...)).collect()``, which reads the
whole column into memory first."""

from __future__ import annotations

from typing import Any, cast

import polars as pl

from polars_gpu_hist._scan import passes
from polars_gpu_hist._scan import plan as _plan
from polars_gpu_hist._scan import scan as _scan
from polars_gpu_hist._scan.source import open_dataset

# Integers beyond this magnitude are binned by Polars' `hist` as float64 (rounded): the scan
# reads such a column into memory and lets the expression count it.
_EXACT_FLOAT_INTEGER = 1 << 53


def histogram(
    frame: pl.LazyFrame | pl.DataFrame,
    column: str | list[str],
    bins: Any,
    range: Any,
    weights: str | None,
    density: bool,
    closed: Any,
    flow: bool,
    device: Any,
    by: Any,
    chunk_size: int,
) -> pl.DataFrame:
    """The expression's frame of ``column`` (several: ``histogramdd``'s) over the frame."""
    r = _plan.request(
        column, bins, range, weights, closed, device, chunk_size, by,
        flow=flow, density=density, data_range_by_default=True,
    )  # fmt: skip
    columns = r.columns
    _expression(columns, bins, range, weights, density, closed, flow, device, by)  # checks
    if density and flow:
        raise ValueError("`density` cannot be combined with `flow`: flow bins have no width")
    plan = _scan.planned(open_dataset(frame), r)
    if plan.fill == "memory":
        values = _scan.memory_columns(plan, False)
        expr = _expression(columns, bins, range, weights, density, closed, flow, device, by)
        return values.select(expr)
    if plan.fill == "frames":
        return _scan.frames(plan, False)
    filled = _scan.fill(plan, False, nan_weight=flow)
    return _frame_of(filled, r, density, flow)


def _expression(
    columns: list[str], bins: Any, range: Any, weights: Any, density: bool, closed: Any,
    flow: bool, device: Any, by: Any,
) -> pl.Expr:  # fmt: skip
    """The expression the namespace stands for (built, so its arguments are checked)."""
    from polars_gpu_hist._expr.functions import histogram_expr, histogramdd

    if len(columns) == 1:
        return histogram_expr(
            columns[0], bins, range=range, weights=weights, density=density, closed=closed,
            flow=flow, device=device, by=by,
        )  # fmt: skip
    expr = histogramdd(
        *columns, bins=bins, range=range, weights=weights, density=density, closed=closed,
        flow=flow, device=device,
    )  # fmt: skip
    return cast(pl.Expr, expr)


def _frame_of(filled: _scan.Filled, r: _plan.Request, density: bool, flow: bool) -> pl.DataFrame:
    """The expression's frame from a filled histogram: its Struct column (with the flow rows
    of one axis where asked: below the first edge, above the last with NaN)."""
    h = filled.histogram
    name = r.columns[0]
    struct = h._core.to_series(name, r.columns, density)
    if not flow:
        return struct.to_frame()
    rows = struct.struct.unnest()
    start, end, count = (
        rows.get_column("bin_start"),
        rows.get_column("bin_end"),
        rows.get_column("count"),
    )
    temporal = start.dtype.is_temporal()
    below = pl.Series([None if temporal else float("-inf")], dtype=start.dtype)
    above = pl.Series([None if temporal else float("inf")], dtype=start.dtype)
    f = h.flow
    if h.weighted:
        under_w, over_w = h._core.flow()[5:7]
        outside = [under_w, over_w + filled.nan_weight]
    else:
        outside = [f.underflow, f.overflow + f.nan]
    out = pl.DataFrame(
        {
            "bin_start": pl.concat([below, start, end.tail(1)]),
            "bin_end": pl.concat([start.head(1), end, above]),
            "count": pl.concat(
                [
                    pl.Series([outside[0]], dtype=count.dtype),
                    count,
                    pl.Series([outside[1]], dtype=count.dtype),
                ]
            ),
        }
    )
    return out.select(pl.struct(pl.all()).alias(name))


def hist(
    frame: pl.LazyFrame | pl.DataFrame,
    column: str,
    bins: Any,
    bin_count: int | None,
    include_category: bool,
    include_breakpoint: bool,
    device: Any,
    chunk_size: int,
) -> pl.DataFrame:
    """Polars' ``hist`` of ``column`` over the frame, streamed: the breaks Polars' ``hist``
    makes (from the data's min and max for ``bin_count``, in a first pass), the values counted
    into them (right-closed, the first bin closed), the frame made by the expression itself."""
    from polars_gpu_hist._expr.polars_hist import hist_expr

    if not isinstance(column, str):
        raise TypeError(f"`column` must be a column name (str), got {column!r}")

    def expr(b: Any, n: int | None) -> pl.Expr:
        return hist_expr(
            pl.col(column), b, bin_count=n, include_category=include_category,
            include_breakpoint=include_breakpoint, device=device,
        )  # fmt: skip

    dataset = open_dataset(frame)
    lf = dataset.lazy()
    schema = lf.collect_schema()
    if column not in schema:
        raise pl.exceptions.ColumnNotFoundError(
            f"no column {column!r} to histogram; columns: {', '.join(schema.names())}"
        )
    dtype = schema[column]
    empty = pl.DataFrame({column: pl.Series([], dtype=dtype)})
    empty.select(expr(bins, bin_count))  # the expression's own errors, before a row is read
    breaks, sample = _hist_breaks(lf, column, dtype, bins, bin_count)
    if breaks is None:
        # Breaks the kernels cannot count into alike (NaN, too wide for float64): in memory.
        whole = lf.select(column).collect(engine="streaming")
        return whole.select(expr(bins, bin_count))
    layout = sample.select(expr(bins, bin_count))
    if len(breaks) < 2:
        return layout
    r = _plan.request(column, breaks, None, None, "right", device, chunk_size)
    plan = _scan.planned(dataset, r)
    counts = _scan.fill(plan, False).histogram.counts
    counted: pl.Series = pl.Series("count", counts, dtype=pl.UInt64).cast(pl.UInt32)
    out = layout.get_column(column)
    if out.dtype == pl.Struct:
        fields = out.struct.unnest().with_columns(counted)
        return fields.select(pl.struct(pl.all()).alias(column))
    return counted.alias(column).to_frame()


def _hist_breaks(
    lf: pl.LazyFrame, column: str, dtype: pl.DataType, bins: Any, bin_count: int | None
) -> tuple[list[float] | None, pl.DataFrame]:
    """Polars' breaks for the whole column and a small frame whose ``hist`` has the same
    breaks and labels (None where the scan should not count: see :func:`hist`)."""
    if bins is not None:
        if isinstance(bins, pl.Expr):
            return None, pl.DataFrame()
        edges = [float(b) for b in bins]
        if not _countable(edges):
            return None, pl.DataFrame()
        return edges, pl.DataFrame({column: pl.Series([], dtype=dtype)})
    x = pl.col(column)
    row = lf.select(
        x.min().alias("lo"), x.max().alias("hi"), passes.rows_where(x.is_not_null()).alias("n")
    )
    lo, hi, valid = row.collect(engine="streaming").row(0)
    if dtype.is_integer() and valid and max(abs(int(lo)), abs(int(hi))) > _EXACT_FLOAT_INTEGER:
        return None, pl.DataFrame()
    values = [] if not valid else [lo] if valid == 1 else [lo, hi]
    sample = pl.DataFrame({column: pl.Series(values, dtype=dtype)})
    if not valid:
        offset = 0.0
    elif valid == 1 or lo == hi:
        offset = float(lo) - 0.5
    else:
        offset = float(lo)
    from polars_gpu_hist._expr.polars_hist import hist_expr

    with_breaks = sample.select(
        hist_expr(pl.col(column), bin_count=bin_count, include_breakpoint=True)
    )
    uppers = with_breaks.get_column(column).struct.field("breakpoint").to_list()
    edges = [offset, *uppers]
    return (edges if _countable(edges) else None), sample


def _countable(edges: list[float]) -> bool:
    """Whether the kernels count into ``edges`` as Polars' ``hist`` does: finite, strictly
    increasing (fewer than two: no bins)."""
    import math

    return all(math.isfinite(e) for e in edges) and all(a < b for a, b in zip(edges, edges[1:]))


__all__ = ["hist", "histogram"]
