"""Drop-ins for Polars' row binning: ``bin_intervals``, ``bin_quantiles`` and ``bin_ranks``
(Polars 2), ``cut`` and ``qcut`` (Polars 1 and 2), with Polars' signatures, defaults, output
dtypes, null and NaN handling and errors, each computed in one call of the plugin
(src/python/rows.rs, src/rows/) on all CPU cores.

Arguments are checked here, where the expression is written, with the exception types Polars
raises (Polars raises some of them only when the query runs; a plugin's errors then would all be
``ComputeError``). Explicit breakpoints make ``bin_intervals`` and ``cut`` elementwise, as
Polars' own: they stream and run on any slice of a column. Breakpoints of a dtype this package
does not bin (String, Categorical, Enum, Binary, nested) go to Polars' own call.
"""

from __future__ import annotations

import math
import pickle
import warnings
from collections.abc import Sequence
from typing import Any, Literal, Union

import polars as pl

from polars_gpu_hist._args.arguments import MAX_BINS
from polars_gpu_hist._expr.polars_hist import build_plugin_call

__all__ = [
    "POLARS_2",
    "bin_intervals_expr",
    "bin_quantiles_expr",
    "bin_ranks_expr",
    "cut_expr",
    "qcut_expr",
]

Labels = Union[Sequence[str], Literal[False]]
Device = Literal["auto", "cpu", "gpu"]

POLARS_VERSION = tuple(int(p) for p in pl.__version__.split(".")[:2] if p.isdigit())
# Polars 2 has `bin_intervals`, `bin_quantiles` and `bin_ranks`, and deprecates cut/qcut.
POLARS_2 = POLARS_VERSION >= (2, 0)


def _needs_polars_2(call: str) -> None:
    if not POLARS_2:
        raise NotImplementedError(
            f"`gpu_hist.{call}` is Polars 2's `{call}`, which the installed Polars "
            f"{pl.__version__} does not have: upgrade to polars>=2.0, or use `gpu_hist.cut` / "
            "`gpu_hist.qcut`, which work with Polars 1"
        )


