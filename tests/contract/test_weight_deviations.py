"""Weights: the deliberate differences from numpy (docs/semantics.md), each pinned beside
numpy's own answer."""

from __future__ import annotations

import numpy as np
import pytest

import polars_gpu_hist as gh

X3 = np.array([0.5, 1.5, 2.5])


def _weighted(x: np.ndarray, bins: object, w: np.ndarray, **kwargs: object) -> list[float]:
    return gh.histogram(x, bins, weights=w, device="cpu", **kwargs)["count"].to_list()


@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_a_nan_weight_stays_in_its_own_bin() -> None:
    w = np.array([np.nan, 1.0, 1.0])
    # numpy's explicit edges sum by cumulative sums, which carry the NaN into every later bin;
    # its equal bins (bincount) keep it in its own bin, as we do with either.
    assert np.isnan(np.histogram(X3, [0, 1, 2, 3], weights=w)[0]).all()
    np.testing.assert_array_equal(np.histogram(X3, 3, range=(0, 3), weights=w)[0], [np.nan, 1, 1])
    for bins, kwargs in (([0, 1, 2, 3], {}), (3, {"range": (0, 3)})):
        np.testing.assert_array_equal(_weighted(X3, bins, w, **kwargs), [np.nan, 1, 1])


@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_infinite_weights_stay_in_their_own_bins() -> None:
    w = np.array([np.inf, -np.inf, 1.0])
    np.testing.assert_array_equal(
        np.histogram(X3, [0, 1, 2, 3], weights=w)[0], [np.inf, np.nan, np.nan]
    )
    np.testing.assert_array_equal(
        np.histogram(X3, 3, range=(0, 3), weights=w)[0], [np.inf, -np.inf, 1]
    )
    for bins, kwargs in (([0, 1, 2, 3], {}), (3, {"range": (0, 3)})):
        np.testing.assert_array_equal(_weighted(X3, bins, w, **kwargs), [np.inf, -np.inf, 1])


def test_narrow_integer_weights_do_not_wrap() -> None:
    x = np.array([0.5, 0.6, 0.7])
    w = np.array([100, 100, 100], dtype=np.int8)
    assert np.histogram(x, [0, 1], weights=w)[0].tolist() == [44]  # int8 sums wrap in numpy
    assert _weighted(x, [0, 1], w) == [300.0]
    assert _weighted(x, 1, w, range=(0, 1)) == [300.0]


def test_float32_weights_sum_in_float64() -> None:
    x = np.array([0.5, 0.6, 0.7])
    w = np.array([1e8, 1, 1], dtype=np.float32)
    assert np.histogram(x, [0, 1], weights=w)[0].tolist() == [1e8]  # float32 sums in numpy
    assert _weighted(x, [0, 1], w) == [100_000_002.0]
    assert _weighted(x, 1, w, range=(0, 1)) == [100_000_002.0]
