"""Arguments as users write them, checked where they are written and turned into the plugin's
kwargs: numbers stay exact, numpy float32 scalars keep their precision, integers travel as
decimal text (an integer or temporal column compares them exactly, as numpy compares int64 values
with int64 edges), and dates, datetimes and durations travel as exact integer counts of a unit
(the plugin converts them to each column's own unit)."""

from __future__ import annotations

import builtins
import datetime as dt
import math
import operator
import os
import re
import sys
import warnings
from collections.abc import Iterable, Sequence
from typing import Any, Literal, SupportsFloat, SupportsIndex, TypeVar, Union, cast

import polars as pl

from polars_gpu_hist import _native
from polars_gpu_hist._args.quantile_bins import QuantileBins
from polars_gpu_hist._native.options import (
    BinRule,
    Bins,
    CommonKwargs,
    EveryBins,
    FamilyName,
    HistogramDdKwargs,
    HistogramKwargs,
    Range,
    Scalar,
    TemporalScalar,
)

# The most bins (cells, n-D) a histogram may have: the native side's one definition.
MAX_BINS: int = _native.MAX_BINS

ESTIMATORS = ("auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt")
BIN_RULES = (*ESTIMATORS, "integer")

# An edge: a number (numpy scalars too) or, for temporal columns, a date, datetime or duration.
# Not `Any`: a string is an iterable too, and `bins="ten"` must not type-check.
Edge = Union[SupportsFloat, dt.date, dt.timedelta]
# Time bins as type checkers see them: the usual Polars durations (any other duration string,
# "90m" or "1d12h", works at run time; a timedelta or `pl.duration(...)` types any width).
TimeBins = Literal[
    "1s", "1m", "5m", "10m", "15m", "30m", "1h", "2h", "3h", "6h", "12h", "1d", "2d", "7d",
    "1w", "2w", "1mo", "3mo", "6mo", "1q", "1y",
]  # fmt: skip
# `QuantileBins` (`quantile_bins(k)`): edges at the data's quantiles, taken where the data is.
BinsArg = Union[
    SupportsIndex, BinRule, TimeBins, dt.timedelta, pl.Expr, Iterable[Edge], QuantileBins
]
RangeArg = Union[tuple[Edge, Edge], Iterable[Edge], None]
# n-D: one count or rule for every dimension, or one entry per dimension (a flat list of numbers
# is not one: it would read as one entry per dimension).
DdBinsArg = Union[SupportsIndex, BinRule, TimeBins, dt.timedelta, Sequence[BinsArg]]
DdRangeArg = Union[Sequence[RangeArg], None]
# Polars' `Expr.hist` edges: numbers (a list, Series or array) or an expression. Not a column
# name: `bins="ten"` must not type-check.
HistBins = Union[pl.Expr, Iterable[SupportsFloat], None]
Closed = Literal["left", "right"]
Device = Literal["auto", "cpu", "gpu"]
Kernel = Literal[
    "auto", "shared", "packed", "batched", "global", "private", "banked", "radix", "spill",
    "segmented",
]  # fmt: skip
# The families pinning still takes with a DeprecationWarning (the plan never chooses them, the
# kernel bundle leaves them out); the next release refuses them.
_DEPRECATED_KERNELS = ("spill", "segmented")
_KERNELS = ("auto", "shared", "packed", "batched", "global", "private", "banked", "radix")
# The families that sum weights (src/family.rs `Family::weighs`); the others count rows only.
_WEIGHING_KERNELS = ("shared", "global")
# `by=`: one key (a column name, an expression or a Series), or a list of them.
ByKey = Union[pl.Expr, str, pl.Series]
ByArg = Union[ByKey, Sequence[ByKey], None]

# The package's folder: frames there are the package's own (`_caller_outside`).
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

# Integers of this magnitude or more travel as floats (the plugin's integers hold 127 bits).
_EXACT_INT_LIMIT = 1 << 127

