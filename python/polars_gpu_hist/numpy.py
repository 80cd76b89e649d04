"""A drop-in for numpy's (and CuPy's) histogram functions, with numpy's arguments, return types
and counts::

    import polars_gpu_hist.numpy as ghnp

    counts, edges = ghnp.histogram(x, bins=256, range=(0, 1))    # numpy, CuPy or PyTorch x

Host arrays (numpy, lists, Polars Series) give numpy arrays. CuPy arrays give CuPy arrays and
PyTorch tensors give tensors on the same device: the data, the counts and equal bins' edges
never visit the host (those edges are made on the device, in numpy's dtype; explicit edges and
the rare spans no formula covers are copied over). Counts are int64 (int64 or uint64 with
integer weights, float64 with float weights or density, complex128 with complex weights, Python
objects with object weights), equal to numpy's. Explicit edges follow numpy's rule (an edge may
repeat, edges may be infinite) and booleans count as uint8, as in numpy. Bad arguments raise
numpy's exceptions with numpy's messages (`_numpy_args`). numpy's own tests of these functions
run against this module (tests/test_numpy_suite.py). Where this module differs from numpy, the
README's table says so (NaN is not counted rather than refused; n-D counts are int64; narrow
integer weights do not wrap).
"""

from __future__ import annotations

import builtins
import functools
import warnings
from typing import Any

import numpy as np
import polars as pl

from polars_gpu_hist import _args, _cuda, _internal, _numpy_args
from polars_gpu_hist._functions import _host_histogram, _host_histogramdd, _pickled

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


def histogram(
    a: Any,
    bins: Any = 10,
    range: Any = None,
    density: bool | None = None,
    weights: Any = None,
) -> tuple[Any, Any]:
    """numpy.histogram: ``(hist, bin_edges)`` with numpy's bins and counts.

    ``bins`` takes numpy's estimators (``"auto"``, ``"fd"``, ...) but not ``"integer"``, which
    is :func:`polars_gpu_hist.histogram`'s (numpy raises ``ValueError`` for it here too).
    Counts are int64 (float64 with float weights or density; int64, or uint64 for unsigned
    weights, with integer weights; Python objects with object weights such as ``Decimal``)."""
    _numpy_args.check_weights(a, weights)
    bins = _numpy_args.check_bins(bins, weights)
    if _explicit(bins):
        range = None  # numpy ignores `range` beside explicit edges
    else:
        _numpy_args.check_range(range)
    if _is_complex(weights):
        return _complex_histogram(a, bins, range, density, weights)
    if _library(a) != "numpy":
        _warn_bool(a.dtype)
        with _numpy_args.numpy_errors(a.dtype):
            counts, edges = _device_histogram(a, bins, range, density, weights)
        if weights is not None and not density:
            counts = _integer_sums(counts, weights, _library(a))
        return counts, edges
    x = _numpy_args.temporal(_host(a))
    _numpy_args.refuse_temporal_equal_bins(x.dtype, bins)
    if x.dtype == np.bool_:
        _warn_bool(x.dtype)
        x = x.astype(np.uint8)
    if x.dtype.kind == "f" and x.dtype.itemsize > 8:
        raise TypeError(
            f"`a` of dtype {x.dtype} (long double) is not binned: convert it with "
            "a.astype(np.float64)"
        )
    w = None if weights is None else np.asarray(weights).reshape(-1)
    if w is not None and w.dtype == object:
        return _object_histogram(x, bins, range, density, w)
    long_edges = _numpy_args.long_double_edges(bins, range, x.dtype)
    if long_edges is not None:
        return _long_double_histogram(x, long_edges, density, w)
    with _numpy_args.numpy_errors(x.dtype):
        frame = _frame_histogram(
            x, _as_numpy_compares(bins, x.dtype), range, density, w, flow=False
        )
    # One copy each (numpy's arrays are writable; Polars' buffers are not).
    counts = frame["count"].to_numpy().astype(_counts_dtype(w, density))
    return counts, _host_edges(frame, bins, range, x.dtype)


def _host_edges(frame: pl.DataFrame, bins: Any, range: Any, dtype: np.dtype) -> np.ndarray:
    """numpy's edges: explicit ones as given, equal ones in numpy's dtype from the frame's."""
    if _explicit(bins):
        return np.asarray(bins)
    starts = frame["bin_start"].to_numpy()
    edges = np.empty(len(starts) + 1, dtype=_edge_dtype(dtype, bins, range))
    edges[:-1] = starts
    edges[-1] = frame["bin_end"][-1]
    return edges


