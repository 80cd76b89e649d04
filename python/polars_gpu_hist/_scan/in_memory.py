"""The histograms `histogram_scan` makes over the column in memory: the estimators that need
every value, and time bins (whose edges the expression makes from the data in the column's
time zone)."""

from __future__ import annotations

from typing import Any

import polars as pl

from polars_gpu_hist._args import arguments as _args
from polars_gpu_hist._args.arguments import Closed, Device, RangeArg
from polars_gpu_hist._histogram.binning import number_range
from polars_gpu_hist._histogram.histogram import Histogram
from polars_gpu_hist._native import options as _options
from polars_gpu_hist._scan import passes


def estimator(
    values: pl.Series, rule: _options.BinRule, range: RangeArg, closed: Closed, device: Device
) -> Histogram:
    """The histogram of an estimator that needs every value: the bin count the expression
    finds (numpy's), then one fill."""
    from polars_gpu_hist._expr.functions import histogram

    pair = number_range(range)
    bins = histogram(values, rule, range=pair, device=device).height
    if pair is not None:
        return Histogram(bins, range=pair, closed=closed, device=device).fill(values)
    first = passes.first_pass(values.to_frame().lazy(), values.name, values.dtype, None)
    hist = Histogram._from_data_range(
        bins, first.value(), closed=closed, weights=False, device=device
    )
    return hist.fill(values)


def check_time_bins(bins: Any, range: Any, weights: str | None, dtype: pl.DataType) -> None:
    """Time bins' arguments and the column's dtype, before any data is read."""
    _args.bins(bins)
    if isinstance(range, str):
        raise ValueError(
            f"range={range!r} is for a number of bins: time bins start at the data's first "
            "boundary (range=None) or at range=(min, max)"
        )
    if weights is not None:
        raise ValueError("`weights` with time bins is not supported by histogram_scan: drop one")
    if not dtype.is_temporal() or dtype == pl.Time:
        raise ValueError(
            f"time bins (bins={bins!r}) need a Date, Datetime or Duration column, got {dtype}: "
            "give a number of bins, edges or a rule"
        )


def time_bins(
    values: pl.Series, bins: Any, range: RangeArg, closed: Closed, device: Device
) -> Histogram:
    """Time bins: the edges the expression makes (exact integers of the column's units, in
    its time zone), then one fill with them."""
    from polars_gpu_hist._expr.functions import histogram

    made = histogram(values, bins, range=range, closed=closed, device=device)
    ends = made["bin_end"].to_physical()
    edges = [*made["bin_start"].to_physical().to_list(), ends[len(ends) - 1]]
    return Histogram(edges, closed=closed, device=device).fill(values)
