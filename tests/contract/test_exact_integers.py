"""Integer and temporal columns with integer edges are binned in integer arithmetic, as numpy's
`searchsorted` compares int64 values with int64 edges: exact past 2^53, where float64 rounds
(every nanosecond timestamp). Equal bins (`bins=int`) stay float64, as numpy makes them."""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import polars as pl
from hypothesis import given
from hypothesis import strategies as st

import polars_gpu_hist as gh
from polars_gpu_hist import numpy as ghnp
from support.exact_integers import (
    I64,
    SIGNED_CENTRES,
    U64,
    UNSIGNED_CENTRES,
    check_by,
    check_histogram,
    check_histogramdd,
    exact_cases,
    exact_counts,
    numpy_cases,
)


@given(exact_cases())
def test_integer_edges_compare_exactly(case: dict[str, Any]) -> None:
    check_histogram(case, "cpu")


def test_the_reference_is_numpys_rule() -> None:
    """numpy on int64 values and int64 edges (and uint64 with uint64) agrees with the exact
    reference the tests use."""
    rng = np.random.default_rng(3)

    def pick(k: int, centres: list[int], bounds: tuple[int, int]) -> list[int]:
        return [
            min(max(int(rng.choice(centres)) + int(rng.integers(-3, 4)), bounds[0]), bounds[1])
            for _ in range(k)
        ]

    for centres, bounds, np_dtype in [
        (SIGNED_CENTRES, I64, np.int64),
        (UNSIGNED_CENTRES, U64, np.uint64),
    ]:
        for _ in range(200):
            edges = sorted(set(pick(5, centres, bounds)))
            if len(edges) < 2:
                continue
            values = pick(30, centres, bounds) + edges
            counts, _ = np.histogram(np.array(values, np_dtype), np.array(edges, np_dtype))
            assert counts.tolist() == exact_counts(values, edges, "left", False)


def test_the_issues_cases() -> None:
    x = np.array([2**62, 2**62 + 1, 2**62 + 2])
    assert gh.histogram(pl.Series(x), "integer")["count"].to_list() == [1, 1, 1]
    edges = np.array([2**62, 2**62 + 1, 2**62 + 3])
    assert ghnp.histogram(x, edges)[0].tolist() == np.histogram(x, edges)[0].tolist() == [1, 2]


def test_nanosecond_timestamps_before_hourly_edges() -> None:
    """pandas' default unit: values a nanosecond before an hourly edge stay in the bin below."""
    hour = 3_600 * 10**9
    start = dt.datetime(2026, 11, 27)
    edges = [start + dt.timedelta(hours=h) for h in range(4)]
    base = int(pl.Series([start]).cast(pl.Datetime("ns")).to_physical()[0])
    ns = [base + hour - 1, base + hour, base + 2 * hour - 1, base + 2 * hour, base + 3 * hour - 1]
    ns += [base + hour + 5]
    s = pl.Series("t", ns).cast(pl.Datetime("ns"))
    numpy_counts, _ = np.histogram(np.array(ns), np.array([base + h * hour for h in range(4)]))
    assert numpy_counts.tolist() == [1, 3, 2]
    for device in ["cpu"]:
        got = gh.histogram(s, edges, device=device)["count"].to_list()
        assert got == numpy_counts.tolist()
    # The frame's edges are the datetimes given.
    out = gh.histogram(s, edges)
    assert out["bin_start"].to_list() == edges[:3]
    assert out["bin_end"].to_list()[-1] == edges[-1]


def test_edges_as_a_nanosecond_series_keep_their_nanoseconds() -> None:
    base = 1_795_000_000 * 10**9 + 7
    edges = pl.Series([base, base + 10**9 + 1, base + 2 * 10**9], dtype=pl.Int64)
    values = pl.Series([base + 10**9, base + 10**9 + 1, base + 2 * 10**9], dtype=pl.Int64)
    for dtype in [pl.Datetime("ns"), pl.Duration("ns")]:
        got = gh.histogram(values.cast(dtype), edges.cast(dtype))["count"].to_list()
        assert got == [1, 2]
    assert gh.histogram(values, edges)["count"].to_list() == [1, 2]


