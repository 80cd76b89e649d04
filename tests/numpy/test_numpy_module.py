"""polars_gpu_hist.numpy against numpy on host arrays: the same counts, edges and types."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import polars_gpu_hist.numpy as ghnp
from polars_gpu_hist._args.arguments import MAX_BINS
from support.strategies import numpy_bin_count

FLOATS = hnp.arrays(
    st.sampled_from([np.float32, np.float64]),
    st.integers(1, 300),
    elements=st.floats(-1e6, 1e6, width=32),
)


INTS = hnp.arrays(st.sampled_from([np.int16, np.int64, np.uint8]), st.integers(1, 300))


def same_call(ours: Callable[[], tuple], numpy: Callable[[], tuple]) -> None:
    """The same arrays, or an error from both (numpy's ValueError; ours may be Polars')."""
    try:
        expected = numpy()
    except ValueError:
        with pytest.raises((ValueError, pl.exceptions.PolarsError)):
            ours()
        return
    same(ours(), expected)


def same(got: tuple, expected: tuple) -> None:
    for g, e in zip(got, expected):
        assert type(g) is np.ndarray
        assert g.dtype == e.dtype, (g.dtype, e.dtype)
        np.testing.assert_array_equal(g, e)


def alike_or_both_refused(ours: Callable[[], Any], numpys: Callable[[], Any]) -> Any:
    """Both results, or None where numpy refuses (hypothesis finds ranges too narrow for the
    bins, such as [0, 5e-324]) and so does ours, with numpy's message."""
    try:
        expected = numpys()
    except ValueError as refused:
        with pytest.raises(ValueError, match=re.escape(str(refused))):
            ours()
        return None
    return ours(), expected


@given(st.one_of(FLOATS, INTS), st.integers(1, 40))
def test_equal_bins_over_the_data(x: np.ndarray, bins: int) -> None:
    same_call(lambda: ghnp.histogram(x, bins), lambda: np.histogram(x, bins))


@pytest.mark.filterwarnings("ignore:invalid value encountered in divide")
@given(FLOATS, st.integers(1, 40), st.floats(-10, 0), st.floats(0.5, 10))
def test_equal_bins_over_a_range_with_weights_and_density(
    x: np.ndarray, bins: int, lo: float, width: float
) -> None:
    w = np.arange(len(x), dtype=np.float64) % 5
    same(ghnp.histogram(x, bins, range=(lo, lo + width)), np.histogram(x, bins, (lo, lo + width)))
    got = ghnp.histogram(x, bins, range=(lo, lo + width), weights=w)
    same(got, np.histogram(x, bins, range=(lo, lo + width), weights=w))
    got_d, edges = ghnp.histogram(x, bins, range=(lo, lo + width), density=True)
    expected_d, expected_edges = np.histogram(x, bins, range=(lo, lo + width), density=True)
    np.testing.assert_allclose(got_d, expected_d, rtol=1e-12)
    np.testing.assert_array_equal(edges, expected_edges)


RULES = ["auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt"]


@pytest.mark.filterwarnings("ignore:The number of bins estimated may be suboptimal")
@given(FLOATS, st.sampled_from(RULES))
@example(np.array([0, 0, 0, 1e-3, 1e-3, 1e-3, 1e-3, 2e6]), "fd")  # 2e9 bins: refused
def test_estimators_and_bin_edges(x: np.ndarray, rule: str) -> None:
    count = numpy_bin_count(x, rule)
    if count is None or count > MAX_BINS:
        # numpy refuses (or would build more edges than we allow): we refuse.
        with pytest.raises((ValueError, pl.exceptions.PolarsError)):
            ghnp.histogram(x, rule)
        return
    if count > 1 << 22:
        # Both can, but several arrays of millions of bins per example are too slow here.
        return
    same_call(lambda: ghnp.histogram(x, rule), lambda: np.histogram(x, rule))
    same_call(
        lambda: (ghnp.histogram_bin_edges(x, rule),), lambda: (np.histogram_bin_edges(x, rule),)
    )


