"""Counts identical to numpy.histogram (and to Polars' hist for closed="right"), generated cases."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import polars_gpu_hist as gh
from support.numpy_reference import collapses, edges_of, span_overflows
from support.strategies import Case, cases, numpy_histogram, per_bin_sums


def ours(case: Case, **kwargs: object) -> pl.DataFrame:
    frame = pl.DataFrame({"x": case.series})
    weights = None
    if case.weights is not None:
        frame = frame.with_columns(w=case.weights)
        weights = "w"
    expr = pl.col("x").gpu_hist.histogram(
        case.bins, range=case.range, weights=weights, device="cpu", **kwargs
    )
    return frame.select(expr).unnest("x")


def check_against_numpy(case: Case, density: bool = False) -> None:
    try:
        with np.errstate(all="ignore"):
            expected, expected_edges = numpy_histogram(case, density=density)
    except IndexError:
        # numpy's own index arithmetic overflows (a span wider than its bin type holds) and
        # it fails; ours places each value in the range by the edges alone (docs/semantics.md).
        return check_counted_by_edges(case, density)
    except ValueError as e:
        # numpy refuses a range taken from infinite data, and bins that collapse; so must we.
        message = "not finite" if "not finite" in str(e) else "too many bins"
        assert message in str(e).lower()
        if message == "too many bins" and span_overflows(case) and not collapses(case):
            return check_counted_by_edges(case, density)
        with pytest.raises(pl.exceptions.PolarsError, match=message):
            ours(case, density=density)
        return
    if np.isnan(expected_edges).any():
        # numpy's linspace over a span wider than float64 makes NaN edges (docs/semantics.md).
        return check_counted_by_edges(case, density)
    hist = ours(case, density=density)
    assert hist.height == len(expected)
    assert_sums_equal(case, hist["count"].to_numpy(), expected, density)
    np.testing.assert_array_equal(edges_of(hist), expected_edges.astype(np.float64))


def assert_sums_equal(case: Case, got: np.ndarray, expected: np.ndarray, density: bool) -> None:
    if case.exact_weights:
        np.testing.assert_array_equal(got, expected, strict=False)
        return
    # Sums of fractions: equal up to the order of additions; NaN and infinities alike.
    w = case.valid_numpy()[1]
    scale = 1.0 if density or w is None else float(np.abs(w[np.isfinite(w)]).sum())
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12 * scale)


def check_counted_by_edges(case: Case, density: bool) -> None:
    """A deliberate difference (docs/semantics.md): where numpy's arithmetic overflows and it
    fails, ours has numpy's edges where they are numbers (where numpy's would be NaN, ones
    computed without overflow: finite, or for a Float32 column rounded to float32, infinite
    beyond its range), and counts each value in the range by them."""
    hist = ours(case, density=density)
    edges = edges_of(hist)
    assert not np.isnan(edges).any() and (np.diff(edges) > 0).all(), edges
    values, w = case.valid_numpy()
    try:
        with np.errstate(all="ignore"):
            numpy_edges = np.histogram_bin_edges(values, bins=case.bins, range=case.range)
    except ValueError:
        numpy_edges = np.array([np.nan])
    if not np.isnan(numpy_edges).any():
        np.testing.assert_array_equal(edges, numpy_edges.astype(np.float64))
    else:
        lo, hi = case.range if case.range is not None else (values.min(), values.max())
        if case.series.dtype == pl.Float32:
            with np.errstate(over="ignore"):
                lo, hi = np.float32(lo), np.float32(hi)  # float32 edges
        else:
            assert np.isfinite(edges).all(), edges
        assert edges[0] == lo and edges[-1] == hi, edges
    if not density:
        weights = np.ones(len(values)) if w is None else w
        expected = per_bin_sums(values, weights, edges)
        assert_sums_equal(case, hist["count"].to_numpy(), expected, density)


@given(cases(explicit_edges=False))
def test_equal_bins_match_numpy(case: Case) -> None:
    check_against_numpy(case)


@given(cases(explicit_edges=True))
def test_explicit_edges_match_numpy(case: Case) -> None:
    check_against_numpy(case)


@given(cases(weighted=True, max_size=200))
def test_weights_match_numpy(case: Case) -> None:
    # Integer weights (int8 ones too) sum exactly in any order, so the sums are identical;
    # fractions, float32 weights, NaN and infinities equal numpy's sums in float64 up to the
    # order of additions, bin by bin (docs/semantics.md: where we differ on purpose).
    check_against_numpy(case)


@given(cases(max_size=200))
def test_density_matches_numpy(case: Case) -> None:
    values, _ = case.valid_numpy()
    try:
        with np.errstate(all="ignore"):
            expected, edges = np.histogram(values, bins=case.bins, range=case.range, density=True)
    except (ValueError, IndexError):
        return  # numpy refuses, or fails (spans wider than its arithmetic: see above)
    if np.isnan(edges).any():
        return  # NaN edges over a span wider than float64: ours are numbers (see above)
    got = ours(case, density=True)["count"].to_numpy()
    np.testing.assert_array_equal(got, expected)


@given(
    st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=300),
    st.lists(st.floats(0, 1e3), min_size=300, max_size=300),
    st.integers(1, 50),
)
def test_float_weights_match_numpy_to_rounding(xs: list[float], ws: list[float], bins: int) -> None:
    x = np.array(xs)
    w = np.array(ws[: len(xs)])
    expected, _ = np.histogram(x, bins=bins, weights=w)
    got = gh.histogram(x, bins, weights=w, device="cpu")["count"].to_numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-9)


@given(cases(dtypes=[pl.Int32, pl.Int64, pl.UInt16, pl.Float64], explicit_edges=False))
def test_closed_right_matches_polars_hist(case: Case) -> None:
    s = case.series.filter(case.series.is_not_null())
    if s.dtype.is_float():
        s = s.filter(s.is_finite())
    if case.range is not None:
        return  # Polars' hist has no range
    if len(s) and s.min() == s.max():
        # One repeated value: Polars' own count depends on the column's chunks and the CPU
        # (0 at times, where the values lie in its bin): no reference there.
        return
    reference = s.hist(bin_count=case.bins, include_breakpoint=True)
    if reference["count"].sum() != len(s):
        # Its bins span [min, max], so Polars must count every value; where it loses some (a
        # span past the float64 limit makes its breaks overflow), there is no reference.
        return
    expected = reference["count"].to_numpy()
    got = gh.histogram(s, case.bins, closed="right", device="cpu")["count"].to_numpy()
    np.testing.assert_array_equal(got, expected, strict=False)


@given(cases(dtypes=[pl.Int64, pl.Float32, pl.Float64], explicit_edges=True))
def test_closed_right_explicit_edges_match_polars_hist(case: Case) -> None:
    s = case.series.filter(case.series.is_not_null())
    if s.dtype.is_float():
        s = s.filter(~s.is_nan())
    expected = s.hist(bins=case.bins, include_breakpoint=True)["count"].to_numpy()
    got = gh.histogram(s, case.bins, closed="right", device="cpu")["count"].to_numpy()
    np.testing.assert_array_equal(got, expected, strict=False)


def test_numpy_and_polars_conventions_differ_as_documented() -> None:
    s = pl.Series([0, 1, 2, 3])
    left = gh.histogram(s, [0, 1, 2, 3])["count"].to_list()
    right = gh.histogram(s, [0, 1, 2, 3], closed="right")["count"].to_list()
    assert left == [1, 1, 2]
    assert right == [2, 1, 1]


@pytest.mark.parametrize("dtype", [pl.Int64, pl.UInt64])
def test_integers_beyond_2_53(dtype: pl.DataType) -> None:
    base = 2**62 if dtype == pl.Int64 else 2**63
    values = np.array([base + k for k in range(0, 4000, 7)] + [base - 3, 5], dtype=np.uint64)
    if dtype == pl.Int64:
        values = values.astype(np.int64)
    s = pl.Series("x", values, dtype=dtype)
    for bins in [1, 3, 64, 1000]:
        expected, edges = np.histogram(values, bins=bins)
        got = gh.histogram(s, bins)
        np.testing.assert_array_equal(got["count"].to_numpy(), expected)
        np.testing.assert_array_equal(got["bin_start"].to_numpy(), edges[:-1])


@pytest.mark.parametrize("dtype", [pl.Int8, pl.UInt8, pl.Int16, pl.Int32, pl.Int64, pl.UInt64])
def test_integer_extremes(dtype: pl.DataType) -> None:
    from support.dtypes import NUMERIC

    info = np.iinfo(NUMERIC[dtype])
    values = np.array([info.min, info.max, info.min + 1, info.max - 1, 0], dtype=NUMERIC[dtype])
    s = pl.Series("x", values, dtype=dtype)
    for bins in [1, 2, 7, 255, 256]:
        expected, _ = np.histogram(values, bins=bins)
        np.testing.assert_array_equal(gh.histogram(s, bins)["count"].to_numpy(), expected)


def test_values_on_every_edge_float32_and_float64() -> None:
    for dtype in [np.float32, np.float64]:
        for bins in [1, 3, 10, 100, 1000, 4096]:
            for rng in [None, (0.1, 0.7), (-3.3, 1e5)]:
                base = np.random.default_rng(bins).uniform(-1, 2, 1000).astype(dtype)
                edges = np.histogram_bin_edges(base, bins=bins, range=rng)
                x = np.concatenate([base, edges.astype(dtype)])
                x = np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf)])
                expected, expected_edges = np.histogram(x, bins=bins, range=rng)
                got = gh.histogram(x, bins, range=rng)
                np.testing.assert_array_equal(got["count"].to_numpy(), expected)
                np.testing.assert_array_equal(
                    got["bin_start"].to_numpy(), expected_edges[:-1].astype(np.float64)
                )


def test_large_chunked_column_with_nulls_matches_numpy() -> None:
    rng = np.random.default_rng(7)
    parts = [pl.Series("x", rng.normal(size=n)) for n in [300_000, 1, 0, 250_001, 700_000]]
    parts = [p.scatter(rng.integers(0, len(p), len(p) // 100), None) for p in parts]
    series = pl.concat(parts, rechunk=False)
    assert series.n_chunks() == 4  # the empty part adds no chunk
    ok = series.drop_nulls().to_numpy()
    for bins in [16, 256, 65536]:
        expected, _ = np.histogram(ok, bins=bins)
        np.testing.assert_array_equal(gh.histogram(series, bins)["count"].to_numpy(), expected)
    edges = np.sort(rng.normal(size=300))
    expected, _ = np.histogram(ok, bins=edges)
    np.testing.assert_array_equal(gh.histogram(series, edges)["count"].to_numpy(), expected)


def test_empty_and_all_null_columns() -> None:
    for s in [
        pl.Series("x", [], dtype=pl.Float64),
        pl.Series("x", [None, None], dtype=pl.Int32),
        pl.Series("x", [float("nan")] * 3),
    ]:
        got = gh.histogram(s, 4)
        assert got["count"].to_list() == [0, 0, 0, 0]
        assert got["bin_start"].to_list() == [0.0, 0.25, 0.5, 0.75]


def test_one_distinct_value_widens_like_numpy() -> None:
    for value, dtype in [(5, pl.Int64), (2.5, pl.Float64), (0.1, pl.Float32)]:
        s = pl.Series("x", [value] * 10, dtype=dtype)
        expected, edges = np.histogram(s.to_numpy(), bins=3)
        got = gh.histogram(s, 3)
        np.testing.assert_array_equal(got["count"].to_numpy(), expected)
        np.testing.assert_array_equal(got["bin_start"].to_numpy(), edges[:-1].astype(np.float64))


@given(
    st.lists(st.floats(-2, 2, width=32), min_size=1, max_size=300),
    st.floats(-1.5, 0.5),
    st.floats(0.6, 1.5),
    st.integers(1, 40),
    st.sampled_from(["float64", "float32 and float64"]),
)
def test_numpy_float64_scalars_make_float64_bins_for_float32_data(
    xs: list[float], lo: float, hi: float, bins: int, scalars: str
) -> None:
    """A numpy float64 scalar in `range` does not defer to float32 data (a Python float does):
    numpy then makes float64 bins and compares in float64. Values on float32-rounded edges
    tell the two apart."""
    x = np.asarray([*xs, np.float32(lo), np.float32(hi)], dtype=np.float32)
    a, b = {
        "float64": (np.float64(lo), np.float64(hi)),
        "float32 and float64": (np.float32(lo), np.float64(hi)),
    }[scalars]
    expected, edges = np.histogram(x, bins=bins, range=(a, b))
    assert edges.dtype == np.float64
    got = gh.histogram(pl.Series(x), bins=bins, range=(a, b), device="cpu")
    np.testing.assert_array_equal(got["count"].to_numpy(), expected)
    np.testing.assert_array_equal(got["bin_start"].to_numpy(), edges[:-1])
    frame = pl.DataFrame({"x": x}).select(
        pl.col("x").gpu_hist.histogram(bins=bins, range=(a, b), device="cpu")
    )
    np.testing.assert_array_equal(frame.unnest("x")["count"].to_numpy(), expected)


def test_a_float64_scalar_beside_a_python_float_compares_both_bounds_in_float64() -> None:
    """Documented difference (docs/semantics.md): numpy compares float32 data with a Python
    float bound in float32 even where the other bound, a numpy float64 scalar, makes float64
    bins."""
    x = np.asarray([0.0, 0.0, 0.6], dtype=np.float32)  # float32(0.6) is just above 0.6
    expected, edges = np.histogram(x, bins=1, range=(np.float64(0.0), 0.6))
    assert expected.tolist() == [3] and edges.dtype == np.float64
    got = gh.histogram(pl.Series(x), bins=1, range=(np.float64(0.0), 0.6), device="cpu")
    assert got["count"].to_list() == [2]
    assert got["bin_end"].to_list() == [0.6]
