"""Histograms of data larger than memory, in one pipeline: source (:mod:`source`: what the rows
are) -> plan (:mod:`plan`: the passes, decided before a row is read) -> reader (:mod:`reader`:
Polars' streaming engine) -> fill (the native sink, overlapped with decoding) -> result (a
:class:`Histogram`, or the expression's frame for the lazy namespace)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast, overload

import polars as pl

from polars_gpu_hist import _native
from polars_gpu_hist._args import arguments as _args
from polars_gpu_hist._args import quantile_bins as _quantile_bins
from polars_gpu_hist._args.arguments import BinsArg, Closed, Device, RangeArg
from polars_gpu_hist._histogram.histogram import Histogram
from polars_gpu_hist._scan import bins as _bins
from polars_gpu_hist._scan import in_memory, passes, reader
from polars_gpu_hist._scan import plan as _plan
from polars_gpu_hist._scan import progress as _progress
from polars_gpu_hist._scan.csv import csv_hint, csv_retry, text_column_error
from polars_gpu_hist._scan.source import Dataset, Source, is_csv, open_dataset

DEFAULT_CHUNK_SIZE = 1 << 20
STREAMED_RULES = _plan.STREAMED_RULES
IN_MEMORY_RULES = _plan.IN_MEMORY_RULES


@overload
def histogram_scan(
    source: Source,
    column: str | list[str],
    bins: BinsArg | list[BinsArg] = ...,
    *,
    range: RangeArg | Literal["auto"] | list[RangeArg] = ...,
    weights: str | None = ...,
    closed: Closed = ...,
    device: Device = ...,
    chunk_size: int = ...,
    progress: _progress.ProgressArg = ...,
    reader_options: Mapping[str, Any] | None = ...,
    where: str | pl.Expr | None = ...,
    by: None = ...,
    storage_options: Mapping[str, Any] | None = ...,
) -> Histogram: ...


@overload
def histogram_scan(
    source: Source,
    column: str | list[str],
    bins: BinsArg | list[BinsArg] = ...,
    *,
    range: RangeArg | Literal["auto"] | list[RangeArg] = ...,
    weights: str | None = ...,
    closed: Closed = ...,
    device: Device = ...,
    chunk_size: int = ...,
    progress: _progress.ProgressArg = ...,
    reader_options: Mapping[str, Any] | None = ...,
    where: str | pl.Expr | None = ...,
    by: str | list[str],
    storage_options: Mapping[str, Any] | None = ...,
) -> pl.DataFrame: ...


def histogram_scan(
    source: Source,
    column: str | list[str],
    bins: BinsArg | list[BinsArg] = 10,
    *,
    range: RangeArg | Literal["auto"] | list[RangeArg] = None,
    weights: str | None = None,
    closed: Closed = "left",
    device: Device = "auto",
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    progress: _progress.ProgressArg = False,
    reader_options: Mapping[str, Any] | None = None,
    where: str | pl.Expr | None = None,
    by: str | list[str] | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> Histogram | pl.DataFrame:
    """The histogram of ``column`` of a LazyFrame or of files too large for memory, read by
    Polars' streaming engine and counted as it decodes them.

    Memory stays bounded (Polars' buffers and the histogram), whatever the size of the data;
    the counts equal one ``numpy.histogram`` over the whole column. Inside the streaming
    engine, the morsels are counted by the engine's own threads as they are decoded
    (``device="cpu"``), or handed to a thread that counts them in batches on the GPU
    (``"gpu"``; ``"auto"`` takes the GPU wherever one can be used, leaving the cores to the
    decoder). :func:`polars_gpu_hist.explain` of the LazyFrame and column prints the plan.

    Parameters
    ----------
    source
        A LazyFrame or DataFrame, or Parquet/CSV/IPC files: a path, a glob, a directory (a
        hive-partitioned one, ``dir/key=value/*.parquet``, gives its keys as columns), a URL
        Polars reads (``s3://...``, with ``storage_options``), or a list of them.
    column
        The column to histogram (numeric, Date, Datetime or Duration), or a list of 2 to 8 for
        an n-D histogram (as ``numpy.histogramdd``: ``bins`` and ``range`` per axis).
    bins
        The number of equal bins, strictly increasing edges, or a rule: ``"integer"`` (one bin
        per integer, integer and temporal columns) or one of numpy's estimators. ``"integer"``,
        ``"sturges"``, ``"rice"`` and ``"sqrt"`` need only the number of values and their
        extremes, found in a first pass (from Parquet statistics where they are exact, else by
        reading the column: memory stays bounded). ``"auto"``, ``"fd"``, ``"doane"``,
        ``"scott"`` and ``"stone"`` need every value (percentiles, moments): the column is read
        once, into memory, **so it must fit there** (the plan says how much it takes; a
        ``MemoryError`` is raised before reading where it cannot). Estimators refuse
        ``weights`` (``TypeError``), as numpy does. Time bins of a temporal column (``"1h"``,
        ``"1w"``, ``"1mo"``, a ``timedelta``: see :func:`histogram_expr`) read it into memory
        too, as does :func:`quantile_bins` (equi-height bins: numpy's quantiles of the whole
        column, then a second pass counts them; one column, no ``range`` or ``by``).
    range
        ``(min, max)`` of the equal bins, or ``"auto"`` for the [min, max] of the column's
        valid values as numpy takes it (NaN, nulls and rows with null weights left out; float32
        edges for Float32 columns). ``"auto"`` takes the extremes from the files' Parquet
        statistics where those are exact (integer columns, float columns without a zero or NaN
        extreme, every row kept, pyarrow installed), and otherwise **reads the data twice**; the
        fill checks that its data spans exactly the same [min, max]: data that changed in
        between (a file rewritten or appended to, a new file matching a glob) raises
        ``RuntimeError`` rather than giving bins that are not numpy's or dropping values. Not
        allowed with explicit edges; required with an int ``bins``. With a rule, ``None`` (the
        data's extremes) or ``(min, max)`` as numpy takes it.
    weights
        A column of weights: counts become sums of weights (Float64).
    closed, device
        As for :meth:`GpuHistNamespace.histogram`.
    chunk_size
        Rows per batch where the scan reads batches in Python (groups, the rules read into
        memory); the fill inside the streaming engine takes the engine's morsels.
    progress
        ``True`` (or a text stream) to draw a progress line on stderr (or that stream): rows
        read (of the total, where the files' metadata has it), bytes a second, the time left;
        redrawn in place, ending with a line of its own. ``"auto"``: in a notebook (one
        display updated in place), and on stderr where it is a terminal, for scans longer than
        half a second.
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
        (``"dep_delay > 0 AND origin = 'JFK'"``, ``pl.sql_expr``). Polars pushes it into the
        scan: a predicate on a hive partition key leaves out whole files unread. The
        histogram's :attr:`~Histogram.flow` counts the rows that pass it.
    by
        Group keys (a column name or a list of them): the result is then the rows of
        ``gpu_hist.histogram(..., by=...)`` over the whole data, unnested (a DataFrame of the
        keys, ``bin_start``, ``bin_end``, ``count``), groups in order of first appearance in
        row order, one binning for all (an int ``bins`` needs ``range``, or ``"auto"``).
    storage_options
        Options of the storage the files are on (credentials, region, endpoint), handed to
        Polars' scanner.

    Returns
    -------
    Histogram
        Filled and mergeable; ``.to_frame()`` gives the expression's rows, ``.flow`` the rows
        not counted (null, NaN, below and above the bins). With ``by``: a DataFrame.
    """
    __tracebackhide__ = True  # IPython shows the caller's frame
    if isinstance(bins, _quantile_bins.QuantileBins):
        if by is not None or not isinstance(column, str):
            raise ValueError(
                "`bins=quantile_bins(...)` in a scan is for one column without `by`: give "
                "explicit edges for n-D or grouped scans"
            )
        _quantile_bins.refuse_range(range)
        return _quantile_scan(
            source, column, bins, weights, closed, device, chunk_size, progress,
            reader_options, where, storage_options,
        )  # fmt: skip
    if by is not None:
        return grouped(
            source, column, bins, by=by, range=range, weights=weights, closed=closed,
            device=device, chunk_size=chunk_size, progress=progress,
            reader_options=reader_options, where=where, storage_options=storage_options,
        )  # fmt: skip
    r = _plan.request(column, bins, range, weights, closed, device, chunk_size)
    _progress.check(progress)
    predicate = _predicate(where)
    if len(r.columns) > 1 and isinstance(range, str):
        raise ValueError(
            "range='auto' is for one column: give one (min, max) per axis, or None for axes "
            "of explicit edges"
        )

    def run(dataset: Dataset) -> Histogram:
        return histogram(planned(dataset, r), progress)

    result = with_csv_retry(source, reader_options, predicate, storage_options, run)
    return cast(Histogram, result)


def _quantile_scan(
    source: Source,
    column: str,
    bins: _quantile_bins.QuantileBins,
    weights: str | None,
    closed: Closed,
    device: Device,
    chunk_size: int,
    progress: _progress.ProgressArg,
    reader_options: Mapping[str, Any] | None,
    where: str | pl.Expr | None,
    storage_options: Mapping[str, Any] | None,
) -> Histogram:
    """Quantile bins over a scan: the column read into memory (a ``MemoryError`` first where
    the rows the metadata counts would not fit), numpy's quantiles of it, then the scan of
    those edges."""
    _plan.request(column, 10, None, weights, closed, device, chunk_size)  # checked before reading
    _progress.check(progress)
    predicate = _predicate(where)

    def run(dataset: Dataset) -> Histogram:
        total = dataset.total_rows()
        if total is not None:
            _native.ensure_room(total * _width(dataset.lazy().collect_schema()[column]))
        values = reader.read_columns(dataset, [column], chunk_size, None).get_column(column)
        edges = bins.edges(values)
        if any(b <= a for a, b in zip(edges, edges[1:])):
            # The Histogram a scan fills keeps strictly increasing edges.
            raise ValueError(
                f"`bins=quantile_bins({bins.count})` of {column!r} repeats an edge (ties span "
                f"several quantiles): {edges}; a scan's Histogram needs strictly increasing "
                "edges: ask for fewer bins, or use gpu_hist.histogram on the column"
            )
        r = _plan.request(column, edges, None, weights, closed, device, chunk_size)
        return histogram(planned(dataset, r), progress)

    result = with_csv_retry(source, reader_options, predicate, storage_options, run)
    return cast(Histogram, result)


def grouped(
    source: Source,
    column: str | list[str],
    bins: Any,
    *,
    by: str | list[str],
    range: Any = None,
    weights: str | None = None,
    closed: Closed = "left",
    device: Device = "auto",
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    progress: _progress.ProgressArg = False,
    reader_options: Mapping[str, Any] | None = None,
    where: str | pl.Expr | None = None,
    storage_options: Mapping[str, Any] | None = None,
    density: bool = False,
) -> pl.DataFrame:
    """:func:`histogram_scan` with ``by``: the expression's rows over every batch in row
    order, unnested (numpy's density per group with ``density``; the command line's)."""
    r = _plan.request(column, bins, range, weights, closed, device, chunk_size, by, density=density)
    _progress.check(progress)
    predicate = _predicate(where)

    def run(dataset: Dataset) -> pl.DataFrame:
        return frames(planned(dataset, r), progress).to_series().struct.unnest()

    result = with_csv_retry(source, reader_options, predicate, storage_options, run)
    return cast(pl.DataFrame, result)


def with_csv_retry(
    source: Source,
    reader_options: Mapping[str, Any] | None,
    where: pl.Expr | None,
    storage_options: Mapping[str, Any] | None,
    run: Callable[[Dataset], Any],
) -> Any:
    """``run`` over the dataset; a CSV column that the first rows' dtype does not hold is read
    once more with the dtypes inferred from the whole file (unless the options fix them)."""
    inferred = reader_options is None or "infer_schema_length" not in reader_options
    retry = is_csv(source) and inferred
    try:
        return run(_opened(source, reader_options, where, storage_options, retry))
    except pl.exceptions.ComputeError as e:
        if not retry or not csv_retry(e):
            if csv_retry(e):
                raise pl.exceptions.ComputeError(f"{csv_hint(e)}\n\n{e}") from None
            raise
    whole = {**(reader_options or {}), "infer_schema_length": None}
    try:
        return run(_opened(source, whole, where, storage_options, False))
    except pl.exceptions.ComputeError as e:
        if csv_retry(e):
            raise pl.exceptions.ComputeError(f"{csv_hint(e)}\n\n{e}") from None
        raise


def _opened(
    source: Source,
    reader_options: Mapping[str, Any] | None,
    where: pl.Expr | None,
    storage_options: Mapping[str, Any] | None,
    infer_whole: bool,
) -> Dataset:
    """The dataset; a CSV column that its first rows leave as String (only nulls there, or a
    stray word) is inferred from the whole file, with ``infer_whole``."""
    dataset = open_dataset(source, reader_options, where, storage_options)
    dataset.infer_whole = infer_whole
    return dataset


def planned(dataset: Dataset, r: _plan.Request) -> _plan.Plan:
    """The dataset's schema read (a CSV column read as text inferred again from the whole
    file), then the plan."""
    schema = dataset.lazy().collect_schema()
    for name in r.names:
        if name not in schema:
            raise pl.exceptions.ColumnNotFoundError(
                f"no column {name!r} to histogram; columns: {', '.join(schema.names())}"
            )
    texts = [n for n in r.names if schema[n] == pl.String and n not in (r.by or [])]
    if texts and dataset.infer_whole:
        options = {**(dataset.reader_options or {}), "infer_schema_length": None}
        dataset = open_dataset(dataset.source, options, dataset.where, dataset.storage_options)
        schema = dataset.lazy().collect_schema()
    if dataset.format == "csv":
        for name in r.columns:
            if schema[name] == pl.String:
                raise text_column_error(dataset.lazy(), name)
    return _plan.make(dataset, r, schema)


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


# The pipeline's fill and result.


@dataclass
class Filled:
    """A filled histogram and what the fill's query computed beside it."""

    histogram: Histogram
    # The sum of the weights of NaN rows (the expression's overflow row with flow=True).
    nan_weight: float = 0.0


def histogram(plan: _plan.Plan, progress: _progress.ProgressArg) -> Histogram:
    """The plan's histogram (not grouped)."""
    if plan.fill == "memory":
        return _in_memory(plan, progress)
    return fill(plan, progress).histogram


def fill(plan: _plan.Plan, progress: _progress.ProgressArg, nan_weight: bool = False) -> Filled:
    """The first pass (where the binning needs one), then the fill inside the streaming
    engine, which checks that the data spans the first pass's extremes."""
    r = plan.request
    hist, checks = _bins.binned(plan)
    also: list[pl.Expr] = []
    if checks:
        if len(r.columns) == 1:
            also = passes.extremes_exprs(r.columns[0], plan.dtypes[0], r.weights)
        else:
            also = passes.extremes_exprs_dd(r.columns, plan.dtypes, r.weights)
    nan_sum = nan_weight and r.weights is not None and plan.dtypes[0].is_float()
    if nan_sum:
        x, w = pl.col(r.columns[0]), pl.col(cast(str, r.weights))
        also.append(w.filter(x.is_nan() & w.is_not_null()).cast(pl.Float64).sum().alias("nan"))
    bar = _bar(plan, progress)
    filled, values = reader.fill(plan.dataset, hist, r.columns, r.weights, plan.device, also, bar)
    for i, check in enumerate(checks):
        check.whole(values[2 * i], values[2 * i + 1])
    return Filled(filled, float(values[-1] or 0.0) if nan_sum else 0.0)


def _bar(plan: _plan.Plan, progress: _progress.ProgressArg) -> _progress.Progress | None:
    dataset = plan.dataset
    row_bytes = sum(_width(plan.schema[n]) for n in plan.request.names)
    return _progress.make(
        progress,
        dataset.label,
        dataset.total_rows,
        file_bytes=dataset.file_bytes if dataset.where is None else None,
        row_bytes=row_bytes,
    )


# Bytes a value takes decoded, for the dtypes narrower than 8 bytes.
_NARROW = {
    pl.Int8: 1, pl.UInt8: 1, pl.Boolean: 1, pl.Int16: 2, pl.UInt16: 2, pl.Float16: 2,
    pl.Int32: 4, pl.UInt32: 4, pl.Float32: 4, pl.Date: 4,
}  # fmt: skip


def _width(dtype: pl.DataType) -> int:
    """Bytes a value of ``dtype`` takes decoded (16 for 128-bit values, else 8)."""
    if dtype in (pl.Int128, pl.UInt128) or isinstance(dtype, pl.Decimal):
        return 16
    return _NARROW.get(dtype.base_type(), 8)


def _in_memory(plan: _plan.Plan, progress: _progress.ProgressArg) -> Histogram:
    """A rule that needs every value: the column read into memory, then numpy's rule."""
    r = plan.request
    values = memory_columns(plan, progress).get_column(r.columns[0])
    if _args.is_time_bins(r.bins):
        return in_memory.time_bins(values, r.bins, cast(RangeArg, r.range), r.closed, r.device)
    return in_memory.estimator(values, plan.rule, plan.span, r.closed, r.device)


def memory_columns(plan: _plan.Plan, progress: _progress.ProgressArg) -> pl.DataFrame:
    """The columns the plan reads, in memory; a ``MemoryError`` before reading where the rows
    the metadata counts would not fit."""
    r = plan.request
    total = plan.dataset.total_rows()
    if total is not None:
        need = total * sum(_width(plan.schema[n]) for n in r.names)
        _native.ensure_room(need)
    return reader.read_columns(plan.dataset, r.names, r.chunk_size, _bar(plan, progress))


def frames(plan: _plan.Plan, progress: _progress.ProgressArg) -> pl.DataFrame:
    """The expression's frame of a plan that the sink cannot hold (groups, n-D flow bins):
    the expression over every batch in row order, counts summed per cell."""
    from polars_gpu_hist._expr.functions import histogram_expr, histogramdd

    r = plan.request
    # The shared binning as a Histogram (its arguments checked, its widths for a density),
    # except for dates and times as edges, which the expression alone converts.
    temporal = plan.binning == "fixed" and _plan.has_temporal(r.bins, r.range)
    hist, checks = (None, []) if temporal else _bins.binned(plan)
    bins, ranges = expression_binning(plan, hist)
    w = r.weights
    if len(r.columns) == 1:
        expr = histogram_expr(
            r.columns[0], bins[0], range=ranges[0], weights=w, closed=r.closed, flow=r.flow,
            device=r.device, by=r.by,
        )  # fmt: skip
    else:
        expr = histogramdd(
            *r.columns, bins=bins, range=ranges, weights=w, closed=r.closed, flow=r.flow,
            device=r.device,
        )  # fmt: skip
    edges = (
        [f"{c}_{end}" for c in r.columns for end in ("start", "end")]
        if len(r.columns) > 1
        else ["bin_start", "bin_end"]
    )
    cells = [*(r.by or []), *edges]
    check = reader.check_batches(checks, r.columns, w) if checks else None
    out = reader.fill_frames(
        plan.dataset, r.names, expr, cells, r.chunk_size, check, _bar(plan, progress)
    )
    for c in checks:
        c.finish()
    if r.density:
        out = _grouped_density(out, r.by or [], hist)
    return out.select(pl.struct(pl.all()).alias(r.columns[0]))


def expression_binning(plan: _plan.Plan, hist: Histogram | None) -> tuple[list[Any], list[Any]]:
    """The binning of ``hist`` as the expression's ``bins`` and ``range`` per axis: the
    arguments as given where they were fixed; the number of bins and the extremes (physical
    values, which the expression reads in a temporal column's own units) otherwise."""
    r = plan.request
    d = len(r.columns)
    ranges: list[Any]
    if plan.binning == "fixed":
        bins = [r.bins] if d == 1 else list(_bins.per_axis(r.bins, d))
        ranges = [r.range] if d == 1 else list(r.range or [None] * d)
        return bins, ranges
    assert hist is not None
    shape = hist.shape
    edges = [hist.edges] if d == 1 else list(hist.edges)
    ranges = []
    for e, dtype in zip(edges, plan.dtypes):
        lo, hi = float(e[0]), float(e[-1])
        if dtype == pl.Float32:
            # numpy float32 scalars: the edges made in float32, as from the data's own range.
            import numpy as np

            ranges.append((np.float32(lo), np.float32(hi)))
        elif (dtype.is_integer() or dtype.is_temporal()) and lo.is_integer() and hi.is_integer():
            ranges.append((int(lo), int(hi)))
        else:
            ranges.append((lo, hi))
    return list(shape), ranges


def _grouped_density(frame: pl.DataFrame, keys: list[str], hist: Histogram | None) -> pl.DataFrame:
    """numpy's density per group, as the expression makes it: the native histogram of the
    shared binning given each group's counts in turn."""
    assert hist is not None, "a grouped density needs the shared binning"
    n = len(hist)
    counts = frame.get_column("count")
    density = []
    for start in range(0, frame.height, n):
        part = counts.slice(start, n)
        weighted = part.dtype == pl.Float64
        flow = (0, 0, 0, 0, 0, 0.0, 0.0, 0.0, 0.0)
        squares = pl.Series([0.0] * n) if hist.weighted else None
        core = hist._core.empty_like()
        core.set_contents(part.cast(pl.Float64 if weighted else pl.UInt64), squares, flow)
        density.append(Histogram._wrap(core).to_frame(density=True).get_column("count"))
    if not density:
        return frame.with_columns(pl.col("count").cast(pl.Float64))
    return frame.with_columns(pl.concat(density).alias("count"))