def test_explicit_edges_and_refusals() -> None:
    x = np.array([0.0, 0.5, 1.0, 2.0, 3.5])
    same(ghnp.histogram(x, [0, 1, 2, 4]), np.histogram(x, [0, 1, 2, 4]))
    with pytest.raises(TypeError, match="weighted"):
        ghnp.histogram_bin_edges(x, "auto", weights=np.ones(5))


@given(
    hnp.arrays(np.float64, st.tuples(st.integers(1, 200), st.just(3)), elements=st.floats(-5, 5)),
    st.integers(1, 6),
)
@example(np.array([[0.0, 0.0, 0.0], [5e-324, 1.0, 1.0]]), 2)  # a zero-width bin: counted alike
def test_histogramdd_and_histogram2d(sample: np.ndarray, bins: int) -> None:
    both = alike_or_both_refused(
        lambda: ghnp.histogramdd(sample, bins), lambda: np.histogramdd(sample, bins)
    )
    if both is None:
        return
    (got, got_edges), (expected, expected_edges) = both
    np.testing.assert_array_equal(got, expected)
    for g, e in zip(got_edges, expected_edges):
        np.testing.assert_array_equal(g, e)
    x, y = sample[:, 0], sample[:, 1]
    h, ex, ey = ghnp.histogram2d(x, y, bins=bins, range=[(-5, 5), (-5, 5)])
    eh, eex, eey = np.histogram2d(x, y, bins=bins, range=[(-5, 5), (-5, 5)])
    np.testing.assert_array_equal(h, eh)
    np.testing.assert_array_equal(ex, eex)
    np.testing.assert_array_equal(ey, eey)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize(
    "range",
    [
        (0.1, 0.9),
        (np.float64(0.1), np.float64(0.9)),
        (np.float64(0.1), 0.9),
        (np.float32(0.1), 0.9),
    ],
)
def test_range_scalars_set_the_edge_type_as_in_numpy(dtype: type, range: tuple) -> None:
    # A numpy float64 scalar is not weak: numpy's edges and comparisons become float64.
    x = np.random.default_rng(4).random(20_000).astype(dtype)
    expected, edges = np.histogram(x, 37, range=range)
    counts, got = ghnp.histogram(x, 37, range=range)
    assert got.dtype == edges.dtype
    np.testing.assert_array_equal(got, edges)
    np.testing.assert_array_equal(counts, expected)


def _builtin_base(error: BaseException) -> type:
    """The builtin exception class an error is (numpy's UFuncTypeError is a TypeError)."""
    return next(c for c in type(error).__mro__ if c.__module__ == "builtins")


@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: m.histogram(x, "auto", weights=np.ones(len(x))),
        lambda m, x: m.histogram(x, "fd", range=(0, 1), weights=np.ones(len(x))),
        lambda m, x: m.histogram(x, "integer"),
        lambda m, x: m.histogram(x, "integer", weights=np.ones(len(x))),
        lambda m, x: m.histogram(x, "AUTO"),
        lambda m, x: m.histogram_bin_edges(x, "integer"),
        lambda m, x: m.histogram_bin_edges(x, "sturges", weights=np.ones(len(x))),
        lambda m, x: m.histogramdd(np.column_stack([x, x]), bins="auto"),
        lambda m, x: m.histogramdd(np.column_stack([x, x]), bins="fd"),  # one letter each
        lambda m, x: m.histogramdd(np.column_stack([x, x]), bins=["auto", 3]),
        lambda m, x: m.histogramdd(np.column_stack([x, x, x]), bins=[3, 4, "integer"]),
        lambda m, x: m.histogramdd([x, x], bins=["auto", 3, 4]),
        lambda m, x: m.histogramdd([x, x], bins=np.array(["auto", "fd"])),
        lambda m, x: m.histogram2d(x, x, bins="auto"),
        lambda m, x: m.histogram2d(x, x, bins=["sqrt", 3]),
    ],
)
def test_refusals_raise_numpys_exception(call: Any) -> None:
    x = np.linspace(0.0, 1.0, 50)
    with pytest.raises(Exception) as theirs:
        call(np, x)
    with pytest.raises(Exception) as ours:
        call(ghnp, x)
    assert _builtin_base(ours.value) is _builtin_base(theirs.value), (ours.value, theirs.value)
    if "estimat" in str(theirs.value):
        assert str(ours.value) == str(theirs.value)


