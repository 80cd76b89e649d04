"""The mergeable histogram: a thin wrapper over the native ``_internal.Histogram``.

The binning rules, the checks that make batches and merges exact, and the serialized state all
live in Rust (``src/accumulator/``); this class only turns Python inputs (Polars, numpy,
pandas, arrays in GPU memory) into what the native object takes, and results into numpy,
Polars, the scikit-hep plotting protocol, HTML and Altair.
"""

from __future__ import annotations

import pickle
import warnings
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import polars as pl

from polars_gpu_hist import _args, _cuda, _internal, _options
from polars_gpu_hist._args import BinsArg, Closed, Device, RangeArg
from polars_gpu_hist._uhi import Axis, CountsArray, Kind, svg_bars, svg_heatmap

_AXIS_NAMES = ("x", "y", "z")


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


class Histogram:
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

    __slots__ = ("_native",)
    __hash__ = None  # type: ignore[assignment]  # mutable: fills change it

    def __init__(
        self,
        bins: BinsArg | Sequence[BinsArg],
        *,
        range: RangeArg | Sequence[RangeArg] = None,
        closed: Closed = "left",
        weights: bool = False,
        device: Device = "auto",
    ) -> None:
        if isinstance(range, str):
            raise ValueError(
                f"range={range!r}: a range from the data needs a pass over all of it; use "
                "histogram_scan(..., range='auto') or give range=(min, max)"
            )
        self._native = _native(_axes(bins, range), closed, weights, device)

    @classmethod
    def _from_data_range(
        cls,
        bins: int,
        extremes: _internal.DataExtremes,
        *,
        closed: Closed,
        weights: bool,
        device: Device,
    ) -> Histogram:
        """Equal bins over the extremes of all the data (exact values of the column's kind)."""
        axis: _options.AccumulatorAxis = {"bins": _numbers(_args.bins(bins), "`bins`")}
        return cls._wrap(_native([axis], closed, weights, device, extremes))

    @classmethod
    def _wrap(cls, native: _internal.Histogram) -> Histogram:
        h = cls.__new__(cls)
        h._native = native
        return h

    def fill(self, *data: Any, weights: Any = None) -> Histogram:
        """Counts ``data`` into the histogram (and sums ``weights``); returns the histogram.

        One column per axis: ``h.fill(x)``, ``h.fill(x, y)``, or the columns together as a
        tuple, a DataFrame or an ``(n, d)`` array. A column is a Polars Series, a numpy array or
        sequence, a pandas Series, or an array in GPU memory (``__cuda_array_interface__``:
        CuPy, PyTorch, cuDF), counted where it lies. ``weights`` is alike and of the same
        length (float64 in GPU memory for GPU arrays); ``h.fill(x, w)`` also works for one
        axis. A row with a null (or a NaN) anywhere is not counted; nothing changes on error.
        """
        d = len(self.shape)
        if d == 1 and len(data) == 2 and weights is None:
            weights = data[1]
            data = data[:1]
        columns = _columns(data, d)
        cuda = [_cuda.cuda_array(c) for c in columns]
        if any(iface is not None for iface in cuda):
            if any(iface is None for iface in cuda):
                raise TypeError("fill takes columns all in GPU memory or all in host memory")
            found = [iface for iface in cuda if iface is not None]
            squares = None if weights is None else weights * weights  # alive until filled
            sample = _cuda.sample([_cuda.column(iface) for iface in found], weights)
            squares_ptr = None if squares is None else _cuda.weights_pointer(squares, sample.rows)
            for iface in found:
                _cuda.sync_stream(iface)
            self._native.fill_cuda(sample, squares_ptr)
            del squares
            flow = _device_flow(columns, weights, self._bounds())
            if flow is None:
                warnings.warn(
                    "Histogram.fill: the rows of these GPU arrays that fall outside the bins or "
                    "are NaN were not recorded in `flow` (that needs CuPy or PyTorch)",
                    stacklevel=2,
                )
            else:
                self._native.add_flow(flow)
            return self
        series = [_as_series(c, f"x{i}") for i, c in enumerate(columns)]
        for c in series:
            _args.refuse_object(c)
        w = None if weights is None else _as_series(weights, "weights")
        if w is not None:
            _args.refuse_object(w, "weights")
        self._native.fill(series, w)
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

    def __eq__(self, other: object) -> bool:
        """The same binning (axes, edges, ``closed``, dtypes), storage and contents (counts,
        variances and :attr:`flow`)."""
        if not isinstance(other, Histogram):
            return NotImplemented
        mine, theirs = self._native, other._native
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
        return tuple(self._native.shape)

    @property
    def counts(self) -> CountsArray:
        """Counts per bin (uint64), or sums of weights (float64) for ``weights=True``; of
        :attr:`shape` (row-major cells) for several axes. Called, ``h.counts()`` gives the
        plotting protocol's effective counts (see :meth:`values`)."""
        counts = self._native.counts().to_numpy().reshape(self.shape).view(CountsArray)
        if self.weighted:
            values, variances = self.values(), self.variances()
            with np.errstate(divide="ignore", invalid="ignore"):
                counts.effective = np.where(variances > 0, values**2 / variances, 0.0)
        return counts

    @property
    def edges(self) -> Any:
        """The ``n + 1`` bin edges (float64; float32 edges of Float32 data widen exactly), or a
        tuple of them, one per axis. Before the first fill, the edges a Float64 column gets."""
        edges = self._edges()
        return edges[0] if len(edges) == 1 else tuple(edges)

    def _edges(self) -> list[np.ndarray]:
        return [self._native.edges(i).to_numpy() for i in range(len(self.shape))]

    @property
    def weighted(self) -> bool:
        """Whether the histogram sums weights."""
        return self._native.weighted

    @property
    def flow(self) -> Flow:
        """The rows the fills saw and those not counted, by reason (:class:`Flow`): every row
        is accounted for, ``rows == counted + null + nan + underflow + overflow``. Row counts,
        for weighted histograms too (:meth:`values` with ``flow=True`` gives the weights of
        the under- and overflow rows). Kept through merges and pickles; a histogram pickled by
        a version before 0.4 (state format 4) reads with nothing recorded as not counted."""
        rows, null, nan, under, over = self._native.flow()[:5]
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

    def _bounds(self) -> list[tuple[float, float]]:
        """The first and last edge of each axis (float64, exact)."""
        return [(float(e[0]), float(e[-1])) for e in self._edges()]

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

    @property
    def axes(self) -> tuple[Axis, ...]:
        """One :class:`Axis` per dimension: ``len``, ``axis[i] -> (lo, hi)``, ``edges``."""
        flow = len(self.shape) == 1  # flow bins are kept per bin for one axis only
        return tuple(Axis(e, name, flow) for e, name in zip(self._edges(), self._axis_names()))

    def values(self, flow: bool = False) -> np.ndarray:
        """The counts (or sums of weights) as float64, of :attr:`shape`; with ``flow=True``
        (one axis), the underflow first and the overflow last, as boost-histogram's flow bins
        (rows, or their weights for a weighted histogram). NaN rows are not in the overflow
        here, unlike boost-histogram's and the expression's ``flow=True``: they are
        :attr:`nan`, and nulls :attr:`null`.
        n-D axes have no flow bins (``axes[i].traits.underflow`` is False): ``flow=True``
        changes nothing there, and :attr:`flow` holds the rows not counted."""
        values = self._native.counts().to_numpy().reshape(self.shape).astype(np.float64)
        return self._with_flow(values, flow, squares=False)

    def variances(self, flow: bool = False) -> np.ndarray:
        """The variance of each value: the sum of the squared weights for ``weights=True``
        (boost-histogram's weighted storage), else the count itself (Poisson); ``flow=True``
        as for :meth:`values`."""
        squares = self._native.squared_weights()
        if squares is None:
            return self.values(flow)
        return self._with_flow(squares.to_numpy().reshape(self.shape), flow, squares=True)

    def _with_flow(self, values: np.ndarray, flow: bool, *, squares: bool) -> np.ndarray:
        _args.flag(flow, "flow")
        if not flow:
            return values
        if len(self.shape) != 1:
            # As the protocol has it for axes without flow bins (their traits say so): the
            # values as they are. `.flow` gives the rows an n-D histogram did not count.
            return values
        _, _, _, rows_under, rows_over, under_w, over_w, under_q, over_q = self._native.flow()
        under, over = float(rows_under), float(rows_over)
        if self.weighted:
            under, over = (under_q, over_q) if squares else (under_w, over_w)
        return np.concatenate([[under], values, [over]])

    def _axis_names(self) -> list[str]:
        d = len(self.shape)
        return list(_AXIS_NAMES[:d]) if d <= len(_AXIS_NAMES) else [f"x{i}" for i in range(d)]

    def to_frame(self, *, density: bool = False) -> pl.DataFrame:
        """The rows of the ``gpu_hist.histogram`` expression: ``bin_start``, ``bin_end``,
        ``count`` for one axis; those of :func:`histogramdd` (``x_start``, ``x_end``,
        ``y_start``, ..., ``count``) for several. numpy's ``density`` of the totals with
        ``density=True``."""
        names = self._axis_names()
        return self._native.to_series("histogram", names, density).struct.unnest()

    def plot(self, *, title: str = "", density: bool = False) -> Any:
        """An Altair chart (needs ``altair``): bars for one axis, a heatmap for two."""
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

    def _repr_html_(self) -> str:
        """A notebook's view: the bars (one axis) or a heatmap (two) beside the binning and the
        totals; for more axes, the table alone (with the number of non-empty cells)."""
        values = self.values()
        rows = [
            (
                "axes",
                " x ".join(
                    f"{n} bins on [{e[0]:.6g}, {e[-1]:.6g}]"
                    for n, e in zip(self.shape, self._edges())
                ),
            ),
            ("closed", self._native.closed),
            ("dtype", " x ".join(d or "(not filled yet)" for d in self._native.dtypes)),
            ("storage", "weights (sums and squares)" if self.weighted else "counts (exact)"),
            ("total", f"{values.sum():.6g}"),
        ]
        flow = self.flow
        if flow.counted != flow.rows:
            rows.append(
                (
                    "not counted",
                    f"{flow.null} null, {flow.nan} NaN, {flow.underflow} below, "
                    f"{flow.overflow} above (of {flow.rows} rows)",
                )
            )
        if len(self.shape) > 2:
            rows.append(("cells", f"{values.size} ({np.count_nonzero(values)} not empty)"))
        table = "".join(
            f"<tr><th style='text-align:left'>{k}</th><td style='text-align:left'>{v}</td></tr>"
            for k, v in rows
        )
        pictures = {1: svg_bars, 2: svg_heatmap}
        draw = pictures.get(len(self.shape))
        picture = "" if draw is None else draw(values)
        return (
            "<div style='display:flex;gap:1.5em;align-items:center'>"
            f"{picture}<table><caption><b>Histogram</b></caption>{table}</table></div>"
        )


