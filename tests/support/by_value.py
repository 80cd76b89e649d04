"""Narrow integer columns long enough to count by value (engine/test_by_value*.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

# Rows from which a count goes by value (`ByValue::MIN_ROWS_PER_VALUE`, `MIN_ROWS_16_BIT_GPU`).
MIN_ROWS_PER_VALUE = 16


MIN_ROWS_16_BIT_GPU = 1 << 24


NARROW = {"int8": np.int8, "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16}


def values_of(info: np.iinfo) -> set[int]:
    """Every value of an integer type: edges picked from a fixed list must be among them."""
    return set(range(int(info.min), int(info.max) + 1))


def rows_by_value(np_dtype: Any) -> int:
    """Rows from which a column of this type counts by value (on the GPU, for 16 bits)."""
    if np.dtype(np_dtype).itemsize == 2:
        return MIN_ROWS_16_BIT_GPU
    return MIN_ROWS_PER_VALUE << 8


def column(rng: np.random.Generator, np_dtype: Any, kind: str, rows: int) -> np.ndarray:
    info = np.iinfo(np_dtype)
    if kind == "uniform":
        return rng.integers(info.min, info.max, rows, endpoint=True).astype(np_dtype)
    if kind == "normal":
        mid, spread = (info.min + info.max) / 2, (info.max - info.min) / 8
        return np.clip(rng.normal(mid, spread, rows), info.min, info.max).astype(np_dtype)
    if kind == "extremes":
        return rng.choice(np.array([info.min, info.max, 0, 1], dtype=np_dtype), rows)
    if kind == "sorted":
        return np.sort(rng.integers(info.min, info.max, rows, endpoint=True).astype(np_dtype))
    return np.full(rows, info.max, dtype=np_dtype)


@st.composite
def binnings(draw: st.DrawFn, np_dtype: Any) -> dict[str, Any]:
    info = np.iinfo(np_dtype)
    lo = draw(st.integers(info.min - 3, info.max))
    hi = draw(st.integers(lo + 1, info.max + 3))
    shape = draw(st.sampled_from(["equal", "fractional", "edges", "type", "auto"]))
    if shape == "equal":
        return {"bins": draw(st.integers(1, 300)), "range": (lo, hi)}
    if shape == "fractional":
        return {"bins": draw(st.integers(1, 50)), "range": (lo - 0.5, hi + 0.25)}
    if shape == "edges":
        edges = sorted(set(draw(st.lists(st.integers(lo, hi), min_size=2, max_size=12))))
        if len(edges) < 2:
            edges = [lo, hi]
        return {"bins": edges}
    if shape == "type":
        return {"bins": int(info.max - info.min + 1), "range": (int(info.min), int(info.max) + 1)}
    return {"bins": draw(st.integers(1, 70))}