# Edges numpy takes: never decreasing, so an edge may repeat (a bin of no width).
REPEATING_EDGES = st.lists(st.sampled_from([-2.0, -0.5, 0.0, 0.25, 1.0, 3.0]), min_size=2).map(
    sorted
)


SMALL_FLOATS = hnp.arrays(np.float64, st.integers(0, 200), elements=st.floats(-3, 4))


SMALL_VALUES = st.one_of(
    SMALL_FLOATS,
    hnp.arrays(np.float32, st.integers(0, 200), elements=st.floats(-3, 4, width=32)),
    hnp.arrays(np.int32, st.integers(0, 200), elements=st.integers(-3, 4)),
)


@given(SMALL_VALUES, REPEATING_EDGES)
@example(np.array([0.0, 0.5, 1.0, 1.5, 2.0]), [0.0, 1.0, 1.0])  # the last bin has no width
@example(np.array([1.0, 1.0, 2.0]), [1.0, 1.0, 1.0])  # every bin has none
def test_repeated_edges_count_as_numpy_counts_them(x: np.ndarray, edges: list) -> None:
    same(ghnp.histogram(x, edges), np.histogram(x, edges))
    w = np.arange(len(x), dtype=np.float64)
    same(ghnp.histogram(x, edges, weights=w), np.histogram(x, edges, weights=w))
    sample = np.column_stack([x, x[::-1]])
    got, got_edges = ghnp.histogramdd(sample, [edges, [-1.0, 0.0, 0.0, 2.0]])
    expected, expected_edges = np.histogramdd(sample, [edges, [-1.0, 0.0, 0.0, 2.0]])
    np.testing.assert_array_equal(got, expected)
    for g, e in zip(got_edges, expected_edges):
        np.testing.assert_array_equal(g, e)


def test_decreasing_edges_are_refused_as_numpy_refuses_them() -> None:
    x = np.linspace(0.0, 1.0, 10)
    for module in (np, ghnp):
        with pytest.raises(ValueError, match="monotonically"):
            module.histogram(x, [0.0, 1.0, 0.5])


def test_the_package_keeps_polars_rule_for_edges() -> None:
    # Polars' `hist` refuses repeated edges, and so do this package's own functions.
    import polars_gpu_hist as gh

    with pytest.raises(ValueError, match="increase strictly"):
        gh.histogram(np.linspace(0.0, 1.0, 10), [0.0, 1.0, 1.0])


@pytest.mark.filterwarnings("ignore:Converting input from bool")
@given(hnp.arrays(np.bool_, st.integers(1, 100)), st.integers(1, 5))
def test_booleans_count_as_numpy_counts_them(x: np.ndarray, bins: int) -> None:
    same(ghnp.histogram(x, bins), np.histogram(x, bins))
    same(ghnp.histogram(x, bins, range=(0, 2)), np.histogram(x, bins, range=(0, 2)))
    got, ex, ey = ghnp.histogram2d(x, x[::-1], bins=bins)
    expected, eex, eey = np.histogram2d(x, x[::-1], bins=bins)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(ex, eex)
    np.testing.assert_array_equal(ey, eey)


def test_booleans_warn_as_numpy_warns() -> None:
    with pytest.warns(RuntimeWarning, match="Converting input from bool"):
        ghnp.histogram(np.array([True, False, True]), 2)


