"""A histogram's contents with the flow bins of every axis (boost-histogram's
``view(flow=True)``): read from the native histogram, and written back into a new one, so that
slices, projections, rebinning, scaling and assignments are numpy operations on whole arrays.

The native histogram keeps the bins, the flow (rows by reason) and, for several axes, the flow
cells: the cells of the grid with a flow bin on each side of every axis that are not bins, in
that grid's row-major order (``numpy``'s boolean indexing order). NaN rows are in no cell: they
are :attr:`Histogram.nan`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import polars as pl

from polars_gpu_hist import _native

# (rows, null, nan, underflow, overflow, underflow weight, overflow weight, their squares).
FlowTuple = tuple[int, int, int, int, int, float, float, float, float]


class Contents(NamedTuple):
    """The values (uint64 counts, or float64 sums of weights) and, weighted, the sums of the
    squared weights, each of shape ``(n + 2, m + 2, ...)`` where ``flow`` (the flow bins first
    and last on every axis) or of the bins' shape where not (flow cells not known)."""

    values: np.ndarray
    variances: np.ndarray | None
    flow: bool

    def scaled(self, factor: float) -> Contents:
        """The contents times ``factor``: sums of weights, their variances times its square."""
        values = self.values.astype(np.float64) * factor
        variances = self.values if self.variances is None else self.variances
        return Contents(values, variances.astype(np.float64) * factor**2, self.flow)

    def bins(self) -> tuple[np.ndarray, np.ndarray | None]:
        """The values and variances of the bins alone."""
        if not self.flow:
            return self.values, self.variances
        inner = (slice(1, -1),) * self.values.ndim
        return self.values[inner], None if self.variances is None else self.variances[inner]


def outside(shape: tuple[int, ...]) -> np.ndarray:
    """The flow cells of the grid with flow bins: a boolean array of ``(n + 2, ...)``."""
    mask = np.ones(tuple(n + 2 for n in shape), dtype=bool)
    mask[(slice(1, -1),) * len(shape)] = False
    return mask


def read(core: _native.Histogram) -> Contents:
    """The contents of the native histogram, with the flow bins where they are known."""
    shape = tuple(core.shape)
    values = core.counts().to_numpy().reshape(shape)
    squares = core.squared_weights()
    variances = None if squares is None else squares.to_numpy().reshape(shape)
    cells = core.flow_cells()
    if cells is None:
        return Contents(values, variances, False)
    full = np.zeros(tuple(n + 2 for n in shape), dtype=values.dtype)
    mask = outside(shape)
    inner = (slice(1, -1),) * len(shape)
    full[inner] = values
    full[mask] = cells[0].to_numpy()
    full_variances = None
    if variances is not None:
        full_variances = np.zeros(full.shape)
        full_variances[inner] = variances
        assert cells[1] is not None, "a weighted histogram's flow cells have squares"
        full_variances[mask] = cells[1].to_numpy()
    return Contents(full, full_variances, True)


def write(core: _native.Histogram, contents: Contents, flow: FlowTuple) -> None:
    """Replaces the contents of ``core`` (a histogram of the contents' bins and storage):
    the bins, their flow cells, and the flow, whose totals below and above are taken from the
    flow cells (a row outside is below or above by the first axis it is outside on, as fills
    classify it). A counting histogram's rows are then its cells' total and the null and NaN
    rows; a weighted one keeps the rows its fills saw (its cells hold weights, not rows)."""
    values, variances = contents.bins()
    weighted = variances is not None
    counts = pl.Series("count", values.reshape(-1).astype(np.float64 if weighted else np.uint64))
    squares = None if variances is None else pl.Series("squares", variances.reshape(-1))
    cells = None
    rows, null, nan, under, over, under_w, over_w, under_q, over_q = flow
    if contents.flow:
        mask = outside(values.shape)
        flow_values = contents.values[mask]
        cells = (
            pl.Series("flow", flow_values.astype(np.float64 if weighted else np.uint64)),
            None if contents.variances is None else pl.Series("squares", contents.variances[mask]),
        )
        below, above = _sides(values.shape)
        if weighted:
            assert contents.variances is not None
            under_w, over_w = _total(contents.values, below), _total(contents.values, above)
            under_q, over_q = _total(contents.variances, below), _total(contents.variances, above)
        else:
            under = int(contents.values[below].sum(dtype=np.uint64))
            over = int(contents.values[above].sum(dtype=np.uint64))
    if not weighted:
        rows = int(values.sum(dtype=np.uint64)) + under + over + null + nan
    core.set_contents(
        counts, squares, (rows, null, nan, under, over, under_w, over_w, under_q, over_q), cells
    )


def _total(values: np.ndarray, mask: np.ndarray) -> float:
    return float(values[mask].sum())


def _sides(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Which flow cells are below and which above: by the first axis a cell is outside on."""
    full = tuple(n + 2 for n in shape)
    below = np.zeros(full, dtype=bool)
    above = np.zeros(full, dtype=bool)
    decided = np.zeros(full, dtype=bool)
    for axis, n in enumerate(shape):
        index = np.arange(n + 2).reshape([-1 if a == axis else 1 for a in range(len(shape))])
        low, high = (index == 0) & ~decided, (index == n + 1) & ~decided
        below |= low
        above |= high
        decided |= low | high
    return below, above