def _weights_kind(weights: Any) -> str:
    """numpy's dtype kind of the weights ("i", "u", "b", "f", "c", "O", ...)."""
    if type(weights).__module__.split(".")[0] == "torch":
        import torch

        if weights.dtype == torch.bool:
            return "b"
        if weights.is_floating_point() or weights.is_complex():
            return "c" if weights.is_complex() else "f"
        return "u" if weights.dtype == torch.uint8 else "i"
    dtype = getattr(weights, "dtype", None)
    if dtype is None or isinstance(weights, pl.Series):
        dtype = np.asarray(weights).dtype
    return np.dtype(dtype).kind


def _counts_dtype(weights: Any, density: Any) -> Any:
    """numpy's counts are integers without weights and with integer ones (int64 here, uint64
    for unsigned weights: never the narrow weights' own type, whose sums numpy wraps)."""
    if density:
        return np.float64
    if weights is None:
        return np.int64
    kind = _weights_kind(weights)
    if kind in "ib":
        return np.int64
    return np.uint64 if kind == "u" else np.float64


def _integer_sums(counts: Any, weights: Any, lib: str) -> Any:
    """Device sums of integer weights (float64, exact below 2**53) as numpy's integer type."""
    dtype = np.dtype(_counts_dtype(weights, False))
    if dtype == np.float64:
        return counts
    if lib == "torch":
        import torch

        return counts.to(torch.int64 if dtype == np.int64 else torch.uint64)
    return counts.astype(dtype.name)