def test_integer_bins_past_2_pow_53() -> None:
    for dtype, lo in [(pl.Int64, 2**62), (pl.UInt64, 2**64 - 6), (pl.Int64, -(2**63))]:
        values = [lo, lo + 1, lo + 1, lo + 3, lo + 5]
        s = pl.Series(values, dtype=dtype)
        out = gh.histogram(s, "integer")
        assert out["count"].to_list() == [1, 2, 0, 1, 0, 1]
        # numpy's arange(lo, lo + 3): the last bin [lo + 2, lo + 3] is closed.
        assert gh.histogram(s, "integer", range=(lo, lo + 2))["count"].to_list() == [1, 2, 1]
    d = pl.Series([2**62, 2**62 + 2], dtype=pl.Int64).cast(pl.Duration("ns"))
    assert gh.histogram(d, "integer")["count"].to_list() == [1, 0, 1]


def test_edges_outside_the_columns_type_compare_exactly() -> None:
    """A negative edge for a UInt64 column, or one past 2^64: compared as integers of any
    size (the mathematically exact answer)."""
    s = pl.Series([0, 5, 2**64 - 1], dtype=pl.UInt64)
    for edges, closed, expected in [
        ([-5, 0, 2**64 - 1], "left", [0, 3]),
        ([-5, 0, 2**64 - 1], "right", [1, 2]),
        ([-10, -5, 2**64 + 10], "left", [0, 3]),
        ([2**64 - 1, 2**64, 2**65], "left", [1, 0]),
        ([2**64, 2**65], "right", [0]),
    ]:
        for device in ["cpu"]:
            got = gh.histogram(s, edges, closed=closed, device=device)["count"].to_list()
            assert got == expected, (edges, closed)
    i = pl.Series([I64[0], -1, I64[1]], dtype=pl.Int64)
    assert gh.histogram(i, [-(2**70), I64[0] + 1, 2**63], flow=True)["count"].to_list() == [
        0,
        1,
        2,
        0,
    ]


def test_float_edges_and_equal_bins_stay_float64() -> None:
    """numpy compares float edges in float64, and makes equal bins in float64."""
    x = np.array([2**62, 2**62 + 1, 2**62 + 2**11])
    s = pl.Series(x)
    float_edges = [float(2**62), float(2**62 + 2**11), float(2**62 + 2**12)]
    assert (
        gh.histogram(s, float_edges)["count"].to_list() == np.histogram(x, float_edges)[0].tolist()
    )
    assert gh.histogram(s, 2)["count"].to_list() == np.histogram(x, 2)[0].tolist()


@given(numpy_cases())
def test_numpy_module_follows_numpys_promotion(case: tuple[np.ndarray, np.ndarray]) -> None:
    """int64 with int64 edges and uint64 with uint64 compare exactly; uint64 with int64 edges,
    or float edges, compare in float64: numpy's own answer every time."""
    x, edges = case
    expected = np.histogram(x, edges)[0].tolist()
    assert ghnp.histogram(x, edges)[0].tolist() == expected
    if x.dtype.kind != edges.dtype.kind and edges.dtype.kind in "iu":
        return  # numpy.histogramdd's own mixture: see the test below
    y = x[::-1].copy()
    got = ghnp.histogramdd([x, y], bins=[edges, edges])[0]
    assert got.tolist() == np.histogramdd(np.stack([x, y], axis=1), bins=[edges, edges])[0].tolist()


@given(exact_cases(["Int64", "UInt64", "Datetime"]), st.sampled_from(["cpu"]))
def test_histogramdd_compares_each_axis_exactly(case: dict[str, Any], device: str) -> None:
    check_histogramdd(case, device)


def test_histogramdd_of_mixed_signedness_compares_in_float64() -> None:
    """An int64 sample with uint64 edges: numpy.histogramdd searches in float64 but checks the
    last edge exactly (numpy 2 compares int64 with uint64 exactly), so a value that rounds onto
    the last edge is dropped there; we compare in float64 throughout, as numpy.histogram does
    (a deviation docs/semantics.md lists)."""
    x = np.array([2**53 + 1, 0, 2**53], dtype=np.int64)
    edges = np.array([0, 2**53], dtype=np.uint64)
    assert np.histogramdd(x[:, None], bins=[edges])[0].tolist() == [2.0]
    assert np.histogram(x, edges)[0].tolist() == [3]
    got = ghnp.histogramdd(np.stack([x, x], axis=1), bins=[edges, edges])[0]
    assert got.tolist() == [[3]]


@given(exact_cases())
def test_by_compares_exactly(case: dict[str, Any]) -> None:
    check_by(case, "cpu")
