# ruff: noqa: B023
# (Each closure is timed at once, inside the loop iteration that binds its variables.)
"""Issue 50's whole calls against one read of their bytes, one table: the numpy drop-in
(`polars_gpu_hist.numpy.histogram`, `histogramdd`) on CuPy arrays with the counts left on the
device, and `gh.histogramdd` with a frame back, beside torch.histc, cupy.histogram,
cupy.bincount or cupy.histogramdd and the read roofline (a float32 cupy.sum of the same bytes),
in the same process: synchronized wall medians after a warm-up (CUDA-event medians beside).

The plan chooses the family (no pin), by the tuning the process opened its GPU with
(`POLARS_GPU_HIST_TUNING`): each `--tuning` runs in a child process of its own, the first with
the peers, and the table puts them side by side, so that a family the plan does not choose yet
is timed through the very path it would ship on (counts by value and their fold included).
Every call's counts are checked against numpy's on the first 2^24 rows, and their total.

Cases: 2^29 float32 (uniform, normal) into 256, 65,536, 1M and 16M bins; 2^30 uint8 (uniform,
normal, one value) into 256; 2^29 uint16 (uniform, normal) into 65,536; 2^27 float32 pairs
(uniform, normal) into 1024 x 1024.

Usage: python benches/read_limit.py [--reps 7] [--tuning "" --tuning "bytes=banked" ...]
Writes $OUT/read_limit.json (or ./read_limit.json) and prints the table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

CHECK_ROWS = 1 << 24
# Today's plan, then the lab's candidates through the plan (src/gpu/plan.rs `Tuning`); a
# candidate's process runs only the cases its tuning changes.
TUNINGS = [
    "",
    "bytes=banked,large_bins=radix,radix_count=paired,interleaved=no",
    "bytes=private,large_bins=radix,radix_count=batched,interleaved=yes",
]


def timed(cp: Any, run: Callable[[], Any], reps: int) -> tuple[float, float]:
    """(synchronized wall median, CUDA-event median) in ms, after a warm-up."""
    run()
    cp.cuda.Device().synchronize()
    walls, events = [], []
    stream = cp.cuda.get_current_stream()
    for _ in range(reps):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        t0 = time.perf_counter()
        start.record(stream)
        run()
        end.record(stream)
        end.synchronize()
        walls.append((time.perf_counter() - t0) * 1e3)
        events.append(cp.cuda.get_elapsed_time(start, end))
    return statistics.median(walls), statistics.median(events)


def make(cp: Any, kind: str, dist: str, log2: int) -> Any:
    rng = cp.random.default_rng(11)
    n = 1 << log2
    if kind in ("uint8", "uint16"):
        top, dtype = (256, cp.uint8) if kind == "uint8" else (65536, cp.uint16)
        if dist == "uniform":
            return rng.integers(0, top, n, dtype=cp.int32).astype(dtype)
        if dist == "normal":  # an image's bright spot
            noise = rng.standard_normal(n, dtype=cp.float32)
            return cp.clip(noise * (top / 11) + top / 2, 0, top - 1).astype(dtype)
        return cp.full(n, top // 3, dtype=dtype)
    m = n * (2 if kind == "pairs" else 1)
    if dist == "uniform":
        x = rng.random(m, dtype=cp.float32)
    else:
        x = cp.clip(rng.standard_normal(m, dtype=cp.float32) * 0.1 + 0.5, 0, 1)
    return x.reshape(n, 2) if kind == "pairs" else x


# (kind, log2 rows, distributions, bins, range)
CASES = [
    ("float32", 29, ["uniform", "normal"], 256, (0.0, 1.0)),
    ("float32", 29, ["uniform", "normal"], 65_536, (0.0, 1.0)),
    ("float32", 29, ["uniform", "normal"], 1 << 20, (0.0, 1.0)),
    ("float32", 29, ["uniform", "normal"], 1 << 24, (0.0, 1.0)),
    ("uint8", 30, ["uniform", "normal", "one value"], 256, (0, 256)),
    ("uint16", 29, ["uniform", "normal"], 65_536, (0, 65_536)),
    ("pairs", 27, ["uniform", "normal"], 1024, (0.0, 1.0)),
]


def tuned(kind: str, bins: int) -> bool:
    """Whether a tuning's choices change this case: bytes, large bins, 2-D."""
    return kind in ("uint8", "pairs") or (kind == "float32" and bins > 65_536)


