"""Many GPUs from files (issue 52): ``polars_gpu_hist.dask.histogram_scan`` over a directory of
Parquet files on 1, 2 and 4 GPUs of one host (one worker per GPU), on a CPU cluster of the same
threads, beside Dask's own read of the same files on the same workers and dask-histogram.

    python benches/dask_files.py --gpus 1,2,4            # a 4-GPU host: 16 GiB, 256 and 65,536 bins
    python benches/dask_files.py --gpus 0 --gib 1 --files 8 --repeats 2   # CPU only (2 cores)

Files of float32 uniform on [0, 1) (snappy, row groups of 2^22 rows), ``--gib`` in all in
``--files`` files, are written once per call (timed apart, kept with ``--keep``) and read once
before the runs (the page cache is warm: said in the JSON). Every configuration has the same
threads per worker, the host's cores divided by the most GPUs asked for (``--threads``), so that
scaling by GPUs is not scaling by cores: one Nanny per GPU (``polars_gpu_hist.dask.cluster``,
``CUDA_VISIBLE_DEVICES`` each), and a CPU cluster of as many workers as the most GPUs, each with
those threads. Rows, each timed end to end (``.compute()``; median of ``--repeats`` after one
warm-up):

- ``floor``: ``dd.read_parquet(files).x.sum()`` on the same workers (Dask's own read);
- ``ours``: ``histogram_scan(files, "x", bins, range=(0, 1)).compute()`` at each bin count;
- ``dask-histogram`` on the CPU cluster, where it imports and works (its error otherwise).

Counts are checked against numpy's over all the files (``np.histogram`` per file, summed).
One JSON object on stdout (and in ``--out``), a table on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

RANGE = (0.0, 1.0)
ROW_GROUP = 1 << 22


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gpus", default="1,2,4", help="GPU counts (0: the CPU cluster only)")
    p.add_argument("--gib", type=float, default=16.0, help="size of the float32 data")
    p.add_argument("--files", type=int, default=32)
    p.add_argument("--bins", default="256,65536")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=None, help="threads per worker")
    p.add_argument("--no-cpu", action="store_true", help="skip the CPU cluster")
    p.add_argument("--dir", default="/tmp/pgh-dask-files")
    p.add_argument("--keep", action="store_true")
    p.add_argument("--out", default=None)
    return p.parse_args()


def write_files(directory: Path, gib: float, count: int) -> tuple[list[str], dict[str, Any]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    directory.mkdir(parents=True, exist_ok=True)
    rows = int(gib * 2**30 / 4 / count)
    paths = [str(directory / f"part{k:04d}.parquet") for k in range(count)]
    t = time.perf_counter()
    written = 0
    for k, path in enumerate(paths):
        if os.path.exists(path) and pq.ParquetFile(path).metadata.num_rows == rows:
            continue
        rng = np.random.default_rng(1000 + k)
        with pq.ParquetWriter(path, pa.schema([("x", pa.float32())]), compression="snappy") as w:
            for start in range(0, rows, ROW_GROUP):
                x = rng.random(min(ROW_GROUP, rows - start), dtype=np.float32)
                w.write_table(pa.table({"x": x}), row_group_size=ROW_GROUP)
        written += 1
    info = {"files": count, "rows_per_file": rows, "write_s": time.perf_counter() - t}
    info["written"] = written
    info["bytes"] = sum(os.path.getsize(p) for p in paths)
    return paths, info


def reference(paths: list[str], bins: list[int]) -> dict[int, list[int]]:
    """numpy's counts over all the files, file by file (never all in memory)."""
    import pyarrow.parquet as pq

    total = {b: np.zeros(b, np.int64) for b in bins}
    for path in paths:
        x = pq.read_table(path).column("x").to_numpy()
        for b in bins:
            total[b] += np.histogram(x, b, range=RANGE)[0]
    return {b: c.tolist() for b, c in total.items()}


def timed(fn: Any, repeats: int) -> tuple[list[float], Any]:
    fn()  # warm-up
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return times, out


