"""A Histogram's axes as scikit-hep reads them (UHI ``PlottableAxis``, boost-histogram's and
hist's axis API): the edges, centres and widths of the bins, the axis' name and label, its
traits, where a value falls (``index``), and how it was binned (:class:`AxisKind`), which
:mod:`.interop` turns into boost's ``Regular``, ``Integer`` or ``Variable`` axis.

The edges are numpy's (the contract): for equal bins, ``numpy.linspace``'s, which differ from
boost's ``Regular`` edges by a rounding at some bins; ``index`` (and so UHI's ``loc``) bins a
value by them, as a fill does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal, NamedTuple

import numpy as np


class AxisKind(NamedTuple):
    """How an axis was binned: ``"regular"`` (``bins`` equal bins over ``[lo, hi]``: boost's
    ``Regular(bins, lo, hi)``), ``"integer"`` (one bin per integer of ``[lo, hi)``: boost's
    ``Integer(lo, hi)``) or ``"variable"`` (explicit edges)."""

    kind: Literal["regular", "integer", "variable"]
    bins: int = 0
    lo: float = 0.0
    hi: float = 0.0

    @staticmethod
    def of_edges(edges: np.ndarray) -> AxisKind:
        """The kind of an axis known by its edges alone (a histogram pickled before axes kept
        their kind): regular where the edges are numpy's equal bins, else variable."""
        n = len(edges) - 1
        lo, hi = float(edges[0]), float(edges[-1])
        if n >= 1 and np.all(np.isfinite(edges)):
            for dtype in (np.float64, np.float32):
                equal = np.linspace(dtype(lo), dtype(hi), n + 1).astype(np.float64)
                if np.array_equal(equal, edges):
                    return AxisKind("regular", n, lo, hi)
        return AxisKind("variable", n)

    def sliced(self, start: int, stop: int, merge: int) -> AxisKind:
        """The kind of bins ``start:stop`` merged ``merge`` at a time, as boost slices and
        rebins its axes: a regular axis stays regular over boost's own edges at those bins."""
        bins = (stop - start) // merge
        if self.kind == "regular":
            return AxisKind("regular", bins, boost_edge(self, start), boost_edge(self, stop))
        if self.kind == "integer" and merge == 1:
            return AxisKind("integer", bins, self.lo + start, self.lo + stop)
        return AxisKind("variable", bins)


def boost_edge(kind: AxisKind, i: int) -> float:
    """Edge ``i`` of boost's ``Regular(bins, lo, hi)``, computed as boost computes it
    (``regular::value``: ``(1 - z) * min + z * max`` with ``z = i / bins``)."""
    z = i / kind.bins
    return (1.0 - z) * kind.lo + z * (kind.lo + (kind.hi - kind.lo))


class Traits:
    """An axis' traits, as UHI and boost-histogram name them: flow bins on both sides (fills
    count what falls outside); ordered; neither circular nor growing; an integer axis is
    discrete (its bins hold values, not intervals)."""

    circular = False
    growth = False
    ordered = True

    def __init__(self, flow: bool = True, discrete: bool = False) -> None:
        self.underflow = self.overflow = flow
        self.discrete = discrete
        self.continuous = not discrete

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Traits):
            return NotImplemented
        return (self.underflow, self.discrete) == (other.underflow, other.discrete)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"Traits(underflow={self.underflow}, overflow={self.overflow}, circular=False, "
            f"growth=False, continuous={self.continuous}, ordered=True)"
        )


