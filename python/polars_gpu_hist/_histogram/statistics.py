"""Statistics of binned data (one axis: edges and the contents of its bins), for
:class:`polars_gpu_hist.Histogram`'s ``quantile``, ``mean`` and ``std``.

The histogram stands for the *bin-interpolated distribution*: each bin's contents spread evenly
over the bin. Its CDF is piecewise linear through ``(edges[i], cumulative[i] / total)``, so

- ``quantile(q)`` inverts that CDF: the bin where the cumulative contents pass ``q * total``,
  and the point of it that far in, linearly. Where the CDF is flat (empty bins), the largest
  such point is taken (the start of the next non-empty bin), as numpy's ``"linear"`` quantile
  of the sample that spreads every bin's ``c`` counts at ``a + j * (b - a) / c`` (``j < c``)
  plus the last edge gives at ``q = k / total``; between those points the two agree wherever
  the sample has no gap, and within a bin ours stays on the bin;
- ``mean`` and ``std`` are those of the bin centres, weighted by the contents (the data's own
  mean and spread are not kept: the bin centres stand for them).

Only the bins count: the under- and overflow, NaN and null rows (:attr:`Histogram.flow`) are
left out. An empty histogram (total 0) has no quantile, mean or spread: NaN, with a
``RuntimeWarning`` as numpy's ``mean`` of an empty array gives.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np


def check_q(q: Any) -> np.ndarray:
    """``q`` as a float64 array, every value in [0, 1] (``ValueError`` naming ``q`` otherwise)."""
    try:
        qs = np.asarray(q, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            f"`q` must be a number in [0, 1] or a sequence of them, got {q!r}"
        ) from None
    if not np.all((qs >= 0) & (qs <= 1)):  # NaN fails too
        raise ValueError(f"`q` must be in [0, 1] (0.5 is the median), got {q!r}")
    return qs


# q * total rounds (88 / 138 * 138 is 87.99999999999999): a target within a few ulps of the total
# below a cumulative count is taken as that count, so that q = k / total names the k-th count,
# the end of a flat stretch of the CDF, where numpy's sample puts it (the next counted bin's
# start), and not a point before the stretch.
TIE_SLACK = 2.0**-50


def quantile(edges: np.ndarray, contents: np.ndarray, q: Any) -> float | np.ndarray:
    """The ``q``-quantile(s) of the bin-interpolated distribution (see the module's docstring):
    a float for a scalar ``q``, an array of ``q``'s shape otherwise."""
    qs = check_q(q)
    c = _contents(contents, "quantile")
    cumulative = np.cumsum(c)
    total = cumulative[-1] if len(c) else 0.0
    if not total > 0:
        _warn_empty("quantile")
        out = np.full(qs.shape, np.nan)
        return float(out) if out.ndim == 0 else out
    target = qs * total
    # A target just short of a cumulative count is that count (TIE_SLACK).
    at = np.minimum(np.searchsorted(cumulative, target, side="left"), len(c) - 1)
    target = np.where(cumulative[at] - target <= total * TIE_SLACK, cumulative[at], target)
    # The first bin whose cumulative contents pass the target (the largest point of a flat
    # stretch); q = 1 (or rounding past the total) ends at the last non-empty bin's end.
    i = np.searchsorted(cumulative, target, side="right")
    last = int(np.flatnonzero(c)[-1])
    inside = i <= last
    i = np.minimum(i, last)
    before = cumulative[i] - c[i]
    # Clipped: sums of weights round, and a point must stay on its bin.
    fraction = np.where(inside, np.clip((target - before) / c[i], 0.0, 1.0), 1.0)
    out = edges[i] + fraction * (edges[i + 1] - edges[i])
    return float(out) if out.ndim == 0 else out


def mean(edges: np.ndarray, contents: np.ndarray) -> float:
    """The mean of the bin centres, weighted by the contents."""
    c = _contents(contents, "mean")
    total = c.sum()
    if total == 0:
        _warn_empty("mean")
        return float("nan")
    return float(np.dot(c, _centres(edges)) / total)


def std(edges: np.ndarray, contents: np.ndarray, ddof: int = 0) -> float:
    """The standard deviation of the bin centres, weighted by the contents, divided by
    ``total - ddof`` as numpy's ``std`` (``ddof=0``: the population's)."""
    if isinstance(ddof, bool) or not isinstance(ddof, (int, np.integer)) or ddof < 0:
        raise ValueError(f"`ddof` must be an int >= 0, got {ddof!r}")
    c = _contents(contents, "std")
    total = c.sum()
    if total - ddof <= 0:
        _warn_empty("std", f" (total {total:g}, ddof {ddof})" if total else "")
        return float("nan")
    centres = _centres(edges)
    centre = np.dot(c, centres) / total
    return float(np.sqrt(np.dot(c, (centres - centre) ** 2) / (total - ddof)))


def _contents(contents: np.ndarray, what: str) -> np.ndarray:
    c = np.asarray(contents, dtype=np.float64)
    if np.any(c < 0):
        raise ValueError(
            f"{what}: a bin holds a negative sum of weights; the contents of a histogram with "
            "negative weights are no distribution"
        )
    return c


def _centres(edges: np.ndarray) -> np.ndarray:
    # Halves first: the midpoint of two large edges stays finite.
    return edges[:-1] / 2 + edges[1:] / 2


def _warn_empty(what: str, detail: str = "") -> None:
    warnings.warn(
        f"{what} of an empty histogram{detail}: nothing was counted in its bins, the result is NaN",
        RuntimeWarning,
        stacklevel=4,
    )


# Integer axes: each bin holds one value, v (boost's Integer axis; its centre v + 0.5 is only
# where a plot puts it). Their statistics are the sample's own: np.quantile of the values
# repeated by their counts, by numpy's method, and the mean and spread of the values.
DISCRETE_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def discrete_quantile(
    values: np.ndarray, contents: np.ndarray, q: Any, method: str, weighted: bool
) -> float | np.ndarray:
    """numpy's ``np.quantile(sample, q, method=method)`` of the sample that holds each value
    ``contents`` times (weighted: ``np.quantile(values, q, weights=contents,
    method="inverted_cdf")``, the one method numpy weights), without making the sample."""
    qs = check_q(q)
    if method not in DISCRETE_METHODS:
        raise ValueError(
            f"method={method!r}: an integer axis' quantile takes one of numpy's methods "
            f"{DISCRETE_METHODS}"
        )
    if weighted and method != "inverted_cdf":
        raise ValueError(
            f"method={method!r} takes no weights in numpy: a weighted histogram's quantile of an "
            'integer axis is method="inverted_cdf"'
        )
    c = _contents(contents, "quantile")
    cumulative = np.cumsum(c)
    total = cumulative[-1] if len(c) else 0.0
    if not total > 0:
        _warn_empty("quantile")
        out = np.full(qs.shape, np.nan)
        return float(out) if out.ndim == 0 else out

    def at(k: np.ndarray) -> np.ndarray:
        """The ``k``-th value of the sorted sample (0-based)."""
        return values[np.minimum(np.searchsorted(cumulative, k, side="right"), len(c) - 1)]

    n = total
    if method == "inverted_cdf":
        # The smallest value whose cumulative share reaches q (numpy's, weighted or not).
        found = np.searchsorted(cumulative, qs * n, side="left")
        first = int(np.flatnonzero(c)[0])
        out = values[np.clip(np.maximum(found, first), 0, len(c) - 1)]
    elif method == "linear":
        h = (n - 1) * qs
        lo = np.floor(h)
        gamma = h - lo
        a, b = at(lo), at(np.minimum(lo + 1, n - 1))
        diff = b - a
        out = np.where(gamma >= 0.5, b - diff * (1 - gamma), a + diff * gamma)
    else:
        h = (n - 1) * qs
        if method == "lower":
            out = at(np.floor(h))
        elif method == "higher":
            out = at(np.ceil(h))
        elif method == "nearest":
            out = at(np.around(h))
        else:
            out = (at(np.floor(h)) + at(np.ceil(h))) / 2
    out = np.asarray(out, dtype=np.float64)
    return float(out) if out.ndim == 0 else out


def discrete_mean(values: np.ndarray, contents: np.ndarray) -> float:
    """The mean of the values each bin holds, weighted by the contents."""
    c = _contents(contents, "mean")
    total = c.sum()
    if total == 0:
        _warn_empty("mean")
        return float("nan")
    return float(np.dot(c, values) / total)


def discrete_std(values: np.ndarray, contents: np.ndarray, ddof: int = 0) -> float:
    """The standard deviation of the values each bin holds, as numpy's ``std``."""
    if isinstance(ddof, bool) or not isinstance(ddof, (int, np.integer)) or ddof < 0:
        raise ValueError(f"`ddof` must be an int >= 0, got {ddof!r}")
    c = _contents(contents, "std")
    total = c.sum()
    if total - ddof <= 0:
        _warn_empty("std", f" (total {total:g}, ddof {ddof})" if total else "")
        return float("nan")
    centre = np.dot(c, values) / total
    return float(np.sqrt(np.dot(c, (values - centre) ** 2) / (total - ddof)))
