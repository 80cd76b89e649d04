"""A weighted ``Histogram.fill`` (sums and squares, the flow) against the one-shot weighted call
``gh.histogram(x, weights=w)`` and boost-histogram's ``Weight()`` storage, in one run: issue 49's
target is the fill within 1.2x of the one-shot call (10^7 float32 values, 100 bins).

Usage: python benches/weighted_fill.py [--rows 10000000] [--bins 100] [--device cpu|gpu]
(gpu: the fill and the call from cupy arrays; boost reads host arrays). Median of the runs after
a warm-up, whole calls.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import boost_histogram as bh
import numpy as np

import polars_gpu_hist as gh


def median_ms(f: Callable[[], object], runs: int) -> float:
    f()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return sorted(times)[runs // 2] * 1e3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--bins", type=int, default=100)
    parser.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(49)
    x_host = rng.random(args.rows, dtype=np.float32)
    w_host = rng.random(args.rows)
    x: Any = x_host
    w: Any = w_host
    if args.device == "gpu":
        import cupy as cp

        x, w = cp.asarray(x_host), cp.asarray(w_host)
    bins, device = args.bins, args.device

    def fill() -> object:
        h = gh.Histogram(bins, range=(0.0, 1.0), weights=True, device=device)
        return h.fill(x, weights=w)

    def one_shot() -> object:
        return gh.histogram(x, bins, range=(0.0, 1.0), weights=w, device=device)

    def boost() -> object:
        h = bh.Histogram(bh.axis.Regular(bins, 0.0, 1.0), storage=bh.storage.Weight())
        return h.fill(x_host, weight=w_host, threads=0)

    filled, shot, reference = (median_ms(f, args.runs) for f in (fill, one_shot, boost))
    print(f"{args.rows:,} float32 rows, float64 weights, {bins} bins, device={device}")
    print(f"Histogram.fill (sums and squares): {filled:8.1f} ms")
    print(f"gh.histogram(weights=):            {shot:8.1f} ms")
    print(f"boost-histogram Weight():          {reference:8.1f} ms")
    print(f"fill / one-shot: {filled / shot:5.2f}x (issue 49's target: at most 1.2x)")


if __name__ == "__main__":
    main()
