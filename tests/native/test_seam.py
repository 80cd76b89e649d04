"""The values the native calls take are checked where they are made, without a GPU: a device
sample of arrays that differ, a 1-D call handed several dimensions, options whose fields the
native side does not know, extremes that are not (min, max)."""

from __future__ import annotations

import pickle
import typing

import pytest

from polars_gpu_hist import _internal
from polars_gpu_hist._args import arguments as _args
from polars_gpu_hist._native import options as _options


def test_a_device_sample_is_one_dtype_and_length() -> None:
    """The one device-array check (src/api/device.rs `one_dtype_and_length`), reached from
    Python before any GPU call: the addresses are never read here."""
    sample = _internal.DeviceSample([(1 << 20, 5, "<f4", 1), (2 << 20, 5, "<f4", 1)], 3 << 20)
    assert (sample.rows, sample.ndim) == (5, 2)
    with pytest.raises(ValueError, match="share one dtype and length: float64 of 5 rows"):
        _internal.DeviceSample([(1 << 20, 5, "<f4", 1), (2 << 20, 5, "<f8", 1)])
    with pytest.raises(ValueError, match="share one dtype and length: float32 of 6 rows"):
        _internal.DeviceSample([(1 << 20, 5, "<f4", 1), (2 << 20, 6, "<f4", 1)])
    with pytest.raises(ValueError, match="no arrays in GPU memory"):
        _internal.DeviceSample([])
    with pytest.raises(ValueError, match="big-endian"):
        _internal.DeviceSample([(1 << 20, 5, ">f4", 1)])


def test_a_1d_call_refuses_a_sample_of_several_dimensions() -> None:
    """Whether a call is 1-D follows from its options' type; a sample of two dimensions under
    1-D options is the caller's mistake, refused before the GPU is asked for."""
    sample = _internal.DeviceSample([(1 << 20, 5, "<f4", 1), (2 << 20, 5, "<f4", 1)])
    options = _internal.HistogramOptions(
        pickle.dumps(_args.histogram_kwargs(4, (0, 1), **_DEFAULTS))
    )
    with pytest.raises(ValueError, match="one contiguous array"):
        _internal.histogram_cuda(["x", "y"], sample, options)
    target = _internal.DeviceTarget(0, 1 << 20, 4, [None])
    with pytest.raises(ValueError, match="one contiguous array"):
        _internal.histogram_cuda_into(sample, options, target)


_DEFAULTS: dict[str, object] = {
    "density": False,
    "closed": "left",
    "flow": False,
    "device": "auto",
    "kernel": "auto",
}


def _every_field(kwargs: type) -> dict[str, object]:
    """A value for every field the TypedDict declares."""
    sample: dict[str, object] = {
        "density": True,
        "closed": "right",
        "flow": True,
        "device": "cpu",
        "kernel": None,
        "repeated_edges": True,
    }
    keys = set(typing.get_type_hints(kwargs))
    return {k: v for k, v in sample.items() if k in keys}


def test_the_typed_options_are_the_native_options() -> None:
    """Every field `_options` declares is one src/options.rs reads (it refuses unknown fields),
    and what `_args` builds parses."""
    one = {**_every_field(_options.HistogramKwargs), "bins": 4, "range": (0.0, 1.0)}
    assert set(one) == set(typing.get_type_hints(_options.HistogramKwargs))
    _internal.HistogramOptions(pickle.dumps(one))
    dd = {**_every_field(_options.HistogramDdKwargs), "bins": [4, 5], "range": [None, (0, 1)]}
    assert set(dd) == set(typing.get_type_hints(_options.HistogramDdKwargs))
    _internal.HistogramDdOptions(pickle.dumps(dd))
    _internal.HistogramOptions(pickle.dumps(_args.histogram_kwargs("fd", None, **_DEFAULTS)))
    _internal.HistogramDdOptions(
        pickle.dumps(_args.dd_kwargs(2, [4, [0, 1, 2]], None, **_DEFAULTS))
    )
    with pytest.raises(ValueError, match="unknown field"):
        _internal.HistogramOptions(pickle.dumps({**one, "bin": 4}))
    with pytest.raises(ValueError):
        _internal.HistogramDdOptions(pickle.dumps(one))  # 1-D options are not n-D ones


def test_the_typed_accumulator_arguments_are_the_native_ones() -> None:
    """`Histogram`'s arguments as `_options` types them are what src/python/histogram.rs reads
    (it refuses unknown fields)."""
    axis = {"bins": 4, "range": (0.0, 1.0)}
    assert set(axis) == set(typing.get_type_hints(_options.AccumulatorAxis))
    arguments = {
        "axes": [axis, {"bins": [0.0, 1.0, 3.0]}],
        "closed": "right",
        "weighted": True,
        "device": "cpu",
        "kernel": None,
    }
    assert set(arguments) == set(typing.get_type_hints(_options.AccumulatorArguments))
    assert _internal.Histogram(pickle.dumps(arguments)).shape == [4, 2]
    with pytest.raises(ValueError, match="unknown field"):
        _internal.Histogram(pickle.dumps({**arguments, "weights": True}))


def test_data_extremes_are_values_of_their_kind() -> None:
    """The extremes of range="auto" cross as exact values, integers past 64 bits included."""
    assert "Integer" in repr(_internal.DataExtremes.integer(-(2**64), 2**64 - 1))
    _internal.DataExtremes.float32(0.5, 1.5)
    with pytest.raises(ValueError, match="min"):
        _internal.DataExtremes.integer(3, 2)
    with pytest.raises(ValueError, match="one axis"):
        _internal.Histogram(
            pickle.dumps({"axes": [{"bins": 2}, {"bins": 2}]}),
            _internal.DataExtremes.float64(0.0, 1.0),
        )
    with pytest.raises(ValueError, match="needs an int `bins` and no `range`"):
        _internal.Histogram(
            pickle.dumps({"axes": [{"bins": 2, "range": (0.0, 1.0)}]}),
            _internal.DataExtremes.float64(0.0, 1.0),
        )
