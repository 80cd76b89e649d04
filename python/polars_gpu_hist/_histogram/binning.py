"""A Histogram's fixed binning from its arguments: numpy's ``bins``/``range`` for one axis or
several, as the native histogram takes them (numbers only: the column's dtype is not known
before the first fill), and the per-axis names."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import polars as pl

from polars_gpu_hist import _native
from polars_gpu_hist._args import arguments as _args
from polars_gpu_hist._args.arguments import Closed, Device
from polars_gpu_hist._histogram.axes import AxisKind
from polars_gpu_hist._histogram.fill import is_sequence
from polars_gpu_hist._native import options as _options


def native(
    axes: list[_options.AccumulatorAxis],
    closed: Closed,
    weights: bool,
    device: Device,
    data_range: _native.DataExtremes | None = None,
) -> _native.Histogram:
    """The native histogram of these axes; ``data_range`` bins a one-axis count over the
    extremes of all the data (``histogram_scan(range="auto")``)."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    arguments: _options.AccumulatorArguments = {
        "axes": axes,
        "closed": _args.choice(closed, "closed", ("left", "right")),
        "weighted": _args.flag(weights, "weights"),
        "device": _args.choice(device, "device", ("auto", "cpu", "gpu")),
    }
    return _native.Histogram(_options.pickled_histogram_arguments(arguments), data_range)


def per_axis(value: Any, d: int, what: str) -> list[str | None]:
    """A name or label per axis: one string for one axis, a sequence of d for several."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    if value is None:
        return [None] * d
    values = [value] if isinstance(value, str) else list(value)
    if len(values) != d or not all(v is None or isinstance(v, str) for v in values):
        raise ValueError(
            f"`{what}` must be a string for one axis or a sequence of {d} strings (or None) for "
            f"{d} axes, got {value!r}"
        )
    return values


def _is_pairs(range: Any) -> bool:
    """Whether ``range`` gives one ``(min, max)`` or ``None`` per axis."""
    if range is None or isinstance(range, (str, bytes)) or not isinstance(range, Sequence):
        return False
    return len(range) > 0 and all(r is None or is_sequence(r) for r in range)


def axes(bins: Any, range: Any) -> list[tuple[_options.AccumulatorAxis, AxisKind]]:
    """The native axes and their kinds: one for ``numpy.histogram``'s arguments, several for
    ``numpy.histogramdd``'s (a range per axis, or a bins entry that is itself a sequence)."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    several = _is_pairs(range) or (
        is_sequence(bins) and len(bins) > 0 and any(is_sequence(b) for b in bins)
    )
    if not several:
        return [axis(bins, range)]
    d = len(range) if _is_pairs(range) else len(bins)
    per_axis = [bins] * d if isinstance(bins, (int, str)) else list(bins)
    ranges = list(range) if range is not None else [None] * d
    if len(per_axis) != d or len(ranges) != d:
        raise ValueError(
            f"`bins` has {len(per_axis)} entries and `range` {len(ranges)}: give one per axis "
            "(or one int `bins` for all)"
        )
    return [axis(b, r) for b, r in zip(per_axis, ranges)]


def axis(bins: Any, range: Any) -> tuple[_options.AccumulatorAxis, AxisKind]:
    """One native axis and its kind: equal bins over ``range``, explicit edges, or
    ``"integer"``: one bin per integer of ``range=(lo, hi)``, both ends included (boost's
    ``Integer(lo, hi + 1)``). Dates, datetimes and durations are taken as the physical values
    of the dtype :func:`temporal_dtype` names (days; microseconds)."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    if isinstance(bins, str) and bins == "integer":
        lo, hi = _integer_range(range)
        native: _options.AccumulatorAxis = {"bins": hi - lo + 1, "range": (lo, hi + 1)}
        return native, AxisKind("integer", hi - lo + 1, lo, hi + 1)
    native = {"bins": numbers(_args.bins(bins), "`bins`"), "range": number_range(range)}
    count, pair = native["bins"], native["range"]
    if isinstance(count, int) and pair is not None:
        return native, AxisKind("regular", count, pair[0], pair[1])
    if isinstance(count, int):
        return native, AxisKind("variable")  # refused when made: equal bins need a range
    edges = count if isinstance(count, list) else count["integers"]
    return native, AxisKind("variable", len(edges) - 1)


# A unit's length in nanoseconds (the units temporal scalars travel in).
_NANOSECONDS = {
    "D": 86_400 * 10**9,
    "h": 3_600 * 10**9,
    "m": 60 * 10**9,
    "s": 10**9,
    "ms": 10**6,
    "us": 10**3,
    "ns": 1,
}


def temporal_dtype(bins: Any, range: Any) -> pl.DataType | None:
    """The dtype an axis of date, datetime or duration edges (or range) is made for: Date,
    Datetime("us") (in UTC where the values are aware), Duration("us"); None for numbers."""
    if isinstance(bins, str):
        return None
    values: list[Any] = []
    if range is not None and not isinstance(range, str):
        values += list(range)
    if not isinstance(bins, int) and bins is not None and is_sequence(bins):
        values += list(bins)
    for v in values:
        if isinstance(v, dt.datetime):
            aware = v.tzinfo is not None and v.utcoffset() is not None
            return pl.Datetime("us", "UTC" if aware else None)
        if isinstance(v, dt.date):
            return pl.Date()
        if isinstance(v, dt.timedelta):
            return pl.Duration("us")
    return None


def _temporal(value: dict[str, Any], what: str) -> int | float:
    """A temporal scalar as a count of the axis' units: days for dates, microseconds else."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    target = "D" if value["temporal"] == "date" else "us"
    ns = int(value["value"]) * _NANOSECONDS[value["unit"]]
    whole, rest = divmod(ns, _NANOSECONDS[target])
    return whole if rest == 0 else ns / _NANOSECONDS[target]


