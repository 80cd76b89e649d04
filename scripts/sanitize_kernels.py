"""Runs every kernel family once on small inputs, for compute-sanitizer (memcheck, racecheck).

Host data through the Polars path (device="gpu"): every family (shared, packed, spill,
segmented, batched, global, private, banked, radix), each rule kind (float32 / float64 equal
bins, explicit edges), both closed sides, with and without weights (shared and global) and
nulls; the partition passes once more over several tiles and partitions (long runs a warp's,
short ones a lane's in the batched count pass); then the extremes kernel through device arrays
(every width's 16-byte reads, unaligned starts). Exits non-zero on a wrong count.

Then fills of a Histogram from CuPy arrays, whose kernels count the flow too ("flow").

Usage: python scripts/sanitize_kernels.py [PART ...]: only those parts (families, "proof",
"nd", "by_value", "bytes", "flow", "extremes"); all of them by default.
"""

import sys

import numpy as np
import polars as pl

import polars_gpu_hist as gh

ONLY = set(sys.argv[1:])


def wanted(*parts: str) -> list[str]:
    """The parts of this run among `parts`."""
    return [p for p in parts if not ONLY or p in ONLY]


rng = np.random.default_rng(0)
x64 = rng.normal(size=5001)
x64[::7] = np.nan
frame = pl.DataFrame(
    {
        "f32": x64.astype(np.float32),
        "f64": x64,
        "i32": (x64 * 100).astype(np.int32, casting="unsafe"),
        "w": rng.integers(0, 5, x64.size).astype(np.float64),
    }
).with_columns(pl.col("f64").fill_nan(None))
bad = 0
FAMILIES = ["shared", "packed", "spill", "segmented", "batched", "global", "private", "banked"]
for kernel in wanted(*FAMILIES, "radix"):
    # The candidates' kernels of other columns are not in the bundle: one column keeps the
    # compiles on first use few (each takes seconds).
    new = kernel in ("private", "banked", "radix")
    for column in ["f32"] if new else ["f32", "f64", "i32"]:
        for bins in [64, [-2.0, -0.5, 0.0, 0.1, 3.0]]:
            for closed in ["left", "right"]:
                for weights in [None, "w"] if kernel in ("shared", "global") else [None]:
                    args = dict(range=(-3.0, 3.0)) if isinstance(bins, int) else {}
                    hist = [
                        frame.select(
                            pl.col(column).gpu_hist.histogram(
                                bins,
                                weights=weights,
                                closed=closed,
                                device=d,
                                kernel=kernel if d == "gpu" else "auto",
                                **args,
                            )
                        )
                        .unnest(column)["count"]
                        .to_list()
                        for d in ["gpu", "cpu"]
                    ]
                    bad += hist[0] != hist[1]
                    print(
                        kernel,
                        column,
                        type(bins).__name__,
                        closed,
                        weights,
                        "ok" if hist[0] == hist[1] else "MISMATCH",
                        flush=True,
                    )
# The segmented passes over three tiles and three partitions (runs of thousands of keys), or
# 128 partitions (runs of about a hundred), with nulls.
wide = pl.DataFrame({"x": rng.random(40_003)}).with_columns(
    pl.when(pl.int_range(pl.len()) % 9 == 0).then(None).otherwise(pl.col("x")).alias("x")
)
for kernel in wanted("segmented", "batched", "radix"):
    for bins in [70_000, 1 << 22]:
        hist = [
            wide.select(
                pl.col("x").gpu_hist.histogram(
                    bins, range=(0, 1), device=d, kernel=kernel if d == "gpu" else "auto"
                )
            )
            .unnest("x")["count"]
            .to_list()
            for d in ["gpu", "cpu"]
        ]
        bad += hist[0] != hist[1]
        print(kernel, bins, "bins", "ok" if hist[0] == hist[1] else "MISMATCH", flush=True)
# The proof kernel, float32 and float64 bins over a fresh range.
for dtype in ["float32", "float64"] if wanted("proof") else []:
    host, device = gh._internal._proof_walks(70_001, (-0.3, 2.9), dtype, "python")
    bad += host != device
    print("proof", dtype, "ok" if host == device else "MISMATCH", flush=True)
# n-D (histdd kernels): every dimension rule kind, both families, weights, and by= groups.
for kernel in ["shared", "global"] if wanted("nd") else []:
    for weights in [None, "w"]:
        for closed in ["left", "right"]:
            hist = [
                frame.select(
                    gh.histogramdd(
                        "f32",
                        "i32",
                        bins=[16, [-200.0, -10.0, 0.0, 50.0]],
                        range=[(-3.0, 3.0), None],
                        weights=weights,
                        closed=closed,
                        device=d,
                        kernel=kernel if d == "gpu" else "auto",
                    )
                )
                .unnest("f32")["count"]
                .to_list()
                for d in ["gpu", "cpu"]
            ]
            by = [
                frame.select(
                    pl.col("f64").gpu_hist.histogram(
                        bins=8,
                        by="i32",
                        weights=weights,
                        closed=closed,
                        device=d,
                        kernel=kernel if d == "gpu" else "auto",
                    )
                )
                .unnest("f64")["count"]
                .to_list()
                for d in ["gpu", "cpu"]
            ]
            ok = hist[0] == hist[1] and by[0] == by[1]
            bad += not ok
            print("nd", kernel, weights, closed, "ok" if ok else "MISMATCH", flush=True)
