"""The time-bin contract across daylight-saving switches (docs/semantics.md, "Time bins"):

- the edges are `pl.datetime_range(first, last, every, time_zone=<the column's>)`'s, the first
  the data's minimum truncated as `dt.truncate(every)` truncates it;
- the bins tile the axis: every row lands in the one bin `[e_i, e_i+1)` that holds it;
- the counts are `group_by_dynamic(every=...)`'s wherever its windows tile the axis too (each
  ends where the next begins), which is everywhere but a day-or-longer window starting at a
  local time that does not occur (a switch at midnight, America/Havana's): there Polars' window
  ends an hour early and leaves that hour's rows in no window, where the bin counts them;
- a row's bin is the one `dt.truncate` puts it in only where every edge is a truncate boundary:
  not for multi-hour widths across a switch (the edges step in absolute time, `dt.truncate`
  aligns each row on local multiples), nor for days in a zone whose switch is at midnight.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_gpu_hist as gh

# 2019-12-30 .. 2026-01-05 in microseconds: several switches in every zone below.
LO_US, HI_US = 1_577_664_000_000_000, 1_767_571_200_000_000
ZONES = ["America/Havana", "Europe/Amsterdam", "America/New_York", "Australia/Lord_Howe"]
WIDTHS = ["6h", "90m", "5h", "3h", "2h", "1h", "1d", "1w", "1mo", timedelta(hours=6)]


def column(values_us: list[int] | np.ndarray, zone: str) -> pl.Series:
    s = pl.Series("t", values_us, pl.Int64).cast(pl.Datetime("us"))
    return s.dt.replace_time_zone("UTC").dt.convert_time_zone(zone)


def polars_every(every: str | timedelta) -> str:
    """`every` as Polars' functions take it (a timedelta of whole hours as hours)."""
    if isinstance(every, timedelta):
        return f"{int(every.total_seconds() // 60)}m"
    return every


def check_contract(s: pl.Series, every: str | timedelta) -> pl.DataFrame:
    out = gh.histogram(s, every, device="cpu")
    step = polars_every(every)
    edges = out["bin_start"].append(out["bin_end"].tail(1))
    zone = s.dtype.time_zone  # type: ignore[union-attr]
    want = pl.datetime_range(edges[0], edges[-1], step, time_unit="us", time_zone=zone, eager=True)
    assert edges.to_list() == want.to_list()
    assert out["bin_start"][0] == s.dt.truncate(step).min()
    # The bins tile the axis: every row is counted once.
    assert int(out["count"].sum()) == s.len() - s.null_count()
    windows = (
        s.sort()
        .to_frame()
        .group_by_dynamic("t", every=step, include_boundaries=True)
        .agg(pl.len().alias("n"))
    )
    tiled = windows["_upper_boundary"][:-1].to_list() == windows["_lower_boundary"][1:].to_list()
    got = out.filter(pl.col("count") > 0)
    if tiled:
        assert got["bin_start"].to_list() == windows["t"].to_list()
        assert got["count"].to_list() == windows["n"].to_list()
    else:
        # A window cut short by a local time that does not occur: the bin holds its rows and
        # those Polars' window leaves out.
        joined = windows.join(
            out.rename({"bin_start": "t"}).select("t", "count"), on="t", how="left"
        )
        assert (joined["count"] >= joined["n"]).all()
    return out


examples = settings(max_examples=min(settings.default.max_examples, 100))


@examples
@given(
    start=st.integers(LO_US, HI_US),
    offsets=st.lists(st.integers(0, 40 * 86_400_000_000), min_size=1, max_size=200),
    every=st.sampled_from(WIDTHS),
    zone=st.sampled_from(ZONES),
)
def test_the_contract_holds_across_switches(
    start: int, offsets: list[int], every: str | timedelta, zone: str
) -> None:
    check_contract(column([start + o for o in offsets], zone), every)


@pytest.mark.parametrize("every", ["6h", "90m", timedelta(hours=6)])
@pytest.mark.parametrize("zone", ["Europe/Amsterdam", "America/New_York"])
def test_multi_hour_widths_step_in_absolute_time_across_a_switch(
    every: str | timedelta, zone: str
) -> None:
    # Every 10 minutes across the spring switch of 2024.
    s = pl.datetime_range(
        datetime(2024, 3, 9), datetime(2024, 4, 2), "10m", time_zone=zone, eager=True
    ).alias("t")
    out = check_contract(s, every)
    # After the switch the edges are an hour off local multiples, where dt.truncate aligns:
    # the two group some rows differently (the contract is the edges', not truncate's).
    step = polars_every(every)
    truncated = s.dt.truncate(step).value_counts().rename({"t": "bin_start", "count": "n"})
    joined = out.join(truncated, on="bin_start", how="left").with_columns(pl.col("n").fill_null(0))
    assert joined["count"].to_list() != joined["n"].to_list()


def test_a_day_that_starts_at_a_missing_midnight() -> None:
    # America/Havana springs forward at midnight: 2022-03-13 00:00 does not occur.
    zone = "America/Havana"
    s = pl.datetime_range(
        datetime(2022, 3, 11), datetime(2022, 3, 15), "1h", time_zone=zone, eager=True
    ).alias("t")
    out = check_contract(s, "1d")
    starts = out["bin_start"].dt.replace_time_zone(None).to_list()
    # pl.datetime_range's days: the missing midnight is the hour before it, 2022-03-12 23:00.
    assert starts == [
        datetime(2022, 3, 11),
        datetime(2022, 3, 12),
        datetime(2022, 3, 12, 23),
        datetime(2022, 3, 14),
        datetime(2022, 3, 15),
    ]
    assert out["count"].to_list() == [24, 23, 24, 24, 1]
    # Polars' window from 2022-03-12 23:00 ends at 2022-03-13 23:00: its last hour is in none.
    windows = s.to_frame().group_by_dynamic("t", every="1d").agg(pl.len().alias("n"))
    assert windows["n"].to_list() == [24, 23, 23, 24, 1]
