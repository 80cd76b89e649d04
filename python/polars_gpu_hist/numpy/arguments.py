"""numpy's checks of its histogram functions' arguments, in numpy's order, with numpy's exception
types and messages (the drop-in must raise what the call it replaces raises), and the few
conversions numpy's inputs need before the plugin can take them."""

from __future__ import annotations

import contextlib
import operator
import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import polars as pl

from polars_gpu_hist._args import arguments as _args

# numpy's own messages.
_NOT_AN_ESTIMATOR = "{!r} is not a valid estimator for `bins`"
_WEIGHTED_ESTIMATOR = (
    "Automated estimation of the number of bins is not supported for weighted data"
)
_BINS_TYPE = "`bins` must be an integer, a string, or an array"
_BINS_POSITIVE = "`bins` must be positive, when an integer"
_BINS_MONOTONIC = "`bins` must increase monotonically, when an array"
_BINS_1D = "`bins` must be 1d, when an array"
_RANGE_ORDER = "max must be larger than min in range parameter."
_RANGE_FINITE = "supplied range of [{}, {}] is not finite"
WEIGHTS_SHAPE = "weights should have the same shape as a."
_TOO_MANY_BINS = "Too many bins for data range. Cannot create {} finite-sized bins."
_DATA_RANGE = "autodetected range of [{}] is not finite"
_DD_BINS_DIMENSION = "The dimension of bins must be equal to the dimension of the sample x."
_DD_RANGE_DIMENSION = "range argument must have one entry per dimension"
_DD_WEIGHTS_LENGTH = "The weights and list don't have the same length."
_DD_WEIGHTS_DEEP = "object too deep for desired array"
_DD_WEIGHTS_SHALLOW = "object of too small depth for desired array"


def shape(data: Any) -> tuple[int, ...]:
    """The shape numpy sees (device arrays and Series without a copy)."""
    if isinstance(data, pl.Series):
        return (len(data),)
    if hasattr(data, "shape") and not isinstance(data, np.ndarray):
        return tuple(data.shape)
    return np.shape(data)


def check_weights(a: Any, weights: Any) -> None:
    """numpy.histogram's rule: weights of exactly `a`'s shape (then both are flattened)."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    if weights is not None and shape(weights) != shape(a):
        raise ValueError(WEIGHTS_SHAPE)


def refuse_text_weights(weights: np.ndarray, summed: str) -> None:
    """Weights of text (str, bytes) or void: numpy fails to sum them with a `TypeError`, and so
    does this module, naming the dtype (they are never parsed as numbers)."""
    if weights.dtype.kind in "USV":
        raise TypeError(
            f"`weights` of dtype {weights.dtype} cannot be {summed}: give numeric weights "
            "(numpy raises TypeError for them too)"
        )


def check_bins(bins: Any, weights: Any) -> Any:
    """numpy.histogram's checks of `bins`, in its order; a count comes back as an int (numpy
    takes anything with `__index__`, booleans and numpy integers included)."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    if isinstance(bins, str):
        if bins not in _args.ESTIMATORS:
            # "integer" is the package's own rule, not numpy's.
            raise ValueError(_NOT_AN_ESTIMATOR.format(bins))
        if weights is not None:
            raise TypeError(_WEIGHTED_ESTIMATOR)
        return bins
    dims = np.ndim(bins)
    if dims == 0:
        try:
            count = operator.index(bins)
        except TypeError:
            raise TypeError(_BINS_TYPE) from None
        if count < 1:
            raise ValueError(_BINS_POSITIVE)
        return count
    if dims == 1:
        edges = np.asarray(bins)
        with contextlib.suppress(TypeError):  # edges numpy cannot compare: _args names them
            if np.any(edges[:-1] > edges[1:]):
                raise ValueError(_BINS_MONOTONIC)
        return bins
    raise ValueError(_BINS_1D)


