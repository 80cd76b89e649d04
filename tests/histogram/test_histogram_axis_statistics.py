"""Statistics in the axis' own terms (issue 49 item 5): an integer axis' bins hold values, so its
quantile is numpy's own np.quantile of the sample by a named method and its mean and spread
those of the values (while ``axes[i].centers`` stay boost's ``v + 0.5``); Date, Datetime and
Duration histograms give dates, datetimes and durations, and take them as edges."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import polars_gpu_hist as gh

samples = st.lists(st.integers(-5, 5), min_size=1, max_size=40)
qs = st.one_of(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), st.floats(0, 1))


@given(
    samples,
    qs,
    st.sampled_from(["linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf"]),
)
def test_an_integer_axis_quantile_is_numpys_own_by_its_method(
    sample: list[int], q: float, method: str
) -> None:
    h = gh.Histogram("integer", range=(-5, 5)).fill(np.array(sample))
    assert h.quantile(q, method=method) == np.quantile(sample, q, method=method)


@given(samples, qs)
def test_the_default_method_is_linear_and_the_median_of_1_to_4_is_2_5(
    sample: list[int], q: float
) -> None:
    h = gh.Histogram("integer", range=(-5, 5)).fill(np.array(sample))
    assert h.quantile(q) == np.quantile(sample, q)
    assert h.mean() == pytest.approx(np.mean(sample))
    assert h.std(ddof=0) == pytest.approx(np.std(sample), abs=1e-12)
    four = gh.Histogram("integer", range=(0, 9)).fill(np.array([1, 2, 3, 4]))
    assert four.quantile(0.5) == 2.5 and four.quantile(0.5, method="lower") == 2.0
    # The mean of [1, 2, 3] is 2, not the centres' 2.5; the centres stay boost's.
    three = gh.Histogram("integer", range=(0, 9)).fill(np.array([1, 2, 3]))
    assert three.mean() == 2.0 and three.quantile(0.5) == 2.0
    np.testing.assert_array_equal(three.axes[0].centers[:3], [0.5, 1.5, 2.5])


@given(samples, st.lists(st.floats(0.1, 3.0), min_size=40, max_size=40), qs)
def test_a_weighted_integer_axis_quantile_is_numpys_weighted_inverted_cdf(
    sample: list[int], weights: list[float], q: float
) -> None:
    w = np.array(weights[: len(sample)])
    h = gh.Histogram("integer", range=(-5, 5), weights=True).fill(np.array(sample), weights=w)
    expected = np.quantile(np.array(sample, dtype=float), q, weights=w, method="inverted_cdf")
    assert h.quantile(q) == expected
    with pytest.raises(ValueError, match="inverted_cdf"):
        h.quantile(q, method="linear")


def test_histogram_scan_integer_bins_make_an_integer_axis(tmp_path: object) -> None:
    h = gh.histogram_scan(pl.LazyFrame({"x": [1, 2, 3, 4]}), "x", "integer")
    assert h.axes[0].kind.kind == "integer" and h.quantile(0.5) == 2.5 and h.mean() == 2.5


def test_a_method_is_for_integer_axes() -> None:
    with pytest.raises(ValueError, match="integer axis"):
        gh.Histogram(4, range=(0, 4)).fill([1.0]).quantile(0.5, method="lower")


DAYS = pl.Series([dt.date(2020, 1, 1), dt.date(2020, 1, 11), dt.date(2020, 1, 21)])


def test_a_date_histogram_takes_date_edges_and_gives_dates() -> None:
    edges = [dt.date(2020, 1, 1), dt.date(2020, 1, 10), dt.date(2020, 2, 1)]
    h = gh.Histogram(edges).fill(DAYS)
    expected = gh.histogram(DAYS, edges)
    assert h.counts.tolist() == expected["count"].to_list()
    assert h.to_frame()["bin_start"].to_list() == expected["bin_start"].to_list()
    assert isinstance(h.quantile(0.5), dt.date) and isinstance(h.mean(), dt.date)
    assert isinstance(h.std(), dt.timedelta)
    ranged = gh.Histogram(3, range=(dt.date(2020, 1, 1), dt.date(2020, 1, 22))).fill(DAYS)
    assert ranged.mean() == dt.date(2020, 1, 11)
    quartiles = ranged.quantile([0.25, 0.75])
    assert quartiles.dtype.kind == "M"


def test_datetime_and_duration_histograms_give_their_dtypes() -> None:
    times = pl.Series([dt.datetime(2020, 1, 1, 12), dt.datetime(2020, 1, 2)])
    edges = [dt.datetime(2020, 1, 1), dt.datetime(2020, 1, 1, 18), dt.datetime(2020, 1, 3)]
    h = gh.Histogram(edges).fill(times)
    assert h.counts.tolist() == [1, 1] and isinstance(h.mean(), dt.datetime)
    aware = times.dt.replace_time_zone("UTC")
    ha = gh.Histogram(4, range=(aware.min(), aware.max())).fill(aware)
    assert ha.mean().tzinfo is not None
    spans = pl.Series([dt.timedelta(hours=5), dt.timedelta(hours=30)])
    hd = gh.Histogram(2, range=(dt.timedelta(0), dt.timedelta(days=2))).fill(spans)
    assert hd.counts.tolist() == [1, 1] and isinstance(hd.mean(), dt.timedelta)
    assert isinstance(hd.std(), dt.timedelta)
    # As the expression of the same column and edges.
    expected = gh.histogram(times, edges)["count"].to_list()
    assert h.counts.tolist() == expected