_EPOCH_DATE = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
# numpy's datetime64/timedelta64 units that are fixed lengths, as the plugin names them.
_NUMPY_UNITS = {
    "D": ("D", 1),
    "W": ("D", 7),
    "h": ("h", 1),
    "m": ("m", 1),
    "s": ("s", 1),
    "ms": ("ms", 1),
    "us": ("us", 1),
    "ns": ("ns", 1),
}


def _micros(delta: dt.timedelta) -> int:
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _temporal(kind: Any, value: int, unit: Any, aware: bool = False) -> TemporalScalar:
    return {"temporal": kind, "value": int(value), "unit": unit, "aware": aware}


def _exact_int(value: int) -> Scalar:
    """An integer as ``{"int": "<decimal>"}``: exact for integer and temporal columns."""
    if abs(value) >= _EXACT_INT_LIMIT:
        return float(value)
    return {"int": str(value)}


def scalar(value: Any, what: str) -> Scalar:
    """One number of `bins` or `range`: a float, ``{"int": "<decimal>"}`` for an integer,
    ``{"float32": x}`` for a numpy float32 scalar, or a temporal value as an exact integer count
    of a unit."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    if isinstance(value, (bool, str, bytes)) or value is None:
        raise TypeError(f"{what} must be a number, date, datetime or duration, got {value!r}")
    if isinstance(value, int):
        return _exact_int(int(value))
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None and value.utcoffset() is not None:
            return _temporal("datetime", _micros(value - _EPOCH_UTC), "us", aware=True)
        return _temporal("datetime", _micros(value - _EPOCH), "us")
    if isinstance(value, dt.date):
        return _temporal("date", (value - _EPOCH_DATE).days, "D")
    if isinstance(value, dt.timedelta):
        return _temporal("duration", _micros(value), "us")
    numpy = _numpy_scalar(value, what)
    if numpy is not None:
        return numpy
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise TypeError(
            f"{what} must be a number, date, datetime or duration, got {type(value).__name__}"
        ) from None
    return number


def _numpy_scalar(value: Any, what: str) -> Scalar | None:
    """numpy scalars: float16 and float32 keep their precision; datetime64/timedelta64 keep
    their unit."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    np = _numpy()
    if np is None or not isinstance(value, np.generic):
        return None
    if isinstance(value, np.bool_):
        raise TypeError(f"{what} must be a number, got a boolean")
    if isinstance(value, np.floating) and value.dtype.itemsize == 4:
        return {"float32": float(value)}
    if isinstance(value, np.floating) and value.dtype.itemsize == 2:
        return {"float16": float(value)}
    if isinstance(value, (np.datetime64, np.timedelta64)):
        if np.isnat(value):
            raise ValueError(f"{what} is NaT: give a date or duration")
        unit, count = np.datetime_data(value.dtype)
        if unit not in _NUMPY_UNITS:
            raise ValueError(
                f"{what} is in unit {unit!r}, which has no fixed length: convert it to days "
                "or a finer unit"
            )
        name, factor = _NUMPY_UNITS[unit]
        kind = "datetime" if isinstance(value, np.datetime64) else "duration"
        return _temporal(kind, int(value.astype("int64")) * count * factor, name)
    if isinstance(value, np.integer):  # after timedelta64, which numpy counts as an integer
        return _exact_int(int(value))
    return None


def _numpy() -> Any:
    """numpy where it is already imported, else None: a value can only be a numpy scalar once
    numpy is imported, and importing it here would cost every call 0.06-0.16 s (issue 33)."""
    return sys.modules.get("numpy")


