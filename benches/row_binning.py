"""Row binning (issue 51): ``gpu_hist.bin_intervals``, ``bin_quantiles``, ``bin_ranks`` and
``cut`` beside Polars' own calls in the same run, eager ``select`` and ``lazy().collect()``
(Polars' default engine), float64 normal rows, 101 explicit edges and 10 equal intervals; the
median of the repetitions, each frame checked equal to Polars' (``frame.equals``).

``--sink GIB`` times a streaming ``scan_parquet(...).with_columns(bin_intervals(edges))
.sink_parquet(...)`` of a file of about GIB GiB under a memory cap of half of it (a cgroup v2
``memory.max`` where one can be made, else an RSS watchdog: ``files_bench.memory_cap``), ours
and Polars' own, each in a fresh process; the peak RSS it reached is reported.

Usage: python benches/row_binning.py [--rows 10000000 100] [--device auto] [--sink GIB]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np
import polars as pl

import polars_gpu_hist  # noqa: F401

EDGES = np.linspace(-3.0, 3.0, 101).tolist()


def median_ms(f: Callable[[], object], repeat: int) -> float:
    f()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return sorted(times)[repeat // 2] * 1e3


def cases(device: str) -> dict[str, tuple[pl.Expr, pl.Expr]]:
    """Each case: (Polars' expression, ours)."""
    x = pl.col("x")
    ours = x.gpu_hist
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return {
            "bin_intervals(101 edges)": (
                x.bin_intervals(EDGES, labels=False),
                ours.bin_intervals(EDGES, labels=False, device=device),
            ),
            "bin_intervals(10)": (
                x.bin_intervals(10, labels=False),
                ours.bin_intervals(10, labels=False, device=device),
            ),
            "cut(101 edges)": (x.cut(EDGES), ours.cut(EDGES, device=device)),
            "bin_quantiles(10)": (
                x.bin_quantiles(10, labels=False),
                ours.bin_quantiles(10, labels=False, device=device),
            ),
            "bin_ranks(10)": (
                x.bin_ranks(10, labels=False),
                ours.bin_ranks(10, labels=False, device=device),
            ),
        }


def _collect(lazy: pl.LazyFrame, expr: pl.Expr) -> pl.DataFrame:
    return lazy.select(expr).collect()


def timings(rows: int, device: str) -> list[dict[str, object]]:
    frame = pl.DataFrame({"x": np.random.default_rng(51).normal(size=rows)})
    lazy = frame.lazy()
    repeat = 5 if rows >= 1_000_000 else 51
    out: list[dict[str, object]] = []
    for name, (theirs, ours) in cases(device).items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            equal = frame.select(ours).equals(frame.select(theirs))
            row: dict[str, object] = {"rows": rows, "case": name, "equal": equal}
            for who, expr in (("polars", theirs), ("ours", ours)):
                row[f"{who}_eager_ms"] = median_ms(partial(frame.select, expr), repeat)
                row[f"{who}_collect_ms"] = median_ms(partial(_collect, lazy, expr), repeat)
        out.append(row)
    return out


def print_table(rows: list[dict[str, object]], device: str) -> None:
    print(f"Polars {pl.__version__}, {os.cpu_count()} cores, device={device}; medians, ms")
    head = f"{'rows':>10} {'case':26} {'Polars':>9} {'ours':>8} {'x':>6}   "
    print(head + f"{'collect':>9} {'ours':>8} {'x':>6}  equal")
    for r in rows:
        pe, oe = float(r["polars_eager_ms"]), float(r["ours_eager_ms"])  # type: ignore[arg-type]
        pc, oc = float(r["polars_collect_ms"]), float(r["ours_collect_ms"])  # type: ignore[arg-type]
        print(
            f"{r['rows']:>10,} {r['case']:26} {pe:9.2f} {oe:8.2f} {pe / oe:6.1f}   "
            f"{pc:9.2f} {oc:8.2f} {pc / oc:6.1f}  {r['equal']}"
        )


def sink_child(source: str, target: str, which: str) -> None:
    """One streaming sink, in this process: prints its wall time and peak RSS as JSON."""
    x = pl.col("x")
    expr = (
        x.gpu_hist.bin_intervals(EDGES, labels=False)
        if which == "ours"
        else x.bin_intervals(EDGES, labels=False)
    )
    start = time.perf_counter()
    pl.scan_parquet(source).with_columns(bin=expr).sink_parquet(target)
    wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"which": which, "wall_s": wall, "peak_rss_gib": peak / 2**30}))


def sink(gib: float) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from files_bench import _capped, memory_cap

    rows_per_part = 1 << 24
    parts = max(1, round(gib * 2**30 / (8 * rows_per_part)))
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "x.parquet")
        rng = np.random.default_rng(51)
        # Written a part at a time, so that the writer stays small too.
        pl.concat(
            [
                pl.LazyFrame({"x": rng.normal(size=rows_per_part)}).select(pl.col("x"))
                for _ in range(parts)
            ]
        ).sink_parquet(source, compression="uncompressed")
        data = os.path.getsize(source)
        limit = max(data // 2, 2**29)
        cap = memory_cap(limit)
        print(
            f"{parts * rows_per_part:,} rows, {data / 2**30:.2f} GiB Parquet, cap "
            f"{limit / 2**30:.2f} GiB ({cap['method']})"
        )
        try:
            for which in ("polars", "ours"):
                target = os.path.join(tmp, f"{which}.parquet")
                cmd = [sys.executable, os.path.abspath(__file__), "--sink-child"]
                cmd += [source, target, which]
                out, err, code, killed = _capped(cmd, cap)
                if killed or code != 0:
                    print(f"{which}: failed under the cap ({'killed' if killed else code})")
                    print((err or out).strip()[-400:])
                    continue
                result = json.loads(out.strip().splitlines()[-1])
                print(
                    f"{which:7}: {result['wall_s']:6.2f} s, peak RSS "
                    f"{result['peak_rss_gib']:.2f} GiB"
                )
            theirs = pl.scan_parquet(os.path.join(tmp, "polars.parquet")).select("bin")
            ours = pl.scan_parquet(os.path.join(tmp, "ours.parquet")).select("bin")
            print("bins equal:", theirs.collect().equals(ours.collect()))
        finally:
            if cap["cleanup"]:
                cap["cleanup"]()


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--sink-child":
        sink_child(*sys.argv[2:5])
        return
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, nargs="+", default=[10_000_000, 100])
    p.add_argument("--device", default="auto")
    p.add_argument("--sink", type=float, default=None, help="sink a file of this many GiB")
    p.add_argument("--json", default=None, help="write the timings here")
    args = p.parse_args()
    if args.sink is not None:
        sink(args.sink)
        return
    rows = [r for n in args.rows for r in timings(n, args.device)]
    print_table(rows, args.device)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
