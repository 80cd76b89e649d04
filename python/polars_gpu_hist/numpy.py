"""A drop-in for numpy's (and CuPy's) histogram functions, with numpy's arguments, return types
and counts::

    import polars_gpu_hist.numpy as ghnp

    counts, edges = ghnp.histogram(x, bins=256, range=(0, 1))    # numpy, CuPy or PyTorch x

Host arrays (numpy, lists, Polars Series) give numpy arrays. CuPy arrays give CuPy arrays and
PyTorch tensors give tensors on the same device: the data, the counts and equal bins' edges
never visit the host (those edges are made on the device, in numpy's dtype; explicit edges and
the rare spans no formula covers are copied over). Counts are int64 (float64 with weights or
density, complex128 with complex weights), equal to numpy's. Explicit edges follow numpy's rule
(an edge may repeat) and booleans count as uint8, as in numpy. Where this module differs from
numpy, it is where the whole package does (NaN is not counted rather than refused; n-D counts
are int64; see the README's table).
"""

from __future__ import annotations

import builtins
import warnings
from typing import Any

import numpy as np
import polars as pl

from polars_gpu_hist import _args, _cuda, _host_histogram, _host_histogramdd, _internal, _pickled

__all__ = ["histogram", "histogram2d", "histogram_bin_edges", "histogramdd"]


def _library(data: Any) -> str:
    """Which array library `data` belongs to: "cupy", "torch" or "numpy" (host)."""
    module = type(data).__module__.split(".")[0]
    if module == "cupy":
        return "cupy"
    if module == "torch" and getattr(data, "is_cuda", False):
        return "torch"
    if getattr(data, "__cuda_array_interface__", None) is not None:
        return "cupy"
    return "numpy"


def _device_input(data: Any) -> Any:
    """A device array as its library holds it, contiguous; torch tensors detached; booleans as
    uint8 (numpy counts them as 0 and 1)."""
    if _library(data) == "torch":
        import torch

        data = data.detach().contiguous()
        return data.to(torch.uint8) if data.dtype == torch.bool else data
    return data.astype("uint8") if getattr(data, "dtype", None) == np.dtype(np.bool_) else data


def _warn_bool(dtype: Any) -> None:
    """numpy.histogram's warning for boolean input, which it counts as uint8."""
    if str(dtype) in ("bool", "torch.bool"):
        warnings.warn(
            "Converting input from bool to <class 'numpy.uint8'> for compatibility.",
            RuntimeWarning,
            stacklevel=3,
        )


def _is_complex(weights: Any) -> bool:
    """Whether `weights` are complex (numpy sums them as such; this module, each part alone)."""
    if weights is None:
        return False
    dtype = getattr(weights, "dtype", None)
    if dtype is None:
        return bool(np.iscomplexobj(np.asarray(weights)))
    if _library(weights) == "torch":
        return bool(weights.is_complex())
    return np.dtype(dtype).kind == "c"


def _real_weights(weights: Any) -> Any:
    """Host weights as float64, refusing complex ones (which numpy.histogramdd refuses too)."""
    if _is_complex(weights):
        raise TypeError(
            "Cannot cast array data from dtype('complex128') to dtype('float64') according to "
            "the rule 'safe'"
        )
    return np.asarray(weights, dtype=np.float64).reshape(-1)


def _edge_dtype(a_dtype: np.dtype, bins: Any, range: Any) -> np.dtype:
    """The dtype numpy gives equal bins' edges: `result_type(first_edge, last_edge, a)`, made
    floating (float32 for float32 data and a range of Python floats or float32 scalars)."""
    if range is None:
        bin_type = a_dtype
    else:
        lo, hi = range
        bin_type = np.result_type(lo, hi, np.empty(0, dtype=a_dtype))
    if np.issubdtype(bin_type, np.integer) or bin_type == np.bool_:
        bin_type = np.result_type(bin_type, float)
    return np.dtype(bin_type)


def _counts_dtype(weighted: bool, density: Any) -> Any:
    return np.float64 if weighted or density else np.int64


