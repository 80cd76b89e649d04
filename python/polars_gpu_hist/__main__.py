"""Command line: the histogram of a column of a Parquet/CSV/IPC file, or of a demo data set.

python -m polars_gpu_hist data.parquet --column x --bins 40 --plot hist.png
python -m polars_gpu_hist                      # a generated demo data set

Files are read in bounded batches (``histogram_scan``), so they may be larger than memory;
without ``--range`` equal bins span the column's [min, max], found in a first pass (the file
is then read twice).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import polars as pl

from polars_gpu_hist import histogram_scan, plot
from polars_gpu_hist._scan import scan_source


def demo_frame(rows: int = 10_000_000, seed: int = 0) -> pl.LazyFrame:
    """Two overlapping normal populations (float64) with a NaN every 1000 rows."""
    import numpy as np

    rng = np.random.default_rng(seed)
    a = rng.normal(0.0, 1.0, rows - rows // 3)
    b = rng.normal(3.0, 0.5, rows // 3)
    x = np.concatenate([a, b])
    rng.shuffle(x)
    x[::1000] = np.nan
    return pl.LazyFrame({"x": x})


def scan(path: Path) -> pl.LazyFrame:
    try:
        return scan_source(path)
    except (FileNotFoundError, ValueError) as e:
        raise SystemExit(f"error: {e}") from None


def demo_histogram(
    lf: pl.LazyFrame, column: str, bins: int | list[float], args: argparse.Namespace
) -> pl.DataFrame:
    """The demo data lives in memory: one expression over it."""
    expr = pl.col(column).gpu_hist.histogram(
        bins,
        range=args.range,
        weights=args.weights,
        density=args.density,
        closed=args.closed,
        device=args.device,
    )
    return lf.select(expr).collect().unnest(column)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="polars-gpu-hist",
        description="Histogram a column of a Parquet/CSV/IPC file (or a demo data set).",
    )
    p.add_argument("file", nargs="?", type=Path, help="Parquet, CSV or IPC file; demo data if none")
    p.add_argument("-c", "--column", help="column to histogram (default: the first numeric one)")
    p.add_argument(
        "-b",
        "--bins",
        default="20",
        help="number of equal bins, or comma-separated edges (default 20)",
    )
    p.add_argument("-r", "--range", nargs=2, type=float, metavar=("MIN", "MAX"))
    p.add_argument("-w", "--weights", help="column of weights")
    p.add_argument("--density", action="store_true", help="normalize to a density")
    p.add_argument("--closed", choices=["left", "right"], default="left")
    p.add_argument("--device", choices=["auto", "cpu", "gpu"], default="auto")
    p.add_argument("--rows", type=int, default=10_000_000, help="rows of demo data")
    p.add_argument("--plot", type=Path, help="also write a chart (.png, .html, .svg)")
    p.add_argument("--width", type=int, default=50, help="width of the terminal bars")
    p.add_argument(
        "--progress",
        action="store_true",
        help="show a progress bar on stderr (the default when stderr is a terminal)",
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    bins = [float(e) for e in args.bins.split(",")] if "," in args.bins else int(args.bins)
    lf = demo_frame(args.rows) if args.file is None else scan(args.file)
    schema = lf.collect_schema()
    column = args.column or next(
        (n for n, t in schema.items() if t.is_numeric() or t.is_temporal()), None
    )
    if column is None or column not in schema:
        names = ", ".join(schema.names())
        raise SystemExit(f"error: no column {column!r} to histogram; columns: {names}")
    t0 = time.perf_counter()
    try:
        if args.file is None:
            hist = demo_histogram(lf, column, bins, args)
        else:
            progress = args.progress or sys.stderr.isatty()
            auto = args.range is None and isinstance(bins, int)
            scanned = histogram_scan(
                args.file,
                column,
                bins,
                range="auto" if auto else args.range,
                weights=args.weights,
                closed=args.closed,
                device=args.device,
                progress=progress,
            )
            hist = scanned.to_frame(density=args.density)
    except (pl.exceptions.PolarsError, ValueError, TypeError, RuntimeError) as e:
        raise SystemExit(f"error: {str(e).splitlines()[0]}") from None
    elapsed = time.perf_counter() - t0
    source = "demo data" if args.file is None else str(args.file)
    print(f"{source}: column {column!r}, {hist.height} bins, {elapsed * 1e3:.1f} ms")
    print(plot.bars(hist, width=args.width))
    if args.plot:
        path = plot.save(hist, args.plot, title=f"{column} ({source})")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
