"""The passes a scan makes over the data besides its fill: which dtypes it reads, the first
streaming pass of a range from the data (the extremes of the rows that count, with their number
for the estimators that need nothing else: :mod:`statistics` answers it without reading where
Parquet files can), and the check the fill makes that its data spans the same extremes (in the
fill's own query, or batch by batch)."""

from __future__ import annotations

from typing import Literal, NamedTuple

import polars as pl

from polars_gpu_hist import _native

# The kind of values a column's extremes are (how the native histogram bins over them).
ExtremesKind = Literal["float16", "float32", "float64", "integer"]


def summary(
    lf: pl.LazyFrame, column: str, dtype: pl.DataType, range: tuple[float, float] | None
) -> tuple[int, Extremes]:
    """The number and extremes of the values an estimator sees, in one streaming pass: the
    valid values that are not NaN and, with a range, those numpy keeps (``range[0] <= x <=
    range[1]``, compared as numpy compares: float32 columns in float32, integers as float64)."""
    x = pl.col(column)
    if dtype.is_temporal():
        x = x.to_physical()
    keep = x.is_not_null()
    if dtype.is_float():
        keep = keep & x.is_not_nan()
    if range is not None:
        lo, hi = range
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5  # numpy's _get_outer_edges
        if dtype == pl.Float32:
            compared, first, last = x, pl.lit(lo, pl.Float32), pl.lit(hi, pl.Float32)
        else:
            compared, first, last = x.cast(pl.Float64), pl.lit(lo), pl.lit(hi)
        keep = keep & (compared >= first) & (compared <= last)
    kept = x.filter(keep)
    n, lo_v, hi_v = (
        lf.select(rows_where(keep).alias("n"), kept.min().alias("lo"), kept.max().alias("hi"))
        .collect(engine="streaming")
        .row(0)
    )
    kind: ExtremesKind = (
        "float32" if dtype == pl.Float32 else "float64" if dtype == pl.Float64 else "integer"
    )
    return int(n), Extremes(kind, lo_v, hi_v)


def rows_where(condition: pl.Expr) -> pl.Expr:
    """The number of rows where `condition` holds, summed in 64 bits. Polars' own counts
    (``count``, ``len``, ``null_count``) finalize in its index type, which its default 32-bit
    runtime overflows past 2^32 - 1 rows (a panic, after the whole pass); a scan of a dataset of
    files each under that size, together past it, is counted exactly."""
    return condition.fill_null(False).cast(pl.UInt64).sum()


def physical(dtype: pl.DataType) -> pl.DataType:
    """The dtype of a column's physical values (Int32 for Date, Int64 for the others)."""
    if dtype == pl.Date:
        return pl.Int32()
    if dtype.is_temporal():
        return pl.Int64()
    return dtype


# The dtypes the native histogram takes (`dtype::reading` in src/dtype.rs). Checked here, before
# a Series reaches it, with a message that names the column.
SUPPORTED_DTYPES = "a numeric (integer, Float16/32/64, Decimal), Date, Datetime or Duration"


_INTEGERS = (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64)


_NUMERIC_DTYPES = frozenset(_INTEGERS) | {
    pl.Int128,
    pl.UInt128,
    pl.Float16,
    pl.Float32,
    pl.Float64,
}


def numeric(dtype: pl.DataType) -> bool:
    return dtype in _NUMERIC_DTYPES or isinstance(dtype, pl.Decimal)


def supported_dtype(dtype: pl.DataType) -> bool:
    """Whether a column of ``dtype`` can be histogrammed."""
    return numeric(dtype) or dtype == pl.Date or isinstance(dtype, (pl.Datetime, pl.Duration))


def as_float64(dtype: pl.DataType) -> bool:
    return dtype in _AS_FLOAT64 or isinstance(dtype, pl.Decimal)


class Extremes(NamedTuple):
    """numpy's automatic range of the rows that count (physical values), ``None`` when none."""

    kind: ExtremesKind
    lo: float | int | None
    hi: float | int | None

    def value(self) -> _native.DataExtremes:
        """The extremes as the native histogram takes them: exact values of their kind."""
        if self.lo is None or self.hi is None:
            return _native.DataExtremes.empty()
        if self.kind == "integer":
            return _native.DataExtremes.integer(int(self.lo), int(self.hi))
        lo, hi = float(self.lo), float(self.hi)
        if self.kind == "float16":
            return _native.DataExtremes.float16(lo, hi)
        if self.kind == "float32":
            return _native.DataExtremes.float32(lo, hi)
        return _native.DataExtremes.float64(lo, hi)


def data_extremes(
    lf: pl.LazyFrame, column: str, dtype: pl.DataType, weights: str | None
) -> _native.DataExtremes:
    """numpy's automatic range over the rows that count, as the native histogram takes it."""
    if not supported_dtype(dtype):
        # Let the native fill refuse the dtype with its message.
        return _native.DataExtremes.empty()
    return first_pass(lf, column, dtype, weights).value()


def extremes_kind(dtype: pl.DataType) -> ExtremesKind:
    """How the native histogram takes extremes of a column of ``dtype``."""
    if dtype == pl.Float16:
        return "float16"  # the float16 extremes, exact as float32
    if dtype == pl.Float32:
        return "float32"
    if dtype == pl.Float64 or as_float64(dtype):
        return "float64"
    return "integer"


def extremes_exprs(column: str, dtype: pl.DataType, weights: str | None) -> list[pl.Expr]:
    """The min and max (``lo``, ``hi``) of the values that count for ``range="auto"``:
    comparable, NaN left out (Polars' min/max skip nulls), and rows with a null weight."""
    x = pl.col(column)
    keep = x.is_not_nan() if dtype.is_float() else pl.lit(True)
    if weights is not None:
        keep = keep & pl.col(weights).is_not_null()
    x = comparable(x, dtype).filter(keep)
    return [x.min().alias("lo"), x.max().alias("hi")]


