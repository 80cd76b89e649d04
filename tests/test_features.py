"""What users of numpy, Polars and hist expect (issue 15): numpy's bin estimators, integer bins,
flow bins, the Series namespace, each against its reference."""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import polars_gpu_hist as gh
from polars_gpu_hist._args.arguments import MAX_BINS
from strategies import numpy_bin_count

ESTIMATORS = ["auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt"]

floats64 = hnp.arrays(
    np.float64,
    st.integers(1, 300),
    elements=st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
)


@pytest.mark.parametrize("estimator", ESTIMATORS)
@settings(max_examples=60, deadline=None)
@given(x=floats64)
@example(x=np.array([2.0**18, 1.0, 0, 0, 0, 0, 0, 0]))  # "fd": 2^20 bins, numpy's as ours
@example(x=np.array([0, 0, 0, 1e-3, 1e-3, 1e-3, 1e-3, 2e6]))  # "fd": 2e9 bins, refused
def test_estimators_give_numpys_edges_and_counts(estimator: str, x: np.ndarray) -> None:
    count = numpy_bin_count(x, estimator)
    if count is None or count > MAX_BINS:
        # numpy cannot make that many edges (or we refuse past MAX_BINS): neither do we.
        with pytest.raises(pl.exceptions.PolarsError):
            gh.histogram(x, estimator, device="cpu")
        return
    if count > 1 << 22:
        # Both can, but a frame of millions of rows per example is too slow to compare here.
        return
    expected, edges = np.histogram(x, estimator)
    out = gh.histogram(x, estimator, device="cpu")
    assert out["count"].to_list() == expected.tolist()
    assert out["bin_start"].to_list() == edges[:-1].tolist()
    assert out["bin_end"][-1] == edges[-1]


@pytest.mark.parametrize("estimator", ESTIMATORS)
@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.uint8, np.int64])
def test_estimators_per_dtype_and_with_a_range(estimator: str, dtype: type) -> None:
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(5000) * 40 + 100).astype(dtype)
    for range in [None, (50, 150)]:
        expected, edges = np.histogram(x, estimator, range=range)
        out = gh.histogram(pl.Series(x), estimator, range=range, device="cpu")
        assert out["count"].to_list() == expected.tolist(), range
        assert out["bin_start"].to_list() == edges[:-1].astype(np.float64).tolist()


@pytest.mark.parametrize("rule", ["auto", "fd", "sturges", "sqrt"])
def test_estimators_refuse_weights_as_numpy_does_where_the_call_is_written(rule: str) -> None:
    # numpy raises TypeError; so does every form here, at the call, before any query runs.
    with pytest.raises(TypeError, match="weighted data"):
        np.histogram(np.arange(10.0), rule, weights=np.ones(10))
    calls = [
        lambda: gh.histogram(np.arange(10.0), rule, weights=np.ones(10), device="cpu"),
        lambda: pl.col("x").gpu_hist.histogram(bins=rule, weights="w"),
        lambda: gh.histogram_expr("x", rule, weights="w", by="g"),
        lambda: pl.Series([1.0]).gpu_hist.histogram(rule, weights=[1.0]),
        lambda: gh.histogramdd(np.ones(3), np.ones(3), bins=[3, rule], weights=np.ones(3)),
    ]
    for call in calls:
        with pytest.raises(TypeError, match=f'`bins="{rule}"` cannot be combined with `weights`'):
            call()


def test_estimators_in_the_expression_per_dimension_and_per_group() -> None:
    rng = np.random.default_rng(3)
    df = pl.DataFrame({"x": rng.normal(size=2000), "y": rng.random(2000), "g": [0, 1] * 1000})
    out = df.select(pl.col("x").gpu_hist.histogram("fd")).unnest("x")
    expected, _ = np.histogram(df["x"].to_numpy(), "fd")
    assert out["count"].to_list() == expected.tolist()
    by = df.select(pl.col("x").gpu_hist.histogram("sqrt", by="g")).unnest("x")
    assert by.height == 2 * (len(np.histogram_bin_edges(df["x"].to_numpy(), "sqrt")) - 1)


@pytest.mark.parametrize("rules", [["sturges", 4], ["fd", "auto"], [[0, 0.5, 1], "doane"]])
def test_estimators_per_dimension_give_numpys_edges_and_counts(rules: list) -> None:
    # numpy.histogramdd takes no estimator: each column's numpy.histogram_bin_edges, then
    # numpy.histogramdd over those edges.
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=2000), rng.gamma(2.0, size=2000)
    dd = gh.histogramdd(pl.Series("x", x), pl.Series("y", y), bins=rules, device="cpu")
    edges = [
        np.histogram_bin_edges(column, rule) if isinstance(rule, (str, int)) else np.array(rule)
        for column, rule in zip((x, y), rules)
    ]
    expected, _ = np.histogramdd(np.column_stack([x, y]), bins=edges)
    assert dd["count"].to_list() == expected.ravel().tolist()
    grid = np.meshgrid(edges[0][:-1], edges[1][:-1], indexing="ij")
    assert dd["x_start"].to_list() == grid[0].ravel().tolist()
    assert dd["y_start"].to_list() == grid[1].ravel().tolist()
    assert dd["x_end"].max() == edges[0][-1] and dd["y_end"].max() == edges[1][-1]


