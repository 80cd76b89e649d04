"""Weighted sums: the default float64 additions against the fixed-point sums (src/fixed.rs,
kernels/fixed.cuh), whole calls of ``polars_gpu_hist.numpy.histogram(x, bins, range,
weights=w)``, at 256 and 65,536 bins; and whether each way gives the same bits on every run.

The way of summing is chosen once a process (``POLARS_GPU_HIST_SUMS``, src/fixed.rs
``DEFAULT_SUMS``), so each way runs in a child process of its own. Issue 51's rule: fixed point
is the default only where it costs at most 10% against the float sums at both bin counts, on the
CPU and the GPU; else it is opt-in (``POLARS_GPU_HIST_SUMS=fixed``), as the CPU's 2.6-6.5x made it.

Usage: python benches/weighted_sums.py [--rows 100000000] [--device cpu|gpu] [--runs 10]
(on the GPU the data are cupy arrays, so the whole call is the count; median of the runs after
a warm-up; the bits of every run's sums are compared with the first run's).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from typing import Any

import numpy as np

BINS = (256, 65_536)


def child(rows: int, device: str, runs: int) -> dict[str, Any]:
    import polars_gpu_hist.numpy as ghnp

    rng = np.random.default_rng(51)
    x: Any = rng.random(rows, dtype=np.float32)
    w: Any = rng.standard_normal(rows)
    if device == "gpu":
        import cupy as cp

        x, w = cp.asarray(x), cp.asarray(w)
        del cp
    result: dict[str, Any] = {}
    for bins in BINS:

        def call(b: int = bins) -> Any:
            sums, _ = ghnp.histogram(x, b, (0.0, 1.0), weights=w)
            return np.asarray(sums.get() if hasattr(sums, "get") else sums)

        call()  # warm-up: the kernel's compile, the pools
        times, digests = [], set()
        for _ in range(runs):
            start = time.perf_counter()
            sums = call()
            times.append(time.perf_counter() - start)
            digests.add(hashlib.sha256(sums.tobytes()).hexdigest())
        result[str(bins)] = {
            "ms": sorted(times)[runs // 2] * 1e3,
            "distinct_results": len(digests),
            "digest": sorted(digests)[0],
        }
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000_000)
    parser.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.rows, args.device, args.runs)))
        return
    ways = {}
    for way in ("float", "fixed"):
        env = {**os.environ, "POLARS_GPU_HIST_SUMS": way}
        argv = [sys.argv[0], "--child", f"--rows={args.rows}", f"--device={args.device}"]
        out = subprocess.run(
            [sys.executable, *argv, f"--runs={args.runs}"],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        ways[way] = json.loads(out.stdout.strip().splitlines()[-1])
    print(
        f"{args.rows:,} rows (float32 data, float64 weights), device={args.device},"
        f" {args.runs} runs"
    )
    verdict = True
    for bins in map(str, BINS):
        f, q = ways["float"][bins], ways["fixed"][bins]
        ratio = q["ms"] / f["ms"]
        verdict &= ratio <= 1.10
        print(
            f"{int(bins):>6} bins: float {f['ms']:9.1f} ms ({f['distinct_results']} distinct)"
            f"   fixed {q['ms']:9.1f} ms ({q['distinct_results']} distinct)   {ratio:5.2f}x"
        )
    same = all(ways["fixed"][b]["distinct_results"] == 1 for b in map(str, BINS))
    print(f"fixed point bit-identical across runs: {same}")
    print(f"fixed point within 10% at both bin counts (could be the default): {verdict}")
    if os.environ.get("OUT"):
        name = f"weighted_sums_{args.device}.json"
        with open(os.path.join(os.environ["OUT"], name), "w") as fh:
            json.dump({"rows": args.rows, "runs": args.runs, "ways": ways}, fh, indent=1)


if __name__ == "__main__":
    main()
