"""Calendar and width bins of time columns (`bins="1w"`, `"1mo"`, `"90m"`, a timedelta): edges
equal to `pl.datetime_range`'s in the column's time zone, counts equal to `dt.truncate` +
group counts and to `group_by_dynamic`, across daylight-saving switches; and the hint
`bins="integer"` gives a fine-grained column."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_gpu_hist as gh
from support.time_bins import (
    assert_matches_group_by_dynamic,
    assert_matches_truncate,
    column,
    edges_of,
    expected_edges,
)

# 2019-12-30 .. 2026-01-05 in microseconds: several DST switches in every zone below.
LO_US, HI_US = 1_577_664_000_000_000, 1_767_571_200_000_000


ZONES = [None, "UTC", "Europe/Amsterdam", "America/New_York", "Asia/Kolkata"]


# Widths whose local boundaries (dt.truncate's) are also absolute steps from the first one in
# every zone above (their DST switches move whole hours).
CALENDAR = ["1h", "30m", "1d", "2d", "1w", "2w", "1mo", "3mo", "1q", "1y"]


UNITS = ["ms", "us", "ns"]


timestamps = st.lists(st.integers(LO_US, HI_US), min_size=1, max_size=300)


# Each example runs several Polars queries (truncate, group_by_dynamic, datetime_range): CI's
# profile capped, as 400 examples of each take minutes on a small machine.
examples = settings(max_examples=min(settings.default.max_examples, 150))


@examples
@given(
    values=timestamps,
    every=st.sampled_from(CALENDAR),
    unit=st.sampled_from(UNITS),
    zone=st.sampled_from(ZONES),
)
def test_time_bins_count_as_truncate_and_group_by_dynamic(
    values: list[int], every: str, unit: str, zone: str | None
) -> None:
    s = column(values, unit, zone)
    out = gh.histogram(s, every)
    assert_matches_truncate(s, every, out)
    assert_matches_group_by_dynamic(s, every, out)


@pytest.mark.parametrize("zone", ["Europe/Amsterdam", "America/New_York"])
@pytest.mark.parametrize("every", ["1h", "1d", "1w", "1mo"])
def test_dst_switches_in_dense_data(zone: str, every: str) -> None:
    """Every 7 minutes across both 2024 switches: the 23- and 25-hour days, the repeated hour."""
    start, end = datetime(2024, 3, 1), datetime(2024, 11, 30)
    s = pl.datetime_range(start, end, "7m", time_zone=zone, eager=True).alias("t")
    out = gh.histogram(s, every)
    assert_matches_truncate(s, every, out)
    assert_matches_group_by_dynamic(s, every, out)
    if every == "1d":
        hours = (out["bin_end"] - out["bin_start"]).dt.total_hours()
        assert set(hours.to_list()) == {23, 24, 25}


@examples
@given(values=timestamps, every=st.sampled_from(["90m", "1d12h", "7h", "2d6h"]))
def test_widths_of_naive_columns_step_from_their_boundary(values: list[int], every: str) -> None:
    """Widths that mix units or do not divide a day: the edges are `pl.datetime_range`'s from
    the boundary of the largest unit (dt.truncate's where it takes the duration)."""
    s = column(values, "us", None)
    out = gh.histogram(s, every)
    assert edges_of(out).to_list() == expected_edges(out, every, s).to_list()
    largest = "1d" if "d" in every else every
    assert out["bin_start"][0] == s.dt.truncate(largest).min()
    assert out["bin_end"][-1] > s.max() >= out["bin_start"][-1]
    expected, _ = np.histogram(s.to_physical().to_numpy(), edges_of(out).to_physical().to_numpy())
    assert out["count"].to_list() == expected.tolist()


@examples
@given(
    days=st.lists(st.integers(17_000, 21_000), min_size=1, max_size=200),
    every=st.sampled_from(["1d", "3d", "1w", "1mo", "1q", "1y"]),
)
def test_date_columns(days: list[int], every: str) -> None:
    s = pl.Series("t", days, pl.Int32).cast(pl.Date)
    out = gh.histogram(s, every)
    assert out["bin_start"].dtype == pl.Date
    truncated = s.dt.truncate(every)
    assert out["bin_start"][0] == truncated.min()
    assert_matches_group_by_dynamic(s, every, out)
    edges = pl.date_range(out["bin_start"][0], out["bin_end"][-1], every, eager=True)
    assert edges_of(out).to_list() == edges.to_list()


@examples
@given(
    values=st.lists(st.integers(-(10**12), 10**12), min_size=1, max_size=200),
    every=st.sampled_from(["1h", "90m", "1d", "1w"]),
)
def test_duration_columns_take_fixed_widths_from_a_multiple(values: list[int], every: str) -> None:
    s = pl.Series("t", values, pl.Int64).cast(pl.Duration("us"))
    out = gh.histogram(s, every)
    width = {"1h": 3_600, "90m": 5_400, "1d": 86_400, "1w": 604_800}[every] * 10**6
    start = min(values) // width * width
    edges = edges_of(out).to_physical().to_list()
    assert edges[0] == start and all(b - a == width for a, b in zip(edges, edges[1:]))
    assert edges[-1] > max(values)
    expected, _ = np.histogram(np.array(values), np.array(edges))
    assert out["count"].to_list() == expected.tolist()


def test_range_starts_the_edges_and_whole_bins_cover_it() -> None:
    zone = "Europe/Amsterdam"
    s = pl.datetime_range(
        datetime(2024, 1, 1), datetime(2024, 6, 1), "5h", time_zone=zone, eager=True
    )
    lo = datetime(2024, 1, 31, tzinfo=timezone.utc)
    hi = datetime(2024, 4, 15, tzinfo=timezone.utc)
    out = gh.histogram(s.alias("t"), "1mo", range=(lo, hi))
    edges = pl.datetime_range(
        lo, datetime(2024, 5, 31, tzinfo=timezone.utc), "1mo", time_zone=zone, eager=True
    )
    assert edges_of(out).to_list() == edges.to_list()[:4]
    assert out["bin_end"][-1] >= hi > out["bin_start"][-1]
    inside = s.filter((s >= edges[0]) & (s <= edges[3]))
    assert int(out["count"].sum()) == inside.len()


def test_timedelta_numpy_and_polars_durations_are_time_bins() -> None:
    s = pl.datetime_range(
        datetime(2024, 3, 1), datetime(2024, 4, 30), "3h", time_zone="America/New_York", eager=True
    ).alias("t")
    # As Polars reads them (group_by_dynamic(every=timedelta(weeks=1)) too): a timedelta is
    # days, "7d", aligned to the epoch's 7-day grid; numpy's week unit is "1w", ISO weeks.
    seven_days = gh.histogram(s, "7d")
    for spec in (timedelta(weeks=1), pl.duration(weeks=1)):
        assert gh.histogram(s, spec).equals(seven_days)
    assert gh.histogram(s, np.timedelta64(1, "W")).equals(gh.histogram(s, "1w"))
    assert gh.histogram(s, np.timedelta64(90, "m")).equals(gh.histogram(s, "90m"))
    # A timedelta of whole days is calendar days (23 hours on 2024-03-10 in New York), as
    # pl.datetime_range reads it.
    assert gh.histogram(s, timedelta(days=1)).equals(gh.histogram(s, "1d"))


def test_expression_api_eager_lazy_and_by() -> None:
    s = pl.datetime_range(
        datetime(2024, 3, 20), datetime(2024, 4, 10), "7h", time_zone="Europe/Amsterdam", eager=True
    )
    df = pl.DataFrame({"t": s, "k": [i % 3 for i in range(s.len())]})
    expr = pl.col("t").gpu_hist.histogram(bins="1w")
    eager = df.select(expr).unnest("t")
    assert eager.equals(df.lazy().select(expr).collect().unnest("t"))
    assert eager.equals(df["t"].gpu_hist.histogram(bins="1w").struct.unnest())
    by = df.lazy().select(pl.col("t").gpu_hist.histogram(bins="1w", by="k")).collect().unnest("t")
    for key, part in df.group_by("k"):
        got = by.filter(pl.col("k") == key[0]).drop("k")
        expected = gh.histogram(part["t"], "1w")
        # by= bins every group alike, over the whole column's extremes.
        assert got["bin_start"].to_list() == eager["bin_start"].to_list()
        counts = dict(zip(expected["bin_start"].to_list(), expected["count"].to_list()))
        assert got["count"].to_list() == [counts.get(b, 0) for b in got["bin_start"].to_list()]


def test_histogramdd_takes_a_time_axis() -> None:
    s = pl.datetime_range(datetime(2024, 1, 1), datetime(2024, 3, 1), "13h", eager=True)
    df = pl.DataFrame({"t": s, "x": np.arange(s.len()) % 5})
    out = df.select(gh.histogramdd("t", "x", bins=["1mo", 5])).unnest(
        df.select(gh.histogramdd("t", "x", bins=["1mo", 5])).columns[0]
    )
    monthly = gh.histogram(s.alias("t"), "1mo")
    assert (
        out.group_by("t_start", maintain_order=True).agg(pl.col("count").sum())["count"].to_list()
        == monthly["count"].to_list()
    )


def test_empty_and_all_null_columns_make_one_empty_bin() -> None:
    s = pl.Series("t", [None, None], pl.Datetime("us", "Europe/Amsterdam"))
    out = gh.histogram(s, "1d")
    assert out.height == 1 and out["count"].to_list() == [0]


@pytest.mark.parametrize(
    ("column", "bins", "match"),
    [
        (
            pl.Series([1.0, 2.0]),
            "1w",
            r'`bins="1w"` names time bins, which need a Date, Datetime or Duration column',
        ),
        (
            pl.Series([timedelta(1)]),
            "1mo",
            r'`bins="1mo"` has months.*Duration column has no calendar',
        ),
        (pl.Series([date(2020, 1, 1)]), "1h", r'`bins="1h"` has hours or finer.*Date column'),
        (
            pl.Series([datetime(2020, 1, 1)]).dt.cast_time_unit("ms"),
            "10us",
            r"finer than the column's unit",
        ),
        (
            pl.Series([datetime(1900, 1, 1), datetime(2200, 1, 1)]),
            "1s",
            r"more than 268435456 bins",
        ),
    ],
)
def test_bad_time_bins_for_the_column_name_bins_and_the_fix(
    column: pl.Series, bins: str, match: str
) -> None:
    with pytest.raises(pl.exceptions.ComputeError, match=match):
        gh.histogram(column.alias("t"), bins)


@pytest.mark.parametrize(
    ("bins", "match"),
    [
        ("1x", r"`bins` names no rule and no duration: '1x'.*\"1w\""),
        ("0d", r"`bins='0d'` is zero"),
        ("-1d", r"`bins='-1d'` is negative"),
        ("1i", r"no rule and no duration"),
        (timedelta(0), r"positive duration"),
        (-timedelta(days=1), r"positive duration"),
    ],
)
def test_bad_time_bins_raise_where_written(bins: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        pl.col("t").gpu_hist.histogram(bins=bins)  # type: ignore[arg-type]


def test_histogram_accumulator_refuses_time_bins() -> None:
    with pytest.raises(ValueError, match=r"time bins.*needs the data"):
        gh.Histogram("1w")  # type: ignore[arg-type]


def test_integer_bins_of_a_fine_datetime_name_time_bins_and_truncate() -> None:
    s = pl.Series("t", [datetime(2024, 1, 1), datetime(2024, 3, 1)]).dt.cast_time_unit("us")
    with pytest.raises(
        pl.exceptions.ComputeError, match=r'one bin per .s; .*bins="1h".*dt.truncate'
    ):
        gh.histogram(s, "integer")
