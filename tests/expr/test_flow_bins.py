"""`flow=True`: rows for what falls below, above or is NaN, in 1-D, n-D, `by=` and temporal
edges, against boost-histogram's flow bins."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh


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
