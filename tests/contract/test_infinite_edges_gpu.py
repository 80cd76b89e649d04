"""Infinite edges on the GPU: numpy's counts (closed left) and Polars' (closed right)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh

INF = np.inf


@pytest.mark.parametrize("kernel", ["shared", "global", "packed", "spill", "segmented", "batched"])
def test_infinite_edges_on_the_gpu(kernel: str) -> None:
    cp = pytest.importorskip("cupy")
    import polars_gpu_hist.numpy as ghnp

    rng = np.random.default_rng(11)
    x = rng.normal(0, 3, 200_003)
    x[::101] = INF
    x[::103] = -INF
    x[::107] = np.nan
    many = [-INF, *np.linspace(-4, 4, 300), INF]
    for edges in ([-INF, 0.0, INF], [-INF, -1.0, 2.0], [0.0, 1.0, INF], many):
        expected, _ = np.histogram(x, edges)
        for closed in ("left", "right"):
            want = expected if closed == "left" else pl.Series(x).hist(bins=edges)["count"]
            got = gh.histogram(cp.asarray(x), edges, kernel=kernel, closed=closed)
            np.testing.assert_array_equal(got["count"].to_numpy(), np.asarray(want))
            host = gh.histogram(pl.Series(x), edges, device="gpu", kernel=kernel, closed=closed)
            np.testing.assert_array_equal(host["count"].to_numpy(), np.asarray(want))
        got, got_edges = ghnp.histogram(cp.asarray(x), edges)
        np.testing.assert_array_equal(cp.asnumpy(got), expected)
        np.testing.assert_array_equal(cp.asnumpy(got_edges), edges)
    sample = np.column_stack([np.nan_to_num(x, nan=0.0, posinf=9, neginf=-9), x[::-1]])
    sample = sample[~np.isnan(sample).any(axis=1)]
    expected, _ = np.histogramdd(sample, [8, [-INF, 0.0, 1.0, INF]], range=[(-9, 9), None])
    got, _ = ghnp.histogramdd(cp.asarray(sample), [8, [-INF, 0.0, 1.0, INF]], range=[(-9, 9), None])
    np.testing.assert_array_equal(cp.asnumpy(got), expected)
