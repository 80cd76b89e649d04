"""Histograms of Dask collections: one partial :class:`~polars_gpu_hist.Histogram` per partition,
filled on the worker that holds the partition (on its GPU where it has one), summed in a tree
reduction as dask-histogram does. Needs ``pip install polars-gpu-hist[dask]``.

::

    from dask.distributed import Client, LocalCluster
    import dask.dataframe as dd
    import polars_gpu_hist.dask as ghd

    client = Client(LocalCluster())  # or dask_cuda.LocalCUDACluster(): one worker per GPU
    ddf = dd.read_parquet("data/*.parquet")
    hist = ghd.histogram(ddf, "x", bins=256, range=(0, 1)).compute()   # a polars_gpu_hist.Histogram
    hist.to_frame()

:class:`~polars_gpu_hist.Histogram` objects pickle and add (``a + b``, ``sum(...)``), so they
also serve as the partial results of your own Dask reductions (``dask.bag`` folds, delayed trees).
"""

from __future__ import annotations

from typing import Any

try:
    from dask.delayed import Delayed, delayed
except ImportError as e:  # pragma: no cover - exercised only without dask
    raise ImportError("polars_gpu_hist.dask needs Dask: pip install 'polars-gpu-hist[dask]'") from e

from polars_gpu_hist import BinsArg, Closed, Device, RangeArg
from polars_gpu_hist._accumulator import Histogram

__all__ = ["histogram"]

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
    split_every: int = SPLIT_EVERY,
) -> Delayed:
    """The histogram of a Dask collection, lazily: ``.compute()`` gives a
    :class:`~polars_gpu_hist.Histogram` equal to one ``numpy.histogram`` over all the data.

    Parameters
    ----------
    data
        A Dask DataFrame (with ``column``), a Dask Series, or a 1-D Dask Array. Partitions may
        be pandas, cuDF (dask-cudf), numpy or CuPy: GPU partitions are counted where they lie.
    column
        The column of a Dask DataFrame to histogram.
    bins, range, closed
        As for :class:`~polars_gpu_hist.Histogram`: an int ``bins`` needs ``range``.
    weights
        A column name (DataFrame), or a Dask Series/Array partitioned like ``data``.
    device
        Where each worker counts: ``"auto"``, ``"cpu"`` or ``"gpu"`` (a worker of dask-cuda's
        ``LocalCUDACluster`` sees its own GPU).
    split_every
        How many partials each node of the tree reduction sums.
    """
    if split_every < 2:
        raise ValueError(f"`split_every` must be at least 2, got {split_every}")
    # Made (and its arguments checked) here, on the client; each task fills a copy of it.
    template = Histogram(
        bins, range=range, closed=closed, weights=weights is not None, device=device
    )
    partials = [
        delayed(_fill, pure=True)(template, values, w)
        for values, w in _partitions(data, column, weights)
    ]
    if not partials:
        return delayed(template)
    while len(partials) > 1:
        partials = _level(partials, split_every)
    return partials[0]


def _level(partials: list[Delayed], split_every: int) -> list[Delayed]:
    """One level of the tree: each node sums up to ``split_every`` partials."""
    starts = range(0, len(partials), split_every)
    return [delayed(_sum, pure=True)(*partials[i : i + split_every]) for i in starts]


def _partitions(data: Any, column: str | None, weights: Any) -> list[tuple[Any, Any]]:
    """Per partition: a Delayed of the values and of the weights (or None)."""
    import dask.array as da
    import dask.dataframe as dd

    if isinstance(data, dd.DataFrame):
        if column is None:
            raise ValueError("a Dask DataFrame needs `column`: the column to histogram")
        if weights is not None and not isinstance(weights, str):
            raise TypeError("weights of a Dask DataFrame must be a column name")
        names = [column] + ([weights] if weights is not None else [])
        missing = [n for n in names if n not in data.columns]
        if missing:
            raise KeyError(
                f"no column {missing[0]!r}; columns: {', '.join(map(str, data.columns))}"
            )
        frames = data[names].to_delayed()
        return [(_get(f, column), None if weights is None else _get(f, weights)) for f in frames]
    if column is not None:
        raise ValueError("`column` is only for a Dask DataFrame")
    if isinstance(data, dd.Series):
        parts = data.to_delayed()
        if weights is None:
            return [(p, None) for p in parts]
        if not isinstance(weights, dd.Series) or weights.npartitions != data.npartitions:
            raise ValueError(
                "weights of a Dask Series must be a Dask Series of the same partitions"
            )
        return list(zip(parts, weights.to_delayed()))
    if isinstance(data, da.Array):
        if data.ndim != 1:
            raise ValueError(f"expected a 1-D Dask Array, got {data.ndim} dimensions")
        parts = list(data.to_delayed().ravel())
        if weights is None:
            return [(p, None) for p in parts]
        if not isinstance(weights, da.Array) or weights.shape != data.shape:
            raise ValueError("weights of a Dask Array must be a Dask Array of the same shape")
        w_parts = list(weights.rechunk(data.chunks).to_delayed().ravel())
        return list(zip(parts, w_parts))
    raise TypeError(
        f"expected a Dask DataFrame, Series or Array, got {type(data).__module__}."
        f"{type(data).__name__}"
    )


def _get(frame: Delayed, name: str) -> Delayed:
    return delayed(_column, pure=True)(frame, name)


def _column(frame: Any, name: str) -> Any:
    return frame[name]


def _fill(template: Histogram, values: Any, weights: Any) -> Histogram:
    """A partial: runs on the worker holding the partition."""
    # A fresh copy: a threaded scheduler hands every task the same template object.
    return Histogram._wrap(template._native.empty_like()).fill(values, weights)


def _sum(*partials: Histogram) -> Histogram:
    total = partials[0]
    for p in partials[1:]:
        total = total + p
    return total


def _per_gpu_cluster(gpus: list[int], threads_per_worker: int = 1) -> Any:
    """One worker process per GPU, each seeing only its own (``CUDA_VISIBLE_DEVICES``), as
    dask-cuda's ``LocalCUDACluster`` makes them; for hosts without dask-cuda."""
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