def _explicit(bins: Any) -> bool:
    return not isinstance(bins, (str, int, np.integer))


def _as_numpy_compares(bins: Any, sample_dtype: np.dtype) -> Any:
    """Explicit edges in the type numpy's `searchsorted` compares them in with a sample of
    `sample_dtype` (their common type): integers, compared exactly, where that is an integer
    type (int64 edges with an int64 sample, uint64 with uint64); float64 where numpy promotes
    to it (uint64 beside int64 edges, float edges)."""
    if not _explicit(bins) or sample_dtype.kind not in "iub":
        return bins
    edges = np.asarray(bins)
    if edges.dtype.kind not in "iu":
        return bins
    if np.result_type(sample_dtype, edges.dtype).kind in "iu":
        return edges.tolist()
    return edges.astype(np.float64).tolist()


def _dd_as_numpy_compares(bins: Any, dims: int, sample_dtype: np.dtype) -> Any:
    """`_as_numpy_compares` for each dimension's edges (numpy stacks the sample first)."""
    if isinstance(bins, (str, int, np.integer)):
        return bins
    entries = list(bins)
    if len(entries) != dims:
        return bins
    return [_as_numpy_compares(b, sample_dtype) for b in entries]


def _density(counts: Any, widths: list[Any], lib: Any) -> Any:
    """numpy's `n / db / n.sum()` (n-D: divided by each axis's widths in turn, then by the
    total of the counts)."""
    out = counts.astype(lib.float64) if hasattr(counts, "astype") else counts.double()
    total = out.sum()
    for axis, w in enumerate(widths):
        shape = [1] * len(widths)
        shape[axis] = -1
        out = out / w.reshape(shape)
    return out / total


# numpy's own messages, for the errors it raises where this module must raise them too.
_NOT_AN_ESTIMATOR = "{!r} is not a valid estimator for `bins`"
_WEIGHTED_ESTIMATOR = (
    "Automated estimation of the number of bins is not supported for weighted data"
)
_DD_BINS_DIMENSION = "The dimension of bins must be equal to the dimension of the sample x."
_DD_BINS_STRING = "'<' not supported between instances of 'str' and 'int'"


def _check_estimator(bins: Any, weights: Any) -> None:
    """numpy's checks of a string `bins`: only its estimators (``"integer"`` is this
    package's, not numpy's), and never with weights."""
    if isinstance(bins, str):
        if bins not in _args.ESTIMATORS:
            raise ValueError(_NOT_AN_ESTIMATOR.format(bins))
        if weights is not None:
            raise TypeError(_WEIGHTED_ESTIMATOR)


def _check_dd_bins(bins: Any, dims: int) -> None:
    """numpy.histogramdd takes no estimator: a string is a sequence of one-letter entries
    (``ValueError`` unless it has one per dimension, then ``TypeError``), and an entry that is
    a string fails numpy's ``bins[i] < 1`` (``TypeError``)."""
    if isinstance(bins, str):
        if len(bins) != dims:
            raise ValueError(_DD_BINS_DIMENSION)
        raise TypeError(_DD_BINS_STRING)
    if isinstance(bins, (list, tuple, np.ndarray)) and any(isinstance(b, str) for b in bins):
        if len(bins) != dims:
            raise ValueError(_DD_BINS_DIMENSION)
        raise TypeError(_DD_BINS_STRING)


