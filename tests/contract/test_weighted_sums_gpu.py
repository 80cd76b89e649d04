"""Weighted sums on the GPU are the CPU's bits (issue 51 item 3, src/fixed.rs and
kernels/fixed.cuh): the same on every run, with every family that sums weights (shared, global),
from device arrays and from host columns (in one launch or in windows of a small device budget),
1-D and n-D, and a Histogram's device fill's sums and squares. Run on a machine with a GPU:
-m gpu (this file's name marks its tests). The fixed-point sums are opt-in: this module runs under
POLARS_GPU_HIST_SUMS=fixed only (tests/contract/test_fixed_sums_flag_gpu.py runs it so in a child
process)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from typing import Literal

import numpy as np
import pytest

import polars_gpu_hist as gh
from support.fixed_sums import skip_unless_fixed_sums

skip_unless_fixed_sums()
cp = pytest.importorskip("cupy")

ROWS = 3_000_000


def data(seed: int, rows: int = ROWS) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.random(rows, dtype=np.float32)
    # Magnitudes over 2^40 (most weights on the grid, the smallest rounded), signs, a few exact
    # cancellations.
    w = rng.standard_normal(rows) * np.exp2(rng.uniform(-20, 20, rows))
    w[::1000] = 1e6
    w[1::1000] = -1e6
    return x, w


def digest(a: object) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


def cpu_sums(x: np.ndarray, w: np.ndarray, bins: int) -> np.ndarray:
    return gh.histogram(x, bins, range=(0, 1), weights=w, device="cpu")["count"].to_numpy()


@pytest.mark.parametrize("bins", [256, 65_536])
@pytest.mark.parametrize("kernel", ["auto", "shared", "global"])
def test_device_arrays_sum_to_the_cpus_bits_on_every_run(
    bins: int, kernel: Literal["auto", "shared", "global"]
) -> None:
    x, w = data(bins)
    if kernel == "shared" and bins > 4096:
        pytest.skip("65,536 fixed-point cells do not fit a block's shared memory")
    want = cpu_sums(x, w, bins)
    dx, dw = cp.asarray(x), cp.asarray(w)
    seen = set()
    for _ in range(10):
        got = gh.histogram(dx, bins, range=(0, 1), weights=dw, kernel=kernel)["count"].to_numpy()
        seen.add(digest(got))
    assert seen == {digest(want)}
    # The numpy drop-in's sums left on the device: the same bits.
    import polars_gpu_hist.numpy as ghnp

    sums, _ = ghnp.histogram(dx, bins, (0.0, 1.0), weights=dw)
    assert digest(cp.asnumpy(sums)) == digest(want)


@pytest.mark.parametrize("bins", [256, 65_536])
def test_host_columns_sum_to_the_cpus_bits_in_one_launch_or_in_windows(bins: int) -> None:
    x, w = data(bins + 1)
    want = digest(cpu_sums(x, w, bins))
    for _ in range(3):
        got = gh.histogram(x, bins, range=(0, 1), weights=w, device="gpu")["count"].to_numpy()
        assert digest(got) == want
    # A device budget of 4 MB: the rows go in windows, a launch or more each.
    code = f"""