def bins(value: Any, repeated_edges: bool = False) -> Bins:
    """`bins`: a positive count, a rule's name, time bins (a Polars duration string, a
    timedelta or a Polars duration), or a sequence of edges (strictly increasing, or with
    `repeated_edges` never decreasing, as numpy takes them)."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    if isinstance(value, bool):
        raise TypeError(f"`bins` must be an int, a rule name or a sequence of edges, got {value!r}")
    if isinstance(value, QuantileBins):
        # The calls that take the data's quantiles resolve them first; this one keeps edges.
        raise TypeError(
            "`bins=quantile_bins(...)` takes its edges from the data, which this call does not "
            "hold: give the edges, `quantile_bins(k).edges(sample)`"
        )
    if isinstance(value, str):
        value = str(value)  # a subclass (numpy's str_) pickles as itself: plain text crosses
        if value in BIN_RULES:
            return cast(BinRule, value)
        if value.strip().lstrip("+-").replace(".", "", 1).isdigit():
            raise TypeError(f"`bins` must be a number, not the string {value!r}")
        return every(value)
    duration = _duration_text(value)
    if duration is not None:
        return every(duration)
    try:
        count = operator.index(value)
    except TypeError:
        pass
    else:
        if count < 1:
            raise ValueError(f"`bins` must be a positive integer, got {count}")
        if count > MAX_BINS:
            raise ValueError(
                f"`bins` asks for {count} bins, more than the {MAX_BINS} (2**28) a histogram "
                "can hold"
            )
        return count
    if isinstance(value, (dict, set, frozenset, bytes)) or not isinstance(value, Iterable):
        raise TypeError(
            "`bins` must be an int, a rule name or a sequence of edges (list, tuple, array, "
            f"Series), got {type(value).__name__}"
        )
    if isinstance(value, pl.Series) and value.dtype.is_temporal() and value.dtype != pl.Time:
        edges = _temporal_edges(value)
    else:
        # A Series' other values as Python's (integers stay Python ints).
        listed = value.to_list() if isinstance(value, pl.Series) else value
        edges = [scalar(edge, f"`bins` edge {i}") for i, edge in enumerate(listed)]
    _check_edges(edges, repeated_edges)
    return edges


def _temporal_edges(series: pl.Series) -> list[Scalar]:
    """Edges of a Date, Datetime or Duration Series as exact counts of its own unit, read from
    its physical integers: Polars has no NaT (its minimum, -2**63, is a datetime like any
    other), and Python's datetimes stop at microseconds."""
    dtype = series.dtype
    if dtype == pl.Date:
        kind, unit, aware = "date", "D", False
    else:
        kind = "duration" if dtype == pl.Duration else "datetime"
        unit = getattr(dtype, "time_unit", "us")
        aware = getattr(dtype, "time_zone", None) is not None
    edges: list[Scalar] = []
    for i, value in enumerate(series.to_physical().to_list()):
        if value is None:
            raise TypeError(
                f"`bins` edge {i} must be a number, date, datetime or duration, got None"
            )
        edges.append(_temporal(kind, value, unit, aware=aware))
    return edges


# A Polars duration string: number-unit pairs, as `pl.datetime_range`'s `interval` takes them.
_DURATION = re.compile(r"(?:\d+(?:ns|us|ms|mo|s|m|h|d|w|q|y))+")
_TIME_BINS_HELP = (
    'give a positive Polars duration such as "1h", "90m", "1d", "1w", "1mo", "1q" or "1y" '
    "(units ns, us, ms, s, m, h, d, w, mo, q, y), or a timedelta"
)


