"""The options the native side reads, typed: a mirror of src/options.rs' serde form (the
plugin's kwargs, and the options the native device calls parse once). `_args` builds them;
a field renamed on one side is a type error on the other, not a run-time failure on the GPU
paths CI cannot run."""

from __future__ import annotations

import pickle
from collections.abc import Mapping
from typing import Literal, NewType, TypedDict, Union, final


@final
class ExactInt(TypedDict):
    """An integer of up to 128 bits as decimal text (`ExactInt`, src/bins/integer.rs)."""

    int: str


@final
class Float16Scalar(TypedDict):
    """A numpy float16 scalar: numpy's float16 linspace and span (`Scalar::Float16`)."""

    float16: float


@final
class Float32Scalar(TypedDict):
    """A numpy float32 scalar: numpy's float32 linspace and compares (`Scalar::Float32`)."""

    float32: float


@final
class Float64Scalar(TypedDict):
    """A numpy float64 scalar: float64 edges even beside float32 data (`Scalar::Float64`)."""

    float64: float


@final
class TemporalScalar(TypedDict):
    """A date, datetime or duration as an exact count of `unit` (`Scalar::Temporal`)."""

    temporal: Literal["date", "datetime", "duration"]
    value: int
    unit: Literal["D", "h", "m", "s", "ms", "us", "ns"]
    aware: bool


# `Scalar` (untagged): a Python float, or one of the tagged forms above.
Scalar = Union[float, ExactInt, Float16Scalar, Float32Scalar, Float64Scalar, TemporalScalar]
# `BinRule`: numpy's estimators and one bin per integer, by the names users give.
BinRule = Literal["auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt", "integer"]


@final
class EveryBins(TypedDict):
    """Time bins: a Polars duration string such as ``"1w"`` (`Bins::Every`)."""

    every: str


# `Bins` (untagged): a count, explicit edges, a rule, or time bins.
Bins = Union[int, list[Scalar], BinRule, EveryBins]
# `range`: `(min, max)` or none.
Range = Union[tuple[Scalar, Scalar], None]
ClosedName = Literal["left", "right"]
DeviceName = Literal["auto", "cpu", "gpu"]
# `gpu::Family`, or None for the plan's choice.
FamilyName = Literal[
    "shared", "packed", "spill", "segmented", "batched", "global", "private", "banked", "radix"
]


class CommonKwargs(TypedDict, total=False):
    """The options every histogram takes (serde fills the ones left out with their defaults)."""

    density: bool
    closed: ClosedName
    flow: bool
    device: DeviceName
    kernel: FamilyName | None
    repeated_edges: bool


class HistogramKwargs(CommonKwargs, total=False):
    """`HistogramOptions`: a 1-D histogram (and `by=`)."""

    bins: Bins
    range: Range


class HistogramDdKwargs(CommonKwargs, total=False):
    """`HistogramDdOptions`: one `bins` and `range` per dimension."""

    bins: list[Bins]
    range: list[Range]


class ByKwargs(TypedDict):
    """The `histogram_by` plugin's kwargs (src/python/expressions.rs `ByKwargs`): each key's
    name, where known, travels with the options (Polars hands the plugin the keys without
    them); one entry per key input, in order."""

    options: HistogramKwargs
    keys: list[str | None]


class DdKwargs(TypedDict):
    """The `histogramdd` plugin's kwargs (src/python/expressions.rs `DdKwargs`)."""

    options: HistogramDdKwargs
    weighted: bool


# Whatever the native side unpickles: the plugin's kwargs, or the options of a direct call.
Kwargs = Union[HistogramKwargs, HistogramDdKwargs, ByKwargs, DdKwargs]


class AccumulatorAxis(TypedDict, total=False):
    """One axis of `polars_gpu_hist.Histogram` (src/python/histogram.rs `AxisArgument`): a count
    or edges (`bins::Binning`), and a fixed range for a count."""

    bins: int | list[float]
    range: tuple[float, float] | None


class _AccumulatorChoices(TypedDict, total=False):
    """What `Arguments` reads when given: a kernel family pinned (None: the plan's choice)."""

    kernel: FamilyName | None


class AccumulatorArguments(_AccumulatorChoices):
    """`polars_gpu_hist.Histogram`'s arguments (src/python/histogram.rs `Arguments`); a range
    taken from all the data travels beside them as a `DataExtremes`."""

    axes: list[AccumulatorAxis]
    closed: ClosedName
    weighted: bool
    device: DeviceName


# Each kind of pickled argument the native functions take is a type of its own (the stub's
# parameters name them), made by one function each: options of one kind handed where another
# is due are a type error, not an unpickling failure at run time.
PickledHistogramOptions = NewType("PickledHistogramOptions", bytes)
PickledHistogramDdOptions = NewType("PickledHistogramDdOptions", bytes)
PickledHistKwargs = NewType("PickledHistKwargs", bytes)
PickledHistogramArguments = NewType("PickledHistogramArguments", bytes)


def pickled_histogram_options(options: HistogramKwargs) -> PickledHistogramOptions:
    """A 1-D histogram's options (src/options.rs `HistogramKwargs`), as the native side reads
    them (and Polars hands a plugin its kwargs: pickled)."""
    return PickledHistogramOptions(pickle.dumps(options, protocol=5))


def pickled_histogramdd_options(options: HistogramDdKwargs) -> PickledHistogramDdOptions:
    """An n-D histogram's options (src/options.rs `HistogramDdKwargs`)."""
    return PickledHistogramDdOptions(pickle.dumps(options, protocol=5))


def pickled_hist_kwargs(kwargs: Mapping[str, object]) -> PickledHistKwargs:
    """`gpu_hist.hist`'s kwargs (src/python/hist.rs `HistKwargs`)."""
    return PickledHistKwargs(pickle.dumps(dict(kwargs), protocol=5))


def pickled_histogram_arguments(arguments: AccumulatorArguments) -> PickledHistogramArguments:
    """`polars_gpu_hist.Histogram`'s arguments (src/python/histogram.rs `Arguments`)."""
    return PickledHistogramArguments(pickle.dumps(arguments, protocol=5))