def _integer_range(range: Any) -> tuple[int, int]:
    __tracebackhide__ = True  # IPython shows the caller's frame
    pair = number_range(range)
    if pair is None or not all(float(v).is_integer() for v in pair) or pair[0] > pair[1]:
        raise ValueError(
            '`bins="integer"` (one bin per integer) needs `range=(lo, hi)`, two integers lo <= '
            f"hi, both included: a Histogram's bins are fixed before its first fill, got {range!r}"
        )
    lo, hi = int(pair[0]), int(pair[1])
    if hi - lo + 1 > _args.MAX_BINS:
        raise ValueError(
            f'`bins="integer"` over {range!r} would make {hi - lo + 1} bins, more than the '
            f"{_args.MAX_BINS} a histogram holds"
        )
    return lo, hi


def _plain(value: Any, what: str) -> float:
    """A number for the histogram's fixed binning: a number as it is, a date, datetime or
    duration as a count of its axis' units (:func:`_temporal`)."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    if isinstance(value, dict):
        if "temporal" in value:
            return float(_temporal(value, what))
        for width in ("float32", "float64", "int"):
            if width in value:
                return float(value[width])
        raise TypeError(f"{what} of a Histogram must be a number, date, datetime or duration")
    return float(value)


def numbers(bins: Any, what: str) -> int | list[float]:
    __tracebackhide__ = True  # IPython shows the caller's frame
    if isinstance(bins, dict):  # time bins
        raise ValueError(
            f"bins={bins['every']!r} (time bins) needs the data: a Histogram's binning is fixed "
            "before its first fill; give edges (e.g. `pl.datetime_range(..., eager=True)`)"
        )
    if isinstance(bins, str):
        raise ValueError(
            f"bins={bins!r} needs the data: a Histogram's binning is fixed before its first "
            "fill; give a number of bins with a range, or edges"
        )
    if isinstance(bins, int):
        return bins
    if bins and all(isinstance(e, dict) and "temporal" in e for e in bins):
        exact = [_temporal(e, f"`bins` edge {i}") for i, e in enumerate(bins)]
        if all(isinstance(e, int) for e in exact):
            # Exact integer edges (datetimes in microseconds pass 2^53): compared exactly.
            return {"integers": [str(e) for e in exact]}  # type: ignore[return-value]
        return [float(e) for e in exact]
    return [_plain(e, f"`bins` edge {i}") for i, e in enumerate(bins)]


def number_range(range: Any) -> tuple[float, float] | None:
    __tracebackhide__ = True  # IPython shows the caller's frame
    pair = _args.range_(range)
    if pair is None:
        return None
    return _plain(pair[0], "`range`"), _plain(pair[1], "`range`")


def temporal_dtypes(bins: Any, range: Any, d: int) -> list[pl.DataType] | None:
    """The dtype of each axis where every axis has date, datetime or duration edges or range
    (None otherwise: numbers fix no dtype before the first fill)."""
    if d == 1:
        one = temporal_dtype(bins, range)
        return None if one is None else [one]
    per_bins = [bins] * d if isinstance(bins, (int, str)) else list(bins)
    per_range = list(range) if range is not None else [None] * d
    found = [temporal_dtype(b, r) for b, r in zip(per_bins, per_range)]
    if any(t is None for t in found):
        return None
    return found  # type: ignore[return-value]