def _native(
    axes: list[_options.AccumulatorAxis],
    closed: Closed,
    weights: bool,
    device: Device,
    data_range: _internal.DataExtremes | None = None,
) -> _internal.Histogram:
    arguments: _options.AccumulatorArguments = {
        "axes": axes,
        "closed": _args.choice(closed, "closed", ("left", "right")),
        "weighted": _args.flag(weights, "weights"),
        "device": _args.choice(device, "device", ("auto", "cpu", "gpu")),
    }
    return _internal.Histogram(pickle.dumps(arguments, protocol=5), data_range)


def _is_pairs(range: Any) -> bool:
    """Whether ``range`` gives one ``(min, max)`` or ``None`` per axis."""
    if range is None or isinstance(range, (str, bytes)) or not isinstance(range, Sequence):
        return False
    return len(range) > 0 and all(r is None or _is_sequence(r) for r in range)


def _is_sequence(x: Any) -> bool:
    return isinstance(x, (Sequence, np.ndarray, pl.Series)) and not isinstance(x, (str, bytes))


def _axes(bins: Any, range: Any) -> list[_options.AccumulatorAxis]:
    """The native axes: one for ``numpy.histogram``'s arguments, several for
    ``numpy.histogramdd``'s (a range per axis, or a bins entry that is itself a sequence)."""
    several = _is_pairs(range) or (
        _is_sequence(bins) and len(bins) > 0 and any(_is_sequence(b) for b in bins)
    )
    if not several:
        return [{"bins": _numbers(_args.bins(bins), "`bins`"), "range": _number_range(range)}]
    d = len(range) if _is_pairs(range) else len(bins)
    per_axis = [bins] * d if isinstance(bins, int) else list(bins)
    ranges = list(range) if range is not None else [None] * d
    if len(per_axis) != d or len(ranges) != d:
        raise ValueError(
            f"`bins` has {len(per_axis)} entries and `range` {len(ranges)}: give one per axis "
            "(or one int `bins` for all)"
        )
    return [
        {"bins": _numbers(_args.bins(b), "`bins`"), "range": _number_range(r)}
        for b, r in zip(per_axis, ranges)
    ]


