"""Histograms of Dask collections: one partial per partition (its flat counts, see
_dask_tasks.py), filled on the worker that holds the partition (on its GPU where it has one),
summed in a tree reduction as dask-histogram does, and made one
:class:`~polars_gpu_hist.Histogram` at the end. Needs ``pip install polars-gpu-hist[dask]``.

::

    from dask.distributed import Client, LocalCluster
    import dask.dataframe as dd
    import polars_gpu_hist.dask as ghd

    client = Client(LocalCluster())  # or dask_cuda.LocalCUDACluster(): one worker per GPU
    ddf = dd.read_parquet("data/*.parquet")
    hist = ghd.histogram(ddf, "x", bins=256, range=(0, 1)).compute()   # a polars_gpu_hist.Histogram
    hist.to_frame()
    ghd.histogramdd(ddf[["x", "y"]], bins=[64, 64], range=[(0, 1), (0, 1)]).compute()
    ghd.histogram(ddf, "x", bins=256, range=(0, 1), by="day").compute()  # a Polars DataFrame
    # Files scanned by the workers themselves, only partials sent: one worker per GPU.
    client = Client(ghd.cluster())
    ghd.histogram_scan("data/*.parquet", "x", 256, range="auto").compute()

:class:`~polars_gpu_hist.Histogram` objects pickle and add (``a + b``, ``sum(...)``), so they
also serve as the partial results of your own Dask reductions (``dask.bag`` folds, delayed trees).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

try:
    from dask.base import tokenize
    from dask.delayed import Delayed, delayed
except ImportError as e:  # pragma: no cover - exercised only without dask
    raise ImportError("polars_gpu_hist.dask needs Dask: pip install 'polars-gpu-hist[dask]'") from e

from polars_gpu_hist._args.arguments import BinsArg, Closed, Device, RangeArg
from polars_gpu_hist._histogram.histogram import Histogram
from polars_gpu_hist.dask import tasks
from polars_gpu_hist.dask.scan import cluster, histogram_scan

__all__ = ["cluster", "histogram", "histogram_scan", "histogramdd"]

SPLIT_EVERY = 8


def histogram(
    data: Any,
    column: str | None = None,
    bins: BinsArg = 10,
    *,
    range: RangeArg = None,
    weights: Any = None,
    closed: Closed = "left",
    device: Device = "auto",
    by: str | list[str] | None = None,
    split_every: int = SPLIT_EVERY,
) -> Delayed:
    """The histogram of a Dask collection, lazily: ``.compute()`` gives a
    :class:`~polars_gpu_hist.Histogram` equal to one ``numpy.histogram`` over all the data.

    Parameters
    ----------
    data
        A Dask DataFrame (with ``column``), a Dask Series, or a 1-D Dask Array. Partitions may
        be pandas, cuDF (dask-cudf), numpy or CuPy: GPU partitions are counted where they lie
        (a cuDF column with nulls: its valid rows, the nulls counted in ``flow``).
    column
        The column of a Dask DataFrame to histogram.
    bins, range, closed
        As for :class:`~polars_gpu_hist.Histogram`: an int ``bins`` needs ``range``.
    weights
        A column name (DataFrame), or a Dask Series/Array partitioned like ``data``.
    device
        Where each worker counts: ``"auto"``, ``"cpu"`` or ``"gpu"`` (a worker of dask-cuda's
        ``LocalCUDACluster`` sees its own GPU).
    by
        Group keys of a Dask DataFrame (a column name or a list of them): ``.compute()`` then
        gives the rows of ``gpu_hist.histogram(..., by=...)`` over the whole frame (a Polars
        DataFrame: the keys, ``bin_start``, ``bin_end``, ``count`` for every group and bin,
        groups in order of first appearance), each partition's groups merged exactly.
    split_every
        How many partials each node of the tree reduction sums.
    """
    _check_split_every(split_every)
    # Made (and its arguments checked) here, on the client.
    kwargs: dict[str, Any] = {
        "bins": bins,
        "range": range,
        "closed": closed,
        "weights": weights is not None,
        "device": device,
    }
    Histogram(**kwargs)
    if by is not None:
        return _histogram_by(data, column, by, weights, kwargs, split_every)
    parts = _partitions(data, column, weights)
    return _reduce(kwargs, parts, split_every, ("histogram", data, column, weights))


def histogramdd(
    data: Any,
    bins: BinsArg | Sequence[BinsArg] = 10,
    *,
    range: RangeArg | Sequence[RangeArg] = None,
    weights: Any = None,
    closed: Closed = "left",
    device: Device = "auto",
    split_every: int = SPLIT_EVERY,
) -> Delayed:
    """The histogram of an ``(n, d)`` Dask Array (numpy or CuPy chunks) or of ``d`` columns of a
    Dask DataFrame (``data[["x", "y"]]``), lazily: ``.compute()`` gives a
    :class:`~polars_gpu_hist.Histogram` of ``d`` axes equal to one ``numpy.histogramdd``.

    An array chunked along its columns is first rechunked to whole rows (each chunk holds every
    column). ``bins``, ``range``, ``closed``, ``device`` and ``split_every`` as for
    :class:`~polars_gpu_hist.Histogram` and :func:`histogram`; ``weights`` a Dask Array of
    ``n`` values (or a column name of the DataFrame).
    """
    import dask.array as da

    _check_split_every(split_every)
    if isinstance(data, da.Array):
        if data.ndim != 2:
            raise ValueError(f"expected an (n, d) Dask Array, got {data.ndim} dimensions")
        d = int(data.shape[1])
    elif _is_frame(data):
        d = len(data.columns)
    else:
        raise TypeError(
            "histogramdd takes an (n, d) Dask Array or a Dask DataFrame of d columns, got "
            f"{type(data).__module__}.{type(data).__name__}"
        )
    kwargs: dict[str, Any] = {
        "bins": bins,
        "range": range,
        "closed": closed,
        "weights": weights is not None,
        "device": device,
    }
    axes = len(Histogram(**kwargs).shape)
    if axes != d:
        raise ValueError(f"`bins` and `range` give {axes} axes; the data has {d} columns")
    if _is_frame(data):
        parts = _frame_partitions(data, list(data.columns), weights)
    else:
        parts = _matrix_partitions(data, weights)
    return _reduce(kwargs, parts, split_every, ("histogramdd", data, weights))


def _is_frame(data: Any, kind: str = "DataFrame") -> bool:
    """Whether ``data`` is a Dask DataFrame (or Series); False where dask.dataframe cannot be
    imported (it needs pandas), so arrays work without it."""
    try:
        import dask.dataframe as dd
    except ImportError:
        return False
    return isinstance(data, getattr(dd, kind))


def _check_split_every(split_every: int) -> None:
    if isinstance(split_every, bool) or not isinstance(split_every, int) or split_every < 2:
        raise ValueError(f"`split_every` must be an int of at least 2, got {split_every!r}")


# A partition: a Delayed of its block, one of its weights' block (or None), and its layout
# (see _dask_tasks.fill).
Part = tuple[Delayed, Any, Any]


def _reduce(
    kwargs: dict[str, Any], parts: list[Part], split_every: int, identity: tuple[Any, ...]
) -> Delayed:
    """Partials per partition (one task each), summed in a tree whose root makes the Histogram.
    Keys are named here, so the graph costs no hashing of the binning per task; the binning
    is one key, sent once to each worker."""
    binning = tokenize(kwargs)  # names the workers' cached template: one per binning
    token = tokenize(identity, binning, split_every)
    spec = delayed(tasks.Spec(kwargs, binning), name=f"gpu-hist-spec-{token}", traverse=False)
    layer = [
        delayed(tasks.fill)(spec, part, w, how, dask_key_name=(f"gpu-hist-fill-{token}", i))
        for i, (part, w, how) in enumerate(parts)
    ]
    if not layer:
        return delayed(Histogram(**kwargs))
    level = 0
    while len(layer) > split_every:
        level += 1
        name = f"gpu-hist-merge-{level}-{token}"
        layer = [
            delayed(tasks.merge)(*layer[i : i + split_every], dask_key_name=(name, j))
            for j, i in enumerate(builtins.range(0, len(layer), split_every))
        ]
    # The tree's root merges its last partials and makes the Histogram: one task less.
    return delayed(tasks.finish)(spec, *layer, dask_key_name=f"gpu-hist-{token}")


def _partitions(data: Any, column: str | None, weights: Any) -> list[Part]:
    """Per partition of a 1-D collection: its block, its weights' block (or None)."""
    import dask.array as da

    if _is_frame(data):
        if column is None:
            raise ValueError("a Dask DataFrame needs `column`: the column to histogram")
        return _frame_partitions(data, [column], weights)
    if column is not None:
        raise ValueError("`column` is only for a Dask DataFrame")
    if _is_frame(data, "Series"):
        parts = list(data.to_delayed())
        if weights is None:
            return [(p, None, "column") for p in parts]
        if not _is_frame(weights, "Series") or weights.npartitions != data.npartitions:
            raise ValueError(
                "weights of a Dask Series must be a Dask Series of the same partitions"
            )
        return [(p, w, "column") for p, w in zip(parts, weights.to_delayed())]
    if isinstance(data, da.Array):
        if data.ndim != 1:
            raise ValueError(
                f"expected a 1-D Dask Array, got {data.ndim} dimensions (histogramdd takes "
                "(n, d) arrays)"
            )
        parts = list(data.to_delayed().ravel())
        w_parts = _array_weights(weights, data.chunks[0], len(parts))
        return [(p, w, "column") for p, w in zip(parts, w_parts)]
    raise TypeError(
        f"expected a Dask DataFrame, Series or Array, got {type(data).__module__}."
        f"{type(data).__name__}"
    )


