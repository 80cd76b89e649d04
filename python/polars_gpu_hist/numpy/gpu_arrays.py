"""The numpy drop-in for arrays in GPU memory (CuPy, PyTorch): counted where they lie, the
counts (and equal bins' edges) left on the device as the caller's library's arrays, queued on
its current stream. The arrays reach the native side as one checked `DeviceSample`."""

from __future__ import annotations

import builtins
import contextlib
import functools
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from polars_gpu_hist import _native
from polars_gpu_hist._args import arguments as _args
from polars_gpu_hist._native import cuda_arrays as _cuda
from polars_gpu_hist._native import options as _options
from polars_gpu_hist.numpy import rules


def library(data: Any) -> str:
    """Which array library `data` belongs to: "cupy", "torch" or "numpy" (host)."""
    module = type(data).__module__.split(".")[0]
    if module == "cupy":
        return "cupy"
    if module == "torch" and getattr(data, "is_cuda", False):
        return "torch"
    if getattr(data, "__cuda_array_interface__", None) is not None:
        return "cupy"
    return "numpy"


def device_input(data: Any) -> Any:
    """A device array as its library holds it, contiguous; torch tensors detached; booleans as
    uint8 (numpy counts them as 0 and 1)."""
    if library(data) == "torch":
        import torch

        data = data.detach().contiguous()
        return data.to(torch.uint8) if data.dtype == torch.bool else data
    return data.astype("uint8") if getattr(data, "dtype", None) == np.dtype(np.bool_) else data


def _hashable(bins: Any, range: Any) -> tuple[Any, ...] | None:
    """A key for arguments that prepare alike, or None: the types count (a numpy float32 scalar
    equals the Python float it holds, but makes float32 edges)."""
    key = (
        type(bins),
        bins,
        None if range is None else tuple((type(v), v) for v in range),
    )
    try:
        hash(key)
    except TypeError:
        return None
    return key


_PREPARED: dict[tuple[Any, ...], tuple[_native.HistogramOptions, str | None]] = {}


def _prepared(bins: Any, range: Any, typestr: str) -> tuple[_native.HistogramOptions, str | None]:
    """The parsed options and numpy's edge dtype for these arguments, checked once per distinct
    arguments (repeated calls skip the Python work: a call of 256 bins takes 0.7 ms)."""
    key = _hashable(bins, range)
    slot = None if key is None else (*key, typestr)
    found = None if slot is None else _PREPARED.get(slot)
    if found is not None:
        return found
    compared = rules.as_numpy_compares(bins, np.dtype(typestr))
    options = _native.HistogramOptions(
        _options.pickled_histogram_options(
            _args.histogram_kwargs(
                compared,
                range,
                density=False,
                closed="left",
                flow=False,
                device="auto",
                kernel="auto",
                repeated_edges=True,
            )
        )
    )
    edge_dtype = (
        None if rules.explicit(bins) else rules.edge_dtype(np.dtype(typestr), bins, range).str
    )
    if slot is not None:
        if len(_PREPARED) > 256:
            _PREPARED.clear()
        _PREPARED[slot] = (options, edge_dtype)
    return options, edge_dtype


def device_id(data: Any) -> int | None:
    """The GPU holding a device array (CuPy, PyTorch, any `__cuda_array_interface__`); None for
    a host array or one without rows (found nowhere)."""
    lib = library(data)
    if lib == "numpy":
        return None
    if lib == "torch":
        return int(data.device.index)
    iface = getattr(data, "__cuda_array_interface__", None)
    if iface is None or math.prod(iface["shape"]) == 0:
        return None
    return int(_native.device_of(int(iface["data"][0]), "the array"))


