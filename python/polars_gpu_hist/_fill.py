"""What ``Histogram.fill`` takes, made into what the native histogram takes: one column per
axis as Polars Series (host data), and the flow of a fill from GPU memory, classified where the
arrays lie."""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl


def columns(data: tuple[Any, ...], d: int) -> list[Any]:
    """One column per axis, from ``fill``'s positional arguments."""
    if len(data) == d:
        return list(data)
    if len(data) != 1:
        raise TypeError(
            f"this histogram has {d} axes: fill takes {d} columns (or one object holding them), "
            f"got {len(data)} arguments; pass weights as weights=..."
        )
    (whole,) = data
    if isinstance(whole, pl.DataFrame):
        if whole.width != d:
            raise TypeError(
                f"fill takes one column per axis ({d}); got a DataFrame of {whole.width} "
                "columns: select them"
            )
        return whole.get_columns()
    if isinstance(whole, (tuple, list)) and len(whole) == d and all(map(is_sequence, whole)):
        return list(whole)
    ndim = getattr(whole, "ndim", None)
    if ndim == 2 and whole.shape[1] == d and d > 1:
        return [whole[:, i] for i in range(d)]
    raise TypeError(
        f"this histogram has {d} axes: fill takes {d} columns, a DataFrame or tuple of them, "
        f"or an (n, {d}) array"
    )


def as_series(data: Any, name: str) -> pl.Series:
    """A Polars Series of ``data`` without a copy where Polars can avoid one."""
    if isinstance(data, pl.Series):
        return data
    if isinstance(data, pl.DataFrame):
        if data.width != 1:
            raise TypeError(
                f"fill takes one column; got a DataFrame of {data.width} columns: pass df[column]"
            )
        return data.to_series()
    if isinstance(data, (pl.LazyFrame, pl.Expr)):
        raise TypeError(
            f"fill takes data, not a {type(data).__name__}: use histogram_scan for a LazyFrame"
        )
    if type(data).__module__.split(".")[0] == "pandas":
        converted = pl.from_pandas(data, nan_to_null=False)
        return converted if isinstance(converted, pl.Series) else as_series(converted, name)
    ndim = getattr(data, "ndim", 1)
    if ndim != 1:
        raise ValueError(f"fill takes a 1-D array per axis, got {ndim} dimensions")
    return pl.Series(name, data)


def device_flow(
    columns: list[Any], weights: Any, bounds: list[tuple[float, float]]
) -> tuple[int, int, int, int, int, float, float, float, float] | None:
    """The flow of a fill from GPU memory, classified where the arrays lie with their own
    library (CuPy or PyTorch; other arrays through either), as the native fill does on the host:
    compared in float64, the first axis on which a row is outside decides. ``None`` where
    neither library is there."""
    arrays = [_device_array(c) for c in columns]
    w = None if weights is None else _device_array(weights)
    if len(arrays) == 1 and w is None and _packed_flow_fits(arrays[0], bounds[0]):
        try:
            return _packed_flow(arrays[0], *bounds[0])
        except Exception as e:  # a CuPy that cannot build it: the general path is exact too
            _PACKED_FLOW_FAILED.append(repr(e))
            warnings.warn(
                f"Histogram.fill: the one-pass flow kernel failed ({e!r}); the flow of GPU "
                "arrays is classified the slower way in this process",
                RuntimeWarning,
                stacklevel=3,
            )
    if any(a is None for a in arrays) or (weights is not None and w is None):
        return None
    wide = [_float64(a) for a in arrays]
    nan = wide[0] != wide[0]
    for x in wide[1:]:
        nan = nan | (x != x)
    decided = nan
    under = over = None
    for x, (lo, hi) in zip(wide, bounds):
        below, above = (x < lo) & ~decided, (x > hi) & ~decided
        under = below if under is None else under | below
        over = above if over is None else over | above
        decided = decided | below | above
    assert under is not None and over is not None
    rows = int(arrays[0].shape[0])

    def total(mask: Any, scale: Any = None) -> Any:
        return (mask.sum() if scale is None else (scale * mask).sum()).item()

    sums = [0.0, 0.0, 0.0, 0.0]
    if w is not None:
        w64 = _float64(w)
        sums = [
            float(total(under, w64)),
            float(total(over, w64)),
            float(total(under, w64 * w64)),
            float(total(over, w64 * w64)),
        ]
    counts = int(total(nan)), int(total(under)), int(total(over))
    return (rows, 0, *counts, *sums)  # type: ignore[return-value]


