"""Infinite edges, numpy's catch-all bins (`bins=[-np.inf, 0, np.inf]`), in the expression API,
`by=`, `histogramdd` and `Histogram`, on the CPU and (marked `gpu`) on the GPU: numpy's counts
(closed left) and Polars' `hist` counts (closed right)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import polars_gpu_hist as gh

INF = np.inf
VALUES = hnp.arrays(
    st.sampled_from([np.float64, np.float32]),
    st.integers(0, 300),
    elements=st.floats(-5, 5, width=32) | st.sampled_from([INF, -INF, np.nan, 0.0, -0.0]),
)


EDGES = st.lists(st.sampled_from([-2.0, -0.5, 0.0, 1.0, 3.0]), max_size=4, unique=True).map(
    lambda e: [-INF, *sorted(e), INF]
) | st.sampled_from([[-INF, 0.0], [0.0, INF], [-INF, INF]])


def counts(x: np.ndarray, edges: list, **kwargs: object) -> np.ndarray:
    return gh.histogram(pl.Series("x", x), edges, **kwargs)["count"].to_numpy()


@given(VALUES, EDGES)
@example(np.array([-INF, -1.0, 0.0, 0.5, INF, np.nan]), [-INF, 0.0, INF])
def test_infinite_edges_count_as_numpy_and_polars_count(x: np.ndarray, edges: list) -> None:
    expected, _ = np.histogram(x, edges)
    np.testing.assert_array_equal(counts(x, edges), expected)
    frame = gh.histogram(pl.Series("x", x), edges)
    np.testing.assert_array_equal(frame["bin_start"].to_numpy(), edges[:-1])
    np.testing.assert_array_equal(frame["bin_end"].to_numpy(), edges[1:])
    # Polars' hist, closed right: the first bin closed, as numpy's last.
    polars = pl.Series("x", x).hist(bins=edges, include_category=False)["count"].to_numpy()
    np.testing.assert_array_equal(counts(x, edges, closed="right"), polars)
    w = (np.arange(len(x)) % 3).astype(np.float64)
    weighted = gh.histogram(pl.Series("x", x), edges, weights=pl.Series("w", w))
    np.testing.assert_array_equal(
        weighted["count"].to_numpy(), np.histogram(x, edges, weights=w)[0]
    )


def test_catch_all_bins_in_an_expression_by_and_the_accumulator() -> None:
    x = np.array([-INF, -3.0, -1.0, 0.0, 2.0, 1e308, INF, np.nan])
    df = pl.DataFrame({"x": x, "g": [0, 1, 0, 1, 0, 1, 0, 1]})
    out = df.select(pl.col("x").gpu_hist.histogram(bins=[-INF, 0, INF])).unnest("x")
    assert out["count"].to_list() == [3, 4]
    by = df.select(pl.col("x").gpu_hist.histogram(bins=[-INF, 0, INF], by="g")).unnest("x")
    assert by.sort("g", maintain_order=True)["count"].to_list() == [2, 2, 1, 2]
    h = gh.Histogram([-INF, 0, INF]).fill(pl.Series(x[:4])).fill(pl.Series(x[4:]))
    assert h.counts.tolist() == [3, 4]
    # density: an infinite bin has infinite width, so numpy's density there is 0.
    dens = df.select(pl.col("x").gpu_hist.histogram(bins=[-1, 0, INF], density=True)).unnest("x")
    np.testing.assert_array_equal(
        dens["count"].to_numpy(), np.histogram(x, [-1, 0, INF], density=True)[0]
    )


def test_nan_edges_are_still_refused() -> None:
    with pytest.raises(ValueError, match="NaN"):
        gh.histogram(pl.Series([1.0]), [0.0, np.nan])
    with pytest.raises(ValueError, match="increase strictly"):
        gh.histogram(pl.Series([1.0]), [INF, 0.0])