@given(SMALL_FLOATS.filter(len), st.integers(1, 8))
@example(np.array([5e-324, 0.0]), 2)  # a span too narrow for 2 bins: both refuse
def test_complex_weights_sum_as_numpy_sums_them(x: np.ndarray, bins: int) -> None:
    w = np.arange(len(x)) % 3 + 1j * (np.arange(len(x)) % 5)
    edges = [-3.0, 0.0, 4.0]
    same(ghnp.histogram(x, edges, weights=w), np.histogram(x, edges, weights=w))
    same_call(lambda: ghnp.histogram(x, bins, weights=w), lambda: np.histogram(x, bins, weights=w))
    with np.errstate(all="ignore"):
        try:
            expected, expected_edges = np.histogram(x, bins, weights=w, density=True)
        except ValueError:
            return  # a span too narrow for the bins: refused by both, as checked above
        got, got_edges = ghnp.histogram(x, bins, weights=w, density=True)
    assert got.dtype == expected.dtype == np.complex128
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    np.testing.assert_array_equal(got_edges, expected_edges)


def test_complex_weights_in_histogramdd_are_refused_as_numpy_refuses_them() -> None:
    sample = np.random.default_rng(1).random((20, 2))
    for module in (np, ghnp):
        with pytest.raises(TypeError):
            module.histogramdd(sample, 3, weights=np.ones(20) * 1j)


@given(
    hnp.arrays(
        st.sampled_from([np.float32, np.float64, np.int32]),
        st.integers(0, 100),
        elements=st.integers(-50, 50),
    ),
    st.integers(1, 6),
)
def test_histogramdd_of_one_dimension(x: np.ndarray, bins: int) -> None:
    for sample in (x[:, None], [x], x):
        for kwargs in ({}, {"range": [(-10, 10)]}, {"weights": np.ones(len(x))}):
            got, got_edges = ghnp.histogramdd(sample, bins, **kwargs)
            expected, expected_edges = np.histogramdd(sample, bins, **kwargs)
            np.testing.assert_array_equal(got, expected)
            assert len(got_edges) == len(expected_edges) == 1
            assert got_edges[0].dtype == expected_edges[0].dtype
            np.testing.assert_array_equal(got_edges[0], expected_edges[0])


def test_nd_counts_are_int64_where_numpy_gives_float64() -> None:
    # docs/semantics.md's table: exact integer counts, which float64 holds only below 2**53.
    x = np.linspace(0.0, 1.0, 10)
    assert ghnp.histogram2d(x, x, 3)[0].dtype == np.int64
    assert np.histogram2d(x, x, 3)[0].dtype == np.float64
    assert ghnp.histogramdd(np.column_stack([x, x]), 3, weights=x)[0].dtype == np.float64


def test_more_than_8_dimensions_are_refused_where_numpy_counts_them() -> None:
    # docs/semantics.md's table: the engine's rank is at most 8.
    sample = np.random.default_rng(2).random((20, 9))
    assert np.histogramdd(sample, 2)[0].sum() == 20
    with pytest.raises(ValueError, match="at most 8 dimensions"):
        ghnp.histogramdd(sample, 2)


