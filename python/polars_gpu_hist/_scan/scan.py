"""Histograms of data larger than memory: Polars' streaming engine reads bounded batches that
fill one :class:`Histogram`."""

from __future__ import annotations

import glob
import operator
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, SupportsIndex, TextIO, Union, cast

import polars as pl

from polars_gpu_hist import _native
from polars_gpu_hist._args import arguments as _args
from polars_gpu_hist._args.arguments import BinsArg, Closed, Device, RangeArg
from polars_gpu_hist._histogram.binning import number_range
from polars_gpu_hist._histogram.histogram import Histogram
from polars_gpu_hist._native import options as _options
from polars_gpu_hist._scan import in_memory, passes
from polars_gpu_hist._scan.csv import (
    CSV_DEFAULTS,
    csv_hint,
    csv_retry,
    text_column_error,
)

Source = Union[pl.LazyFrame, str, Path, Sequence[Union[str, Path]]]

SCANNERS: dict[str, Callable[..., pl.LazyFrame]] = {
    ".parquet": pl.scan_parquet,
    ".pq": pl.scan_parquet,
    ".csv": pl.scan_csv,
    ".tsv": lambda p, **kwargs: pl.scan_csv(p, **{"separator": "\t", **kwargs}),
    ".ipc": pl.scan_ipc,
    ".arrow": pl.scan_ipc,
    ".feather": pl.scan_ipc,
}
# Formats whose row count Polars reads from metadata (the progress bar's total).
_COUNTED = {".parquet", ".pq", ".ipc", ".arrow", ".feather"}

DEFAULT_CHUNK_SIZE = 1 << 20

# Rules a streaming pass serves: one bin per integer needs the extremes; "sturges", "rice" and
# "sqrt" the number of values and their extremes.
STREAMED_RULES = ("integer", "sturges", "rice", "sqrt")
# numpy's estimators that need every value (percentiles, moments, histograms of many bin
# counts): the column is read into memory, in batches, and must fit there.
IN_MEMORY_RULES = ("auto", "fd", "doane", "scott", "stone")


def is_csv(source: object) -> bool:
    """Whether ``source`` names CSV (or TSV) files."""
    try:
        paths = _paths(source)
    except (TypeError, ValueError):
        return False
    return all(Path(p).suffix.lower() in (".csv", ".tsv") for p in paths)


def scan_source(source: Source, reader_options: Mapping[str, object] | None = None) -> pl.LazyFrame:
    """A LazyFrame over a LazyFrame, a path or glob (Parquet, CSV, IPC), or a list of paths;
    ``reader_options`` go to Polars' scanner (CSV files get :data:`CSV_DEFAULTS` below them)."""
    if isinstance(source, (pl.LazyFrame, pl.DataFrame)):
        if reader_options:
            raise ValueError(
                "`reader_options` are for files: a LazyFrame or DataFrame is already read"
            )
        return source.lazy()
    if reader_options is not None and not isinstance(reader_options, Mapping):
        raise TypeError(
            "`reader_options` must be a dict of Polars' scan_csv/scan_parquet/scan_ipc options, "
            f"got {type(reader_options).__name__}"
        )
    paths = _paths(source)
    suffixes = {Path(p).suffix.lower() for p in paths}
    if len(suffixes) != 1 or next(iter(suffixes)) not in SCANNERS:
        names = ", ".join(sorted(SCANNERS))
        raise ValueError(f"cannot read {', '.join(paths)}: use files ending in {names}")
    literal = True  # every path names an existing file, even one with `*?[` in its name
    for p in paths:
        if "://" in p:
            literal = False
            continue  # cloud storage: Polars finds (or misses) it
        local = os.path.expanduser(p)
        if Path(local).exists():
            continue
        literal = False
        if any(c in p for c in "*?["):
            if not glob.glob(local, recursive=True):
                raise FileNotFoundError(f"no file matches {p}")
        else:
            raise FileNotFoundError(f"no such file: {p}")
    suffix = suffixes.pop()
    options: dict[str, object] = {"glob": False} if literal else {}
    if suffix in (".csv", ".tsv"):
        options.update(CSV_DEFAULTS)
    options.update(reader_options or {})
    try:
        return SCANNERS[suffix](paths if len(paths) > 1 else paths[0], **options)
    except TypeError as e:
        raise TypeError(f"`reader_options`: {e}") from None


