"""GPU benchmark: whole calls on device-resident data (the numpy drop-in, counts left on the
device, and the DataFrame API) against the read roofline measured in the same run, with the
kernels' own time beside; the Polars path from host memory (the first call, and pinned) against
the CPU backend; n-D and by=.

Usage: python benches/gpu_bench.py [--log2n 29] [--quick] ; writes $OUT/gpu_bench.json.
Whole-call times are wall clock around the Python call, which synchronizes before returning
(median of reps after a warm-up); kernel times come from CUDA events around our launches.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import cupy as cp
import numpy as np
import polars as pl

import polars_gpu_hist as gh
import polars_gpu_hist.numpy as ghnp
from polars_gpu_hist import _internal
from polars_gpu_hist._args import arguments as _args
from polars_gpu_hist._expr.functions import _pickled
from polars_gpu_hist._native import cuda_arrays as _cuda

OUT = os.environ.get("OUT", "/tmp")


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def roofline_ms(x: cp.ndarray, reps: int) -> float:
    start, end = cp.cuda.Event(), cp.cuda.Event()
    x.sum()
    times = []
    for _ in range(reps):
        start.record()
        x.sum()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end))
    return median(times)


def ours(x: cp.ndarray, bins: int, reps: int, **kw: object) -> dict[str, object]:
    sample = _cuda.sample([_cuda.column(x.__cuda_array_interface__)])
    options = _internal.HistogramOptions(
        _pickled(
            _args.histogram_kwargs(
                bins,
                kw.get("range"),
                density=False,
                closed="left",
                flow=False,
                device="auto",
                kernel=kw.get("kernel", "auto"),
            )
        )
    )
    args = (["x"], sample, options)
    series, plan, _ = _internal.histogram_cuda(*args)  # warm-up: compile/load, first touch
    kernel, wall = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        series, plan, k_ms = _internal.histogram_cuda(*args)
        wall.append((time.perf_counter() - t0) * 1e3)
        kernel.append(k_ms)
    counts = series.struct.field("count").to_numpy()
    numpy_ms = timed(
        lambda: (ghnp.histogram(x, bins, range=kw.get("range")), cp.cuda.Device().synchronize()),
        reps,
    )
    return {
        "kernel_ms": median(kernel),
        "api_ms": median(wall),
        "numpy_ms": numpy_ms,
        "plan": plan,
        "counts": counts,
    }


def kernel_of(report: str) -> str:
    """The counting kernel named in the engine's report."""
    return next(line.split()[1] for line in report.splitlines() if line.startswith("kernel "))


def device_data(n: int, dtype: str, dist: str, seed: int) -> cp.ndarray:
    rng = cp.random.default_rng(seed)
    if dist == "uniform":
        x = rng.random(n, dtype=cp.float32)
    elif dist == "normal":
        x = cp.clip(rng.standard_normal(n, dtype=cp.float32) * 0.1 + 0.5, 0, 0.999999)
    elif dist == "sorted":
        x = cp.sort(rng.random(n, dtype=cp.float32))
    else:
        x = cp.full(n, 0.3, dtype=cp.float32)
    if dtype == "float64":
        return x.astype(cp.float64)
    if dtype == "int32":
        return (x * 1_000_000).astype(cp.int32)
    return x


def check(x: cp.ndarray, bins: int, counts: np.ndarray, rng_arg: tuple[float, float]) -> bool:
    # cupy's own histogram as the cross-check (numpy-identical edges for uniform data is
    # covered by the gpu tests; here we guard the benchmark against silent wrong answers)
    total = int(counts.sum())
    inside = int(((x >= rng_arg[0]) & (x <= rng_arg[1])).sum())
    return total == inside


def ours_dd(xy: cp.ndarray, bins: object, rng_arg: object, reps: int) -> dict[str, object]:
    """histogramdd of an (n, d) device array through the native call, kernel time by events."""
    sample = _cuda.columns((xy,))
    dims = xy.shape[1]
    options = _internal.HistogramDdOptions(
        _pickled(
            _args.dd_kwargs(
                dims,
                bins,
                rng_arg,
                density=False,
                closed="left",
                flow=False,
                device="auto",
                kernel="auto",
            )
        )
    )
    args = ([f"x{j}" for j in range(dims)], sample, options)
    series, plan, _ = _internal.histogram_cuda(*args)
    kernel, wall = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        series, plan, k_ms = _internal.histogram_cuda(*args)
        wall.append((time.perf_counter() - t0) * 1e3)
        kernel.append(k_ms)
    counts = series.struct.field("count").to_numpy()
    return {"kernel_ms": median(kernel), "api_ms": median(wall), "plan": plan, "counts": counts}


