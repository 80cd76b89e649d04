"""A Histogram's fixed binning from its arguments: numpy's ``bins``/``range`` for one axis or
several, as the native histogram takes them (numbers only: the column's dtype is not known
before the first fill), and the per-axis names."""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from typing import Any

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
    arguments: _options.AccumulatorArguments = {
        "axes": axes,
        "closed": _args.choice(closed, "closed", ("left", "right")),
        "weighted": _args.flag(weights, "weights"),
        "device": _args.choice(device, "device", ("auto", "cpu", "gpu")),
    }
    return _native.Histogram(pickle.dumps(arguments, protocol=5), data_range)


def per_axis(value: Any, d: int, what: str) -> list[str | None]:
    """A name or label per axis: one string for one axis, a sequence of d for several."""
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
    ``Integer(lo, hi + 1)``)."""
    if isinstance(bins, str) and bins == "integer":
        lo, hi = _integer_range(range)
        native: _options.AccumulatorAxis = {"bins": hi - lo + 1, "range": (lo, hi + 1)}
        return native, AxisKind("integer", hi - lo + 1, lo, hi + 1)
    native = {"bins": numbers(_args.bins(bins), "`bins`"), "range": number_range(range)}
    count, pair = native["bins"], native["range"]
    if isinstance(count, int) and pair is not None:
        return native, AxisKind("regular", count, pair[0], pair[1])
    return native, AxisKind("variable", 0 if isinstance(count, int) else len(count) - 1)


def _integer_range(range: Any) -> tuple[int, int]:
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
    """A number for the histogram's fixed binning (its dtype is not known before the first
    fill, so dates and rules cannot be resolved yet)."""
    if isinstance(value, dict):
        for width in ("float32", "float64", "int"):
            if width in value:
                return float(value[width])
        raise TypeError(
            f"{what} of a Histogram must be a number (its column's dtype is not known before the "
            "first fill): give dates and times as numbers of the column's units"
        )
    return float(value)


def numbers(bins: Any, what: str) -> int | list[float]:
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
    return [_plain(e, f"`bins` edge {i}") for i, e in enumerate(bins)]


def number_range(range: Any) -> tuple[float, float] | None:
    pair = _args.range_(range)
    if pair is None:
        return None
    return _plain(pair[0], "`range`"), _plain(pair[1], "`range`")
