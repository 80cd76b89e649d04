"""Histograms of files through Dask: each task scans its own files on the worker that runs it
(``histogram_scan``'s pipeline: Polars' streaming engine, counted as it decodes, on the worker's
GPU where it has one), and only partial histograms cross the network, summed in a tree.

A range from the data (``range="auto"``) and the rules that need only the number of values and
their extremes (``"integer"``, ``"sturges"``, ``"rice"``, ``"sqrt"``) take a first pass in the same
graph: each task finds its files' extremes (from Parquet statistics where they are exact), the
client-side reduction makes the binning, and the fill tasks take it; the fill checks that the
data spans the same extremes, as ``histogram_scan`` does.
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl
from dask.base import tokenize
from dask.delayed import Delayed, delayed

from polars_gpu_hist._args.arguments import Closed, Device
from polars_gpu_hist._histogram.histogram import Histogram
from polars_gpu_hist._scan import bins as _bins
from polars_gpu_hist._scan import passes
from polars_gpu_hist._scan import plan as _plan
from polars_gpu_hist._scan import scan as _scan
from polars_gpu_hist._scan.source import Source, open_dataset

# Rules a first pass resolves from the extremes (and the number of values).
STREAMED_RULES = _plan.STREAMED_RULES


@dataclass(frozen=True)
class Files:
    """What every task of a graph scans alike: the column, the weights, the reader's options."""

    column: str
    weights: str | None
    reader_options: Mapping[str, Any] | None
    where: pl.Expr | None
    storage_options: Mapping[str, Any] | None
    # As asked: each worker resolves "auto" for its own GPU.
    device: Device

    def dataset(self, paths: list[str]) -> Any:
        return open_dataset(paths, self.reader_options, self.where, self.storage_options)


@dataclass(frozen=True)
class Binning:
    """A histogram's binning, made on the workers: fixed arguments, or a number of bins over
    the extremes of all the data (exact values of the column's kind)."""

    bins: Any
    range: Any
    closed: str
    weighted: bool
    device: str
    extremes: passes.Extremes | None = None

    def histogram(self) -> Histogram:
        kwargs: dict[str, Any] = {
            "closed": self.closed,
            "weights": self.weighted,
            "device": self.device,
        }
        if self.extremes is None:
            return Histogram(self.bins, range=self.range, **kwargs)
        return Histogram._from_data_range(self.bins, self.extremes.value(), **kwargs)


class Summary:
    """A first pass's answer over some files: the extremes of the rows that count, and the
    number of values (None where a rule does not need it)."""

    def __init__(self, extremes: passes.Extremes, count: int | None) -> None:
        self.extremes, self.count = extremes, count

    def __add__(self, other: Summary) -> Summary:
        a, b = self.extremes, other.extremes
        lo = _pick(min, a.lo, b.lo)
        hi = _pick(max, a.hi, b.hi)
        count = None if self.count is None or other.count is None else self.count + other.count
        return Summary(passes.Extremes(a.kind, lo, hi), count)


def _pick(f: Any, a: Any, b: Any) -> Any:
    return b if a is None else a if b is None else f(a, b)


