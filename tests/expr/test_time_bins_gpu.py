"""Calendar bins on the GPU, equal to `dt.truncate` and group counts."""

from __future__ import annotations

from datetime import datetime

import polars as pl
import pytest

import polars_gpu_hist as gh
from support.time_bins import assert_matches_truncate


@pytest.mark.parametrize("every", ["1w", "1mo"])
def test_weekly_and_monthly_bins_on_the_gpu(every: str) -> None:
    if not gh.gpu_available():
        pytest.skip("no GPU")
    s = pl.datetime_range(
        datetime(2023, 1, 1),
        datetime(2024, 12, 31),
        "17m",
        time_zone="Europe/Amsterdam",
        eager=True,
    ).alias("t")
    gpu = gh.histogram(s, every, device="gpu")
    assert gpu.equals(gh.histogram(s, every, device="cpu"))
    assert_matches_truncate(s, every, gpu)
