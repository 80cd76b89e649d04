"""`gpu_hist.hist` on the GPU against Polars' own `Expr.hist`."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from support.polars_hist import (
    BOTH,
    assert_group_by_same_on,
    counting_path,  # noqa: F401  (autouse: every test on both paths)
    polars,
)


@pytest.mark.parametrize("kwargs", [{}, {"bin_count": 1000}, {"bins": [-1.0, 0.0, 0.5, 3.0]}])
def test_gpu_matches_polars(kwargs: dict) -> None:
    rng = np.random.default_rng(7)
    x = rng.normal(size=3_000_000)
    x[::1000] = np.nan
    frame = pl.DataFrame({"x": x, "g": rng.integers(0, 3, x.size)})
    columns = {
        "f64": pl.col("x"),
        "f32": pl.col("x").cast(pl.Float32),
        "i32": (pl.col("x") * 100).cast(pl.Int32, strict=False),  # NaN -> null
    }
    for column in columns.values():
        f = frame.with_columns(column.alias("x"))
        expected = f.select(polars(pl.col("x"), **kwargs, **BOTH))
        got = f.select(pl.col("x").gpu_hist.hist(device="gpu", **kwargs, **BOTH))
        assert_frame_equal(got, expected, check_exact=True)
        assert_group_by_same_on(f, device="gpu", **kwargs, **BOTH)
