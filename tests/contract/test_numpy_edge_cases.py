"""Where a silent disagreement with numpy could hide: ranges at and past the float limits,
histogramdd's common dtype, a NaN in one column, ranges of numpy float32 scalars."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh


def test_float32_column_with_a_range_wider_than_float32() -> None:
    m = 3.4028234663852886e38
    x = np.array([-1.0, 0.0, 1.0], np.float32)
    assert gh.histogram(x, 4, range=(-m, m), device="cpu")["count"].to_list() == [0, 1, 2, 0]
    x = np.array([-1e38, 0, 1e38], np.float32)
    expected, _ = np.histogram(x, 4, range=(-2e38, 2e38))
    assert gh.histogram(x, 4, range=(-2e38, 2e38), device="cpu")["count"].to_list() == (
        expected.tolist()
    )
    h = gh.Histogram(4, range=(-2e38, 2e38))
    h.fill(pl.Series(x))
    assert h.counts.tolist() == expected.tolist()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_float32_span_wider_than_float32_places_values_by_the_edges() -> None:
    m = float(np.finfo(np.float32).max)
    edges = np.histogram_bin_edges(np.zeros(1, np.float32), 5, range=(-m, m))
    # Just below, on and above numpy's float32 edges, near both ends of float32.
    x = np.concatenate([edges, np.nextafter(edges, np.inf), np.nextafter(edges, -np.inf)])
    x = x.astype(np.float32)
    with pytest.raises(IndexError):  # numpy's float32 `x - min` overflows
        np.histogram(x, 5, range=(-m, m))
    got = gh.histogram(x, 5, range=(-m, m), device="cpu")
    inside = x[(x >= edges[0]) & (x <= edges[-1])]
    index = np.minimum(np.searchsorted(edges, inside, side="right") - 1, 4)
    assert got["count"].to_list() == np.bincount(index, minlength=5).tolist()
    assert got["bin_start"].to_list() == edges[:-1].astype(np.float64).tolist()


def test_a_range_wider_than_float64_keeps_finite_edges_and_counts_everything() -> None:
    out = gh.histogram(pl.Series([-1e308, 0.0, 1e308]), 1, range=(-1e308, 1.5e308), device="cpu")
    assert out["count"].to_list() == [3]
    assert out["bin_start"].to_list() == [-1e308]
    out = gh.histogram(pl.Series([-1e308, 0.0, 1e308]), 4, range=(-1e308, 1e308), device="cpu")
    assert all(np.isfinite(out["bin_start"].to_numpy()))
    assert out["count"].sum() == 3


def test_histogramdd_bins_the_sample_of_the_common_dtype() -> None:
    x = pl.Series("x", [0, 1000, 0], dtype=pl.Int16)
    y = pl.Series("y", [0, 7, 0], dtype=pl.UInt16)
    z = pl.Series("z", [0, 0.3, 0.1], dtype=pl.Float32)
    # numpy stacks a sequence of columns with pairwise promotion: int16, uint16 -> int32, then
    # with float32 -> float64 (np.stack's result_type would say float32).
    expected, _ = np.histogramdd((x.to_numpy(), y.to_numpy(), z.to_numpy()), bins=[1, 1, 3])
    assert expected.ravel().tolist() == [2, 0, 1]
    out = gh.histogramdd(x, y, z, bins=[1, 1, 3], device="cpu")
    assert out["count"].to_list() == expected.ravel().astype(int).tolist()


def test_a_nan_in_one_column_does_not_change_another_columns_range() -> None:
    x = pl.Series("x", [np.nan, 0.5, 0.7])
    y = pl.Series("y", [0.0, 5.0, 10.0])
    out = gh.histogramdd(x, y, bins=[[0, 1], 2], device="cpu")
    assert out["y_start"].to_list() == [0.0, 5.0]
    assert out["count"].to_list() == [0, 2]


def test_a_range_of_numpy_float32_scalars_makes_float32_edges() -> None:
    x = np.random.default_rng(2).random(1000)
    r = (np.float32(0.1), np.float32(0.7))
    expected, edges = np.histogram(x, 7, range=r)
    out = gh.histogram(x, 7, range=r, device="cpu")
    assert out["count"].to_list() == expected.tolist()
    assert out["bin_start"].to_list() == edges[:-1].tolist()
