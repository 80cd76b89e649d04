"""Temporal columns: time zones kept, ranges and edges converted exactly to the column's unit,
aware and naive edges never mixed."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh


def test_a_time_zone_aware_datetime_keeps_its_zone() -> None:
    tz = "America/New_York"
    s = pl.Series(
        "t", [dt.datetime(2024, 1, 1, 12), dt.datetime(2024, 1, 2, 12)]
    ).dt.replace_time_zone(tz)
    df = pl.DataFrame({"t": s})
    lazy = df.lazy().select(pl.col("t").gpu_hist.histogram(2, device="cpu"))
    out = lazy.collect().unnest("t")
    assert out["bin_start"].dtype == pl.Datetime("us", tz)
    assert lazy.collect_schema()["t"] == pl.Struct(
        {"bin_start": pl.Datetime("us", tz), "bin_end": pl.Datetime("us", tz), "count": pl.UInt64}
    )
    assert out["bin_start"][0] == s[0]


def test_temporal_ranges_and_edges_convert_exactly_to_the_column_unit() -> None:
    days = pl.Series("d", [dt.date(2024, 1, 1), dt.date(2024, 1, 10), dt.date(2024, 2, 1)])
    out = gh.histogram(days, 2, range=(dt.date(2024, 1, 1), dt.date(2024, 2, 2)), device="cpu")
    assert out["bin_start"][0] == dt.date(2024, 1, 1)
    assert out["count"].to_list() == [2, 1]
    ts = pl.Series("t", [dt.datetime(2024, 1, 1, 0, 0, 1), dt.datetime(2024, 1, 1, 0, 0, 3)])
    for unit in ["ns", "us", "ms"]:
        t = ts.cast(pl.Datetime(unit))
        edges = [
            dt.datetime(2024, 1, 1),
            np.datetime64("2024-01-01T00:00:02"),
            dt.datetime(2024, 1, 1, 0, 0, 4),
        ]
        out = gh.histogram(t, edges, device="cpu")
        assert out["count"].to_list() == [1, 1], unit
        assert out["bin_end"][0] == dt.datetime(2024, 1, 1, 0, 0, 2)
    dur = pl.Series("w", [dt.timedelta(minutes=1), dt.timedelta(minutes=5)])
    out = gh.histogram(
        dur, [dt.timedelta(0), dt.timedelta(minutes=2), np.timedelta64(10, "m")], device="cpu"
    )
    assert out["count"].to_list() == [1, 1]


def test_aware_edges_for_an_aware_column_and_mismatches_refused() -> None:
    tz = dt.timezone.utc
    t = pl.Series("t", [dt.datetime(2024, 1, 1, 1)]).dt.replace_time_zone("UTC")
    out = gh.histogram(
        t, [dt.datetime(2024, 1, 1, tzinfo=tz), dt.datetime(2024, 1, 2, tzinfo=tz)], device="cpu"
    )
    assert out["count"].to_list() == [1]
    with pytest.raises(pl.exceptions.PolarsError, match="aware"):
        gh.histogram(t, [dt.datetime(2024, 1, 1), dt.datetime(2024, 1, 2)], device="cpu")
    with pytest.raises(pl.exceptions.PolarsError, match=r"duration|Duration"):
        gh.histogram(pl.Series([1.0]), [dt.timedelta(0), dt.timedelta(1)], device="cpu")