def timed(run: object, reps: int = 5) -> float:
    """Median wall ms of `run()` after one warm-up call."""
    run()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        run()
        times.append((time.perf_counter() - t0) * 1e3)
    return median(times)


def bench_host() -> list[dict[str, object]]:
    """From a Polars column in host memory, end to end: the first call by each transfer, the
    call on a pinned column, the CPU backend and Polars' own hist."""
    rows = []
    for dtype, log2 in [("float32", 28), ("float64", 27)]:
        rng = np.random.default_rng(3)
        x = rng.random(1 << log2).astype(dtype)
        df = pl.DataFrame({"x": x})
        del x
        nbytes = (1 << log2) * np.dtype(dtype).itemsize
        for bins in [256, 65_536]:
            row: dict[str, object] = {"dtype": dtype, "n": 1 << log2, "bins": bins, "bytes": nbytes}

            def select(device: str, df: pl.DataFrame = df, bins: int = bins) -> None:
                df.select(pl.col("x").gpu_hist.histogram(bins, range=(0.0, 1.0), device=device))

            for transfer in ["pageable", "staged", "registered"]:
                os.environ["POLARS_GPU_HIST_TRANSFER"] = transfer
                try:
                    row[f"first_{transfer}_ms"] = timed(lambda: select("gpu"))
                except pl.exceptions.PolarsError as e:
                    row[f"first_{transfer}_ms"] = float("nan")
                    row[f"{transfer}_error"] = str(e).splitlines()[0]
            del os.environ["POLARS_GPU_HIST_TRANSFER"]
            gh.pin(df)
            row["pinned_ms"] = timed(lambda: select("gpu"), reps=9)
            gh.unpin(df)
            row["auto_ms"] = timed(lambda: select("auto"))
            row["cpu_ms"] = timed(lambda: select("cpu"), reps=3)
            s = df["x"]
            row["polars_hist_ms"] = timed(lambda s=s, bins=bins: s.hist(bin_count=bins), reps=1)
            rows.append(row)
            print(json.dumps(row), flush=True)
        del df
    return rows


