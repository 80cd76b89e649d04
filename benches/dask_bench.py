"""Scaling through Dask: one GPU vs two GPUs (one worker per GPU) vs the CPU, end to end.

A float32 data set (16 GiB by default) is generated on the workers as a Dask array (never on the
client, never from a file), kept in their host memory, then histogrammed with
``polars_gpu_hist.dask.histogram``: each worker copies its partitions to its own GPU (over its
own PCIe link) or counts them on its CPU cores, and the partials are summed in Dask's tree
reduction. Prints one JSON object; every configuration must give the same counts.

    python benches/dask_bench.py                        # 16 GiB: cpu, gpu1, gpu2
    python benches/dask_bench.py --gib 0.25 --configs cpu   # a local smoke run

GPU workers come from dask-cuda's LocalCUDACluster where it is installed, otherwise from one
Nanny per GPU with its own CUDA_VISIBLE_DEVICES (what LocalCUDACluster does).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import zlib
from typing import Any

import numpy as np


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gib", type=float, default=16.0, help="size of the float32 data set")
    p.add_argument("--chunk-mib", type=float, default=256.0, help="size of one partition")
    p.add_argument("--bins", type=int, default=256)
    p.add_argument("--repeats", type=int, default=5, help="timed runs after one warm-up")
    p.add_argument("--configs", default="cpu,gpu1,gpu2", help="comma-separated: cpu, gpu1, gpu2")
    p.add_argument("--cpu-threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--threads-per-gpu", type=int, default=2, help="Dask threads per GPU worker")
    p.add_argument("--split-every", type=int, default=8)
    p.add_argument(
        "--transfer",
        default="auto",
        choices=["auto", "pageable", "staged", "registered"],
        help="host-to-device path of the GPU workers (POLARS_GPU_HIST_TRANSFER)",
    )
    return p.parse_args()


def make_cluster(config: str, args: argparse.Namespace) -> tuple[Any, str]:
    from dask.distributed import LocalCluster

    if config == "cpu":
        # One process whose threads share the CPU backend's rayon pool (all cores).
        cluster = LocalCluster(
            n_workers=1,
            threads_per_worker=args.cpu_threads,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            memory_limit=0,
        )
        return cluster, "LocalCluster(1 worker)"
    gpus = {"gpu1": [0], "gpu2": [0, 1]}[config]
    try:
        from dask_cuda import LocalCUDACluster
    except ImportError:
        from polars_gpu_hist.dask import _per_gpu_cluster

        return (
            _per_gpu_cluster(gpus, args.threads_per_gpu),
            f"one Nanny per GPU ({len(gpus)}; dask-cuda not installed)",
        )
    cluster = LocalCUDACluster(
        CUDA_VISIBLE_DEVICES=",".join(map(str, gpus)),
        threads_per_worker=args.threads_per_gpu,
        dashboard_address=None,
    )
    return cluster, f"LocalCUDACluster({len(gpus)} workers)"


def run(config: str, args: argparse.Namespace) -> dict[str, Any]:
    import dask.array as da
    from dask.distributed import Client, wait

    import polars_gpu_hist as gh
    import polars_gpu_hist.dask as ghd

    n = int(args.gib * (1 << 30)) // 4
    chunk = max(1, int(args.chunk_mib * (1 << 20)) // 4)
    device = "cpu" if config == "cpu" else "gpu"
    cluster, kind = make_cluster(config, args)
    with cluster, Client(cluster) as client:
        workers = client.run(lambda: (os.environ.get("CUDA_VISIBLE_DEVICES"), gh.gpu_available()))
        if device == "gpu" and not all(ok for _, ok in workers.values()):
            return {"config": config, "skipped": f"a worker has no usable GPU: {workers}"}
        t0 = time.perf_counter()
        x = da.random.default_rng(0).random(n, dtype=np.float32, chunks=chunk).persist()
        wait(x)
        generate_s = time.perf_counter() - t0
        per_worker = {w: len(keys) for w, keys in client.has_what().items()}

        def once() -> tuple[float, gh.Histogram]:
            t = time.perf_counter()
            h = ghd.histogram(
                x, bins=args.bins, range=(0.0, 1.0), device=device, split_every=args.split_every
            ).compute()
            return time.perf_counter() - t, h

        warm_s, hist = once()  # compiles kernels, warms every worker
        times = [once()[0] for _ in range(args.repeats)]
    # The median: a repeat of the same (pure) graph may be answered from results the scheduler
    # still holds, which `min` would report as a 600 GB/s copy.
    median = float(np.median(times))
    counts = hist.counts
    return {
        "config": config,
        "cluster": kind,
        "device": device,
        "partitions": x.npartitions,
        "partitions_per_worker": sorted(per_worker.values()),
        "generate_s": round(generate_s, 3),
        "warmup_s": round(warm_s, 4),
        "seconds": [round(t, 4) for t in times],
        "median_s": round(median, 4),
        "gb_per_s": round(n * 4 / median / 1e9, 2),
        "total": int(counts.sum()),
        "exact_total": int(counts.sum()) == n,  # every value of random() lies in [0, 1)
        "counts_crc32": zlib.crc32(counts.tobytes()),
    }


def main() -> int:
    args = parse_args()
    # Worker processes inherit it.
    os.environ["POLARS_GPU_HIST_TRANSFER"] = args.transfer
    results = []
    for config in [c.strip() for c in args.configs.split(",") if c.strip()]:
        print(f"running {config} ...", file=sys.stderr, flush=True)
        try:
            results.append(run(config, args))
        except Exception as e:  # report, and go on with the other configurations
            results.append({"config": config, "error": f"{type(e).__name__}: {e}"})
    by = {r["config"]: r for r in results if "median_s" in r}
    checks = {r["counts_crc32"] for r in by.values()}
    out: dict[str, Any] = {
        "benchmark": "dask_bench",
        "gib": args.gib,
        "values": int(args.gib * (1 << 30)) // 4,
        "bins": args.bins,
        "chunk_mib": args.chunk_mib,
        "host": platform.node(),
        "cpu_count": os.cpu_count(),
        "results": results,
        "same_counts_everywhere": len(checks) <= 1,
    }
    if "gpu1" in by and "gpu2" in by:
        out["speedup_gpu2_vs_gpu1"] = round(by["gpu1"]["median_s"] / by["gpu2"]["median_s"], 3)
    if "cpu" in by and "gpu2" in by:
        out["speedup_gpu2_vs_cpu"] = round(by["cpu"]["median_s"] / by["gpu2"]["median_s"], 3)
    print(json.dumps(out, indent=2))
    ok = out["same_counts_everywhere"] and all(r.get("exact_total", True) for r in results)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