def run_cluster(
    name: str, gpus: int, workers: int, threads: int, paths: list[str], bins: list[int],
    expected: dict[int, list[int]], repeats: int,
) -> dict[str, Any]:  # fmt: skip
    import dask.dataframe as dd
    from dask.distributed import Client

    import polars_gpu_hist.dask as ghd

    cluster = (
        ghd.cluster(gpus, threads_per_worker=threads)
        if gpus
        else ghd.cluster(0, workers=workers, threads_per_worker=threads)
    )
    out: dict[str, Any] = {"workers": workers, "gpus": gpus, "threads_per_worker": threads}
    with cluster, Client(cluster) as client:
        client.wait_for_workers(workers)
        device = "gpu" if gpus else "cpu"

        def floor() -> Any:
            return dd.read_parquet(paths).x.sum().compute()

        times, _ = timed(floor, repeats)
        out["floor_s"] = statistics.median(times)
        out["floor_all_s"] = times
        for b in bins:

            def ours(b: int = b) -> Any:
                return ghd.histogram_scan(paths, "x", b, range=RANGE, device=device).compute()

            times, h = timed(ours, repeats)
            out[f"ours_{b}_s"] = statistics.median(times)
            out[f"ours_{b}_all_s"] = times
            out[f"ours_{b}_counts_equal_numpy"] = [int(c) for c in h.counts] == expected[b]
            out[f"ours_{b}_over_floor"] = out[f"ours_{b}_s"] / out["floor_s"]
            if not gpus:
                out[f"dask_histogram_{b}"] = dask_histogram(paths, b, expected[b], repeats)
    print(f"{name}: {json.dumps(out)}", file=sys.stderr)
    return out


def dask_histogram(paths: list[str], bins: int, expected: list[int], repeats: int) -> dict:
    """dask-histogram's fill of the same Dask DataFrame column, where it imports and works."""
    try:
        import boost_histogram as bh
        import dask.dataframe as dd
        import dask_histogram as dh
    except ImportError as e:
        return {"error": f"not installed here ({e}); it pins dask<2025.4 (through dask-awkward)"}
    try:

        def run() -> Any:
            x = dd.read_parquet(paths).x
            return dh.factory(x, axes=(bh.axis.Regular(bins, *RANGE),)).compute()

        times, h = timed(run, repeats)
        counts = [int(c) for c in h.values()]
        return {"s": statistics.median(times), "counts_equal_numpy": counts == expected}
    except Exception as e:  # its Dask DataFrame inputs are reported broken on recent Dask
        return {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"}


def visible_gpus() -> int:
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:
        return 0


def main() -> None:
    args = parse_args()
    counts = [int(g) for g in args.gpus.split(",") if g.strip()]
    have = visible_gpus()
    skipped = [g for g in counts if g > have]
    counts = [g for g in counts if 0 < g <= have]
    most = max(counts, default=1)
    cores = os.cpu_count() or 1
    threads = args.threads or max(1, cores // most)
    bins = [int(b) for b in args.bins.split(",")]
    paths, files = write_files(Path(args.dir), args.gib, args.files)
    for p in paths:  # a warm page cache
        with open(p, "rb") as f:
            while f.read(1 << 24):
                pass
    expected = reference(paths, bins)
    results: dict[str, Any] = {
        "host": {"cores": cores, "gpus": have, "date": time.strftime("%Y-%m-%d")},
        "threads_per_worker": threads,
        "data_gib": args.gib,
        "files": files,
        "page_cache": "warm (each file read once before the runs)",
        "skipped_gpu_counts": skipped,
        "configs": {},
    }
    for g in counts:
        results["configs"][f"{g}gpu"] = run_cluster(
            f"{g}gpu", g, g, threads, paths, bins, expected, args.repeats
        )
    if not args.no_cpu:
        results["configs"]["cpu"] = run_cluster(
            "cpu", 0, most, threads, paths, bins, expected, args.repeats
        )
    one = results["configs"].get("1gpu")
    for name, r in results["configs"].items():
        for b in bins:
            if one and name.endswith("gpu"):
                r[f"speedup_{b}_vs_1gpu"] = one[f"ours_{b}_s"] / r[f"ours_{b}_s"]
    text = json.dumps(results, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    lines = ["| config | floor s | " + " | ".join(f"ours {b} s (x floor)" for b in bins) + " |"]
    lines.append("|---|---:|" + "---:|" * len(bins))
    for name, r in results["configs"].items():
        cells = [f"{r[f'ours_{b}_s']:.3f} ({r[f'ours_{b}_over_floor']:.2f})" for b in bins]
        lines.append(f"| {name} | {r['floor_s']:.3f} | " + " | ".join(cells) + " |")
    print("\n".join(lines), file=sys.stderr)
    if not args.keep:
        for p in paths:
            os.unlink(p)


if __name__ == "__main__":
    main()
