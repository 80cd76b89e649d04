"""Integer and temporal columns with integer edges are binned in integer arithmetic, as numpy's
`searchsorted` compares int64 values with int64 edges: exact past 2^53, where float64 rounds
(every nanosecond timestamp). Equal bins (`bins=int`) stay float64, as numpy makes them."""

from __future__ import annotations

import bisect
import datetime as dt
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import polars_gpu_hist as gh
from polars_gpu_hist import numpy as ghnp

I64 = (-(2**63), 2**63 - 1)
U64 = (0, 2**64 - 1)
# Where float64 stops being exact, and the ends of each type.
SIGNED_CENTRES = [0, 2**53, -(2**53), 2**62, -(2**62), I64[0], I64[1]]
UNSIGNED_CENTRES = [0, 2**53, 2**62, 2**63, U64[1]]
DTYPES = {
    "Int64": (pl.Int64, SIGNED_CENTRES, I64),
    "UInt64": (pl.UInt64, UNSIGNED_CENTRES, U64),
    "Datetime": (pl.Datetime("ns"), SIGNED_CENTRES, I64),
    "Duration": (pl.Duration("ns"), SIGNED_CENTRES, I64),
}


def exact_counts(values: list[int | None], edges: list[int], closed: str, flow: bool) -> list[int]:
    """numpy's rule (closed left) or Polars' (closed right) on Python integers: exact."""
    n = len(edges) - 1
    counts = [0] * (n + 2)
    for x in values:
        if x is None:
            continue
        if x < edges[0]:
            counts[0] += 1
        elif x > edges[-1]:
            counts[n + 1] += 1
        elif closed == "left":
            counts[1 + min(bisect.bisect_right(edges, x) - 1, n - 1)] += 1
        else:
            counts[1 + max(bisect.bisect_left(edges, x), 1) - 1] += 1
    return counts if flow else counts[1 : n + 1]


@st.composite
def near(draw: st.DrawFn, centres: list[int], bounds: tuple[int, int]) -> int:
    centre = draw(st.sampled_from(centres))
    return min(max(centre + draw(st.integers(-3, 3)), bounds[0]), bounds[1])


@st.composite
def exact_cases(draw: st.DrawFn, names: list[str] | None = None) -> dict[str, Any]:
    name = draw(st.sampled_from(names or list(DTYPES)))
    dtype, centres, bounds = DTYPES[name]
    values = draw(st.lists(near(centres, bounds), min_size=0, max_size=40))
    # A value on, and one on either side of, every edge, now and then.
    edges = sorted(set(draw(st.lists(near(centres, bounds), min_size=2, max_size=6))))
    if len(edges) < 2:
        edges = [edges[0], edges[0] + 1] if edges[0] < bounds[1] else [edges[0] - 1, edges[0]]
    if draw(st.booleans()):
        values += [e + d for e in edges for d in (-1, 0, 1) if bounds[0] <= e + d <= bounds[1]]
    if draw(st.booleans()):
        values.append(None)
    return {
        "name": name,
        "dtype": dtype,
        "values": values,
        "edges": edges,
        "closed": draw(st.sampled_from(["left", "right"])),
        "flow": draw(st.booleans()),
    }


def series(case: dict[str, Any], name: str = "x") -> pl.Series:
    physical = pl.Series(
        name, case["values"], dtype=pl.UInt64 if case["name"] == "UInt64" else pl.Int64
    )
    return physical.cast(case["dtype"])


def edges_for(case: dict[str, Any]) -> list[Any]:
    """Integers, or for temporal columns now and then numpy datetime64/timedelta64 scalars of
    the column's unit (converted exactly; not the int64 minimum, numpy's NaT)."""
    if I64[0] in case["edges"]:
        return case["edges"]
    if case["name"] == "Datetime" and len(case["values"]) % 2:
        return [np.datetime64(e, "ns") for e in case["edges"]]
    if case["name"] == "Duration" and len(case["values"]) % 2:
        return [np.timedelta64(e, "ns") for e in case["edges"]]
    return case["edges"]


def check_histogram(case: dict[str, Any], device: str) -> None:
    expected = exact_counts(case["values"], case["edges"], case["closed"], case["flow"])
    kw = {"closed": case["closed"], "flow": case["flow"], "device": device}
    got = gh.histogram(series(case), edges_for(case), **kw)["count"].to_list()
    assert got == expected
    frame = pl.DataFrame([series(case)])
    out = frame.select(pl.col("x").gpu_hist.histogram(edges_for(case), **kw)).unnest("x")
    assert out["count"].to_list() == expected


@given(exact_cases())
def test_integer_edges_compare_exactly(case: dict[str, Any]) -> None:
    check_histogram(case, "cpu")


@pytest.mark.gpu
@given(exact_cases())
def test_integer_edges_compare_exactly_on_gpu(case: dict[str, Any]) -> None:
    check_histogram(case, "gpu")


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