def every(text: str) -> EveryBins:
    """Time bins of a Polars duration string, checked here; the plugin checks them against
    the column's dtype (time bins need a Date, Datetime or Duration column)."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    if text.startswith("-") and _DURATION.fullmatch(text[1:]):
        raise ValueError(f"`bins={text!r}` is negative: {_TIME_BINS_HELP}")
    if not _DURATION.fullmatch(text):
        names = ", ".join(repr(r) for r in BIN_RULES)
        raise ValueError(
            f"`bins` names no rule and no duration: {text!r}; use one of {names}, or time bins: "
            + _TIME_BINS_HELP
        )
    if not any(int(n) for n in re.findall(r"\d+", text)):
        raise ValueError(f"`bins={text!r}` is zero: {_TIME_BINS_HELP}")
    if any(len(n) > 12 for n in re.findall(r"\d+", text)):
        raise ValueError(f"`bins={text!r}` has a number too large for a duration")
    return {"every": text}


def is_time_bins(value: Any) -> bool:
    """Whether `bins` asks for time bins (a duration string, negative or zero ones too, which
    `bins` refuses; a timedelta; a Polars duration)."""
    if isinstance(value, str):
        return value not in BIN_RULES and bool(_DURATION.fullmatch(value.lstrip("-")))
    return _duration_text(value) is not None


def _duration_text(value: Any) -> str | None:
    """A timedelta, numpy timedelta64 or Polars duration (an expression such as
    ``pl.duration(weeks=1)``) as a Polars duration string: whole days stay calendar days, as
    ``pl.datetime_range`` reads a timedelta. ``None`` for anything else."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    if isinstance(value, pl.Expr):
        try:
            series = pl.select(value).to_series()
        except pl.exceptions.PolarsError:
            return None
        if series.dtype != pl.Duration or series.len() != 1 or series.null_count():
            return None
        value = series.item()
    np = _numpy()
    if np is not None and isinstance(value, np.timedelta64):
        if np.isnat(value):
            raise ValueError("`bins` is NaT: give a positive duration")
        unit, count = np.datetime_data(value.dtype)
        names = {"Y": "y", "M": "mo", "W": "w", "D": "d", "h": "h", "m": "m", "s": "s"}
        names.update({"ms": "ms", "us": "us", "ns": "ns"})
        if unit not in names:
            raise ValueError(f"`bins` is in numpy unit {unit!r}, which Polars has no duration for")
        amount = int(value.astype("int64")) * count
        if amount <= 0:
            raise ValueError(
                f"`bins` must be a positive duration, got {value!r}: {_TIME_BINS_HELP}"
            )
        return f"{amount}{names[unit]}"
    if not isinstance(value, dt.timedelta):
        return None
    if value <= dt.timedelta(0):
        raise ValueError(f"`bins` must be a positive duration, got {value!r}: {_TIME_BINS_HELP}")
    parts = [(value.days, "d"), (value.seconds, "s"), (value.microseconds, "us")]
    return "".join(f"{n}{unit}" for n, unit in parts if n)


def _plain(value: Scalar) -> tuple[str, float] | None:
    """A number or temporal value as (what it counts, amount), to compare with its neighbours;
    ``None`` where two values cannot be compared here (the plugin converts their units)."""
    if isinstance(value, float):
        return ("number", value)
    if "int" in value:
        return ("number", int(value["int"]))
    if "float16" in value:
        return ("number", value["float16"])
    if "float32" in value:
        return ("number", value["float32"])
    if "float64" in value:
        return ("number", value["float64"])
    kind, unit = value["temporal"], value["unit"]
    return (f"{kind} in {unit}{' aware' if value['aware'] else ''}", value["value"])


