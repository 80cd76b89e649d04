"""Equi-height bins (``bins=gh.quantile_bins(k, method)``): edges equal to numpy's quantiles of
the valid values under every method numpy names, counts equal to ``numpy.histogram`` of those
edges (ties and repeated edges included), the same in the function, the Series namespace, the
expression (select, lazy, streaming, group_by().agg() per group) and with weights; the errors
raised where they are written."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import polars_gpu_hist as gh
from polars_gpu_hist._args.quantile_bins import METHODS

DTYPES = [pl.Float64, pl.Float32, pl.Int64, pl.Int32, pl.UInt8]


@st.composite
def columns(draw: st.DrawFn) -> pl.Series:
    """A numeric column with ties, nulls and (for floats) NaN; at least one valid value."""
    dtype = draw(st.sampled_from(DTYPES))
    pool = draw(st.lists(st.integers(0, 200), min_size=1, max_size=6))
    values: list[Any] = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=60))
    if dtype.is_float():
        scale = draw(st.sampled_from([1.0, 0.37, -1e-3, 1e30]))
        values = [v * scale for v in values]
        if draw(st.booleans()):
            values.append(float("nan"))
    if draw(st.booleans()):
        values.insert(draw(st.integers(0, len(values))), None)
    return pl.Series("x", values, dtype=dtype, strict=False)


def _valid(s: pl.Series) -> np.ndarray[Any, Any]:
    s = s.drop_nulls()
    return (s.drop_nans() if s.dtype.is_float() else s).to_numpy()


def _numpy(s: pl.Series, k: int, method: str) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    values = _valid(s)
    edges = np.quantile(values, np.linspace(0, 1, k + 1), method=method)  # type: ignore[call-overload]
    counts, _ = np.histogram(values, bins=edges)
    return counts, edges


@given(columns(), st.integers(1, 12), st.sampled_from(METHODS))
def test_counts_and_edges_equal_numpy(s: pl.Series, k: int, method: Any) -> None:
    counts, edges = _numpy(s, k, method)
    bins = gh.quantile_bins(k, method)
    assert bins.edges(s) == edges.tolist()
    got = gh.histogram(s, bins=bins)
    assert got["count"].to_list() == counts.tolist()
    assert got["bin_start"].to_list() == edges[:-1].tolist()
    assert got["bin_end"].to_list() == edges[1:].tolist()
    assert s.gpu_hist.histogram(bins=bins).struct.unnest().equals(got)
    assert gh.histogram(s.to_numpy(), bins=bins).equals(got)


@given(columns(), st.integers(1, 6))
def test_expression_equals_the_function(s: pl.Series, k: int) -> None:
    bins = gh.quantile_bins(k)
    expected = gh.histogram(s, bins=bins)
    expr = pl.col("x").gpu_hist.histogram(bins=bins)
    frame = s.to_frame()
    assert frame.select(expr).unnest("x").equals(expected)
    lazy = frame.lazy().select(expr).collect(engine="streaming")
    assert lazy.unnest("x").equals(expected)


def test_groups_take_their_own_quantiles() -> None:
    df = pl.DataFrame({"g": [1, 1, 1, 2, 2, 2, 2], "x": [1.0, 2.0, 3.0, 10.0, 20.0, 30.0, 40.0]})
    got = df.group_by("g", maintain_order=True).agg(
        pl.col("x").gpu_hist.histogram(bins=gh.quantile_bins(2))
    )
    for key, part in zip(got["g"], got["x"]):
        values = df.filter(pl.col("g") == key)["x"]
        expected = gh.histogram(values, bins=gh.quantile_bins(2))
        assert pl.DataFrame(part.to_list()).equals(expected)


def test_weights_and_density() -> None:
    df = pl.DataFrame({"x": [1.0, 2.0, 2.0, 3.0, 8.0], "w": [0.5, 1.0, 2.0, 0.25, 4.0]})
    edges = np.quantile(df["x"].to_numpy(), np.linspace(0, 1, 3))
    weighted, _ = np.histogram(df["x"].to_numpy(), bins=edges, weights=df["w"].to_numpy())
    expr = pl.col("x").gpu_hist.histogram(bins=gh.quantile_bins(2), weights="w")
    assert df.select(expr).unnest("x")["count"].to_list() == weighted.tolist()
    dense, _ = np.histogram(df["x"].to_numpy(), bins=edges, density=True)
    got = gh.histogram(df["x"], bins=gh.quantile_bins(2), density=True)
    assert got["count"].to_list() == dense.tolist()


def test_repeated_edges_leave_empty_bins_as_numpy() -> None:
    s = pl.Series("x", [1, 1, 1, 1, 2, 3])
    counts, edges = _numpy(s, 3, "linear")
    assert edges[0] == edges[1]
    assert gh.histogram(s, bins=gh.quantile_bins(3))["count"].to_list() == counts.tolist()


def test_errors_where_written() -> None:
    with pytest.raises(TypeError, match="number of bins"):
        gh.quantile_bins(2.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="1 to"):
        gh.quantile_bins(0)
    with pytest.raises(ValueError, match=r"numpy\.quantile's methods"):
        gh.quantile_bins(4, "cubic")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`range` cannot be combined"):
        pl.col("x").gpu_hist.histogram(bins=gh.quantile_bins(4), range=(0, 1))
    with pytest.raises(ValueError, match="`by=` shares one binning"):
        pl.col("x").gpu_hist.histogram(bins=gh.quantile_bins(4), by="g")
    with pytest.raises(ValueError, match="`range` cannot be combined"):
        gh.histogram([1.0, 2.0], bins=gh.quantile_bins(4), range=(0, 1))
    with pytest.raises(ValueError, match="at least one valid value"):
        gh.histogram(pl.Series([None, float("nan")]), bins=gh.quantile_bins(2))
    for other in (
        pl.Series(["a"]),
        pl.Series([1], dtype=pl.Decimal(10, 2)),
        pl.Series([1], dtype=pl.Int128),
    ):
        with pytest.raises(TypeError, match="numeric column numpy holds"):
            gh.histogram(other, bins=gh.quantile_bins(2))
    inf = [float("-inf"), 0.0, 1.0, float("inf")]
    with pytest.raises(ValueError, match="NaN edge"):
        gh.histogram(inf, bins=gh.quantile_bins(2))
    got = gh.histogram(inf, bins=gh.quantile_bins(2, "lower"))
    assert got["count"].to_list() == np.histogram(inf, bins=[-np.inf, 0.0, np.inf])[0].tolist()


def test_fixed_edge_histograms_take_the_edges_from_the_caller() -> None:
    sample = pl.Series("x", [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 100.0])
    with pytest.raises(TypeError, match=r"quantile_bins\(k\)\.edges\(sample\)"):
        gh.Histogram(bins=gh.quantile_bins(4))
    hist = gh.Histogram(bins=gh.quantile_bins(4).edges(sample))
    hist.fill(sample)
    assert hist.to_frame().equals(gh.histogram(sample, bins=gh.quantile_bins(4)))