# numpy's refusals, raised with numpy's exception type and message.
NUMPY_REFUSALS = [
    lambda m, x: m.histogram(x, 3, range=(1, 0)),
    lambda m, x: m.histogram(x, 3, range=(0, np.inf)),
    lambda m, x: m.histogram(x, 3, range=(np.nan, 1)),
    lambda m, x: m.histogram(x, np.array([[0, 0.5], [0.6, 1.0]])),
    lambda m, x: m.histogram(x, 2.5),
    lambda m, x: m.histogram(x, 0),
    lambda m, x: m.histogram(x, [0, 2, 1]),
    lambda m, x: m.histogram(x, 3, weights=np.ones(len(x) + 1)),
    lambda m, x: m.histogram(x, 3, weights=np.ones((len(x), 1))),
    lambda m, x: m.histogram(x.reshape(5, -1), 3, weights=x),
    lambda m, x: m.histogram(np.append(x, np.inf), 3),
    lambda m, x: m.histogram(np.append(x, -np.inf), "auto"),
    lambda m, x: m.histogram(np.array([1, 1 + 2e-16] * 10), 10),
    lambda m, x: m.histogram_bin_edges(x, 3, weights=x[:-1]),
    lambda m, x: m.histogramdd(np.column_stack([x, x]), bins=[1, 0.99]),
    lambda m, x: m.histogramdd(np.column_stack([x, x]), bins=[1, 1.5]),
    lambda m, x: m.histogramdd(np.column_stack([x, x]), bins=[3, [1, 0]]),
    lambda m, x: m.histogramdd(np.column_stack([x, x]), bins=[3, [[1, 2]]]),
    lambda m, x: m.histogramdd(np.column_stack([x, x]), bins=[3, 3, 3]),
    lambda m, x: m.histogramdd(np.column_stack([x, x]), range=[(0, 1)]),
    lambda m, x: m.histogramdd(np.column_stack([x, x]), range=[(0, 1), (1, 0)]),
    lambda m, x: m.histogramdd(np.column_stack([x, x]), weights=np.ones(len(x) - 1)),
    lambda m, x: m.histogramdd(np.column_stack([x, x]), weights=np.ones((len(x), 1))),
    lambda m, x: m.histogram2d(x, x, 3, weights=np.ones((5, 10))),
]


@pytest.mark.parametrize("call", NUMPY_REFUSALS)
def test_refusals_raise_numpys_exception_and_message(call: Any) -> None:
    x = np.linspace(0.0, 1.0, 50)
    with pytest.raises(Exception) as theirs:
        call(np, x)
    with pytest.raises(type(theirs.value)) as ours:
        call(ghnp, x)
    assert str(ours.value) == str(theirs.value)


def test_weights_of_another_shape_are_refused_not_flattened() -> None:
    # Issue 30: weights of shape (5, 2) for 10 values were flattened.
    x = np.arange(10.0)
    with pytest.raises(ValueError, match="weights should have the same shape as a"):
        ghnp.histogram(x, 3, weights=np.ones((5, 2)))
    # The same shape is numpy's rule, not the same size: both flatten (5, 2) beside (5, 2).
    same(
        ghnp.histogram(x.reshape(5, 2), 3, weights=x.reshape(5, 2)),
        np.histogram(x.reshape(5, 2), 3, weights=x.reshape(5, 2)),
    )


WEIGHT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint64, np.float64]


@given(
    hnp.arrays(np.float64, st.integers(0, 60), elements=st.floats(-5, 5)),
    st.sampled_from(WEIGHT_DTYPES),
    st.one_of(st.integers(1, 8), st.just([-5.0, -1.0, 0.0, 2.0, 5.0])),
)
@example(np.array([0.0, 5e-324]), np.int8, 2)  # too narrow a range: both refuse it
def test_integer_weights_sum_to_integers(x: np.ndarray, dtype: type, bins: Any) -> None:
    # Sums below 127: numpy's sums in the weights' own type do not wrap, so its values are exact.
    w = (np.arange(len(x)) % 3).astype(dtype)
    both = alike_or_both_refused(
        lambda: ghnp.histogram(x, bins, weights=w), lambda: np.histogram(x, bins, weights=w)
    )
    if both is None:
        return
    (got, edges), (expected, expected_edges) = both
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(edges, expected_edges)
    kind = np.dtype(dtype).kind
    assert got.dtype == {"i": np.int64, "u": np.uint64, "f": np.float64}[kind]
    if dtype in (np.int64, np.uint64, np.float64):
        assert got.dtype == expected.dtype  # numpy's own type where it is this wide
    with np.errstate(all="ignore"):
        d, _ = ghnp.histogram(x, bins, weights=w, density=True)
        e, _ = np.histogram(x, bins, weights=w, density=True)
    np.testing.assert_allclose(d, e, rtol=1e-12)
    if len(x):  # (an empty list is float64 to numpy)
        assert ghnp.histogram(x, bins, weights=list(w))[0].dtype == got.dtype