def _check_edges(edges: list[Scalar], repeated_edges: bool) -> None:
    """Explicit edges: at least two, not NaN, strictly increasing, or with `repeated_edges`
    never decreasing (checked again in the plugin, for Rust callers). Infinite edges are
    numpy's catch-all bins: `[-inf, 0, inf]` counts every value but NaN."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    if len(edges) < 2:
        raise ValueError(
            f"`bins` as edges needs at least two edges, got {len(edges)}: give two or more, or a "
            "number of bins"
        )
    plain = [_plain(e) for e in edges]
    for i, p in enumerate(plain):
        if p is not None and isinstance(p[1], float) and math.isnan(p[1]):
            raise ValueError(f"`bins` edges must be numbers, but edge {i} is NaN")
    for i in builtins.range(len(edges) - 1):
        a, b = plain[i], plain[i + 1]
        if a is None or b is None or a[0] != b[0]:
            continue
        if repeated_edges and a[1] > b[1]:
            raise ValueError(
                f"`bins` must increase monotonically, but edge {i} ({a[1]!r}) > edge {i + 1} "
                f"({b[1]!r}): sort them"
            )
        if not repeated_edges and not a[1] < b[1]:
            raise ValueError(
                f"`bins` edges must increase strictly, but edge {i} ({a[1]!r}) >= edge {i + 1} "
                f"({b[1]!r}): sort them and drop repeats"
            )


def range_(value: Any) -> Range:
    """`range`: None, or a pair (min, max)."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    if value is None:
        return None
    if isinstance(value, (str, bytes, dict, set)) or not isinstance(value, Iterable):
        raise TypeError(f"`range` must be a pair (min, max), got {value!r}")
    pair = list(value)
    if len(pair) != 2:
        raise TypeError(f"`range` must be a pair (min, max), got {len(pair)} values")
    lo, hi = scalar(pair[0], "`range`'s min"), scalar(pair[1], "`range`'s max")
    # A numpy float64 scalar does not defer to the data's type as a Python float does: numpy
    # then computes in float64, and makes float64 bins even for float32 data.
    if any(is_float64_scalar(v) for v in pair):
        lo, hi = (_float64(v) for v in (lo, hi))
    elif any(isinstance(v, dict) and "float32" in v for v in (lo, hi)):
        # A float16 scalar beside a float32 one computes in float32 (NEP 50).
        lo, hi = (_float32(v) for v in (lo, hi))
    a, b = _plain(lo), _plain(hi)
    for what, p in (("min", a), ("max", b)):
        if p is not None and p[0] == "number" and not math.isfinite(p[1]):
            raise ValueError(
                f"`range` must be finite, but its {what} is {p[1]!r}: give finite (min, max), or "
                "range=None for the data's own"
            )
    if a is not None and b is not None and a[0] == b[0] and a[1] > b[1]:
        raise ValueError(f"`range` must have min <= max, got ({a[1]!r}, {b[1]!r}): swap them")
    return lo, hi


def is_float64_scalar(value: Any) -> bool:
    np = _numpy()
    return np is not None and isinstance(value, np.floating) and value.dtype.itemsize == 8


def _float64(value: Scalar) -> Scalar:
    """A number of a range beside a numpy float64 scalar, marked as float64 (temporal values
    as they are)."""
    if isinstance(value, float):
        return {"float64": value}
    if "float32" in value:
        return {"float64": float(value["float32"])}
    if "float16" in value:
        return {"float64": float(value["float16"])}
    return value


def _float32(value: Scalar) -> Scalar:
    """A float16 scalar of a range beside a numpy float32 scalar, as float32 (exact)."""
    if isinstance(value, dict) and "float16" in value:
        return {"float32": float(value["float16"])}
    return value


_Name = TypeVar("_Name", bound=str)


def _caller_outside() -> int:
    """The `stacklevel` (for the function calling this one) of the first caller outside the
    package: a warning names the line the user wrote, however deep the package's calls."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


def choice(value: Any, name: str, allowed: tuple[_Name, ...]) -> _Name:
    """`value` if it is one of the names `allowed`, else a ValueError naming them."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    for a in allowed:
        if value == a:
            return a
    names = ", ".join(repr(a) for a in allowed)
    raise ValueError(f"`{name}` must be one of {names}, got {value!r}")


def flag(value: Any, name: str) -> bool:
    __tracebackhide__ = True  # IPython shows the caller's frame
    np = _numpy()
    if isinstance(value, bool) or (np is not None and isinstance(value, np.bool_)):
        return bool(value)
    raise TypeError(f"`{name}` must be True or False, got {value!r}")


