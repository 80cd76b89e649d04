"""Where a `by=` call spends its time: the key's width (int64, int32, int16) on the GPU and the CPU,
the uploads alone (1-D histograms of the values and of the keys), one pass over the keys (Polars'
min and max), a 10k-cell result against a 640k-cell one.

Usage: python benches/by_parts.py (on the GPU host; 2^25 float32 rows, 10,000 groups, 64 bins).
"""

import time
from collections.abc import Callable

import numpy as np
import polars as pl

import polars_gpu_hist  # noqa: F401

rng = np.random.default_rng(5)
n = 1 << 25
frame = pl.DataFrame({"g": rng.integers(0, 10_000, n), "x": rng.random(n, dtype=np.float32)})
frame = frame.with_columns(g32=pl.col("g").cast(pl.Int32), g16=pl.col("g").cast(pl.Int16))


def t(name: str, f: Callable[[], object], r: int = 5) -> None:
    f()
    ts = []
    for _ in range(r):
        a = time.perf_counter()
        f()
        ts.append(time.perf_counter() - a)
    print(f"{name:50s} {sorted(ts)[r // 2] * 1e3:8.2f} ms")


for dev in ("gpu", "cpu"):
    for key in ("g", "g32", "g16"):
        t(
            f"by={key} {dev}",
            lambda key=key, dev=dev: frame.select(
                pl.col("x").gpu_hist.histogram(bins=64, range=(0.0, 1.0), by=key, device=dev)
            ),
        )
t(
    "1-D x gpu (f32 values up)",
    lambda: frame.select(pl.col("x").gpu_hist.histogram(bins=64, range=(0.0, 1.0), device="gpu")),
)
t(
    "1-D g gpu (int64 up)",
    lambda: frame.select(pl.col("g").gpu_hist.histogram(bins=64, range=(0, 10000), device="gpu")),
)
t("g min and max (Polars, one pass over the keys)", lambda: (frame["g"].min(), frame["g"].max()))
for dev in ("gpu", "cpu"):
    t(
        f"by=g {dev}, 1 bin (10k-cell result)",
        lambda dev=dev: frame.select(
            pl.col("x").gpu_hist.histogram(bins=1, range=(0.0, 1.0), by="g", device=dev)
        ),
    )
t(
    "by= cpu 2^20 rows (640k-cell result)",
    lambda: frame.head(1 << 20).select(
        pl.col("x").gpu_hist.histogram(bins=64, range=(0.0, 1.0), by="g", device="cpu")
    ),
)
