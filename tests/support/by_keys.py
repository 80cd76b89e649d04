"""Keys of every integer span and the group_by reference (expr/test_by_keys*.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

INT_KEYS = [pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64]


BINS = 4


def bounds(dtype: Any) -> tuple[int, int]:
    bits = {pl.Int8: 8, pl.Int16: 16, pl.Int32: 32, pl.Int64: 64}
    if dtype in bits:
        return -(2 ** (bits[dtype] - 1)), 2 ** (bits[dtype] - 1) - 1
    ubits = {pl.UInt8: 8, pl.UInt16: 16, pl.UInt32: 32, pl.UInt64: 64}[dtype]
    return 0, 2**ubits - 1


def by_against_group_by(frame: pl.DataFrame, device: str = "cpu") -> None:
    """`by=` equals numpy's histogram of each group's values, groups in first-appearance order
    (Polars' ``group_by(maintain_order=True)``)."""
    got = frame.select(
        pl.col("x").gpu_hist.histogram(BINS, range=(0.0, 1.0), by="g", device=device)
    ).unnest("x")
    groups = frame.group_by("g", maintain_order=True).agg(pl.col("x"))
    assert got.height == BINS * groups.height
    assert got["g"].to_list() == [k for k in groups["g"].to_list() for _ in range(BINS)]
    expected = [
        c
        for values in groups["x"].to_list()
        for c in np.histogram(np.array(values, dtype=np.float64), BINS, (0.0, 1.0))[0]
    ]
    assert got["count"].to_list() == expected