# One packed code per block of rows: NaN rows count in bits 0-20, rows below the first edge in
# bits 21-41, rows above the last in bits 42-62; a block of 2**20 rows cannot carry over.
_FLOW_BLOCK = 1 << 20
_FLOW_FIELD = (1 << 21) - 1


# Why the one-pass flow failed in this process, if it did (it is not tried again).
_PACKED_FLOW_FAILED: list[str] = []


def _packed_flow_fits(array: Any, bounds: tuple[float, float]) -> bool:
    """Whether the one-pass flow applies: a CuPy array of a 4- or 8-byte number type and
    finite bounds (written into the kernel's source)."""
    dtype = getattr(array, "dtype", None)
    return (
        not _PACKED_FLOW_FAILED
        and type(array).__module__.split(".")[0] == "cupy"
        and dtype is not None
        and dtype.kind in "fiu"
        and dtype.itemsize in (4, 8)
        and all(math.isfinite(b) for b in bounds)
    )


def _packed_flow(
    x: Any, lo: float, hi: float
) -> tuple[int, int, int, int, int, float, float, float, float]:
    """The flow of one unweighted CuPy column in one read of it, with no temporaries (the
    general path widens to float64 and makes a mask per reason: more time than the count)."""
    import cupy

    kernel = _flow_kernel(lo, hi)
    rows = int(x.shape[0])
    whole = rows // _FLOW_BLOCK * _FLOW_BLOCK
    codes = []
    if whole:
        codes.append(kernel(x[:whole].reshape(-1, _FLOW_BLOCK), axis=1))
    if rows > whole:
        codes.append(kernel(x[whole:]).reshape(1))
    packed = np.zeros(0, np.uint64) if not codes else cupy.concatenate(codes).get()
    nan, under, over = (
        int(((packed >> np.uint64(s)) & np.uint64(_FLOW_FIELD)).sum()) for s in (0, 21, 42)
    )
    return (rows, 0, nan, under, over, 0.0, 0.0, 0.0, 0.0)


# float32 widened to float64 exactly, subnormals included: CuPy's kernels may flush them to
# zero (seen on an H100: -1e-45 was not below 0), so a subnormal's value is built in float64,
# which never flushes, from its bits.
_WIDEN = """
__device__ double pgh_wide(float x) {
  int bits = __float_as_int(x);
  int mantissa = bits & 0x7fffff;
  if ((bits & 0x7f800000) == 0 && mantissa != 0) {
    double v = (double)mantissa * 1.4012984643248171e-45;  /* 2**-149 */
    return bits < 0 ? -v : v;
  }
  return (double)x;
}
__device__ double pgh_wide(double x) { return x; }
template <typename U> __device__ double pgh_wide(U x) { return (double)x; }
"""


@functools.lru_cache(maxsize=16)
def _flow_kernel(lo: float, hi: float) -> Any:
    """A CuPy reduction to packed codes, compared in float64 as the host's fill does; the
    bounds are exact literals of its source (one compile per binning)."""
    import cupy

    return cupy.ReductionKernel(
        "T x",
        "uint64 y",
        "(x != x) ? 1ull : ((pgh_wide(x) < PGH_LO) ? (1ull << 21)"
        " : ((pgh_wide(x) > PGH_HI) ? (1ull << 42) : 0ull))",
        "a + b",
        "y = a",
        "0",
        "pgh_flow",
        reduce_type="unsigned long long",
        # repr: the shortest decimal that reads back as the same double.
        preamble=f"#define PGH_LO ({lo!r})\n#define PGH_HI ({hi!r})\n{_WIDEN}",
    )


def _device_array(data: Any) -> Any:
    """``data`` as a CuPy array or a PyTorch tensor (no copy), or ``None``."""
    module = type(data).__module__.split(".")[0]
    if module in ("cupy", "torch"):
        return data
    try:
        import cupy

        return cupy.asarray(data)
    except ImportError:
        pass
    try:
        import torch

        return torch.as_tensor(data, device="cuda")
    except ImportError:
        return None


def _float64(array: Any) -> Any:
    if type(array).__module__.split(".")[0] == "torch":
        import torch

        return array.to(torch.float64)
    return array.astype("float64")


def is_sequence(x: Any) -> bool:
    return isinstance(x, (Sequence, np.ndarray, pl.Series)) and not isinstance(x, (str, bytes))