def histogram(
    a: Any,
    bins: Any = 10,
    range: Any = None,
    density: bool | None = None,
    weights: Any = None,
) -> tuple[Any, Any]:
    """numpy.histogram: ``(hist, bin_edges)`` with numpy's bins and counts.

    ``bins`` takes numpy's estimators (``"auto"``, ``"fd"``, ...) but not ``"integer"``, which
    is :func:`polars_gpu_hist.histogram`'s (numpy raises ``ValueError`` for it here too)."""
    _check_estimator(bins, weights)
    if _is_complex(weights):
        return _complex_histogram(a, bins, range, density, weights)
    if _explicit(bins):
        range = None  # numpy ignores `range` beside explicit edges
    if _library(a) != "numpy":
        _warn_bool(a.dtype)
        return _device_histogram(a, bins, range, density, weights)
    x = _host(a)
    if x.dtype == np.bool_:
        _warn_bool(x.dtype)
        x = x.astype(np.uint8)
    frame = _frame_histogram(x, _as_numpy_compares(bins, x.dtype), range, density, weights)
    # One copy each (numpy's arrays are writable; Polars' buffers are not).
    counts = frame["count"].to_numpy().astype(_counts_dtype(weights is not None, density))
    if _explicit(bins):
        return counts, np.asarray(bins)
    starts = frame["bin_start"].to_numpy()
    edges = np.empty(len(starts) + 1, dtype=_edge_dtype(x.dtype, bins, range))
    edges[:-1] = starts
    edges[-1] = frame["bin_end"][-1]
    return counts, edges


def _complex_histogram(
    a: Any, bins: Any, range: Any, density: Any, weights: Any
) -> tuple[Any, Any]:
    """Complex weights, as numpy sums them: the real and the imaginary parts each counted alone
    (each sum exact as a float64 sum is), then joined."""
    if not hasattr(weights, "real") or isinstance(weights, (list, tuple)):
        weights = np.asarray(weights)
    real, edges = histogram(a, bins, range, None, weights.real)
    imag, _ = histogram(a, bins, range, None, weights.imag)
    counts = real + 1j * imag
    if density:
        counts = counts / _diff(edges, _library(edges)) / counts.sum()
    return counts, edges


def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None, weights: Any = None) -> Any:
    """numpy.histogram_bin_edges: the edges ``histogram`` would use."""
    _check_estimator(bins, weights)
    return histogram(a, bins, range, None, None)[1]


def _host(a: Any) -> np.ndarray:
    """A host array, flattened as numpy flattens `histogram`'s input."""
    if isinstance(a, pl.Series):
        return a.to_numpy()
    return np.asarray(a).reshape(-1)


def _frame_histogram(
    x: np.ndarray, bins: Any, range: Any, density: Any, weights: Any
) -> pl.DataFrame:
    w = None if weights is None else np.asarray(weights, dtype=np.float64).reshape(-1)
    kwargs = _args.histogram_kwargs(
        bins, range, bool(density), "left", False, "auto", "auto", repeated_edges=True
    )
    return _host_histogram(x, w, kwargs).struct.unnest()


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


_PREPARED: dict[tuple[Any, ...], tuple[bytes, str | None]] = {}


def _prepared(bins: Any, range: Any, typestr: str) -> tuple[bytes, str | None]:
    """The pickled kwargs and numpy's edge dtype for these arguments, checked once per distinct
    arguments (repeated calls skip the Python work: a call of 256 bins takes 0.7 ms)."""
    key = _hashable(bins, range)
    found = None if key is None else _PREPARED.get((*key, typestr))
    if found is not None:
        return found
    compared = _as_numpy_compares(bins, np.dtype(typestr))
    kwargs = _pickled(
        _args.histogram_kwargs(
            compared, range, False, "left", False, "auto", "auto", repeated_edges=True
        )
    )
    edge_dtype = None if _explicit(bins) else _edge_dtype(np.dtype(typestr), bins, range).str
    if key is not None:
        if len(_PREPARED) > 256:
            _PREPARED.clear()
        _PREPARED[(*key, typestr)] = (kwargs, edge_dtype)
    return kwargs, edge_dtype


def _known_bins(bins: Any) -> int | None:
    """The number of bins when the arguments say it (a count, or edges), else None."""
    if isinstance(bins, str):
        return None
    if isinstance(bins, (int, np.integer)):
        return int(bins)
    return len(bins) - 1


