"""Where a file scan's time goes (issue 47 item 1): each step of reading and counting a Parquet
column alone, in a fresh process each, with the wall time and the CPU time of the process
(user + system, every thread), so that the cost of decoding, of counting and of handing rows
from one to the other can be told apart.

    python benches/files_profile.py --size 1GiB      # the 2-core machine
    python benches/files_profile.py --size 4GiB      # the 16-core GPU host

Steps (256 bins over (0, 1), float32 column):

- ``decode``: Polars' streaming read of the column (``sum`` and ``len``: the floor);
- ``batches``: the column handed to Python batch by batch (``collect_batches``, 2^20 rows);
- ``count-all`` / ``count-one``: counting the column already in memory on every core / on one
  core (``RAYON_NUM_THREADS=1``), the counting's own cost;
- ``batches+fill``: the scan before the sink, each batch filled from Python with a fan-out over
  our pool (the time waiting for a batch and the time in the fills, split);
- ``sink-cpu``: the scan now, inside the streaming engine, each morsel counted on the engine's
  thread that decoded it (the number of morsels and the seconds the engine's threads spent in
  our fills, summed);
- ``sink-gpu``: the same, morsels handed to the feeder thread and counted in batches on the GPU
  (the seconds the engine's threads spent handing them over);
- ``gpu-batches``: the column in memory, cut into morsels of 10^5 rows as the engine hands them,
  filled on the GPU in batches of 2^20 to 2^26 rows, morsels side by side (as the feeder does)
  and copied into one buffer first: the per-batch cost of the GPU fill, without the decoder;
- ``cpu-morsels``: the same morsels counted one by one on one core, against ``count-one``: the
  per-morsel cost of the CPU fill.

The file is written by ``benches/files_bench.py``'s writer (``--dir``, kept with ``--keep``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BINS, RANGE = 256, (0.0, 1.0)
STEPS = [
    "decode",
    "batches",
    "count-all",
    "count-one",
    "batches+fill",
    "sink-cpu",
    "sink-gpu",
    "gpu-batches",
    "cpu-morsels",
]
MORSEL_ROWS = 100_000


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", default="1GiB")
    p.add_argument("--dir", default="/tmp/pgh-files")
    p.add_argument("--keep", action="store_true")
    p.add_argument("--runs", type=int, default=3, help="runs of each step (median)")
    p.add_argument("--steps", default=",".join(STEPS))
    p.add_argument("--step", default=None, help=argparse.SUPPRESS)
    p.add_argument("--parquet", default=None, help=argparse.SUPPRESS)
    p.add_argument("--out", default=None)
    return p.parse_args()


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def step(name: str, path: str) -> dict[str, Any]:
    import polars as pl

    import polars_gpu_hist as gh
    from polars_gpu_hist import _native

    extra: dict[str, Any] = {}
    if name in ("gpu-batches", "cpu-morsels"):
        return morsel_costs(name, path)
    if name in ("count-all", "count-one"):
        x = pl.read_parquet(path)["x"]
        h = gh.Histogram(BINS, range=RANGE, device="cpu")
        h.fill(x.head(1000))
    cpu0, t0 = cpu_seconds(), time.perf_counter()
    if name == "decode":
        pl.scan_parquet(path).select(pl.col("x").sum(), pl.len()).collect(engine="streaming")
    elif name == "batches":
        for _ in pl.scan_parquet(path).select("x").collect_batches(chunk_size=1 << 20):
            pass
    elif name in ("count-all", "count-one"):
        h.fill(x)
    elif name == "batches+fill":
        h = gh.Histogram(BINS, range=RANGE, device="cpu")
        wait = fill = 0.0
        n = 0
        last = time.perf_counter()
        lf = pl.scan_parquet(path).select("x")
        for batch in lf.collect_batches(chunk_size=1 << 20, maintain_order=False):
            a = time.perf_counter()
            wait += a - last
            h.fill(batch.get_column("x"))
            last = time.perf_counter()
            fill += last - a
            n += 1
        extra = {"batches": n, "waiting_s": wait, "filling_s": fill}
    elif name in ("sink-cpu", "sink-gpu"):
        from polars_gpu_hist._scan import reader

        device = name.split("-")[1]
        h = gh.Histogram(BINS, range=RANGE, device=device).fill(pl.Series("x", [], pl.Float32))
        sink = _native.ScanSink(h._core, device)
        q = pl.scan_parquet(path).select(reader.sink_expr(["x"], None, sink.token).null_count())
        q.collect(engine="streaming")
        filled = sink.finish()
        calls, busy = sink.profile
        extra = {
            "morsels": calls,
            "rows_per_morsel": filled.flow()[0] / max(calls, 1),
            "engine_threads_in_fill_s": busy,
            "counting": sink.counting,
        }
    seconds, cpu = time.perf_counter() - t0, cpu_seconds() - cpu0
    return {"step": name, "seconds": seconds, "cpu_s": cpu, **extra}


def morsel_costs(name: str, path: str) -> dict[str, Any]:
    """The fill's cost per batch (GPU) or per morsel (CPU), the column in memory in morsels."""
    import polars as pl

    import polars_gpu_hist as gh

    x = pl.read_parquet(path)["x"]
    n = len(x)
    morsels = pl.concat(
        [x.slice(i, MORSEL_ROWS).rechunk() for i in range(0, n, MORSEL_ROWS)], rechunk=False
    )
    if name == "cpu-morsels":
        h = gh.Histogram(BINS, range=RANGE, device="cpu")
        h.fill(x.head(1000))
        parts = [morsels.slice(i, MORSEL_ROWS) for i in range(0, n, MORSEL_ROWS)]
        t0 = time.perf_counter()
        for part in parts:
            h.fill(part)
        seconds = time.perf_counter() - t0
        return {
            "step": name,
            "seconds": seconds,
            "cpu_s": 0.0,
            "morsels": len(parts),
            "us_per_morsel": seconds / len(parts) * 1e6,
        }
    out: dict[str, Any] = {"step": name, "seconds": 0.0, "cpu_s": 0.0}
    h = gh.Histogram(BINS, range=RANGE, device="gpu")
    h.fill(x.head(1000))
    for log2 in (20, 22, 24, 26):
        rows = 1 << log2
        for layout in ("morsels", "one-buffer"):
            batches = [morsels.slice(i, rows) for i in range(0, n, rows)]
            if layout == "one-buffer":
                batches = [b.rechunk() for b in batches]
            t0 = time.perf_counter()
            for b in batches:
                h.fill(b)
            seconds = time.perf_counter() - t0
            out[f"2^{log2} {layout} s"] = seconds
            out[f"2^{log2} {layout} GB/s"] = n * 4 / seconds / 1e9
    return out