def _flag(name: str, value: Any) -> bool:
    """A bool, as Polars takes it (a TypeError otherwise, as Polars raises)."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return bool(value)
    raise TypeError(f"`{name}` must be a bool (True or False), got {type(value).__name__}")


def _device(call: str, device: Any) -> str:
    """``device``: rows are binned on every CPU core (``"auto"`` and ``"cpu"``); there is no
    GPU row-binning kernel yet, so ``"gpu"`` is refused here rather than run elsewhere."""
    if device not in ("auto", "cpu", "gpu"):
        raise ValueError(f'`device` must be "auto", "cpu" or "gpu", got {device!r}')
    if device == "gpu":
        raise NotImplementedError(
            f'`gpu_hist.{call}(device="gpu")`: row binning has no GPU kernel yet; it bins '
            'rows on every CPU core: pass device="auto" or "cpu"'
        )
    return str(device)


def _labels(labels: Any) -> list[str] | None:
    """``labels``: False (the bin's index) or one string per bin, as Polars takes them."""
    if labels is False:
        return None
    if labels is True or labels is None:
        raise TypeError(
            f"`labels` must be a sequence of strings (one per bin) or False (the bin's "
            f"index), got {labels!r}"
        )
    out = list(labels)
    for label in out:
        if not isinstance(label, str):
            raise TypeError(f"`labels` must hold strings, got {type(label).__name__} {label!r}")
    _unique(out)
    return out


def _unique(labels: list[str]) -> None:
    seen: set[str] = set()
    for label in labels:
        if label in seen:
            raise pl.exceptions.ComputeError(
                f"the labels must be unique (they are an Enum's categories); {label!r} repeats"
            )
        seen.add(label)


def _check_label_count(call: str, bins: int, labels: list[str] | None) -> None:
    if labels is not None and len(labels) != bins:
        raise pl.exceptions.ShapeError(
            f"`{call}` produces {bins} bins but got {len(labels)} labels: give one label per bin"
        )


def _bin_count(call: str, count: int) -> int:
    """A number of bins, as Polars takes it (an unsigned integer, at least 1)."""
    if count < 0:
        raise OverflowError(f"can't convert negative int to unsigned: `{call}` needs >= 1 bin")
    if count == 0:
        raise pl.exceptions.ComputeError(
            f"binning requires at least one bin: `{call}` got 0 (give a positive number)"
        )
    if count > MAX_BINS:
        raise ValueError(
            f"`{call}` asks for {count} bins, more than the {MAX_BINS} (2^28) this package "
            "bins rows into: ask for fewer"
        )
    return int(count)


def _fractions(call: str, values: Any) -> list[float]:
    """Non-decreasing fractions in [0, 1], as Polars checks them."""
    if isinstance(values, float):
        raise TypeError(
            f"`{call}` takes a sequence of fractions or a number of bins, got the float {values}"
        )
    out = [float(v) for v in values]
    for v in out:
        if not 0.0 <= v <= 1.0:
            raise pl.exceptions.ComputeError(f"fractions must be between 0.0 and 1.0, got {v}")
    if any(b < a for a, b in zip(out, out[1:])):
        raise pl.exceptions.ComputeError("fractions must be non-decreasing: sort them")
    return out


_FLOATS = ("Float16", "Float32", "Float64")
_INTS = ("Int8", "Int16", "Int32", "Int64")
_UINTS = ("UInt8", "UInt16", "UInt32", "UInt64")


def _breaks_kwargs(breaks: pl.Series) -> dict[str, Any] | None:
    """Explicit breakpoints as the plugin takes them (dtype and physical values), or None where
    the plugin does not bin them (Polars' own call takes them)."""
    dtype = breaks.dtype
    name = type(dtype).__name__ if not isinstance(dtype, type) else dtype.__name__
    if name in _FLOATS:
        return {"dtype": name, "floats": breaks.cast(pl.Float64).to_list()}
    if name in _INTS:
        return {"dtype": name, "ints": breaks.to_list()}
    if name in _UINTS:
        # Their bits as int64: the plugin's pickle decoder refuses integers past 2^63.
        bits = breaks.cast(pl.UInt64).reinterpret(signed=True)
        return {"dtype": name, "uints": bits.to_list()}
    if name in ("Int128", "UInt128"):
        return {"dtype": name, "wide": [str(v) for v in breaks.to_list()]}
    if name == "Boolean":
        return {"dtype": name, "bools": breaks.to_list()}
    if name in ("Date", "Time"):
        return {"dtype": name, "ints": breaks.to_physical().cast(pl.Int64).to_list()}
    if name in ("Datetime", "Duration"):
        unit = getattr(dtype, "time_unit", None) or "us"
        return {"dtype": name, "unit": unit, "ints": breaks.to_physical().to_list()}
    if name == "Decimal":
        physical = breaks.to_physical().to_list()
        return {
            "dtype": name,
            "precision": getattr(dtype, "precision", None) or 38,
            "scale": getattr(dtype, "scale", None) or 0,
            "wide": [str(v) for v in physical],
        }
    return None


def _non_decreasing(breaks: pl.Series) -> bool:
    """Whether the breakpoints never decrease in Polars' order (NaN last, equal to NaN)."""
    if breaks.len() < 2:
        return True
    if breaks.dtype.is_float():
        values = breaks.cast(pl.Float64).to_list()
        keys = [(1, 0.0) if math.isnan(v) else (0, v) for v in values]
        return all(a <= b for a, b in zip(keys, keys[1:]))
    # Temporal values compared physically: a date before year 1 has no Python value.
    values = (breaks.to_physical() if breaks.dtype.is_temporal() else breaks).to_list()
    return all(a <= b for a, b in zip(values, values[1:]))


def _call(kwargs: dict[str, Any], expr: pl.Expr, shape: str, dtype: Any = None) -> pl.Expr:
    pickled = pickle.dumps(kwargs, protocol=5)
    return build_plugin_call("row_bins", [expr], pickled, dtype, shape)


def bin_intervals_expr(
    expr: pl.Expr,
    intervals: Sequence[Any] | pl.Series | int,
    *,
    labels: Labels,
    include_intervals: bool = False,
    right_closed: bool = False,
    device: Device = "auto",
) -> pl.Expr:
    """Polars 2's ``Expr.bin_intervals``, binned by the plugin (see the namespace's method)."""
    _needs_polars_2("bin_intervals")
    include = _flag("include_intervals", include_intervals)
    right = _flag("right_closed", right_closed)
    dev = _device("bin_intervals", device)
    names = _labels(labels)
    kwargs: dict[str, Any] = {
        "call": "bin_intervals",
        "labels": names,
        "include_intervals": include,
        "right_closed": right,
        "device": dev,
    }
    if isinstance(intervals, int):
        count = _bin_count("bin_intervals", intervals)
        _check_label_count("bin_intervals", count, names)
        return _call({**kwargs, "count": count}, expr, "rows")
    breaks = intervals if isinstance(intervals, pl.Series) else pl.Series("breaks", intervals)
    described = _breaks_kwargs(breaks)
    if described is None:
        # A dtype Polars bins itself (strings, categories, bytes).
        return expr.bin_intervals(
            breaks,
            labels=labels,
            include_intervals=include_intervals,
            right_closed=right_closed,
        )
    if breaks.null_count() > 0:
        raise pl.exceptions.ComputeError(
            "breakpoints cannot contain nulls: drop them (`.drop_nulls()`)"
        )
    if not _non_decreasing(breaks):
        raise pl.exceptions.ComputeError("breakpoints must be non-decreasing: sort them")
    if breaks.len() + 1 > MAX_BINS:
        raise ValueError(
            f"`bin_intervals` got {breaks.len()} breakpoints, more than the {MAX_BINS} (2^28) "
            "bins this package bins rows into: give fewer"
        )
    _check_label_count("bin_intervals", breaks.len() + 1, names)
    return _call({**kwargs, "breaks": described}, expr, "elementwise")


def bin_quantiles_expr(
    expr: pl.Expr,
    quantiles: Sequence[float] | int,
    *,
    labels: Labels,
    include_intervals: bool = False,
    right_closed: bool = False,
    device: Device = "auto",
) -> pl.Expr:
    """Polars 2's ``Expr.bin_quantiles``, binned by the plugin (see the namespace's method)."""
    _needs_polars_2("bin_quantiles")
    kwargs: dict[str, Any] = {
        "call": "bin_quantiles",
        "include_intervals": _flag("include_intervals", include_intervals),
        "right_closed": _flag("right_closed", right_closed),
        "device": _device("bin_quantiles", device),
    }
    names = _labels(labels)
    kwargs["labels"] = names
    if isinstance(quantiles, int):
        count = _bin_count("bin_quantiles", quantiles)
        _check_label_count("bin_quantiles", count, names)
        return _call({**kwargs, "count": count}, expr, "rows")
    fractions = _fractions("bin_quantiles", quantiles)
    _check_label_count("bin_quantiles", len(fractions) + 1, names)
    return _call({**kwargs, "fractions": fractions}, expr, "rows")


def bin_ranks_expr(
    expr: pl.Expr,
    ranks: Sequence[float] | int,
    *,
    labels: Labels,
    include_intervals: bool = False,
    device: Device = "auto",
) -> pl.Expr:
    """Polars 2's ``Expr.bin_ranks``, binned by the plugin (see the namespace's method)."""
    _needs_polars_2("bin_ranks")
    kwargs: dict[str, Any] = {
        "call": "bin_ranks",
        "include_intervals": _flag("include_intervals", include_intervals),
        "device": _device("bin_ranks", device),
    }
    names = _labels(labels)
    kwargs["labels"] = names
    if isinstance(ranks, int):
        count = _bin_count("bin_ranks", ranks)
        _check_label_count("bin_ranks", count, names)
        return _call({**kwargs, "count": count}, expr, "rows")
    fractions = _fractions("bin_ranks", ranks)
    _check_label_count("bin_ranks", len(fractions) + 1, names)
    return _call({**kwargs, "fractions": fractions}, expr, "rows")


def _deprecated(call: str, instead: str, stacklevel: int) -> None:
    """Polars 2 deprecates ``cut`` and ``qcut``: so do the drop-ins, under Polars 2."""
    if POLARS_2:
        warnings.warn(
            f"`{call}` is deprecated (as Polars 2's own); use {instead} instead",
            DeprecationWarning,
            stacklevel=stacklevel,
        )


def _optional_labels(labels: Any) -> list[str] | None:
    if labels is None:
        return None
    return _labels(labels)


def cut_expr(
    expr: pl.Expr,
    breaks: Sequence[float],
    *,
    labels: Sequence[str] | None = None,
    left_closed: bool = False,
    include_breaks: bool = False,
    device: Device = "auto",
    stacklevel: int = 3,
) -> pl.Expr:
    """Polars' ``Expr.cut``, binned by the plugin (see the namespace's method)."""
    _deprecated("cut", "`gpu_hist.bin_intervals`", stacklevel)
    values = [float(b) for b in breaks]
    if any(math.isnan(b) for b in values):
        raise pl.exceptions.ComputeError("breaks cannot be NaN")
    ordered = sorted(values)
    if any(a == b for a, b in zip(ordered, ordered[1:])):
        raise pl.exceptions.DuplicateError("breaks are not unique")
    if ordered and ordered[0] == -math.inf:
        raise pl.exceptions.ComputeError("don't include -inf in breaks")
    if ordered and ordered[-1] == math.inf:
        raise pl.exceptions.ComputeError("don't include inf in breaks")
    names = _optional_labels(labels)
    if names is not None and len(names) != len(values) + 1:
        raise pl.exceptions.ShapeError("provide len(quantiles) + 1 labels")
    kwargs = {
        "call": "cut",
        "breaks": {"dtype": "Float64", "floats": values},
        "labels": names,
        "right_closed": not _flag("left_closed", left_closed),
        "include_intervals": _flag("include_breaks", include_breaks),
        "device": _device("cut", device),
    }
    return _call(kwargs, expr, "elementwise")


def qcut_expr(
    expr: pl.Expr,
    quantiles: Sequence[float] | int,
    *,
    labels: Sequence[str] | None = None,
    left_closed: bool = False,
    allow_duplicates: bool = False,
    include_breaks: bool = False,
    device: Device = "auto",
    stacklevel: int = 3,
) -> pl.Expr:
    """Polars' ``Expr.qcut``, binned by the plugin (see the namespace's method)."""
    _deprecated("qcut", "`gpu_hist.bin_quantiles` or `gpu_hist.bin_ranks`", stacklevel)
    if isinstance(quantiles, int):
        if quantiles < 0:
            raise OverflowError("can't convert negative int to unsigned")
        probs = [b / quantiles for b in range(1, quantiles)]
    else:
        probs = [float(q) for q in quantiles]
    if any(math.isnan(q) for q in probs):
        raise pl.exceptions.ComputeError("quantiles cannot be NaN")
    if any(not 0.0 <= q <= 1.0 for q in probs):
        raise pl.exceptions.ComputeError("quantile should be between 0.0 and 1.0")
    names = _optional_labels(labels)
    if names is not None and len(names) != len(probs) + 1:
        raise pl.exceptions.ShapeError(
            f"expected {len(probs) + 1} labels (len(breaks) + 1), got {len(names)}"
        )
    include = _flag("include_breaks", include_breaks)
    kwargs = {
        "call": "qcut",
        "fractions": probs,
        "labels": names,
        "right_closed": not _flag("left_closed", left_closed),
        "allow_duplicates": _flag("allow_duplicates", allow_duplicates),
        "include_intervals": include,
        "device": _device("qcut", device),
    }
    # The categories cross as strings: Polars' global Categorical is made here.
    dtype: Any = (
        pl.Struct({"breakpoint": pl.Float64, "category": pl.Categorical})
        if include
        else pl.Categorical
    )
    return _call(kwargs, expr, "rows", dtype)