def _frame_partitions(data: Any, columns: list[str], weights: Any) -> list[Part]:
    if weights is not None and not isinstance(weights, str):
        raise TypeError("weights of a Dask DataFrame must be a column name")
    names = columns + ([weights] if weights is not None else [])
    missing = [n for n in names if n not in data.columns]
    if missing:
        raise KeyError(f"no column {missing[0]!r}; columns: {', '.join(map(str, data.columns))}")
    layout = (columns, weights)
    return [(f, None, layout) for f in data[names].to_delayed()]


def _matrix_partitions(data: Any, weights: Any) -> list[Part]:
    """Row blocks of an (n, d) array, each holding every column."""
    if len(data.chunks[1]) > 1:
        data = data.rechunk({1: -1})
    blocks = list(data.to_delayed()[:, 0])
    w_parts = _array_weights(weights, data.chunks[0], len(blocks))
    return [(b, w, "rows") for b, w in zip(blocks, w_parts)]


def _array_weights(weights: Any, chunks: tuple[int, ...], count: int) -> list[Any]:
    import dask.array as da

    if weights is None:
        return [None] * count
    n = sum(chunks)
    if not isinstance(weights, da.Array) or weights.shape != (n,):
        raise ValueError(f"weights of a Dask Array must be a Dask Array of {n} values")
    return list(weights.rechunk((chunks,)).to_delayed().ravel())


