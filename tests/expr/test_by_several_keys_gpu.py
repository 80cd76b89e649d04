"""`by=` with several keys on the GPU, equal to `group_by(...).agg(...)`."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from polars.testing import assert_frame_equal

import polars_gpu_hist  # noqa: F401  (registers the namespace)
from support.several_keys import by, frames, group_by_agg


@pytest.mark.parametrize("kernel", ["auto", "shared", "global"])
def test_several_keys_on_the_gpu(kernel: str) -> None:
    rng = np.random.default_rng(11)
    n = 1 << 20
    # The shared family holds every cell in shared memory: fewer groups (it refuses 10^4 x 32).
    span = 10 if kernel == "shared" else 100
    frame = pl.DataFrame(
        {
            "x": rng.random(n),
            "a": rng.integers(0, span, n),
            "b": pl.Series(rng.integers(0, span, n)).cast(pl.String),
            "c": rng.random(n) < 0.5,
        }
    ).with_columns(pl.when(pl.col("c")).then(pl.col("a")).alias("a"))
    for keys in (["a", "b"], ["b", "c", "a"], pl.struct("c", "a")):
        cpu = by(frame, keys, bins=32, range=(0.0, 1.0))
        gpu = by(frame, keys, bins=32, range=(0.0, 1.0), device="gpu", kernel=kernel)
        assert_frame_equal(gpu, cpu)


@given(frames())
def test_several_keys_on_the_gpu_equal_group_by_agg(case: tuple[pl.DataFrame, list[str]]) -> None:
    frame, keys = case
    got = by(frame, keys, bins=4, range=(0.0, 1.0), device="gpu")
    if frame.height:
        assert_frame_equal(got, group_by_agg(frame, keys, bins=4, range=(0.0, 1.0)))