def check_range(range: Any) -> None:
    """numpy's checks of `range` for equal bins: min <= max, both finite. Values numpy cannot
    compare (Python dates, for temporal data) are left to the package's own checks."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    if range is None:
        return
    first, last = range
    with contextlib.suppress(TypeError):
        if first > last:
            raise ValueError(_RANGE_ORDER)
    with contextlib.suppress(TypeError):
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(_RANGE_FINITE.format(first, last))


def check_dd(bins: Any, range: Any, dims: int) -> None:
    """numpy.histogramdd's checks of `bins` and `range`, in its order: one entry of each per
    dimension; a count positive (a string entry fails numpy's `bins[i] < 1`, TypeError) and
    an integer; edges 1-D and never decreasing; the range of equal bins as in `check_range`."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    try:
        entries = len(bins)
    except TypeError:
        bins = [bins] * dims
    else:
        if entries != dims:
            raise ValueError(_DD_BINS_DIMENSION)
    if range is None:
        range = [None] * dims
    elif len(range) != dims:
        raise ValueError(_DD_RANGE_DIMENSION)
    for i, (entry, axis_range) in enumerate(zip(bins, range)):
        if np.ndim(entry) == 0:
            if entry < 1:
                raise ValueError(f"`bins[{i}]` must be positive, when an integer")
            check_range(axis_range)
            try:
                operator.index(entry)
            except TypeError:
                raise TypeError(f"`bins[{i}]` must be an integer, when a scalar") from None
        elif np.ndim(entry) == 1:
            edges = np.asarray(entry)
            with contextlib.suppress(TypeError):
                if np.any(edges[:-1] > edges[1:]):
                    raise ValueError(f"`bins[{i}]` must be monotonically increasing, when an array")
        else:
            raise ValueError(f"`bins[{i}]` must be a scalar or 1d array")


def check_dd_weights(rows: int, weights: Any) -> None:
    """numpy.histogramdd's weights (its `bincount`'s rule): one per row, flat."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    if weights is None:
        return
    dims = len(shape(weights))
    if dims == 0:
        raise ValueError(_DD_WEIGHTS_SHALLOW)
    if dims > 1:
        raise ValueError(_DD_WEIGHTS_DEEP)
    if shape(weights)[0] != rows:
        raise ValueError(_DD_WEIGHTS_LENGTH)


@contextlib.contextmanager
def numpy_errors(dtype: Any = np.float64) -> Iterator[None]:
    """The plugin's refusals that depend on the data, as numpy raises them: `ValueError` with
    numpy's message, its numbers as numpy prints scalars of the data's `dtype` (the plugin's
    text stays attached as the cause)."""
    try:
        yield
    except ValueError as e:
        text = str(e)
        found = re.search(r"too many bins for the data range: (\d+) equal bins", text)
        if found:
            raise ValueError(_TOO_MANY_BINS.format(found[1])) from e
        found = re.search(r"the range taken from the data, \[(.*?)\], is not finite", text)
        if found:
            kind = _float_type(dtype)
            ends = ", ".join(str(kind(float(v))) for v in found[1].split(", "))
            raise ValueError(_DATA_RANGE.format(ends)) from e
        raise


def _float_type(dtype: Any) -> Any:
    """The numpy scalar type that prints a range of data of `dtype` (numpy, CuPy or PyTorch) as
    numpy does: its own float type, else float64."""
    try:
        found = np.dtype(str(dtype).removeprefix("torch."))
    except TypeError:
        return np.float64
    return found.type if found.kind == "f" else np.float64


# The units of numpy's datetime64 (kind "M") and timedelta64 ("m") that Polars takes as they are.
_POLARS_UNITS = {"M": ("D", "ms", "us", "ns"), "m": ("ms", "us", "ns")}


def temporal(x: np.ndarray) -> np.ndarray:
    """A datetime64/timedelta64 array in a unit Polars takes: as it is, or converted exactly
    (datetimes in weeks, months or years to days; other fixed lengths to milliseconds, or to
    their own unit for multiples of one), or refused where no unit holds the values exactly."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    kind = x.dtype.kind
    if kind not in "mM":
        return x
    unit, count = np.datetime_data(x.dtype)
    if count == 1 and unit in _POLARS_UNITS[kind]:
        return x
    name = "datetime64" if kind == "M" else "timedelta64"
    if kind == "M" and unit in ("Y", "M", "W", "D"):
        target = "D"
    elif unit in ("ms", "us", "ns"):
        target = unit
    elif unit in ("W", "D", "h", "m", "s"):
        target = "ms"
    else:
        # Durations of months or years have no fixed length; units finer than ns none in Polars.
        raise ValueError(
            f"`a` is {x.dtype}, which no Polars unit holds exactly: convert it to "
            f"{name}[ms], [us] or [ns] first"
        )
    converted = x.astype(f"{name}[{target}]")
    exact = (converted.astype(x.dtype) == x) | np.isnat(x)
    if not exact.all():
        raise ValueError(
            f"`a` holds {x.dtype} values beyond what {name}[{target}] holds: convert it to "
            "a coarser unit first"
        )
    return converted


def refuse_temporal_equal_bins(dtype: np.dtype, bins: Any) -> None:
    """numpy makes no equal bins (a count or an estimator) for datetime64 or timedelta64
    data: its `linspace` does not take them. Neither does this module: they need edges."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    if dtype.kind in "mM" and (isinstance(bins, str) or np.ndim(bins) == 0):
        raise TypeError(
            f"`bins` must be edges for {dtype} data: numpy makes no equal bins of datetimes "
            f"or durations (give {dtype} edges, or histogram the integers a.view('i8'))"
        )


def long_double_edges(
    bins: Any, range: Any, a_dtype: np.dtype, strict: bool = True
) -> np.ndarray | None:
    """numpy's edges where they are long doubles finer than float64 (a range of
    `np.longdouble` scalars for a count of bins, or long-double edges), else None; `strict`:
    numpy.histogram's refusal of equal bins that collapse (histogramdd takes them). The plugin
    compares in float64: `directed` turns these edges into float64 ones that place every
    float64 value as the long doubles do."""
    if np.finfo(np.longdouble).nmant <= np.finfo(np.float64).nmant:
        return None  # long double is float64 here
    if isinstance(bins, str):
        return None
    if np.ndim(bins) == 1:
        edges = np.asarray(bins)
        return edges if edges.dtype == np.longdouble else None
    if range is None:
        return None
    lo, hi = range
    bin_type = np.result_type(lo, hi, np.empty(0, a_dtype))
    if bin_type != np.longdouble:
        return None
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    edges = np.linspace(lo, hi, operator.index(bins) + 1, endpoint=True, dtype=bin_type)
    if strict and np.any(edges[:-1] >= edges[1:]):
        raise ValueError(_TOO_MANY_BINS.format(operator.index(bins)))
    return edges


def directed(edges: np.ndarray) -> tuple[np.ndarray, bool]:
    """Float64 edges that place float64 values as long-double `edges` do: `x >= e` and `x < e`
    hold exactly when they hold against the float64 at or above `e`; `x <= e_n` (the last bin's
    end) against the float64 at or below it. True when no float64 lies in the last bin at all
    (its two edges fall between the same neighbours): its count must then be zero."""
    nearest = edges.astype(np.float64)
    out = np.where(nearest < edges, np.nextafter(nearest, np.inf), nearest)
    last = nearest[-1] if nearest[-1] <= edges[-1] else np.nextafter(nearest[-1], -np.inf)
    empty_last = len(out) > 1 and last < out[-2]
    out[-1] = out[-2] if empty_last else last
    return out, bool(empty_last)
