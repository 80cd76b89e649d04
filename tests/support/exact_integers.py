"""Cases and checks of integer edges compared exactly (contract/test_exact_integers*.py)."""

from __future__ import annotations

import bisect
from typing import Any

import numpy as np
import polars as pl
from hypothesis import strategies as st

import polars_gpu_hist as gh

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
