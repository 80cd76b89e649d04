"""``gpu_hist.hist`` against Polars' own ``Expr.hist``: the same frame, or the same error."""

from __future__ import annotations

import datetime as dt
import inspect
import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import polars as pl
import polars.selectors as cs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_gpu_hist as gh
from support.polars_hist import (
    BOTH,
    FLAGS,
    INF,
    NAN,
    POLARS_DEFAULTS,
    assert_group_by_same,
    assert_same,
    assert_select_same,
    counting_path,  # noqa: F401  (autouse: every test on both paths)
    frame_of,
    hist_cases,
    ours,
    polars,
)


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
    assert_select_same(frame_of(values, pl.Float64), bin_count=bin_count, **flags)


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
    ints = frame_of([1, 3, 8, 8, 2, 1, 3, 9, 0, -1, None], pl.Int32)
    assert_select_same(ints, bins=bins, **flags)


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


def test_labels_follow_the_config_where_the_expression_is_built() -> None:
    """The plugin cannot read Polars' display settings when the query runs: the wrapper reads
    them where the expression is built (docs/semantics.md's table of deviations)."""
    frame = frame_of([0.125, 1.0, 3.3])
    with pl.Config(float_precision=1):
        query = frame.lazy().select(ours(pl.col("x"), bin_count=3, **BOTH))
        expected = frame.select(polars(pl.col("x"), bin_count=3, **BOTH))
    assert_frame_equal(query.collect(), expected, check_exact=True)
    assert query.collect()["x"].struct.field("category").cast(pl.String)[0] == "[0.1, 1.2]"


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
        ({"include_category": "yes"}, TypeError),
        ({"include_breakpoint": None}, TypeError),
        ({"include_category": 1}, TypeError),
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
        frame.select(polars(pl.col("x"), **bins))
    # The plugin's errors reach Python as ComputeError (Polars wraps them): the same sentence.
    for kwargs in ({}, BOTH):
        with pytest.raises(pl.exceptions.ComputeError, match="'hist' is only supported for"):
            frame.select(ours(pl.col("x"), **bins, **kwargs))


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


@pytest.mark.parametrize(
    "values",
    [
        [-0.0, -4.0, 0.0, -7.0],
        [-1.0, 0.0, -0.0],
        [-1.0, -0.0, 0.0],
        [0.0, -0.0, 3.0],
        [-0.0, 0.0, 3.0],
        [-0.0, -0.0],
        [0.0, -0.0] * 40 + [-5.0],
    ],
)
@pytest.mark.parametrize("dtype", [pl.Float64, pl.Float32])
def test_the_sign_of_zero_follows_polars(values: list[float], dtype: pl.DataType) -> None:
    """Polars' breaks come from its own min/max kernels, whose sign of a zero extreme depends
    on the order they meet 0.0 and -0.0: ours are the same kernels."""
    for bin_count in (1, 2, 3):
        assert_select_same(frame_of(values, dtype), bin_count=bin_count, **BOTH)
    got = pl.Series(values, dtype=dtype).gpu_hist.hist(bin_count=1)
    assert_frame_equal(got, pl.Series(values, dtype=dtype).hist(bin_count=1), check_exact=True)


def test_the_sign_of_zero_of_the_issue() -> None:
    got = pl.Series([-0.0, -4.0, 0.0, -7.0]).gpu_hist.hist(bin_count=1)
    assert str(got["breakpoint"][0]) == "0.0"
    assert got["category"].cast(pl.String).to_list() == ["[-7.0, 0.0]"]


def test_the_plugin_is_in_the_plan_once() -> None:
    """One call of the plugin, no graph of helper expressions, no Polars ``hist``."""
    frame = pl.DataFrame({"x": [1.0, 2.0, 5.0], "i": [1, 2, 5]})
    for column in ("x", "i"):
        for kwargs in ({}, {"bin_count": 4}, {"bins": [0.0, 2.0, 9.0]}):
            for flags in FLAGS:
                plan = frame.lazy().select(ours(pl.col(column), **kwargs, **flags)).explain()
                assert plan.count(":hist(") == 1, plan
                assert ".hist(" not in plan and "implode" not in plan, plan
    # Polars' own hist, by design: edges known only when the query runs.
    plan = frame.lazy().select(ours(pl.col("x"), bins=pl.lit(pl.Series([0.0, 9.0])))).explain()
    assert ":hist(" not in plan and ".hist(" in plan


@pytest.mark.parametrize("bin_count", [(1 << 28) + 1, 2**40, 2**64 + 5])
def test_more_bins_than_the_limit_raise_where_written(bin_count: int) -> None:
    """Polars itself aborts on allocations that size (2^40 bins: 8 TiB of breaks); ours
    refuses beyond 2^28 bins, as every other entry point does, before any work."""
    with pytest.raises(ValueError, match="bin_count"):
        pl.col("x").gpu_hist.hist(bin_count=bin_count)
    with pytest.raises(ValueError, match="bin_count"):
        pl.Series([1.0]).gpu_hist.hist(bin_count=bin_count)


