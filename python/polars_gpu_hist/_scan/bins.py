"""The plan's bins, made after its first pass where they need one: the extremes from the files'
statistics or a streaming pass, the empty histogram of the binning (its dtypes fixed before a
row is read), and the checks the fill makes that its data spans the first pass's extremes."""

from __future__ import annotations

import operator
from typing import Any, SupportsIndex, cast

import polars as pl

from polars_gpu_hist import _native
from polars_gpu_hist._args import arguments as _args
from polars_gpu_hist._args.arguments import BinsArg
from polars_gpu_hist._histogram.histogram import Histogram
from polars_gpu_hist._scan import passes, statistics
from polars_gpu_hist._scan import plan as _plan


def binned(plan: _plan.Plan) -> tuple[Histogram, list[passes.SameExtremes]]:
    """The empty histogram of the plan's binning (after the first pass where it needs one),
    its dtypes fixed, and the checks of the extremes the fill must make."""
    r = plan.request
    weighted = r.weights is not None
    if plan.binning == "fixed":
        hist = Histogram(
            r.bins if len(r.columns) == 1 else per_axis(r.bins, len(r.columns)),
            range=r.range,
            closed=r.closed,
            weights=weighted,
            device=r.device,
        )
        return empty_fill(hist, plan), []
    label = plan.dataset.label
    if len(r.columns) > 1:
        extremes = passes.first_pass_dd(plan.dataset.lazy(), r.columns, plan.dtypes, r.weights)
        same_dtypes(plan)
        ranges = [_data_span(e) for e in extremes]
        counts = per_axis(r.bins, len(r.columns))
        hist = Histogram(counts, range=ranges, closed=r.closed, weights=weighted, device=r.device)
        checks = [
            passes.SameExtremes(e, c, d, label) for e, c, d in zip(extremes, r.columns, plan.dtypes)
        ]
        return empty_fill(hist, plan), checks
    column, dtype = r.columns[0], plan.dtypes[0]
    if plan.binning == "data range":
        count = auto_bins(r.bins)
        # Checks bins, closed, device and the dtypes now, not after a pass over the data.
        binned_check(plan)
        first = first_pass(plan)
        same_dtypes(plan)
        hist = Histogram._from_data_range(
            count, first.value(), closed=r.closed, weights=weighted, device=r.device
        )
        return empty_fill(hist, plan), [passes.SameExtremes(first, column, dtype, label)]
    return _streamed_rule(plan)


def binned_check(plan: _plan.Plan) -> None:
    """A range from the data's arguments checked (bins, closed, device, the dtypes) before a
    first pass, as :func:`binned` checks them."""
    r = plan.request
    count = auto_bins(r.bins)
    probe = Histogram(
        count, range=(0.0, 1.0), closed=r.closed, weights=r.weights is not None, device=r.device
    )
    empty_fill(probe, plan)


def per_axis(bins: Any, d: int) -> Any:
    return bins if isinstance(bins, (list, tuple)) else [bins] * d


def _data_span(e: passes.Extremes) -> tuple[float, float] | None:
    """An n-D axis' range from its extremes (numpy's [min, max]; [0, 1] without values)."""
    if e.lo is None or e.hi is None:
        return (0.0, 1.0)
    return (e.lo, e.hi)


def first_pass(plan: _plan.Plan) -> passes.Extremes:
    """The extremes of the rows that count: from the files' statistics where the plan found
    them exact, else a streaming pass over the column."""
    if isinstance(plan.first, statistics.Found):
        return plan.first.extremes
    r = plan.request
    return passes.first_pass(plan.dataset.lazy(), r.columns[0], plan.dtypes[0], r.weights)


