"""Histograms of data larger than memory: Polars' streaming engine reads bounded batches that
fill one :class:`Histogram`."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, TextIO, Union

import polars as pl

from polars_gpu_hist import BinsArg, Closed, Device, RangeArg
from polars_gpu_hist._accumulator import Histogram

Source = Union[pl.LazyFrame, str, Path, Sequence[Union[str, Path]]]

SCANNERS = {
    ".parquet": pl.scan_parquet,
    ".pq": pl.scan_parquet,
    ".csv": pl.scan_csv,
    ".tsv": lambda p: pl.scan_csv(p, separator="\t"),
    ".ipc": pl.scan_ipc,
    ".arrow": pl.scan_ipc,
    ".feather": pl.scan_ipc,
}
# Formats whose row count Polars reads from metadata (the progress bar's total).
_COUNTED = {".parquet", ".pq", ".ipc", ".arrow", ".feather"}

DEFAULT_CHUNK_SIZE = 1 << 20


def scan_source(source: Source) -> pl.LazyFrame:
    """A LazyFrame over a LazyFrame, a path or glob (Parquet, CSV, IPC), or a list of paths."""
    if isinstance(source, pl.LazyFrame):
        return source
    if isinstance(source, pl.DataFrame):
        return source.lazy()
    paths = [source] if isinstance(source, (str, Path)) else list(source)
    if not paths:
        raise ValueError("no files to scan")
    suffixes = {Path(p).suffix.lower() for p in paths}
    if len(suffixes) != 1 or next(iter(suffixes)) not in SCANNERS:
        names = ", ".join(sorted(SCANNERS))
        raise ValueError(f"cannot read {', '.join(map(str, paths))}: use files ending in {names}")
    for p in paths:
        if not any(c in str(p) for c in "*?[") and not Path(p).exists():
            raise FileNotFoundError(f"no such file: {p}")
    scanner = SCANNERS[suffixes.pop()]
    return scanner([str(p) for p in paths] if len(paths) > 1 else str(paths[0]))


def histogram_scan(
    source: Source,
    column: str,
    bins: BinsArg = 10,
    *,
    range: RangeArg | Literal["auto"] = None,
    weights: str | None = None,
    closed: Closed = "left",
    device: Device = "auto",
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    progress: bool | TextIO = False,
) -> Histogram:
    """The histogram of ``column`` of a LazyFrame or of files too large for memory, read in
    bounded batches by Polars' streaming engine (``LazyFrame.collect_batches``).

    Memory stays bounded by the batch size (and Polars' own buffers), whatever the size of the
    data; the counts equal one ``numpy.histogram`` over the whole column.

    Parameters
    ----------
    source
        A LazyFrame, or a Parquet/CSV/IPC path, glob or list of paths (by their suffix).
    column
        The column to histogram (numeric, Date, Datetime or Duration).
    bins
        The number of equal bins, or strictly increasing edges.
    range
        ``(min, max)`` of the equal bins, or ``"auto"`` for the [min, max] of the column's
        valid values as numpy takes it (NaN, nulls and rows with null weights left out; float32
        edges for Float32 columns). ``"auto"`` **reads the data twice**: a first streaming pass
        finds the extremes. Not allowed with explicit edges; required with an int ``bins``.
    weights
        A column of weights: counts become sums of weights (Float64).
    closed, device
        As for :meth:`GpuHistNamespace.histogram`.
    chunk_size
        Rows per batch (the bound on what is held at once).
    progress
        ``True`` (or a text stream) to draw a progress bar on stderr (or that stream).

    Returns
    -------
    Histogram
        Filled and mergeable; ``.to_frame()`` gives the expression's rows.
    """
    lf = scan_source(source)
    schema = lf.collect_schema()
    for name in [column] + ([weights] if weights is not None else []):
        if name not in schema:
            raise pl.exceptions.ColumnNotFoundError(
                f"no column {name!r} to histogram; columns: {', '.join(schema.names())}"
            )
    if isinstance(range, str):
        if range != "auto":
            raise ValueError(f"`range` must be (min, max), None or 'auto', got {range!r}")
        if not isinstance(bins, int) or isinstance(bins, bool):
            raise ValueError("range='auto' needs an int `bins`: explicit edges need no range")
        extremes = _data_extremes(lf, column, schema[column], weights)
        hist = Histogram._from_data_range(
            bins, extremes, closed=closed, weights=weights is not None, device=device
        )
    else:
        hist = Histogram(
            bins, range=range, closed=closed, weights=weights is not None, device=device
        )
    # An empty first fill fixes the dtype and refuses an unsupported one before reading.
    empty_weights = None if weights is None else pl.Series(weights, [], dtype=schema[weights])
    hist.fill(pl.Series(column, [], dtype=schema[column]), empty_weights)
    if chunk_size < 1:
        raise ValueError(f"`chunk_size` must be a positive number of rows, got {chunk_size}")
    bar = None
    if progress:
        stream = progress if hasattr(progress, "write") else sys.stderr
        bar = _Progress(stream, _total_rows(source, lf), _label(source))
    selected = lf.select([column] + ([weights] if weights is not None else []))
    # Order does not matter to a histogram: let the engine hand batches as they come.
    for batch in selected.collect_batches(chunk_size=chunk_size, maintain_order=False):
        hist.fill(batch.get_column(column), None if weights is None else batch.get_column(weights))
        if bar is not None:
            bar.update(batch.height)
    if bar is not None:
        bar.close()
    return hist


def _data_extremes(
    lf: pl.LazyFrame, column: str, dtype: pl.DataType, weights: str | None
) -> tuple[str, str, str]:
    """numpy's automatic range over the rows that count, as ``(kind, min, max)`` exact text."""
    x = pl.col(column)
    keep = x.is_not_nan() if dtype.is_float() else pl.lit(True)
    if weights is not None:
        keep = keep & pl.col(weights).is_not_null()
    if dtype.is_temporal():
        x = x.to_physical()
    elif not dtype.is_numeric():
        # Let the native fill refuse the dtype with its message.
        return ("empty", "", "")
    lo, hi = (
        lf.select(x.filter(keep).min().alias("lo"), x.filter(keep).max().alias("hi"))
        .collect(engine="streaming")
        .row(0)
    )
    if lo is None:
        return ("empty", "", "")
    if dtype == pl.Float32:
        kind = "float32"
    elif dtype == pl.Float64:
        kind = "float64"
    else:
        kind = "integer"
    # repr() of a float is exact (shortest round-trip); ints are exact as text.
    return (kind, repr(lo), repr(hi))


def _total_rows(source: Source, lf: pl.LazyFrame) -> int | None:
    """The row count where the files' metadata has it (Parquet, IPC); ``None`` otherwise."""
    if isinstance(source, (str, Path)) and Path(source).suffix.lower() in _COUNTED:
        try:
            return int(lf.select(pl.len()).collect().item())
        except pl.exceptions.PolarsError:
            return None
    return None


def _label(source: Source) -> str:
    return str(source) if isinstance(source, (str, Path)) else "scan"


class _Progress:
    """A one-line progress bar, redrawn at most ten times a second, shown after half a second
    (short scans print nothing)."""

    def __init__(self, stream: TextIO, total: int | None, label: str) -> None:
        self.stream, self.total, self.label = stream, total, label
        self.rows = 0
        self.start = time.perf_counter()
        self.drawn_at = 0.0

    def update(self, rows: int) -> None:
        self.rows += rows
        now = time.perf_counter()
        if now - self.start >= 0.5 and now - self.drawn_at >= 0.1:
            self.drawn_at = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        rate = self.rows / max(now - self.start, 1e-9)
        if self.total:
            done = min(self.rows / self.total, 1.0)
            bar = "#" * int(30 * done)
            text = f"{self.label}: [{bar:<30}] {done:6.1%} {self.rows:,}/{self.total:,} rows"
        else:
            text = f"{self.label}: {self.rows:,} rows"
        self.stream.write(f"\r{text}, {rate / 1e6:.1f} M rows/s")
        self.stream.flush()

    def close(self) -> None:
        if self.drawn_at:
            self._draw(time.perf_counter())
            self.stream.write("\n")
            self.stream.flush()