def _columns(data: tuple[Any, ...], d: int) -> list[Any]:
    """One column per axis, from ``fill``'s positional arguments."""
    if len(data) == d:
        return list(data)
    if len(data) != 1:
        raise TypeError(
            f"this histogram has {d} axes: fill takes {d} columns (or one object holding them), "
            f"got {len(data)} arguments; pass weights as weights=..."
        )
    (whole,) = data
    if isinstance(whole, pl.DataFrame):
        if whole.width != d:
            raise TypeError(
                f"fill takes one column per axis ({d}); got a DataFrame of {whole.width} "
                "columns: select them"
            )
        return whole.get_columns()
    if isinstance(whole, (tuple, list)) and len(whole) == d and all(map(_is_sequence, whole)):
        return list(whole)
    ndim = getattr(whole, "ndim", None)
    if ndim == 2 and whole.shape[1] == d and d > 1:
        return [whole[:, i] for i in range(d)]
    raise TypeError(
        f"this histogram has {d} axes: fill takes {d} columns, a DataFrame or tuple of them, "
        f"or an (n, {d}) array"
    )


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
        converted = pl.from_pandas(data, nan_to_null=False)
        return converted if isinstance(converted, pl.Series) else _as_series(converted, name)
    ndim = getattr(data, "ndim", 1)
    if ndim != 1:
        raise ValueError(f"fill takes a 1-D array per axis, got {ndim} dimensions")
    return pl.Series(name, data)


