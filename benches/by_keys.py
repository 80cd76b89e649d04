"""`by=[a, b]` (several keys) against the fallback, ``group_by([a, b]).agg(histogram)``, at 10^4
groups (100 x 100): two integer keys, a string and an integer key, and a ``pl.struct`` key;
the median of the repetitions.

Usage: python benches/by_keys.py [rows] [device]   (default 10^6 rows, the CPU)
"""

import sys
import time
from collections.abc import Callable

import numpy as np
import polars as pl

import polars_gpu_hist  # noqa: F401

rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
device = sys.argv[2] if len(sys.argv) > 2 else "cpu"
rng = np.random.default_rng(5)
frame = pl.DataFrame(
    {"a": rng.integers(0, 100, rows), "b": rng.integers(0, 100, rows), "x": rng.random(rows)}
).with_columns(s=pl.format("s{}", pl.col("a")))


def median_ms(f: Callable[[], object], repeat: int = 7) -> float:
    f()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return sorted(times)[repeat // 2] * 1e3


def binned(**kwargs: object) -> pl.Expr:
    return pl.col("x").gpu_hist.histogram(bins=32, range=(0.0, 1.0), device=device, **kwargs)


print(f"{rows:,} rows, 10^4 groups, 32 bins, device={device}")
for keys in (["a", "b"], ["s", "b"]):
    fallback = median_ms(lambda k=keys: frame.group_by(k, maintain_order=True).agg(binned()))
    several = median_ms(lambda k=keys: frame.select(binned(by=k)))
    print(
        f"by={keys}: {several:8.1f} ms   group_by+agg: {fallback:8.1f} ms   "
        f"{fallback / several:5.1f}x"
    )
struct = median_ms(lambda: frame.select(binned(by=pl.struct("a", "b"))))
print(f"by=pl.struct('a', 'b'): {struct:8.1f} ms")
