"""n-D histograms against numpy.histogramdd on the CPU."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given

import polars_gpu_hist as gh
from support.strategies import (
    NdCase,
    nd_cases,
)


def test_histogramdd_weights_never_replace_a_column_of_their_name() -> None:
    x, y, w = np.array([0.1, 0.9, 0.9]), np.array([0.2, 0.2, 0.8]), np.array([1.0, 2.0, 4.0])
    out = gh.histogramdd(
        pl.Series("__weights", x), pl.Series("y", y), bins=2, range=[(0, 1), (0, 1)], weights=w
    )
    expected, _ = np.histogramdd(np.column_stack([x, y]), 2, range=[(0, 1), (0, 1)], weights=w)
    assert out["count"].to_list() == expected.ravel().tolist()


def ours(case: NdCase, density: bool = False, **kwargs: Any) -> pl.DataFrame:
    expr = gh.histogramdd(
        *case.names,
        bins=case.bins,
        range=case.range,
        weights="w" if case.weighted else None,
        density=density,
        device="cpu",
        **kwargs,
    )
    return case.frame.select(expr).unnest(case.names[0])


def check(case: NdCase, density: bool = False) -> None:
    try:
        with np.errstate(all="ignore"):
            expected, edges = case.numpy(density=density)
    except ValueError as e:
        if "not finite" in str(e):
            # A range from infinite data: refused as numpy refuses it.
            with pytest.raises(pl.exceptions.PolarsError, match="not finite"):
                ours(case, density=density)
            return
        # A range so wide that numpy's linspace overflows to NaN edges and ravel_multi_index
        # fails: ours keeps finite edges (docs/semantics.md) and counts each value by them.
        assert "invalid entry" in str(e) or "bins" in str(e), e
        return check_own_edges(case, density)
    if not all(np.isfinite(e).all() for e in edges):
        return check_own_edges(case, density)
    got = ours(case, density=density)
    assert_sums_equal(case, got["count"].to_numpy(), expected.ravel())
    # Edges of every dimension, cell by cell in row-major order.
    grids = np.meshgrid(*[e[:-1] for e in edges], indexing="ij")
    for name, grid in zip(case.names, grids):
        np.testing.assert_array_equal(got[f"{name}_start"].to_numpy(), grid.ravel())


def check_own_edges(case: NdCase, density: bool) -> None:
    """Where numpy's edges overflow: ours are finite, and counts equal numpy's over them."""
    got = ours(case, density=density)
    shape = tuple(b if isinstance(b, int) else len(b) - 1 for b in case.bins)
    edges = []
    for axis, name in enumerate(case.names):
        # Along the axis in the row-major grid: edges that collapse (float32 bins narrower
        # than an ulp) repeat, so `unique` would drop bins.
        first = (0,) * axis + (slice(None),) + (0,) * (len(shape) - axis - 1)
        starts = got[f"{name}_start"].to_numpy().reshape(shape)[first]
        edges.append(np.append(starts, got[f"{name}_end"].max()))
        assert np.isfinite(edges[-1]).all()
    own = NdCase(case.frame, [e.tolist() for e in edges], None, case.weighted)
    with np.errstate(all="ignore"):
        expected, _ = own.numpy(density=density)
    if density:
        # Given as float64 lists, numpy takes the widths in float64; ours are the sample's own
        # (float32 for a float32 sample), as numpy's would be had its edges been numbers.
        np.testing.assert_allclose(got["count"].to_numpy(), expected.ravel(), rtol=1e-6)
        return
    assert_sums_equal(case, got["count"].to_numpy(), expected.ravel())


def assert_sums_equal(case: NdCase, got: np.ndarray, expected: np.ndarray) -> None:
    """Counts and integer weights exactly; fractions (float32, NaN, infinities too) up to the
    order of additions, cell by cell."""
    if case.exact_weights:
        np.testing.assert_array_equal(got, expected)
        return
    w = case.frame["w"].drop_nulls().cast(pl.Float64).to_numpy()
    scale = float(np.abs(w[np.isfinite(w)]).sum())
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12 * max(scale, 1.0))


@given(nd_cases())
def test_counts_match_numpy_histogramdd(case: NdCase) -> None:
    check(case)


@given(nd_cases(weighted=True))
def test_weighted_counts_match_numpy(case: NdCase) -> None:
    check(case)


@given(nd_cases(max_size=100))
def test_density_matches_numpy(case: NdCase) -> None:
    if case.frame.height == 0:
        return
    with np.errstate(invalid="ignore", divide="ignore"):
        check(case, density=True)


def test_float32_sample_bins_in_float32_like_numpy() -> None:
    # Values one float32 ulp either side of float32 linspace edges: float64 edges would differ.
    x = np.float32(0.1) + np.arange(1000, dtype=np.float32) * np.float32(0.0007)
    y = np.nextafter(x, np.float32(np.inf))
    case = NdCase(pl.DataFrame({"x0": x, "x1": y}), [37, 41], None, False)
    check(case)


def test_series_and_arrays_return_a_frame() -> None:
    x = np.array([0.0, 0.5, 1.0, 1.0])
    y = np.array([0, 1, 2, 2])
    out = gh.histogram2d(x, y, bins=2, device="cpu")
    expected, _, _ = np.histogram2d(x, y, bins=2)
    assert out.columns == ["x0_start", "x0_end", "x1_start", "x1_end", "count"]
    np.testing.assert_array_equal(out["count"].to_numpy(), expected.ravel())
    named = gh.histogramdd(pl.Series("a", x), pl.Series("b", y), bins=[2, 3], device="cpu")
    assert named.columns[:2] == ["a_start", "a_end"]


def test_lazy_schema_and_temporal_edges() -> None:
    lf = pl.LazyFrame(
        {"t": [0, 86_400_000, 2 * 86_400_000], "v": [1.0, 2.0, 3.0]},
        schema={"t": pl.Datetime("ms"), "v": pl.Float32},
    )
    expr = gh.histogramdd("t", "v", bins=2, weights="v", density=True)
    schema = lf.select(expr).collect_schema()
    assert schema["t"] == pl.Struct(
        {
            "t_start": pl.Datetime("ms"),
            "t_end": pl.Datetime("ms"),
            "v_start": pl.Float64,
            "v_end": pl.Float64,
            "count": pl.Float64,
        }
    )
    assert lf.select(expr).collect().unnest("t").schema == pl.Schema(schema["t"])


def test_right_closed_mirrors_left() -> None:
    x = pl.Series("x", [0.0, 1.0, 2.0, 3.0])
    y = pl.Series("y", [0.0, 0.0, 0.0, 0.0])
    left = gh.histogramdd(x, y, bins=[[0, 1, 2, 3], [0, 1]], device="cpu")
    right = gh.histogramdd(x, y, bins=[[0, 1, 2, 3], [0, 1]], closed="right", device="cpu")
    assert left["count"].to_list() == [1, 1, 2]
    assert right["count"].to_list() == [2, 1, 1]


def test_a_series_given_twice_is_a_clear_error() -> None:
    # As the expression with one column twice: the cells' fields would share their names.
    x = pl.Series("x", [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"column 'x' appears twice: .*\.alias"):
        gh.histogram2d(x, x, bins=2)
    counts = gh.histogram2d(x, x.alias("x2"), bins=2)["count"].to_numpy()
    np.testing.assert_array_equal(counts, np.histogram2d(x, x, bins=2)[0].ravel())


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda f: gh.histogramdd("x", bins=3), "2 to 8 columns"),
        (lambda f: gh.histogramdd(*(["x"] * 9), bins=2), "2 to 8 columns"),
        (lambda f: gh.histogramdd("x", pl.col("y").head(2), bins=2), "same length"),
        (lambda f: gh.histogramdd("x", "y", bins=[2, 3, 4]), "entries for 2"),
        (lambda f: gh.histogramdd("x", "y", range=[(0, 1)]), "entries for 2"),
        (lambda f: gh.histogramdd("x", "y", bins=[1 << 15, 1 << 15]), "cells"),
        (lambda f: gh.histogramdd("x", "x", bins=2), "appears twice"),
        (lambda f: gh.histogramdd("x", "s", bins=2), "String"),
        (lambda f: gh.histogramdd("x", "y", bins=[[0, 1], 2], range=[(0, 1), None]), "range"),
    ],
)
def test_bad_arguments_are_clear_errors(call: Any, message: str) -> None:
    frame = pl.DataFrame({"x": [1.0, 2.0, 3.0], "y": [1, 2, 3], "s": ["a", "b", "c"]})
    with pytest.raises((pl.exceptions.PolarsError, ValueError, TypeError), match=message):
        frame.select(call(frame))