def _object_histogram(
    x: np.ndarray, bins: Any, range: Any, density: Any, weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Weights numpy sums as Python objects (``Decimal``, ``Fraction``): bins are contiguous in
    value, so the counts with flow bins split the sorted values into each bin's run, and each
    run's weights are summed as objects (numpy, too, sums the weights of sorted values)."""
    with _numpy_args.numpy_errors(x.dtype):
        frame = _frame_histogram(x, bins, range, False, None, flow=True)
    runs = frame["count"].to_numpy().astype(np.int64)
    # NaN (and NaT) sort last, after every value the flow bins count: the prefix is exact.
    ordered = weights[np.argsort(x, kind="stable")]
    ends = np.cumsum(runs)
    counts = np.empty(len(runs) - 2, dtype=object)
    for i in builtins.range(1, len(runs) - 1):
        counts[i - 1] = ordered[ends[i] - runs[i] : ends[i]].sum() if runs[i] else 0
    edges = _host_edges(frame[1:-1], bins, range, x.dtype)
    if density:
        return counts / np.array(np.diff(edges), float) / counts.sum(), edges
    return counts, edges


def _long_double_histogram(
    x: np.ndarray, edges: np.ndarray, density: Any, weights: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Long-double edges finer than float64 (numpy's, made in long double): counted against
    float64 edges that place every value alike; numpy's density from the long-double widths."""
    plain, empty_last = _numpy_args.directed(edges)
    with _numpy_args.numpy_errors():
        frame = _frame_histogram(x, plain.tolist(), None, False, weights, flow=False)
    counts = frame["count"].to_numpy().astype(_counts_dtype(weights, False))
    if empty_last:
        counts[-1] = 0
    if density:
        return counts / np.array(np.diff(edges), float) / counts.sum(), edges
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
    _numpy_args.check_weights(a, weights)
    _numpy_args.check_bins(bins, weights)
    return histogram(a, bins, range, None, None)[1]


def _host(a: Any) -> np.ndarray:
    """A host array, flattened as numpy flattens `histogram`'s input."""
    if isinstance(a, pl.Series):
        return a.to_numpy()
    return np.asarray(a).reshape(-1)


def _frame_histogram(
    x: np.ndarray, bins: Any, range: Any, density: Any, weights: Any, flow: bool
) -> pl.DataFrame:
    w = None if weights is None else np.asarray(weights, dtype=np.float64).reshape(-1)
    kwargs = _args.histogram_kwargs(
        bins, range, bool(density), "left", flow, "auto", "auto", repeated_edges=True
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
    _numpy_args.check_dd(bins, range, dims)
    if dims > 8:
        raise ValueError(f"histogramdd takes at most 8 dimensions here, got {dims}")
    # A column may be a scalar (a sample of one row, as `np.atleast_2d` makes it).
    _numpy_args.check_dd_weights((_numpy_args.shape(columns[0]) or (1,))[0], weights)
    if _is_complex(weights):
        _real_weights(weights)
    lib = _library(columns[0])
    if lib != "numpy":
        with _numpy_args.numpy_errors():
            return _device_histogramdd(sample, columns, bins, range, density, weights, lib)
    hosted = [_numpy_args.temporal(_host(c)) for c in columns]
    for i, x in enumerate(hosted):
        _numpy_args.refuse_temporal_equal_bins(x.dtype, _entry(bins, i, dims))
    # The dtype numpy stacks the columns into (pairwise from the left, as `np.array` does).
    sample_dtype = _stacked_dtype(sample, hosted)
    # numpy compares booleans as 0 and 1, without a warning here.
    arrays = [x.astype(np.uint8) if x.dtype == np.bool_ else x for x in hosted]
    w = None if weights is None else _real_weights(weights)
    axis_bins = [_entry(bins, i, dims) for i in builtins.range(dims)]
    # Integer edges compare as numpy's searchsorted does beside the stacked sample.
    axis_bins = [_as_numpy_compares(b, sample_dtype) for b in axis_bins]
    axis_ranges = [_entry(range, i, dims) for i in builtins.range(dims)]
    # Axes of long-double edges finer than float64 (numpy's): counted by directed float64 edges.
    long = [
        _numpy_args.long_double_edges(b, r, sample_dtype, strict=False)
        for b, r in zip(axis_bins, axis_ranges)
    ]
    directed = [None if e is None else _numpy_args.directed(e) for e in long]
    long_density = False
    if any(d is not None for d in directed):
        axis_bins = [b if d is None else d[0].tolist() for b, d in zip(axis_bins, directed)]
        axis_ranges = [r if d is None else None for r, d in zip(axis_ranges, directed)]
        # numpy divides by the long-double widths: done here, below.
        bins, range, long_density, density = axis_bins, axis_ranges, bool(density), False
    options = _args.dd_kwargs(
        dims, axis_bins, range, bool(density), "left", False, "auto", "auto", True
    )
    with _numpy_args.numpy_errors(sample_dtype):
        frame = _host_histogramdd(arrays, w, options)
    shape = tuple(_known_bins(b) or 0 for b in axis_bins)
    edges = [_axis_edges(frame, f"x{i}", shape, i) for i in builtins.range(dims)]
    # numpy.histogramdd's counts are float64 with any weights (its bincount's).
    counts = frame["count"].to_numpy().reshape(shape)
    counts = counts.astype(np.float64 if weights is not None or density else np.int64)
    empty = len(arrays[0]) == 0
    edges = [
        _dd_edges(e, b, _dd_edge_dtype(sample_dtype, r, empty))
        for e, b, r in zip(edges, axis_bins, axis_ranges)
    ]
    if any(d is not None for d in directed):
        for axis, (d, e) in enumerate(zip(directed, long)):
            if d is not None and e is not None:
                edges[axis] = e
                if d[1]:  # no float64 lies in the axis's last bin
                    counts[(slice(None),) * axis + (-1,)] = 0
        if long_density:
            counts = _density(counts, [np.diff(e) for e in edges], np)
    return counts, edges


def _stacked_dtype(sample: Any, columns: list[Any]) -> np.dtype:
    """The dtype of numpy.histogramdd's sample: an (N, D) array's own, else the columns'
    promoted pairwise from the left, as `np.atleast_2d` stacks them (int16, uint16 and float32
    make float64, where `np.result_type` of the three gives float32)."""
    if isinstance(sample, np.ndarray):
        return np.dtype(sample.dtype)
    return np.dtype(functools.reduce(np.promote_types, [np.dtype(c.dtype) for c in columns]))


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
    itemsize = int(iface["typestr"][2:])
    base, dims = int(iface["data"][0]), iface["shape"][1]
    ptrs = [base + j * itemsize for j in builtins.range(dims)]
    # Freed once the kernels are queued, the copy goes back to its library's pool for this
    # stream: whatever reuses it then is queued after them.
    return ptrs, [dims] * dims, iface, [stacked]


def _numpy_dtype(array: Any, lib: str) -> np.dtype:
    """A device array's dtype as numpy names it."""
    if lib == "torch":
        return np.dtype(str(array.dtype).removeprefix("torch."))
    return np.dtype(array.dtype)


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
