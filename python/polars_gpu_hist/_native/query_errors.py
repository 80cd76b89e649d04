"""The boundary's Python half, for queries the package runs itself (the scan's streaming
query, the frames of its groups): Polars re-raises a plugin's error as its own ``ComputeError``
carrying the plugin's text, so the two errors a caller catches by type are turned back from
that text into what the native call raises directly (src/boundary.rs): ``MemoryError`` for an
allocation that failed, ``KeyboardInterrupt`` for a call Ctrl-C stopped (Python's pending
SIGINT handler runs now, not at some later line)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import polars as pl

from polars_gpu_hist._native import raise_interrupted

# The texts src/error.rs gives the two errors (HistError::OutOfMemory, HistError::Interrupted).
OUT_OF_MEMORY = "out of memory: could not allocate"
INTERRUPTED = "interrupted (Ctrl-C): the call stopped early"


@contextlib.contextmanager
def query_errors() -> Iterator[None]:
    """Runs a query of the package's own, its out-of-memory and Ctrl-C errors raised as
    ``MemoryError`` and ``KeyboardInterrupt``; every other error as Polars raised it."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    try:
        yield
    except pl.exceptions.ComputeError as e:
        text = str(e)
        if INTERRUPTED in text:
            raise_interrupted()
        if OUT_OF_MEMORY in text:
            start = text.index(OUT_OF_MEMORY)
            raise MemoryError(text[start:].split("\n")[0]) from e
        raise
