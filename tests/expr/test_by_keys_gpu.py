"""`by=` keys of every span on the GPU, as Polars' `group_by` groups them."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest

from support.by_keys import INT_KEYS, bounds, by_against_group_by


@pytest.mark.parametrize("dtype", INT_KEYS)
def test_the_whole_span_of_each_key_type_on_the_gpu(dtype: Any) -> None:
    lo, hi = bounds(dtype)
    n = (1 << 18) * 2 + 10
    g = (np.arange(n, dtype=np.int64) * 31) % 100
    keys = pl.Series(g).cast(dtype).scatter([0, n - 3, n - 1], [lo, hi, lo])
    x = np.random.default_rng(6).random(n)
    by_against_group_by(pl.DataFrame({"x": x, "g": keys}), device="gpu")
