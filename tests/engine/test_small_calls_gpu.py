"""`auto` keeps small host columns on the CPU unless the GPU is asked for."""

from __future__ import annotations

import numpy as np
import polars as pl

import polars_gpu_hist as gh


def test_auto_small_host_columns_stay_on_the_cpu_unless_asked() -> None:
    s = pl.Series("x", np.random.default_rng(0).normal(size=1000))
    assert "backend  cpu" in gh.explain(s, 10)
    assert "backend  gpu" in gh.explain(s, 10, device="gpu")
    auto = s.to_frame().select(pl.col("x").gpu_hist.histogram(bins=10))
    gpu = s.to_frame().select(pl.col("x").gpu_hist.histogram(bins=10, device="gpu"))
    assert auto.equals(gpu)