def _device_histogram(a: Any, bins: Any, range: Any, density: Any, weights: Any) -> tuple[Any, Any]:
    a = _device_input(a)
    lib = _library(a)
    iface = _cuda.cuda_array(a)
    length = iface["shape"][0]
    if weights is not None:
        weights = _to_float64(weights, lib, a)
    weights_ptr = _cuda.weights_pointer(weights, length)
    stream = _current_stream(lib, a)
    _cuda.sync_stream(iface, stream)
    kwargs, edge_dtype = _prepared(bins, range, iface["typestr"])
    n = _known_bins(bins)
    if n is not None:
        # Into arrays of the caller's library, queued on its stream: nothing waits for the
        # kernels, as with CuPy's own functions.
        counts_dtype = "float64" if weights is not None else "int64"
        counts = _empty(lib, a, n, counts_dtype)
        edges = None if edge_dtype is None else _empty(lib, a, n + 1, edge_dtype)
        target = None if edges is None else (_pointer(edges, lib), edge_dtype)
        host_edges, _report = _internal.histogram_cuda_into(
            [int(iface["data"][0])],
            [1],
            length,
            iface["typestr"],
            kwargs,
            False,
            stream,
            _pointer(counts, lib),
            n,
            [target],
            weights_ptr,
        )
        if edges is None:
            edges = _to_device(np.asarray(bins), lib, a)
        elif host_edges[0] is not None:
            edges[:] = _to_device(host_edges[0].to_numpy().astype(edge_dtype), lib, a)
        if density:
            counts = _density(counts, [_diff(edges, lib)], _module(lib))
        return counts, edges
    counts, edges, _report = _internal.histogram_cuda_counts(
        [int(iface["data"][0])],
        [1],
        length,
        iface["typestr"],
        kwargs,
        False,
        [edge_dtype],
        weights_ptr,
    )
    counts = _wrap(counts, lib, a)
    explicit = np.asarray(bins) if _explicit(bins) else None
    dev_edges = _axis_device_edges(edges[0], explicit, lib, a, edge_dtype)
    if density:
        counts = _density(counts, [_diff(dev_edges, lib)], _module(lib))
    return counts, dev_edges


def histogramdd(
    sample: Any,
    bins: Any = 10,
    range: Any = None,
    density: bool | None = None,
    weights: Any = None,
) -> tuple[Any, list[Any]]:
    """numpy.histogramdd: ``(H, edges)``, H of shape ``(nx, ny, ...)``. ``sample`` is an
    ``(N, D)`` array or a sequence of D arrays (host or device). As numpy, ``bins`` takes no
    estimator (:func:`polars_gpu_hist.histogramdd` does, per dimension)."""
    columns = _columns(sample)
    dims = len(columns)
    _check_dd_bins(bins, dims)
    if dims > 8:
        raise ValueError(f"histogramdd takes at most 8 dimensions here, got {dims}")
    if _is_complex(weights):
        _real_weights(weights)
    lib = _library(columns[0])
    if lib != "numpy":
        return _device_histogramdd(sample, columns, bins, range, density, weights, lib)
    # numpy compares booleans as 0 and 1, without a warning here.
    arrays = [x.astype(np.uint8) if x.dtype == np.bool_ else x for x in map(_host, columns)]
    w = None if weights is None else _real_weights(weights)
    compared = _dd_as_numpy_compares(bins, dims, np.result_type(*arrays))
    options = _args.dd_kwargs(
        dims, compared, range, bool(density), "left", False, "auto", "auto", True
    )
    frame = _host_histogramdd(arrays, w, options)
    shape = tuple(_known_bins(_entry(bins, i, dims)) or 0 for i in builtins.range(dims))
    edges = [_axis_edges(frame, f"x{i}", shape, i) for i in builtins.range(dims)]
    counts = frame["count"].to_numpy().astype(_counts_dtype(weights is not None, density))
    sample_dtype, empty = np.result_type(*arrays), len(arrays[0]) == 0
    edges = [
        _dd_edges(
            e, _entry(bins, i, dims), _dd_edge_dtype(sample_dtype, _entry(range, i, dims), empty)
        )
        for i, e in enumerate(edges)
    ]
    return counts.reshape(shape), edges