def common(
    density: Any, closed: Any, flow: Any, device: Any, kernel: Any, repeated_edges: bool
) -> CommonKwargs:
    """The options every histogram takes, checked; `repeated_edges` (numpy's rule for explicit
    edges, the numpy drop-in's) only where set."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    out: CommonKwargs = {
        "density": flag(density, "density"),
        "closed": choice(closed, "closed", ("left", "right")),
        "flow": flag(flow, "flow"),
        "device": choice(device, "device", ("auto", "cpu", "gpu")),
        # "auto" is the plan's choice: no family.
        "kernel": None
        if kernel == "auto"
        else cast(FamilyName, choice(kernel, "kernel", (*_KERNELS, *_DEPRECATED_KERNELS))),
    }
    if out["kernel"] is not None and out["device"] == "cpu":
        # An explicit choice that cannot apply is a mistake, not a preference to drop quietly.
        raise ValueError(
            f"`kernel={kernel!r}` pins a GPU kernel family, but `device='cpu'` never runs one: "
            "drop `kernel`, or use device='gpu' (or 'auto')"
        )
    if out["density"] and out["flow"]:
        raise ValueError(
            "`density` cannot be combined with `flow`: flow bins have no width to divide by; "
            "drop one of them"
        )
    if out["kernel"] in _DEPRECATED_KERNELS:
        families = ", ".join(repr(k) for k in _KERNELS[1:])
        warnings.warn(
            f"`kernel={kernel!r}` is deprecated: the plan never chooses the {kernel} family, "
            f"and the next release refuses it; pin one of {families}, or leave `kernel` to "
            "the plan",
            DeprecationWarning,
            stacklevel=_caller_outside(),
        )
    if repeated_edges:
        out["repeated_edges"] = True
    return out


def refuse_weighted_estimator(bins: Any) -> None:
    """numpy's estimators take no weights: ``TypeError`` (numpy's) where the call is written,
    not when the query runs."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    if isinstance(bins, str) and bins in ESTIMATORS:
        raise TypeError(
            f'`bins="{bins}"` cannot be combined with `weights`: numpy estimates bin counts '
            "from unweighted data only (Automated estimation of the number of bins is not "
            "supported for weighted data); pass a number of bins or explicit edges"
        )


def refuse_weighted_kernel(kernel: FamilyName | None) -> None:
    """A pinned family that counts rows only cannot sum weights: ``ValueError`` where the call
    is written (the arguments alone decide it), not when the query runs."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    if kernel is not None and kernel not in _WEIGHING_KERNELS:
        raise ValueError(
            f"`kernel={kernel!r}` counts rows only: weighted sums take kernel='shared' or "
            "'global'; pin one of them, or drop `kernel` (the plan then chooses)"
        )


def by_keys(by: Any) -> tuple[list[pl.Expr], list[str | None]]:
    """The keys of `by=` as expressions, and their names where known: one key, or each of a
    list or tuple of them (a ``pl.struct`` key stays one expression; the plugin reads its fields
    as keys)."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    keys = list(by) if isinstance(by, (list, tuple)) else [by]
    if not keys:
        raise ValueError("`by` got an empty list: give at least one key column")
    exprs = [_by_key(key) for key in keys]
    names = [e.meta.output_name(raise_if_undetermined=False) for e in exprs]
    repeated = {n for n in names if n is not None and names.count(n) > 1}
    if repeated:
        raise ValueError(
            f"`by` has two keys named {sorted(repeated)[0]!r}: alias one of them "
            "(pl.col(...).alias(...))"
        )
    return exprs, names


def _by_key(key: Any) -> pl.Expr:
    __tracebackhide__ = True  # IPython shows the caller's frame
    if isinstance(key, str):
        return pl.col(key)
    if isinstance(key, pl.Series):
        return pl.lit(key)
    if isinstance(key, pl.Expr):
        return key
    raise TypeError(
        "`by` takes a column name, an expression, a Series, or a list of them (several keys); "
        f"got {type(key).__name__}"
    )


