"""Equi-height bins: ``bins=quantile_bins(k)``, edges at the data's own quantiles.

The edges are ``numpy.quantile(values, numpy.linspace(0, 1, k + 1), method=method)`` of the
column's valid values (nulls and NaN left out, as ``numpy.nanquantile`` leaves NaN out), computed
by numpy itself, so they are numpy's to the bit under every method it names. Quantiles need
every value: the column is in memory (a Series, an array, a frame's column, or a scan's column
read into memory first). The counts then follow from the edges as for any explicit edges
(numpy's rule for repeated edges: a tie that spans several quantiles leaves empty bins).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, cast

import polars as pl

from polars_gpu_hist import _native

MAX_BINS: int = _native.MAX_BINS

QuantileMethod = Literal[
    "inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf",
    "hazen", "weibull", "linear", "median_unbiased", "normal_unbiased", "lower", "higher",
    "midpoint", "nearest",
]  # fmt: skip
METHODS: tuple[str, ...] = QuantileMethod.__args__  # type: ignore[attr-defined]


@dataclass(frozen=True)
class QuantileBins:
    """``k`` equi-height bins: edges at the ``k + 1`` quantiles ``0, 1/k, ..., 1`` of the
    data, by ``numpy.quantile``'s ``method`` (see :func:`quantile_bins`)."""

    count: int
    method: QuantileMethod = "linear"

    def edges(self, data: Any) -> list[Any]:
        """The edges over ``data`` (a Series or array-like on the host): numpy's quantiles of
        its valid values, as Python numbers (the histogram's explicit edges)."""
        __tracebackhide__ = True  # IPython shows the caller's frame
        import numpy as np

        values = _valid_values(data)
        if values.size == 0:
            raise ValueError(
                "`bins=quantile_bins(...)` needs at least one valid value (not null, not NaN) "
                "to take quantiles of: the column has none"
            )
        qs = np.linspace(0.0, 1.0, self.count + 1)
        with np.errstate(invalid="ignore"):
            edges = np.quantile(values, qs, method=self.method)
        if edges.dtype.kind == "f" and np.isnan(edges).any():
            # numpy interpolates between infinities (inf - inf): its histogram of such edges
            # gives negative counts; refused here instead.
            raise ValueError(
                f"`bins=quantile_bins({self.count}, method={self.method!r})` gives a NaN edge: "
                f"the data holds infinities, which {self.method!r} interpolates between; use a "
                'method that picks values ("lower", "higher", "nearest", '
                '"inverted_cdf") or leave the infinities out'
            )
        return cast(list[Any], edges.tolist())


def quantile_bins(k: int, method: QuantileMethod = "linear") -> QuantileBins:
    """Equi-height bins for ``bins=``: ``k`` bins whose edges are the data's quantiles
    ``0, 1/k, ..., 1``, exactly as ``numpy.quantile(values, numpy.linspace(0, 1, k + 1),
    method=method)`` gives them over the valid values (nulls and NaN left out).

    Every bin then holds about ``n / k`` values; ties make repeated edges (and empty bins, as
    ``numpy.histogram`` counts them). Quantiles need every value in memory: expressions take
    the whole column (per group in ``group_by().agg()``), and ``histogram_scan`` reads the
    column into memory first. ``range`` cannot be combined with them. For the mergeable
    :class:`Histogram`, whose edges are fixed, take ``quantile_bins(k).edges(sample)``.

    Examples
    --------
    >>> import polars_gpu_hist as gh
    >>> s = pl.Series("x", [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 100.0])
    >>> gh.quantile_bins(4).edges(s)
    [1.0, 2.75, 4.5, 6.25, 100.0]
    >>> gh.histogram(s, bins=gh.quantile_bins(4))["count"].to_list()
    [2, 2, 2, 2]
    """
    __tracebackhide__ = True  # IPython shows the caller's frame
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"`quantile_bins` takes a number of bins (an int), got {k!r}")
    if not 1 <= k <= MAX_BINS:
        raise ValueError(f"`quantile_bins` takes 1 to {MAX_BINS} bins, got {k}")
    if method not in METHODS:
        raise ValueError(
            f"`method` must be one of numpy.quantile's methods ({', '.join(METHODS)}), got "
            f"{method!r}"
        )
    return QuantileBins(k, method)


_NUMPY_INTEGERS = (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64)


def _valid_values(data: Any) -> Any:
    """The valid values of host data as a flat numpy array: nulls and NaN left out."""
    import numpy as np

    if isinstance(data, pl.Series):
        if not (data.dtype.is_float() or data.dtype in _NUMPY_INTEGERS):
            raise TypeError(
                f"`bins=quantile_bins(...)` needs a numeric column numpy holds (integers up to "
                f"64 bits, floats), got {data.dtype}: cast it (to Float64), or give explicit "
                "edges for temporal and other columns"
            )
        data = data.drop_nulls()
        if data.dtype.is_float():
            data = data.drop_nans()
        return data.to_numpy()
    values = np.asarray(data).ravel()
    if values.dtype.kind not in "iuf":
        raise TypeError(
            f"`bins=quantile_bins(...)` needs numbers, got an array of dtype {values.dtype}"
        )
    return values[~np.isnan(values)] if values.dtype.kind == "f" else values


def resolve(bins: Any, data: Any, range: Any) -> Any:
    """``bins`` with quantile bins replaced by their edges over ``data`` (other bins as they
    are); ``range`` is refused beside them."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    if not isinstance(bins, QuantileBins):
        return bins
    refuse_range(range)
    return bins.edges(data)


def refuse_range(range: Any) -> None:
    """``range`` beside quantile bins: refused where it is written."""
    if range is not None:
        raise ValueError(
            "`range` cannot be combined with `bins=quantile_bins(...)`: the edges are the "
            "data's own quantiles (filter the column first)"
        )


def host_copy(data: Any) -> Any:
    """A host copy of an array in GPU memory, for its quantiles (CuPy's ``get``, PyTorch's
    ``cpu``, Numba's ``copy_to_host``): the edges are numpy's, the counting stays on the GPU."""
    for name in ("get", "copy_to_host"):
        method = getattr(data, name, None)
        if callable(method):
            return method()
    cpu = getattr(data, "cpu", None)
    if callable(cpu):
        return cpu().numpy()
    raise TypeError(
        f"`bins=quantile_bins(...)` needs a host copy of this {type(data).__name__} GPU array "
        "for its quantiles: give a CuPy, PyTorch or Numba array, or its host copy"
    )