def _paths(source: object) -> list[str]:
    """The paths of a path, glob or sequence of them; ``TypeError`` for anything else."""
    accepted = (
        "`source` must be a LazyFrame, a DataFrame, a path or glob (str or pathlib.Path) of "
        "Parquet/CSV/IPC files, or a list of paths"
    )
    if isinstance(source, (str, os.PathLike)):
        items: list[object] = [source]
    elif isinstance(source, Iterable) and not isinstance(source, (bytes, bytearray, Mapping)):
        items = list(source)
        if not items:
            raise ValueError("`source` is an empty list: give at least one path")
    else:
        raise TypeError(f"{accepted}; got {type(source).__name__}")
    paths = []
    for item in items:
        path = os.fspath(item) if isinstance(item, (str, os.PathLike)) else None
        if not isinstance(path, str):
            raise TypeError(f"{accepted}; got a {type(source).__name__} holding {item!r}")
        paths.append(path)
    return paths


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
    progress: bool | TextIO | Literal["auto"] = False,
    reader_options: Mapping[str, Any] | None = None,
    where: str | pl.Expr | None = None,
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
        The number of equal bins, strictly increasing edges, or a rule: ``"integer"`` (one bin
        per integer, integer and temporal columns) or one of numpy's estimators. ``"integer"``,
        ``"sturges"``, ``"rice"`` and ``"sqrt"`` need only the number of values and their
        extremes, found in a first streaming pass (the data is read twice, memory stays
        bounded). ``"auto"``, ``"fd"``, ``"doane"``, ``"scott"`` and ``"stone"`` need every
        value (percentiles, moments): the column is read once, into memory, **so it must fit
        there**. Estimators refuse ``weights`` (``TypeError``), as numpy does. Time bins of a
        temporal column (``"1h"``, ``"1w"``, ``"1mo"``, a ``timedelta``: see
        :func:`histogram_expr`) read it into memory too.
    range
        ``(min, max)`` of the equal bins, or ``"auto"`` for the [min, max] of the column's
        valid values as numpy takes it (NaN, nulls and rows with null weights left out; float32
        edges for Float32 columns). ``"auto"`` **reads the data twice**: a first streaming pass
        finds the extremes, and the second checks that its data spans exactly the same
        [min, max]; data that changed in between (a file rewritten or appended to, a new file
        matching a glob) raises ``RuntimeError`` rather than giving bins that are not numpy's
        or dropping values. Not allowed with explicit edges; required with an int ``bins``.
        With a rule, ``None`` (the data's extremes) or ``(min, max)`` as numpy takes it.
    weights
        A column of weights: counts become sums of weights (Float64).
    closed, device
        As for :meth:`GpuHistNamespace.histogram`.
    chunk_size
        Rows per batch (the bound on what is held at once).
    progress
        ``True`` (or a text stream) to draw a progress bar on stderr (or that stream), from
        the first batch, ending with a line of the rows read and their rate; ``"auto"``: on
        stderr where it is a terminal, for scans longer than half a second only.
    reader_options
        Options for Polars' scanner of the files (``pl.scan_csv``, ``pl.scan_parquet`` or
        ``pl.scan_ipc``), e.g. ``{"separator": ";"}``. CSV files are read as they come: the
        usual spellings of a missing value (``NA``, ``N/A``, ``null``, an empty field, ...:
        :data:`CSV_NULL_VALUES`) are nulls, and timestamps are parsed as Date/Datetime
        (``try_parse_dates``), unless these options say otherwise. Where the dtypes inferred
        from the first rows do not hold (a column of integers whose later rows hold floats, or
        one with only nulls in its first rows), the whole file decides them (read once more),
        unless ``infer_schema_length`` is given.
    where
        Only the rows where this holds: a Polars expression, or a SQL predicate as text
        (``"dep_delay > 0 AND origin = 'JFK'"``, ``pl.sql_expr``). The histogram's
        :attr:`~Histogram.flow` counts the rows that pass it.

    Returns
    -------
    Histogram
        Filled and mergeable; ``.to_frame()`` gives the expression's rows, ``.flow`` the rows
        not counted (null, NaN, below and above the bins).
    """
    __tracebackhide__ = True  # IPython shows the caller's frame
    predicate = _predicate(where)
    args = (source, column, bins, range, weights, closed, device, chunk_size, progress, predicate)
    inferred = reader_options is None or "infer_schema_length" not in reader_options
    retry = is_csv(source) and inferred
    try:
        return _scan_histogram(*args, reader_options, retry)
    except pl.exceptions.ComputeError as e:
        if not retry or not csv_retry(e):
            if csv_retry(e):
                raise pl.exceptions.ComputeError(f"{csv_hint(e)}\n\n{e}") from None
            raise
    whole = {**(reader_options or {}), "infer_schema_length": None}
    try:
        return _scan_histogram(*args, whole, False)
    except pl.exceptions.ComputeError as e:
        if csv_retry(e):
            raise pl.exceptions.ComputeError(f"{csv_hint(e)}\n\n{e}") from None
        raise


def _predicate(where: object) -> pl.Expr | None:
    """``where`` as an expression: a SQL predicate's text is parsed here, where it is written."""
    if where is None or isinstance(where, pl.Expr):
        return where
    if not isinstance(where, str):
        raise TypeError(
            f"`where` must be a SQL predicate (str) or a Polars expression, got {where!r}"
        )
    try:
        return pl.sql_expr(where)
    except (pl.exceptions.PolarsError, ValueError) as e:
        raise ValueError(f"`where` is not a SQL predicate Polars reads: {where!r} ({e})") from None


