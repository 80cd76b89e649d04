# ruff: noqa: B023
# (Each closure is timed at once, inside the loop iteration that binds its variables.)
"""Issue 37.2's table, old family against new in one run: whole calls of the numpy drop-in on
device arrays (counts left on the device), each family pinned, beside cupy.histogram and
torch.histc (cupy.histogramdd in 2-D) and the read roofline (a float32 cupy.sum of the same
bytes). 2^29 float32 at 65,536 bins (packed against spill), 1M and 16M bins (segmented against
batched, and global), 2-D 2^27 float32 pairs at 1024x1024; uniform, normal, sorted and
one-valued data. Then uint16 by value (65,536 counters: packed against spill) and uint8's range
from the data (the extremes kernel's 16-byte reads).

Times are CUDA-event medians of whole calls on the caller's stream, after a warm-up, with the
synchronized wall time beside them. Every family's counts are checked against numpy's on the
first 2^24 rows, and against each other on the whole column.

Usage: python benches/large_bins.py [--log2n 29] [--reps 7] [--quick]
Writes $OUT/large_bins.json (or ./large_bins.json) and prints the table.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import cupy as cp
import numpy as np

import polars_gpu_hist.numpy as ghnp
from polars_gpu_hist._args import arguments as _args
from polars_gpu_hist.numpy import gpu_arrays as _numpy_device

try:
    import torch
except ImportError:  # pragma: no cover - the GPU host has it
    torch = None

CHECK_ROWS = 1 << 24


@contextlib.contextmanager
def pinned(kernel: str) -> Iterator[None]:
    """The numpy drop-in with its kernel family pinned (it always asks for the plan's)."""
    one, many = _args.histogram_kwargs, _args.dd_kwargs

    def pin(make: Callable[..., dict]) -> Callable[..., dict]:
        def made(*a: Any, **kw: Any) -> dict:
            kw["kernel"] = kernel
            return make(*a, **kw)

        return made

    _args.histogram_kwargs, _args.dd_kwargs = pin(one), pin(many)
    _numpy_device._PREPARED.clear()
    try:
        yield
    finally:
        _args.histogram_kwargs, _args.dd_kwargs = one, many
        _numpy_device._PREPARED.clear()


def timed(run: Callable[[], Any], reps: int) -> tuple[float, float]:
    """(CUDA-event median, synchronized wall median) in ms."""
    run()
    cp.cuda.Device().synchronize()
    events, walls = [], []
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
    return statistics.median(events), statistics.median(walls)


def data(dist: str, n: int, seed: int) -> cp.ndarray:
    rng = cp.random.default_rng(seed)
    if dist == "uniform":
        return rng.random(n, dtype=cp.float32)
    if dist == "normal":
        return cp.clip(rng.standard_normal(n, dtype=cp.float32) * 0.1 + 0.5, 0, 1)
    if dist == "sorted":
        return cp.sort(rng.random(n, dtype=cp.float32))
    return cp.full(n, 0.3, dtype=cp.float32)


def numpy_counts(columns: list[cp.ndarray], bins: int) -> np.ndarray:
    host = [c[:CHECK_ROWS].get() for c in columns]
    if len(host) == 1:
        return np.histogram(host[0], bins, range=(0, 1))[0]
    return np.histogramdd(host, bins, range=[(0, 1)] * len(host))[0].astype(np.int64)


def ours(columns: list[cp.ndarray], bins: int) -> Callable[[], Any]:
    if len(columns) == 1:
        return lambda: ghnp.histogram(columns[0], bins, range=(0, 1))[0]
    return lambda: ghnp.histogramdd(columns, bins, range=[(0, 1)] * len(columns))[0]


def peers(columns: list[cp.ndarray], bins: int) -> dict[str, Callable[[], Any]]:
    if len(columns) > 1:
        stacked = cp.stack(columns, axis=1)
        return {"cupy.histogramdd": lambda: cp.histogramdd(stacked, bins, range=[(0, 1)] * 2)[0]}
    x = columns[0]
    out = {"cupy.histogram": lambda: cp.histogram(x, bins, range=(0, 1))[0]}
    if torch is not None:
        t = torch.from_dlpack(x)
        out["torch.histc"] = lambda: torch.histc(t, bins, 0, 1)
    return out


def case(
    label: str, columns: list[cp.ndarray], bins: int, families: list[str], reps: int
) -> list[dict]:
    rows = []
    flat = cp.concatenate([c.view(cp.float32) for c in columns]) if len(columns) > 1 else None
    read = columns[0] if flat is None else flat
    roof, _ = timed(lambda: read.sum(), reps)
    del flat
    expected = numpy_counts(columns, bins)
    prefix = [c[:CHECK_ROWS] for c in columns]
    first = None
    for family in families:
        with pinned(family):
            try:
                small = ours(prefix, bins)()
            except ValueError as e:  # a pin the plan refuses (too many bins for the family)
                rows.append({"case": label, "who": family, "refused": str(e)[:80]})
                continue
            exact = bool(cp.array_equal(small.reshape(-1), cp.asarray(expected).reshape(-1)))
            run = ours(columns, bins)
            whole = run()
            same = True if first is None else bool(cp.array_equal(whole, first))
            first = whole if first is None else first
            event, wall = timed(run, reps)
        rows.append(
            {
                "case": label,
                "who": family,
                "ms": event,
                "wall_ms": wall,
                "roofline_ms": roof,
                "exact_vs_numpy": exact,
                "same_as_first": same,
            }
        )
        del whole
    for name, run in peers(columns, bins).items():
        event, wall = timed(run, reps)
        rows.append({"case": label, "who": name, "ms": event, "wall_ms": wall})
    cp.get_default_memory_pool().free_all_blocks()
    return rows


def uint16_cases(reps: int, log2n: int) -> list[dict]:
    rows = []
    rng = cp.random.default_rng(3)
    x16 = rng.integers(0, 1 << 16, 1 << log2n, dtype=cp.int64).astype(cp.uint16)
    expected = cp.asarray(np.bincount(x16[:CHECK_ROWS].get(), minlength=1 << 16))
    roof, _ = timed(lambda: x16.view(cp.float32).sum(), reps)
    full = (0, 1 << 16)
    for family in ["auto", "packed", "spill"]:
        with pinned(family):
            got = ghnp.histogram(x16[:CHECK_ROWS], 1 << 16, full)[0]
            event, wall = timed(lambda: ghnp.histogram(x16, 1 << 16, full), reps)
        rows.append(
            {
                "case": f"uint16 2^{log2n} 65536 bins",
                "who": family,
                "ms": event,
                "wall_ms": wall,
                "roofline_ms": roof,
                "exact_vs_numpy": bool(cp.array_equal(got, expected)),
            }
        )
    return rows


def uint8_cases(reps: int, log2n: int) -> list[dict]:
    rows = []
    rng = cp.random.default_rng(4)
    normal = rng.standard_normal(1 << (log2n + 1), dtype=cp.float32) * 30 + 128
    x8 = cp.clip(normal, 0, 255).astype(cp.uint8)
    del normal
    roof, _ = timed(lambda: x8.view(cp.float32).sum(), reps)
    small = x8[:CHECK_ROWS].get()
    for label, range_ in [("range from data", None), ("range=(0, 256)", (0, 256))]:
        got, edges = ghnp.histogram(x8[:CHECK_ROWS], 256, range_)
        want, want_edges = np.histogram(small, 256, range_)
        exact = bool(cp.array_equal(got, cp.asarray(want))) and bool(
            cp.array_equal(edges, cp.asarray(want_edges))
        )
        event, wall = timed(lambda: ghnp.histogram(x8, 256, range_), reps)
        rows.append(
            {
                "case": f"uint8 2^{log2n + 1} 256 bins, {label}",
                "who": "auto",
                "ms": event,
                "wall_ms": wall,
                "roofline_ms": roof,
                "exact_vs_numpy": exact,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log2n", type=int, default=29)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="uniform and one-valued only")
    args = parser.parse_args()
    n = 1 << args.log2n
    dists = ["uniform", "one value"] if args.quick else ["uniform", "normal", "sorted", "one value"]
    rows: list[dict] = []
    plans = [
        (65_536, 1, ["packed", "spill", "auto"]),
        (1 << 20, 1, ["segmented", "batched", "global", "auto"]),
        (1 << 24, 1, ["segmented", "batched", "global", "auto"]),
        (1024, 2, ["segmented", "batched", "global", "auto"]),
    ]
    for bins, dims, families in plans:
        for dist in dists:
            rows_of = n if dims == 1 else n // 4
            columns = [data(dist, rows_of, seed) for seed in range(dims)]
            label = (
                f"float32 2^{args.log2n} {bins} bins {dist}"
                if dims == 1
                else f"2-D float32 2^{args.log2n - 2} pairs {bins}^2 {dist}"
            )
            found = case(label, columns, bins, families, args.reps)
            print_rows(found)
            rows += found
            del columns
            cp.get_default_memory_pool().free_all_blocks()
    for narrow in (uint16_cases, uint8_cases):
        found = narrow(args.reps, args.log2n)
        print_rows(found)
        rows += found
        cp.get_default_memory_pool().free_all_blocks()
    out = Path(os.environ.get("OUT", ".")) / "large_bins.json"
    out.write_text(json.dumps({"device": device_name(), "rows": rows}, indent=1))
    print(f"\n{device_name()}")
    print_rows(rows)


def device_name() -> str:
    return cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"].decode()


def print_rows(rows: list[dict]) -> None:
    for r in rows:
        if "refused" in r:
            print(f"{r['case']:<48} {r['who']:<18} refused: {r['refused']}")
            continue
        checks = ""
        if "exact_vs_numpy" in r:
            checks = "exact" if r["exact_vs_numpy"] else "COUNTS DIFFER FROM NUMPY"
            if not r.get("same_as_first", True):
                checks += ", DIFFERS FROM THE FIRST FAMILY"
        roof = f"roof {r['roofline_ms']:.3f}" if "roofline_ms" in r else ""
        print(
            f"{r['case']:<48} {r['who']:<18} {r['ms']:8.3f} ms (wall {r['wall_ms']:8.3f}) "
            f"{roof:<11} {checks}"
        )


if __name__ == "__main__":
    main()