def main() -> None:
    args = parse_args()
    if args.step:
        print(json.dumps(step(args.step, args.parquet)))
        return
    sys.path.insert(0, str(Path(__file__).parent))
    from files_bench import SIZES, write_files

    import polars_gpu_hist as gh

    directory = Path(args.dir)
    directory.mkdir(parents=True, exist_ok=True)
    files = write_files(directory, SIZES[args.size])
    steps = args.steps.split(",")
    if not gh.gpu_available():
        steps = [s for s in steps if s != "sink-gpu"]
    results: dict[str, list[dict[str, Any]]] = {}
    for _ in range(args.runs):
        for name in steps:
            env = dict(os.environ)
            if name == "count-one":
                env["RAYON_NUM_THREADS"] = "1"
            cmd = [sys.executable, __file__, "--step", name, "--parquet", files["parquet"]]
            done = subprocess.run(cmd, capture_output=True, text=True, env=env)
            if done.returncode != 0:
                results.setdefault(name, []).append({"error": done.stderr.strip()[-400:]})
                continue
            results.setdefault(name, []).append(json.loads(done.stdout.strip().splitlines()[-1]))
    summary: dict[str, Any] = {"cores": os.cpu_count(), "rows": SIZES[args.size], "steps": {}}
    for name, runs in results.items():
        ok = sorted((r for r in runs if "seconds" in r), key=lambda r: r["seconds"])
        if not ok:
            summary["steps"][name] = runs[0]
            continue
        summary["steps"][name] = ok[len(ok) // 2]  # the median run, whole
    text = json.dumps(summary, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    print("| step | s | cpu s | notes |\n|---|---:|---:|---|", file=sys.stderr)
    for name, r in summary["steps"].items():
        if "seconds" not in r:
            print(f"| {name} | error | | |", file=sys.stderr)
            continue
        notes = ", ".join(
            f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
            for k, v in r.items()
            if k not in ("step", "seconds", "cpu_s")
        )
        print(f"| {name} | {r['seconds']:.3f} | {r['cpu_s']:.2f} | {notes} |", file=sys.stderr)
    if not args.keep:
        for f in (files["parquet"], files["csv"]):
            os.unlink(f)


if __name__ == "__main__":
    main()
