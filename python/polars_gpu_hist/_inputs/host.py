"""One rule for host data, everywhere a column is taken (``Histogram.fill``, ``histogram``,
``histogramdd``, the numpy drop-in): numpy's, flatten the data, after making it numbers.

What is taken, in this order:

- a Polars Series, an Arrow extension type counted as its storage (``.ext.storage()``);
- a pandas Series (NaN stays NaN, as numpy reads it);
- an awkward array (:mod:`.awkward_arrays`: missing values are nulls, jagged lists refused);
- an object of the Arrow C data interface (``__arrow_c_stream__``, ``__arrow_c_array__``:
  pyarrow, nanoarrow, arro3, ...), nulls kept;
- a numpy array, an object with ``__array__`` (xarray, pint, ...), a sequence: numpy's array
  of it, flattened.

numpy is imported only where the data needs it: ``import polars_gpu_hist`` must not pay for it.
"""

from __future__ import annotations

import sys
from typing import Any

import polars as pl

from polars_gpu_hist._inputs import awkward_arrays


def series(data: Any, name: str, what: str = "column", *, flatten: bool = True) -> pl.Series:
    """``data`` as a Polars Series of numbers' dtype (a Series that is one already, as it is);
    arrays of several dimensions are flattened where ``flatten`` (one axis), else refused."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    if isinstance(data, pl.Series):
        return storage(data, what)
    module = type(data).__module__.split(".")[0]
    if module == "pandas":
        converted = pl.from_pandas(data, nan_to_null=False)
        if isinstance(converted, pl.DataFrame):
            raise TypeError(
                f"`{what}` is a pandas DataFrame of {converted.width} columns: pass one column"
            )
        return storage(converted.alias(name), what)
    if awkward_arrays.is_awkward(data):
        values, missing = awkward_arrays.values(data, what)
        out = pl.Series(name, values)
        return out if missing is None else out.scatter(missing.nonzero()[0], None)
    if hasattr(data, "__arrow_c_stream__") or hasattr(data, "__arrow_c_array__"):
        return storage(pl.Series(name, data), what)
    np = sys.modules.get("numpy")
    is_array = np is not None and isinstance(data, np.ndarray)
    nested = isinstance(data, (list, tuple)) and len(data) > 0 and _is_nested(data[0])
    if (hasattr(data, "__array__") and not is_array) or nested:
        import numpy

        data = numpy.asarray(data)
    ndim = getattr(data, "ndim", 1)
    if ndim > 1:
        if not flatten:
            raise ValueError(f"`{what}` must be 1-D here, got an array of {ndim} dimensions")
        data = data.reshape(-1)
    elif ndim == 0:
        data = data.reshape(1)
    return pl.Series(name, data)


def _is_nested(x: Any) -> bool:
    return isinstance(x, (list, tuple)) or hasattr(x, "__array__")


def storage(s: pl.Series, what: str = "column") -> pl.Series:
    """A Series of an Arrow extension type as its storage (what the extension's values are
    made of); nested types holding one are refused (no Polars call bins them either)."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    extension = getattr(pl, "BaseExtension", None)
    if extension is None:  # a Polars without extension types
        return s
    if isinstance(s.dtype, extension):
        return storage(s.ext.storage(), what)
    if s.dtype.is_nested() and _holds(s.dtype, extension):
        raise TypeError(
            f"`{what}` has dtype {s.dtype}, which holds an Arrow extension type inside a nested "
            "one: a histogram counts numbers; select a numeric field or its `.ext.storage()`"
        )
    return s


def _holds(dtype: Any, extension: type) -> bool:
    if isinstance(dtype, extension):
        return True
    inner = getattr(dtype, "inner", None)
    if inner is not None and _holds(inner, extension):
        return True
    return any(_holds(f.dtype, extension) for f in getattr(dtype, "fields", None) or [])


def same_shape(data: Any, weights: Any) -> None:
    """numpy's rule for weights: of the data's own shape (both are then flattened)."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    shape, weights_shape = _shape(data), _shape(weights)
    if shape is None or weights_shape is None or len(shape) == len(weights_shape) == 1:
        return  # 1-D lengths are checked with the rows, where the fill names them
    if shape != weights_shape:
        raise ValueError(
            f"`weights` has shape {weights_shape} but the data {shape}: give one weight per "
            "value, in the data's shape"
        )


def _shape(data: Any) -> tuple[int, ...] | None:
    """The shape numpy gives ``data``, where known without converting it (None otherwise)."""
    shape = getattr(data, "shape", None)
    if isinstance(shape, tuple) and all(isinstance(n, int) for n in shape):
        return shape if shape else (1,)
    if isinstance(data, pl.Series):
        return (data.len(),)
    return None


def numpy_values(data: Any, what: str = "a") -> tuple[Any, Any] | None:
    """For the numpy drop-in: the numbers of data that is no numpy array (awkward, Arrow, a
    Polars Series), flattened, and a boolean array of its missing values (None where none is
    missing); None for what numpy reads itself (arrays, sequences, arrays in GPU memory)."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    if awkward_arrays.is_awkward(data):
        return awkward_arrays.values(data, what)
    if foreign(data):
        s = series(data, what, what)
        missing = s.is_null().to_numpy() if s.null_count() else None
        return s.to_numpy(), missing
    return None


def foreign(data: Any) -> bool:
    """Whether numpy cannot read ``data`` as the package does: an awkward array, an Arrow
    array (of the C data interface) or a Polars Series (nulls, extension types)."""
    return (
        awkward_arrays.is_awkward(data)
        or isinstance(data, pl.Series)
        or hasattr(data, "__arrow_c_stream__")
        or hasattr(data, "__arrow_c_array__")
    )
