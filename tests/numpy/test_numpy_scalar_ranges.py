"""A `range` of numpy scalars keeps its type, as numpy's does (NEP 50): float16 and float32
scalars make their edges (linspace) and their span in their own type, float64 scalars in float64
whatever the data; the estimators divide that span in numpy's types. The everyday case is
`range=(x.min(), x.max())` of the data itself. Both the numpy drop-in and the Series API are
held to numpy, edges (values and dtype) and counts."""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import polars_gpu_hist.numpy as ghnp

ESTIMATORS = ["auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt"]
FLOATS = [np.float16, np.float32, np.float64]


def numpy_or_error(f, *args):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return f(*args)
        except (ValueError, TypeError, MemoryError) as e:
            return type(e)


@st.composite
def scalar_range_cases(draw: st.DrawFn) -> tuple[np.ndarray, object, tuple[object, object]]:
    dtype = draw(st.sampled_from(FLOATS))
    scale = 10.0 ** draw(st.integers(-3, 3))
    seed = draw(st.integers(0, 2**32 - 1))
    size = draw(st.integers(1, 60))
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(size) * scale).astype(dtype)
    range_type = draw(st.sampled_from([*FLOATS, float]))
    if draw(st.booleans()):
        lo, hi = x.min(), x.max()
    else:
        lo, hi = np.sort(rng.choice(x, 2))
    bins = draw(st.one_of(st.sampled_from(ESTIMATORS), st.integers(1, 64)))
    return x, bins, (range_type(lo), range_type(hi))


def assert_same(want: object, got: object) -> None:
    if isinstance(want, type):
        assert isinstance(got, type) and issubclass(got, want), (want, got)
        return
    assert not isinstance(got, type), (want, got)
    (counts, edges), (our_counts, our_edges) = want, got  # type: ignore[misc]
    np.testing.assert_array_equal(our_edges, edges)
    assert our_edges.dtype == edges.dtype
    np.testing.assert_array_equal(our_counts, counts)


@given(scalar_range_cases())
def test_numpy_scalar_ranges_give_numpys_edges_and_counts(case: tuple) -> None:
    x, bins, r = case
    want = numpy_or_error(np.histogram, x, bins, r)
    got = numpy_or_error(ghnp.histogram, x, bins, r)
    assert_same(want, got)


@given(scalar_range_cases())
def test_the_series_api_counts_as_numpy_with_numpy_scalar_ranges(case: tuple) -> None:
    x, bins, r = case
    want = numpy_or_error(np.histogram, x, bins, r)
    if isinstance(want, type):
        return  # the refusals' types are the numpy module's contract (test_exceptions.py)
    out = pl.Series("x", x).gpu_hist.histogram(bins, range=r, device="cpu").struct.unnest()
    np.testing.assert_array_equal(out["count"].to_numpy(), want[0])
    np.testing.assert_array_equal(out["bin_start"].to_numpy(), want[1][:-1].astype(np.float64))


def test_the_cases_of_the_issue() -> None:
    # float16 bounds make float16 edges (linspace in float16), here a different middle bin.
    x = np.array([1.666015625, 1.259765625, 0.9560546875], np.float16)
    r = (x.min(), x.max())
    assert ghnp.histogram(x, 7, r)[0].tolist() == [1, 0, 0, 1, 0, 0, 1]
    # float32 bounds: the span is float32, and "sqrt" divides it as numpy does.
    y = np.array([1.0680063, 0.37137207, -1.281176, 0.9624697], np.float32)
    assert ghnp.histogram(y, "sqrt", (y.min(), y.max()))[0].tolist() == [1, 3]


@pytest.mark.parametrize("bins", ["sqrt", "stone"])
def test_a_numpy_string_names_the_rule(bins: str) -> None:
    # numpy's own str_ (what `np.array(["sqrt"])[0]` gives) is a rule name like any str.
    x = np.arange(10.0)
    want = np.histogram(x, bins)
    got = ghnp.histogram(x, np.str_(bins))
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
