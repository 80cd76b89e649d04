"""scikit-hep's histograms from a :class:`polars_gpu_hist.Histogram`: ``boost_histogram``'s
``Histogram`` and ``hist``'s ``Hist``, with the same axes (``Regular``, ``Integer`` or
``Variable`` as the histogram was made), counts, variances and flow bins.

Both packages are optional and imported only here, when a conversion is asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from polars_gpu_hist._histogram.axes import AxisKind


class BoostParts(NamedTuple):
    """What a conversion needs of a histogram: each axis' edges, name, label and kind; whether
    the contents have the flow bins of every axis; the values (counts, or sums of weights) and,
    weighted, the sums of their squares."""

    axes: Sequence[tuple[np.ndarray, str, str, AxisKind]]
    flow: bool
    values: np.ndarray
    variances: np.ndarray | None


def to_boost(parts: BoostParts) -> Any:
    """A ``boost_histogram.Histogram`` of ``parts`` (see :meth:`Histogram.to_boost`)."""
    bh = require("boost_histogram", "boost-histogram")
    axes = [boost_axis(bh, *axis, flow=parts.flow) for axis in parts.axes]
    weighted = parts.variances is not None
    out = bh.Histogram(*axes, storage=bh.storage.Weight() if weighted else bh.storage.Int64())
    view = out.view(flow=parts.flow)
    if weighted:
        view.value = parts.values
        view.variance = parts.variances
    else:
        view[...] = parts.values
    return out


def to_hist(parts: BoostParts) -> Any:
    """A ``hist.Hist`` of ``parts`` (see :meth:`Histogram.to_hist`)."""
    hist = require("hist", "hist")
    return hist.Hist(to_boost(parts))


def boost_axis(
    bh: Any, edges: np.ndarray, name: str, label: str, kind: AxisKind, *, flow: bool
) -> Any:
    """boost's axis of that kind: ``Regular(n, lo, hi)`` for equal bins (boost's own edges,
    within a rounding of numpy's), ``Integer(lo, hi)``, else ``Variable`` of the edges."""
    options: dict[str, Any] = {
        "underflow": flow,
        "overflow": flow,
        "__dict__": {"name": name, "label": label},
    }
    n = len(edges) - 1
    if kind.kind == "regular" and kind.bins == n and np.isfinite([kind.lo, kind.hi]).all():
        return bh.axis.Regular(n, kind.lo, kind.hi, **options)
    if kind.kind == "integer" and kind.hi - kind.lo == n:
        return bh.axis.Integer(int(kind.lo), int(kind.hi), **options)
    return bh.axis.Variable(edges, **options)


def require(module: str, package: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(
            f"this conversion needs the {package} package: pip install {package}"
        ) from e
