"""The common `histogram` call's kwargs, checked and pickled once per combination of plain
arguments (issue 31): a tenth of a small query's time went to checking and pickling the same
arguments again. Keys hold each argument's exact type (and a float's sign), so the cache hands
back only what checking the same arguments would give."""

from __future__ import annotations

import functools
import math
import pickle
from typing import Any

from polars_gpu_hist._args.arguments import histogram_kwargs


def plain_histogram_kwargs(
    bins: Any, range: Any, density: Any, closed: Any, flow: Any, device: Any, kernel: Any
) -> bytes | None:
    """The pickled kwargs (as Polars pickles a plugin's) of the common `histogram` call: a
    plain int `bins`, no `range` or two plain Python numbers, the flags plain bools and strings
    (the caller has no weights or keys). Checked and pickled once per combination: a tenth of a
    small query's time went to checking and pickling the same arguments again. None for any
    other call. Exact types only: a cache keyed on values alone would take `True` for `1`."""
    key = None if range is None else _range_key(range)
    plain = (
        (range is None or key is not None)
        and type(bins) is int
        and type(density) is bool
        and type(flow) is bool
        and type(closed) is str
        and type(device) is str
        and type(kernel) is str
    )
    return (
        _plain_histogram_kwargs(bins, key, density, closed, flow, device, kernel) if plain else None
    )


RangeKey = tuple[tuple[type, Any, float], tuple[type, Any, float]]


def _range_key(range: Any) -> RangeKey | None:
    """What identifies a `range` of two plain Python numbers (a tuple or a list): each value
    with its exact type and its sign (`0.0 == -0.0`, but numpy's first edge keeps the sign of a
    zero). None for anything else: numpy scalars (a float32 range makes float32 edges), bools,
    other lengths."""
    if type(range) not in (tuple, list) or len(range) != 2:
        return None
    lo, hi = range
    if type(lo) not in (int, float) or type(hi) not in (int, float):
        return None
    return (
        (type(lo), lo, math.copysign(1.0, lo)),
        (type(hi), hi, math.copysign(1.0, hi)),
    )


@functools.lru_cache(maxsize=64)
def _plain_histogram_kwargs(
    bins: int,
    range_key: RangeKey | None,
    density: bool,
    closed: str,
    flow: bool,
    device: str,
    kernel: str,
) -> bytes:
    # An invalid combination raises here on every call: exceptions are never cached.
    range = None if range_key is None else (range_key[0][1], range_key[1][1])
    options = histogram_kwargs(
        bins, range, density=density, closed=closed, flow=flow, device=device, kernel=kernel
    )
    return pickle.dumps(options, protocol=5)
