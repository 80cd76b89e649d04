"""Each swap of issue 31 beside its original, in one run: interleaved rounds, medians.

Usage: python benches/swaps.py [--rounds 15] [--quick] [--json out.json] [--clock wall|cpu]

A swap is the call a user replaces (Polars' ``hist``, ``numpy.histogram``) and ours in its
place. Each round times every pair, the two members in alternating order, so that drift (other
processes, frequency) falls on both; each sample repeats a call until it has run for at least
``--sample-ms`` and records the time of one call. The floor is a plugin function that does no
work and returns one value (``_bench_floor_expr``): the cost of crossing the plugin boundary,
which no plugin can go below; the Struct floor (``_bench_floor_struct_expr``) returns
``histogram``'s shape instead, counting nothing: the boundary's cost for that output (with
``hist=True``, ``hist``'s shape with both fields, its Categorical cast included). Prints a
markdown table: medians in µs and the ratio original/ours (>= 1.0: ours is as fast or faster).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Callable

import numpy as np
import polars as pl

import polars_gpu_hist as gh
import polars_gpu_hist.numpy as ghnp
from polars_gpu_hist._expr.polars_hist import _bench_floor_expr, _bench_floor_struct_expr

Call = Callable[[], object]
BOTH = {"include_category": True, "include_breakpoint": True}


CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}


def one_call_us(
    fn: Call, sample_ms: float, clock: Callable[[], float] = time.perf_counter
) -> float:
    """The time of one call (µs) on `clock`, from as many calls as fill ``sample_ms``."""
    reps = 1
    while True:
        t0 = clock()
        for _ in range(reps):
            fn()
        elapsed = clock() - t0
        if elapsed * 1e3 >= sample_ms or reps >= 1 << 16:
            return elapsed / reps * 1e6
        reps = max(reps * 2, int(reps * sample_ms / max(elapsed * 1e3, 1e-3)))


def swaps(quick: bool) -> list[tuple[str, Call, Call]]:
    """(what, original, ours) for every swap and size."""
    rng = np.random.default_rng(0)
    out: list[tuple[str, Call, Call]] = []
    sizes = [100, 10_000] if quick else [100, 10_000, 1_000_000]
    for n in sizes:
        x = rng.normal(size=n)
        df = pl.DataFrame({"x": x})
        s = df["x"]
        out.append(
            (
                f"`select(hist(bin_count=20))`, {n:,} rows",
                lambda df=df: df.select(pl.col("x").hist(bin_count=20)),
                lambda df=df: df.select(pl.col("x").gpu_hist.hist(bin_count=20)),
            )
        )
        out.append(
            (
                f"same, both fields, {n:,} rows",
                lambda df=df: df.select(pl.col("x").hist(bin_count=20, **BOTH)),
                lambda df=df: df.select(pl.col("x").gpu_hist.hist(bin_count=20, **BOTH)),
            )
        )
        out.append(
            (
                f"`Series.hist(bin_count=20)`, {n:,} rows",
                lambda s=s: s.hist(bin_count=20),
                lambda s=s: s.gpu_hist.hist(bin_count=20),
            )
        )
        out.append(
            (
                f"`histogram(bins=10)` beside `hist(bin_count=10)`, {n:,} rows",
                lambda df=df: df.select(pl.col("x").hist(bin_count=10)),
                lambda df=df: df.select(pl.col("x").gpu_hist.histogram(bins=10)),
            )
        )
        a = x
        if n == 100:  # numpy's swap at issue 31's size (1,000 rows) as well
            a1k = rng.normal(size=1000)
            out.append(
                (
                    "`numpy.histogram(a, 64)`, 1,000 rows",
                    lambda a=a1k: np.histogram(a, 64),
                    lambda a=a1k: ghnp.histogram(a, 64),
                )
            )
        out.append(
            (
                f"`numpy.histogram(a, 64)`, {n:,} rows",
                lambda a=a: np.histogram(a, 64),
                lambda a=a: ghnp.histogram(a, 64),
            )
        )
        out.append(
            (
                f"floor: no-op plugin beside `hist`, {n:,} rows",
                lambda df=df: df.select(pl.col("x").gpu_hist.hist(bin_count=20)),
                lambda df=df: df.select(_bench_floor_expr(pl.col("x"))),
            )
        )
        if n == 100:  # the small call against both floors, and hist's both-field shape
            out.extend(histogram_floors(df))
            out.append(
                (
                    "floor: `hist`-shaped no-op plugin beside `hist`, both fields, 100 rows",
                    lambda df=df: df.select(pl.col("x").gpu_hist.hist(bin_count=20, **BOTH)),
                    lambda df=df: df.select(_bench_floor_struct_expr(pl.col("x"), 20, hist=True)),
                )
            )
    groups = 1_000 if quick else 10_000
    g = rng.integers(0, groups, size=groups * 200)
    frame = pl.DataFrame({"g": g, "x": rng.normal(size=g.size)}).lazy()
    label = f"{groups:,} groups of ~200 rows"
    out.append(
        (
            f"`group_by().agg(hist(bin_count=16))`, {label}",
            lambda: frame.group_by("g").agg(pl.col("x").hist(bin_count=16)).collect(),
            lambda: frame.group_by("g").agg(pl.col("x").gpu_hist.hist(bin_count=16)).collect(),
        )
    )
    out.append(
        (
            f"`agg(histogram(bins=16))` beside `agg(hist(bin_count=16))`, {label}",
            lambda: frame.group_by("g").agg(pl.col("x").hist(bin_count=16)).collect(),
            lambda: (
                frame.group_by("g")
                .agg(pl.col("x").gpu_hist.histogram(bins=16, closed="right"))
                .collect()
            ),
        )
    )
    out.append(
        (
            f"`histogram(by=)` beside `agg(hist(bin_count=16))`, {label}",
            lambda: frame.group_by("g").agg(pl.col("x").hist(bin_count=16)).collect(),
            lambda: frame.select(
                pl.col("x").gpu_hist.histogram(bins=16, closed="right", by="g")
            ).collect(),
        )
    )
    out.append(
        (
            f"floor: `agg(no-op plugin)` beside `agg(gpu_hist.hist)`, {label}",
            lambda: frame.group_by("g").agg(pl.col("x").gpu_hist.hist(bin_count=16)).collect(),
            lambda: frame.group_by("g").agg(_bench_floor_expr(pl.col("x"))).collect(),
        )
    )
    histogram = pl.col("x").gpu_hist.histogram(bins=16, closed="right")
    out.append(
        (
            f"floor: `agg(no-op plugin)` beside `agg(histogram(bins=16))`, {label}",
            lambda: frame.group_by("g").agg(histogram).collect(),
            lambda: frame.group_by("g").agg(_bench_floor_expr(pl.col("x"))).collect(),
        )
    )
    out.append(
        (
            f"floor: `agg(Struct no-op plugin)` beside `agg(histogram(bins=16))`, {label}",
            lambda: frame.group_by("g").agg(histogram).collect(),
            lambda: frame.group_by("g").agg(_bench_floor_struct_expr(pl.col("x"), 16)).collect(),
        )
    )
    return out


def histogram_floors(df: pl.DataFrame) -> list[tuple[str, Call, Call]]:
    """`histogram(bins=10)` beside the no-op plugin (one value: the boundary itself) and beside
    the Struct no-op plugin (histogram's output, 10 rows of zeros: the boundary for a Struct),
    and the two floors beside each other (what the Struct costs at the boundary)."""
    return [
        (
            "floor: no-op plugin beside `histogram(bins=10)`, 100 rows",
            lambda: df.select(pl.col("x").gpu_hist.histogram(bins=10)),
            lambda: df.select(_bench_floor_expr(pl.col("x"))),
        ),
        (
            "floor: Struct no-op plugin beside `histogram(bins=10)`, 100 rows",
            lambda: df.select(pl.col("x").gpu_hist.histogram(bins=10)),
            lambda: df.select(_bench_floor_struct_expr(pl.col("x"), 10)),
        ),
        (
            "floor: no-op plugin beside the Struct no-op plugin, 100 rows",
            lambda: df.select(_bench_floor_struct_expr(pl.col("x"), 10)),
            lambda: df.select(_bench_floor_expr(pl.col("x"))),
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--sample-ms", type=float, default=20.0)
    parser.add_argument("--quick", action="store_true", help="small sizes, few rounds")
    parser.add_argument("--json", help="write the medians here too")
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="wall",
        help="wall: elapsed time; cpu: this process's CPU time, all its threads (steadier on a "
        "machine shared with other work, but a parallel call counts every thread's time)",
    )
    args = parser.parse_args()
    rounds = 3 if args.quick else args.rounds
    pairs = swaps(args.quick)
    load = os.getloadavg()[0]
    samples: dict[str, tuple[list[float], list[float]]] = {w: ([], []) for w, _, _ in pairs}
    for _, original, ours in pairs:  # warm up: caches, kernels, Polars' pools
        original()
        ours()
    for r in range(rounds):
        for what, original, ours in pairs:
            first, second = (original, ours) if r % 2 == 0 else (ours, original)
            t_first = one_call_us(first, args.sample_ms, CLOCKS[args.clock])
            t_second = one_call_us(second, args.sample_ms, CLOCKS[args.clock])
            t_orig, t_ours = (t_first, t_second) if r % 2 == 0 else (t_second, t_first)
            samples[what][0].append(t_orig)
            samples[what][1].append(t_ours)
    print(
        f"polars {pl.__version__}, numpy {np.__version__}, polars_gpu_hist {gh.__version__}, "
        f"{os.cpu_count()} cores, {platform.machine()}, {rounds} rounds (medians, µs, "
        f"{args.clock} clock; load average at the start {load:.2f})\n"
    )
    print("| swap | the original | ours | ratio |")
    print("|---|---:|---:|---:|")
    results = []
    for what, _, _ in pairs:
        orig, ours = (statistics.median(v) for v in samples[what])
        results.append({"swap": what, "original_us": orig, "ours_us": ours})
        print(f"| {what} | {orig:,.1f} | {ours:,.1f} | {orig / ours:.2f}x |")
    print(
        "\nThe floor rows: 'the original' is our call, 'ours' the no-op plugin; their ratio is "
        "how far above the floor our call is (1.0x: at the floor). The Struct no-op plugin "
        "returns histogram's output shape and counts nothing: the floor for that output."
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
