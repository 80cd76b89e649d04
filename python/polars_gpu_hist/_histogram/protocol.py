"""The scikit-hep plotting protocol's pieces (UHI ``PlottableHistogram``) and a small SVG of
the bars, for :class:`polars_gpu_hist.Histogram`."""

from __future__ import annotations

import enum
from typing import Any

import numpy as np


class Kind(str, enum.Enum):
    """What a histogram's values are, as the protocol names it."""

    COUNT = "COUNT"
    MEAN = "MEAN"


class Traits:
    """An axis' traits: ours are neither circular nor discrete (bins are intervals); the axis of
    a 1-D histogram has flow bins (``values(flow=True)``), those of n-D ones do not."""

    circular = False
    discrete = False

    def __init__(self, flow: bool = False) -> None:
        self.underflow = self.overflow = flow


class Axis:
    """One axis of a histogram: its bins as ``(lo, hi)`` intervals, and its ``edges``."""

    def __init__(
        self, edges: np.ndarray, name: str, flow: bool = False, label: str | None = None
    ) -> None:
        self.edges = edges
        self.name = name
        self.label = label or name
        self.traits = Traits(flow)

    def __len__(self) -> int:
        return len(self.edges) - 1

    def __getitem__(self, index: int) -> tuple[float, float]:
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"bin {index} of an axis of {n} bins")
        index %= n
        return float(self.edges[index]), float(self.edges[index + 1])

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Axis):
            return NotImplemented
        return np.array_equal(self.edges, other.edges)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Axis({len(self)} bins on [{self.edges[0]:.6g}, {self.edges[-1]:.6g}])"


class CountsArray(np.ndarray):
    """The counts as a numpy array that may also be called: ``h.counts`` is the array, and
    ``h.counts()`` the plotting protocol's effective counts (float64; ``sum(w)**2 / sum(w**2)``
    for weighted histograms)."""

    effective: np.ndarray | None = None

    def __call__(self) -> np.ndarray:
        if self.effective is not None:
            return self.effective
        return np.asarray(self, dtype=np.float64)

    def __repr__(self) -> str:
        return repr(np.asarray(self))


def svg_bars(values: np.ndarray, width: int = 240, height: int = 90) -> str:
    """The bars of a 1-D histogram as a small inline SVG (bins wider than a pixel merged)."""
    values = np.asarray(values, dtype=np.float64)
    if len(values) > width:
        cut = np.linspace(0, len(values), width + 1).astype(int)
        values = np.add.reduceat(values, cut[:-1])
    top = float(np.max(np.abs(values))) if len(values) else 0.0
    scale = (height - 4) / top if top > 0 else 0.0
    step = width / max(len(values), 1)
    bars = "".join(
        f"<rect x='{i * step:.2f}' y='{height - 2 - max(v, 0) * scale:.2f}' "
        f"width='{max(step - 0.5, 0.5):.2f}' height='{abs(v) * scale:.2f}'/>"
        for i, v in enumerate(values)
    )
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"style='fill:#4c78a8;background:#f7f7f7'>{bars}</svg>"
    )


def svg_heatmap(values: np.ndarray, width: int = 200, height: int = 160) -> str:
    """The cells of a 2-D histogram as a small inline SVG heatmap: x to the right, y upwards,
    darker for larger values (negative sums of weights in red); cells smaller than a few
    pixels merged so that the SVG stays small."""
    values = np.asarray(values, dtype=np.float64)
    nx, ny = values.shape
    # At most one cell per 4 pixels each way: merging sums neighbouring cells.
    for axis, (n, pixels) in enumerate(((nx, width), (ny, height))):
        if n > pixels // 4:
            cut = np.linspace(0, n, pixels // 4 + 1).astype(int)
            values = np.add.reduceat(values, cut[:-1], axis=axis)
    nx, ny = values.shape
    top = float(np.max(np.abs(values))) if values.size else 0.0
    w, h = width / max(nx, 1), height / max(ny, 1)
    cells = []
    for i in range(nx):
        for j in range(ny):
            v = values[i, j]
            if v == 0 or top == 0:
                continue
            colour = "#4c78a8" if v > 0 else "#e45756"
            opacity = 0.08 + 0.92 * abs(v) / top
            cells.append(
                f"<rect x='{i * w:.2f}' y='{height - (j + 1) * h:.2f}' width='{w:.2f}' "
                f"height='{h:.2f}' fill='{colour}' fill-opacity='{opacity:.3f}'/>"
            )
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"style='background:#f7f7f7'>{''.join(cells)}</svg>"
    )