def _histogram_by(
    data: Any,
    column: str | None,
    by: str | list[str],
    weights: Any,
    kwargs: dict[str, Any],
    split_every: int,
) -> Delayed:
    """Per partition the expression's grouped rows, merged in a tree: groups united, counts
    of each group's bins added."""
    if not _is_frame(data) or column is None:
        raise ValueError("by= takes a Dask DataFrame and `column`")
    keys = [by] if isinstance(by, str) else list(by)
    if not keys or not all(isinstance(k, str) for k in keys):
        raise TypeError(f"`by` must be a column name or a list of them, got {by!r}")
    if weights is not None and not isinstance(weights, str):
        raise TypeError("weights of a Dask DataFrame must be a column name")
    names = [column, *keys] + ([weights] if weights is not None else [])
    missing = [n for n in names if n not in data.columns]
    if missing:
        raise KeyError(f"no column {missing[0]!r}; columns: {', '.join(map(str, data.columns))}")
    expr_kwargs = {k: kwargs[k] for k in ("bins", "range", "closed", "device")}
    token = tokenize("histogram_by", data, column, keys, weights, expr_kwargs, split_every)
    layer = [
        delayed(tasks.fill_by)(
            f, column, keys, weights, expr_kwargs, dask_key_name=(f"gpu-hist-by-{token}", i)
        )
        for i, f in enumerate(data[names].to_delayed())
    ]
    level = 0
    while len(layer) > 1:
        level += 1
        name = f"gpu-hist-by-merge-{level}-{token}"
        layer = [
            delayed(tasks.merge_by)(keys, *layer[i : i + split_every], dask_key_name=(name, j))
            for j, i in enumerate(builtins.range(0, len(layer), split_every))
        ]
    return layer[0]


def _per_gpu_cluster(gpus: list[int], threads_per_worker: int = 1) -> Any:
    """One worker process per GPU, each seeing only its own (``CUDA_VISIBLE_DEVICES``), as
    dask-cuda's ``LocalCUDACluster`` makes them; for hosts without dask-cuda (the partitions'
    benchmark: ``threads_per_worker`` Dask threads; :func:`cluster` sets the engines' threads)."""
    from dask.distributed import Nanny, Scheduler, SpecCluster

    workers = {
        f"gpu{gpu}": {
            "cls": Nanny,
            "options": {
                "host": "127.0.0.1",
                "nthreads": threads_per_worker,
                "env": {"CUDA_VISIBLE_DEVICES": str(gpu)},
                "memory_limit": 0,
            },
        }
        for gpu in gpus
    }
    # Local to this host, as LocalCluster's defaults are.
    scheduler = {"cls": Scheduler, "options": {"host": "127.0.0.1", "dashboard_address": None}}
    return SpecCluster(workers=workers, scheduler=scheduler)
