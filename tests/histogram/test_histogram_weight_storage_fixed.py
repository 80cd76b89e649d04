"""A weighted Histogram's storage in the fixed-point sums (opt-in: POLARS_GPU_HIST_SUMS=fixed,
src/fixed.rs): the sums of the weights and of their squares are the same bits however the rows
are split into chunks, threads and fills, and the one-pass fill's are the one-shot calls'. This
module runs under the flag only (tests/contract/test_fixed_sums_flag.py runs it so in a child
process)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import polars as pl

import polars_gpu_hist as gh
import polars_gpu_hist.numpy as ghnp
from support.fixed_sums import skip_unless_fixed_sums

skip_unless_fixed_sums()


def _random_fill(chunks: int) -> gh.Histogram:
    rng = np.random.default_rng(49)
    x = rng.standard_normal(300_000)
    w = rng.standard_normal(300_000) * 1e3
    xs = pl.concat([pl.Series(p) for p in np.array_split(x, chunks)], rechunk=False)
    ws = pl.concat([pl.Series(p) for p in np.array_split(w, chunks + 2)], rechunk=False)
    return gh.Histogram(256, range=(-3, 3), weights=True).fill(xs, weights=ws)


def test_the_sums_have_the_same_bits_in_any_chunking_and_merge() -> None:
    whole = _random_fill(1)
    assert _random_fill(7) == whole
    one = _random_fill(1)
    assert np.array_equal(one.values(flow=True), whole.values(flow=True))
    assert np.array_equal(one.variances(flow=True), whole.variances(flow=True))
    # Within float64's rounding of numpy's sums (fixed point rounds each weight once).
    rng = np.random.default_rng(49)
    x = rng.standard_normal(300_000)
    w = rng.standard_normal(300_000) * 1e3
    sums, _ = np.histogram(x, 256, (-3, 3), weights=w)
    np.testing.assert_allclose(whole.values(), sums, rtol=1e-9, atol=1e-6)


def test_the_fills_sums_are_the_one_shot_calls_bit_for_bit() -> None:
    # One pass for the weights and their squares gives what two calls give (the same grids).
    rng = np.random.default_rng(51)
    x = rng.normal(0.5, 0.4, 200_000)
    x[::97] = np.nan
    w = rng.standard_normal(200_000) * 1e-3
    h = gh.Histogram(64, range=(0, 1), weights=True).fill(x, weights=w)
    sums, _ = ghnp.histogram(x, 64, (0, 1), weights=w)
    squares, _ = ghnp.histogram(x, 64, (0, 1), weights=w * w)
    assert h.values().tobytes() == sums.tobytes()
    assert h.variances().tobytes() == squares.tobytes()


SCRIPT = """
import hashlib, numpy as np, polars_gpu_hist as gh
rng = np.random.default_rng(7)
x, w = rng.random(400_000), rng.standard_normal(400_000)
h = gh.Histogram(1000, range=(0, 1), weights=True).fill(x, weights=w)
print(hashlib.sha256(h.values(flow=True).tobytes() + h.variances(flow=True).tobytes()).hexdigest())
"""


def test_the_sums_have_the_same_bits_on_one_thread_and_on_every_core() -> None:
    def digest(threads: int) -> str:
        env = {**os.environ, "POLARS_MAX_THREADS": str(threads)}
        out = subprocess.run(
            [sys.executable, "-c", SCRIPT], env=env, check=True, capture_output=True, text=True
        )
        return out.stdout.strip()

    assert digest(1) == digest(2) == digest(4)
