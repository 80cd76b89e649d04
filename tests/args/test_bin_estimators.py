"""numpy's bin estimators (`bins="auto"`, `"fd"`, ...): numpy's edges and counts, per dtype, per
dimension and per group, and numpy's refusal of weights."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import polars_gpu_hist as gh
from polars_gpu_hist._args.arguments import MAX_BINS
from support.strategies import numpy_bin_count

ESTIMATORS = ["auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt"]


floats64 = hnp.arrays(
    np.float64,
    st.integers(1, 300),
    elements=st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
)


@pytest.mark.parametrize("estimator", ESTIMATORS)
@settings(max_examples=60, deadline=None)
@given(x=floats64)
@example(x=np.array([2.0**18, 1.0, 0, 0, 0, 0, 0, 0]))  # "fd": 2^20 bins, numpy's as ours
@example(x=np.array([0, 0, 0, 1e-3, 1e-3, 1e-3, 1e-3, 2e6]))  # "fd": 2e9 bins, refused
def test_estimators_give_numpys_edges_and_counts(estimator: str, x: np.ndarray) -> None:
    count = numpy_bin_count(x, estimator)
    if count is None or count > MAX_BINS:
        # numpy cannot make that many edges (or we refuse past MAX_BINS): neither do we.
        with pytest.raises(pl.exceptions.PolarsError):
            gh.histogram(x, estimator, device="cpu")
        return
    if count > 1 << 22:
        # Both can, but a frame of millions of rows per example is too slow to compare here.
        return
    expected, edges = np.histogram(x, estimator)
    out = gh.histogram(x, estimator, device="cpu")
    assert out["count"].to_list() == expected.tolist()
    assert out["bin_start"].to_list() == edges[:-1].tolist()
    assert out["bin_end"][-1] == edges[-1]


@pytest.mark.parametrize("estimator", ESTIMATORS)
@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.uint8, np.int64])
def test_estimators_per_dtype_and_with_a_range(estimator: str, dtype: type) -> None:
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(5000) * 40 + 100).astype(dtype)
    for range in [None, (50, 150)]:
        expected, edges = np.histogram(x, estimator, range=range)
        out = gh.histogram(pl.Series(x), estimator, range=range, device="cpu")
        assert out["count"].to_list() == expected.tolist(), range
        assert out["bin_start"].to_list() == edges[:-1].astype(np.float64).tolist()


@pytest.mark.parametrize("rule", ["auto", "fd", "sturges", "sqrt"])
def test_estimators_refuse_weights_as_numpy_does_where_the_call_is_written(rule: str) -> None:
    # numpy raises TypeError; so does every form here, at the call, before any query runs.
    with pytest.raises(TypeError, match="weighted data"):
        np.histogram(np.arange(10.0), rule, weights=np.ones(10))
    calls = [
        lambda: gh.histogram(np.arange(10.0), rule, weights=np.ones(10), device="cpu"),
        lambda: pl.col("x").gpu_hist.histogram(bins=rule, weights="w"),
        lambda: gh.histogram_expr("x", rule, weights="w", by="g"),
        lambda: pl.Series([1.0]).gpu_hist.histogram(rule, weights=[1.0]),
        lambda: gh.histogramdd(np.ones(3), np.ones(3), bins=[3, rule], weights=np.ones(3)),
    ]
    for call in calls:
        with pytest.raises(TypeError, match=f'`bins="{rule}"` cannot be combined with `weights`'):
            call()


def test_estimators_in_the_expression_per_dimension_and_per_group() -> None:
    rng = np.random.default_rng(3)
    df = pl.DataFrame({"x": rng.normal(size=2000), "y": rng.random(2000), "g": [0, 1] * 1000})
    out = df.select(pl.col("x").gpu_hist.histogram("fd")).unnest("x")
    expected, _ = np.histogram(df["x"].to_numpy(), "fd")
    assert out["count"].to_list() == expected.tolist()
    by = df.select(pl.col("x").gpu_hist.histogram("sqrt", by="g")).unnest("x")
    assert by.height == 2 * (len(np.histogram_bin_edges(df["x"].to_numpy(), "sqrt")) - 1)


@pytest.mark.parametrize("rules", [["sturges", 4], ["fd", "auto"], [[0, 0.5, 1], "doane"]])
def test_estimators_per_dimension_give_numpys_edges_and_counts(rules: list) -> None:
    # numpy.histogramdd takes no estimator: each column's numpy.histogram_bin_edges, then
    # numpy.histogramdd over those edges.
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=2000), rng.gamma(2.0, size=2000)
    dd = gh.histogramdd(pl.Series("x", x), pl.Series("y", y), bins=rules, device="cpu")
    edges = [
        np.histogram_bin_edges(column, rule) if isinstance(rule, (str, int)) else np.array(rule)
        for column, rule in zip((x, y), rules)
    ]
    expected, _ = np.histogramdd(np.column_stack([x, y]), bins=edges)
    assert dd["count"].to_list() == expected.ravel().tolist()
    grid = np.meshgrid(edges[0][:-1], edges[1][:-1], indexing="ij")
    assert dd["x_start"].to_list() == grid[0].ravel().tolist()
    assert dd["y_start"].to_list() == grid[1].ravel().tolist()
    assert dd["x_end"].max() == edges[0][-1] and dd["y_end"].max() == edges[1][-1]
