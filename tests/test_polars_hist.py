"""``gpu_hist.hist`` against Polars' own ``Expr.hist``: the same frame, or the same error."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any, Callable

import numpy as np
import polars as pl
import polars.selectors as cs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_gpu_hist as gh
from conftest import NUMERIC
from strategies import base_values, to_series, with_edge_values

INF, NAN = math.inf, math.nan
BOTH = {"include_category": True, "include_breakpoint": True}
FLAGS = [
    {},
    {"include_category": True},
    {"include_breakpoint": True},
    BOTH,
]


# Polars' ``Expr.hist`` defaults, spelled out for the drop-in (whose defaults include both).
POLARS_DEFAULTS = {"include_category": False, "include_breakpoint": False}


def ours(expr: pl.Expr, **kwargs: Any) -> pl.Expr:
    return expr.gpu_hist.hist(device="cpu", **{**POLARS_DEFAULTS, **kwargs})


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
                .agg(pl.col("x").gpu_hist.hist(device=device, **{**POLARS_DEFAULTS, **kwargs}))
                .collect(engine=engine)
            ),
        )


def frame_of(values: list[Any], dtype: pl.DataType | None = None) -> pl.DataFrame:
    return pl.DataFrame({"x": pl.Series("x", values, dtype=dtype)})


# --- generated inputs -----------------------------------------------------------------------


def _one_zero_sign(values: np.ndarray) -> np.ndarray:
    """With both 0.0 and -0.0 in a column, the sign of a zero maximum that Polars prints
    depends on its kernel (the documented difference): keep one sign of zero."""
    if values.dtype.kind == "f" and (values == 0).any():
        return np.where(values == 0, values.dtype.type(0.0), values)
    return values


@st.composite
def hist_cases(draw: st.DrawFn, max_size: int = 200) -> tuple[pl.DataFrame, dict[str, Any]]:
    """A column ``x`` (nulls, NaN, ±inf, chunks, values on Polars' edges), a group key ``g``
    and ``hist`` arguments: none, ``bin_count`` or explicit edges, and the flags."""
    pl_dtype = draw(st.sampled_from(list(NUMERIC)))
    np_dtype = NUMERIC[pl_dtype]
    values = _one_zero_sign(draw(base_values(np_dtype, draw(st.integers(0, max_size)))))
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
    values = _one_zero_sign(with_edge_values(values, edges[np.isfinite(edges)], rng))
    rng.shuffle(values)
    nulls = rng.random(len(values)) < draw(st.sampled_from([0.0, 0.0, 0.1, 0.5, 1.0]))
    x = to_series(values, pl_dtype, nulls, draw(st.sampled_from([1, 1, 2, 3, 7])))
    groups = rng.integers(0, draw(st.sampled_from([1, 2, 5])), size=len(x))
    return pl.DataFrame({"x": x, "g": groups}), kwargs


@given(hist_cases())
def test_select_matches_polars(case: tuple[pl.DataFrame, dict[str, Any]]) -> None:
    frame, kwargs = case
    assert_select_same(frame, **kwargs)


@given(hist_cases(max_size=120))
def test_group_by_matches_polars(case: tuple[pl.DataFrame, dict[str, Any]]) -> None:
    frame, kwargs = case
    assert_group_by_same(frame, **kwargs)


@given(
    st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=30),
    st.integers(1, 40),
    st.sampled_from(FLAGS),
)
def test_any_floats_match_polars(values: list[float], bin_count: int, flags: dict) -> None:
    """Arbitrary doubles: huge ranges that overflow the bin width, subnormal widths, ties."""
    values = _one_zero_sign(np.array(values, dtype=np.float64)).tolist()
    assert_select_same(frame_of(values, pl.Float64), bin_count=bin_count, **flags)


# --- the edge cases, one by one -------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "dtype"),
    [
        ([1, 3, 8, 8, 2, 1, 3], pl.Int64),
        ([1.5, 3.25, 8.0, -2.0], pl.Float64),
        ([1.5, 3.25, 8.0, -2.0], pl.Float32),
        ([], pl.Float64),  # empty: bins over [0, 1]
        ([None, None], pl.Float64),  # all null: the same
        ([None, None], pl.Int32),
        ([5], pl.Int8),  # one value v: [v - 0.5, v + 0.5]
        ([5.0, 5.0, None, 5.0], pl.Float64),  # equal values: the same
        ([NAN], pl.Float64),  # one NaN: NaN edges, no counts
        ([NAN, NAN, None], pl.Float64),
        ([NAN, 1.0], pl.Float64),  # NaN beside a value: ignored by min/max
        ([0.0, 1.0, INF], pl.Float64),  # infinite maximum: NaN/inf edges, no counts
        ([-INF, 1.0, 2.0], pl.Float64),
        ([-INF, INF], pl.Float64),
        ([INF, INF, NAN], pl.Float64),  # only +inf: every edge inf, the infs in bin 0
        ([-INF], pl.Float32),
        ([-1e308, 1e308], pl.Float64),  # the bin width overflows
        ([1.7976931348623157e308, -1.7976931348623157e308, 0.0], pl.Float64),
        ([0.0, 5e-324], pl.Float64),  # the width underflows to 0
        ([1e16, 1e16 + 2, 1e16 + 4], pl.Float64),  # equal neighbouring edges
        ([2**53, 2**53 + 2], pl.Int64),
        ([-(2**63), 2**63 - 1], pl.Int64),
        ([0, 2**64 - 1], pl.UInt64),
        ([-128, 127], pl.Int8),
        ([1e-7, 2.5, 1e20, 123456.789, -0.0], pl.Float64),  # label formats
        ([0.1, 0.2, 0.30000000000000004], pl.Float64),
        ([1, 2], pl.Int128),  # cast to Float64 for the plugin, as Polars bins them
        ([-(2**100), 2**100], pl.Int128),
        ([0, 2**120], pl.UInt128),
        ([0.5, 1.5, 65504.0], pl.Float16),
    ],
)
@pytest.mark.parametrize("flags", FLAGS)
@pytest.mark.parametrize("bins", [{}, {"bin_count": 1}, {"bin_count": 3}, {"bin_count": 64}])
def test_edge_cases_match_polars(values: list, dtype: pl.DataType, flags: dict, bins: dict) -> None:
    assert_select_same(frame_of(values, dtype), **bins, **flags)


@pytest.mark.parametrize(
    "bins",
    [
        [1, 2, 3],
        [1.0, 2.5, 8.0],
        [-1e300, 0.0, 1e300],
        [0.0, 5e-324, 1e-323],
        np.array([0.0, 3.0, 9.0]),
        np.array([0, 3, 9], dtype=np.int16),
        pl.Series([0.0, 2.0, 9.0]),
        pl.Series([0, 2, 9], dtype=pl.UInt8),
        pl.Series([0, 2, 9], dtype=pl.Decimal(10, 2)),
        # Polars' own hist takes these (NaN, inf, too few edges, expressions, odd types):
        [1.0, NAN, 3.0],
        [-INF, 2.0, INF],
        [0.0, INF],
        [3.0],
        [],
        3,
        pl.lit(pl.Series([0.0, 4.0, 9.0])),
        pl.col("x").max() * pl.Series([0.0, 0.5, 1.0]),
        ["1", "4"],
        pl.Series([dt.date(1970, 1, 2), dt.date(1970, 1, 9)]),
        # ... and raises for these:
        [2, 1],
        [1.0, 1.0, 2.0],
        [1, None, 3],
        [1, NAN, 3],
        (1, 3),
    ],
    ids=repr,
)
@pytest.mark.parametrize("flags", FLAGS)
def test_explicit_bins_match_polars(bins: Any, flags: dict) -> None:
    values = [1, 3, 8, 8, 2, 1, 3, 9, 0, -1, None, 2.5, NAN, INF, -INF, 1e300]
    assert_select_same(frame_of(values, pl.Float64), bins=bins, **flags)
    assert_select_same(
        frame_of([1, 3, 8, 8, 2, 1, 3, 9, 0, -1, None], pl.Int32), bins=bins, **flags
    )


def test_values_on_explicit_edges_follow_polars() -> None:
    # (a, b] with the first bin closed: [0, 1] gets 0 and 1, (1, 2] gets 2, 3 is outside.
    frame = frame_of([0.0, 1.0, 2.0, 3.0, -1.0, 1.5])
    out = frame.select(ours(pl.col("x"), bins=[0, 1, 2], **BOTH)).unnest("x")
    assert out["count"].to_list() == [2, 2]
    assert out["category"].cast(pl.String).to_list() == ["[0.0, 1.0]", "(1.0, 2.0]"]
    assert_select_same(frame, bins=[0, 1, 2], **BOTH)


@pytest.mark.parametrize(
    "config",
    [
        {},
        {"float_precision": 2},
        {"float_precision": 0},
        {"thousands_separator": ",", "decimal_separator": ";"},
        {"thousands_separator": True},
        {"fmt_float": "full"},
    ],
)
def test_labels_follow_polars_float_config(config: dict) -> None:
    frames = [
        frame_of([1e-7, 2.5, 1e20, 123456.789, -3.0, 1234567.5]),
        frame_of([1e16, 1e16 + 2, 1e16 + 4]),  # equal neighbouring edges: the joined labels
        frame_of([1.0, INF]),
    ]
    with pl.Config(**config):
        for frame in frames:
            for bins in ({"bin_count": 7}, {}, {"bins": [-3.0, 0.1, 2.5, 1e20]}):
                assert_select_same(frame, **bins, **BOTH)


def test_labels_are_formatted_when_the_query_runs() -> None:
    frame = frame_of([0.125, 1.0, 3.3])
    query = frame.lazy().select(ours(pl.col("x"), bin_count=3, **BOTH))
    with pl.Config(float_precision=1):
        assert_frame_equal(
            query.collect(),
            frame.select(polars(pl.col("x"), bin_count=3, **BOTH)),
            check_exact=True,
        )


@pytest.mark.parametrize("bin_count", [0, 1, 1000, 100_000])
def test_bin_counts_match_polars(bin_count: int) -> None:
    rng = np.random.default_rng(bin_count)
    frame = frame_of(rng.normal(size=5000).tolist())
    assert_select_same(frame, bin_count=bin_count, **BOTH)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"bins": [1, 2], "bin_count": 3}, pl.exceptions.ComputeError),
        ({"bins": [], "bin_count": 3}, pl.exceptions.ComputeError),
        ({"bins": [3, 2, 1]}, pl.exceptions.ComputeError),
        ({"bins": [1, None]}, pl.exceptions.InvalidOperationError),
        ({"bin_count": -1}, OverflowError),
        ({"bin_count": 2.5}, TypeError),
        ({"bin_count": "3"}, TypeError),
        ({"bins": [1, "a"]}, TypeError),
    ],
)
def test_bad_arguments_raise_as_polars(kwargs: dict, error: type) -> None:
    frame = frame_of([1.0, 2.0, 3.0])
    with pytest.raises(error):
        frame.select(polars(pl.col("x"), **kwargs))
    with pytest.raises(error):  # ours raises where the expression is written
        ours(pl.col("x"), **kwargs)


def test_bad_device_is_named() -> None:
    with pytest.raises(ValueError, match="device"):
        pl.col("x").gpu_hist.hist(device="tpu")


@pytest.mark.parametrize(
    "series",
    [
        pl.Series("x", ["a", "b"]),
        pl.Series("x", [True, False]),
        pl.Series("x", [dt.date(2024, 1, 1), dt.date(2024, 2, 1)]),
        pl.Series("x", [dt.datetime(2024, 1, 1), dt.datetime(2024, 2, 1)]),
        pl.Series("x", [dt.datetime(2024, 1, 1)], dtype=pl.Datetime("ns", "UTC")),
        pl.Series("x", [dt.timedelta(1), dt.timedelta(2)]),
        pl.Series("x", [dt.time(1)]),
        pl.Series("x", [1, 2], dtype=pl.Decimal(10, 2)),
        pl.Series("x", ["a"], dtype=pl.Categorical),
        pl.Series("x", [[1.0]]),
    ],
    ids=lambda s: str(s.dtype),
)
@pytest.mark.parametrize("bins", [{}, {"bin_count": 3}, {"bins": [0, 1, 2]}])
def test_non_numeric_columns_raise_as_polars(series: pl.Series, bins: dict) -> None:
    frame = series.to_frame()
    with pytest.raises(pl.exceptions.InvalidOperationError, match="hist"):
        frame.select(ours(pl.col("x"), **bins))
    assert_select_same(frame, **bins, **BOTH)


def test_output_names_follow_polars() -> None:
    frame = pl.DataFrame({"x": [1.0, 2.0, 5.0], "y": [3, 4, 5], "s": ["a", "b", "c"]})
    for build in (
        lambda h: [h(pl.col("x"))],
        lambda h: [h(pl.col("x").alias("z"))],
        lambda h: [h(pl.col("x") * 2)],
        lambda h: [h(pl.col("x", "y"))],
        lambda h: [h(cs.numeric())],
        lambda h: [h(pl.col("x", "y").name.suffix("_h"))],
        lambda h: [h(pl.lit(3.0))],
        lambda h: [h(pl.col("x")).alias("a"), h(pl.col("y")).alias("b")],
    ):
        for kwargs in FLAGS:
            assert_same(
                lambda b=build, k=kwargs: frame.select(b(lambda e: polars(e, bin_count=3, **k))),
                lambda b=build, k=kwargs: frame.select(b(lambda e: ours(e, bin_count=3, **k))),
            )


def test_a_column_name_is_accepted() -> None:
    frame = frame_of([1.0, 2.0, 5.0])
    assert_frame_equal(
        frame.select(gh.hist_expr("x", bin_count=2, device="cpu", **BOTH)),
        frame.select(polars(pl.col("x"), bin_count=2, **BOTH)),
        check_exact=True,
    )


@pytest.mark.parametrize("flags", FLAGS)
def test_with_columns_as_polars_allows_it(flags: dict) -> None:
    frame = pl.DataFrame({"x": [1.0, 2.0, 5.0, 7.0, 9.0]})
    for bin_count in (5, 3, 1):  # as many bins as rows; otherwise both raise
        assert_same(
            lambda n=bin_count: frame.with_columns(h=polars(pl.col("x"), bin_count=n, **flags)),
            lambda n=bin_count: frame.with_columns(h=ours(pl.col("x"), bin_count=n, **flags)),
        )


def test_group_by_with_odd_groups_matches_polars() -> None:
    frame = pl.DataFrame(
        {
            "g": [1, 1, 2, 2, 3, 4, 4, 5],
            "x": [INF, 1.0, NAN, NAN, None, 2.0, 2.0, -1e308],
        }
    ).vstack(pl.DataFrame({"g": [5, 6], "x": [1e308, 0.0]}))
    for kwargs in ({}, {"bin_count": 3}, {"bins": [0.0, 1.0, 2.0]}):
        for flags in FLAGS:
            assert_group_by_same(frame, **kwargs, **flags)


def test_signed_zero_maximum_is_the_documented_difference() -> None:
    # Both zeros, the maximum zero: Polars prints the sign its min/max kernel meets; ours may
    # differ. Counts and breakpoint values agree; only the printed sign of 0.0 may not.
    frame = frame_of([-1.0, 0.0, -0.0])
    expected = frame.select(polars(pl.col("x"), bin_count=2, **BOTH)).unnest("x")
    got = frame.select(ours(pl.col("x"), bin_count=2, **BOTH)).unnest("x")
    assert got["count"].to_list() == expected["count"].to_list()
    assert got["breakpoint"].to_list() == expected["breakpoint"].to_list()

    def unsigned(s: pl.Series) -> list[str]:
        return s.cast(pl.String).str.replace_all("-0.0", "0.0", literal=True).to_list()

    assert unsigned(got["category"]) == unsigned(expected["category"])


def test_the_plugin_is_in_the_plan_once() -> None:
    """The drop-in must not quietly hand the counting back to Polars, nor run the plugin more
    than once (every reference to an expression is computed again)."""
    frame = pl.DataFrame({"x": [1.0, 2.0, 5.0], "i": [1, 2, 5]})
    for column in ("x", "i"):
        for kwargs in ({}, {"bin_count": 4}, {"bins": [0.0, 2.0, 9.0]}):
            for flags in FLAGS:
                query = frame.lazy().select(ours(pl.col(column), **kwargs, **flags))
                assert query.explain().count(":histogram(") == 1
    # Polars' own hist, by design: edges known only when the query runs, more bins than the
    # plugin takes (not run here: Polars would make 2^28 labels).
    for kwargs in ({"bins": pl.lit(pl.Series([0.0, 9.0]))}, {"bin_count": (1 << 28) + 1}):
        plan = frame.lazy().select(ours(pl.col("x"), **kwargs)).explain()
        assert ":histogram(" not in plan and ".hist(" in plan


@pytest.mark.gpu
@pytest.mark.parametrize("kwargs", [{}, {"bin_count": 1000}, {"bins": [-1.0, 0.0, 0.5, 3.0]}])
def test_gpu_matches_polars(kwargs: dict) -> None:
    rng = np.random.default_rng(7)
    x = rng.normal(size=3_000_000)
    x[::1000] = np.nan
    frame = pl.DataFrame({"x": x, "g": rng.integers(0, 3, x.size)})
    columns = {
        "f64": pl.col("x"),
        "f32": pl.col("x").cast(pl.Float32),
        "i32": (pl.col("x") * 100).cast(pl.Int32, strict=False),  # NaN -> null
    }
    for column in columns.values():
        f = frame.with_columns(column.alias("x"))
        expected = f.select(polars(pl.col("x"), **kwargs, **BOTH))
        got = f.select(pl.col("x").gpu_hist.hist(device="gpu", **kwargs, **BOTH))
        assert_frame_equal(got, expected, check_exact=True)
        assert_group_by_same_on(f, device="gpu", **kwargs, **BOTH)


def test_the_defaults_include_the_breakpoint_and_the_category() -> None:
    """The issue's signature (and ``Series.hist``'s): both fields unless asked otherwise."""
    frame = pl.DataFrame({"x": [1.0, 2.5, 2.5, 7.0]})
    got = frame.select(pl.col("x").gpu_hist.hist(bin_count=3, device="cpu"))
    expected = frame.select(pl.col("x").hist(bin_count=3, **BOTH))
    assert_frame_equal(got, expected, check_exact=True)
    series = frame["x"]
    assert_frame_equal(
        series.gpu_hist.hist(bins=[0.0, 2.5, 10.0], device="cpu"),
        series.hist(bins=[0.0, 2.5, 10.0]),
        check_exact=True,
    )
