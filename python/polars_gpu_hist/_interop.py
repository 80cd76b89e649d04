"""scikit-hep's histograms from a :class:`polars_gpu_hist.Histogram`: ``boost_histogram``'s
``Histogram`` and ``hist``'s ``Hist``, with the same edges, counts, variances and flow.

Both packages are optional and imported only here, when a conversion is asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from polars_gpu_hist._accumulator import Histogram


def to_boost(h: Histogram) -> Any:
    """``h`` as a ``boost_histogram.Histogram`` (see :meth:`Histogram.to_boost`)."""
    bh = _require("boost_histogram", "boost-histogram")
    flow = len(h.shape) == 1  # only one axis keeps its flow per bin
    axes = [
        _boost_axis(bh, edges, name, label, flow)
        for edges, name, label in zip(h._edges(), h._axis_names(), h._axis_labels())
    ]
    storage = bh.storage.Weight() if h.weighted else bh.storage.Int64()
    out = bh.Histogram(*axes, storage=storage)
    view = out.view(flow=True)
    if h.weighted:
        view.value = h.values(flow=True)
        view.variance = h.variances(flow=True)
    else:
        counts = np.asarray(h.counts)
        if flow:
            _, _, _, under, over = h._native.flow()[:5]
            counts = np.concatenate([[under], counts, [over]])
        view[...] = counts
    return out


def to_hist(h: Histogram) -> Any:
    """``h`` as a ``hist.Hist`` (see :meth:`Histogram.to_hist`)."""
    hist = _require("hist", "hist")
    return hist.Hist(to_boost(h))


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
