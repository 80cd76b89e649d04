"""The boost-histogram and hist API of :class:`polars_gpu_hist.Histogram`, on its contents with
the flow bins of every axis (:mod:`.contents`): the axes, values, variances and counts with
``flow=``, UHI indexing and assignment (:mod:`.indexing`), projections, copies, resets, scaling
by a number, and the conversions to boost-histogram and hist (:mod:`.interop`) and UHI's
serialization (:mod:`.serialization`).

Results equal boost-histogram's for the same operations on the same counts (tests/test_uhi.py
holds them to it); where the two differ, numpy's edges (the contract) decide where a value
falls (``loc``), and NaN rows are in no flow bin (they are ``Histogram.nan``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from polars_gpu_hist import _native
from polars_gpu_hist._args import arguments as _args
from polars_gpu_hist._histogram import contents as _cells
from polars_gpu_hist._histogram import indexing as _indexing
from polars_gpu_hist._histogram import interop as _interop
from polars_gpu_hist._histogram.axes import AxesTuple, Axis, AxisKind
from polars_gpu_hist._histogram.protocol import WeightedSum

if TYPE_CHECKING:
    from typing_extensions import Self

_AXIS_NAMES = ("x", "y", "z")


class UhiMethods:
    """The scikit-hep half of ``Histogram`` (a base class: the data half is in
    ``histogram.py``)."""

    __slots__ = ("_core", "_kinds", "_labels", "_names")
    _core: _native.Histogram
    _names: list[str | None]
    _labels: list[str | None]
    _kinds: list[AxisKind]

    # Axes.

    @property
    def ndim(self) -> int:
        """The number of axes (boost-histogram's ``ndim``, ``rank``)."""
        return len(self._core.shape)

    rank = ndim

    @property
    def axes(self) -> AxesTuple:
        """One :class:`Axis` per dimension (a tuple that also takes an axis' name):
        ``edges``, ``centers``, ``widths``, ``name``, ``label``, ``traits``, ``index(x)``."""
        flow = self._core.flow_cells() is not None
        closed = self._core.closed
        return AxesTuple(
            Axis(e, name, flow, label, kind, closed)
            for e, name, label, kind in zip(
                self._edges(), self._axis_names(), self._axis_labels(), self._kinds
            )
        )

    def _edges(self) -> list[np.ndarray]:
        return [self._core.edges(i).to_numpy() for i in range(self.ndim)]

    def _axis_names(self) -> list[str]:
        """The axes' names, or ``x``, ``y``, ``z`` (``x0``, ``x1``, ... past three) where some
        axis has none or two share one."""
        names = self._names
        if all(names) and len(set(names)) == len(names):
            return list(names)  # type: ignore[arg-type]
        d = self.ndim
        return list(_AXIS_NAMES[:d]) if d <= len(_AXIS_NAMES) else [f"x{i}" for i in range(d)]

    def _axis_labels(self) -> list[str]:
        return [label or name for label, name in zip(self._labels, self._axis_names())]

    # Contents.

    def _contents(self) -> _cells.Contents:
        return _cells.read(self._core)

    def values(self, flow: bool = False) -> np.ndarray:
        """The counts (or sums of weights) as float64, of :attr:`shape`; with ``flow=True``,
        every axis with its flow bins, the underflow first and the overflow last (boost's
        ``(n + 2, m + 2)`` for two axes): rows outside (or their weights), NaN rows left out
        (they are :attr:`nan`, nulls :attr:`null`; boost-histogram puts NaN in the overflow).
        A histogram of several axes pickled before version 0.5 knows its flow in total only
        (:attr:`flow`): its axes have no flow bins (``traits.underflow`` is False) and
        ``flow=True`` changes nothing."""
        __tracebackhide__ = True  # IPython shows the caller's frame
        _args.flag(flow, "flow")
        c = self._contents()
        values = c.values if flow else c.bins()[0]
        return values.astype(np.float64)

    def variances(self, flow: bool = False) -> np.ndarray:
        """The variance of each value: the sum of the squared weights for ``weights=True``
        (boost-histogram's weighted storage), else the count itself (Poisson); ``flow=True``
        as for :meth:`values`."""
        __tracebackhide__ = True  # IPython shows the caller's frame
        _args.flag(flow, "flow")
        c = self._contents()
        if c.variances is None:
            return self.values(flow)
        return c.variances if flow else c.bins()[1]  # type: ignore[return-value]

    def view(self, flow: bool = False) -> np.ndarray:
        """The contents as boost-histogram's ``view()``: the counts (uint64), or for a weighted
        histogram a structured array of ``value`` and ``variance``; ``flow=True`` as for
        :meth:`values`. A read-only copy: cells are set with ``h[...] = ...``."""
        _args.flag(flow, "flow")
        c = self._contents()
        values, variances = (c.values, c.variances) if flow else c.bins()
        if variances is None:
            out = np.array(values)
        else:
            out = np.empty(values.shape, dtype=[("value", "f8"), ("variance", "f8")])
            out["value"], out["variance"] = values, variances
        out.flags.writeable = False
        return out

    def _effective_counts(self, flow: bool) -> np.ndarray:
        """The protocol's effective counts: ``sum(w)**2 / sum(w**2)`` per cell when weighted."""
        values, variances = self.values(flow), self.variances(flow)
        if not self._core.weighted:
            return values
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(variances > 0, values**2 / variances, 0.0)

    def sum(self, flow: bool = False) -> float | int:
        """The total in the bins: an int (rows) for counts, a float (the sum of weights) for
        ``weights=True``; ``flow=True`` adds the flow bins as :meth:`values` has them (NaN and
        null rows are never in it: see :attr:`flow`)."""
        __tracebackhide__ = True  # IPython shows the caller's frame
        _args.flag(flow, "flow")
        c = self._contents()
        values = c.values if flow else c.bins()[0]
        if self._core.weighted:
            return float(values.sum())
        return int(values.sum(dtype=np.uint64))

    def empty(self, flow: bool = False) -> bool:
        """Whether every bin (with the flow bins for ``flow=True``) is zero."""
        _args.flag(flow, "flow")
        c = self._contents()
        values = c.values if flow else c.bins()[0]
        return not np.any(values)

    # New histograms from this one.

    def _derived(
        self,
        axes: list[tuple[int, list[int] | None, AxisKind]],
        contents: _cells.Contents,
        weighted: bool | None = None,
    ) -> Self:
        """A histogram of some of these axes (kept, or cut to some of their edges) holding
        ``contents``, names and labels carried over."""
        weighted = self._core.weighted if weighted is None else weighted
        core = self._core.reshaped([(i, cut) for i, cut, _ in axes], weighted)
        _cells.write(core, contents, self._core.flow())
        return self._around(core, axes)

    def _around(self, core: _native.Histogram, axes: list[tuple[int, Any, AxisKind]]) -> Self:
        out = self._wrap(core)  # type: ignore[attr-defined]
        out._names = [self._names[i] for i, _, _ in axes]
        out._labels = [self._labels[i] for i, _, _ in axes]
        out._kinds = [kind for _, _, kind in axes]
        return out  # type: ignore[no-any-return]

    def copy(self, *, deep: bool = True) -> Self:
        """A copy: the same binning, dtypes, contents and flow, names and labels."""
        core = self._core.reshaped([(i, None) for i in range(self.ndim)], self._core.weighted)
        core.set_contents(*self._exact_state())
        return self._around(core, [(i, None, k) for i, k in enumerate(self._kinds)])

    def _exact_state(self) -> tuple[Any, ...]:
        """This histogram's contents as ``set_contents`` takes them, the flow as it is."""
        squares = self._core.squared_weights()
        return self._core.counts(), squares, self._core.flow(), self._core.flow_cells()

    def __copy__(self) -> Self:
        return self.copy()

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        return self.copy()

    def reset(self) -> Self:
        """Every count (and flow) back to zero; the binning and dtypes stay. Returns it."""
        self._core = self._core.empty_like()
        return self

    def project(self, *axes: int | str) -> Self:
        """The histogram of ``axes`` alone (numbers or names, in the order given), the others
        summed over with their flow bins, as boost-histogram's ``project``."""
        __tracebackhide__ = True  # IPython shows the caller's frame
        numbers = [self._axis_number(a) for a in axes]
        if not numbers or len(set(numbers)) != len(numbers):
            raise ValueError(f"project takes distinct axes of this histogram, got {axes!r}")
        index = {i: slice(None) if i in numbers else sum for i in range(self.ndim)}
        kept = self[index]
        if not isinstance(kept, UhiMethods):
            raise AssertionError("a projection keeps an axis")
        order = sorted(numbers)
        if numbers == order:
            return kept  # type: ignore[return-value]
        return kept._transposed([order.index(i) for i in numbers])  # type: ignore[return-value]

    def _axis_number(self, axis: int | str) -> int:
        return _indexing._axis_number(axis, self.axes)

    def _transposed(self, order: list[int]) -> Self:
        c = self._contents()
        values = np.transpose(c.values, order)
        variances = None if c.variances is None else np.transpose(c.variances, order)
        return self._derived(
            [(i, None, self._kinds[i]) for i in order],
            _cells.Contents(values, variances, c.flow),
        )

    def __getitem__(self, index: Any) -> Any:
        """UHI indexing (:mod:`polars_gpu_hist._histogram.indexing`): ``h[2]``, ``h[2:5]``,
        ``h[loc(1.5):]``, ``h[::rebin(2)]``, ``h[::sum]``, ``h[{"pt": slice(0, 10)}]``,
        ``h[2j:5j]``; a histogram, or one value (an int count, or a :class:`WeightedSum`)."""
        __tracebackhide__ = True
        selected = _indexing.select(index, self.axes, self._contents())
        if selected.axes:
            return self._derived(selected.axes, selected.contents)
        values, variances = selected.contents.values, selected.contents.variances
        if variances is None:
            return int(values)
        return WeightedSum(float(values), float(variances))

    def __setitem__(self, index: Any, value: Any) -> None:
        """``h[index] = value``, as boost-histogram sets: a number, or an array of the bins
        selected (or of them and the flow bins that left-out bounds reach); a weighted
        histogram takes :class:`WeightedSum` values or arrays whose last dimension is
        ``(value, variance)``. Counts must be whole numbers >= 0."""
        __tracebackhide__ = True
        c = self._contents()
        weighted = c.variances is not None
        array = np.asarray(value)
        pairs = weighted and array.ndim > 0 and array.shape[-1] == 2
        if isinstance(value, WeightedSum) or (weighted and hasattr(value, "variance")):
            values, variances = np.asarray(value.value), np.asarray(value.variance)
        elif pairs:
            values, variances = array[..., 0], array[..., 1]
        else:
            values, variances = array, array
        where = _indexing.assign(index, self.axes, values, c.flow)
        full_values = c.values.copy()
        if weighted:
            assert c.variances is not None
            full_variances = c.variances.copy()
            full_values[where] = values
            full_variances[where] = variances
            contents = _cells.Contents(full_values, full_variances, c.flow)
        else:
            if not (np.all(values >= 0) and np.all(np.mod(values, 1) == 0)):
                raise ValueError(
                    "a counting histogram holds whole numbers >= 0: make it with weights=True "
                    "to hold other values"
                )
            full_values[where] = values
            contents = _cells.Contents(full_values, None, c.flow)
        _cells.write(self._core, contents, self._core.flow())

    # Scaling: sums of weights, their variances scaled by the square.

    def __mul__(self, factor: Any) -> Self:
        __tracebackhide__ = True  # IPython shows the caller's frame
        if isinstance(factor, bool) or not isinstance(factor, (int, float, np.number)):
            return NotImplemented
        scaled = self._contents().scaled(float(factor))
        return self._derived(
            [(i, None, k) for i, k in enumerate(self._kinds)], scaled, weighted=True
        )

    __rmul__ = __mul__

    def __truediv__(self, divisor: Any) -> Self:
        __tracebackhide__ = True  # IPython shows the caller's frame
        if isinstance(divisor, bool) or not isinstance(divisor, (int, float, np.number)):
            return NotImplemented
        return self * (1.0 / float(divisor))

    def __imul__(self, factor: Any) -> Self:
        scaled = self * factor
        self._core = scaled._core
        return self

    def __itruediv__(self, divisor: Any) -> Self:
        scaled = self / divisor
        self._core = scaled._core
        return self

    # scikit-hep's histograms (optional packages, imported when asked for).

    def to_boost(self, *, axes: str = "native") -> Any:
        """This histogram as a ``boost_histogram.Histogram`` (needs boost-histogram): a
        ``Regular`` axis where it was made of equal bins (``bins=n, range=(lo, hi)``: boost's
        ``Regular(n, lo, hi)``, which merges with one the user makes so), ``Integer`` for
        ``bins="integer"``, else ``Variable`` of the edges; ``axes="variable"`` makes every axis
        ``Variable`` of numpy's exact edges. The counts are numpy's (the contract): boost's
        regular edges differ from numpy's by a rounding at some bins, where a later fill of the
        result bins a value on such an edge by boost's rule (docs/guides/hep.md shows one). Axis
        names and labels, counts (``Int64`` storage) or sums of weights and their squares
        (``Weight``), and the flow bins of every axis carry over. NaN rows (:attr:`nan`) are no
        part of the result (boost puts NaN in the overflow). ``bh.Histogram(h)`` is the
        same."""
        __tracebackhide__ = True  # IPython shows the caller's frame
        return _interop.to_boost(self._boost_parts(axes))

    def to_hist(self, *, axes: str = "native") -> Any:
        """This histogram as a ``hist.Hist`` (needs hist): :meth:`to_boost` as hist's class,
        which names its axes; ``hist.Hist(h)`` is the same."""
        __tracebackhide__ = True  # IPython shows the caller's frame
        return _interop.to_hist(self._boost_parts(axes))

    def _to_boost_histogram_(self) -> Any:
        # boost-histogram's conversion hook: bh.Histogram(h) and hist.Hist(h) call it.
        return _interop.to_boost(self._boost_parts("native"))

    def _boost_parts(self, axes: str) -> _interop.BoostParts:
        __tracebackhide__ = True  # IPython shows the caller's frame
        if axes not in ("native", "variable"):
            raise ValueError(f'`axes` must be "native" or "variable", got {axes!r}')
        c = self._contents()
        kinds = self._kinds if axes == "native" else [AxisKind("variable")] * self.ndim
        # An axis without a label of its own has hist's empty one (hist merges axes of equal
        # metadata only).
        labels = [label or "" for label in self._labels]
        described = list(zip(self._edges(), self._axis_names(), labels, kinds))
        return _interop.BoostParts(described, c.flow, c.values, c.variances)

    def _to_uhi_(self) -> dict[str, Any]:
        """This histogram in UHI's serialization schema (``uhi.io.json``, ``zip``, ``hdf5``)."""
        from polars_gpu_hist._histogram import serialization

        return serialization.to_uhi(self)

    @classmethod
    def _from_uhi_(cls, data: dict[str, Any], /) -> Self:
        """A histogram from UHI's serialization schema (what boost-histogram and hist write)."""
        from polars_gpu_hist._histogram import serialization

        out: Self = serialization.from_uhi(cls, data)
        return out