@settings(max_examples=80, deadline=None)
@given(
    x=hnp.arrays(np.int64, st.integers(1, 200), elements=st.integers(-50, 50)),
    dtype=st.sampled_from([pl.Int8, pl.Int32, pl.UInt16, pl.Int64]),
)
def test_integer_bins_are_numpy_arange_edges(x: np.ndarray, dtype: pl.DataType) -> None:
    if dtype == pl.UInt16:
        x = np.abs(x)
    s = pl.Series("x", x).cast(dtype)
    lo, hi = int(x.min()), int(x.max())
    expected, edges = np.histogram(x, bins=np.arange(lo, hi + 2))
    out = gh.histogram(s, "integer", device="cpu")
    assert out["count"].to_list() == expected.tolist()
    assert out["bin_start"].to_list() == edges[:-1].astype(float).tolist()


def test_integer_bins_with_a_range_and_on_dates() -> None:
    s = pl.Series("n", [0, 1, 1, 2, 5, 9])
    out = gh.histogram(s, "integer", range=(1, 4), device="cpu")
    assert out["bin_start"].to_list() == [1.0, 2.0, 3.0, 4.0]
    # numpy's last bin [4, 5] is closed: the 5 counts, as np.histogram(s, np.arange(1, 6)).
    expected, _ = np.histogram(s.to_numpy(), np.arange(1, 6))
    assert out["count"].to_list() == expected.tolist() == [2, 1, 0, 1]
    days = pl.Series("d", [dt.date(2024, 1, 1), dt.date(2024, 1, 3), dt.date(2024, 1, 3)])
    out = gh.histogram(days, "integer", device="cpu")
    assert out["bin_start"].to_list() == [dt.date(2024, 1, d) for d in (1, 2, 3)]
    assert out["count"].to_list() == [1, 0, 2]
    with pytest.raises(pl.exceptions.PolarsError, match="integer"):
        gh.histogram(pl.Series([0.5]), "integer", device="cpu")


def test_flow_rows_count_what_falls_outside_and_nan_above() -> None:
    x = pl.Series("x", [-5.0, 0.0, 0.5, 1.0, 7.0, float("nan"), None])
    out = gh.histogram(x, 2, range=(0, 1), flow=True, device="cpu")
    assert out["bin_start"].to_list() == [float("-inf"), 0.0, 0.5, 1.0]
    assert out["bin_end"].to_list() == [0.0, 0.5, 1.0, float("inf")]
    assert out["count"].to_list() == [1, 1, 2, 2]
    right = gh.histogram(x, 2, range=(0, 1), flow=True, closed="right", device="cpu")
    assert right["count"].to_list() == [1, 2, 1, 2]
    weighted = gh.histogram(x, 2, range=(0, 1), flow=True, weights=np.arange(7.0), device="cpu")
    assert weighted["count"].to_list() == [0.0, 1.0, 5.0, 9.0]


def test_flow_in_n_d_and_by_and_temporal_edges() -> None:
    x = pl.Series("x", [-1.0, 0.5, 2.0])
    y = pl.Series("y", [0.5, 0.5, 0.5])
    out = gh.histogramdd(x, y, bins=1, range=[(0, 1), (0, 1)], flow=True, device="cpu")
    assert out.height == 9
    assert out["count"].sum() == 3
    df = pl.DataFrame({"x": [-1.0, 0.5, 2.0], "g": [1, 1, 2]})
    by = df.select(pl.col("x").gpu_hist.histogram(1, range=(0, 1), flow=True, by="g")).unnest("x")
    assert by["count"].to_list() == [1, 1, 0, 0, 0, 1]
    days = pl.Series("d", [dt.date(2024, 1, 1), dt.date(2025, 1, 1)])
    out = gh.histogram(
        days, 1, range=(dt.date(2024, 6, 1), dt.date(2024, 7, 1)), flow=True, device="cpu"
    )
    assert out["bin_start"][0] is None and out["bin_end"][-1] is None
    # Refused where written, as every argument that cannot be used (not when a query runs).
    with pytest.raises(ValueError, match="flow"):
        gh.histogram(x, 2, range=(0, 1), flow=True, density=True, device="cpu")


