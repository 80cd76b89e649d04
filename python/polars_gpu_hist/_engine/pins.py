"""What the GPU keeps between calls: columns pinned in device memory by the user's promise that
their host memory stays as it is."""

from __future__ import annotations

import operator

import polars as pl

from polars_gpu_hist import _native


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
    return int(_native.pin(data, device))


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
        _native.unpin_all()
    elif isinstance(data, pl.DataFrame):
        for s in data.get_columns():
            _native.unpin(s)
    else:
        _check_pinnable(data, "unpin")
        _native.unpin(data)


def pinned() -> tuple[int, int]:
    """(pinned columns, device bytes they take)."""
    columns, nbytes = _native.pinned()
    return int(columns), int(nbytes)
