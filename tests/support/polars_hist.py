"""Polars' `hist` beside ours: flags, cases and the comparisons (expr/test_polars_hist*.py)."""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import polars as pl
import pytest
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_gpu_hist._expr.polars_hist as native
from support.dtypes import NUMERIC
from support.strategies import base_values, to_series, with_edge_values

INF, NAN = math.inf, math.nan


BOTH = {"include_category": True, "include_breakpoint": True}


FLAGS = [
    {},
    {"include_category": True},
    {"include_breakpoint": True},
    BOTH,
]


# Polars' ``Expr.hist`` defaults, which the expression namespace shares.
POLARS_DEFAULTS = {"include_category": False, "include_breakpoint": False}


@pytest.fixture(autouse=True, params=["scalar", "kernels"])
def counting_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test twice: small columns counted on the calling thread by Polars' rule, and (as
    large ones are) by the crate's kernels."""
    if request.param == "kernels":
        monkeypatch.setattr(native, "_KERNEL_FROM", 0)
    return request.param


def ours(expr: pl.Expr, **kwargs: Any) -> pl.Expr:
    return expr.gpu_hist.hist(device="cpu", **kwargs)


def polars(expr: pl.Expr, **kwargs: Any) -> pl.Expr:
    return expr.hist(**kwargs)


def outcome(run: Callable[[], pl.DataFrame]) -> pl.DataFrame | BaseException:
    try:
        return run()
    except Exception as e:  # the comparison is the point: errors must match too
        return e


def assert_same(
    run_polars: Callable[[], pl.DataFrame], run_ours: Callable[[], pl.DataFrame]
) -> None:
    """The same frame (schema, values, labels; floats bit-exact) or the same exception class."""
    expected, got = outcome(run_polars), outcome(run_ours)
    if isinstance(expected, BaseException) or isinstance(got, BaseException):
        assert type(got) is type(expected), f"Polars: {expected!r}\nours: {got!r}"
        return
    assert_frame_equal(got, expected, check_exact=True)


def assert_select_same(frame: pl.DataFrame, column: str = "x", **kwargs: Any) -> None:
    """Eager, lazy and streaming ``select`` of the drop-in equal Polars'."""
    for collect in (
        lambda q: frame.select(q),
        lambda q: frame.lazy().select(q).collect(),
        lambda q: frame.lazy().select(q).collect(engine="streaming"),
    ):
        assert_same(
            lambda collect=collect: collect(polars(pl.col(column), **kwargs)),
            lambda collect=collect: collect(ours(pl.col(column), **kwargs)),
        )


def assert_group_by_same(frame: pl.DataFrame, **kwargs: Any) -> None:
    assert_group_by_same_on(frame, device="cpu", **kwargs)


def assert_group_by_same_on(frame: pl.DataFrame, device: str, **kwargs: Any) -> None:
    for engine in ("in-memory", "streaming"):
        assert_same(
            lambda engine=engine: (
                frame.lazy()
                .group_by("g", maintain_order=True)
                .agg(polars(pl.col("x"), **kwargs))
                .collect(engine=engine)
            ),
            lambda engine=engine: (
                frame.lazy()
                .group_by("g", maintain_order=True)
                .agg(pl.col("x").gpu_hist.hist(device=device, **kwargs))
                .collect(engine=engine)
            ),
        )


def frame_of(values: list[Any], dtype: pl.DataType | None = None) -> pl.DataFrame:
    return pl.DataFrame({"x": pl.Series("x", values, dtype=dtype)})


@st.composite
def hist_cases(draw: st.DrawFn, max_size: int = 200) -> tuple[pl.DataFrame, dict[str, Any]]:
    """A column ``x`` (nulls, NaN, ±inf, chunks, values on Polars' edges), a group key ``g``
    and ``hist`` arguments: none, ``bin_count`` or explicit edges, and the flags."""
    pl_dtype = draw(st.sampled_from(list(NUMERIC)))
    np_dtype = NUMERIC[pl_dtype]
    values = draw(base_values(np_dtype, draw(st.integers(0, max_size))))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    mode = draw(st.sampled_from(["default", "bin_count", "bin_count", "edges"]))
    kwargs: dict[str, Any] = dict(draw(st.sampled_from(FLAGS)))
    finite = values[np.isfinite(values.astype(np.float64))]
    if mode == "bin_count":
        kwargs["bin_count"] = draw(
            st.sampled_from([1, 2, 3, 7, 10, 64, 255]) | st.integers(1, 2000)
        )
    elif mode == "edges":
        anchors = st.floats(-1e6, 1e6)
        if finite.size:
            lo, hi = float(finite.min()), float(finite.max())
            anchors = st.sampled_from([float(v) for v in finite]) | st.floats(lo - 1, hi + 1)
        edges = sorted(set(draw(st.lists(anchors, min_size=2, max_size=30))))
        if draw(st.booleans()):
            edges = sorted({float(math.floor(e)) for e in edges})
        kwargs["bins"] = edges
    # Values exactly on Polars' edges (and one ulp either side), where the bin rule matters.
    if "bins" in kwargs:
        edges = np.array(kwargs["bins"], dtype=np.float64)
    else:
        probe = pl.Series(values).hist(bin_count=kwargs.get("bin_count"), include_category=False)
        edges = probe["breakpoint"].to_numpy()
    values = with_edge_values(values, edges[np.isfinite(edges)], rng)
    rng.shuffle(values)
    nulls = rng.random(len(values)) < draw(st.sampled_from([0.0, 0.0, 0.1, 0.5, 1.0]))
    x = to_series(values, pl_dtype, nulls, draw(st.sampled_from([1, 1, 2, 3, 7])))
    groups = rng.integers(0, draw(st.sampled_from([1, 2, 5])), size=len(x))
    return pl.DataFrame({"x": x, "g": groups}), kwargs