@st.composite
def numpy_cases(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    sample_dtype = draw(st.sampled_from([np.int64, np.uint64]))
    edge_dtype = draw(st.sampled_from([np.int64, np.uint64, np.float64]))
    centres = [
        c
        for c in SIGNED_CENTRES + UNSIGNED_CENTRES
        if np.iinfo(sample_dtype).min <= c <= np.iinfo(sample_dtype).max
    ]
    bounds = (int(np.iinfo(sample_dtype).min), int(np.iinfo(sample_dtype).max))
    values = draw(st.lists(near(centres, bounds), min_size=1, max_size=30))
    if edge_dtype is np.float64:
        edge_bounds = bounds
    else:
        info = np.iinfo(edge_dtype)
        edge_bounds = (max(bounds[0], int(info.min)), min(bounds[1], int(info.max)))
    edges = sorted(set(draw(st.lists(near(centres, edge_bounds), min_size=2, max_size=5))))
    edge_array = np.array(edges, dtype=edge_dtype)
    if len(np.unique(edge_array)) < 2:
        edge_array = np.array([0, 1], dtype=edge_dtype)
    values += [e for e in edges if bounds[0] <= e <= bounds[1]]
    return np.array(values, dtype=sample_dtype), np.sort(edge_array)


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


@pytest.mark.gpu
@given(exact_cases(["Int64", "UInt64", "Datetime"]))
def test_histogramdd_compares_each_axis_exactly_on_gpu(case: dict[str, Any]) -> None:
    check_histogramdd(case, "gpu")


def check_histogramdd(case: dict[str, Any], device: str) -> None:
    a = series(case, "a")
    b = a.reverse().alias("b")
    kw = {"closed": case["closed"], "flow": case["flow"], "device": device}
    out = gh.histogramdd(a, b, bins=[edges_for(case), case["edges"]], **kw)
    per_a = bins_of(case, case["values"])
    per_b = bins_of(case, case["values"][::-1])
    n = len(case["edges"]) - 1 + 2 * case["flow"]
    expected = [0] * (n * n)
    for i, j in zip(per_a, per_b):
        if i is not None and j is not None:
            expected[i * n + j] += 1
    assert out["count"].to_list() == expected


def bins_of(case: dict[str, Any], values: list[int | None]) -> list[int | None]:
    """Each value's axis bin (flow bins included), None where it is not counted."""
    out: list[int | None] = []
    for x in values:
        counts = exact_counts([x], case["edges"], case["closed"], case["flow"])
        out.append(counts.index(1) if x is not None and 1 in counts else None)
    return out


def test_histogramdd_of_mixed_signedness_compares_in_float64() -> None:
    """An int64 sample with uint64 edges: numpy.histogramdd searches in float64 but checks the
    last edge exactly (numpy 2 compares int64 with uint64 exactly), so a value that rounds onto
    the last edge is dropped there; we compare in float64 throughout, as numpy.histogram does
    (a deviation the README lists)."""
    x = np.array([2**53 + 1, 0, 2**53], dtype=np.int64)
    edges = np.array([0, 2**53], dtype=np.uint64)
    assert np.histogramdd(x[:, None], bins=[edges])[0].tolist() == [2.0]
    assert np.histogram(x, edges)[0].tolist() == [3]
    got = ghnp.histogramdd(np.stack([x, x], axis=1), bins=[edges, edges])[0]
    assert got.tolist() == [[3]]


def check_by(case: dict[str, Any], device: str) -> None:
    """`by=`: each group's histogram is the exact one of its rows."""
    values = case["values"]
    groups = [i % 3 for i in range(len(values))]
    frame = pl.DataFrame([series(case), pl.Series("g", groups, dtype=pl.Int64)])
    kw = {"closed": case["closed"], "flow": case["flow"], "device": device}
    out = frame.select(pl.col("x").gpu_hist.histogram(edges_for(case), by="g", **kw)).unnest("x")
    for g in sorted(set(groups)):
        rows = out.filter(pl.col("g") == g)["count"].to_list()
        mine = [v for v, k in zip(values, groups) if k == g]
        assert rows == exact_counts(mine, case["edges"], case["closed"], case["flow"]), g


@given(exact_cases())
def test_by_compares_exactly(case: dict[str, Any]) -> None:
    check_by(case, "cpu")


@pytest.mark.gpu
@given(exact_cases())
def test_by_compares_exactly_on_gpu(case: dict[str, Any]) -> None:
    check_by(case, "gpu")


@pytest.mark.gpu
@given(numpy_cases())
def test_numpy_module_follows_numpys_promotion_on_device_arrays(
    case: tuple[np.ndarray, np.ndarray],
) -> None:
    """The same promotion for CuPy arrays, counted on the GPU where they lie."""
    cp = pytest.importorskip("cupy")
    x, edges = case
    expected = np.histogram(x, edges)[0].tolist()
    assert cp.asnumpy(ghnp.histogram(cp.asarray(x), edges)[0]).tolist() == expected
    if x.dtype.kind != edges.dtype.kind and edges.dtype.kind in "iu":
        return  # numpy.histogramdd's own mixture (test_histogramdd_of_mixed_signedness...)
    y = x[::-1].copy()
    got = ghnp.histogramdd(cp.asarray(np.stack([x, y], axis=1)), bins=[edges, edges])[0]
    want = np.histogramdd(np.stack([x, y], axis=1), bins=[edges, edges])[0]
    assert cp.asnumpy(got).tolist() == want.tolist()
