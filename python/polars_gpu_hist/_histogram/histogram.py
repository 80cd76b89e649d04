"""The mergeable histogram: a thin wrapper over the native ``_native.Histogram``.

The binning rules, the checks that make batches and merges exact, and the serialized state all
live in Rust (``src/accumulator/``); this class only turns Python inputs (Polars, numpy,
pandas, arrays in GPU memory) into what the native object takes, and results into numpy,
Polars, the scikit-hep plotting protocol, HTML and Altair.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, TypeVar, overload

import numpy as np
import polars as pl

from polars_gpu_hist import _native
from polars_gpu_hist._args import arguments as _args
from polars_gpu_hist._args.arguments import BinsArg, Closed, Device, RangeArg
from polars_gpu_hist._histogram import binning as _binning
from polars_gpu_hist._histogram import display as _display
from polars_gpu_hist._histogram import fill as _fill
from polars_gpu_hist._histogram import statistics as _stats
from polars_gpu_hist._histogram.axes import AxisKind
from polars_gpu_hist._histogram.protocol import CountsArray, Kind
from polars_gpu_hist._histogram.uhi import UhiMethods
from polars_gpu_hist._inputs import host as _host
from polars_gpu_hist._native import cuda_arrays as _cuda
from polars_gpu_hist._native import options as _options

_T = TypeVar("_T")
# What a fill adds (``Histogram._counted``): flat counts, squared weights or None, the flow
# tuple, and for several axes the flow cells (counts or sums, and squares or None).
_Filled = tuple[
    pl.Series,
    pl.Series | None,
    tuple[int, int, int, int, int, float, float, float, float],
    tuple[pl.Series, pl.Series | None] | None,
]


class Flow(NamedTuple):
    """The rows a histogram's fills saw, and why those not counted were not:
    ``rows == counted + null + nan + underflow + overflow``.

    A row is classified by the first reason that applies: a null on some axis (or a null
    weight), a NaN on some axis, a value below the first edge (``underflow``) or above the last
    (``overflow``); with several axes, the first axis on which the row is outside decides.
    """

    rows: int
    counted: int
    null: int
    nan: int
    underflow: int
    overflow: int


class Histogram(UhiMethods):
    """A histogram with a fixed binning that batches fill and other histograms merge into.

    Counts are exact: filling any number of batches (or merging histograms filled on other
    devices, processes or machines) gives the counts of one ``numpy.histogram`` (one axis) or
    ``numpy.histogramdd`` (several) over all the data. This is what :func:`histogram_scan` and
    :func:`polars_gpu_hist.dask.histogram` build on.

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
        One axis: the number of equal-width bins over ``range``, or strictly increasing edges.
        Several axes (as ``numpy.histogramdd``): one entry per axis (an int or edges), or one
        int for all when ``range`` has one pair per axis.
    range
        ``(min, max)`` of the equal-width bins, required with an int ``bins``; for several
        axes, one ``(min, max)`` or ``None`` (explicit edges) per axis.
    closed
        ``"left"`` (numpy's bins) or ``"right"`` (Polars' ``Expr.hist``), as in
        :meth:`GpuHistNamespace.histogram`.
    weights
        ``True`` to sum weights (Float64) instead of counting rows (UInt64), and the squared
        weights for :meth:`variances`; every fill then needs ``weights``. Sums are exact for
        integer weights, otherwise equal to one call up to the order of additions.
    device
        Where fills run: ``"auto"``, ``"cpu"`` or ``"gpu"``, as for the expression. Arrays in
        GPU memory are always counted on the GPU.
    name, label
        The axis' name and its title in plots (``label`` defaults to ``name``); a sequence of
        them for several axes. Without a name, an axis takes the name of the first named
        column filled into it (a Polars or pandas Series, a DataFrame's column); unnamed axes
        are ``x``, ``y``, ``z``. Names are carried by merges, pickles, :meth:`to_frame` (the
        field prefixes of several axes), :meth:`plot`, :attr:`axes` and :meth:`to_hist`; they
        are no part of the binning (``==`` and :meth:`merge` ignore them).

    Examples
    --------
    >>> import numpy as np
    >>> from polars_gpu_hist import Histogram
    >>> h = Histogram(4, range=(0, 4))
    >>> h.fill(np.array([0.5, 1.5, 4.0])).fill(np.array([3.0, 9.0])).counts
    array([1, 1, 0, 2], dtype=uint64)
    >>> Histogram([2, 3], range=[(0, 1), (0, 3)]).fill(([0.2, 0.7], [2.5, 0.5])).counts
    array([[0, 0, 1],
           [1, 0, 0]], dtype=uint64)
    """

    __slots__ = ()  # UhiMethods holds them
    __hash__ = None  # type: ignore[assignment]  # mutable: fills change it

    def __init__(
        self,
        bins: BinsArg | Sequence[BinsArg],
        *,
        range: RangeArg | Sequence[RangeArg] = None,
        closed: Closed = "left",
        weights: bool = False,
        device: Device = "auto",
        name: str | Sequence[str | None] | None = None,
        label: str | Sequence[str | None] | None = None,
    ) -> None:
        __tracebackhide__ = True  # IPython shows the caller's frame
        if isinstance(range, str):
            raise ValueError(
                f"range={range!r}: a range from the data needs a pass over all of it; use "
                "histogram_scan(..., range='auto') or give range=(min, max)"
            )
        axes = _binning.axes(bins, range)
        self._core = _binning.native([a for a, _ in axes], closed, weights, device)
        self._kinds = [kind for _, kind in axes]
        d = len(self._core.shape)
        self._names = _binning.per_axis(name, d, "name")
        self._labels = _binning.per_axis(label, d, "label")
        # Date, datetime and duration edges fix the axis' dtype (their units) now.
        temporal = _binning.temporal_dtypes(bins, range, d)
        if temporal is not None:
            empty = [pl.Series(f"x{i}", [], dtype=t) for i, t in enumerate(temporal)]
            no_weights = pl.Series("w", [], dtype=pl.Float64) if weights else None
            self._core.fill(empty, no_weights)

    @classmethod
    def _from_data_range(
        cls,
        bins: int,
        extremes: _native.DataExtremes,
        *,
        closed: Closed,
        weights: bool,
        device: Device,
    ) -> Histogram:
        """Equal bins over the extremes of all the data (exact values of the column's kind)."""
        axis: _options.AccumulatorAxis = {"bins": _binning.numbers(_args.bins(bins), "`bins`")}
        h = cls._wrap(_binning.native([axis], closed, weights, device, extremes))
        edges = h._edges()[0]
        h._kinds = [AxisKind("regular", bins, float(edges[0]), float(edges[-1]))]
        return h

    @classmethod
    def _wrap(cls, native: _native.Histogram) -> Histogram:
        h = cls.__new__(cls)
        h._core = native
        h._names, h._labels = [None] * len(native.shape), [None] * len(native.shape)
        h._kinds = [AxisKind.of_edges(e) for e in h._edges()]
        return h

    def _with_metadata_of(self, other: Histogram) -> Histogram:
        """This histogram with the names and labels of ``other`` where it has none, and the
        kinds of its axes (of one binning: they agree)."""
        self._names = [a or b for a, b in zip(self._names, other._names)]
        self._labels = [a or b for a, b in zip(self._labels, other._labels)]
        self._kinds = list(other._kinds)
        return self

    def fill(self, *data: Any, weights: Any = None) -> Histogram:
        """Counts ``data`` into the histogram (and sums ``weights``); returns the histogram.

        One column per axis: ``h.fill(x)``, ``h.fill(x, y)``, or the columns together as a
        tuple, a DataFrame or an ``(n, d)`` array. A column is a Polars Series, a numpy array or
        sequence, a pandas Series, or an array in GPU memory (``__cuda_array_interface__``:
        CuPy, PyTorch, cuDF), counted where it lies. ``weights`` is alike and of the same
        length (float64 in GPU memory for GPU arrays); ``h.fill(x, w)`` also works for one
        axis. A row with a null (or a NaN) anywhere is not counted; nothing changes on error.
        """
        __tracebackhide__ = True  # IPython shows the caller's frame
        columns = self._count(data, weights, self._core.fill, self._core.fill_cuda)[0]
        self._take_names(columns)
        return self

    def _counted(self, *data: Any, weights: Any = None) -> _Filled:
        """What ``fill`` would add, without adding it: the counts (flat, row-major), the
        squared weights (or None) and the flow tuple. A Dask partial needs no histogram of its
        own (a million counts are 8 MB of zeros to write)."""
        __tracebackhide__ = True  # IPython shows the caller's frame
        return self._count(data, weights, self._core.counted, self._core.counted_cuda)[1]

    def _count(
        self,
        data: tuple[Any, ...],
        weights: Any,
        host: Callable[[list[pl.Series], pl.Series | None], _T],
        cuda: Callable[[_native.DeviceSample, int | None], _T],
    ) -> tuple[list[Any], _T]:
        """``fill``'s columns, and what ``host`` (Series) or ``cuda`` (GPU arrays, counted where
        they lie) returns for them."""
        __tracebackhide__ = True  # IPython shows the caller's frame
        d = len(self.shape)
        if d == 1 and len(data) == 2 and weights is None:
            weights = data[1]
            data = data[:1]
        columns = _fill.columns(data, d)
        if any(_cuda.cuda_array(c) is not None for c in columns):
            return columns, self._count_cuda(columns, weights, cuda)
        one_axis = d == 1
        series = [_fill.as_series(c, f"x{i}", flatten=one_axis) for i, c in enumerate(columns)]
        for c in series:
            _args.refuse_object(c)
        w = None
        if weights is not None:
            if one_axis:
                _host.same_shape(columns[0], weights)
            w = _fill.as_series(weights, "weights", flatten=one_axis)
            _args.refuse_object(w, "weights")
        return columns, host(series, w)

    def _count_cuda(
        self,
        columns: list[Any],
        weights: Any,
        cuda: Callable[[_native.DeviceSample, int | None], _T],
    ) -> _T:
        """What ``cuda`` returns for columns in GPU memory, called on the GPU holding them,
        their producers' streams honoured (the squared weights made there, alive meanwhile)."""
        __tracebackhide__ = True  # IPython shows the caller's frame
        found = [iface for c in columns if (iface := _cuda.cuda_array(c)) is not None]
        if len(found) != len(columns):
            raise TypeError("fill takes columns all in GPU memory or all in host memory")
        from polars_gpu_hist.numpy import gpu_arrays as _numpy_device

        arrays = [*columns] if weights is None else [*columns, weights]
        with _numpy_device.on_device(arrays, _numpy_device.library(columns[0])):
            squares = None if weights is None else weights * weights
            sample = _cuda.sample([_cuda.column(iface) for iface in found], weights)
            squares_ptr = None if squares is None else _cuda.weights_pointer(squares, sample.rows)
            for iface in found:
                _cuda.sync_stream(iface)
            # The counts and the flow in one pass of the kernels.
            return cuda(sample, squares_ptr)

    def _take_names(self, columns: list[Any]) -> None:
        """Unnamed axes take the names of named columns (Polars, pandas)."""
        for i, column in enumerate(columns):
            if self._names[i] is None:
                name = getattr(column, "name", None)
                if isinstance(name, str) and name:
                    self._names[i] = name

    def merge(self, other: Histogram) -> Histogram:
        """A new histogram with the counts of both; ``ValueError`` if their binnings differ.
        Axis names and labels are this histogram's, else ``other``'s."""
        __tracebackhide__ = True  # IPython shows the caller's frame
        if not isinstance(other, Histogram):
            raise TypeError(f"can only merge a Histogram, got {type(other).__name__}")
        merged = Histogram._wrap(self._core.merge(other._core))
        return merged._with_metadata_of(other)._with_metadata_of(self)

    def __add__(self, other: Histogram) -> Histogram:
        if not isinstance(other, Histogram):
            return NotImplemented
        return self.merge(other)

    def __radd__(self, other: Any) -> Histogram:
        # `sum(histograms)` starts from 0.
        if isinstance(other, int) and other == 0:
            empty = self._core.empty_like()
            return Histogram._wrap(self._core.merge(empty))._with_metadata_of(self)
        return NotImplemented

    def __eq__(self, other: object) -> bool:
        """The same binning (axes, edges, ``closed``, dtypes), storage and contents (counts,
        variances and :attr:`flow`)."""
        if not isinstance(other, Histogram):
            return NotImplemented
        mine, theirs = self._core, other._core
        return (
            mine.shape == theirs.shape
            and mine.closed == theirs.closed
            and mine.weighted == theirs.weighted
            and mine.dtypes == theirs.dtypes
            and all(np.array_equal(a, b) for a, b in zip(self._edges(), other._edges()))
            and np.array_equal(self.values(), other.values())
            and np.array_equal(self.variances(), other.variances())
            and mine.flow() == theirs.flow()
        )

    @property
    def shape(self) -> tuple[int, ...]:
        """The number of bins of each axis."""
        return tuple(self._core.shape)

    @property
    def counts(self) -> CountsArray:
        """Counts per bin (uint64), or sums of weights (float64) for ``weights=True``; of
        :attr:`shape` (row-major cells) for several axes. Called, ``h.counts()`` gives the
        plotting protocol's effective counts (see :meth:`values`)."""
        counts = self._core.counts().to_numpy().reshape(self.shape).view(CountsArray)
        counts.effective = self._effective_counts
        return counts

    @property
    def edges(self) -> Any:
        """The ``n + 1`` bin edges (float64; float32 edges of Float32 data widen exactly), or a
        tuple of them, one per axis. Before the first fill, the edges a Float64 column gets."""
        edges = self._edges()
        return edges[0] if len(edges) == 1 else tuple(edges)

    @property
    def weighted(self) -> bool:
        """Whether the histogram sums weights."""
        return self._core.weighted

    @property
    def flow(self) -> Flow:
        """The rows the fills saw and those not counted, by reason (:class:`Flow`): every row
        is accounted for, ``rows == counted + null + nan + underflow + overflow``. Row counts,
        for weighted histograms too (:meth:`values` with ``flow=True`` gives the weights of
        the under- and overflow rows). Kept through merges and pickles; a histogram pickled by
        a version before 0.4 (state format 4) reads with nothing recorded as not counted."""
        rows, null, nan, under, over = self._core.flow()[:5]
        counted = max(rows - null - nan - under - over, 0)
        return Flow(rows, counted, null, nan, under, over)

    @property
    def underflow(self) -> int:
        """Rows below the first edge (see :attr:`flow`)."""
        return self.flow.underflow

    @property
    def overflow(self) -> int:
        """Rows above the last edge (see :attr:`flow`)."""
        return self.flow.overflow

    @property
    def nan(self) -> int:
        """Rows not counted for a NaN (see :attr:`flow`)."""
        return self.flow.nan

    @property
    def null(self) -> int:
        """Rows not counted for a null value or a null weight (see :attr:`flow`)."""
        return self.flow.null

    def __len__(self) -> int:
        """The number of bins (cells for several axes)."""
        return int(np.prod(self.shape))

    def to_numpy(self, *, dd: bool = False) -> tuple[Any, ...]:
        """numpy's answer: ``(counts, edges)`` for one axis, ``(counts, edges_x, edges_y,
        ...)`` for several, or ``(counts, [edges_x, ...])`` as ``numpy.histogramdd`` with
        ``dd=True``."""
        edges = self._edges()
        counts = np.asarray(self.counts)
        return (counts, edges) if dd else (counts, *edges)

    # The scikit-hep plotting protocol (UHI PlottableHistogram): mplhep and hist plot it.

    @property
    def kind(self) -> Kind:
        """``Kind.COUNT``: the values are counts or sums of weights."""
        return Kind.COUNT

    def to_frame(self, *, density: bool = False) -> pl.DataFrame:
        """The rows of the ``gpu_hist.histogram`` expression: ``bin_start``, ``bin_end``,
        ``count`` for one axis; those of :func:`histogramdd` (``<name>_start``, ``<name>_end``
        per axis, ``x``, ``y``, ... for unnamed axes, then ``count``) for several. numpy's
        ``density`` of the totals with ``density=True``."""
        return self._struct(density).struct.unnest()

    def _struct(self, density: bool) -> pl.Series:
        """The result as the expression's Struct column, named by the (first) axis' label."""
        return self._core.to_series(self._axis_labels()[0], self._axis_names(), density)

    def plot(self, *, title: str = "", density: bool = False) -> Any:
        """An Altair chart (needs ``altair``): bars for one axis, a heatmap for two; the axes
        are titled with their labels (or names)."""
        from polars_gpu_hist import plot

        if len(self.shape) == 1:
            return plot.chart(self._struct(density), title=title)
        return plot.chart(self.to_frame(density=density), title=title)

    # Statistics of the bins (statistics.py says how): one axis, or one axis' marginal, in the
    # axis' own terms: intervals spread evenly, an integer axis' values as they are, temporal
    # axes' results as their dates, datetimes and durations.

    @overload
    def quantile(self, q: float, *, axis: int | None = None, method: str | None = None) -> Any: ...

    @overload
    def quantile(
        self, q: Sequence[float] | np.ndarray, *, axis: int | None = None, method: str | None = None
    ) -> Any: ...

    def quantile(self, q: Any, *, axis: int | None = None, method: str | None = None) -> Any:
        """The ``q``-quantile (``q`` in [0, 1], or a sequence of them) of the counted values.

        An axis of intervals (``bins=n`` or edges) takes the values in each bin as spread evenly
        over it: the piecewise-linear CDF through the edges is inverted, the bin where the
        cumulative counts pass ``q`` found and the point that far into it taken linearly. It
        equals numpy's ``"linear"`` ``np.quantile`` of the sample that spreads each bin's ``c``
        counts evenly from its left edge (``a + j * (b - a) / c`` for ``j < c``) plus the last
        edge, wherever no empty bin lies between two counted ones; across empty bins ours jumps
        from one bin's end to the next one's start. ``method`` is for integer axes.

        An integer axis (``bins="integer"``) holds one value a bin, so its quantile is numpy's
        own ``np.quantile`` of the values repeated by their counts, with numpy's ``method``
        (``"linear"`` by default: the median of [1, 2, 3, 4] is 2.5; ``"lower"``,
        ``"higher"``, ``"midpoint"``, ``"nearest"``, ``"inverted_cdf"``); a weighted one's is
        ``"inverted_cdf"``, the one method numpy weights.

        Only the bins count: under/overflow, NaN and null rows (:attr:`flow`) are left out.
        Weighted histograms use the sums of weights (negative ones are refused). An empty
        histogram gives NaN with a ``RuntimeWarning``. For several axes, ``axis=i`` gives the
        quantile of axis ``i``'s marginal (the counts summed over the other axes); without it
        an n-D histogram raises ``ValueError``. A float for a scalar ``q``, a float64 array of
        ``q``'s shape otherwise; for a Date, Datetime or Duration axis, dates, datetimes or
        durations (numpy datetime64/timedelta64 arrays for a sequence of ``q``).

        >>> import numpy as np
        >>> from polars_gpu_hist import Histogram
        >>> Histogram(4, range=(0, 4)).fill(np.array([0.5, 1.5, 1.6, 3.5])).quantile(0.5)
        1.5
        >>> Histogram("integer", range=(0, 9)).fill(np.array([1, 2, 3, 4])).quantile(0.5)
        2.5
        """
        __tracebackhide__ = True  # IPython shows the caller's frame
        i, edges, contents = self._marginal(axis, "quantile")
        if self._kinds[i].kind == "integer":
            found = _stats.discrete_quantile(
                edges[:-1],
                contents,
                q,
                method or ("inverted_cdf" if self.weighted else "linear"),
                self.weighted,
            )
        else:
            if method is not None:
                raise ValueError(
                    f'method={method!r} is for an integer axis (bins="integer"), whose bins '
                    "hold values; an axis of intervals spreads each bin's values over it"
                )
            found = _stats.quantile(edges, contents, q)
        return self._in_axis_terms(i, found)

    def mean(self, *, axis: int | None = None) -> Any:
        """The mean of the counted values: each bin's centre weighted by the counts (sums of
        weights) for an axis of intervals (the data's own mean is not kept), the value each bin
        holds for an integer axis; a date, datetime or duration for a temporal axis. Flow, empty
        histograms and ``axis`` as for :meth:`quantile`.

        >>> Histogram(4, range=(0, 4)).fill(np.array([0.5, 1.5, 1.6, 3.5])).mean()
        1.75
        >>> Histogram("integer", range=(0, 9)).fill(np.array([1, 2, 3])).mean()
        2.0
        """
        __tracebackhide__ = True  # IPython shows the caller's frame
        i, edges, contents = self._marginal(axis, "mean")
        if self._kinds[i].kind == "integer":
            return self._in_axis_terms(i, _stats.discrete_mean(edges[:-1], contents))
        return self._in_axis_terms(i, _stats.mean(edges, contents))

    def std(self, *, ddof: int = 0, axis: int | None = None) -> Any:
        """The standard deviation of the counted values (bin centres, or an integer axis'
        values, weighted by the counts), dividing by ``total - ddof`` as numpy's ``std``
        (``ddof=0``, the default, is the population's); a duration for a temporal axis. Flow,
        empty histograms and ``axis`` as for :meth:`quantile`; NaN where ``total <= ddof``."""
        __tracebackhide__ = True  # IPython shows the caller's frame
        i, edges, contents = self._marginal(axis, "std")
        if self._kinds[i].kind == "integer":
            spread = _stats.discrete_std(edges[:-1], contents, ddof)
        else:
            spread = _stats.std(edges, contents, ddof)
        return self._in_axis_terms(i, spread, span=True)

    def _marginal(self, axis: int | None, what: str) -> tuple[int, np.ndarray, np.ndarray]:
        """The number, edges and contents of one axis (summed over the others)."""
        __tracebackhide__ = True  # IPython shows the caller's frame
        d = len(self.shape)
        if axis is None:
            if d != 1:
                raise ValueError(
                    f"{what} of a histogram of {d} axes: give axis=0..{d - 1} for the {what} "
                    "of one axis (the counts summed over the others)"
                )
            axis = 0
        if isinstance(axis, bool) or not isinstance(axis, int) or not -d <= axis < d:
            raise ValueError(f"`axis` must be an int in [0, {d}) for this histogram, got {axis!r}")
        axis %= d
        others = tuple(i for i in range(d) if i != axis)
        contents = self.values().sum(axis=others) if others else self.values()
        return axis, self._edges()[axis], contents

    def _in_axis_terms(self, i: int, found: Any, *, span: bool = False) -> Any:
        """A statistic of axis ``i`` in its dtype's terms: numbers stay; the physical values of
        a Date, Datetime or Duration axis become dates, datetimes (time zone kept) and
        durations (``span``: a difference, a duration)."""
        dtype = self._axis_dtype(i)
        if dtype is None or not dtype.is_temporal():
            return found
        values = np.atleast_1d(np.asarray(found, dtype=np.float64))
        physical = pl.Series(values).cast(dtype, strict=False)
        if span:
            physical = physical - pl.Series([0.0] * len(values)).cast(dtype, strict=False)
        if np.ndim(found) == 0:
            return physical.item(0)
        return physical.to_numpy().reshape(np.shape(found))

    def _axis_dtype(self, i: int) -> pl.DataType | None:
        """The dtype the first fill fixed on axis ``i`` (None before any fill)."""
        if self._core.dtypes[i] is None:
            return None
        fields = self._struct(False).dtype.fields  # type: ignore[attr-defined]
        dtype: pl.DataType = fields[2 * i].dtype
        return dtype

    def __getstate__(self) -> dict[str, Any]:
        return {
            "state": self._core.to_bytes(),
            "names": self._names,
            "labels": self._labels,
            "kinds": [tuple(k) for k in self._kinds],
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._core = _native.Histogram.from_bytes(state["state"])
        unnamed = [None] * len(self._core.shape)  # pickled before axes had names
        self._names = list(state.get("names", unnamed))
        self._labels = list(state.get("labels", unnamed))
        kinds = state.get("kinds")  # pickled before axes kept their kind: told by the edges
        self._kinds = (
            [AxisKind(*k) for k in kinds]
            if kinds is not None
            else [AxisKind.of_edges(e) for e in self._edges()]
        )

    def __dask_tokenize__(self) -> tuple[str, bytes]:
        # Equal histograms get equal Dask keys (a template in many tasks is hashed once).
        return ("polars_gpu_hist.Histogram", self._core.to_bytes())

    def __repr__(self) -> str:
        return _display.text(self)

    def _repr_html_(self) -> str:
        """A notebook's view: the bars (one axis) or a heatmap (two) beside the binning and the
        totals; for more axes, the table alone (with the number of non-empty cells)."""
        return _display.html(self)


# Pickles and reprs name the public path, whichever folder defines the classes.
Flow.__module__ = Histogram.__module__ = "polars_gpu_hist"
