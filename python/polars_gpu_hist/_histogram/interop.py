"""scikit-hep's histograms from a :class:`polars_gpu_hist.Histogram`: ``boost_histogram``'s
``Histogram`` and ``hist``'s ``Hist``, with the same edges, counts, variances and flow.

Both packages are optional and imported only here, when a conversion is asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np


class BoostParts(NamedTuple):
    """What a conversion needs of a histogram: each axis' edges, name and label; whether it
    keeps its flow per bin (one axis); the counts (with the flow bins where kept) or, weighted,
    the sums of weights and of their squares (with the flow bins where kept)."""

    axes: Sequence[tuple[np.ndarray, str, str]]
    flow: bool
    counts: np.ndarray | None
    values: np.ndarray | None
    variances: np.ndarray | None


def to_boost(parts: BoostParts) -> Any:
    """A ``boost_histogram.Histogram`` of ``parts`` (see :meth:`Histogram.to_boost`)."""
    bh = _require("boost_histogram", "boost-histogram")
    axes = [_boost_axis(bh, edges, name, label, parts.flow) for edges, name, label in parts.axes]
    weighted = parts.counts is None
    storage = bh.storage.Weight() if weighted else bh.storage.Int64()
    out = bh.Histogram(*axes, storage=storage)
    view = out.view(flow=True)
    if weighted:
        view.value = parts.values
        view.variance = parts.variances
    else:
        view[...] = parts.counts
    return out


def to_hist(parts: BoostParts) -> Any:
    """A ``hist.Hist`` of ``parts`` (see :meth:`Histogram.to_hist`)."""
    hist = _require("hist", "hist")
    return hist.Hist(to_boost(parts))


def _boost_axis(bh: Any, edges: np.ndarray, name: str, label: str, flow: bool) -> Any:
    """A ``Regular`` axis where boost's own edges of one are ours to the bit, else a
    ``Variable`` one of our edges."""
    options: dict[str, Any] = {
        "underflow": flow,
        "overflow": flow,
        "__dict__": {"name": name, "label": label},
    }
    n = len(edges) - 1
    if np.all(np.isfinite(edges)):
        regular = bh.axis.Regular(n, float(edges[0]), float(edges[-1]), **options)
        if np.array_equal(regular.edges, edges):
            return regular
    return bh.axis.Variable(edges, **options)


def _require(module: str, package: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(
            f"this conversion needs the {package} package: pip install {package}"
        ) from e
