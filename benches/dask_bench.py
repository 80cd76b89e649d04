"""Strong scaling through Dask: 1, 2, 4 ... GPUs (one worker each) beside a CPU cluster.

A float32 data set (16 GiB in 1 GiB partitions by default) is generated on the workers' GPUs
(never on the client): partition i from its own seed, so every configuration holds the same
values. Each GPU cluster keeps it twice: in GPU memory ("device": CuPy partitions, counted
where they lie) and in host memory ("host": numpy partitions each worker copies to its GPU).
``polars_gpu_hist.dask.histogram(...).compute()`` is timed end to end (median of the repeats
after one warm-up) at each bin count; the counts must be identical everywhere and equal to
numpy's over the same data (np.histogram per partition, summed). Prints one JSON object.

Where the time goes, per run: the partition tasks' own compute time (Dask's task stream), the
merges', and the rest of the wall time (scheduling, transfers, the client); per worker, one
partition timed alone: the count through ``polars_gpu_hist.numpy.histogram`` (the kernels,
counts left in GPU memory), ``Histogram.fill`` (plus the counts' copy and the flow) and the
whole partial task. Host-resident runs are bounded by host memory and PCIe: each worker's
host-to-device copy rate and one core's host memory copy rate are measured beside them.

    python benches/dask_bench.py --gpus 2                  # on a 2-GPU host: cpu, 1 and 2 GPUs
    python benches/dask_bench.py --gpus 0 --gib 0.25 --partition-gib 0.03125  # CPU smoke run

GPU workers are one Nanny per GPU with its own CUDA_VISIBLE_DEVICES (what dask-cuda's
LocalCUDACluster makes; dask-cuda itself is used where installed).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
import zlib
from typing import Any

import numpy as np

RANGE = (0.0, 1.0)


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gpus", type=int, default=2, help="GPUs of the host (0: CPU only)")
    p.add_argument("--gib", type=float, default=16.0, help="size of the float32 data set")
    p.add_argument("--partition-gib", type=float, default=1.0, help="size of one partition")
    p.add_argument("--bins", default="256,65536", help="comma-separated bin counts")
    p.add_argument(
        "--alone-bins",
        default="256,65536,1048576",
        help="bin counts at which one partition is timed alone on its worker",
    )
    p.add_argument("--repeats", type=int, default=5, help="timed runs after one warm-up")
    p.add_argument("--residency", default="device,host", help="device, host or both")
    p.add_argument("--no-cpu", action="store_true", help="skip the CPU cluster")
    p.add_argument("--cpu-threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--threads-per-gpu", type=int, default=2, help="Dask threads per GPU worker")
    p.add_argument("--split-every", type=int, default=8)
    p.add_argument("--out", help="also write the JSON here, after each cluster")
    return p.parse_args()


def gpu_counts(gpus: int) -> list[int]:
    """1, 2, 4, ... up to the host's GPUs, and the host's count itself."""
    counts = [k for k in (1, 2, 4, 8, 16) if k <= gpus]
    return counts + ([gpus] if gpus and gpus not in counts else [])


def make_cluster(gpus: int, args: argparse.Namespace) -> tuple[Any, str]:
    from dask.distributed import LocalCluster

    if gpus == 0:
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
    try:
        from dask_cuda import LocalCUDACluster
    except ImportError:
        from polars_gpu_hist.dask import _per_gpu_cluster

        cluster = _per_gpu_cluster(list(range(gpus)), args.threads_per_gpu)
        return cluster, f"one Nanny per GPU ({gpus}; dask-cuda not installed)"
    cluster = LocalCUDACluster(
        CUDA_VISIBLE_DEVICES=",".join(map(str, range(gpus))),
        threads_per_worker=args.threads_per_gpu,
        dashboard_address=None,
        memory_limit=0,
    )
    return cluster, f"LocalCUDACluster({gpus} workers)"


# Run on the workers.


def generate(i: int, rows: int) -> Any:
    """Partition i, on the worker's GPU: its own seed, so every cluster holds the same data
    (without CuPy, a CPU-only smoke run, numpy makes other values)."""
    try:
        import cupy
    except ImportError:
        return np.random.default_rng(i).random(rows, dtype=np.float32)
    x = cupy.random.default_rng(i).random(rows, dtype=cupy.float32)
    cupy.cuda.Device().synchronize()
    return x


def to_host(x: Any) -> np.ndarray:
    return x.get() if hasattr(x, "get") else x


def numpy_counts(x: Any, bins: int) -> np.ndarray:
    """numpy's counts of a partition, 2**24 values at a time (numpy's temporaries stay
    small while every core runs one)."""
    host = to_host(x)
    step = 1 << 24
    total = np.zeros(bins, np.uint64)
    for start in range(0, host.size, step):
        total += np.histogram(host[start : start + step], bins=bins, range=RANGE)[0].astype(
            np.uint64
        )
    return total


def time_one_partition(x: Any, bins: int, device: str, repeats: int = 5) -> dict[str, float]:
    """One resident partition timed alone on its worker (milliseconds, medians): the count
    with counts left in GPU memory, Histogram.fill, the whole partial task, and the partial
    counted to the host instead."""
    import polars_gpu_hist as gh
    import polars_gpu_hist.numpy as ghnp
    from polars_gpu_hist.dask import tasks as _dask_tasks

    kwargs = {"bins": bins, "range": RANGE, "closed": "left", "weights": False, "device": device}
    spec = _dask_tasks.Spec(kwargs, f"bench-{bins}-{device}")
    on_device = hasattr(x, "__cuda_array_interface__")

    def sync() -> None:
        if on_device:
            import cupy

            cupy.cuda.Device().synchronize()

    def timed(run: Any) -> float:
        run()
        sync()
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            run()
            sync()
            times.append(time.perf_counter() - t)
        return round(statistics.median(times) * 1e3, 3)

    out = {
        "fill_ms": timed(lambda: gh.Histogram(**kwargs).fill(x)),
        "partial_task_ms": timed(lambda: _dask_tasks.fill(spec, x, None, "column")),
        # The partial's counts copied to the host, as partials of several columns are.
        "host_partial_ms": timed(lambda: spec.template()._counted(x)),
    }
    if on_device:
        out["count_on_device_ms"] = timed(lambda: ghnp.histogram(x, bins=bins, range=RANGE))
    return out


def copy_rates(x: Any) -> dict[str, float]:
    """GB/s of one host partition: to this worker's GPU (pageable), and a host memory copy."""
    host = to_host(x)
    out: dict[str, float] = {}
    t = time.perf_counter()
    np.copyto(np.empty_like(host), host)
    out["host_copy_gb_s"] = round(host.nbytes / (time.perf_counter() - t) / 1e9, 2)
    try:
        import cupy
    except ImportError:
        return out
    cupy.asarray(host[:1024])
    t = time.perf_counter()
    cupy.asarray(host)
    cupy.cuda.Device().synchronize()
    out["host_to_device_gb_s"] = round(host.nbytes / (time.perf_counter() - t) / 1e9, 2)
    return out


