"""polars_gpu_hist.numpy on device arrays follows numpy's rules."""

from __future__ import annotations

import numpy as np
import pytest

import polars_gpu_hist.numpy as ghnp


def test_device_arrays_follow_numpys_rules_too() -> None:
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(5)
    x = rng.normal(0, 1, 10_001)
    w = rng.integers(0, 5, len(x))
    for weights in (w, w.astype(np.uint16)):
        got, _ = ghnp.histogram(cp.asarray(x), 16, weights=cp.asarray(weights))
        expected, _ = np.histogram(x, 16, weights=weights.astype(np.int64))
        assert got.dtype == (np.int64 if weights.dtype.kind == "i" else np.uint64)
        np.testing.assert_array_equal(cp.asnumpy(got), expected)
    with pytest.raises(ValueError, match="weights should have the same shape as a"):
        ghnp.histogram(cp.asarray(x), 16, weights=cp.ones((len(x), 1)))
    columns = [
        (rng.integers(0, 100, 5000) * k).astype(d)
        for k, d in enumerate([np.int16, np.uint16, np.float32], 1)
    ]
    got, got_edges = ghnp.histogramdd([cp.asarray(c) for c in columns], 6)
    expected, edges = np.histogramdd(columns, 6)
    np.testing.assert_array_equal(cp.asnumpy(got), expected)
    for g, e in zip(got_edges, edges):
        assert g.dtype == e.dtype == np.float64
        np.testing.assert_array_equal(cp.asnumpy(g), e)
