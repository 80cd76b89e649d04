"""Equi-height bins on the GPU: ``bins=gh.quantile_bins(k)`` of CuPy and PyTorch arrays (edges
from a host copy, counted where the array lies) and of host columns with ``device="gpu"``, equal
to numpy's histogram of numpy's quantiles (run on a machine with a GPU: -m gpu)."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh


def _expected(x: np.ndarray[Any, Any], k: int, method: str) -> list[int]:
    valid = x[~np.isnan(x)] if x.dtype.kind == "f" else x
    edges = np.quantile(valid, np.linspace(0, 1, k + 1), method=method)  # type: ignore[call-overload]
    return np.histogram(valid, bins=edges)[0].tolist()  # type: ignore[no-any-return]


def _sample(dtype: Any) -> np.ndarray[Any, Any]:
    rng = np.random.default_rng(11)
    x = rng.lognormal(size=2_000_000)
    if np.dtype(dtype).kind == "f":
        x[::1001] = np.nan
        return x.astype(dtype)
    return (x * 1000).astype(dtype)


@pytest.mark.parametrize("k", [10, 256, 65_536])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_cupy_arrays(k: int, dtype: Any) -> None:
    cp = pytest.importorskip("cupy")
    x = _sample(dtype)
    got = gh.histogram(cp.asarray(x), bins=gh.quantile_bins(k, "median_unbiased"))
    assert got["count"].to_list() == _expected(x, k, "median_unbiased")


def test_torch_tensors() -> None:
    torch = pytest.importorskip("torch")
    x = _sample(np.float32)
    got = gh.histogram(torch.from_numpy(x).cuda(), bins=gh.quantile_bins(100))
    assert got["count"].to_list() == _expected(x, 100, "linear")


@pytest.mark.parametrize("k", [10, 65_536])
def test_host_columns_counted_on_the_gpu(k: int) -> None:
    x = _sample(np.float64)
    s = pl.Series("x", x, nan_to_null=False)
    expected = _expected(x, k, "linear")
    assert gh.histogram(s, bins=gh.quantile_bins(k), device="gpu")["count"].to_list() == expected
    expr = pl.col("x").gpu_hist.histogram(bins=gh.quantile_bins(k), device="gpu")
    assert s.to_frame().select(expr).unnest("x")["count"].to_list() == expected
