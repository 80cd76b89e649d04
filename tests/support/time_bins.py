"""Time columns and the references time bins are held to (expr/test_time_bins*.py)."""

from __future__ import annotations

import polars as pl


def column(values_us: list[int], unit: str, zone: str | None) -> pl.Series:
    s = pl.Series("t", values_us, pl.Int64).cast(pl.Datetime("us")).dt.cast_time_unit(unit)
    return s if zone is None else s.dt.replace_time_zone("UTC").dt.convert_time_zone(zone)


def edges_of(out: pl.DataFrame) -> pl.Series:
    return out["bin_start"].append(out["bin_end"].tail(1))


def expected_edges(out: pl.DataFrame, every: str, s: pl.Series) -> pl.Series:
    dtype = s.dtype
    assert isinstance(dtype, pl.Datetime)
    first, last = out["bin_start"][0], out["bin_end"][-1]
    return pl.datetime_range(
        first, last, every, time_unit=dtype.time_unit, time_zone=dtype.time_zone, eager=True
    )


def assert_matches_truncate(s: pl.Series, every: str, out: pl.DataFrame) -> None:
    """Counts as `dt.truncate(every)` groups rows, the edges as `pl.datetime_range` steps."""
    assert edges_of(out).to_list() == expected_edges(out, every, s).to_list()
    assert out["bin_start"].dtype == s.dtype
    truncated = s.drop_nulls().dt.truncate(every)
    assert out["bin_start"][0] == truncated.min()
    assert out["bin_end"][-1] > s.max()
    groups = truncated.value_counts().rename({"t": "bin_start", "count": "n"})
    joined = out.join(groups, on="bin_start", how="left").with_columns(pl.col("n").fill_null(0))
    assert joined["count"].to_list() == joined["n"].to_list()
    assert int(out["count"].sum()) == s.len() - s.null_count()


def assert_matches_group_by_dynamic(s: pl.Series, every: str, out: pl.DataFrame) -> None:
    frame = s.drop_nulls().sort().to_frame()
    windows = frame.group_by_dynamic("t", every=every).agg(pl.len().alias("n"))
    got = out.filter(pl.col("count") > 0).select("bin_start", "count")
    assert got["bin_start"].to_list() == windows["t"].to_list()
    assert got["count"].to_list() == windows["n"].to_list()
