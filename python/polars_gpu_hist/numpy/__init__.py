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
run against this module (tests/numpy/test_numpy_suite.py). Where this module differs from numpy, the
docs/semantics.md says so (NaN is not counted rather than refused; n-D counts are int64; narrow
integer weights do not wrap).
"""

from __future__ import annotations

import builtins
import functools
import warnings
from typing import Any

import numpy as np
import polars as pl

from polars_gpu_hist import _native
from polars_gpu_hist._args import arguments as _args
from polars_gpu_hist._expr.functions import _host_histogram, _host_histogramdd
from polars_gpu_hist._inputs import host as _inputs
from polars_gpu_hist._native import options as _options
from polars_gpu_hist.numpy import arguments as _numpy_args
from polars_gpu_hist.numpy import gpu_arrays as device
from polars_gpu_hist.numpy import rules

__all__ = ["histogram", "histogram2d", "histogram_bin_edges", "histogramdd"]


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
    if device.library(weights) == "torch":
        return bool(weights.is_complex())
    return bool(np.dtype(dtype).kind == "c")


def _real_weights(weights: Any) -> Any:
    """Host weights as float64, refusing complex and text ones (which numpy.histogramdd refuses
    too: it casts them to float64 under the rule 'safe')."""
    if _is_complex(weights):
        raise TypeError(
            "Cannot cast array data from dtype('complex128') to dtype('float64') according to "
            "the rule 'safe'"
        )
    w = np.asarray(weights)
    _numpy_args.refuse_text_weights(w, "cast to float64")
    return w.astype(np.float64).reshape(-1)


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
    __tracebackhide__ = True  # IPython shows the caller's frame
    a, weights = _present(a, weights)
    _numpy_args.check_weights(a, weights)
    bins = _numpy_args.check_bins(bins, weights)
    if rules.explicit(bins):
        range = None  # numpy ignores `range` beside explicit edges
    else:
        _numpy_args.check_range(range)
    if _is_complex(weights):
        return _complex_histogram(a, bins, range, density, weights)
    if device.library(a) != "numpy":
        _warn_bool(a.dtype)
        with _numpy_args.numpy_errors(a.dtype):
            counts, edges = device.histogram(a, bins, range, density, weights)
        if weights is not None and not density:
            counts = _integer_sums(counts, weights, device.library(a))
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
    if w is not None:
        _numpy_args.refuse_text_weights(w, "summed")
    if w is not None and w.dtype == object:
        return _object_histogram(x, bins, range, density, w)
    long_edges = _numpy_args.long_double_edges(bins, range, x.dtype)
    if long_edges is not None:
        return _long_double_histogram(x, long_edges, density, w)
    compares = rules.as_numpy_compares(bins, x.dtype)
    with _numpy_args.numpy_errors(x.dtype):
        found = _numeric_histogram(x, compares, range, density, w)
        if found is None:
            frame = _frame_histogram(x, compares, range, density, w, flow=False)
            found = frame["count"].to_numpy(), _frame_edges(frame)
    # One copy each (numpy's arrays are writable; the buffers read are not).
    counts = found[0].astype(_counts_dtype(w, density))
    return counts, _host_edges(found[1], bins, range, x.dtype)


def _numeric_histogram(
    x: np.ndarray, bins: Any, range: Any, density: Any, w: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray] | None:
    """The counts (uint64, float64 with weights or density) and float64 edges of a numeric host
    array, read from the native function's buffers without a frame around them (at 100 rows
    the frame cost more than the counting); None for other arrays. Its errors are numpy's."""
    if x.dtype.kind not in "iuf" or (w is not None and w.size != x.size):
        return None
    kwargs = _args.histogram_kwargs(
        bins,
        range,
        density=bool(density),
        closed="left",
        flow=False,
        device="auto",
        kernel="auto",
        repeated_edges=True,
    )
    values = pl.Series("x", x.reshape(-1))
    weights = None if w is None else pl.Series("w", np.asarray(w, dtype=np.float64))
    counts, edges = _native.histogram_buffers(
        values, _options.pickled_histogram_options(kwargs), weights
    )
    kind = np.float64 if w is not None or density else np.uint64
    return np.frombuffer(counts, dtype=kind), np.frombuffer(edges, dtype=np.float64)


def _frame_edges(frame: pl.DataFrame) -> np.ndarray:
    """The float64 edges of a frame of bins: every start, then the last end."""
    return np.append(frame["bin_start"].to_numpy(), frame["bin_end"].to_numpy()[-1:])


def _host_edges(edges: np.ndarray, bins: Any, range: Any, dtype: np.dtype) -> np.ndarray:
    """numpy's edges: explicit ones as given, equal ones in numpy's dtype from the float64 ones
    counted with."""
    if rules.explicit(bins):
        return np.asarray(bins)
    return edges.astype(rules.edge_dtype(dtype, bins, range))


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
    edges = _host_edges(_frame_edges(frame[1:-1]), bins, range, x.dtype)
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
        counts = counts / device.diff(edges, device.library(edges)) / counts.sum()
    return counts, edges


def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None, weights: Any = None) -> Any:
    """numpy.histogram_bin_edges: the edges ``histogram`` would use."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    _numpy_args.check_weights(a, weights)
    _numpy_args.check_bins(bins, weights)
    return histogram(a, bins, range, None, None)[1]


def _present(a: Any, weights: Any) -> tuple[Any, Any]:
    """Data numpy cannot read itself (awkward arrays, Arrow arrays, Polars Series) as numpy's
    array of its values, and its weights, the rows of a missing value or weight left out
    (numpy has no missing values: they are not counted, as nulls are not in the package)."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    if not (_inputs.foreign(a) or _inputs.foreign(weights)):
        return a, weights
    (x,), w = _present_rows([a], weights)
    return x, w