@contextlib.contextmanager
def on_device(arrays: list[Any], lib: str) -> Iterator[None]:
    """The GPU holding `arrays` made current while their histogram is made, as their library's
    own functions do: its current stream, and the counts and edges made here, are then on that
    device, whichever device was current before (current again after). Arrays on several GPUs
    are refused: a kernel cannot read another GPU's memory."""
    homes = [(i, d) for i, a in enumerate(arrays) if (d := device_id(a)) is not None]
    for i, d in homes[1:]:
        if d != homes[0][1]:
            j, first = homes[0]
            raise ValueError(
                f"the arrays of one call must be on one GPU: array {i} is on GPU {d}, but "
                f"array {j} on GPU {first}; copy them to one device first (e.g. "
                f"`cupy.asarray(a)` under `with cupy.cuda.Device({first}):`, or "
                f'`t.to("cuda:{first}")`)'
            )
    if not homes:
        yield
        return
    if lib == "torch":
        import torch

        with torch.cuda.device(homes[0][1]):
            yield
        return
    try:
        import cupy
    except ImportError:  # another producer (Numba, cuDF without CuPy): counted by address alone
        yield
        return
    with cupy.cuda.Device(homes[0][1]):
        yield


def histogram(a: Any, bins: Any, range: Any, density: Any, weights: Any) -> tuple[Any, Any]:
    """numpy.histogram of a device array, on the GPU holding it."""
    lib = library(a)
    with on_device([a] if weights is None else [a, weights], lib):
        return _histogram(a, bins, range, density, weights)


def _histogram(a: Any, bins: Any, range: Any, density: Any, weights: Any) -> tuple[Any, Any]:
    a = device_input(a)
    lib = library(a)
    iface = _cuda.cuda_array(a)
    assert iface is not None, "a device input has an array interface"
    if weights is not None:
        weights = _to_float64(weights, lib, a)
    sample = _cuda.sample([_cuda.column(iface)], weights)
    stream = _current_stream(lib, a)
    _cuda.sync_stream(iface, stream)
    options, edge_dtype = _prepared(bins, range, iface["typestr"])
    n = rules.known_bins(bins)
    if n is not None:
        # Into arrays of the caller's library, queued on its stream: nothing waits for the
        # kernels, as with CuPy's own functions.
        counts_dtype = "float64" if weights is not None else "int64"
        counts = _empty(lib, a, n, counts_dtype)
        edges = None if edge_dtype is None else _empty(lib, a, n + 1, edge_dtype)
        edge_target = None
        if edges is not None and edge_dtype is not None:
            edge_target = _native.EdgeTarget(_pointer(edges, lib), edge_dtype)
        target = _native.DeviceTarget(stream, _pointer(counts, lib), n, [edge_target])
        host_edges, _report = _native.histogram_cuda_into(sample, options, target)
        if edges is None:
            edges = _to_device(np.asarray(bins), lib, a)
        elif host_edges[0] is not None:
            edges[:] = _to_device(host_edges[0].to_numpy().astype(edge_dtype), lib, a)
        if density:
            counts = rules.density(counts, [diff(edges, lib)], _module(lib))
        return counts, edges
    counts, edges, _report = _native.histogram_cuda_counts(sample, options, [edge_dtype])
    counts = _wrap(counts, lib, a)
    explicit = np.asarray(bins) if rules.explicit(bins) else None
    dev_edges = _axis_device_edges(edges[0], explicit, lib, a, edge_dtype)
    if density:
        counts = rules.density(counts, [diff(dev_edges, lib)], _module(lib))
    return counts, dev_edges


