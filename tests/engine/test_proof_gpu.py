"""The cheap rule's proof walked on the device finds exactly what the host's walk finds, and the
counts of many bins over a fresh range, proved there, are numpy's (run on a machine with a GPU:
-m gpu)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import polars_gpu_hist as gh
import polars_gpu_hist.numpy as ghnp
from polars_gpu_hist import _internal

cp = pytest.importorskip("cupy")

DTYPES = ["float32", "float64", "integer"]
RANGE_TYPES = ["python", "float32", "float64", "data"]


def walks(bins: int, lo: float, hi: float, dtype: str, range_type: str):
    """Both walks, or None where numpy would refuse these bins (collapsing edges, a range that
    float32 cannot hold) or the device does not walk them."""
    try:
        return _internal._proof_walks(bins, (lo, hi), dtype, range_type)
    except ValueError:
        return None


def assert_same(bins: int, lo: float, hi: float, dtype: str, range_type: str) -> None:
    found = walks(bins, lo, hi, dtype, range_type)
    if found is None:
        return
    host, device = found
    assert device == host, (bins, lo, hi, dtype, range_type)


scales = st.sampled_from([1e-40, 1e-30, 1e-6, 1.0, 3.0, 1e3, 1e7, 1e15, 1e30, 1e300])
spans = st.floats(min_value=1e-9, max_value=1.0, allow_nan=False)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    bins=st.one_of(st.integers(1, 300), st.integers(1 << 14, 1 << 18)),
    center=st.floats(min_value=-1.0, max_value=1.0),
    scale=scales,
    span=spans,
    dtype=st.sampled_from(DTYPES),
    range_type=st.sampled_from(RANGE_TYPES),
)
def test_the_device_walk_finds_what_the_host_walk_finds(
    bins, center, scale, span, dtype, range_type
) -> None:
    lo = center * scale
    hi = lo + span * scale
    assume(np.isfinite(hi) and lo < hi)
    assert_same(bins, lo, hi, dtype, range_type)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("range_type", RANGE_TYPES)
@pytest.mark.parametrize(
    ("bins", "lo", "hi"),
    [
        (1 << 20, 0.0, 1.0),
        (1 << 20, -1.0, 3.0),
        (1 << 20, 1e8, 1e8 + 1.0),  # float32 edges collapse here: float64 bins only
        (1 << 20, 16777216.0, 16777216.0 * 2),
        (1 << 22, 0.0, 1.0),  # float32's margin is off from 2^22 bins
        ((1 << 22) - 1, 0.0, 0.3),
        (1 << 16, -3.4e38, 3.4e38),  # a span float32 cannot hold
        (1 << 16, -1.7e308, 1.7e308),
        (1 << 16, 1e-40, 1e-39),  # subnormal float32: the cheap scale overflows
        (1 << 16, 5e-324, 1e-320),
        (100_000, 0.1, 0.7),
        (1_000_003, -5.5, 1e-3),
    ],
)
def test_the_device_walk_on_adversarial_ranges(bins, lo, hi, dtype, range_type) -> None:
    assert_same(bins, lo, hi, dtype, range_type)


def edge_neighbours(edges: np.ndarray) -> np.ndarray:
    """Every edge, and the values just below and just above it."""
    below = np.nextafter(edges, -np.inf)
    above = np.nextafter(edges, np.inf)
    return np.concatenate([edges, below, above])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    ("bins", "range_"),
    [
        (1 << 20, (0.0, 1.0)),
        (1 << 20, (0.1, 0.7)),
        (300_007, (-2.5, 1e4)),
        (1 << 14, (100.0, 101.0)),  # float32 edges 8 ulps apart
        (1 << 17, None),
    ],
)
def test_many_bins_over_a_fresh_range_count_as_numpy(dtype, bins, range_) -> None:
    rng = np.random.default_rng(bins)
    lo, hi = range_ if range_ is not None else (-3.0, 4.0)
    values = rng.uniform(lo, hi, 1 << 20).astype(dtype)
    if range_ is None:
        values[:2] = (lo, hi)
    edges = np.histogram_bin_edges(values, bins, range=range_)
    values = np.concatenate([values, edge_neighbours(edges.astype(dtype))]).astype(dtype)
    expected, expected_edges = np.histogram(values, bins, range=range_)
    got, got_edges = ghnp.histogram(cp.asarray(values), bins, range=range_)
    np.testing.assert_array_equal(cp.asnumpy(got), expected)
    np.testing.assert_array_equal(cp.asnumpy(got_edges), expected_edges)
    for family in ["segmented", "batched", "global"]:
        frame = gh.histogram(cp.asarray(values), bins=bins, range=range_, kernel=family)
        np.testing.assert_array_equal(frame["count"].to_numpy(), expected)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("range_type", RANGE_TYPES)
def test_ordinary_bins_are_walked_on_both_sides(dtype, range_type) -> None:
    """The comparisons above skip bins numpy refuses; these bins are never refused, so both walks
    must run and agree (the tests above cannot pass by skipping everything)."""
    found = _internal._proof_walks(1 << 16, (-0.5, 3.0), dtype, range_type)
    assert found is not None
    host, device = found
    assert device == host
    assert host[0], "numpy's estimate is near for these bins"