def histogram_scan(
    paths: Source,
    column: str,
    bins: Any = 10,
    *,
    range: Any = None,
    weights: str | None = None,
    closed: Closed = "left",
    device: Device = "auto",
    reader_options: Mapping[str, Any] | None = None,
    where: str | pl.Expr | None = None,
    storage_options: Mapping[str, Any] | None = None,
    files_per_task: int = 1,
    split_every: int = 8,
) -> Delayed:
    """The histogram of ``column`` of Parquet/CSV/IPC files, lazily, through Dask:
    ``.compute()`` gives a :class:`~polars_gpu_hist.Histogram` equal to
    :func:`polars_gpu_hist.histogram_scan` over all the files (numpy's counts over the whole
    column).

    Each task scans ``files_per_task`` files on the worker that runs it, with
    ``histogram_scan``'s pipeline (Polars' streaming engine, counting as it decodes, on the
    worker's GPU where ``device`` takes it); only the partial histograms travel, summed in a
    tree of ``split_every``. The files must be readable from every worker (a shared file
    system, or URLs with ``storage_options``). One worker per GPU: :func:`cluster`.

    Parameters
    ----------
    paths
        A path, glob, directory (hive partitions too) or list of them, resolved on the client
        into the files the tasks share out.
    column, bins, range, weights, closed, device, reader_options, where, storage_options
        As for :func:`polars_gpu_hist.histogram_scan`. ``range="auto"`` and the rules that need
        only the number of values and their extremes (``"integer"``, ``"sturges"``, ``"rice"``,
        ``"sqrt"``) take a first pass in the same graph (from Parquet statistics where they are
        exact). numpy's estimators that need every value and time bins are refused: they would
        gather the column (use :func:`polars_gpu_hist.histogram_scan`).
    files_per_task
        How many files a task scans (more files, fewer and larger tasks).
    split_every
        How many partials each node of the tree reduction sums.
    """
    from polars_gpu_hist._scan.source import _format, _paths, _resolve

    if not isinstance(column, str):
        raise TypeError(f"`column` must be a column name (str), got {column!r}")
    if (
        isinstance(files_per_task, bool)
        or not isinstance(files_per_task, int)
        or files_per_task < 1
    ):
        raise ValueError(f"`files_per_task` must be a positive int, got {files_per_task!r}")
    if isinstance(split_every, bool) or not isinstance(split_every, int) or split_every < 2:
        raise ValueError(f"`split_every` must be an int of at least 2, got {split_every!r}")
    r = _plan.request(column, bins, range, weights, closed, device, 1 << 20)
    names = _paths(paths)
    files, _, partitions = _resolve(names)
    if not files:
        raise ValueError(
            "polars_gpu_hist.dask.histogram_scan shares out local files (a path, glob or "
            "directory): URLs are read by one histogram_scan"
        )
    _format(names, files)
    predicate = _scan._predicate(where)
    # The plan on the client: arguments and dtypes checked before any task runs.
    template_paths = names if partitions else files[:1]
    template = open_dataset(template_paths, reader_options, predicate, storage_options)
    plan = _scan.planned(template, r)
    if plan.binning == "in memory":
        raise ValueError(
            f"bins={bins!r} needs every value in memory: use polars_gpu_hist.histogram_scan "
            "(one process), or a rule that needs only the extremes and the number of values "
            f"({', '.join(map(repr, STREAMED_RULES))})"
        )
    spec = Files(column, weights, reader_options, predicate, storage_options, r.device)
    dtype = plan.dtypes[0]
    groups = [files[i : i + files_per_task] for i in builtins.range(0, len(files), files_per_task)]
    keys_used = set(partitions) & {
        column,
        weights,
        *(predicate.meta.root_names() if predicate is not None else []),
    }
    if keys_used:
        # The hive keys are columns of the dataset's paths, not of its files: a task that needs
        # them scans the whole dataset (one task).
        groups = [names]
    token = tokenize(
        "polars_gpu_hist.dask.histogram_scan", groups, column, bins, range, weights, closed,
        device, reader_options, str(where), storage_options, split_every,
    )  # fmt: skip
    weighted = weights is not None
    if not plan.needs_first:
        binning: Any = Binning(r.bins, r.range, r.closed, weighted, plan.device)
        binning.histogram()  # its arguments checked here, on the client
        check = None
    else:
        if plan.binning == "data range":
            _bins.binned_check(plan)
        need_count = plan.rule in STREAMED_RULES[1:]
        firsts = [
            delayed(_first_pass)(
                spec, g, dtype, need_count, plan.span, dask_key_name=(f"gpu-hist-first-{token}", i)
            )
            for i, g in enumerate(groups)
        ]
        first = _tree(firsts, _add, split_every, f"gpu-hist-first-sum-{token}")
        binning = delayed(_binning_of)(
            first, plan.rule, plan.span, r.bins, r.closed, weighted, plan.device, dtype,
            dask_key_name=f"gpu-hist-binning-{token}",
        )  # fmt: skip
        # The fill checks a range taken from the data (a rule over a given range takes none).
        check = first if plan.span is None else None
    fills = [
        delayed(_fill)(spec, binning, g, dtype, dask_key_name=(f"gpu-hist-fill-{token}", i))
        for i, g in enumerate(groups)
    ]
    total = _tree(fills, _merge, split_every, f"gpu-hist-merge-{token}")
    label = names[0] if len(names) == 1 else f"{names[0]} and {len(names) - 1} more"
    return delayed(_finish)(
        total, check, column, dtype, label, dask_key_name=f"gpu-hist-scan-{token}"
    )


def _tree(layer: list[Delayed], combine: Any, split_every: int, name: str) -> Delayed:
    level = 0
    while len(layer) > 1:
        level += 1
        layer = [
            delayed(combine)(*layer[i : i + split_every], dask_key_name=(f"{name}-{level}", j))
            for j, i in enumerate(builtins.range(0, len(layer), split_every))
        ]
    return layer[0]


def _add(*parts: Summary) -> Summary:
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return total


def _first_pass(
    spec: Files,
    paths: list[str],
    dtype: pl.DataType,
    need_count: bool,
    span: tuple[float, float] | None,
) -> Summary:
    """A task of the first pass: its files' extremes (and number of values, within ``span``
    where a rule has one), from their Parquet statistics where exact, else by reading."""
    from polars_gpu_hist._scan import statistics

    dataset = spec.dataset(paths)
    if span is None:
        found = statistics.extremes(dataset, spec.column, dtype, spec.weights, need_count)
        if isinstance(found, statistics.Found) and (found.count is not None or not need_count):
            return Summary(found.extremes, found.count)
    lf = dataset.lazy()
    if need_count:
        n, extremes = passes.summary(lf, spec.column, dtype, span)
        return Summary(extremes, n)
    return Summary(passes.first_pass(lf, spec.column, dtype, spec.weights), None)


