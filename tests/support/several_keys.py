"""Frames of several keys and the group_by reference (expr/test_by_several_keys*.py)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import polars as pl
from hypothesis import strategies as st

import polars_gpu_hist  # noqa: F401  (registers the namespace)

KEY_KINDS = ["int", "string", "categorical", "boolean", "date", "uint8"]


def key_values(kind: str, codes: list[int | None]) -> pl.Series:
    """A key of `kind` whose values follow `codes` (a few distinct values, None a null)."""
    if kind == "int":
        return pl.Series([None if c is None else c * 1_000_003 - 7 for c in codes], dtype=pl.Int64)
    if kind == "uint8":
        return pl.Series(codes, dtype=pl.UInt8)
    if kind == "boolean":
        return pl.Series([None if c is None else c % 2 == 0 for c in codes], dtype=pl.Boolean)
    if kind == "date":
        day = dt.date(2024, 2, 28)
        return pl.Series([None if c is None else day + dt.timedelta(days=c) for c in codes])
    strings = pl.Series([None if c is None else f"k{c}" for c in codes], dtype=pl.String)
    return strings.cast(pl.Categorical) if kind == "categorical" else strings


@st.composite
def frames(draw: st.DrawFn) -> tuple[pl.DataFrame, list[str]]:
    kinds = draw(st.lists(st.sampled_from(KEY_KINDS), min_size=1, max_size=3))
    n = draw(st.integers(0, 60))
    code = st.one_of(st.none(), st.integers(0, 4))
    columns = {
        f"k{i}": key_values(kind, draw(st.lists(code, min_size=n, max_size=n)))
        for i, kind in enumerate(kinds)
    }
    x = draw(st.lists(st.one_of(st.none(), st.floats(0.0, 1.0)), min_size=n, max_size=n))
    return pl.DataFrame({"x": pl.Series(x, dtype=pl.Float64), **columns}), list(columns)


def group_by_agg(frame: pl.DataFrame, keys: list[str], **kwargs: Any) -> pl.DataFrame:
    """The fallback: every group's histogram through ``group_by().agg()``."""
    hist = pl.col("x").gpu_hist.histogram(device="cpu", **kwargs)
    return frame.group_by(keys, maintain_order=True).agg(hist).explode("x").unnest("x")


def by(frame: pl.DataFrame | pl.LazyFrame, keys: Any, **kwargs: Any) -> pl.DataFrame:
    kwargs.setdefault("device", "cpu")
    out = frame.select(pl.col("x").gpu_hist.histogram(by=keys, **kwargs))
    return (out.collect() if isinstance(out, pl.LazyFrame) else out).unnest("x")
