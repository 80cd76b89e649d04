"""Calendar and width bins of time columns: edges from Polars' date ranges, which follow a time
zone's daylight-saving switches, and the hint `bins="integer"` gives a fine-grained column."""

from __future__ import annotations

from datetime import datetime

import polars as pl
import pytest

import polars_gpu_hist as gh


@pytest.mark.parametrize("every", ["1h", "1d", "1mo"])
@pytest.mark.parametrize("zone", ["Europe/Berlin", "America/New_York", None])
def test_date_range_edges_count_as_truncate_does(every: str, zone: str | None) -> None:
    """Daily edges across a 23-hour day (and hourly, monthly ones) count each row in the bin that
    `dt.truncate` puts it in."""
    start, end = datetime(2024, 1, 1), datetime(2024, 12, 31)
    step = "1d" if every == "1mo" else "37m"
    stop = end if every == "1mo" else datetime(2024, 4, 2)
    s = pl.datetime_range(start, stop, step, time_zone=zone, eager=True).alias("t")
    edges = pl.datetime_range(start, end, every, time_zone=zone, eager=True)
    edges = edges.filter(edges <= s.max()).append(edges.filter(edges > s.max()).head(1))
    out = gh.histogram(s, edges)
    truncated = s.dt.truncate(every)
    expected = [int((truncated == lo).sum()) for lo in out["bin_start"].to_list()]
    # The last bin is closed: a row on the last edge belongs to it (numpy's rule).
    expected[-1] += int((s == out["bin_end"][-1]).sum())
    assert out["count"].to_list() == expected
    assert out["bin_start"].dtype == s.dtype


def test_integer_bins_of_a_fine_datetime_name_the_date_range_path() -> None:
    s = pl.Series("t", [datetime(2024, 1, 1), datetime(2024, 3, 1)]).dt.cast_time_unit("us")
    with pytest.raises(pl.exceptions.ComputeError, match=r"one bin per .s; .*datetime_range"):
        gh.histogram(s, "integer")
