"""The mergeable Histogram on a GPU (marker `gpu`): device arrays and host batches, exact counts.

Runs without the project's conftest too (scripts/dask_gpu_check.sh), so it checks for a GPU itself.
"""

from __future__ import annotations

import numpy as np
import pytest

import polars_gpu_hist as gh


@pytest.fixture(scope="module")
def gpu() -> None:
    if not gh.gpu_available():
        pytest.skip("needs an NVIDIA GPU with a driver")


def test_host_batches_on_the_gpu_equal_numpy(gpu: None) -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(0.5, 0.2, 1 << 22).astype(np.float32)
    h = gh.Histogram(4096, range=(0, 1), device="gpu")
    for part in np.array_split(x, 7):
        h.fill(part)
    expected, edges = np.histogram(x, bins=4096, range=(0, 1))
    np.testing.assert_array_equal(h.counts, expected, strict=False)
    np.testing.assert_array_equal(h.edges, edges.astype(np.float64))


def test_device_arrays_merge_with_host_batches(gpu: None) -> None:
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(1)
    x = rng.random(1 << 21)
    w = rng.integers(0, 4, x.size).astype(np.float64)
    edges = np.sort(rng.random(257))
    on_gpu = gh.Histogram(edges, weights=True).fill(cp.asarray(x[:1000]), cp.asarray(w[:1000]))
    on_cpu = gh.Histogram(edges, weights=True, device="cpu").fill(x[1000:], w[1000:])
    expected, _ = np.histogram(x, bins=edges, weights=w)
    np.testing.assert_array_equal((on_gpu + on_cpu).counts, expected)
    with pytest.raises(ValueError, match="float64 GPU array"):
        on_gpu.fill(cp.asarray(x), cp.asarray(w, dtype=cp.float32))


def test_statistics_and_conversions_of_a_gpu_fill_equal_the_cpu_ones(gpu: None) -> None:
    # Issue 32 item 5: quantile/mean/std and to_boost read the same counts and flow whether the
    # fill ran on the GPU (device arrays through CuPy or PyTorch, classified where they lie).
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.normal(0.5, 0.3, 1 << 20), [np.nan, -3.0, 4.0]])
    on_cpu = gh.Histogram(512, range=(0, 1), device="cpu").fill(x)
    on_gpu = gh.Histogram(512, range=(0, 1), device="gpu").fill(x)
    arrays = [on_gpu]
    for module in ("cupy", "torch"):
        try:
            lib = __import__(module)
        except ImportError:
            continue
        device_x = lib.asarray(x) if module == "cupy" else lib.as_tensor(x, device="cuda")
        arrays.append(gh.Histogram(512, range=(0, 1)).fill(device_x))
    for h in arrays:
        assert h == on_cpu and h.flow == on_cpu.flow
        assert h.quantile([0.1, 0.5, 0.9]).tolist() == on_cpu.quantile([0.1, 0.5, 0.9]).tolist()
        assert (h.mean(), h.std(), h.sum(flow=True)) == (
            on_cpu.mean(),
            on_cpu.std(),
            on_cpu.sum(flow=True),
        )
    bh = pytest.importorskip("boost_histogram")
    np.testing.assert_array_equal(bh.Histogram(on_gpu).values(flow=True), on_cpu.values(flow=True))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint64"])
def test_the_flow_counted_in_the_kernels_equals_the_host_fill(gpu: None, dtype: str) -> None:
    # Issue 35: a column in GPU memory has its flow counted in the kernels' one pass (three flow
    # bins, NaN apart): NaN, values on and past both edges, several million rows.
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(7)
    n = 3 * (1 << 20) + 12_345
    if dtype.startswith("float"):
        x = rng.normal(0.5, 0.4, n).astype(dtype)
        x[::1001] = np.nan
        # Subnormals on both sides of the first edge (a kernel that flushes them to zero
        # counts the negative ones in range).
        x[:4] = [0.0, 1.0, np.nextafter(np.float32(0), -1), np.nextafter(np.float32(1), 2)]
        x[4:6] = [-1e-40, 1e-40]
    else:
        x = rng.integers(0, 300, n).astype(dtype)
    lo, hi = (0.0, 1.0) if dtype.startswith("float") else (10.0, 250.0)
    on_gpu = gh.Histogram(333, range=(lo, hi)).fill(cp.asarray(x))
    on_cpu = gh.Histogram(333, range=(lo, hi), device="cpu").fill(x)
    assert on_gpu == on_cpu and on_gpu.flow == on_cpu.flow
    assert on_gpu.flow.nan + on_gpu.flow.underflow + on_gpu.flow.overflow > 0
