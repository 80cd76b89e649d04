# ruff: noqa: B023
# (Each closure is timed at once, inside the loop iteration that binds its variables.)
"""Issue 37's table: whole calls of the numpy drop-in on device arrays (counts left on the device),
beside cupy.histogram, cupy.bincount and torch.bincount in the same run, and the read roofline (a
float32 cupy.sum over the same bytes). 8- and 16-bit data on uniform, image-like (normal), sorted
and one-valued data; CUB's benchmark axes (2^16-2^28 elements; 32, 128, 2,048 bins over 8- and
16-bit data and 2M over float32; entropy 1.0 and a skewed 0.2); then `device="auto"` against
each backend forced on host columns. Medians of fresh calls after a warm-up, synchronized.

Usage: python benches/narrow_ints.py [--reps 9] [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any, Callable

import cupy as cp
import numpy as np
import polars as pl

import polars_gpu_hist as gh
import polars_gpu_hist.numpy as ghnp

try:
    import torch
except ImportError:  # pragma: no cover - the GPU host has it
    torch = None


def timed(run: Callable[[], Any], reps: int) -> float:
    run()
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        run()
        cp.cuda.Device().synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def data(dtype: Any, dist: str, n: int) -> cp.ndarray:
    info = np.iinfo(dtype)
    rng = cp.random.default_rng(7)
    if dist == "uniform":
        x = rng.integers(int(info.min), int(info.max) + 1, n, dtype=cp.int64)
    elif dist == "normal":  # image-like
        mid, spread = (int(info.min) + int(info.max)) / 2, (int(info.max) - int(info.min)) / 8
        x = cp.clip(rng.standard_normal(n, dtype=cp.float32) * spread + mid, info.min, info.max)
    elif dist == "sorted":
        x = cp.sort(rng.integers(int(info.min), int(info.max) + 1, n, dtype=cp.int64))
    elif dist == "skewed":  # entropy about 0.2: most values one, the rest spread
        x = cp.where(rng.random(n) < 0.97, 3, rng.integers(0, int(info.max) + 1, n))
    else:
        x = cp.zeros(n, dtype=cp.int64)
    return x.astype(dtype)


def roofline(x: cp.ndarray, reps: int) -> float:
    as_f32 = x.view(cp.float32) if x.nbytes % 4 == 0 else x.astype(cp.float32)
    return timed(lambda: cp.sum(as_f32), reps)


def row(label: str, ours: float, roof: float, peers: dict[str, float]) -> None:
    best = min(peers.items(), key=lambda kv: kv[1]) if peers else ("-", float("nan"))
    text = ", ".join(f"{k} {v:.3f}" for k, v in peers.items())
    print(
        f"| {label} | {ours:.3f} | {roof:.3f} | {100 * roof / ours:.0f}% | "
        f"{best[1] / ours:.1f}x | {text} |",
        flush=True,
    )


def narrow(reps: int, quick: bool) -> None:
    print("| case | ours ms | roofline ms | % of read | best peer / ours | peers ms |")
    print("|---|---:|---:|---:|---:|---|")
    n8 = 1 << (28 if quick else 30)
    for dist in ["uniform", "normal", "sorted", "one"]:
        x = data(np.uint8, dist, n8)
        roof = roofline(x, reps)
        ours = timed(lambda: ghnp.histogram(x, 256, range=(0, 256)), reps)
        peers = {
            "cupy.histogram": timed(lambda: cp.histogram(x, 256, range=(0, 256)), reps),
            "cupy.bincount": timed(lambda: cp.bincount(x, minlength=256), reps),
        }
        if torch is not None:
            t = torch.as_tensor(x, device="cuda")
            peers["torch.bincount"] = timed(lambda: torch.bincount(t, minlength=256), reps)
        row(f"uint8 2^{n8.bit_length() - 1}, 256 bins (0, 256), {dist}", ours, roof, peers)
    x = data(np.uint8, "normal", n8)
    roof = roofline(x, reps)
    for label, kwargs in [
        ("10 bins (0, 256)", {"bins": 10, "range": (0, 256)}),
        ("64 bins (16, 240)", {"bins": 64, "range": (16, 240)}),
        ("edges [0, 10, 50, 100, 200, 255]", {"bins": [0, 10, 50, 100, 200, 255]}),
        ("256 bins from the data", {"bins": 256}),
    ]:
        ours = timed(lambda: ghnp.histogram(x, **kwargs), reps)
        peers = {"cupy.histogram": timed(lambda: cp.histogram(x, **kwargs), reps)}
        row(f"uint8 normal, {label}", ours, roof, peers)
    xi = x.astype(cp.int16).__sub__(128).astype(cp.int8)
    ours = timed(lambda: ghnp.histogram(xi, 256, range=(-128, 128)), reps)
    row("int8 normal, 256 bins (-128, 128)", ours, roof, {})
    n16 = 1 << (27 if quick else 29)
    for dist in ["uniform", "normal", "sorted", "one"]:
        x = data(np.uint16, dist, n16)
        roof = roofline(x, reps)
        ours = timed(lambda: ghnp.histogram(x, 65_536, range=(0, 65_536)), reps)
        peers = {"cupy.bincount": timed(lambda: cp.bincount(x, minlength=65_536), reps)}
        if torch is not None:
            t = torch.as_tensor(x.astype(cp.int32), device="cuda")
            peers["torch.bincount(int32)"] = timed(
                lambda: torch.bincount(t, minlength=65_536), reps
            )
        peers["cupy.histogram"] = timed(lambda: cp.histogram(x, 65_536, range=(0, 65_536)), reps)
        row(f"uint16 2^{n16.bit_length() - 1}, 65,536 bins, {dist}", ours, roof, peers)


def small_calls(reps: int) -> None:
    """Where a small call's time goes (benches/gpu_profile.py's phases): by value and not."""
    from gpu_profile import profile  # wraps the native calls to read their reports

    print("\nSmall calls, phases of the engine's report (ms):")
    for log2n in [16, 20]:
        x8 = data(np.uint8, "uniform", 1 << log2n)
        x32 = x8.astype(cp.int32)
        profile(
            f"uint8 2^{log2n}, 32 bins (by value)", lambda: ghnp.histogram(x8, 32, (0, 256)), reps
        )
        profile(
            f"uint8 2^{log2n}, 32 bins (row by row)",
            lambda: ghnp.histogram(x32, 32, (0, 256)),
            reps,
        )
        x16 = data(np.uint16, "uniform", 1 << log2n)
        profile(
            f"uint16 2^{log2n}, 2048 bins", lambda: ghnp.histogram(x16, 2048, (0, 65_536)), reps
        )


def cub_axes(reps: int) -> None:
    print("\nCUB's benchmark axes (uint8 / uint16 data, equal bins over the type; float32 at 2M):")
    print("| elements | bins | entropy | dtype | ours ms | cupy.histogram ms |")
    print("|---:|---:|---|---|---:|---:|")
    for log2n in [16, 20, 24, 28]:
        for bins, dtype in [(32, np.uint8), (128, np.uint8), (2048, np.uint16)]:
            for dist in ["uniform", "skewed"]:
                x = data(dtype, dist, 1 << log2n)
                hi = int(np.iinfo(dtype).max) + 1
                ours = timed(lambda: ghnp.histogram(x, bins, range=(0, hi)), reps)
                peer = timed(lambda: cp.histogram(x, bins, range=(0, hi)), reps)
                entropy = "1.0" if dist == "uniform" else "0.2"
                name = np.dtype(dtype).name
                print(f"| 2^{log2n} | {bins} | {entropy} | {name} | {ours:.3f} | {peer:.3f} |")
        # CUB's fourth axis, 2M bins, needs values wider than 16 bits: float32 over (0, 1).
        for dist in ["uniform", "skewed"]:
            x = cub_floats(dist, 1 << log2n)
            ours = timed(lambda: ghnp.histogram(x, 1 << 21, range=(0, 1)), reps)
            peer = timed(lambda: cp.histogram(x, 1 << 21, range=(0, 1)), reps)
            entropy = "1.0" if dist == "uniform" else "0.2"
            print(f"| 2^{log2n} | 2097152 | {entropy} | float32 | {ours:.3f} | {peer:.3f} |")


def cub_floats(dist: str, n: int) -> cp.ndarray:
    """float32 values in [0, 1): uniform (entropy 1.0), or skewed (about 0.2: most one value)."""
    rng = cp.random.default_rng(7)
    x = rng.random(n, dtype=cp.float32)
    if dist == "skewed":
        x = cp.where(rng.random(n) < 0.97, cp.float32(0.3), x)
    return x


def cpu_columns(reps: int) -> None:
    """The CPU backend on every core: 8-bit host columns (counted by value) and 16-bit ones
    (binned row by row), beside the same values as int32 (binned row by row)."""
    print("\nCPU backend, host columns of 2^26 rows (ms):")
    print("| column | bins | ours | same values as int32 | ratio |")
    print("|---|---|---:|---:|---:|")
    rng = np.random.default_rng(11)
    for dtype in ["uint8", "int8", "uint16", "int16"]:
        info = np.iinfo(dtype)
        values = rng.integers(int(info.min), int(info.max) + 1, 1 << 26).astype(dtype)
        narrow, wide = pl.Series("x", values), pl.Series("x", values.astype(np.int32))
        for label, kwargs in [
            ("256 equal", {"bins": 256, "range": (int(info.min), int(info.max) + 1)}),
            ("edges", {"bins": sorted({int(info.min), 0, 10, 100, int(info.max)})}),
        ]:
            ours = timed(lambda: narrow.gpu_hist.histogram(**kwargs, device="cpu"), reps)
            before = timed(lambda: wide.gpu_hist.histogram(**kwargs, device="cpu"), reps)
            print(f"| {dtype} | {label} | {ours:.2f} | {before:.2f} | {before / ours:.1f}x |")


def auto_grid(reps: int) -> None:
    print('\n`device="auto"` against each backend forced, host columns (ms):')
    print("| column | bins | cpu | gpu | auto | auto / best |")
    print("|---|---:|---:|---:|---:|---:|")
    rng = np.random.default_rng(3)
    for log2n, dtype in [(22, "float32"), (26, "float64"), (26, "int32"), (22, "uint8")]:
        if dtype.startswith("float"):
            s = pl.Series("x", rng.random(1 << log2n).astype(dtype))
        else:
            s = pl.Series("x", rng.integers(0, 200, 1 << log2n).astype(dtype))
        for bins in [64, 4096, 65_536, 1 << 20]:
            got = {}
            for device in ["cpu", "gpu", "auto"]:
                got[device] = timed(
                    lambda: s.gpu_hist.histogram(bins=bins, range=(0, 1), device=device), reps
                )
            best = min(got["cpu"], got["gpu"])
            print(
                f"| 2^{log2n} {dtype} | {bins} | {got['cpu']:.2f} | {got['gpu']:.2f} | "
                f"{got['auto']:.2f} | {got['auto'] / best:.2f} |",
                flush=True,
            )
    print("\n" + gh.explain(pl.Series("x", np.zeros(1 << 26)), bins=4096, range=(0, 1)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--quick", action="store_true", help="4x fewer rows")
    ap.add_argument("--only", default="narrow,small,cub,cpu,auto")
    args = ap.parse_args()
    print(f"device: {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    if "narrow" in args.only:
        narrow(args.reps, args.quick)
    if "small" in args.only:
        small_calls(args.reps)
    if "cub" in args.only:
        cub_axes(args.reps)
    if "cpu" in args.only:
        cpu_columns(max(3, args.reps // 2))
    if "auto" in args.only:
        auto_grid(max(3, args.reps // 2))


if __name__ == "__main__":
    main()