def test_the_series_namespace_matches_the_expression() -> None:
    s = pl.Series("v", np.random.default_rng(0).random(1000))
    via_series = s.gpu_hist.histogram(8, range=(0, 1), device="cpu")
    via_expr = s.to_frame().select(pl.col("v").gpu_hist.histogram(8, range=(0, 1), device="cpu"))
    assert via_series.name == "v"
    assert via_series.to_frame().equals(via_expr)


@pytest.mark.parametrize("name", ["v", "w", "x", "__weights", ""])
def test_the_series_namespace_sums_weights_as_numpy(name: str) -> None:
    # A Series may be named like any temporary column: its values are still what is binned.
    rng = np.random.default_rng(1)
    x, w = rng.random(500), rng.integers(-3, 10, 500).astype(np.float64)
    s = pl.Series(name, x)
    out = s.gpu_hist.histogram(8, range=(0, 1), weights=pl.Series("w", w), device="cpu")
    expected, edges = np.histogram(x, 8, range=(0, 1), weights=w)
    assert out.name == name
    assert out.struct.field("count").to_list() == expected.tolist()
    assert out.struct.field("bin_start").to_list() == edges[:-1].tolist()
    density = s.gpu_hist.histogram(8, range=(0, 1), weights=w, density=True, device="cpu")
    expected, _ = np.histogram(x, 8, range=(0, 1), weights=w, density=True)
    np.testing.assert_allclose(density.struct.field("count").to_numpy(), expected, rtol=1e-12)


def test_histogramdd_weights_never_replace_a_column_of_their_name() -> None:
    x, y, w = np.array([0.1, 0.9, 0.9]), np.array([0.2, 0.2, 0.8]), np.array([1.0, 2.0, 4.0])
    out = gh.histogramdd(
        pl.Series("__weights", x), pl.Series("y", y), bins=2, range=[(0, 1), (0, 1)], weights=w
    )
    expected, _ = np.histogramdd(np.column_stack([x, y]), 2, range=[(0, 1), (0, 1)], weights=w)
    assert out["count"].to_list() == expected.ravel().tolist()


def test_flow_bins_are_boost_histograms_but_at_the_last_edge() -> None:
    bh = pytest.importorskip("boost_histogram")
    inside = [0.0, 0.1, 0.25, 0.5, 0.75, 0.999]
    outside = [-1e300, -np.inf, -5.0, -1e-12, 1.0 + 1e-12, 7.0, np.inf, np.nan]
    x = np.array(inside + outside)
    for edges in ([0.0, 0.5, 1.0], [0.0, 0.3, 0.7, 1.0]):
        boost = bh.Histogram(bh.axis.Variable(edges)).fill(x).view(flow=True)
        ours = gh.histogram(x, edges, flow=True, device="cpu")
        assert ours["count"].to_list() == boost.tolist()
        # A value on the last edge: numpy's last bin is closed, so it stays in the last bin,
        # where boost-histogram's half-open last bin sends it to the overflow.
        on_edge = np.append(x, 1.0)
        boost = bh.Histogram(bh.axis.Variable(edges)).fill(on_edge).view(flow=True)
        ours = gh.histogram(on_edge, edges, flow=True, device="cpu")["count"].to_numpy()
        assert ours[-2] == boost[-2] + 1 and ours[-1] == boost[-1] - 1
        np.testing.assert_array_equal(ours[:-2], boost[:-2])
    regular = bh.Histogram(bh.axis.Regular(4, 0.0, 1.0)).fill(x).view(flow=True)
    ours = gh.histogram(x, 4, range=(0, 1), flow=True, device="cpu")
    assert ours["count"].to_list() == regular.tolist()
    # The rows name what they hold: [-inf, first edge) and (last edge, +inf].
    assert ours["bin_start"][0] == -np.inf and ours["bin_end"][-1] == np.inf


@pytest.mark.parametrize(
    ("call", "text"),
    [
        (lambda: gh.histogram(pl.Series([0.5]), "integer"), '`bins="integer"` needs an integer'),
        (
            lambda: gh.histogram(np.arange(3.0), "fd", weights=np.ones(3)),
            '`bins="fd"` cannot be combined with `weights`',
        ),
        (lambda: gh.histogram(pl.Series([0.0, np.inf]), 3), "pass `range=(min, max)`"),
        (lambda: gh.histogram(pl.Series([0.0, np.inf]), "sqrt"), "pass `range=(min, max)`"),
        (lambda: gh.Histogram(3, range=(0, 1)).fill([0.5], weights=[1.0]), "`weights=True`"),
        (lambda: gh.explain(pl.Float64, "auto"), '`bins="auto"` estimates the bins'),
    ],
)
def test_native_errors_name_python_keywords_not_rust_types(call: Any, text: str) -> None:
    # The Rust API words the same errors in its own terms (tests/rust_api.rs).
    with pytest.raises(Exception) as raised:
        call()
    message = str(raised.value)
    assert text in message, message
    assert "BinRule" not in message and "Storage::" not in message and "Some((" not in message