def test_narrow_integer_weights_do_not_wrap() -> None:
    # docs/semantics.md's table: numpy sums int8 weights in int8 (three weights of 100: 44).
    x, w = np.zeros(3), np.full(3, 100, np.int8)
    assert np.histogram(x, 1, weights=w)[0].tolist() == [44]
    got = ghnp.histogram(x, 1, weights=w)[0]
    assert got.tolist() == [300] and got.dtype == np.int64


@given(
    hnp.arrays(np.float64, st.integers(0, 60), elements=st.floats(-5, 5) | st.just(np.nan)),
    st.one_of(st.integers(1, 6), st.just([-5.0, -1.0, 0.0, 0.0, 2.0, 5.0])),
    st.sampled_from(["decimal", "fraction"]),
)
def test_object_weights_sum_as_objects(x: np.ndarray, bins: Any, kind: str) -> None:
    from decimal import Decimal
    from fractions import Fraction

    make = Decimal if kind == "decimal" else (lambda i: Fraction(i, 7))
    w = np.array([make(i % 5 + 1) for i in range(len(x))] + [make(0)], dtype=object)[:-1]
    finite = x[np.isfinite(x)]
    if not isinstance(bins, list) and len(finite) < len(x):
        return  # NaN with a range from the data: a documented deviation, pinned elsewhere
    both = alike_or_both_refused(
        lambda: ghnp.histogram(x, bins, weights=w), lambda: np.histogram(x, bins, weights=w)
    )
    if both is None:
        return
    (got, edges), (expected, expected_edges) = both
    assert got.dtype == object and expected.dtype == object
    assert [type(v) for v in got if v != 0] == [type(v) for v in expected if v != 0]
    assert got.tolist() == expected.tolist()
    np.testing.assert_array_equal(edges, expected_edges)


@pytest.mark.parametrize("kind", ["datetime64", "timedelta64"])
@pytest.mark.parametrize("unit", ["D", "h", "m", "s", "ms", "us", "ns", "2D", "15m"])
@pytest.mark.parametrize("edge_unit", ["D", "h", "s"])
def test_datetime64_and_timedelta64_units(kind: str, unit: str, edge_unit: str) -> None:
    rng = np.random.default_rng(7)
    x = rng.integers(-1000, 1000, 300).astype(f"{kind}[{unit}]")
    x[::17] = np.datetime64("NaT") if kind == "datetime64" else np.timedelta64("NaT")
    edges = np.sort(rng.integers(-200, 200, 6)).astype(f"{kind}[{edge_unit}]")
    edges = np.unique(edges)
    got = ghnp.histogram(x, edges)
    expected = np.histogram(x, edges)
    same(got, expected)


@pytest.mark.parametrize("kind", ["datetime64[D]", "timedelta64[s]"])
@pytest.mark.parametrize("bins", [2, "auto"])
def test_equal_bins_of_temporal_data_are_refused_as_numpy_refuses_them(
    kind: str, bins: Any
) -> None:
    x = np.arange(5).astype(kind)
    for module in (np, ghnp):
        with pytest.raises(TypeError):
            module.histogram(x, bins)
        with pytest.raises(TypeError):
            module.histogramdd([x, x], 2 if bins == 2 else [3, 3])


def test_temporal_units_no_polars_unit_holds_are_refused() -> None:
    with pytest.raises(ValueError, match="no Polars unit"):
        ghnp.histogram(np.arange(3).astype("timedelta64[M]"), np.arange(3).astype("timedelta64[M]"))
    with pytest.raises(ValueError, match="beyond what"):
        ghnp.histogram(np.array([2**62], "timedelta64[s]"), 2)