def bench_2d(reps: int) -> list[dict[str, object]]:
    """2^27 float32 (x, y) pairs: on the device as one (n, 2) array (as peers.py gives
    cupy.histogramdd), with equal bins and with explicit edges; then from a Polars frame."""
    m = 1 << 27
    rng = cp.random.default_rng(5)
    xy = cp.stack([rng.random(m, dtype=cp.float32), rng.random(m, dtype=cp.float32)], axis=1)
    rows = []
    for b in [64, 256, 1024]:
        edges = np.linspace(0, 1, b + 1).tolist()
        for label, bins, rng_arg in [
            ("equal bins", b, [(0.0, 1.0), (0.0, 1.0)]),
            ("edges", [edges, edges], None),
        ]:
            r = ours_dd(xy, bins, rng_arg, reps)
            counts = r.pop("counts")
            row = {
                "what": "2d_device",
                "bins": f"{b}x{b}",
                "how": label,
                "kernel": kernel_of(r["plan"]),
                "kernel_ms": r["kernel_ms"],
                "api_ms": r["api_ms"],
                "ok": int(counts.sum()) == m,
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    host = cp.asnumpy(xy)
    del xy
    cp.get_default_memory_pool().free_all_blocks()
    frame = pl.DataFrame({"x": host[:, 0], "y": host[:, 1]})
    del host
    for b in [64, 1024]:
        row = {"what": "2d_host", "bins": f"{b}x{b}", "rows": m}
        for device in ["gpu", "cpu"]:
            expr = gh.histogram2d("x", "y", bins=b, range=[(0, 1), (0, 1)], device=device)
            frame.select(expr)
            times = []
            for _ in range(3):
                t0 = time.perf_counter()
                frame.select(expr)
                times.append((time.perf_counter() - t0) * 1e3)
            row[f"{device}_ms"] = median(times)
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def bench_by() -> list[dict[str, object]]:
    """by= with 10,000 groups against group_by().agg(), which calls the plugin per group."""
    n = 1 << 25
    rng = np.random.default_rng(9)
    frame = pl.DataFrame({"x": rng.random(n).astype(np.float32), "g": rng.integers(0, 10_000, n)})
    row: dict[str, object] = {"what": "by", "rows": n, "groups": 10_000, "bins": 64}
    variants = {
        "by_gpu_ms": lambda: frame.select(
            pl.col("x").gpu_hist.histogram(bins=64, range=(0, 1), by="g", device="gpu")
        ),
        "by_cpu_ms": lambda: frame.select(
            pl.col("x").gpu_hist.histogram(bins=64, range=(0, 1), by="g", device="cpu")
        ),
        "group_by_agg_ms": lambda: frame.group_by("g").agg(
            pl.col("x").gpu_hist.histogram(bins=64, range=(0, 1))
        ),
    }
    for name, run in variants.items():
        run()
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            run()
            times.append((time.perf_counter() - t0) * 1e3)
        row[name] = median(times)
    print(json.dumps(row), flush=True)
    return [row]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--log2n", type=int, default=29)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument(
        "--sections", default="device,host,nd", help="comma-separated: device, host, nd"
    )
    args = ap.parse_args()
    n = 1 << args.log2n
    reps = args.reps
    results: list[dict[str, object]] = []
    dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"device: {dev}; n = 2^{args.log2n}", flush=True)

    bins_list = [16, 256, 4096, 32_768, 65_536, 1 << 20, 1 << 24]
    if args.quick:
        bins_list = [256, 65_536, 1 << 20]
    sections = set(args.sections.split(","))
    for dtype in ["float32", "float64", "int32"] if "device" in sections else []:
        dists = ["uniform", "normal", "degenerate", "sorted"] if dtype == "float32" else ["uniform"]
        sizes = bins_list if dtype == "float32" else [256, 65_536]
        for dist in dists:
            x = device_data(n, dtype, dist, seed=len(results) + 1)
            roof = roofline_ms(x, reps)
            rng_arg = (0.0, 1.0) if dtype != "int32" else (0.0, 1_000_000.0)
            for bins in sizes:
                for kernel in ["auto"]:
                    r = ours(x, bins, reps, range=rng_arg, kernel=kernel)
                    ok = check(x, bins, r.pop("counts"), rng_arg)
                    chosen = kernel_of(r["plan"])
                    row = {
                        "dtype": dtype,
                        "dist": dist,
                        "bins": bins,
                        "kernel": chosen,
                        "kernel_ms": r["kernel_ms"],
                        "api_ms": r["api_ms"],
                        "numpy_ms": r["numpy_ms"],
                        "roofline_ms": roof,
                        "share": roof / r["kernel_ms"],
                        "ok": ok,
                    }
                    results.append(row)
                    print(json.dumps(row), flush=True)
            del x
            cp.get_default_memory_pool().free_all_blocks()

    host = bench_host() if "host" in sections and not args.quick else []

    nd = bench_2d(reps) + bench_by() if "nd" in sections else []

    with open(os.path.join(OUT, "gpu_bench.json"), "w") as f:
        json.dump(
            {"device": dev, "n": n, "device_resident": results, "host": host, "nd": nd},
            f,
            indent=1,
        )

    print(f"\n{dev}, 2^{args.log2n} values on the device; kernel time (events), median of {reps}")
    print(
        f"{'dtype':8s}{'dist':11s}{'bins':>9s}  {'kernel':38s}{'kernel':>8s}{'numpy':>8s}"
        f"{'frame':>8s}{'roofline':>9s}{'ok':>4s}"
    )
    for r in results:
        print(
            f"{r['dtype']:8s}{r['dist']:11s}{r['bins']:>9d}  {r['kernel']:38s}"
            f"{r['kernel_ms']:8.3f}{r['numpy_ms']:8.2f}{r['api_ms']:8.2f}"
            f"{100 * r['share']:8.0f}%{'' if r['ok'] else ' !!':>4s}"
        )
    print("\nfrom host memory (Polars column), median ms")
    for r in host:
        print(json.dumps(r))
    print("\nn-D and by=")
    for r in nd:
        print(json.dumps(r))


if __name__ == "__main__":
    main()
