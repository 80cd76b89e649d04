"""The Series namespace (`s.gpu_hist.histogram`): the expression's answer, weights as numpy's."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest


def test_the_series_namespace_matches_the_expression() -> None:
    s = pl.Series("v", np.random.default_rng(0).random(1000))
    via_series = s.gpu_hist.histogram(8, range=(0, 1), device="cpu")
    via_expr = s.to_frame().select(pl.col("v").gpu_hist.histogram(8, range=(0, 1), device="cpu"))
    assert via_series.name == "v"
    assert via_series.to_frame().equals(via_expr)


@pytest.mark.parametrize("name", ["v", "w", "x", "__weights", ""])
def test_the_series_namespace_sums_weights_as_numpy(name: str) -> None:
    # A Series may be named like any temporary column: its values are still what is binned.
    rng = np.random.default_rng(1)
    x, w = rng.random(500), rng.integers(-3, 10, 500).astype(np.float64)
    s = pl.Series(name, x)
    out = s.gpu_hist.histogram(8, range=(0, 1), weights=pl.Series("w", w), device="cpu")
    expected, edges = np.histogram(x, 8, range=(0, 1), weights=w)
    assert out.name == name
    assert out.struct.field("count").to_list() == expected.tolist()
    assert out.struct.field("bin_start").to_list() == edges[:-1].tolist()
    density = s.gpu_hist.histogram(8, range=(0, 1), weights=w, density=True, device="cpu")
    expected, _ = np.histogram(x, 8, range=(0, 1), weights=w, density=True)
    np.testing.assert_allclose(density.struct.field("count").to_numpy(), expected, rtol=1e-12)
