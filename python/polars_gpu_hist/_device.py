"""What the GPU would do with a histogram (`explain`) and what it keeps between calls (pins)."""

from __future__ import annotations

import operator
from typing import Any, Literal, cast

import polars as pl

from polars_gpu_hist import _args, _cuda, _internal
from polars_gpu_hist._args import BinsArg, Closed, Device, Kernel, RangeArg
from polars_gpu_hist._functions import _pickled


def explain(
    data: Any,
    bins: BinsArg = 10,
    *,
    range: RangeArg = None,
    weights: bool = False,
    closed: Closed = "left",
    flow: bool = False,
    device: Device = "auto",
    kernel: Kernel = "auto",
) -> str:
    """Which backend would compute this histogram and why; on the GPU, which GPU, the kernels,
    grid and shared memory the plan chooses, and where compiled kernels are kept. ``data`` is a
    Series, an array (host or GPU) or a dtype (then for 2^29 rows).
    """
    if isinstance(data, (pl.Expr, str, pl.DataFrame, pl.LazyFrame)):
        what = "a column name" if isinstance(data, str) else f"a Polars {type(data).__name__}"
        raise TypeError(
            f"explain takes the data or its dtype, got {what}: an expression's dtype and length "
            "are known only when it runs; pass the column (df['x']) or its dtype "
            "(df.schema['x'], then for 2^29 rows)"
        )
    kwargs = _pickled(_args.histogram_kwargs(bins, range, False, closed, flow, device, kernel))
    # The dtype crosses as an empty Series of it (every dtype can, not every dtype object can).
    iface = _cuda.cuda_array(data)
    if iface is not None:
        empty = pl.Series(values=[], dtype=_dtype_of_typestr(iface["typestr"]))
        rows = iface["shape"][0]
        # The GPU holding the array counts it: found from its address (none for no rows).
        ordinal = _internal.device_of(iface["data"][0], "`data`") if rows else None
        return _internal.explain(empty, rows, kwargs, bool(weights), "device", ordinal)
    if isinstance(data, (pl.DataType, type)):
        try:
            # A type that is no Polars dtype class is refused by Polars, below.
            empty = pl.Series(values=[], dtype=cast("pl.DataType", data))
        except (TypeError, ValueError, pl.exceptions.PolarsError) as e:
            raise TypeError(f"explain takes a Series, an array or a Polars dtype: {e}") from None
        _args.refuse_object(empty)
        return _internal.explain(empty, 1 << 29, kwargs, bool(weights), "host")
    s = data if isinstance(data, pl.Series) else pl.Series(data)
    _args.refuse_object(s)
    ordinal = _internal.pinned_device(s)
    location: Literal["pinned", "host"] = "host" if ordinal is None else "pinned"
    return _internal.explain(s.clear(), len(s), kwargs, bool(weights), location, ordinal)


def _dtype_of_typestr(typestr: str) -> pl.DataType:
    import numpy as np

    return pl.Series(np.empty(0, dtype=np.dtype(typestr))).dtype


def pin(data: pl.Series | pl.DataFrame, device: int | None = None) -> int:
    """Keep a column (or every column of a frame) in GPU memory: later histograms of it, with
    any bins or range, read the device copy instead of copying it again (a fraction of a
    millisecond for a GiB instead of tens), and count on the GPU that holds it. Returns the
    device bytes it takes.

    ``device`` is the GPU's ordinal (0 is the first the process sees); None: the current
    device of the calling thread (CuPy's ``cupy.cuda.Device(k)``, ``torch.cuda.set_device(k)``),
    else 0. A column has one pin: pinned again to another GPU, it moves there.

    Nothing is kept on the GPU unless pinned: a column's memory may belong to numpy, pyarrow
    or a memory-mapped file, which can change it in place, and the plugin cannot tell. Pinning
    is your promise that the memory stays as it is until :func:`unpin`; a pin holds a reference
    to the column, so Polars cannot free or reuse its memory meanwhile.
    """
    if device is not None:
        device = _ordinal(device)
    if isinstance(data, pl.DataFrame):
        return sum(pin(s, device) for s in data.get_columns())
    _check_pinnable(data, "pin")
    return int(_internal.pin(data, device))


def _ordinal(device: object) -> int:
    if not isinstance(device, bool):
        try:
            return operator.index(device)  # type: ignore[arg-type]
        except TypeError:
            pass
    raise TypeError(f"`device` must be a GPU's ordinal (an int) or None, got {device!r}")


def _check_pinnable(data: object, what: str) -> None:
    if not isinstance(data, pl.Series):
        raise TypeError(
            f"`{what}` takes a Polars Series or DataFrame, got {type(data).__name__}: pass the "
            "column itself (df['x']), not its name"
        )


def unpin(data: pl.Series | pl.DataFrame | None = None) -> None:
    """Drop the pin of a column (or of every column of a frame), or every pin (no argument)."""
    if data is None:
        _internal.unpin_all()
    elif isinstance(data, pl.DataFrame):
        for s in data.get_columns():
            _internal.unpin(s)
    else:
        _check_pinnable(data, "unpin")
        _internal.unpin(data)


def pinned() -> tuple[int, int]:
    """(pinned columns, device bytes they take)."""
    columns, nbytes = _internal.pinned()
    return int(columns), int(nbytes)
