"""The numpy drop-in on device arrays: counts left on the CuPy or PyTorch device,
histogramdd, repeated edges, booleans, complex and host weights, memory of another GPU or of the
host, expandable segments, managed and page-locked memory (run on a machine with a GPU: -m gpu)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh
import polars_gpu_hist.numpy as ghnp

cp = pytest.importorskip("cupy")


# ---- issue 12.2: the numpy drop-in on device arrays ----


@pytest.mark.parametrize("bins", [16, 256, 65_536, 1 << 20])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
def test_the_numpy_module_on_cupy_keeps_counts_on_the_device(bins: int, dtype) -> None:
    rng = np.random.default_rng(bins)
    x = (rng.random(1 << 20) * 200).astype(dtype)
    expected, edges = np.histogram(x, bins)
    got, got_edges = ghnp.histogram(cp.asarray(x), bins)
    assert isinstance(got, cp.ndarray) and got.dtype == cp.int64
    assert isinstance(got_edges, cp.ndarray) and got_edges.dtype == edges.dtype
    np.testing.assert_array_equal(got.get(), expected)
    np.testing.assert_array_equal(got_edges.get(), edges)
    d, _ = ghnp.histogram(cp.asarray(x), bins, density=True)
    np.testing.assert_allclose(d.get(), np.histogram(x, bins, density=True)[0], rtol=1e-12)


def test_the_numpy_module_on_torch_returns_tensors_on_the_same_device() -> None:
    torch = pytest.importorskip("torch")
    x = torch.rand(1 << 20, device="cuda")
    w = torch.rand(1 << 20, device="cuda", dtype=torch.float64)
    expected, edges = np.histogram(x.cpu().numpy(), 100, weights=w.cpu().numpy())
    got, got_edges = ghnp.histogram(x, 100, weights=w)
    assert isinstance(got, torch.Tensor) and got.device == x.device
    assert got.dtype == torch.float64
    np.testing.assert_allclose(got.cpu().numpy(), expected, rtol=1e-12)
    np.testing.assert_array_equal(got_edges.cpu().numpy(), edges)
    h, xe, _ = ghnp.histogram2d(x, x * 0.5, bins=32)
    he, xe_np, _ = np.histogram2d(x.cpu().numpy(), (x * 0.5).cpu().numpy(), bins=32)
    np.testing.assert_array_equal(h.cpu().numpy(), he)
    np.testing.assert_array_equal(xe.cpu().numpy(), xe_np)


def test_the_numpy_module_histogramdd_on_cupy() -> None:
    xyz = cp.random.default_rng(9).random((1 << 18, 3), dtype=cp.float32)
    expected, edges = np.histogramdd(xyz.get(), bins=[8, 4, 2])
    got, got_edges = ghnp.histogramdd(xyz, bins=[8, 4, 2])
    assert got.shape == (8, 4, 2)
    np.testing.assert_array_equal(got.get(), expected)
    for a, b in zip(got_edges, edges):
        np.testing.assert_array_equal(a.get(), b)


def _library_arrays(x: np.ndarray) -> list:
    """`x` as a CuPy array and, where PyTorch is installed, a CUDA tensor."""
    out = [cp.asarray(x)]
    try:
        import torch
    except ImportError:
        return out
    return [*out, torch.as_tensor(x, device="cuda")]


def _host(a) -> np.ndarray:
    return a.get() if isinstance(a, cp.ndarray) else a.cpu().numpy()


@pytest.mark.parametrize("edges", [[0.0, 0.25, 0.25, 0.5, 1.0, 1.0], [0.5, 0.5]])
def test_the_numpy_module_takes_repeated_edges_on_the_device(edges: list) -> None:
    x = np.random.default_rng(3).random(1 << 20)
    x[::97] = 0.25
    x[::89] = 1.0
    x[::83] = 0.5
    expected, _ = np.histogram(x, edges)
    expected_dd, _ = np.histogramdd(np.column_stack([x, x]), [edges, [0.0, 0.5, 0.5, 1.0]])
    for a in _library_arrays(x):
        got, got_edges = ghnp.histogram(a, edges)
        np.testing.assert_array_equal(_host(got), expected)
        np.testing.assert_array_equal(_host(got_edges), edges)
        got_dd, _ = ghnp.histogramdd([a, a], [edges, [0.0, 0.5, 0.5, 1.0]])
        np.testing.assert_array_equal(_host(got_dd), expected_dd)


@pytest.mark.filterwarnings("ignore:Converting input from bool")
def test_the_numpy_module_counts_device_booleans_as_numpy() -> None:
    x = np.random.default_rng(4).random(1 << 16) < 0.3
    y = np.ascontiguousarray(x[::-1])
    expected, edges = np.histogram(x, 3)
    expected_2d = np.histogram2d(x, y, 2)[0]
    for a, b in zip(_library_arrays(x), _library_arrays(y)):
        got, got_edges = ghnp.histogram(a, 3)
        np.testing.assert_array_equal(_host(got), expected)
        np.testing.assert_array_equal(_host(got_edges), edges)
        np.testing.assert_array_equal(_host(ghnp.histogram2d(a, b, 2)[0]), expected_2d)


def test_the_numpy_module_sums_complex_weights_on_the_device() -> None:
    rng = np.random.default_rng(5)
    x = rng.random(1 << 18)
    w = rng.random(1 << 18) + 1j * rng.random(1 << 18)
    expected, _ = np.histogram(x, 64, weights=w)
    for a, wa in zip(_library_arrays(x), _library_arrays(w)):
        got, _ = ghnp.histogram(a, 64, weights=wa)
        assert type(got) is type(a)
        np.testing.assert_allclose(_host(got), expected, rtol=1e-12)
        assert _host(got).dtype == np.complex128


def test_the_numpy_module_takes_host_weights_beside_device_data() -> None:
    x = np.random.default_rng(7).random(1000)
    w = np.arange(1000) % 7
    expected, _ = np.histogram(x, 10, weights=w)
    for a in _library_arrays(x):
        for weights in (w, w.tolist()):
            got, _ = ghnp.histogram(a, 10, weights=weights)
            assert type(got) is type(a)
            np.testing.assert_array_equal(_host(got), expected)


def test_the_numpy_module_histogramdd_of_one_dimension_on_the_device() -> None:
    x = (np.random.default_rng(6).random(1 << 18) * 100).astype(np.float32)
    for kwargs in ({}, {"range": [(10.0, 60.0)]}):
        expected, edges = np.histogramdd(x[:, None], 33, **kwargs)
        for a in _library_arrays(x):
            for sample in (a[:, None], [a], a):
                got, got_edges = ghnp.histogramdd(sample, 33, **kwargs)
                assert got.shape == (33,)
                np.testing.assert_array_equal(_host(got), expected)
                assert _host(got_edges[0]).dtype == edges[0].dtype
                np.testing.assert_array_equal(_host(got_edges[0]), edges[0])


FAR_MESSAGE = (
    r"is in the memory of GPU 1, but polars-gpu-hist counts on GPU 0 \(the first this process "
    r"sees\): copy it there, or start the process with CUDA_VISIBLE_DEVICES=1 to count on that "
    r"GPU"
)


def test_an_array_on_another_gpu_is_refused_and_the_next_call_works() -> None:
    if cp.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs two GPUs")
    with cp.cuda.Device(1):
        far = cp.arange(1 << 16, dtype=cp.float32)
    near = cp.arange(1 << 16, dtype=cp.float32)
    host = near.get()
    calls = [
        (lambda a: gh.histogram(a, 10)["count"].to_numpy(), np.histogram(host, 10)[0]),
        (lambda a: ghnp.histogram(a, 10)[0].get(), np.histogram(host, 10)[0]),
        (
            lambda a: ghnp.histogram(a, 10, range=(0.0, 1e5))[0].get(),
            np.histogram(host, 10, range=(0.0, 1e5))[0],
        ),
        (lambda a: ghnp.histogramdd([a, a], 10)[0].get(), np.histogramdd([host, host], 10)[0]),
    ]
    for call, expected in calls:
        with pytest.raises(ValueError, match=FAR_MESSAGE):
            call(far)
        # Nothing ran on the far memory, so the context is whole: the next call counts.
        np.testing.assert_array_equal(call(near), expected)
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match="memory of GPU 1"):
        ghnp.histogram(torch.arange(100.0, device="cuda:1"), 10)
    assert ghnp.histogram(torch.arange(100.0, device="cuda:0"), 10)[0].sum().item() == 100


def test_tensors_from_torch_expandable_segments_are_counted() -> None:
    # PyTorch maps these with the driver's virtual memory calls: still memory CUDA knows.
    pytest.importorskip("torch")
    script = (
        "import numpy as np, torch, polars_gpu_hist.numpy as ghnp\n"
        "x = torch.rand(1 << 20, device='cuda')\n"
        "got = ghnp.histogram(x, 64)[0].cpu().numpy()\n"
        "assert (got == np.histogram(x.cpu().numpy(), 64)[0]).all()\n"
        "print('ok')\n"
    )
    env = dict(os.environ, PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True")
    run = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0 and "ok" in run.stdout, run.stderr[-2000:]


def test_a_host_pointer_given_as_device_memory_is_refused() -> None:
    class FakeDevice:
        def __init__(self, host: np.ndarray) -> None:
            self._host = host
            self.dtype, self.shape = host.dtype, host.shape  # as Numba's and CuPy's arrays
            self.__cuda_array_interface__ = {
                "shape": host.shape,
                "typestr": host.dtype.str,
                "data": (host.ctypes.data, False),
                "version": 3,
                "strides": None,
            }

    # The type is the API's (docs/semantics.md, src/boundary.rs): numpy's ValueError from the
    # numpy drop-in, Polars' ComputeError from the package's Polars API; the next call counts.
    x = np.arange(1000, dtype=np.float32)
    refusal = r"is not memory CUDA knows \(a host buffer given as GPU memory\?\)"
    with pytest.raises(ValueError, match=refusal) as raised:
        ghnp.histogram(FakeDevice(x), 10)
    assert not isinstance(raised.value, pl.exceptions.PolarsError)
    with pytest.raises(pl.exceptions.ComputeError, match=refusal):
        gh.histogram(FakeDevice(x), 10)
    assert gh.histogram(cp.asarray(x), 10)["count"].sum() == 1000
    assert ghnp.histogram(cp.asarray(x), 10)[0].sum() == 1000


def test_managed_and_page_locked_memory_are_counted_where_they_lie() -> None:
    # Both are memory CUDA knows (unified addressing): read in place by the kernels, counts
    # exact, and the CuPy array that comes back is in device memory as usual.
    rng = np.random.default_rng(43)
    host = rng.random(1 << 20).astype(np.float32)
    expected = np.histogram(host, 100, range=(0.0, 1.0))[0]

    managed = cp.ndarray(host.shape, host.dtype, cp.cuda.malloc_managed(host.nbytes))
    managed[...] = cp.asarray(host)
    locked_memory = cp.cuda.alloc_pinned_memory(host.nbytes)
    locked_host = np.frombuffer(locked_memory, host.dtype, host.size)
    locked_host[...] = host
    unowned = cp.cuda.UnownedMemory(locked_memory.ptr, host.nbytes, locked_memory)
    locked = cp.ndarray(host.shape, host.dtype, cp.cuda.MemoryPointer(unowned, 0))

    for array in (managed, locked):
        got, edges = ghnp.histogram(array, 100, range=(0.0, 1.0))
        np.testing.assert_array_equal(got.get(), expected)
        assert edges.size == 101
        frame = gh.histogram(array, 100, range=(0.0, 1.0))
        np.testing.assert_array_equal(frame["count"].to_numpy(), expected)
        np.testing.assert_array_equal(
            ghnp.histogramdd([array, array], 10)[0].get(), np.histogramdd([host, host], 10)[0]
        )
