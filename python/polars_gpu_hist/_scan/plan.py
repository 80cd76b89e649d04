"""The plan of a scan, the pipeline's second stop: from what was asked (a :class:`Request`)
and the dataset's schema, the passes over the data and how each reads it, decided before a row
is read, and printable (``print(plan)``; :func:`polars_gpu_hist.explain` shows it for a
LazyFrame and a column).

- The binning: fixed (edges, or a number of bins over a range), from the data's extremes
  (``range="auto"``, and the lazy namespace's ``bins=int`` without a range, as the expression),
  from a rule that needs the extremes and the number of values (``"integer"``, ``"sturges"``,
  ``"rice"``, ``"sqrt"``), or from one that needs every value (numpy's other estimators, time
  bins: the columns are read into memory).
- The first pass, where the binning comes from the data: the files' Parquet statistics where
  they answer (no data read), otherwise a streaming pass over the column (the plan says why).
- The fill: inside Polars' streaming engine (the native sink: morsels counted on the engine's
  threads, or batched on the GPU), batches in row order (groups, n-D flow bins), or in memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import polars as pl

from polars_gpu_hist import _native
from polars_gpu_hist._args import arguments as _args
from polars_gpu_hist._args.arguments import Closed, Device
from polars_gpu_hist._scan import passes, statistics
from polars_gpu_hist._scan.source import Dataset

# Rules a streaming pass serves: one bin per integer needs the extremes; "sturges", "rice" and
# "sqrt" the number of values and their extremes.
STREAMED_RULES = ("integer", "sturges", "rice", "sqrt")
# numpy's estimators that need every value (percentiles, moments): the column is read into
# memory, in batches, and must fit there.
IN_MEMORY_RULES = ("auto", "fd", "doane", "scott", "stone")

BinningKind = Literal["fixed", "data range", "rule", "in memory"]
FillKind = Literal["sink", "frames", "memory"]


@dataclass(frozen=True)
class Request:
    """What a scan is asked for, its arguments checked (:func:`request`)."""

    columns: list[str]
    bins: Any
    range: Any
    weights: str | None
    closed: Closed
    device: Device
    chunk_size: int
    by: list[str] | None = None
    flow: bool = False
    density: bool = False
    # The expression's rule (the lazy namespace): `bins=int` without a range takes the range
    # of the data; histogram_scan asks for range="auto" then.
    data_range_by_default: bool = False

    @property
    def names(self) -> list[str]:
        """The columns the scan reads."""
        names = [*self.columns, *(self.by or [])]
        if self.weights is not None:
            names.append(self.weights)
        return list(dict.fromkeys(names))


def request(
    column: str | list[str],
    bins: Any,
    range: Any,
    weights: Any,
    closed: Any,
    device: Any,
    chunk_size: Any,
    by: Any = None,
    **flags: Any,
) -> Request:
    """A :class:`Request` of these arguments, checked before any data is read."""
    columns = [column] if isinstance(column, str) else column
    if not isinstance(columns, list) or not columns or not all(isinstance(c, str) for c in columns):
        raise TypeError(f"`column` must be a column name (str) or a list of them, got {column!r}")
    if len(columns) > 8:
        raise ValueError(f"a histogram takes 1 to 8 columns, got {len(columns)}")
    if weights is not None and not isinstance(weights, str):
        raise TypeError(f"`weights` must be a column name (str), got {weights!r}")
    if closed not in ("left", "right"):
        raise ValueError(f"`closed` must be 'left' or 'right', got {closed!r}")
    if device not in ("auto", "cpu", "gpu"):
        raise ValueError(f"`device` must be 'auto', 'cpu' or 'gpu', got {device!r}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValueError(f"`chunk_size` must be a positive number of rows, got {chunk_size!r}")
    keys = None
    if by is not None:
        keys = [by] if isinstance(by, str) else by
        if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
            raise TypeError(f"`by` of a scan must be a column name or a list of them, got {by!r}")
        if len(columns) > 1:
            raise ValueError("`by` takes one column: group keys of an n-D histogram are not kept")
    return Request(columns, bins, range, weights, closed, device, chunk_size, keys, **flags)


@dataclass
class Plan:
    """The passes of a scan (see the module's header); ``str(plan)`` says what each reads."""

    dataset: Dataset
    request: Request
    schema: pl.Schema
    binning: BinningKind
    # The rule of a "rule" or "in memory" binning ("fd", "integer", a time step...).
    rule: Any = None
    # The numeric range a rule is over, or None (the data's).
    span: tuple[float, float] | None = None
    # The statistics' answer for the first pass (None: no first pass, or read below).
    first: statistics.Answer | None = None
    needs_first: bool = False
    fill: FillKind = "sink"
    device: Literal["cpu", "gpu"] = "cpu"
    notes: list[str] = field(default_factory=list)

    @property
    def dtypes(self) -> list[pl.DataType]:
        return [self.schema[c] for c in self.request.columns]

    def __str__(self) -> str:
        r = self.request
        columns = ", ".join(f"{c!r} ({self.schema[c]})" for c in r.columns)
        lines = [f"scan     {self.dataset.label}: {columns}"]
        if r.weights is not None:
            lines[0] += f", weights {r.weights!r}"
        if r.by:
            lines[0] += f", groups by {', '.join(map(repr, r.by))}"
        lines.append(f"bins     {self._bins_text()}")
        if self.needs_first:
            if isinstance(self.first, statistics.Found):
                lines.append(f"pass 1   extremes from the {self.first.describe()}")
            else:
                why = f" ({self.first.reason})" if self.first is not None else ""
                what = (
                    "extremes and number of values"
                    if self.rule in STREAMED_RULES[1:]
                    else "extremes"
                )
                lines.append(f"pass 1   {what}: a streaming pass reading the column{why}")
        lines.append(f"{'pass 2' if self.needs_first else 'pass':<8} {self._fill_text()}")
        lines.extend(f"note     {n}" for n in self.notes)
        return "\n".join(lines)

    def _bins_text(self) -> str:
        r = self.request
        if self.binning == "fixed":
            return f"{_short(r.bins)} over {r.range!r}" if r.range is not None else _short(r.bins)
        if self.binning == "data range":
            return f"{_short(r.bins)} over the data's [min, max] (numpy's range)"
        over = "the data's extremes" if self.span is None else repr(self.span)
        return f"{self.rule!r} over {over}"

    def _fill_text(self) -> str:
        if self.fill == "memory":
            return "the columns read into memory (the rule needs every value)"
        if self.fill == "frames":
            return (
                "batches in row order, the expression's rows of each summed per group and bin "
                "(groups in order of first appearance)"
            )
        where = (
            "batched on the GPU (the cores are left to the decoder)"
            if self.device == "gpu"
            else "counted on the engine's threads as they decode (CPU)"
        )
        return f"fill inside Polars' streaming engine: morsels {where}"


def _short(bins: Any) -> str:
    if isinstance(bins, int):
        return f"{bins} bins"
    try:
        edges = list(bins)
    except TypeError:
        return repr(bins)
    return f"{len(edges) - 1} bins of explicit edges" if len(edges) > 1 else repr(bins)


def make(dataset: Dataset, request: Request, schema: pl.Schema) -> Plan:
    """The plan for ``request`` over ``dataset`` (its schema read), its arguments checked
    against the dtypes; the files' statistics read where the first pass may use them."""
    r = request
    for name in r.names:
        if name not in schema:
            raise pl.exceptions.ColumnNotFoundError(
                f"no column {name!r} to histogram; columns: {', '.join(schema.names())}"
            )
    for c in r.columns:
        if not passes.supported_dtype(schema[c]):
            raise TypeError(
                f"column {c!r} has dtype {schema[c]}, which cannot be histogrammed: use "
                f"{passes.SUPPORTED_DTYPES} column"
            )
    if r.weights is not None and not passes.numeric(schema[r.weights]):
        raise ValueError(
            f"`weights` must be numeric (integers, Float16/32/64 or Decimal), got column "
            f"{r.weights!r} of dtype {schema[r.weights]}"
        )
    plan = Plan(dataset, r, schema, _binning(r, schema))
    if plan.binning in ("rule", "in memory"):
        plan.rule, plan.span = _rule(r, schema)
        if plan.rule in IN_MEMORY_RULES or _args.is_time_bins(r.bins):
            plan.binning = "in memory"
    plan.needs_first = plan.binning == "data range" or (
        plan.binning == "rule" and (plan.span is None or plan.rule != "integer")
    )
    if plan.needs_first and len(r.columns) == 1 and not r.by:
        need_count = plan.rule in STREAMED_RULES[1:]
        if plan.span is None:
            plan.first = statistics.extremes(
                dataset, r.columns[0], schema[r.columns[0]], r.weights, need_count
            )
        else:
            plan.first = statistics.Refused("values within `range` are counted by reading")
    if plan.binning == "in memory":
        plan.fill = "memory"
    elif r.by or (r.flow and len(r.columns) > 1):
        plan.fill = "frames"
    elif r.data_range_by_default and plan.binning == "fixed" and has_temporal(r.bins, r.range):
        # Dates and times as edges: the expression converts them to each column's units; its
        # rows, batch by batch, are the frame to give (a density of them: in memory).
        plan.fill = "memory" if r.density else "frames"
        plan.notes.append("dates and times as edges: the expression bins each batch")
    plan.device = device_for(r.device, plan.dtypes)
    return plan


def _binning(r: Request, schema: pl.Schema) -> BinningKind:
    """The kind of binning asked for (the arguments checked as far as they go without data)."""
    bins, range = r.bins, r.range
    if isinstance(bins, str) or _args.is_time_bins(bins):
        return "rule"
    if isinstance(range, str):
        if range != "auto":
            raise ValueError(f"`range` must be (min, max), None or 'auto', got {range!r}")
        return "data range"
    if range is None and r.data_range_by_default and _is_count(bins):
        return "data range"
    return "fixed"


def has_temporal(*values: Any) -> bool:
    """Whether bins or ranges hold dates, datetimes, durations or expressions."""
    import datetime as dt

    for v in values:
        if isinstance(v, (dt.date, dt.timedelta, pl.Expr)):
            return True
        if type(v).__module__ == "numpy" and getattr(v, "dtype", None) is not None:
            if v.dtype.kind in "mM":
                return True
        if isinstance(v, (list, tuple)) and has_temporal(*v):
            return True
    return False


def _is_count(bins: Any) -> bool:
    import operator

    if isinstance(bins, bool):
        return False
    try:
        operator.index(bins)
    except TypeError:
        return False
    return True


def _rule(r: Request, schema: pl.Schema) -> tuple[Any, tuple[float, float] | None]:
    """A rule's name (or time bins as given) and the numeric range it is over, checked against
    the other arguments and the column's dtype before any data is read."""
    from polars_gpu_hist._histogram.binning import number_range

    if len(r.columns) > 1:
        raise ValueError(
            "a scan of several columns takes a number of bins or edges per axis; rules and "
            "time bins are for one column"
        )
    dtype = schema[r.columns[0]]
    if _args.is_time_bins(r.bins):
        _args.bins(r.bins)
        if isinstance(r.range, str):
            raise ValueError(
                f"range={r.range!r} is for a number of bins: time bins start at the data's "
                "first boundary (range=None) or at range=(min, max)"
            )
        if r.weights is not None and not r.data_range_by_default:
            raise ValueError(
                "`weights` with time bins is not supported by histogram_scan: drop one"
            )
        if not dtype.is_temporal() or dtype == pl.Time:
            raise ValueError(
                f"time bins (bins={r.bins!r}) need a Date, Datetime or Duration column, got "
                f"{dtype}: give a number of bins, edges or a rule"
            )
        return r.bins, None
    rule = _args.bins(r.bins)
    assert isinstance(rule, str)
    if isinstance(r.range, str):
        raise ValueError(
            f"range={r.range!r} is for a number of bins: bins={rule!r} takes the range from the "
            "data itself (range=None) or from range=(min, max)"
        )
    if r.weights is not None:
        _args.refuse_weighted_estimator(rule)
    if rule == "integer" and dtype.is_float():
        raise ValueError(
            f'`bins="integer"` needs an integer, Date, Datetime or Duration column, got {dtype}: '
            "give a number of bins or edges"
        )
    return rule, number_range(r.range)


def device_for(device: Device, dtypes: list[pl.DataType]) -> Literal["cpu", "gpu"]:
    """Where a scan counts. In a scan the cores decode: counting on the GPU leaves them to it,
    so ``"auto"`` takes the GPU wherever one can be used (Float16 columns, which numpy bins in
    float16 arithmetic, are binned on the CPU)."""
    if device == "cpu":
        return "cpu"
    if device == "gpu":
        return "gpu"
    if any(d == pl.Float16 for d in dtypes) or not _native.gpu_available():
        return "cpu"
    return "gpu"