def histogram2d(
    x: Any,
    y: Any,
    bins: Any = 10,
    range: Any = None,
    density: bool | None = None,
    weights: Any = None,
) -> tuple[Any, Any, Any]:
    """numpy.histogram2d: ``(H, xedges, yedges)``."""
    if isinstance(bins, str) and len(bins) not in (1, 2):
        # numpy takes the string for one array of edges of both axes, which it cannot compare.
        raise TypeError(f"`bins` {bins!r} is neither a number of bins nor an array of edges")
    if not isinstance(bins, (str, int, np.integer)):
        try:
            n = len(bins)
        except TypeError:
            n = 0
        if n != 2:
            # numpy: a single array of edges applies to both axes.
            bins = [bins, bins]
    counts, edges = histogramdd([x, y], bins, range, density, weights)
    return counts, edges[0], edges[1]


def _columns(sample: Any) -> list[Any]:
    """The D columns of a sample: an (N, D) array's columns, or the given sequence."""
    if hasattr(sample, "ndim") and getattr(sample, "ndim", 0) == 2:
        return [sample[:, j] for j in builtins.range(sample.shape[1])]
    if hasattr(sample, "ndim") and sample.ndim == 1:
        return [sample]
    return list(sample)


def _entry(value: Any, i: int, dims: int) -> Any:
    if value is None or isinstance(value, (str, int, np.integer)):
        return value
    entries = list(value)
    return entries[i] if len(entries) == dims else value


def _axis_edges(frame: pl.DataFrame, name: str, shape: tuple[int, ...], axis: int) -> np.ndarray:
    """An axis's edges from the cells in row-major order: its bins' starts a stride apart, then
    its last end (an edge that repeats stays repeated)."""
    stride = int(np.prod(shape[axis + 1 :], dtype=np.int64))
    starts = frame[f"{name}_start"].to_numpy()[::stride][: shape[axis]]
    return np.append(starts, frame[f"{name}_end"][-1])


def _dd_edge_dtype(sample_dtype: np.dtype, range: Any, empty: bool) -> np.dtype:
    """numpy.histogramdd's dtype for equal bins' edges: `linspace` of the sample's extremes (its
    dtype; an empty sample's (0, 1) are Python ints) or of the range (its scalars' type)."""
    if range is None:
        floating = np.issubdtype(sample_dtype, np.floating) and not empty
        kind = sample_dtype if floating else np.float64
    else:
        lo, hi = range
        kind = np.result_type(lo, hi, 1.0)
    return np.dtype(kind)


def _dd_edges(edges: np.ndarray, bins: Any, dtype: np.dtype) -> np.ndarray:
    """numpy.histogramdd's edges: explicit as given, equal ones in `dtype`."""
    if _explicit(bins):
        return np.asarray(bins)
    return edges.astype(dtype)


def _device_sample(
    sample: Any, columns: list[Any], lib: str
) -> tuple[list[int], list[int], Any, list[Any]]:
    """The sample's columns where they lie, as (pointers, strides in values, interface, owners):
    an (n, d) C-contiguous array, or 1-D contiguous arrays of one dtype and length; otherwise
    (other layouts, mixed dtypes) one stacked copy in numpy's common dtype. The caller holds the
    owners until the kernels are queued: a copy freed sooner could become the counts' memory."""
    module = _module(lib)
    if getattr(sample, "ndim", 0) == 2:
        matrix = _device_input(sample)
        iface = _cuda.cuda_array(matrix, ndim=2)
        strides = iface.get("strides")
        itemsize = int(iface["typestr"][2:])
        dims = iface["shape"][1]
        if strides is None or tuple(strides) == (dims * itemsize, itemsize):
            base = int(iface["data"][0])
            ptrs = [base + j * itemsize for j in builtins.range(dims)]
            return ptrs, [dims] * dims, iface, [matrix]
    arrays = [_device_input(c) for c in columns]
    ifaces = [getattr(c, "__cuda_array_interface__", None) for c in arrays]
    same = all(
        i is not None
        and len(i["shape"]) == 1
        and i["typestr"] == ifaces[0]["typestr"]
        and i["shape"] == ifaces[0]["shape"]
        and i.get("strides") in (None, (int(i["typestr"][2:]),))
        for i in ifaces
    )
    if same:
        return [int(i["data"][0]) for i in ifaces], [1] * len(ifaces), ifaces[0], arrays
    stacked = module.stack(arrays, 1)
    stacked = stacked.contiguous() if lib == "torch" else module.ascontiguousarray(stacked)
    iface = _cuda.cuda_array(stacked, ndim=2)
    itemsize = int(iface["typestr"][2:])
    base, dims = int(iface["data"][0]), iface["shape"][1]
    ptrs = [base + j * itemsize for j in builtins.range(dims)]
    # Freed once the kernels are queued, the copy goes back to its library's pool for this
    # stream: whatever reuses it then is queued after them.
    return ptrs, [dims] * dims, iface, [stacked]