import hashlib, numpy as np, polars_gpu_hist as gh
rng = np.random.default_rng({bins + 1})
x = rng.random({ROWS}, dtype=np.float32)
w = rng.standard_normal({ROWS}) * np.exp2(rng.uniform(-20, 20, {ROWS}))
w[::1000] = 1e6
w[1::1000] = -1e6
s = gh.histogram(x, {bins}, range=(0, 1), weights=w, device="gpu")["count"].to_numpy()
print(hashlib.sha256(np.ascontiguousarray(s).tobytes()).hexdigest())
"""
    env = dict(os.environ, POLARS_GPU_HIST_DEVICE_BYTES=str(4 << 20))
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == want


def test_every_row_count_and_view_gives_the_cpus_bits() -> None:
    """Grids of one block to many (the row count sets them), views off 16-byte boundaries."""
    x, w = data(7, 1 << 20)
    dx, dw = cp.asarray(x), cp.asarray(w)
    for start, rows in [(0, 1), (0, 100), (3, 5000), (1, 1 << 17), (5, (1 << 20) - 5)]:
        sl = slice(start, start + rows)
        want = cpu_sums(x[sl], w[sl], 300)
        got = gh.histogram(dx[sl], 300, range=(0, 1), weights=dw[sl])["count"].to_numpy()
        assert digest(got) == digest(want), (start, rows)


def test_non_finite_weights_on_the_gpu_are_the_cpus() -> None:
    x, w = data(9, 1 << 18)
    w[10] = np.nan
    w[200_000] = np.inf
    w[200_001] = -np.inf
    w[50_000] = np.inf
    w[60_000] = -np.inf
    want = cpu_sums(x, w, 64)
    kernels: tuple[Literal["shared", "global"], ...] = ("shared", "global")
    for kernel in kernels:
        got = gh.histogram(cp.asarray(x), 64, range=(0, 1), weights=cp.asarray(w), kernel=kernel)
        np.testing.assert_array_equal(got["count"].to_numpy(), want)


def test_nd_weighted_sums_are_the_cpus() -> None:
    x, w = data(11, 1 << 20)
    y = np.random.default_rng(12).random(x.size, dtype=np.float32)
    sample = np.stack([x, y], axis=1)
    want, _ = np.histogramdd(sample, (64, 64), range=((0, 1), (0, 1)), weights=w)
    # (gh.histogramdd takes its columns positionally: `bins` is a keyword.)
    cpu = gh.histogramdd(sample, bins=(64, 64), range=((0, 1), (0, 1)), weights=w, device="cpu")
    gpu = gh.histogramdd(
        cp.asarray(sample), bins=(64, 64), range=((0, 1), (0, 1)), weights=cp.asarray(w)
    )
    np.testing.assert_array_equal(gpu["count"].to_numpy(), cpu["count"].to_numpy())
    np.testing.assert_allclose(cpu["count"].to_numpy(), want.ravel(), rtol=1e-9, atol=1e-3)


def test_histogram_device_fills_sum_weights_and_squares_to_the_host_fills_bits() -> None:
    x, w = data(13, 1 << 20)
    host = gh.Histogram(100, range=(0, 1), weights=True)
    host.fill(x, weights=w)
    device = gh.Histogram(100, range=(0, 1), weights=True)
    for _ in range(2):
        device.reset()
        device.fill(cp.asarray(x), weights=cp.asarray(w))
        assert digest(device.values(flow=True)) == digest(host.values(flow=True))
        assert digest(device.variances(flow=True)) == digest(host.variances(flow=True))


def test_float_sums_vary_where_fixed_point_does_not() -> None:
    """The measurement behind the default (benches/weighted_sums.py): POLARS_GPU_HIST_SUMS=float
    in a child process sums with double atomics; report how many distinct results 10 runs give
    (the design notes measured 10 of 10) beside fixed point's one."""
    code = """
import hashlib, json, numpy as np, cupy as cp, polars_gpu_hist as gh
rng = np.random.default_rng(5)
x = cp.asarray(rng.random(1 << 22, dtype=np.float32))
w = cp.asarray(rng.standard_normal(1 << 22))
seen = set()
for _ in range(10):
    s = gh.histogram(x, 256, range=(0, 1), weights=w)["count"].to_numpy()
    seen.add(hashlib.sha256(s.tobytes()).hexdigest())
print(json.dumps(len(seen)))
"""
    counts = {}
    for way in ("fixed", "float"):
        env = dict(os.environ, POLARS_GPU_HIST_SUMS=way)
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, done.stderr
        counts[way] = json.loads(done.stdout.strip().splitlines()[-1])
    assert counts["fixed"] == 1
    print(f"distinct results of 10 runs: {counts}")