def child(reps: int, with_peers: bool) -> list[dict]:
    """Every case in this process (under a candidate's tuning, those it changes): ours, the
    roofline, and the peers."""
    import cupy as cp
    import numpy as np

    import polars_gpu_hist as gh
    import polars_gpu_hist.numpy as ghnp

    try:
        import torch
    except ImportError:  # pragma: no cover - the GPU host has it
        torch = None
    rows = []
    candidate = bool(os.environ.get("POLARS_GPU_HIST_TUNING"))
    for kind, log2, dists, bins, rng_ in CASES:
        if candidate and not tuned(kind, bins):
            continue
        for dist in dists:
            x = make(cp, kind, dist, log2)
            flat = x.reshape(-1)
            as_f32 = flat.view(cp.float32)
            roof, roof_event = timed(cp, lambda: as_f32.sum(), reps)
            label = f"{kind} 2^{log2} {dist}, {bins}{f' x {bins}' if kind == 'pairs' else ''}"
            calls: dict[str, Callable[[], Any]] = {}
            if kind == "pairs":
                ranges = [rng_, rng_]
                calls["ours"] = lambda: ghnp.histogramdd(x, bins, range=ranges)[0]
                calls["ours, a frame back"] = lambda: gh.histogramdd(x, bins=bins, range=ranges)
                prefix = x[:CHECK_ROWS]
                want = np.histogramdd(cp.asnumpy(prefix), bins, range=ranges)[0].ravel()
                got = ghnp.histogramdd(prefix, bins, range=ranges)[0].ravel()
                explained = ""  # explain takes one axis
            else:
                calls["ours"] = lambda: ghnp.histogram(x, bins, range=rng_)[0]
                prefix = x[:CHECK_ROWS]
                want = np.histogram(cp.asnumpy(prefix), bins, range=rng_)[0]
                got = ghnp.histogram(prefix, bins, range=rng_)[0]
                explained = gh.explain(x, bins, range=rng_)
            # Every row of the whole column lies in the range: the total is its length.
            total = int(calls["ours"]().sum())
            exact = bool(np.array_equal(cp.asnumpy(got), want)) and total == x.shape[0]
            if with_peers:
                if kind == "pairs":
                    calls["cupy.histogramdd"] = lambda: cp.histogramdd(x, bins, range=ranges)[0]
                elif kind == "float32":
                    if torch is not None:
                        t = torch.from_dlpack(x)
                        calls["torch.histc"] = lambda: torch.histc(t, bins, 0, 1)
                    calls["cupy.histogram"] = lambda: cp.histogram(x, bins, range=rng_)[0]
                else:
                    calls["cupy.bincount"] = lambda: cp.bincount(x, minlength=bins)
                    if kind == "uint8":
                        calls["cupy.histogram"] = lambda: cp.histogram(x, bins, range=rng_)[0]
            kernel = [line for line in explained.splitlines() if line.startswith("kernel ")]
            for name, call in calls.items():
                wall, event = timed(cp, call, reps if "ours" in name else max(3, reps // 2))
                rows.append(
                    dict(
                        case=label,
                        call=name,
                        ms=wall,
                        event_ms=event,
                        roof_ms=roof,
                        roof_event_ms=roof_event,
                        exact=exact if "ours" in name else None,
                        kernel=kernel[0].split()[1] if kernel and "ours" in name else "",
                    )
                )
                print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
            calls.clear()  # the next case's arrays replace this one's
            cp.get_default_memory_pool().free_all_blocks()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--tuning", action="append", default=None, help="POLARS_GPU_HIST_TUNING")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--peers", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.reps, args.peers)))
        return
    tunings = args.tuning if args.tuning is not None else TUNINGS
    runs: dict[str, list[dict]] = {}
    for i, tuning in enumerate(tunings):
        env = dict(os.environ, POLARS_GPU_HIST_TUNING=tuning)
        cmd = [sys.executable, __file__, "--child", "--reps", str(args.reps)]
        peers = ["--peers"] if i == 0 else []
        done = subprocess.run(cmd + peers, env=env, stdout=subprocess.PIPE)
        if done.returncode != 0:
            print(f"tuning {tuning!r}: the child failed ({done.returncode})", flush=True)
            continue
        runs[tuning] = json.loads(done.stdout.decode().strip().splitlines()[-1])
    out = Path(os.environ.get("OUT", ".")) / "read_limit.json"
    out.write_text(json.dumps(runs, indent=1))
    print_table(runs)


def print_table(runs: dict[str, list[dict]]) -> None:
    """One row a case: the roofline, ours under each tuning (ms and times the read), the peers."""
    names = {t: (t or "today's plan") for t in runs}
    first = next(iter(runs.values()), [])
    cases = list(dict.fromkeys(r["case"] for r in first))
    head = " | ".join(f"ours: {names[t]}" for t in runs)
    print(f"\n| case | read ms | {head} | best peer |")
    print("|---|---:|" + "---:|" * len(runs) + "---|")
    for case in cases:
        rows = [r for r in first if r["case"] == case]
        roof = rows[0]["roof_ms"]
        cells = []
        for tuning in runs:
            mine = [r for r in runs[tuning] if r["case"] == case and r["call"].startswith("ours")]
            cells.append(
                " / ".join(
                    f"{r['ms']:.3f} ({r['ms'] / r['roof_ms']:.2f}x{'' if r['exact'] else ' WRONG'})"
                    f"{' frame' if 'frame' in r['call'] else ''} {r['kernel']}"
                    for r in mine
                )
            )
        peers = [r for r in rows if not r["call"].startswith("ours")]
        best = min(peers, key=lambda r: r["ms"], default=None)
        peer = f"{best['call']} {best['ms']:.2f}" if best else ""
        print(f"| {case} | {roof:.3f} | " + " | ".join(cells) + f" | {peer} |")


if __name__ == "__main__":
    main()