def same_dtypes(plan: _plan.Plan) -> None:
    """The files' dtypes after a first pass are those it planned for: a file rewritten with
    another dtype in between would be binned as numpy does not bin it."""
    if plan.dataset.format is None:
        return
    now = plan.dataset.lazy().collect_schema()
    for name in plan.request.names:
        if now.get(name) != plan.schema[name]:
            found = "no such column" if name not in now else f"dtype {now[name]}"
            raise RuntimeError(
                f"range='auto': {plan.dataset.label} changed between the two passes: column "
                f"{name!r} had dtype {plan.schema[name]}, now {found}; run again once the data "
                "stops changing"
            )


def auto_bins(bins: BinsArg) -> int:
    """The number of bins of a range from the data, which takes an int `bins` only."""
    if isinstance(bins, bool):
        raise TypeError(f"`bins` must be an int or a sequence of edges, got {bins!r}")
    try:
        # numpy integers too; edges (and anything else) raise the TypeError answered below.
        return operator.index(cast(SupportsIndex, bins))
    except TypeError:
        raise ValueError("range='auto' needs an int `bins`: explicit edges need no range") from None


def _streamed_rule(plan: _plan.Plan) -> tuple[Histogram, list[passes.SameExtremes]]:
    """The histogram of a rule that a first pass resolves (its size and extremes), and the
    check the fill makes where the bins came from the data's extremes."""
    r = plan.request
    column, dtype = r.columns[0], plan.dtypes[0]
    pair, weighted, label = plan.span, r.weights is not None, plan.dataset.label
    if plan.rule == "integer":
        if pair is None:
            first = first_pass(plan)
            same_dtypes(plan)
            lo, hi = (
                (0, 0) if first.lo is None or first.hi is None else (int(first.lo), int(first.hi))
            )
            checks = [passes.SameExtremes(first, column, dtype, label)]
        else:
            lo_f, hi_f = pair
            if not (lo_f.is_integer() and hi_f.is_integer() and lo_f <= hi_f):
                raise ValueError(
                    f'`bins="integer"` needs a `range` of two integers lo <= hi, got {r.range!r}'
                )
            lo, hi, checks = int(lo_f), int(hi_f), []
        bins = hi - lo + 1
        if bins > _args.MAX_BINS:
            raise ValueError(
                f'`bins="integer"` would make {bins} bins (one per integer from {lo} to {hi}), '
                f"more than the {_args.MAX_BINS} a histogram holds: give a number of bins or a "
                "narrower `range`"
            )
        # numpy's edges np.arange(lo, hi + 2), which linspace makes exactly; an integer axis
        # (its statistics take the value each bin holds; boost's Integer axis).
        hist = Histogram(
            "integer", range=(lo, hi), closed=r.closed, weights=weighted, device=r.device
        )
        return empty_fill(hist, plan), checks
    found = plan.first if isinstance(plan.first, statistics.Found) else None
    if found is not None and found.count is not None:
        n, first = found.count, found.extremes
    else:
        n, first = passes.summary(plan.dataset.lazy(), column, dtype, pair)
    same_dtypes(plan)
    extremes = pl.Series(
        [] if first.lo is None else [first.lo, first.hi], dtype=passes.physical(dtype)
    )
    estimated = _native.estimate_from_extremes(plan.rule, n, extremes, pair)
    assert estimated is not None, f"bins={plan.rule!r} is estimated from a streaming pass"
    if pair is not None:
        hist = Histogram(estimated, range=pair, closed=r.closed, weights=weighted, device=r.device)
        return empty_fill(hist, plan), []
    hist = Histogram._from_data_range(
        estimated, first.value(), closed=r.closed, weights=weighted, device=r.device
    )
    return empty_fill(hist, plan), [passes.SameExtremes(first, column, dtype, label)]


def empty_fill(hist: Histogram, plan: _plan.Plan) -> Histogram:
    """An empty first fill fixes the histogram's dtypes before any data is read."""
    r = plan.request
    empty = [pl.Series(c, [], dtype=plan.schema[c]) for c in r.columns]
    weights = None if r.weights is None else pl.Series(r.weights, [], dtype=plan.schema[r.weights])
    return hist.fill(*empty, weights=weights)