def first_pass(lf: pl.LazyFrame, column: str, dtype: pl.DataType, weights: str | None) -> Extremes:
    """The first pass of ``range="auto"``: the extremes of the rows that count."""
    lo, hi = lf.select(extremes_exprs(column, dtype, weights)).collect(engine="streaming").row(0)
    return Extremes(extremes_kind(dtype), lo, hi)


def extremes_exprs_dd(
    columns: list[str], dtypes: list[pl.DataType], weights: str | None
) -> list[pl.Expr]:
    """The min and max (``lo{i}``, ``hi{i}``) of each axis of an n-D histogram from the data,
    as ``histogramdd`` takes them: over the rows without a null in any column (or weight), NaN
    left out per column."""
    names = columns + ([weights] if weights is not None else [])
    whole = pl.all_horizontal(pl.col(n).is_not_null() for n in names)
    exprs = []
    for i, (c, dtype) in enumerate(zip(columns, dtypes)):
        keep = whole & pl.col(c).is_not_nan() if dtype.is_float() else whole
        x = comparable(pl.col(c), dtype).filter(keep)
        exprs += [x.min().alias(f"lo{i}"), x.max().alias(f"hi{i}")]
    return exprs


def first_pass_dd(
    lf: pl.LazyFrame, columns: list[str], dtypes: list[pl.DataType], weights: str | None
) -> list[Extremes]:
    """The first pass of an n-D histogram's ranges from the data (:func:`extremes_exprs_dd`)."""
    row = lf.select(extremes_exprs_dd(columns, dtypes, weights)).collect(engine="streaming").row(0)
    return [
        Extremes(extremes_kind(dtype), row[2 * i], row[2 * i + 1]) for i, dtype in enumerate(dtypes)
    ]


class SameExtremes:
    """The second pass of ``range="auto"`` must see exactly the first pass's [min, max]: a value
    beyond it would fall outside the bins and be dropped, and narrower data would get bins that
    are not numpy's. Each batch's min and max (Polars' skip NaN and nulls) make the check exact
    for about the cost of one more read of the column in memory."""

    def __init__(self, first: Extremes, column: str, dtype: pl.DataType, label: str) -> None:
        self.first, self.column, self.dtype, self.label = first, column, dtype, label
        self.lo: float | int | None = None
        self.hi: float | int | None = None

    def batch(self, values: pl.Series, weights: pl.Series | None) -> None:
        if weights is not None and weights.null_count():
            values = values.filter(weights.is_not_null())
        values = values.to_frame().select(comparable(pl.first(), self.dtype)).to_series()
        lo, hi = _number(values.min()), _number(values.max())
        if lo is None or hi is None or lo != lo:  # only nulls and NaN
            return
        self.batch_extremes(lo, hi)

    def batch_extremes(self, lo: float | int, hi: float | int) -> None:
        first = self.first
        if first.lo is None or first.hi is None or lo < first.lo or hi > first.hi:
            beyond = hi if first.hi is not None and hi > first.hi else lo
            raise RuntimeError(
                f"range='auto': {self.label} changed between the two passes: the first found "
                f"column {self.column!r} {self._span(first.lo, first.hi)}, the second a value "
                f"{self._show(beyond)}{'' if first.lo is None else ' beyond it'} (its rows "
                "would not be counted); run again once the data stops changing, or pass "
                "range=(min, max)"
            )
        self.lo = lo if self.lo is None or lo < self.lo else self.lo
        self.hi = hi if self.hi is None or hi > self.hi else self.hi

    def whole(self, lo: object, hi: object) -> None:
        """The check from the second pass's own extremes (computed in the fill's query)."""
        a, b = _number(lo), _number(hi)
        if a is not None and b is not None and a == a:
            self.batch_extremes(a, b)
        self.finish()

    def finish(self) -> None:
        if (self.lo, self.hi) != (self.first.lo, self.first.hi):
            raise RuntimeError(
                f"range='auto': {self.label} changed between the two passes: the first found "
                f"column {self.column!r} {self._span(self.first.lo, self.first.hi)}, the second "
                f"{self._span(self.lo, self.hi)} (the bins would not be numpy's for either); run "
                "again once the data stops changing, or pass range=(min, max)"
            )

    def _span(self, lo: float | int | None, hi: float | int | None) -> str:
        if lo is None:
            return "without values"
        return f"in [{self._show(lo)}, {self._show(hi)}]"

    def _show(self, value: float | int | None) -> str:
        if self.dtype.is_temporal():
            return str(pl.Series([value], dtype=pl.Int64).cast(self.dtype).item())
        return repr(value)


def comparable(x: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """The values as the bins see them, for extremes the plugin reads exactly: physical
    temporal values, float64 for Decimal and 128-bit integers, float32 for Float16."""
    if dtype.is_temporal():
        return x.to_physical()
    if as_float64(dtype):
        return x.cast(pl.Float64)
    if dtype == pl.Float16:
        return x.cast(pl.Float32)
    return x


# Binned by their values as float64, as numpy bins the same numbers in a float64 array.
_AS_FLOAT64 = frozenset((pl.Int128, pl.UInt128))


def _number(value: object) -> float | int | None:
    """A batch's min or max of comparable (physical, numeric) values: a number, or None."""
    if value is None or isinstance(value, (int, float)):
        return value
    raise TypeError(f"expected a number from the comparable values, got {value!r}")
