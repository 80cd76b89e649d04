"""The mergeable histogram: a thin wrapper over the native ``_internal.Histogram``.

The binning rules, the checks that make batches and merges exact, and the serialized state all
live in Rust (``src/accumulator.rs``); this class only turns Python inputs (Polars, numpy,
pandas, arrays in GPU memory) into what the native object takes, and results into numpy,
Polars and Altair.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from polars_gpu_hist import (
    BinsArg,
    Closed,
    Device,
    RangeArg,
    _bins,
    _cuda_array,
    _internal,
    _pickled,
    _range,
    _sync_stream,
)

if TYPE_CHECKING:
    import numpy as np


class Histogram:
    """A histogram with a fixed binning that batches fill and other histograms merge into.

    Counts are exact: filling any number of batches (or merging histograms filled on other
    devices, processes or machines) gives the counts of one ``numpy.histogram`` over all the
    data. This is what :func:`histogram_scan` and :func:`polars_gpu_hist.dask.histogram` build on.

    Two rules keep every batch binned alike:

    - ``bins=int`` needs ``range=(min, max)``: a range taken from each batch's own data would
      bin every batch differently. (:func:`histogram_scan` with ``range="auto"`` finds the range
      of all the data in a first pass.) Explicit edges need no range.
    - numpy's edges depend on the dtype: a Float32 column is binned with float32 edges in float32
      arithmetic. The first fill fixes the histogram's dtype; a later fill or merge that numpy
      would bin differently (Float32 after Float64, or a temporal dtype other than the first)
      raises ``ValueError``. Integer and Float64 columns bin alike and may be mixed.

    Parameters
    ----------
    bins
        The number of equal-width bins over ``range``, or strictly increasing edges.
    range
        ``(min, max)`` of the equal-width bins; required with an int ``bins``.
    closed
        ``"left"`` (numpy's bins) or ``"right"`` (Polars' ``Expr.hist``), as in
        :meth:`GpuHistNamespace.histogram`.
    weights
        ``True`` to sum weights (Float64) instead of counting rows (UInt64); every fill then
        needs ``weights``. Sums are exact for integer weights, otherwise equal to one call up to
        the order of floating-point additions.
    device
        Where fills run: ``"auto"``, ``"cpu"`` or ``"gpu"``, as for the expression. Arrays in
        GPU memory are always counted on the GPU.

    Examples
    --------
    >>> import numpy as np
    >>> from polars_gpu_hist import Histogram
    >>> h = Histogram(4, range=(0, 4))
    >>> h.fill(np.array([0.5, 1.5, 4.0])).fill(np.array([3.0, 9.0])).counts
    array([1, 1, 0, 2], dtype=uint64)
    """

    __slots__ = ("_native",)

    def __init__(
        self,
        bins: BinsArg,
        *,
        range: RangeArg = None,
        closed: Closed = "left",
        weights: bool = False,
        device: Device = "auto",
    ) -> None:
        if isinstance(range, str):
            raise ValueError(
                f"range={range!r}: a range from the data needs a pass over all of it; use "
                "histogram_scan(..., range='auto') or give range=(min, max)"
            )
        self._native = _internal.Histogram(
            _pickled(
                {
                    "bins": _bins(bins),
                    "range": _range(range),
                    "closed": str(closed),
                    "weighted": bool(weights),
                    "device": str(device),
                }
            )
        )

    @classmethod
    def _from_data_range(
        cls,
        bins: int,
        extremes: tuple[str, str, str],
        *,
        closed: Closed,
        weights: bool,
        device: Device,
    ) -> Histogram:
        """Equal bins over the extremes of all the data: ``(kind, min, max)`` as exact text."""
        native = _internal.Histogram(
            _pickled(
                {
                    "bins": _bins(bins),
                    "data_range": extremes,
                    "closed": str(closed),
                    "weighted": bool(weights),
                    "device": str(device),
                }
            )
        )
        return cls._wrap(native)

    @classmethod
    def _wrap(cls, native: _internal.Histogram) -> Histogram:
        h = cls.__new__(cls)
        h._native = native
        return h

    def fill(self, data: Any, weights: Any = None) -> Histogram:
        """Counts ``data`` into the histogram (and sums ``weights``); returns the histogram.

        ``data`` is a Polars Series (or a one-column DataFrame), a numpy array or sequence, a
        pandas Series, or an array in GPU memory (``__cuda_array_interface__``: CuPy, PyTorch,
        cuDF), counted where it lies. ``weights`` is alike and of the same length (float64 in
        GPU memory for GPU arrays). Nulls and NaN are not counted; nothing changes on error.
        """
        cuda = _cuda_array(data)
        if cuda is not None:
            length = cuda["shape"][0]
            weights_ptr = None
            if weights is not None:
                w = _cuda_array(weights)
                if w is None or w["typestr"][1:] != "f8" or w["shape"][0] != length:
                    raise ValueError(
                        "weights of an array in GPU memory must be a float64 GPU array of the "
                        "same length"
                    )
                _sync_stream(w)
                weights_ptr = w["data"][0]
            _sync_stream(cuda)
            self._native.fill_cuda(cuda["data"][0], length, cuda["typestr"], weights_ptr)
            return self
        values = _as_series(data, "x")
        self._native.fill(values, None if weights is None else _as_series(weights, "w"))
        return self

    def merge(self, other: Histogram) -> Histogram:
        """A new histogram with the counts of both; ``ValueError`` if their binnings differ."""
        if not isinstance(other, Histogram):
            raise TypeError(f"can only merge a Histogram, got {type(other).__name__}")
        return Histogram._wrap(self._native.merge(other._native))

    def __add__(self, other: Histogram) -> Histogram:
        if not isinstance(other, Histogram):
            return NotImplemented
        return self.merge(other)

    def __radd__(self, other: Any) -> Histogram:
        # `sum(histograms)` starts from 0.
        if isinstance(other, int) and other == 0:
            return Histogram._wrap(self._native.merge(self._native.empty_like()))
        return NotImplemented

    @property
    def counts(self) -> np.ndarray:
        """Counts per bin (uint64), or sums of weights (float64) for ``weights=True``."""
        return self._native.counts().to_numpy()

    @property
    def edges(self) -> np.ndarray:
        """The ``n + 1`` bin edges (float64; float32 edges of Float32 data widen exactly).

        Before the first fill, the edges a Float64 column would get.
        """
        return self._native.edges().to_numpy()

    @property
    def weighted(self) -> bool:
        """Whether the histogram sums weights."""
        return self._native.weighted

    def __len__(self) -> int:
        return self._native.n_bins

    def to_frame(self, *, density: bool = False) -> pl.DataFrame:
        """The rows of the ``gpu_hist.histogram`` expression: ``bin_start``, ``bin_end``,
        ``count`` (numpy's ``density`` of the totals with ``density=True``)."""
        return self._native.to_series("histogram", density).struct.unnest()

    def plot(self, *, title: str = "", density: bool = False) -> Any:
        """An Altair bar chart of the histogram (needs ``altair``)."""
        from polars_gpu_hist import plot

        return plot.chart(self.to_frame(density=density), title=title)

    def __getstate__(self) -> dict[str, bytes]:
        return {"state": self._native.to_bytes()}

    def __setstate__(self, state: dict[str, bytes]) -> None:
        self._native = _internal.Histogram.from_bytes(state["state"])

    def __dask_tokenize__(self) -> tuple[str, bytes]:
        # Equal histograms get equal Dask keys (a template in many tasks is hashed once).
        return ("polars_gpu_hist.Histogram", self._native.to_bytes())

    def __repr__(self) -> str:
        return repr(self._native)


def _as_series(data: Any, name: str) -> pl.Series:
    """A Polars Series of ``data`` without a copy where Polars can avoid one."""
    if isinstance(data, pl.Series):
        return data
    if isinstance(data, pl.DataFrame):
        if data.width != 1:
            raise TypeError(
                f"fill takes one column; got a DataFrame of {data.width} columns: pass df[column]"
            )
        return data.to_series()
    if isinstance(data, (pl.LazyFrame, pl.Expr)):
        raise TypeError(
            f"fill takes data, not a {type(data).__name__}: use histogram_scan for a LazyFrame"
        )
    if type(data).__module__.split(".")[0] == "pandas":
        return pl.from_pandas(data, nan_to_null=False)
    ndim = getattr(data, "ndim", 1)
    if ndim != 1:
        raise ValueError(f"fill takes a 1-D array, got {ndim} dimensions")
    return pl.Series(name, data)
