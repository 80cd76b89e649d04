"""The flow of fills from GPU memory (marker `gpu`): rows classified where they lie, the same as
the host fill classifies them."""

from __future__ import annotations

import numpy as np
import pytest

import polars_gpu_hist as gh


@pytest.fixture(scope="module")
def gpu() -> None:
    if not gh.gpu_available():
        pytest.skip("needs an NVIDIA GPU with a driver")


def sample() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    x = rng.normal(0.5, 0.6, 1 << 16)
    x[::101] = np.nan
    x[::997] = np.inf
    w = rng.integers(0, 4, x.size).astype(np.float64)
    return x, w


@pytest.mark.parametrize("library", ["cupy", "torch"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_device_flow_equals_the_host_flow(gpu: None, library: str, dtype: type) -> None:
    lib = pytest.importorskip(library)
    x, _ = sample()
    if np.dtype(dtype).kind == "i":
        x = np.nan_to_num(x * 10, nan=0.0, posinf=99.0).astype(dtype)
    else:
        x = x.astype(dtype)
    device = lib.asarray(x) if library == "cupy" else lib.as_tensor(x, device="cuda")
    on_gpu = gh.Histogram(32, range=(0, 1)).fill(device)
    on_host = gh.Histogram(32, range=(0, 1), device="cpu").fill(x)
    np.testing.assert_array_equal(on_gpu.counts, on_host.counts)
    assert on_gpu.flow == on_host.flow
    f = on_gpu.flow
    assert f.rows == x.size == f.counted + f.nan + f.underflow + f.overflow


def test_weighted_device_flow_and_n_d(gpu: None) -> None:
    cp = pytest.importorskip("cupy")
    x, w = sample()
    on_gpu = gh.Histogram(16, range=(0, 1), weights=True).fill(cp.asarray(x), cp.asarray(w))
    on_host = gh.Histogram(16, range=(0, 1), weights=True, device="cpu").fill(x, w)
    assert on_gpu.flow == on_host.flow
    np.testing.assert_allclose(on_gpu.values(flow=True), on_host.values(flow=True))
    np.testing.assert_allclose(on_gpu.variances(flow=True), on_host.variances(flow=True))
    y = np.roll(x, 7)
    dd_gpu = gh.Histogram([4, 4], range=[(0, 1), (0, 1)]).fill(cp.asarray(x), cp.asarray(y))
    dd_host = gh.Histogram([4, 4], range=[(0, 1), (0, 1)], device="cpu").fill(x, y)
    np.testing.assert_array_equal(dd_gpu.counts, dd_host.counts)
    assert dd_gpu.flow == dd_host.flow
