"""CPU backend against numpy, fast-histogram, boost-histogram (all cores) and Polars' hist.

Usage: python benches/cpu_bench.py [--log2n 25] [--reps 7] [--gib] [--json out.json]
Prints a table of medians (ms) and our speed-up over each peer, measured in the same run;
`--gib` adds a 1 GiB float32 column against boost-histogram (issue 13's 16-core target).
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

import polars_gpu_hist  # noqa: F401

CORES = os.cpu_count() or 1


def median_ms(fn: Callable[[], object], reps: int, warm: int = 1) -> float:
    for _ in range(warm):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def peers(x: np.ndarray, bins: int, edges: np.ndarray) -> dict[str, Callable[[], object]]:
    out: dict[str, Callable[[], object]] = {}
    s = pl.Series("x", x)
    df = s.to_frame()
    edge_list = edges.tolist()
    out["ours: select(histogram(bins=256))"] = lambda: df.select(
        pl.col("x").gpu_hist.histogram(bins=bins, device="cpu")
    )
    out["ours: select(histogram(bins=256, range=(0,1)))"] = lambda: df.select(
        pl.col("x").gpu_hist.histogram(bins=bins, range=(0.0, 1.0), device="cpu")
    )
    out["ours: select(histogram(bins=edges))"] = lambda: df.select(
        pl.col("x").gpu_hist.histogram(bins=edge_list, device="cpu")
    )
    out["numpy.histogram(bins=256, range)"] = lambda: np.histogram(x, bins=bins, range=(0, 1))
    out["numpy.histogram(bins=edges)"] = lambda: np.histogram(x, bins=edges)
    out["polars hist(bin_count=256)"] = lambda: s.hist(bin_count=bins)
    out["polars hist(bins=edges)"] = lambda: s.hist(bins=edge_list)
    try:
        import fast_histogram as fh

        out["fast_histogram.histogram1d"] = lambda: fh.histogram1d(x, bins=bins, range=(0, 1))
    except ImportError:
        pass
    try:
        import boost_histogram as bh

        def bh_fill() -> object:
            h = bh.Histogram(bh.axis.Regular(bins, 0, 1))
            return h.fill(x, threads=CORES)

        out[f"boost_histogram.fill(threads={CORES})"] = bh_fill

        def bh_variable() -> object:
            h = bh.Histogram(bh.axis.Variable(edges))
            return h.fill(x, threads=CORES)

        out[f"boost_histogram Variable.fill(threads={CORES})"] = bh_variable
    except ImportError:
        pass
    return out


RATIOS = [
    ("ours: select(histogram(bins=256))", f"boost_histogram.fill(threads={CORES})"),
    ("ours: select(histogram(bins=256, range=(0,1)))", f"boost_histogram.fill(threads={CORES})"),
    ("ours: select(histogram(bins=256))", "polars hist(bin_count=256)"),
    ("ours: select(histogram(bins=256, range=(0,1)))", "fast_histogram.histogram1d"),
    ("ours: select(histogram(bins=256, range=(0,1)))", "numpy.histogram(bins=256, range)"),
    ("ours: select(histogram(bins=edges))", "polars hist(bins=edges)"),
    ("ours: select(histogram(bins=edges))", "numpy.histogram(bins=edges)"),
    ("ours: select(histogram(bins=edges))", f"boost_histogram Variable.fill(threads={CORES})"),
]


def small_calls(reps: int) -> None:
    """What a call costs when the data is small, and per group: the fixed cost beside Polars'."""
    rng = np.random.default_rng(5)
    print("\nsmall calls (median ms): ours select(histogram(bins=10)) vs Polars hist(bin_count=10)")
    for n in (100, 10_000):
        df = pl.DataFrame({"x": rng.random(n)})
        ours = median_ms(
            lambda df=df: df.select(pl.col("x").gpu_hist.histogram(bins=10, device="cpu")),
            reps * 20,
        )
        polars = median_ms(lambda df=df: df.select(pl.col("x").hist(bin_count=10)), reps * 20)
        print(f"  {n:>6} rows: ours {ours:.3f}  polars {polars:.3f}  ratio {polars / ours:.2f}")
    groups, n = 10_000, 1 << 21
    df = pl.DataFrame({"g": rng.integers(0, groups, n), "x": rng.random(n)})
    agg = median_ms(
        lambda: df.group_by("g").agg(
            pl.col("x").gpu_hist.histogram(bins=64, range=(0.0, 1.0), device="cpu")
        ),
        max(3, reps // 2),
    )
    by = median_ms(
        lambda: df.select(
            pl.col("x").gpu_hist.histogram(bins=64, range=(0.0, 1.0), by="g", device="cpu")
        ),
        reps,
    )
    # Polars' own aggregations of the same groups: `hist`, a call per group like ours, and
    # `sum`, one fused aggregation over all groups.
    polars_hist = median_ms(
        lambda: df.group_by("g").agg(pl.col("x").hist(bin_count=64)), max(3, reps // 2)
    )
    polars_sum = median_ms(lambda: df.group_by("g").agg(pl.col("x").sum()), max(3, reps // 2))
    print(
        f"  {groups} groups of 2^21 rows, 64 bins: group_by().agg() {agg:.1f}, by= {by:.1f} "
        f"(agg / by = {agg / by:.2f}); Polars' group_by().agg() of hist(bin_count=64) "
        f"{polars_hist:.1f}, of sum() {polars_sum:.1f} (sum / by = {polars_sum / by:.2f})"
    )


def gib_float32(reps: int) -> None:
    """A 1 GiB float32 column, 256 bins over (0, 1), against boost-histogram on every core."""
    x = np.random.default_rng(13).random(1 << 28, dtype=np.float32)
    df = pl.Series("x", x).to_frame()
    expr = pl.col("x").gpu_hist.histogram(bins=256, range=(0.0, 1.0), device="cpu")
    counts = df.select(expr).unnest("x")["count"].to_numpy()
    assert (counts == np.histogram(x, bins=256, range=(0, 1))[0]).all(), "counts differ from numpy"
    ours = median_ms(lambda: df.select(expr), reps)
    print(f"\n1 GiB float32 (2^28 rows), 256 bins, range=(0, 1), ms: ours {ours:.1f}", end="")
    try:
        import boost_histogram as bh
    except ImportError:
        print(" (boost-histogram not installed)")
        return
    boost = median_ms(lambda: bh.Histogram(bh.axis.Regular(256, 0, 1)).fill(x, threads=CORES), reps)
    print(f", boost_histogram.fill(threads={CORES}) {boost:.1f} (ours / boost {ours / boost:.2f})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--log2n", type=int, default=25)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--gib", action="store_true", help="add the 1 GiB float32 column")
    ap.add_argument("--json")
    args = ap.parse_args()
    n = 1 << args.log2n
    bins = 256
    rng = np.random.default_rng(11)
    # 257 uneven edges over [0, 1]: a search, not a formula.
    edges = np.sort(np.concatenate([[0.0, 1.0], np.random.default_rng(3).random(bins - 1)]))
    results: dict[str, dict[str, float]] = {}
    for dist in ["uniform", "normal", "degenerate"]:
        if dist == "uniform":
            x = rng.random(n)
        elif dist == "normal":
            x = np.clip(rng.normal(0.5, 0.1, n), 0, 1)
        else:
            x = np.full(n, 0.3)
        # check before timing: every peer agrees on the counts
        ref, _ = np.histogram(x, bins=bins, range=(0, 1))
        ours = pl.DataFrame({"x": x}).select(
            pl.col("x").gpu_hist.histogram(bins=bins, range=(0.0, 1.0), device="cpu")
        )
        assert (ours.unnest("x")["count"].to_numpy() == ref).all(), "counts differ from numpy"
        results[dist] = {}
        for name, fn in peers(x, bins, edges).items():
            reps = args.reps if "edges" not in name or "ours" in name else max(3, args.reps // 2)
            results[dist][name] = median_ms(fn, reps)
        del x
    print(
        f"\nCPU: {platform.processor() or platform.machine()}, {CORES} cores, "
        f"n = 2^{args.log2n} float64, {bins} bins; median ms"
    )
    names = list(results["uniform"])
    print(f"{'implementation':52s}" + "".join(f"{d:>12s}" for d in results))
    for name in names:
        print(f"{name:52s}" + "".join(f"{results[d][name]:12.1f}" for d in results))
    print("\nspeed-up (peer time / our time):")
    for ours, peer in RATIOS:
        if peer in results["uniform"]:
            cells = "".join(f"{results[d][peer] / results[d][ours]:12.2f}" for d in results)
            print(f"{ours[6:]:34s} vs {peer:33s}{cells}")
    small_calls(args.reps)
    if args.gib:
        gib_float32(args.reps)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n": n, "bins": bins, "cores": CORES, "ms": results}, f, indent=1)


if __name__ == "__main__":
    main()
