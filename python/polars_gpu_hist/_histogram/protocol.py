"""The pieces of scikit-hep's protocols (UHI ``PlottableHistogram``, boost-histogram's
accumulators) that :class:`polars_gpu_hist.Histogram` returns: what its values are (``Kind``),
the counts array that is also the protocol's ``counts()``, and one cell of a weighted
histogram (``WeightedSum``)."""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np


class Kind(str, enum.Enum):
    """What a histogram's values are, as the protocol names it."""

    COUNT = "COUNT"
    MEAN = "MEAN"


class WeightedSum(NamedTuple):
    """One cell of a weighted histogram: the sum of the weights and of their squares (its
    variance), as boost-histogram's ``accumulators.WeightedSum``."""

    value: float
    variance: float


class CountsArray(np.ndarray):
    """The counts as a numpy array that may also be called: ``h.counts`` is the array, and
    ``h.counts()`` (``h.counts(flow=True)``) the plotting protocol's effective counts (float64;
    ``sum(w)**2 / sum(w**2)`` for weighted histograms)."""

    effective: Callable[[bool], np.ndarray] | None = None

    def __call__(self, flow: bool = False) -> np.ndarray:
        if self.effective is not None:
            return self.effective(flow)
        return np.asarray(self, dtype=np.float64)

    def __array_finalize__(self, obj: Any) -> None:
        # Slices and arithmetic of the counts are arrays of counts, not of the histogram.
        self.effective = None

    def __repr__(self) -> str:
        return repr(np.asarray(self))