# Run on the client.


def partitions(
    client: Any, workers: list[str], args: argparse.Namespace, residencies: list[str]
) -> dict[str, Any]:
    """The data set per residency, as a Dask array and its partitions' futures: consecutive
    partitions generated on the GPU of one worker (and copied to its host memory), so that
    the first merges of the tree find their partials where they are."""
    import dask.array as da
    from dask.distributed import wait

    rows = int(args.partition_gib * (1 << 30)) // 4
    count = max(1, round(args.gib / args.partition_gib))
    on_gpu = [
        client.submit(generate, i, rows, workers=[workers[i * len(workers) // count]], pure=False)
        for i in range(count)
    ]
    wait(on_gpu)
    futures: dict[str, list[Any]] = {}
    if "host" in residencies:
        futures["host"] = [client.submit(to_host, f, pure=False) for f in on_gpu]
        wait(futures["host"])
    if "device" in residencies:
        futures["device"] = on_gpu
    del on_gpu  # released on the workers unless kept above
    arrays = {}
    for residency, parts in futures.items():
        meta = None
        if residency == "device":
            import cupy

            meta = cupy.empty(0, cupy.float32)
        blocks = [da.from_delayed(f, shape=(rows,), dtype=np.float32, meta=meta) for f in parts]
        # Persisted, as a user's array made on the workers is: its graph is its partitions'
        # keys (the same arrays, where they lie), not tasks that fetch them on every compute.
        x = da.concatenate(blocks).persist()
        wait(x)
        arrays[residency] = (x, parts)
    return arrays


def time_runs(client: Any, x: Any, bins: int, device: str, args: argparse.Namespace) -> Any:
    """Warm-up, then the timed runs; the last one's task stream says where the time went."""
    from dask.distributed import get_task_stream

    import polars_gpu_hist.dask as ghd

    def once() -> tuple[float, Any]:
        t = time.perf_counter()
        lazy = ghd.histogram(x, bins=bins, range=RANGE, device=device, split_every=args.split_every)
        h = lazy.compute()
        elapsed = time.perf_counter() - t
        # The same graph again would be answered from results the scheduler still holds: the
        # next run starts once it has let go of this one's.
        while client.run_on_scheduler(holds, lazy.key):
            time.sleep(0.005)
        return elapsed, h

    warm_s, hist = once()  # compiles kernels, warms every worker
    times = [once()[0] for _ in range(args.repeats - 1)]
    with get_task_stream(client) as stream:
        last_s, last = once()
    times.append(last_s)
    assert np.array_equal(np.asarray(last.counts), np.asarray(hist.counts))
    return warm_s, times, hist, breakdown(stream.data, last_s)


def floor_runs(client: Any, x: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Dask's own cost: a graph of the same shape as the histogram's (a task per partition
    reading it, the same tree of merges) whose tasks do nothing, timed as the runs are."""
    from dask.base import tokenize
    from dask.delayed import delayed

    parts = list(x.to_delayed().ravel())
    split = args.split_every
    seconds = []
    for run in range(args.repeats + 1):
        token = tokenize("floor", x, time.perf_counter_ns(), run)
        t = time.perf_counter()
        layer = [
            delayed(nothing)(p, dask_key_name=(f"floor-fill-{token}", i))
            for i, p in enumerate(parts)
        ]
        level = 0
        while len(layer) > split:
            level += 1
            layer = [
                delayed(nothing)(
                    *layer[i : i + split], dask_key_name=(f"floor-merge-{level}-{token}", j)
                )
                for j, i in enumerate(range(0, len(layer), split))
            ]
        delayed(nothing)(*layer, dask_key_name=f"floor-{token}").compute()
        seconds.append(time.perf_counter() - t)
    times = seconds[1:]  # after one warm-up
    return {"seconds": [round(t, 4) for t in times], "median_s": round(statistics.median(times), 4)}


def nothing(*_: Any) -> int:
    return 0


def holds(key: Any, dask_scheduler: Any = None) -> bool:
    return key in dask_scheduler.tasks


def breakdown(tasks: list[dict[str, Any]], wall_s: float) -> dict[str, Any]:
    """The run's tasks: the partition tasks' compute times, the merges', the span from the
    first task's start to the last one's end, and the wall time outside it (the graph's
    building and sending, the scheduler, the result's way back)."""
    per_kind: dict[str, list[float]] = {"fill": [], "merge": [], "finish": []}
    starts, stops = [], []
    for task in tasks:
        key = str(task.get("key"))
        kind = next((k for k in per_kind if f"gpu-hist-{k}" in key), None)
        if kind is None and "gpu-hist-" in key and "gpu-hist-spec" not in key:
            kind = "finish"
        if kind is None:
            continue
        computes = [s for s in task.get("startstops", ()) if s["action"] == "compute"]
        per_kind[kind].append(sum(s["stop"] - s["start"] for s in computes))
        starts += [s["start"] for s in computes]
        stops += [s["stop"] for s in computes]
    span = max(stops) - min(starts) if starts else 0.0
    fills = per_kind["fill"]
    return {
        "partition_tasks": len(fills),
        "partition_task_median_ms": round(statistics.median(fills) * 1e3, 3) if fills else None,
        "partition_tasks_total_ms": round(sum(fills) * 1e3, 2),
        "merge_tasks_total_ms": round(sum(per_kind["merge"]) * 1e3, 2),
        "finish_ms": round(sum(per_kind["finish"]) * 1e3, 2),
        "tasks_span_ms": round(span * 1e3, 2),
        "wall_outside_tasks_ms": round((wall_s - span) * 1e3, 2),
    }


def run_cluster(gpus: int, args: argparse.Namespace, bins_list: list[int]) -> dict[str, Any]:
    from dask.distributed import Client

    import polars_gpu_hist as gh

    cluster, kind = make_cluster(gpus, args)
    out: dict[str, Any] = {"gpus": gpus, "cluster": kind, "runs": []}
    with cluster, Client(cluster) as client:
        started = time.perf_counter()
        workers = sorted(client.scheduler_info()["workers"])
        seen = client.run(lambda: (os.environ.get("CUDA_VISIBLE_DEVICES"), gh.gpu_available()))
        out["workers"] = {w: {"visible": v, "gpu": ok} for w, (v, ok) in seen.items()}
        if gpus and not all(ok for _, ok in seen.values()):
            out["skipped"] = "a worker has no usable GPU"
            return out
        # The CPU cluster counts the host copies.
        asked = [r.strip() for r in args.residency.split(",") if r.strip()]
        residencies = asked if gpus else ["host"]
        arrays = partitions(client, workers, args, residencies)
        out["generate_s"] = round(time.perf_counter() - started, 2)
        device = "gpu" if gpus else "cpu"
        for residency in residencies:
            x, parts = arrays[residency]
            out["partitions"] = x.npartitions
            for bins in bins_list:
                warm_s, times, hist, where = time_runs(client, x, bins, device, args)
                median = statistics.median(times)
                counts = np.asarray(hist.counts)
                out["runs"].append(
                    {
                        "residency": residency,
                        "bins": bins,
                        "warmup_s": round(warm_s, 4),
                        "seconds": [round(t, 4) for t in times],
                        "median_s": round(median, 4),
                        "gb_per_s": round(x.nbytes / median / 1e9, 2),
                        "counts_crc32": zlib.crc32(counts.astype("<u8").tobytes()),
                        "total": int(counts.sum()),
                        "where_time_goes": where,
                    }
                )
            out.setdefault("dask_floor", {})[residency] = floor_runs(client, x, args)
            alone = {
                str(bins): client.submit(time_one_partition, parts[0], bins, device, pure=False)
                for bins in [int(b) for b in args.alone_bins.split(",") if b.strip()]
            }
            out.setdefault("one_partition_alone", {})[residency] = {
                bins: future.result() for bins, future in alone.items()
            }
        if not gpus:
            x, parts = arrays["host"]
            out["numpy_crc32"] = {}
            for bins in bins_list:
                per_part = client.map(numpy_counts, parts, bins=bins, pure=False)
                total = client.submit(sum_counts, per_part, pure=False).result()
                out["numpy_crc32"][str(bins)] = zlib.crc32(total.astype("<u8").tobytes())
        one = arrays[residencies[-1]][1][0]
        out["copy_rates"] = client.submit(copy_rates, one, pure=False).result()
    return out


def sum_counts(parts: list[np.ndarray]) -> np.ndarray:
    return np.sum(parts, axis=0, dtype=np.uint64)


def summarize(clusters: list[dict[str, Any]], numpy_crc: dict[str, int]) -> dict[str, Any]:
    """Speedups over one GPU per residency and bin count; counts checks."""
    table: dict[str, dict[str, float]] = {}
    floors: dict[str, dict[str, float]] = {}
    crcs: dict[str, set[int]] = {}
    for c in clusters:
        name = "cpu" if c["gpus"] == 0 else f"{c['gpus']}gpu"
        for r in c.get("runs", []):
            table.setdefault(f"{r['residency']}/{r['bins']}", {})[name] = r["median_s"]
            crcs.setdefault(str(r["bins"]), set()).add(r["counts_crc32"])
        for residency, floor in c.get("dask_floor", {}).items():
            floors.setdefault(residency, {})[name] = floor["median_s"]
    scaling = {}
    for key, by in table.items():
        one = by.get("1gpu")
        floor = floors.get(key.split("/")[0], {})
        scaling[key] = {
            name: {
                "median_s": s,
                "vs_1gpu": round(one / s, 3) if one else None,
                # The same graph's tasks doing nothing, on the same cluster.
                "dask_floor_s": floor.get(name),
            }
            for name, s in sorted(by.items())
        }
    same = all(len(v) == 1 for v in crcs.values())
    # None where no numpy reference was made (it is made on the CPU cluster: not with --no-cpu).
    equal_numpy = (
        all(crcs.get(b) == {crc} for b, crc in numpy_crc.items() if b in crcs)
        if numpy_crc
        else None
    )
    return {"scaling": scaling, "same_counts_everywhere": same, "equal_to_numpy": equal_numpy}


def report(
    clusters: list[dict[str, Any]], args: argparse.Namespace, bins_list: list[int], started: float
) -> dict[str, Any]:
    """The JSON of the clusters run so far (also written to ``--out``)."""
    numpy_crc = next((c["numpy_crc32"] for c in clusters if "numpy_crc32" in c), {})
    out = {
        "benchmark": "dask_bench",
        "gib": args.gib,
        "partition_gib": args.partition_gib,
        "bins": bins_list,
        "repeats": args.repeats,
        "host": platform.node(),
        "cpu_count": os.cpu_count(),
        **summarize(clusters, numpy_crc),
        "clusters": clusters,
        "total_s": round(time.perf_counter() - started, 1),
    }
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=2)
    return out


def main() -> int:
    args = parse_args()
    bins_list = [int(b) for b in args.bins.split(",") if b.strip()]
    started = time.perf_counter()
    clusters = []
    # The GPUs first: a run cut short has their numbers; the CPU cluster also counts with numpy.
    configs = gpu_counts(args.gpus) + ([] if args.no_cpu else [0])
    for gpus in configs:
        print(f"running {gpus or 'cpu'} ...", file=sys.stderr, flush=True)
        t = time.perf_counter()
        try:
            clusters.append(run_cluster(gpus, args, bins_list))
        except Exception as e:  # report, and go on with the other configurations
            clusters.append({"gpus": gpus, "error": f"{type(e).__name__}: {e}"})
        clusters[-1]["cluster_s"] = round(time.perf_counter() - t, 1)
        report(clusters, args, bins_list, started)
    out = report(clusters, args, bins_list, started)
    print(json.dumps(out, indent=2))
    ok = out["same_counts_everywhere"] and (args.no_cpu or out["equal_to_numpy"])
    return 0 if ok and not any("error" in c for c in clusters) else 1


if __name__ == "__main__":
    sys.exit(main())
