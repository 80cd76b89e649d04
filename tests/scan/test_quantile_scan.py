"""``histogram_scan(..., bins=gh.quantile_bins(k))``: the column read into memory for numpy's
quantiles, then counted over the files; equal to the in-memory histogram of the same rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh


def test_scan_equals_the_in_memory_histogram(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    x = rng.lognormal(size=5_000)
    x[::97] = np.nan
    frame = pl.DataFrame({"x": x, "k": np.arange(x.size) % 3})
    for i in range(2):
        frame.slice(i * 2_500, 2_500).write_parquet(tmp_path / f"part{i}.parquet")
    bins = gh.quantile_bins(7, "median_unbiased")
    got = gh.histogram_scan(tmp_path / "*.parquet", "x", bins=bins)
    assert got.to_frame().equals(gh.histogram(frame["x"], bins=bins))
    kept = gh.histogram_scan(tmp_path / "*.parquet", "x", bins=bins, where=pl.col("k") == 1)
    assert kept.to_frame().equals(gh.histogram(frame.filter(pl.col("k") == 1)["x"], bins=bins))


def test_scan_refusals() -> None:
    ties = pl.LazyFrame({"x": [1, 1, 1, 1, 2, 3], "g": [1, 1, 1, 2, 2, 2]})
    with pytest.raises(ValueError, match="repeats an edge"):
        gh.histogram_scan(ties, "x", bins=gh.quantile_bins(3))
    with pytest.raises(ValueError, match="one column without `by`"):
        gh.histogram_scan(ties, "x", bins=gh.quantile_bins(2), by="g")
    with pytest.raises(ValueError, match="`range` cannot be combined"):
        gh.histogram_scan(ties, "x", bins=gh.quantile_bins(2), range=(0, 1))