def histogram_kwargs(
    bins_: Any,
    range: Any,
    *,
    density: Any,
    closed: Any,
    flow: Any,
    device: Any,
    kernel: Any,
    repeated_edges: bool = False,
) -> HistogramKwargs:
    """The plugin's kwargs for a 1-D histogram (and `by=`); `repeated_edges` takes numpy's rule
    for explicit edges (the numpy drop-in's)."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    given = bins(bins_, repeated_edges)
    pair = range_(range)
    out: HistogramKwargs = {
        "bins": given,
        "range": pair,
        **common(density, closed, flow, device, kernel, repeated_edges),
    }
    if isinstance(given, list) and pair is not None:
        raise ValueError("`range` cannot be combined with explicit bin edges: drop one of them")
    if out["flow"]:
        _check_flow_bins([given])
    return out


def _check_flow_bins(per_dim: list[Bins]) -> None:
    """With ``flow=True`` each axis gets two more bins: the cells, flow bins included, must fit
    the limit (rules are checked where the data resolves them)."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    sizes = [b if isinstance(b, int) else len(b) - 1 for b in per_dim if isinstance(b, (int, list))]
    if len(sizes) != len(per_dim):
        return
    cells = math.prod(n + 2 for n in sizes)
    if cells > MAX_BINS:
        shown = " x ".join(f"{n} + 2" for n in sizes)
        raise ValueError(
            f"`flow=True` adds an underflow and an overflow bin to each axis: {shown} bins make "
            f"{cells} cells, more than the {MAX_BINS} (2**28) a histogram can hold; ask for "
            "fewer `bins`, or drop `flow`"
        )


def dd_kwargs(
    dims: int,
    bins_: Any,
    range: Any,
    *,
    density: Any,
    closed: Any,
    flow: Any,
    device: Any,
    kernel: Any,
    repeated_edges: bool = False,
) -> HistogramDdKwargs:
    """The plugin's kwargs for `histogramdd`: one `bins` (and `range`) per dimension."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    if isinstance(bins_, (str, bytes, bool, dt.timedelta, pl.Expr)) or _is_count(bins_):
        per_dim = [bins(bins_, repeated_edges)] * dims
    else:
        if isinstance(bins_, (dict, set)) or not isinstance(bins_, Iterable):
            raise TypeError(
                f"`bins` must be an int or one entry per dimension, got {type(bins_).__name__}"
            )
        entries = list(bins_)
        if len(entries) != dims:
            raise ValueError(
                f"`bins` has {len(entries)} entries for {dims} dimensions: give one per dimension"
            )
        per_dim = [bins(entry, repeated_edges) for entry in entries]
    ranges: list[Range] = []
    if range is not None:
        entries = list(range)
        if len(entries) != dims:
            raise ValueError(
                f"`range` has {len(entries)} entries for {dims} dimensions: give one (or None) "
                "per dimension"
            )
        ranges = [range_(entry) for entry in entries]
    out: HistogramDdKwargs = {
        "bins": per_dim,
        "range": ranges,
        **common(density, closed, flow, device, kernel, repeated_edges),
    }
    if out["flow"]:
        _check_flow_bins(per_dim)
    return out


def _is_count(value: Any) -> bool:
    try:
        operator.index(value)
    except TypeError:
        return False
    return True


def refuse_object(series: pl.Series, what: str = "column") -> None:
    """An Object Series cannot be binned; the plugin would see it as Binary (its pointers), so
    it is named here, where its dtype is still known."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    if series.dtype == pl.Object:
        if what == "weights":
            raise TypeError("`weights` must be numeric, got dtype Object: convert them to numbers")
        raise TypeError(
            "cannot histogram a column of dtype Object: Python objects have no numeric value; "
            "convert them to numbers"
        )
