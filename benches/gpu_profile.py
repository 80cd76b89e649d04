"""Where a whole GPU call spends its time: the user's call (synchronized), the native call inside
it, the host phases the engine reports (resolve, plan, setup, launch, wait) and the kernels'
device time, for the numpy drop-in and the DataFrame API on device arrays, 1-D and 2-D, and
`by=` from a Polars frame. Medians after a warm-up.

Usage: python benches/gpu_profile.py [--log2n 29] [--reps 9]
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from typing import Any, Callable

import cupy as cp
import numpy as np
import polars as pl

import polars_gpu_hist as gh
import polars_gpu_hist.numpy as ghnp
from polars_gpu_hist import _internal

_native_ms: list[float] = []
_reports: list[str] = []


def _timed_native(name: str) -> None:
    """Wrap `_internal.<name>` to record its wall time and report."""
    inner = getattr(_internal, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        out = inner(*args, **kwargs)
        _native_ms.append((time.perf_counter() - t0) * 1e3)
        for item in out:
            if isinstance(item, str):
                _reports.append(item)
        return out

    setattr(_internal, name, wrapper)


for _name in ("histogram_cuda_counts", "histogram_cuda_into", "histogram_cuda"):
    _timed_native(_name)


def phases(report: str) -> dict[str, float]:
    line = next((ln for ln in report.splitlines() if ln.startswith("time ")), "")
    found = {k: float(v) for k, v in re.findall(r"(\w+) ([0-9.]+)", line.split("(")[0])}
    kernels = re.search(r"kernels ([0-9.]+) ms", line)
    if kernels:
        found["kernels"] = float(kernels.group(1))
    return found


def profile(label: str, run: Callable[[], Any], reps: int) -> None:
    run()
    cp.cuda.Device().synchronize()
    walls, natives, all_phases = [], [], []
    for _ in range(reps):
        _native_ms.clear()
        _reports.clear()
        t0 = time.perf_counter()
        run()
        cp.cuda.Device().synchronize()
        walls.append((time.perf_counter() - t0) * 1e3)
        natives.append(sum(_native_ms))
        if _reports:
            all_phases.append(phases(_reports[-1]))
    keys = all_phases[0].keys() if all_phases else []
    med = {k: statistics.median(p.get(k, 0.0) for p in all_phases) for k in keys}
    text = ", ".join(f"{k} {v:.3f}" for k, v in med.items())
    wall, native = statistics.median(walls), statistics.median(natives)
    print(f"{label:44s} wall {wall:8.3f}  native {native:8.3f}  [{text}]", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--log2n", type=int, default=29)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--narrow", action="store_true", help="only narrow integers counted by value")
    args = ap.parse_args()
    n = 1 << args.log2n
    rng = cp.random.default_rng(3)
    for dtype, values, bins in [(cp.uint16, 1 << 16, 1 << 16), (cp.uint8, 256, 256)]:
        rows = n if dtype == cp.uint16 else 2 * n
        v = rng.integers(0, values, rows, dtype=cp.int32).astype(dtype)
        profile(
            f"ghnp.histogram {cp.dtype(dtype).name} 2^{rows.bit_length() - 1} bins={bins}",
            lambda b=bins, d=v, top=values: ghnp.histogram(d, b, range=(0, top)),
            args.reps,
        )
        v = None
    if args.narrow:
        return
    print(f"{cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}, 2^{args.log2n} float32")
    x = cp.random.default_rng(1).random(n, dtype=cp.float32)
    start, end = cp.cuda.Event(), cp.cuda.Event()
    x.sum()
    start.record()
    x.sum()
    end.record()
    end.synchronize()
    print(f"cupy.sum (read roofline) {cp.cuda.get_elapsed_time(start, end):.3f} ms")
    try:
        import torch

        xt = torch.as_tensor(x, device="cuda")
    except ImportError:
        torch = None
    for bins in [16, 256, 4096, 65_536, 1 << 20, 1 << 24]:
        profile(
            f"ghnp.histogram bins={bins}",
            lambda b=bins: ghnp.histogram(x, b, range=(0, 1)),
            args.reps,
        )
        if torch is not None:
            profile(
                f"torch.histc bins={bins}",
                lambda b=bins: torch.histc(xt, b, 0, 1),
                3,
            )
        profile(f"cupy.histogram bins={bins}", lambda b=bins: cp.histogram(x, b, (0, 1)), 3)
        profile(
            f"gh.histogram (frame) bins={bins}",
            lambda b=bins: gh.histogram(x, b, range=(0, 1)),
            args.reps,
        )
    xs = cp.sort(x[: 1 << 27])
    xd = cp.full(1 << 27, 0.3, dtype=cp.float32)
    xn = cp.random.default_rng(2).standard_normal(1 << 27, dtype=cp.float32) * 0.1 + 0.5
    for label, data in [("sorted", xs), ("degenerate", xd), ("normal", xn)]:
        for bins in [256, 1 << 20, 1 << 24]:
            profile(
                f"ghnp.histogram {label} 2^27 bins={bins}",
                lambda b=bins, d=data: ghnp.histogram(d, b, range=(0, 1)),
                args.reps,
            )
            if torch is not None:
                td = torch.as_tensor(data, device="cuda")
                profile(
                    f"torch.histc {label} 2^27 bins={bins}",
                    lambda b=bins, t=td: torch.histc(t, b, 0, 1),
                    3,
                )
    xs = xd = xn = xt = None
    m = 1 << 27
    xy = x[: 2 * m].reshape(m, 2)
    for b in [64, 256, 1024]:
        profile(
            f"ghnp.histogramdd (n,2) {b}x{b}",
            lambda b=b: ghnp.histogramdd(xy, bins=b, range=[(0, 1), (0, 1)]),
            args.reps,
        )
        profile(
            f"gh.histogramdd (frame) {b}x{b}",
            lambda b=b: gh.histogramdd(xy, bins=b, range=[(0, 1), (0, 1)]),
            args.reps,
        )
        profile(
            f"cupy.histogramdd {b}x{b}",
            lambda b=b: cp.histogramdd(xy, bins=b, range=[(0, 1), (0, 1)]),
            3,
        )
    xy = x = None
    cp.get_default_memory_pool().free_all_blocks()
    rng = np.random.default_rng(9)
    k = 1 << 25
    frame = pl.DataFrame({"x": rng.random(k).astype(np.float32), "g": rng.integers(0, 10_000, k)})
    for device in ["gpu", "cpu"]:
        expr = pl.col("x").gpu_hist.histogram(bins=64, range=(0, 1), by="g", device=device)
        profile(f"by= 10,000 groups, {device}", lambda e=expr: frame.select(e), 3)
    explain = gh.explain(frame["x"], 64, range=(0, 1), device="gpu")
    print(explain)


if __name__ == "__main__":
    main()
