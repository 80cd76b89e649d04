"""Where a `by=` call spends its time: the key's width (int64, int32, int16) on the GPU and the CPU,
the uploads alone (1-D histograms of the values and of the keys), one pass over the keys (Polars'
min and max), a 10k-cell result against a 640k-cell one; then the host's phases of each `by=`
call as the engine reports them (median of each phase over the repetitions).

Usage: python benches/by_parts.py (on the GPU host; 2^25 float32 rows, 10,000 groups, 64 bins).
"""

import time
from collections.abc import Callable

import numpy as np
import polars as pl

from polars_gpu_hist import _internal
from polars_gpu_hist._args import arguments as _args
from polars_gpu_hist._expr.functions import _pickled

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


def phases(key: str, dev: str, r: int = 7) -> None:
    """The median of each host phase of `by=key` on `dev`, from the engine's report, and of the
    native call around them (no Polars query)."""
    kwargs = _args.histogram_kwargs(
        64, (0.0, 1.0), density=False, closed="left", flow=False, device=dev, kernel="auto"
    )
    pickled = _pickled(kwargs)
    seen: dict[str, list[float]] = {}
    for _ in range(r + 1):
        start = time.perf_counter()
        _, report = _internal._histogram_by_report(frame["x"], frame[key], pickled)
        seen.setdefault("native call", []).append((time.perf_counter() - start) * 1e3)
        line = next((ln for ln in report.splitlines() if ln.startswith("time ")), "")
        line, _, kernels = line.partition(" ms (kernels ")
        if kernels:
            line += ", kernels " + kernels.split(" ")[0]
        for part in line.removeprefix("time").strip().removesuffix(" ms").split(", "):
            if part:
                name, ms = part.rsplit(" ", 1)
                seen.setdefault(name, []).append(float(ms))
    cells = ", ".join(f"{k} {sorted(v[1:])[len(v[1:]) // 2]:.2f}" for k, v in seen.items())
    print(f"phases by={key} {dev}: {cells} ms")
    print("  last report: " + report.replace("\n", "\n    "))


for dev in ("gpu", "cpu"):
    for key in ("g", "g16"):
        phases(key, dev)