def _device_histogramdd(
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
    ptrs, col_strides, iface, _owners = _device_sample(sample, columns, lib)
    length, dims = iface["shape"][0], len(ptrs)
    if weights is not None:
        weights = _to_float64(weights, lib, like)
    weights_ptr = _cuda.weights_pointer(weights, length)
    stream = _current_stream(lib, like)
    _cuda.sync_stream(iface, stream)
    sample_dtype = np.dtype(iface["typestr"])
    compared = _dd_as_numpy_compares(bins, dims, sample_dtype)
    kwargs = _pickled(
        _args.dd_kwargs(dims, compared, range, False, "left", False, "auto", "auto", True)
    )
    axis_bins = [_entry(bins, i, dims) for i in builtins.range(dims)]
    edge_dtypes = [
        None
        if _explicit(b)
        else _dd_edge_dtype(sample_dtype, _entry(range, i, dims), length == 0).str
        for i, b in enumerate(axis_bins)
    ]
    shape = [_known_bins(b) for b in axis_bins]
    if all(n is not None for n in shape):
        cells = int(np.prod(shape))
        counts = _empty(lib, like, cells, "float64" if weights is not None else "int64")
        dev_edges = [
            None if dtype is None else _empty(lib, like, n + 1, dtype)
            for n, dtype in zip(shape, edge_dtypes)
        ]
        targets = [
            None if e is None else (_pointer(e, lib), dtype)
            for e, dtype in zip(dev_edges, edge_dtypes)
        ]
        host_edges, _report = _internal.histogram_cuda_into(
            ptrs,
            col_strides,
            length,
            iface["typestr"],
            kwargs,
            True,
            stream,
            _pointer(counts, lib),
            cells,
            targets,
            weights_ptr,
        )
        for i, (b, host) in enumerate(zip(axis_bins, host_edges)):
            if dev_edges[i] is None:
                dev_edges[i] = _to_device(np.asarray(b), lib, like)
            elif host is not None:
                dev_edges[i][:] = _to_device(host.to_numpy().astype(edge_dtypes[i]), lib, like)
        counts = counts.reshape(tuple(shape))
        if density:
            counts = _density(counts, [_diff(e, lib) for e in dev_edges], module)
        return counts, dev_edges
    counts, edges, _report = _internal.histogram_cuda_counts(
        ptrs, col_strides, length, iface["typestr"], kwargs, True, edge_dtypes, weights_ptr
    )
    counts = _wrap(counts, lib, like)
    dev_edges = [
        _axis_device_edges(e, np.asarray(b) if _explicit(b) else None, lib, like, dtype)
        for e, b, dtype in zip(edges, axis_bins, edge_dtypes)
    ]
    shape = tuple(len(e) - 1 for e in dev_edges)
    counts = counts.reshape(shape)
    if density:
        counts = _density(counts, [_diff(e, lib) for e in dev_edges], module)
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


def _diff(edges: Any, lib: str) -> Any:
    if lib == "torch":
        return (edges[1:] - edges[:-1]).double()
    return (edges[1:] - edges[:-1]).astype("float64")
