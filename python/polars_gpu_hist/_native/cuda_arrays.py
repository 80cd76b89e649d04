"""Arrays already in GPU memory (CuPy, PyTorch, Numba): their `__cuda_array_interface__`,
checked once, made into the native `DeviceSample` (which checks that the arrays share one
dtype and length: the one place that rule lives), and the producer's stream honoured before a
kernel reads them."""

from __future__ import annotations

import builtins
import functools
import math
from collections.abc import Sequence
from typing import Any

from polars_gpu_hist import _native

# A `__cuda_array_interface__` (version 3): shape, typestr, data, strides, mask, stream.
CudaArrayInterface = dict[str, Any]

# One dimension of a device sample: (address, rows, typestr, stride in values).
DeviceColumn = tuple[int, int, str, int]


def cuda_array(data: Any, ndim: int = 1) -> CudaArrayInterface | None:
    """The CUDA array interface of `data` (a C-contiguous, unmasked array of `ndim`
    dimensions), if it has one; `None` also for a GPU array of another `ndim` when 2 is asked
    for (the caller then tries 1)."""
    iface: CudaArrayInterface | None = getattr(data, "__cuda_array_interface__", None)
    if iface is None:
        return None
    shape = tuple(iface["shape"])
    if len(shape) != ndim:
        if ndim == 2:
            return None
        raise ValueError(
            f"expected a 1-D array in GPU memory, got shape {shape}: flatten it first "
            "(`.ravel()`), or pass an (n, d) array to histogramdd"
        )
    strides = iface.get("strides")
    itemsize = int(iface["typestr"][2:])
    contiguous = tuple(itemsize * math.prod(shape[i + 1 :]) for i in builtins.range(ndim))
    if strides is not None and shape[0] > 1 and tuple(strides) != contiguous:
        raise ValueError("the array in GPU memory must be contiguous: make a contiguous copy")
    if iface.get("mask") is not None:
        raise ValueError("masked arrays in GPU memory are not supported")
    return iface


# The legacy default stream's handle: our kernels are queued after its work on the device.
_LEGACY_STREAM = 1


@functools.lru_cache(maxsize=1)
def _libcuda() -> Any:
    import ctypes

    return ctypes.CDLL("libcuda.so.1")


def sync_stream(iface: CudaArrayInterface, consumer: int | None = None) -> None:
    """Honour the producer's stream (CUDA array interface v3): its writes must be complete.
    Work on the legacy default stream (CuPy's and PyTorch's default), or on the `consumer`
    stream our kernels are queued on, needs no wait here: the kernels are ordered after it."""
    stream = iface.get("stream")
    if stream and stream != _LEGACY_STREAM and stream != consumer:
        import ctypes

        if _libcuda().cuStreamSynchronize(ctypes.c_void_p(stream)) != 0:
            raise RuntimeError("cuStreamSynchronize failed on the array's stream")


def weights_pointer(weights: Any, length: int) -> int | None:
    """The address of float64 weights in GPU memory of `length` rows (None: unweighted)."""
    if weights is None:
        return None
    w = cuda_array(weights)
    if w is None or w["typestr"][1:] != "f8" or w["shape"][0] != length:
        raise ValueError(
            "`weights` of an array in GPU memory must be a float64 GPU array of the same length"
        )
    sync_stream(w)
    return int(w["data"][0])


def sample(columns: Sequence[DeviceColumn], weights: Any = None) -> _native.DeviceSample:
    """The device sample of `columns` (checked: one dtype and length) and its `weights`, a
    float64 GPU array of as many rows (None: unweighted)."""
    checked = _native.DeviceSample(list(columns))
    if weights is None:
        return checked
    return _native.DeviceSample(list(columns), weights_pointer(weights, checked.rows))


def column(iface: CudaArrayInterface) -> DeviceColumn:
    """A contiguous 1-D array as one dimension of a device sample."""
    return (int(iface["data"][0]), int(iface["shape"][0]), str(iface["typestr"]), 1)


def matrix_columns(iface: CudaArrayInterface) -> list[DeviceColumn]:
    """The columns of a C-contiguous (n, d) device array: column j at offset j, stride d."""
    length, dims = iface["shape"]
    itemsize = int(iface["typestr"][2:])
    base = int(iface["data"][0])
    return [(base + j * itemsize, length, iface["typestr"], dims) for j in builtins.range(dims)]


def columns(data: tuple[Any, ...], weights: Any = None) -> _native.DeviceSample | None:
    """The device sample of `histogramdd`: one (n, d) array (column j at offset j, stride d)
    or several 1-D arrays; None when they are not in GPU memory. Each array's stream is
    honoured."""
    matrix = cuda_array(data[0], ndim=2) if len(data) == 1 else None
    if matrix is not None:
        sync_stream(matrix)
        return sample(matrix_columns(matrix), weights)
    if not data or not all(getattr(c, "__cuda_array_interface__", None) for c in data):
        return None
    ifaces = [cuda_array(c) for c in data]
    found = [i for i in ifaces if i is not None]
    checked = sample([column(i) for i in found], weights)
    for iface in found:
        sync_stream(iface)
    return checked
