"""numpy's bin estimators in the data's own type: float16 and float32 samples compute their
``ptp``, ``std``, percentiles, widths and ``ceil(span / width)`` as numpy does (float16 in
float32 steps rounded to float16), so the bin counts and edges are numpy's to the bit."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import polars_gpu_hist as gh
import polars_gpu_hist.numpy as ghnp
from polars_gpu_hist._args.arguments import MAX_BINS
from support.strategies import numpy_bin_count

RULES = ["auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt"]
DTYPES = [np.float16, np.float32, np.float64]
# Past this many bins a case checks only that both sides agree on refusing or not: several
# arrays of millions of edges per example are too slow here.
CHECK_EDGES_BELOW = 1 << 20
# How numpy fails where its float16/float32 arithmetic overflows or its edges collapse.
NUMPY_FAILS = (ValueError, IndexError, OverflowError)

pytestmark = pytest.mark.filterwarnings(
    "ignore:The number of bins estimated may be suboptimal",
    "ignore:overflow encountered",
    "ignore:invalid value encountered",
    "ignore:divide by zero encountered",
)


@st.composite
def samples(draw: st.DrawFn) -> tuple[np.ndarray, tuple[float, float] | None]:
    """A float16, float32 or float64 sample of 1 to 300 values, some shaped to stress the
    narrow types (subnormals, values near the type's limits, few distinct values), and a
    `range` half of the time."""
    dtype = draw(st.sampled_from(DTYPES))
    n = draw(st.integers(1, 300))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    shape = draw(st.sampled_from(["normal", "skewed", "few", "tiny", "huge", "drawn"]))
    info = np.finfo(dtype)
    if shape == "normal":
        scale = 10.0 ** draw(st.integers(-6, 4))
        x = rng.normal(draw(st.floats(-100, 100)), scale, n)
    elif shape == "skewed":
        x = rng.lognormal(0.0, draw(st.floats(0.1, 3.0)), n)
    elif shape == "few":
        x = rng.choice(rng.normal(0, 10, draw(st.integers(1, 4))), n)
    elif shape == "tiny":
        # Subnormals and the smallest normals of the type, and zeros of both signs.
        tiny = float(info.smallest_subnormal)
        x = rng.integers(-8, 9, n) * tiny * draw(st.sampled_from([1, 3, 1024]))
    elif shape == "huge":
        x = rng.uniform(-1.0, 1.0, n) * float(info.max) * draw(st.sampled_from([0.25, 0.5, 1]))
    else:
        width = {np.float16: 16, np.float32: 32, np.float64: 64}[dtype]
        x = np.array(
            draw(
                st.lists(
                    st.floats(width=width, allow_nan=False, allow_infinity=False),
                    min_size=1,
                    max_size=40,
                )
            )
        )
    x = x.astype(dtype)
    x = x[np.isfinite(x)]
    if x.size == 0:
        x = np.zeros(1, dtype)
    range_: tuple[float, float] | None = None
    if draw(st.booleans()):
        a, b = sorted(float(v) for v in rng.choice(x, 2))
        range_ = (a, b)
    return x, range_


def numpy_edges(x: np.ndarray, rule: str, range_: Any) -> np.ndarray | None:
    """numpy's edges, or None where numpy refuses."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.histogram_bin_edges(x, rule, range_)
    except NUMPY_FAILS:
        return None


def check(x: np.ndarray, rule: str, range_: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            count = numpy_bin_count(x, rule, range_)
        except NUMPY_FAILS:  # e.g. "stone"'s own histograms collapse (float16 edges)
            count = None
    if count is None or count < 1 or count > MAX_BINS:  # numpy.histogram fails for 0 bins
        with pytest.raises((ValueError, OverflowError, pl.exceptions.PolarsError)):
            ghnp.histogram_bin_edges(x, rule, range_)
        return
    if count >= CHECK_EDGES_BELOW:
        return
    expected = numpy_edges(x, rule, range_)
    if expected is None:  # numpy's bins collapse ("Too many bins for data range")
        if numpy_edges(x, count, range_) is not None:
            with pytest.raises((ValueError, OverflowError, pl.exceptions.PolarsError)):
                ghnp.histogram_bin_edges(x, rule, range_)
            return
        # numpy refuses `count` equal bins here too: the estimate is numpy's when ours makes
        # the same bins as `count` (equal bins over subnormal ranges are not this file's).
        ours = _edges_or_error(lambda: ghnp.histogram_bin_edges(x, rule, range_))
        same_count = _edges_or_error(lambda: ghnp.histogram_bin_edges(x, count, range_))
        assert ours == same_count
        return
    got = ghnp.histogram_bin_edges(x, rule, range_)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    if not np.isfinite(expected).all():
        # A span past the type's limits: numpy's NaN edges are a deviation docs/semantics.md lists;
        # the estimate, the number of bins, is still numpy's.
        assert len(got) == len(expected)
        return
    np.testing.assert_array_equal(got, expected)
    counts, _ = ghnp.histogram(x, rule, range_)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected_counts = np.histogram(x, rule, range_)[0]
    except NUMPY_FAILS:
        pass  # numpy's float16 `x - min` overflows: a documented deviation (docs/semantics.md)
    else:
        np.testing.assert_array_equal(counts, expected_counts)
    # The frame API on the same column: the same bins and counts.
    frame = gh.histogram(pl.Series("x", x), rule, range=range_, device="cpu")
    assert frame.height == len(expected) - 1
    np.testing.assert_array_equal(frame["count"].to_numpy(), counts)


def _edges_or_error(call: Any) -> Any:
    try:
        return call().tolist()
    except (ValueError, OverflowError, pl.exceptions.PolarsError) as e:
        return type(e).__name__


@given(samples(), st.sampled_from(RULES))
@example((np.array([5.96e-08, 0.0], np.float16), (5.96e-08, 5.96e-08)), "scott")
@example((np.array([0.0, 6.1e-05, -0.0], np.float16), None), "doane")
@example((np.array([1.794e04, -3.016e04, -6.013e04], np.float16), None), "fd")  # inf bins
def test_estimators_compute_in_the_datas_type(
    case: tuple[np.ndarray, tuple[float, float] | None], rule: str
) -> None:
    x, range_ = case
    check(x, rule, range_)


def test_the_reported_float16_cases() -> None:
    edges = ghnp.histogram_bin_edges(
        np.array([5.96e-08, 0.0], np.float16), "scott", (5.96e-08, 5.96e-08)
    )
    assert len(edges) == 2  # one bin, as numpy; it was 12,110,568
    edges = ghnp.histogram_bin_edges(np.array([0.0, 6.1e-05, -0.0], np.float16), "doane")
    assert len(edges) == 2  # one bin, as numpy; it was 4


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_long_samples_sum_in_numpys_buffers(rule: str, dtype: Any) -> None:
    """Past 8192 values numpy's float16 mean sums in cast buffers, its variance does not."""
    rng = np.random.default_rng(7)
    for n in (8191, 8193, 20_000):
        check((rng.normal(3.0, 0.5, n) ** 3).astype(dtype), rule, None)


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_histogramdd_estimates_each_column_in_its_type(rule: str, dtype: Any) -> None:
    rng = np.random.default_rng(11)
    a = rng.normal(0, 1e-3, 200).astype(dtype)
    b = rng.lognormal(0, 1, 200).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ea, eb = np.histogram_bin_edges(a, rule), np.histogram_bin_edges(b, rule)
    out = gh.histogramdd(pl.Series("a", a), pl.Series("b", b), bins=[rule, rule], device="cpu")
    assert out["a_start"].n_unique() == len(ea) - 1
    assert out["b_start"].n_unique() == len(eb) - 1
    assert out.height == (len(ea) - 1) * (len(eb) - 1)
