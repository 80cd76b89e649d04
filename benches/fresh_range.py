"""What a range never seen before costs a call: the proof of the cheap rule and the new range's
edges, against the same call with a range it has seen (whose proof is remembered).

Usage: python benches/fresh_range.py (on the GPU host: the device rows need CuPy; the CPU rows
run anywhere). Medians of 15 synchronized calls after a warm-up.
"""

import itertools
import time
from collections.abc import Callable

import numpy as np
import polars as pl

import polars_gpu_hist as gh
import polars_gpu_hist.numpy as ghnp

REPS = 15
fresh_his = (1.0 + k * 2.0**-20 for k in itertools.count(1))


def median_ms(call: Callable[[float], object], fresh: bool) -> float:
    call(1.0)
    times = []
    for _ in range(REPS):
        hi = next(fresh_his) if fresh else 1.0
        start = time.perf_counter()
        call(hi)
        times.append(time.perf_counter() - start)
    return sorted(times)[REPS // 2] * 1e3


def compare(name: str, call: Callable[[float], object]) -> None:
    fresh, repeated = median_ms(call, True), median_ms(call, False)
    print(f"{name}: fresh range {fresh:.3f} ms, repeated range {repeated:.3f} ms")


try:
    import cupy as cp
except ImportError:
    cp = None

if cp is not None:
    x = cp.random.random(1 << 27, dtype=cp.float32)
    # (16M float32 bins over a range near 1 would collapse: numpy refuses them too.)
    for bins in (4096, 65536, 1 << 20):

        def device(hi: float, bins: int = bins) -> None:
            ghnp.histogram(x, bins, range=(0.0, hi))
            cp.cuda.get_current_stream().synchronize()

        compare(f"GPU 2^27 float32, {bins} bins", device)

small = pl.Series("x", np.random.default_rng(1).random(10))
for bins in (65536, 1 << 20):
    compare(
        f"CPU 10 float64 rows, {bins} bins",
        lambda hi, bins=bins: gh.histogram(small, bins, range=(0.0, hi), device="cpu"),
    )