def _present_rows(columns: list[Any], weights: Any) -> tuple[list[np.ndarray], Any]:
    """Columns and weights as numpy arrays of one length, without the rows where a value or
    the weight is missing (awkward's None, Arrow's and Polars' nulls)."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    hosted, missing = [], None
    for c in [*columns, *([] if weights is None else [weights])]:
        found = _inputs.numpy_values(c)
        values, gaps = (np.asarray(c).reshape(-1), None) if found is None else found
        hosted.append(values)
        if gaps is not None:
            missing = gaps if missing is None else missing | gaps
    if weights is not None and hosted[-1].shape != hosted[0].shape:
        raise ValueError(_numpy_args.WEIGHTS_SHAPE)
    if missing is not None:
        hosted = [h[~missing] for h in hosted]
    if weights is None:
        return hosted, None
    return hosted[:-1], hosted[-1]


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
        bins,
        range,
        density=bool(density),
        closed="left",
        flow=flow,
        device="auto",
        kernel="auto",
        repeated_edges=True,
    )
    return _host_histogram(x, w, kwargs, api="numpy").struct.unnest()


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
    __tracebackhide__ = True  # IPython shows the caller's frame
    columns = _columns(sample)
    if any(map(_inputs.foreign, [*columns, weights])):
        columns, weights = _present_rows(columns, weights)
        sample = columns
    dims = len(columns)
    if dims == 0:
        raise ValueError(
            f"`sample` has no dimensions (shape {_numpy_args.shape(sample)}): give an (N, D) "
            "array with D >= 1, or a sequence of D arrays"
        )
    _numpy_args.check_dd(bins, range, dims)
    if dims > 8:
        raise ValueError(f"histogramdd takes at most 8 dimensions here, got {dims}")
    # A column may be a scalar (a sample of one row, as `np.atleast_2d` makes it).
    _numpy_args.check_dd_weights((_numpy_args.shape(columns[0]) or (1,))[0], weights)
    if _is_complex(weights):
        _real_weights(weights)
    lib = device.library(columns[0])
    if lib != "numpy":
        with _numpy_args.numpy_errors():
            return device.histogramdd(sample, columns, bins, range, density, weights, lib)
    hosted = [_numpy_args.temporal(_host(c)) for c in columns]
    for i, x in enumerate(hosted):
        _numpy_args.refuse_temporal_equal_bins(x.dtype, rules.entry(bins, i, dims))
    # The dtype numpy stacks the columns into (pairwise from the left, as `np.array` does).
    sample_dtype = _stacked_dtype(sample, hosted)
    # numpy compares booleans as 0 and 1, without a warning here.
    arrays = [x.astype(np.uint8) if x.dtype == np.bool_ else x for x in hosted]
    w = None if weights is None else _real_weights(weights)
    axis_bins = [rules.entry(bins, i, dims) for i in builtins.range(dims)]
    # Integer edges compare as numpy's searchsorted does beside the stacked sample.
    axis_bins = [rules.as_numpy_compares(b, sample_dtype) for b in axis_bins]
    axis_ranges = [rules.entry(range, i, dims) for i in builtins.range(dims)]
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
        dims,
        axis_bins,
        range,
        density=bool(density),
        closed="left",
        flow=False,
        device="auto",
        kernel="auto",
        repeated_edges=True,
    )
    with _numpy_args.numpy_errors(sample_dtype):
        frame = _host_histogramdd(arrays, w, options, api="numpy")
    shape = tuple(rules.known_bins(b) or 0 for b in axis_bins)
    edges = [_axis_edges(frame, f"x{i}", shape, i) for i in builtins.range(dims)]
    # numpy.histogramdd's counts are float64 with any weights (its bincount's).
    counts = frame["count"].to_numpy().reshape(shape)
    counts = counts.astype(np.float64 if weights is not None or density else np.int64)
    empty = len(arrays[0]) == 0
    edges = [
        _dd_edges(e, b, rules.dd_edge_dtype(sample_dtype, r, empty))
        for e, b, r in zip(edges, axis_bins, axis_ranges)
    ]
    if any(d is not None for d in directed):
        for axis, (d, e) in enumerate(zip(directed, long)):
            if d is not None and e is not None:
                edges[axis] = e
                if d[1]:  # no float64 lies in the axis's last bin
                    counts[(slice(None),) * axis + (-1,)] = 0
        if long_density:
            counts = rules.density(counts, [np.diff(e) for e in edges], np)
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
    __tracebackhide__ = True  # IPython shows the caller's frame
    if len(x) != len(y):  # numpy's first check
        raise ValueError("x and y must have the same length.")
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


def _axis_edges(frame: pl.DataFrame, name: str, shape: tuple[int, ...], axis: int) -> np.ndarray:
    """An axis's edges from the cells in row-major order: its bins' starts a stride apart, then
    its last end (an edge that repeats stays repeated)."""
    stride = int(np.prod(shape[axis + 1 :], dtype=np.int64))
    starts = frame[f"{name}_start"].to_numpy()[::stride][: shape[axis]]
    return np.append(starts, frame[f"{name}_end"][-1])


def _dd_edges(edges: np.ndarray, bins: Any, dtype: np.dtype) -> np.ndarray:
    """numpy.histogramdd's edges: explicit as given, equal ones in `dtype`."""
    if rules.explicit(bins):
        return np.asarray(bins)
    return edges.astype(dtype)
