"""Several GPUs in one process: an array is counted on the GPU that holds it, whichever device
is current, in its library's current stream there; host columns go to the current device;
`pin(df, device=k)` pins to GPU k; arrays on two GPUs in one call are refused. Most need two
GPUs (the nvidia-h100-x2 kind); the range check needs one."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh
import polars_gpu_hist.numpy as ghnp


def _cupy() -> Any:
    return pytest.importorskip("cupy")


def _two_gpus() -> Any:
    cp = _cupy()
    if cp.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs two GPUs")
    return cp


def test_a_device_past_the_gpus_the_process_sees_is_refused_naming_device() -> None:
    cp = _cupy()
    count = cp.cuda.runtime.getDeviceCount()
    s = pl.Series("x", [0.5, 1.5])
    for device in [count, -1]:
        with pytest.raises(ValueError, match=f"`device` {device} is out of range"):
            gh.pin(s, device=device)
    assert gh.pinned() == (0, 0)


def test_an_array_on_device_1_is_counted_there_while_device_0_is_current() -> None:
    cp = _two_gpus()
    with cp.cuda.Device(1):
        x = cp.random.default_rng(1).random(1 << 22)
        w = cp.random.default_rng(2).random(1 << 22)
        cp.cuda.Device(1).synchronize()
    host, host_w = x.get(), w.get()
    cp.cuda.Device(0).use()
    pool0 = cp.get_default_memory_pool().used_bytes()
    # Counts and edges into arrays made on device 1 (the bins are known), and left there by the
    # library (an estimator's bins), and as a Struct column.
    counts, edges = ghnp.histogram(x, 64, range=(0, 1))
    assert counts.device.id == 1 and edges.device.id == 1
    assert counts.get().tolist() == np.histogram(host, 64, range=(0, 1))[0].tolist()
    auto, auto_edges = ghnp.histogram(x, "auto")
    expected, expected_edges = np.histogram(host, "auto")
    assert auto.device.id == 1 and auto_edges.device.id == 1
    assert auto.get().tolist() == expected.tolist()
    np.testing.assert_array_equal(auto_edges.get(), expected_edges)
    weighted, _ = ghnp.histogram(x, 64, range=(0, 1), weights=w)
    np.testing.assert_allclose(
        weighted.get(), np.histogram(host, 64, range=(0, 1), weights=host_w)[0], rtol=1e-12
    )
    frame = gh.histogram(x, 64, range=(0, 1))
    assert frame["count"].to_list() == np.histogram(host, 64, range=(0, 1))[0].tolist()
    assert "GPU 1" in gh.explain(x, 64, range=(0, 1))
    # Nothing was copied to device 0, and device 0 is still the current device.
    assert cp.cuda.runtime.getDevice() == 0
    assert cp.get_default_memory_pool().used_bytes() == pool0


def test_n_d_samples_on_device_1_are_counted_there() -> None:
    cp = _two_gpus()
    with cp.cuda.Device(1):
        xy = cp.random.default_rng(3).random((1 << 20, 2))
    cp.cuda.Device(0).use()
    host = xy.get()
    h, edges = ghnp.histogramdd(xy, bins=(16, 8), range=[(0, 1), (0, 1)])
    assert h.device.id == 1 and all(e.device.id == 1 for e in edges)
    expected, _ = np.histogramdd(host, bins=(16, 8), range=[(0, 1), (0, 1)])
    assert h.get().tolist() == expected.tolist()
    assert cp.cuda.runtime.getDevice() == 0


def test_a_torch_tensor_on_cuda_1_is_counted_there() -> None:
    _two_gpus()
    torch = pytest.importorskip("torch")
    torch.cuda.set_device(0)
    x = torch.rand(1 << 22, device="cuda:1")
    before = torch.cuda.memory_allocated(0)
    got, edges = ghnp.histogram(x, 100, range=(0, 1))
    assert got.device == x.device and edges.device == x.device
    expected, _ = np.histogram(x.cpu().numpy(), 100, range=(0, 1))
    assert got.cpu().numpy().tolist() == expected.tolist()
    assert torch.cuda.current_device() == 0
    # Nothing allocated on device 0 (memory freed there meanwhile, by the collector, is not ours).
    assert torch.cuda.memory_allocated(0) <= before


def test_a_frame_pinned_to_device_1_is_counted_there() -> None:
    cp = _two_gpus()
    values = np.random.default_rng(4).random(1 << 22)
    df = pl.DataFrame({"x": values})
    try:
        nbytes = gh.pin(df, device=1)
        assert nbytes == values.nbytes and gh.pinned() == (1, values.nbytes)
        text = gh.explain(df["x"], 64, range=(0, 1), device="gpu")
        assert "GPU 1" in text and "pinned" in text, text
        got = df.select(pl.col("x").gpu_hist.histogram(64, range=(0, 1), device="gpu"))
        expected = np.histogram(values, 64, range=(0, 1))[0].tolist()
        assert got.unnest("x")["count"].to_list() == expected
        # Pinned again to device 0, the column moves: one pin, counted there.
        gh.pin(df, device=0)
        assert gh.pinned() == (1, values.nbytes)
        assert "GPU 0" in gh.explain(df["x"], 64, range=(0, 1), device="gpu")
        assert gh.histogram(df["x"], 64, range=(0, 1), device="gpu")["count"].to_list() == expected
    finally:
        gh.unpin()
    assert cp.cuda.runtime.getDevice() == 0


def test_host_columns_go_to_the_current_device() -> None:
    cp = _two_gpus()
    s = pl.Series("x", np.random.default_rng(5).random(1 << 20))
    expected = np.histogram(s.to_numpy(), 32, range=(0, 1))[0].tolist()
    with cp.cuda.Device(1):
        assert "GPU 1" in gh.explain(s, 32, range=(0, 1), device="gpu")
        assert gh.histogram(s, 32, range=(0, 1), device="gpu")["count"].to_list() == expected
        assert cp.cuda.runtime.getDevice() == 1
    assert "GPU 0" in gh.explain(s, 32, range=(0, 1), device="gpu")
    assert cp.cuda.runtime.getDevice() == 0


def test_arrays_on_two_gpus_in_one_call_are_refused() -> None:
    cp = _two_gpus()
    with cp.cuda.Device(0):
        x0 = cp.random.default_rng(6).random(1 << 16)
    with cp.cuda.Device(1):
        x1 = cp.random.default_rng(7).random(1 << 16)
        w1 = cp.ones(1 << 16)
    with pytest.raises(ValueError, match="must be on one GPU: array 1 is on GPU 1, but array 0"):
        ghnp.histogramdd([x0, x1], bins=4, range=[(0, 1), (0, 1)])
    with pytest.raises(ValueError, match="must be on one GPU"):
        ghnp.histogram(x0, 4, range=(0, 1), weights=w1)
    # The native check, for the Struct path (no Python look at the devices first).
    with pytest.raises(ValueError, match="must be on one GPU: column 1 is on GPU 1"):
        gh.histogramdd(x0, x1, bins=4, range=[(0, 1), (0, 1)])
    # Both GPUs still work after the refusals. The counts are on their array's GPU: summed on
    # the host, as CuPy's own reductions launch on the current device, and a kernel on device 0
    # reading device 1's counts is an illegal address (the cause of the ninth session's failure).
    assert int(ghnp.histogram(x1, 4, range=(0, 1))[0].get().sum()) == 1 << 16
    assert int(ghnp.histogram(x0, 4, range=(0, 1))[0].get().sum()) == 1 << 16
    assert cp.cuda.runtime.getDevice() == 0


def test_the_callers_stream_on_device_1_is_respected() -> None:
    cp = _two_gpus()
    cp.cuda.Device(0).use()
    n = 1 << 24
    with cp.cuda.Device(1):
        stream = cp.cuda.Stream(non_blocking=True)
        with stream:
            # Queued on the caller's stream of device 1, after the values it makes there: a
            # count on any other stream would race them.
            x = cp.zeros(n)
            for _ in range(8):
                x += cp.random.random(n) / 8
            counts, _ = ghnp.histogram(x, 50, range=(0, 1))
            assert counts.device.id == 1
        stream.synchronize()
        host = x.get()
    assert counts.get().tolist() == np.histogram(host, 50, range=(0, 1))[0].tolist()
    assert cp.cuda.runtime.getDevice() == 0


def test_a_histogram_fills_from_device_1_while_device_0_is_current() -> None:
    cp = _two_gpus()
    with cp.cuda.Device(1):
        x = cp.random.default_rng(8).random(1 << 20)
        w = cp.random.default_rng(9).random(1 << 20)
    cp.cuda.Device(0).use()
    h = gh.Histogram(32, range=(0, 1), weights=True).fill(x, w)
    expected, _ = np.histogram(x.get(), 32, range=(0, 1), weights=w.get())
    np.testing.assert_allclose(h.counts, expected, rtol=1e-12)
    assert cp.cuda.runtime.getDevice() == 0
