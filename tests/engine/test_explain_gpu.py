"""`explain` on the GPU: the plan it prints is the plan the call runs."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh
from polars_gpu_hist import _internal
from polars_gpu_hist._native import cuda_arrays as _cuda
from support.explain import decision, host_report, pickled_options


@pytest.mark.parametrize(
    ("dtype", "bins", "kernel"),
    [
        (pl.Float32, 64, "auto"),
        (pl.Float64, 100_000, "auto"),
        (pl.Float32, 1 << 20, "auto"),
        (pl.Float32, 256, "global"),
        (pl.UInt8, 64, "auto"),
    ],
)
def test_explain_prints_the_plan_a_host_call_runs_on_the_gpu(
    dtype: pl.DataType, bins: int, kernel: str
) -> None:
    values = pl.Series("x", np.random.default_rng(1).random(1 << 22)).cast(dtype)
    if dtype == pl.UInt8:
        values = pl.Series("x", np.arange(1 << 22) % 256).cast(dtype)
    said = gh.explain(values, bins, range=(0, 1), device="gpu", kernel=kernel)
    ran = host_report(values, bins, "gpu", kernel)
    assert decision(said) == decision(ran), f"explain:\n{said}\ncall:\n{ran}"
    assert ("fold" in said) == (dtype == pl.UInt8 and kernel == "auto")


@pytest.mark.parametrize(
    ("dtype", "bins", "kernel"),
    [
        (np.float32, 64, "auto"),
        (np.float64, 100_000, "auto"),
        (np.float32, 1 << 20, "auto"),
        (np.float32, 256, "packed"),
        (np.uint8, 64, "auto"),
    ],
)
def test_explain_prints_the_plan_a_device_call_runs(dtype: type, bins: int, kernel: str) -> None:
    """Every road a device array takes (a Struct Series; the numpy drop-in's counts allocated
    here or written into the caller's array) records the plan `explain` prints."""
    cp = pytest.importorskip("cupy")
    # Values in the range: past shared memory, a call's look at the rows could otherwise find
    # long runs (of rows not counted) and choose the global family, which `explain` cannot see.
    host = np.random.default_rng(2).random(1 << 22)
    if dtype == np.uint8:
        host = np.arange(1 << 22) % 256
    data = cp.asarray(host.astype(dtype))
    said = decision(gh.explain(data, bins, range=(0, 1), device="gpu", kernel=kernel))
    iface = _cuda.cuda_array(data)
    assert iface is not None
    sample = _cuda.sample([_cuda.column(iface)])
    options = _internal.HistogramOptions(pickled_options(bins, "gpu", kernel))
    _, as_series, _ = _internal.histogram_cuda(["x"], sample, options)
    _, _, on_device = _internal.histogram_cuda_counts(sample, options, [None])
    counts = cp.zeros(bins, dtype=cp.uint64)
    target = _internal.DeviceTarget(0, int(counts.data.ptr), bins, [None])
    _, into = _internal.histogram_cuda_into(sample, options, target)
    cp.cuda.Stream.null.synchronize()
    for ran in (as_series, on_device, into):
        assert said == decision(ran), f"explain:\n{said}\ncall:\n{ran}"


def test_each_call_takes_the_settings_of_its_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """The environment is read once where a call enters (src/gpu/settings.rs) and passed down:
    calls one after another each copy by their own settings, and `explain` says each."""
    values = pl.Series("x", np.random.default_rng(3).random(1 << 22))
    monkeypatch.setenv("POLARS_GPU_HIST_DEVICE_BYTES", str(4 << 20))
    monkeypatch.setenv("POLARS_GPU_HIST_TRANSFER", "pageable")
    streamed = host_report(values, 64, "gpu")
    said = gh.explain(values, 64, range=(0, 1), device="gpu")
    monkeypatch.delenv("POLARS_GPU_HIST_DEVICE_BYTES")
    monkeypatch.delenv("POLARS_GPU_HIST_TRANSFER")
    uploaded = host_report(values, 64, "gpu")
    assert "streamed in" in streamed and "by pageable" in streamed, streamed
    assert "streamed in" in said and "by pageable" in said, said
    assert "streamed in" not in uploaded and "pageable" not in uploaded, uploaded