@pytest.mark.parametrize("flags", FLAGS)
def test_over_matches_polars(flags: dict) -> None:
    frame = pl.DataFrame({"g": [1, 1, 1, 2, 2, 2], "x": [1.0, 2.0, 5.0, -1.0, 0.0, 9.0]})
    for bin_count in (3, 2):
        assert_same(
            lambda n=bin_count: frame.select(polars(pl.col("x"), bin_count=n, **flags).over("g")),
            lambda n=bin_count: frame.select(ours(pl.col("x"), bin_count=n, **flags).over("g")),
        )
        assert_same(
            lambda n=bin_count: frame.select(
                polars(pl.col("x"), bin_count=n, **flags).over("g", mapping_strategy="explode")
            ),
            lambda n=bin_count: frame.select(
                ours(pl.col("x"), bin_count=n, **flags).over("g", mapping_strategy="explode")
            ),
        )


def test_the_defaults_are_polars_own() -> None:
    """The expression namespace and ``hist_expr`` take ``Expr.hist``'s defaults, the Series
    namespace ``Series.hist``'s, read from Polars' signatures so that a change shows up."""
    pairs = [
        (pl.Expr.hist, gh.GpuHistNamespace.hist),
        (pl.Expr.hist, gh.hist_expr),
        (pl.Series.hist, gh.GpuHistSeriesNamespace.hist),
    ]
    for theirs, mine in pairs:
        expected = inspect.signature(theirs).parameters
        got = inspect.signature(mine).parameters
        for name in ("bins", "bin_count", "include_category", "include_breakpoint"):
            assert got[name].default == expected[name].default, (mine, name)
            assert got[name].kind == expected[name].kind, (mine, name)
    frame = pl.DataFrame({"x": [1.0, 2.5, 2.5, 7.0]})
    assert_frame_equal(
        frame.select(pl.col("x").gpu_hist.hist(bin_count=3)),
        frame.select(pl.col("x").hist(bin_count=3)),
        check_exact=True,
    )
    series = frame["x"]
    assert_frame_equal(
        series.gpu_hist.hist(bins=[0.0, 2.5, 10.0]),
        series.hist(bins=[0.0, 2.5, 10.0]),
        check_exact=True,
    )


@given(hist_cases(max_size=60))
def test_series_namespace_matches_polars(case: tuple[pl.DataFrame, dict[str, Any]]) -> None:
    frame, kwargs = case
    s = frame["x"]
    flags = {k: v for k, v in kwargs.items() if k.startswith("include")}
    rest = {k: v for k, v in kwargs.items() if not k.startswith("include")}
    for extra in ({}, flags, POLARS_DEFAULTS):
        assert_same(
            lambda e=extra: s.hist(**rest, **e),
            lambda e=extra: s.gpu_hist.hist(device="cpu", **rest, **e),
        )


@given(
    st.lists(
        st.integers(-(2**63), 2**63 - 1)
        | st.sampled_from([2**53, 2**53 + 1, -(2**53) - 1, 2**62, 2**63 - 1, -(2**63)]),
        max_size=40,
    ),
    st.integers(1, 40),
    st.sampled_from(FLAGS),
)
def test_adversarial_integers_match_polars(values: list[int], bin_count: int, flags: dict) -> None:
    """Int64 values past 2^53, where Polars compares the float64 each rounds to."""
    frame = frame_of(values, pl.Int64)
    assert_select_same(frame, bin_count=bin_count, **flags)
    if len(values) >= 2:
        edges = sorted({float(v) for v in values})
        if len(edges) >= 2:
            assert_select_same(frame, bins=edges, **flags)


@given(hist_cases(max_size=80))
def test_over_generated_matches_polars(case: tuple[pl.DataFrame, dict[str, Any]]) -> None:
    frame, kwargs = case
    assert_same(
        lambda: frame.select(polars(pl.col("x"), **kwargs).over("g", mapping_strategy="explode")),
        lambda: frame.select(ours(pl.col("x"), **kwargs).over("g", mapping_strategy="explode")),
    )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS is Linux's")
@pytest.mark.parametrize(
    ("call", "error"),
    [
        ("pl.Series([0.5, 1.0]).gpu_hist.hist(bin_count=2**26)", "MemoryError"),
        ("pl.Series([0.5, 1.0]).gpu_hist.hist(bin_count=2**28)", "MemoryError"),
        (
            "pl.DataFrame({'x': [0.5]}).select(pl.col('x').gpu_hist.hist(bin_count=2**28))",
            "ComputeError",  # Polars re-raises a plugin's errors as its own
        ),
    ],
)
def test_bins_beyond_memory_raise_not_abort(call: str, error: str) -> None:
    """Issue 30 item 4: every allocation sized by ``bin_count`` is fallible."""
    from support.memory_limits import PRELUDE

    exception = "MemoryError" if error == "MemoryError" else "pl.exceptions.ComputeError"
    script = textwrap.dedent(PRELUDE) + (
        f"\nlimit(1 << 30)\nexpect({exception}, lambda: {call})\nprint('done')\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, f"exit {run.returncode}\n{run.stdout}\n{run.stderr[-3000:]}"
    assert f"raised {error}" in run.stdout and "done" in run.stdout, run.stdout