def _device_flow(
    columns: list[Any], weights: Any, bounds: list[tuple[float, float]]
) -> tuple[int, int, int, int, int, float, float, float, float] | None:
    """The flow of a fill from GPU memory, classified where the arrays lie with their own
    library (CuPy or PyTorch; other arrays through either), as the native fill does on the host:
    compared in float64, the first axis on which a row is outside decides. ``None`` where
    neither library is there."""
    arrays = [_device_array(c) for c in columns]
    w = None if weights is None else _device_array(weights)
    if any(a is None for a in arrays) or (weights is not None and w is None):
        return None
    wide = [_float64(a) for a in arrays]
    nan = wide[0] != wide[0]
    for x in wide[1:]:
        nan = nan | (x != x)
    decided = nan
    under = over = None
    for x, (lo, hi) in zip(wide, bounds):
        below, above = (x < lo) & ~decided, (x > hi) & ~decided
        under = below if under is None else under | below
        over = above if over is None else over | above
        decided = decided | below | above
    assert under is not None and over is not None
    rows = int(arrays[0].shape[0])

    def total(mask: Any, scale: Any = None) -> Any:
        return (mask.sum() if scale is None else (scale * mask).sum()).item()

    sums = [0.0, 0.0, 0.0, 0.0]
    if w is not None:
        w64 = _float64(w)
        sums = [
            float(total(under, w64)),
            float(total(over, w64)),
            float(total(under, w64 * w64)),
            float(total(over, w64 * w64)),
        ]
    counts = int(total(nan)), int(total(under)), int(total(over))
    return (rows, 0, *counts, *sums)  # type: ignore[return-value]


def _device_array(data: Any) -> Any:
    """``data`` as a CuPy array or a PyTorch tensor (no copy), or ``None``."""
    module = type(data).__module__.split(".")[0]
    if module in ("cupy", "torch"):
        return data
    try:
        import cupy

        return cupy.asarray(data)
    except ImportError:
        pass
    try:
        import torch

        return torch.as_tensor(data, device="cuda")
    except ImportError:
        return None


def _float64(array: Any) -> Any:
    if type(array).__module__.split(".")[0] == "torch":
        import torch

        return array.to(torch.float64)
    return array.astype("float64")


def _plain(value: Any, what: str) -> float:
    """A number for the histogram's fixed binning (its dtype is not known before the first
    fill, so dates and rules cannot be resolved yet)."""
    if isinstance(value, dict):
        for width in ("float32", "float64", "int"):
            if width in value:
                return float(value[width])
        raise TypeError(
            f"{what} of a Histogram must be a number (its column's dtype is not known before the "
            "first fill): give dates and times as numbers of the column's units"
        )
    return float(value)


def _numbers(bins: Any, what: str) -> int | list[float]:
    if isinstance(bins, str):
        raise ValueError(
            f"bins={bins!r} needs the data: a Histogram's binning is fixed before its first "
            "fill; give a number of bins with a range, or edges"
        )
    if isinstance(bins, int):
        return bins
    return [_plain(e, f"`bins` edge {i}") for i, e in enumerate(bins)]


def _number_range(range: Any) -> tuple[float, float] | None:
    pair = _args.range_(range)
    if pair is None:
        return None
    return _plain(pair[0], "`range`"), _plain(pair[1], "`range`")