def _open(
    source: Source, reader_options: Mapping[str, Any] | None, where: pl.Expr | None
) -> pl.LazyFrame:
    lf = scan_source(source, reader_options)
    return lf if where is None else lf.filter(where)


def _scan_histogram(
    source: Source,
    column: str,
    bins: BinsArg,
    range: RangeArg | Literal["auto"],
    weights: str | None,
    closed: Closed,
    device: Device,
    chunk_size: int,
    progress: bool | TextIO | Literal["auto"],
    where: pl.Expr | None,
    reader_options: Mapping[str, Any] | None,
    infer_whole: bool,
) -> Histogram:
    """:func:`histogram_scan` with the scanner's options; ``infer_whole``: a CSV column that
    the first rows leave as String is inferred again from the whole file."""
    lf = _open(source, reader_options, where)
    for name, what in ((column, "column"), (weights, "weights")):
        if not isinstance(name, str) and not (what == "weights" and name is None):
            raise TypeError(f"`{what}` must be a column name (str), got {name!r}")
    if closed not in ("left", "right"):
        raise ValueError(f"`closed` must be 'left' or 'right', got {closed!r}")
    if device not in ("auto", "cpu", "gpu"):
        raise ValueError(f"`device` must be 'auto', 'cpu' or 'gpu', got {device!r}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValueError(f"`chunk_size` must be a positive number of rows, got {chunk_size!r}")
    writes = callable(getattr(progress, "write", None))
    if not (isinstance(progress, bool) or progress == "auto" or writes):
        raise TypeError(
            "`progress` must be True, False, 'auto' or a text stream (with .write), got "
            f"{progress!r}"
        )
    schema = lf.collect_schema()
    for name in [column] + ([weights] if weights is not None else []):
        if name not in schema:
            raise pl.exceptions.ColumnNotFoundError(
                f"no column {name!r} to histogram; columns: {', '.join(schema.names())}"
            )
    if infer_whole and any(schema[n] == pl.String for n in (column, weights) if n is not None):
        # Only nulls (or a stray word) in the first rows: the whole file decides the dtype.
        reader_options = {**(reader_options or {}), "infer_schema_length": None}
        lf = _open(source, reader_options, where)
        schema = lf.collect_schema()
    if is_csv(source) and schema[column] == pl.String:
        raise text_column_error(lf, column)

    def new_bar() -> _Progress | None:
        """The progress bar of the pass that reads the batches (after any first pass)."""
        if not progress or (progress == "auto" and not sys.stderr.isatty()):
            return None
        stream = sys.stderr if isinstance(progress, (bool, str)) else progress
        delay = 0.5 if progress == "auto" else 0.0
        return _Progress(stream, _total_rows(source, lf), _label(source), delay)

    def batches() -> Iterable[pl.DataFrame]:
        # Order does not matter to a histogram: let the engine hand batches as they come.
        selected = lf.select(column if weights in (None, column) else [column, weights])
        return selected.collect_batches(chunk_size=chunk_size, maintain_order=False)

    if _args.is_time_bins(bins):
        in_memory.check_time_bins(bins, range, weights, schema[column])
        values = _read_column(batches, column, schema[column], new_bar())
        return in_memory.time_bins(values, bins, cast(RangeArg, range), closed, device)
    if isinstance(bins, str):
        rule, span = _check_rule(bins, range, weights, schema, column)
        if rule in IN_MEMORY_RULES:
            values = _read_column(batches, column, schema[column], new_bar())
            return in_memory.estimator(values, rule, span, closed, device)
        hist, check = _streamed_rule(
            lf, source, rule, span, schema, column, weights, closed, device
        )
        if check is not None and not isinstance(source, (pl.LazyFrame, pl.DataFrame)):
            lf = _open(source, reader_options, where)  # a fresh scan, as for range="auto"
        return _fill_batches(hist, check, batches, column, weights, new_bar())
    # range="auto": the number of bins over the data's extremes, found by a first pass.
    count = None
    if isinstance(range, str):
        count = _auto_bins(range, bins)
        # Checks bins, closed, device and the dtypes now, not after a pass over the data.
        probe = Histogram(
            count, range=(0.0, 1.0), closed=closed, weights=weights is not None, device=device
        )
    else:
        probe = Histogram(
            bins, range=range, closed=closed, weights=weights is not None, device=device
        )
    _fill_empty(probe, schema, column, weights)
    hist, check = probe, None
    if count is not None:
        first = passes.first_pass(lf, column, schema[column], weights)
        hist = Histogram._from_data_range(
            count, first.value(), closed=closed, weights=weights is not None, device=device
        )
        _fill_empty(hist, schema, column, weights)
        if not isinstance(source, (pl.LazyFrame, pl.DataFrame)):
            # A fresh scan: Polars keeps the first scan's file list and Parquet metadata, which
            # a file rewritten in between no longer matches.
            lf = _open(source, reader_options, where)
            _check_same_dtypes(lf.collect_schema(), schema, column, weights, source)
        check = passes.SameExtremes(first, column, schema[column], _label(source))
    return _fill_batches(hist, check, batches, column, weights, new_bar())


def _auto_bins(range: str, bins: BinsArg) -> int:
    """The number of bins of range="auto", which takes an int `bins` only."""
    if range != "auto":
        raise ValueError(f"`range` must be (min, max), None or 'auto', got {range!r}")
    if isinstance(bins, bool):
        raise TypeError(f"`bins` must be an int or a sequence of edges, got {bins!r}")
    try:
        # numpy integers too; edges (and anything else) raise the TypeError answered below.
        return operator.index(cast(SupportsIndex, bins))
    except TypeError:
        raise ValueError("range='auto' needs an int `bins`: explicit edges need no range") from None


def _fill_batches(
    hist: Histogram,
    check: passes.SameExtremes | None,
    batches: Callable[[], Iterable[pl.DataFrame]],
    column: str,
    weights: str | None,
    bar: _Progress | None,
) -> Histogram:
    """The streaming pass that fills ``hist``, batch by batch (and checks that the data spans
    what a first pass found)."""
    try:
        for batch in batches():
            values = batch.get_column(column)
            weight_values = None if weights is None else batch.get_column(weights)
            if check is not None:
                check.batch(values, weight_values)
            hist.fill(values, weight_values)
            if bar is not None:
                bar.update(batch.height)
        if check is not None:
            check.finish()
    finally:
        if bar is not None:
            bar.close()  # an error message then starts on a line of its own
    return hist


def _check_rule(
    bins: str,
    range: RangeArg | Literal["auto"],
    weights: str | None,
    schema: pl.Schema,
    column: str,
) -> tuple[_options.BinRule, RangeArg]:
    """A rule's name and the range it is over, checked against the other arguments and the
    column's dtype before any data is read."""
    rule = _args.bins(bins)
    assert isinstance(rule, str)
    if isinstance(range, str):
        raise ValueError(
            f"range={range!r} is for a number of bins: bins={rule!r} takes the range from the data "
            "itself (range=None) or from range=(min, max)"
        )
    if weights is not None:
        _args.refuse_weighted_estimator(rule)
    dtype = schema[column]
    if not passes.supported_dtype(dtype):
        raise TypeError(
            f"column {column!r} has dtype {dtype}, which cannot be histogrammed: use "
            f"{passes.SUPPORTED_DTYPES} column"
        )
    if rule == "integer" and dtype.is_float():
        raise ValueError(
            f'`bins="integer"` needs an integer, Date, Datetime or Duration column, got {dtype}: '
            "give a number of bins or edges"
        )
    return rule, range


def _streamed_rule(
    lf: pl.LazyFrame,
    source: Source,
    rule: _options.BinRule,
    range: RangeArg,
    schema: pl.Schema,
    column: str,
    weights: str | None,
    closed: Closed,
    device: Device,
) -> tuple[Histogram, passes.SameExtremes | None]:
    """The histogram of a rule that a first streaming pass resolves (its size and extremes),
    before the pass that fills it, and the check that pass makes where the bins came from the
    data's extremes."""
    dtype = schema[column]
    pair = number_range(range)
    weighted = weights is not None
    if rule == "integer":
        if pair is None:
            first = passes.first_pass(lf, column, dtype, weights)
            lo, hi = (
                (0, 0) if first.lo is None or first.hi is None else (int(first.lo), int(first.hi))
            )
            check = passes.SameExtremes(first, column, dtype, _label(source))
        else:
            lo_f, hi_f = pair
            if not (lo_f.is_integer() and hi_f.is_integer() and lo_f <= hi_f):
                raise ValueError(
                    f'`bins="integer"` needs a `range` of two integers lo <= hi, got {range!r}'
                )
            lo, hi, check = int(lo_f), int(hi_f), None
        bins = hi - lo + 1
        if bins > _args.MAX_BINS:
            raise ValueError(
                f'`bins="integer"` would make {bins} bins (one per integer from {lo} to {hi}), '
                f"more than the {_args.MAX_BINS} a histogram holds: give a number of bins or a "
                "narrower `range`"
            )
        # numpy's edges np.arange(lo, hi + 2), which linspace makes exactly; an integer axis
        # (its statistics take the value each bin holds; boost's Integer axis).
        hist = Histogram("integer", range=(lo, hi), closed=closed, weights=weighted, device=device)
        _fill_empty(hist, schema, column, weights)
        return hist, check
    n, first = passes.summary(lf, column, dtype, pair)
    extremes = pl.Series(
        [] if first.lo is None else [first.lo, first.hi], dtype=passes.physical(dtype)
    )
    estimated = _native.estimate_from_extremes(rule, n, extremes, pair)
    assert estimated is not None, f"bins={rule!r} is estimated from a streaming pass"
    bins = estimated
    if pair is not None:
        hist = Histogram(bins, range=pair, closed=closed, weights=weighted, device=device)
        _fill_empty(hist, schema, column, weights)
        return hist, None
    hist = Histogram._from_data_range(
        bins, first.value(), closed=closed, weights=weighted, device=device
    )
    _fill_empty(hist, schema, column, weights)
    return hist, passes.SameExtremes(first, column, dtype, _label(source))


def _read_column(
    batches: Callable[[], Iterable[pl.DataFrame]],
    column: str,
    dtype: pl.DataType,
    bar: _Progress | None,
) -> pl.Series:
    """The whole column in memory, read batch by batch (for the estimators that need every
    value)."""
    parts = []
    try:
        for batch in batches():
            parts.append(batch.get_column(column))
            if bar is not None:
                bar.update(batch.height)
    finally:
        if bar is not None:
            bar.close()
    if not parts:
        # An empty file: numpy's answer for an empty column of its dtype, not of Null.
        return pl.Series(column, [], dtype=dtype)
    return pl.concat(parts, rechunk=False)


def _fill_empty(hist: Histogram, schema: pl.Schema, column: str, weights: str | None) -> None:
    """An empty first fill fixes the histogram's dtype, after the column's and the weights'
    dtypes are checked, before any data is read."""
    if not passes.supported_dtype(schema[column]):
        raise TypeError(
            f"column {column!r} has dtype {schema[column]}, which cannot be histogrammed: use "
            f"{passes.SUPPORTED_DTYPES} column"
        )
    if weights is not None and not passes.numeric(schema[weights]):
        raise ValueError(
            f"`weights` must be numeric (integers, Float16/32/64 or Decimal), got column "
            f"{weights!r} of dtype {schema[weights]}"
        )
    empty_weights = None if weights is None else pl.Series(weights, [], dtype=schema[weights])
    hist.fill(pl.Series(column, [], dtype=schema[column]), empty_weights)


def _check_same_dtypes(
    schema: pl.Schema, first: pl.Schema, column: str, weights: str | None, source: Source
) -> None:
    for name in [column] + ([weights] if weights is not None else []):
        now = schema.get(name)
        if now != first[name]:
            found = "no such column" if now is None else f"dtype {now}"
            raise RuntimeError(
                f"range='auto': {_label(source)} changed between the two passes: column "
                f"{name!r} had dtype {first[name]}, now {found}; run again once the data stops "
                "changing"
            )


def _total_rows(source: Source, lf: pl.LazyFrame) -> int | None:
    """The row count where the files' metadata has it (Parquet, IPC); ``None`` otherwise."""
    if isinstance(source, (str, Path)) and Path(source).suffix.lower() in _COUNTED:
        try:
            return int(lf.select(pl.len()).collect().item())
        except pl.exceptions.PolarsError:
            return None
    return None


def _label(source: Source) -> str:
    """The source as an error message or progress bar names it."""
    if isinstance(source, (str, os.PathLike)):
        return str(source)
    if isinstance(source, (pl.LazyFrame, pl.DataFrame)):
        return f"the {type(source).__name__}"
    paths = [str(p) for p in source]
    return paths[0] if len(paths) == 1 else f"{paths[0]} and {len(paths) - 1} more files"


class _Progress:
    """A one-line progress bar, redrawn at most ten times a second, shown once ``delay``
    seconds have passed (with a delay, short scans print nothing; without, the bar always ends
    with a line of the rows read)."""

    def __init__(self, stream: TextIO, total: int | None, label: str, delay: float) -> None:
        self.stream, self.total, self.label, self.delay = stream, total, label, delay
        self.rows = 0
        self.start = time.perf_counter()
        self.drawn_at = 0.0

    def update(self, rows: int) -> None:
        self.rows += rows
        now = time.perf_counter()
        if now - self.start >= self.delay and now - self.drawn_at >= 0.1:
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
        if self.drawn_at or not self.delay:
            self._draw(time.perf_counter())
            self.stream.write("\n")
            self.stream.flush()