def _binning_of(
    first: Summary,
    rule: Any,
    span: Any,
    bins: Any,
    closed: str,
    weighted: bool,
    device: str,
    dtype: pl.DataType,
) -> Binning:
    """The binning from the first pass: a number of bins over the extremes, or a rule's."""
    from polars_gpu_hist import _native

    e = first.extremes
    if rule is None:  # range="auto"
        return Binning(bins, None, closed, weighted, device, e)
    if rule == "integer":
        lo, hi = (0, 0) if e.lo is None or e.hi is None else (int(e.lo), int(e.hi))
        return Binning(hi - lo + 1, (lo, hi + 1), closed, weighted, device)
    values = pl.Series([] if e.lo is None else [e.lo, e.hi], dtype=passes.physical(dtype))
    count = _native.estimate_from_extremes(rule, first.count or 0, values, span)
    if span is not None:
        return Binning(count, span, closed, weighted, device)
    return Binning(count, None, closed, weighted, device, e)


def _fill(
    spec: Files, binning: Binning, paths: list[str], dtype: pl.DataType
) -> tuple[Histogram, Summary]:
    """A fill task: its files counted into the binning (on the worker's GPU where the plan
    takes it), with the extremes of the rows that count (the check of a range from the data)."""
    from polars_gpu_hist._scan import reader

    dataset = spec.dataset(paths)
    schema = dataset.lazy().collect_schema()
    hist = binning.histogram()
    empty = pl.Series(spec.column, [], dtype=schema[spec.column])
    w = None if spec.weights is None else pl.Series(spec.weights, [], dtype=schema[spec.weights])
    hist.fill(empty, weights=w)
    also = passes.extremes_exprs(spec.column, dtype, spec.weights)
    device = _plan.device_for(spec.device, [dtype])
    filled, (lo, hi) = reader.fill(dataset, hist, [spec.column], spec.weights, device, also, None)
    return filled, Summary(passes.Extremes(passes.extremes_kind(dtype), lo, hi), None)


def _merge(*parts: tuple[Histogram, Summary]) -> tuple[Histogram, Summary]:
    hist = parts[0][0]
    seen = parts[0][1]
    for h, s in parts[1:]:
        hist = hist + h
        seen = seen + s
    return hist, seen


def _finish(
    total: tuple[Histogram, Summary],
    first: Summary | None,
    column: str,
    dtype: pl.DataType,
    label: str,
) -> Histogram:
    """The histogram, after the check that the fill saw the first pass's extremes."""
    hist, seen = total
    if first is not None:
        check = passes.SameExtremes(first.extremes, column, dtype, label)
        check.whole(seen.extremes.lo, seen.extremes.hi)
    return hist


def cluster(
    gpus: int | Sequence[int] | None = None,
    *,
    workers: int | None = None,
    threads_per_worker: int | None = None,
) -> Any:
    """A local Dask cluster of one worker process (a Nanny) per GPU, each seeing only its own
    GPU (``CUDA_VISIBLE_DEVICES``), as dask-cuda's ``LocalCUDACluster`` makes them, for hosts
    without dask-cuda; or, with ``gpus=0``, a CPU cluster of ``workers`` processes that see no
    GPU. Every worker gets ``threads_per_worker`` threads (default: the host's cores divided by
    the workers) for Polars' engine and for ours (``POLARS_MAX_THREADS``,
    ``RAYON_NUM_THREADS``), and runs one task at a time: scaling by GPUs is then not scaling by
    cores. A ``distributed.Client(cluster(...))`` uses it; ``with`` closes it."""
    from dask.distributed import Nanny, Scheduler, SpecCluster

    if gpus is None:
        from polars_gpu_hist import _native

        gpus = _visible_gpus() if _native.gpu_available() else 0
    ordinals = list(builtins.range(gpus)) if isinstance(gpus, int) else list(gpus)
    count = len(ordinals) if ordinals else (workers or 1)
    if ordinals and workers is not None and workers != len(ordinals):
        raise ValueError(f"one worker per GPU: {len(ordinals)} GPUs, not {workers} workers")
    cores = os.cpu_count() or 1
    threads = threads_per_worker or max(1, cores // count)
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"`threads_per_worker` must be a positive int, got {threads_per_worker!r}")
    env_threads = {"POLARS_MAX_THREADS": str(threads), "RAYON_NUM_THREADS": str(threads)}
    specs = {}
    for i in builtins.range(count):
        visible = str(ordinals[i]) if ordinals else ""
        name = f"gpu{ordinals[i]}" if ordinals else f"cpu{i}"
        specs[name] = {
            "cls": Nanny,
            "options": {
                "host": "127.0.0.1",
                "nthreads": 1,
                "env": {"CUDA_VISIBLE_DEVICES": visible, **env_threads},
                "memory_limit": 0,
            },
        }
    scheduler = {"cls": Scheduler, "options": {"host": "127.0.0.1", "dashboard_address": None}}
    return SpecCluster(workers=specs, scheduler=scheduler)


def _visible_gpus() -> int:
    """The GPUs this process sees: ``CUDA_VISIBLE_DEVICES``, else CuPy's count, else one."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return len([v for v in visible.split(",") if v.strip()])
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:
        return 1


__all__ = ["cluster", "histogram_scan"]