@pytest.mark.skipif(
    np.finfo(np.longdouble).nmant <= 52, reason="long double is float64 on this platform"
)
@pytest.mark.parametrize("small", [np.float16, np.float32, np.float64])
def test_long_double_ranges_and_edges_place_values_as_numpy(small: type) -> None:
    eps = np.finfo(np.longdouble).eps
    x = np.array([1.0, 0.5, 1.5, 2.0, -1.0], small)
    for rng in ([1 + eps, 2.0], [0.0, 1 - eps], [0.5, 1 + eps], [1 - eps, 1 + eps]):
        rng = np.array(rng, np.longdouble)
        for bins in (1, 2, 3):
            same_call(
                lambda b=bins, r=rng: ghnp.histogram(x, b, range=r),
                lambda b=bins, r=rng: np.histogram(x, b, range=r),
            )
        edges = np.linspace(rng[0], rng[1], 4, dtype=np.longdouble)
        same(ghnp.histogram(x, edges), np.histogram(x, edges))
        np.testing.assert_allclose(
            ghnp.histogram(x, edges, density=True)[0], np.histogram(x, edges, density=True)[0]
        )
    with pytest.raises(TypeError, match="astype"):
        ghnp.histogram(np.ones(3, np.longdouble), 2)


FINITE_OR_NOT = hnp.arrays(
    np.float64,
    st.integers(0, 200),
    elements=st.one_of(st.floats(-5, 5), st.sampled_from([np.inf, -np.inf, np.nan])),
)


INFINITE_EDGES = st.lists(st.sampled_from([-2.0, -0.5, 0.0, 1.0, 3.0]), max_size=4).map(
    lambda e: [-np.inf, *sorted(e), np.inf]
) | st.sampled_from([[-np.inf, 0.0], [0.0, np.inf], [-np.inf, -np.inf, 0.0, np.inf, np.inf]])


@given(FINITE_OR_NOT, INFINITE_EDGES)
@example(np.array([-np.inf, 0.0, np.inf, np.nan]), [-np.inf, 0.0, np.inf])
def test_infinite_edges_are_numpys_catch_all_bins(x: np.ndarray, edges: list) -> None:
    same(ghnp.histogram(x, edges), np.histogram(x, edges))
    w = np.arange(len(x)) % 4 + 0.5
    same(ghnp.histogram(x, edges, weights=w), np.histogram(x, edges, weights=w))
    with np.errstate(all="ignore"):
        d = ghnp.histogram(x, edges, density=True)[0]
        e = np.histogram(x, edges, density=True)[0]
    np.testing.assert_array_equal(d, e)
    sample = np.column_stack([np.nan_to_num(x, nan=0.0), x[::-1]])
    sample = sample[~np.isnan(sample).any(axis=1)]
    with np.errstate(invalid="ignore"):
        expected = np.histogramdd(sample, [3, edges], range=[(-5, 5), None])
        got = ghnp.histogramdd(sample, [3, edges], range=[(-5, 5), None])
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1][1], expected[1][1])


NUMERIC_DTYPES = [
    np.int8,
    np.uint8,
    np.int16,
    np.uint16,
    np.int32,
    np.uint32,
    np.int64,
    np.uint64,
    np.float16,
    np.float32,
    np.float64,
]