class Axis:
    """One axis of a histogram: its bins (``axis[i]``: the interval ``(lo, hi)``, or the value
    of an integer axis' bin), ``edges``, ``centers``, ``widths``, ``name`` and ``label``,
    ``traits``, and ``index(value)``, the bin a value falls in (``-1`` below, ``len`` above)."""

    def __init__(
        self,
        edges: np.ndarray,
        name: str,
        flow: bool = True,
        label: str | None = None,
        kind: AxisKind | None = None,
        closed: str = "left",
    ) -> None:
        self.edges = edges
        self.name = name
        self.label = label or name
        self.kind = kind if kind is not None else AxisKind.of_edges(edges)
        self.closed = closed
        self.traits = Traits(flow, discrete=self.kind.kind == "integer")

    @property
    def centers(self) -> np.ndarray:
        """The middle of each bin (boost's ``centers``: ``v + 0.5`` on an integer axis)."""
        e = self.edges
        # Halves first: the midpoint of two large edges stays finite.
        return e[:-1] / 2 + e[1:] / 2

    @property
    def widths(self) -> np.ndarray:
        return np.diff(self.edges)

    @property
    def size(self) -> int:
        """The number of bins, flow bins left out."""
        return len(self)

    @property
    def extent(self) -> int:
        """The number of bins with the flow bins."""
        return len(self) + 2 * int(self.traits.underflow)

    @property
    def metadata(self) -> dict[str, Any]:
        return {"name": self.name, "label": self.label}

    def index(self, value: Any) -> Any:
        """The bin ``value`` falls in by this axis' edges and closed side, as a fill bins it:
        ``-1`` below the first edge, ``len(axis)`` above the last (and for NaN); an array for
        an array of values."""
        x = np.asarray(value, dtype=np.float64)
        e, n = self.edges, len(self)
        if self.closed == "left":
            i = np.searchsorted(e, x, side="right") - 1
            i = np.where(x == e[-1], n - 1, i)
        else:
            i = np.searchsorted(e, x, side="left") - 1
            i = np.where(x == e[0], 0, i)
        i = np.where(np.isnan(x), n, np.clip(i, -1, n))
        return int(i) if i.ndim == 0 else i

    def value(self, i: int) -> float:
        """Edge ``i`` (boost's ``axis.value``)."""
        return float(self.edges[i])

    def bin(self, i: int) -> Any:
        return self[i]

    def __len__(self) -> int:
        return len(self.edges) - 1

    def __getitem__(self, index: int) -> Any:
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"bin {index} of an axis of {n} bins")
        index %= n
        if self.traits.discrete:
            return int(self.edges[index])
        return float(self.edges[index]), float(self.edges[index + 1])

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Axis):
            return NotImplemented
        return np.array_equal(self.edges, other.edges)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        k = self.kind
        named = f", name={self.name!r}" + (
            f", label={self.label!r}" if self.label != self.name else ""
        )
        if k.kind == "regular":
            return f"Regular({k.bins}, {k.lo:.6g}, {k.hi:.6g}{named})"
        if k.kind == "integer":
            return f"Integer({int(k.lo)}, {int(k.hi)}{named})"
        return f"Variable({len(self)} bins on [{self.edges[0]:.6g}, {self.edges[-1]:.6g}]{named})"


class AxesTuple(tuple):  # type: ignore[type-arg]
    """The axes of a histogram (boost's ``AxesTuple``, hist's ``NamedAxesTuple``): a tuple of
    :class:`Axis` that also takes an axis' name (``h.axes["pt"]``) and gives each attribute of
    every axis (``h.axes.edges``, ``.centers``, ``.widths``, ``.name``, ``.label``, ``.size``)."""

    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, str):
            for axis in self:
                if axis.name == item:
                    return axis
            names = [a.name for a in self]
            raise KeyError(f"no axis named {item!r}: the axes are {names}")
        return super().__getitem__(item)

    def _each(self, attribute: str) -> tuple[Any, ...]:
        return tuple(getattr(a, attribute) for a in self)

    @property
    def edges(self) -> tuple[np.ndarray, ...]:
        return self._each("edges")

    @property
    def centers(self) -> tuple[np.ndarray, ...]:
        return self._each("centers")

    @property
    def widths(self) -> tuple[np.ndarray, ...]:
        return self._each("widths")

    @property
    def name(self) -> tuple[str, ...]:
        return self._each("name")

    @property
    def label(self) -> tuple[str, ...]:
        return self._each("label")

    @property
    def size(self) -> tuple[int, ...]:
        return self._each("size")

    @property
    def extent(self) -> tuple[int, ...]:
        return self._each("extent")