def _device_sample(
    sample: Any, columns: list[Any], lib: str
) -> tuple[list[_cuda.DeviceColumn], _cuda.CudaArrayInterface, list[Any]]:
    """The sample's columns where they lie, as (device columns, interface, owners):
    an (n, d) C-contiguous array, or 1-D contiguous arrays of one dtype and length; otherwise
    (other layouts, mixed dtypes) one stacked copy in numpy's common dtype. The caller holds the
    owners until the kernels are queued: a copy freed sooner could become the counts' memory."""
    module = _module(lib)
    if getattr(sample, "ndim", 0) == 2:
        matrix = device_input(sample)
        iface = _cuda.cuda_array(matrix, ndim=2)
        assert iface is not None, "a 2-D device array has an array interface"
        strides = iface.get("strides")
        itemsize = int(iface["typestr"][2:])
        dims = iface["shape"][1]
        if strides is None or tuple(strides) == (dims * itemsize, itemsize):
            return _cuda.matrix_columns(iface), iface, [matrix]
    arrays = [device_input(c) for c in columns]
    ifaces: list[_cuda.CudaArrayInterface] = [
        i for c in arrays if (i := getattr(c, "__cuda_array_interface__", None)) is not None
    ]
    # Already one contiguous column each of one dtype and length: read where they lie.
    same = len(ifaces) == len(arrays) and all(
        len(i["shape"]) == 1
        and i["typestr"] == ifaces[0]["typestr"]
        and i["shape"] == ifaces[0]["shape"]
        and i.get("strides") in (None, (int(i["typestr"][2:]),))
        for i in ifaces
    )
    if same:
        return [_cuda.column(i) for i in ifaces], ifaces[0], arrays
    # numpy's sample dtype (pairwise from the left, as `np.array` stacks), not the libraries'
    # own promotion of all at once (int16, uint16 and float32: float64, not float32).
    dtype = functools.reduce(np.promote_types, [_numpy_dtype(c, lib) for c in arrays])
    if lib == "torch":
        arrays = [c.to(getattr(module, dtype.name)) for c in arrays]
    else:
        arrays = [c.astype(dtype, copy=False) for c in arrays]
    stacked = module.stack(arrays, 1)
    stacked = stacked.contiguous() if lib == "torch" else module.ascontiguousarray(stacked)
    iface = _cuda.cuda_array(stacked, ndim=2)
    assert iface is not None, "a stacked device array has an array interface"
    # Freed once the kernels are queued, the copy goes back to its library's pool for this
    # stream: whatever reuses it then is queued after them.
    return _cuda.matrix_columns(iface), iface, [stacked]


def _numpy_dtype(array: Any, lib: str) -> np.dtype[Any]:
    """A device array's dtype as numpy names it."""
    if lib == "torch":
        return np.dtype(str(array.dtype).removeprefix("torch."))
    dtype: np.dtype[Any] = np.dtype(array.dtype)
    return dtype


def histogramdd(
    sample: Any,
    columns: list[Any],
    bins: Any,
    range: Any,
    density: Any,
    weights: Any,
    lib: str,
) -> tuple[Any, list[Any]]:
    """numpy.histogramdd of device arrays, on the GPU holding them."""
    with on_device([*columns] if weights is None else [*columns, weights], lib):
        return _histogramdd(sample, columns, bins, range, density, weights, lib)


def _histogramdd(
    sample: Any,
    columns: list[Any],
    bins: Any,
    range: Any,
    density: Any,
    weights: Any,
    lib: str,
) -> tuple[Any, list[Any]]:
    like = columns[0]  # for its device only: no copy of it is needed
    module = _module(lib)
    device_columns, iface, _owners = _device_sample(sample, columns, lib)
    length, dims = iface["shape"][0], len(device_columns)
    if weights is not None:
        weights = _to_float64(weights, lib, like)
    checked = _cuda.sample(device_columns, weights)
    stream = _current_stream(lib, like)
    _cuda.sync_stream(iface, stream)
    sample_dtype = np.dtype(iface["typestr"])
    compared = rules.dd_as_numpy_compares(bins, dims, sample_dtype)
    options = _native.HistogramDdOptions(
        _options.pickled_histogramdd_options(
            _args.dd_kwargs(
                dims,
                compared,
                range,
                density=False,
                closed="left",
                flow=False,
                device="auto",
                kernel="auto",
                repeated_edges=True,
            )
        )
    )
    axis_bins = [rules.entry(bins, i, dims) for i in builtins.range(dims)]
    edge_dtypes = [
        None
        if rules.explicit(b)
        else rules.dd_edge_dtype(sample_dtype, rules.entry(range, i, dims), length == 0).str
        for i, b in enumerate(axis_bins)
    ]
    known = [rules.known_bins(b) for b in axis_bins]
    shape = [n for n in known if n is not None]
    if len(shape) == dims:
        cells = int(np.prod(shape))
        counts = _empty(lib, like, cells, "float64" if weights is not None else "int64")
        made: list[Any] = [
            None if dtype is None else _empty(lib, like, n + 1, dtype)
            for n, dtype in zip(shape, edge_dtypes)
        ]
        targets = [
            None if e is None or dtype is None else _native.EdgeTarget(_pointer(e, lib), dtype)
            for e, dtype in zip(made, edge_dtypes)
        ]
        target = _native.DeviceTarget(stream, _pointer(counts, lib), cells, targets)
        host_edges, _report = _native.histogram_cuda_into(checked, options, target)
        for i, (b, host) in enumerate(zip(axis_bins, host_edges)):
            if made[i] is None:
                made[i] = _to_device(np.asarray(b), lib, like)
            elif host is not None:
                made[i][:] = _to_device(host.to_numpy().astype(edge_dtypes[i]), lib, like)
        counts = counts.reshape(tuple(shape))
        if density:
            counts = rules.density(counts, [diff(e, lib) for e in made], module)
        return counts, made
    counts, edges, _report = _native.histogram_cuda_counts(checked, options, edge_dtypes)
    counts = _wrap(counts, lib, like)
    dev_edges = [
        _axis_device_edges(e, np.asarray(b) if rules.explicit(b) else None, lib, like, dtype)
        for e, b, dtype in zip(edges, axis_bins, edge_dtypes)
    ]
    counts = counts.reshape(tuple(len(e) - 1 for e in dev_edges))
    if density:
        counts = rules.density(counts, [diff(e, lib) for e in dev_edges], module)
    return counts, dev_edges


