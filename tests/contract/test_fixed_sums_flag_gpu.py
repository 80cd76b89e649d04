"""The GPU's weighted sums by default (float64 atomics, in whatever order they land: the last bits
may vary from run to run) are numpy's to float64's rounding; the deterministic fixed-point sums
are opt-in with POLARS_GPU_HIST_SUMS=fixed, read once a process, so test_weighted_sums_gpu.py runs
here in a child pytest under the flag. Run on a machine with a GPU: -m gpu (this file's name
marks its tests)."""

from __future__ import annotations

import numpy as np
import pytest

import polars_gpu_hist as gh
from support.fixed_sums import fixed_sums_on, run_under_fixed_sums


@pytest.mark.skipif(fixed_sums_on(), reason="the module runs in this process already")
def test_the_fixed_point_gpu_module_passes_under_the_flag() -> None:
    summary = run_under_fixed_sums(["tests/contract/test_weighted_sums_gpu.py"], "gpu")
    print(summary)


@pytest.mark.skipif(fixed_sums_on(), reason="the default's sums: POLARS_GPU_HIST_SUMS=fixed is set")
@pytest.mark.parametrize("bins", [256, 65_536])
def test_the_default_device_sums_are_numpys(bins: int) -> None:
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(bins)
    x = rng.random(1 << 20, dtype=np.float32)
    w = rng.standard_normal(1 << 20)
    want = np.histogram(x, bins, range=(0, 1), weights=w)[0]
    for kernel in ("auto", "global"):
        got = gh.histogram(cp.asarray(x), bins, range=(0, 1), weights=cp.asarray(w), kernel=kernel)
        np.testing.assert_allclose(got["count"].to_numpy(), want, rtol=1e-9, atol=1e-9)