# Narrow integers counted by value (256 counters in the family POLARS_GPU_HIST_TUNING's `bytes`
# names, shared by default; packed: 65,536), then folded; nulls.
for dtype, rows in [(pl.Int8, 8192), (pl.UInt16, 1 << 20)] if wanted("by_value") else []:
    narrow = pl.Series("x", rng.integers(-128, 127, rows)).cast(dtype, strict=False)
    narrow = narrow.scatter([1, 2, 3], None)
    for bins in [10, [0, 3, 50, 100]]:
        hist = [
            narrow.gpu_hist.histogram(bins, device=d).struct.field("count").to_list()
            for d in ["gpu", "cpu"]
        ]
        bad += hist[0] != hist[1]
        print("by value", dtype, bins, "ok" if hist[0] == hist[1] else "MISMATCH", flush=True)
# Bytes counted by value into 256 counters, by the family POLARS_GPU_HIST_TUNING's `bytes` names
# (shared by default), then folded; nulls, both signs.
for dtype in [pl.UInt8, pl.Int8] if wanted("bytes") else []:
    values = pl.Series("x", rng.integers(-128, 256, 20_003)).cast(dtype, strict=False)
    values = values.scatter([1, 2, 3], None)
    for bins in [256, 10]:
        hist = [
            values.gpu_hist.histogram(bins, device=d).struct.field("count").to_list()
            for d in ["gpu", "cpu"]
        ]
        bad += hist[0] != hist[1]
        print("bytes", dtype, bins, "ok" if hist[0] == hist[1] else "MISMATCH", flush=True)
try:
    import cupy as cp

    # Fills from GPU memory count their flow in the same pass (three flow bins an axis, NaN
    # apart): each family by its bin count (shared, packed, batched; weighted: shared, global),
    # 1-D and 2-D, against the host fill.
    flowing = x64.copy()
    flowing[::11] = np.inf
    flowing[::13] = -np.inf
    for dtype in [np.float32, np.float64, np.int32] if wanted("flow") else []:
        host = (
            flowing.astype(dtype) if dtype != np.int32 else (x64[~np.isnan(x64)] * 40).astype(dtype)
        )
        weights = rng.integers(0, 5, host.size).astype(np.float64)
        for bins, weighted in [
            (8, False),
            (4000, False),
            (60000, False),
            (300000, False),
            (8, True),
            (60000, True),
        ]:
            lo, hi = (-2.0, 2.0) if dtype != np.int32 else (-50.0, 50.0)
            w = (cp.asarray(weights), weights) if weighted else (None, None)
            on_gpu = gh.Histogram(bins, range=(lo, hi), weights=weighted).fill(
                cp.asarray(host), weights=w[0]
            )
            on_cpu = gh.Histogram(bins, range=(lo, hi), weights=weighted, device="cpu").fill(
                host, weights=w[1]
            )
            ok = on_gpu == on_cpu
            bad += not ok
            print(
                "flow",
                np.dtype(dtype).name,
                bins,
                "weighted" if weighted else "",
                "ok" if ok else "MISMATCH",
                flush=True,
            )
        y = np.roll(host, 5)
        on_gpu = gh.Histogram([16, 16], range=[(-2, 2), (-1, 1)]).fill(
            cp.asarray(host), cp.asarray(y)
        )
        on_cpu = gh.Histogram([16, 16], range=[(-2, 2), (-1, 1)], device="cpu").fill(host, y)
        ok = on_gpu == on_cpu
        bad += not ok
        print("flow 2-D", np.dtype(dtype).name, "ok" if ok else "MISMATCH", flush=True)

    if not wanted("extremes"):
        raise SystemExit(1 if bad else 0)

    xy = cp.asarray(np.stack([x64, x64 * 2], axis=1))
    got = gh.histogramdd(xy, bins=5)["count"].to_list()
    complete = np.stack([x64, x64 * 2], axis=1)
    want = np.histogramdd(complete[~np.isnan(x64)], bins=5)[0].ravel().tolist()
    bad += got != want
    print("extremes_dd", "ok" if got == want else "MISMATCH")

    d = cp.asarray(x64)
    got = gh.histogram(d, 10)["count"].to_list()
    want = gh.histogram(x64, 10, device="cpu")["count"].to_list()
    bad += got != want
    print("extremes", "ok" if got == want else "MISMATCH")
    # The extremes kernel's 16-byte reads, an unaligned head and tail, every width.
    for dtype in [np.uint8, np.int16, np.int32, np.float32, np.float64]:
        host = (x64[~np.isnan(x64)] * 40).astype(dtype)[3:]
        got = gh.histogram(cp.asarray(host), 10)["count"].to_list()
        want = np.histogram(host, 10)[0].tolist()
        bad += got != want
        print("extremes", np.dtype(dtype).name, "ok" if got == want else "MISMATCH")
except ImportError:
    print("extremes: no cupy here, skipped")
raise SystemExit(1 if bad else 0)