def _empty(lib: str, like: Any, n: int, dtype: str) -> Any:
    """An uninitialized array of the caller's library on `like`'s device (the kernels write
    every value)."""
    if lib == "torch":
        import torch

        return torch.empty(n, dtype=getattr(torch, np.dtype(dtype).name), device=like.device)
    import cupy

    return cupy.empty(n, dtype=dtype)


def _pointer(array: Any, lib: str) -> int:
    return int(array.data_ptr()) if lib == "torch" else int(array.data.ptr)


def _current_stream(lib: str, like: Any) -> int:
    """The handle of the library's current stream (0: the legacy default stream)."""
    if lib == "torch":
        import torch

        return int(torch.cuda.current_stream(like.device).cuda_stream)
    import cupy

    return int(cupy.cuda.get_current_stream().ptr)


def _module(lib: str) -> Any:
    if lib == "torch":
        import torch

        return torch
    import cupy

    return cupy


def _wrap(device_counts: Any, lib: str, like: Any) -> Any:
    """The counts left on the device as the input's library's array (no copy)."""
    if lib == "torch":
        import torch

        return torch.as_tensor(device_counts, device=like.device)
    import cupy

    return cupy.asarray(device_counts)


def _axis_device_edges(
    edges: tuple[Any, Any], explicit: np.ndarray | None, lib: str, like: Any, dtype: str | None
) -> Any:
    """One axis's edges on the input's device: made there (equal bins), else copied over from
    the host (explicit edges as given; equal ones the device could not make, in `dtype`)."""
    on_device, on_host = edges
    if on_device is not None:
        return _wrap(on_device, lib, like)
    if explicit is not None:
        return _to_device(explicit, lib, like)
    return _to_device(on_host.to_numpy().astype(dtype), lib, like)


def _to_device(values: np.ndarray, lib: str, like: Any) -> Any:
    if lib == "torch":
        import torch

        return torch.as_tensor(values, device=like.device)
    import cupy

    return cupy.asarray(values)


def _to_float64(weights: Any, lib: str, like: Any) -> Any:
    """The weights as a contiguous float64 array of the data's library on its device (host
    weights are copied over)."""
    if lib == "torch":
        import torch

        if not isinstance(weights, torch.Tensor):
            weights = torch.as_tensor(np.asarray(weights, dtype=np.float64))
        return weights.detach().to(device=like.device, dtype=torch.float64).contiguous()
    import cupy

    return cupy.ascontiguousarray(cupy.asarray(weights, dtype=cupy.float64))


def diff(edges: Any, lib: str) -> Any:
    if lib == "torch":
        return (edges[1:] - edges[:-1]).double()
    return (edges[1:] - edges[:-1]).astype("float64")