@given(
    st.lists(st.sampled_from(NUMERIC_DTYPES), min_size=2, max_size=4),
    st.integers(0, 60),
    st.integers(1, 5),
    st.booleans(),
    st.data(),
)
@example([np.int16, np.uint16, np.float32], 20, 4, False, None)  # issue 30: float64 edges
@example([np.int8, np.uint8, np.float16], 20, 4, False, None)  # issue 30: float32 edges
def test_histogramdd_edges_in_the_dtype_numpy_stacks_the_sample_into(
    dtypes: list, rows: int, bins: int, as_array: bool, data: Any
) -> None:
    rng = np.random.default_rng(rows * 31 + bins)
    columns = [(rng.integers(0, 100, rows) * (1 + (k % 2))).astype(d) for k, d in enumerate(dtypes)]
    sample = np.column_stack(columns) if as_array else columns
    got, got_edges = ghnp.histogramdd(sample, bins)
    expected, expected_edges = np.histogramdd(sample, bins)
    np.testing.assert_array_equal(got, expected)
    for g, e in zip(got_edges, expected_edges):
        assert g.dtype == e.dtype, (dtypes, g.dtype, e.dtype)
        np.testing.assert_array_equal(g, e)
    if len(dtypes) == 2:
        h, ex, ey = ghnp.histogram2d(columns[0], columns[1], bins)
        eh, eex, eey = np.histogram2d(columns[0], columns[1], bins)
        np.testing.assert_array_equal(h, eh)
        assert (ex.dtype, ey.dtype) == (eex.dtype, eey.dtype)
    # The package's own histogramdd: numpy's edges (as Float64 fields) and counts.
    import polars_gpu_hist as gh

    # Separate Series are numpy's list of arrays (one-row int8/uint8/float16 stack to float16).
    frame = gh.histogramdd(*[pl.Series(f"c{k}", c) for k, c in enumerate(columns)], bins=bins)
    expected, list_edges = np.histogramdd(columns, bins)
    np.testing.assert_array_equal(frame["count"].to_numpy(), expected.reshape(-1))
    for k, e in enumerate(list_edges):
        stride = int(np.prod([bins] * (len(dtypes) - k - 1)))
        starts = frame[f"c{k}_start"].to_numpy()[::stride][:bins]
        np.testing.assert_array_equal(starts, e[:-1].astype(np.float64))


def test_boolean_weights_count_the_true_ones() -> None:
    # docs/semantics.md's table: numpy gives a boolean per bin ("any"), or refuses with edges.
    x, w = np.array([0.0, 1.0, 1.5, 3.0]), np.array([True, True, False, True])
    assert np.histogram(x, 2, weights=w)[0].tolist() == [True, True]
    got = ghnp.histogram(x, 2, weights=w)[0]
    assert got.tolist() == [2, 1] and got.dtype == np.int64


def test_object_float_weights_are_summed_per_bin() -> None:
    # docs/semantics.md's table: numpy subtracts running sums, which lose the small weights here.
    x, w = np.array([0.0, 2.0, 2.0]), np.array([1e16, 1.0, 1.0], dtype=object)
    assert np.histogram(x, [0, 1, 3], weights=w)[0].tolist() == [1e16, 0.0]
    assert ghnp.histogram(x, [0, 1, 3], weights=w)[0].tolist() == [1e16, 2.0]


def test_nan_edges_are_refused_where_numpy_takes_them() -> None:
    # docs/semantics.md's table.
    x = np.array([0.0, 1.0, 2.0])
    np.histogram(x, [0.0, np.nan])
    with pytest.raises(ValueError, match="NaN"):
        ghnp.histogram(x, [0.0, np.nan])


@pytest.mark.skipif(
    np.finfo(np.longdouble).nmant <= 52, reason="long double is float64 on this platform"
)
def test_long_double_ranges_in_histogramdd() -> None:
    eps = np.finfo(np.longdouble).eps
    sample = np.column_stack([[1.0, 0.5, 1.5, 2.0, 1.0], [0.0, 1.0, 1.0, 0.5, 0.25]])
    for rng in ([1 + eps, 2.0], [0.0, 1 - eps], [1 - eps, 1 + eps]):
        ranges = [np.array(rng, np.longdouble), (0, 1)]
        for density in (False, True):
            got, got_edges = ghnp.histogramdd(sample, [3, 2], range=ranges, density=density)
            with np.errstate(all="ignore"):
                expected, edges = np.histogramdd(sample, [3, 2], range=ranges, density=density)
            np.testing.assert_array_equal(got, expected)
            if density:  # (counts are int64: docs/semantics.md's table)
                assert got.dtype == expected.dtype
            for g, e in zip(got_edges, edges):
                assert g.dtype == e.dtype
                np.testing.assert_array_equal(g, e)
