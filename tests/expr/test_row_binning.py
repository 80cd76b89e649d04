"""The row-binning drop-ins against Polars' own calls: every frame equal (``frame.equals`` and
the schema) on hypothesis-drawn columns of every numeric and temporal dtype, with nulls, NaN,
infinities, ties and values on the breakpoints, in several chunks, both closures, every output
shape; then the contexts (select, with_columns, over, group_by().agg(), lazy, streaming) and the
errors, raised where the expression is written with Polars' exception types."""

from __future__ import annotations

import datetime as dt
import math
import warnings
from typing import Any, Callable

import numpy as np
import polars as pl
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import polars_gpu_hist  # noqa: F401  (registers the namespace)
from polars_gpu_hist._expr.row_binning import POLARS_2

pytestmark = [
    pytest.mark.skipif(not POLARS_2, reason="bin_* are Polars 2's"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

INTS = [pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64]
FLOATS = [pl.Float32, pl.Float64]
WIDE = [pl.Int128, pl.UInt128, pl.Decimal(12, 2)]
TEMPORAL = [pl.Date, pl.Datetime("us"), pl.Datetime("ns", "UTC"), pl.Duration("ms"), pl.Time]
NUMERIC = INTS + FLOATS + WIDE


def _int_range(dtype: Any) -> tuple[int, int]:
    name = str(dtype)
    if name.startswith("UInt"):
        return 0, 2 ** int(name[4:]) - 1
    if name.startswith("Int"):
        bits = int(name[3:])
        return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return -(10**9), 10**9


@st.composite
def columns(draw: st.DrawFn, dtypes: list[Any]) -> pl.Series:
    """A column of `dtype` with nulls, extremes, ties and (floats) NaN, infinities and signed
    zeros, in one to three chunks."""
    dtype = draw(st.sampled_from(dtypes))
    n = draw(st.integers(0, 120))
    if dtype in FLOATS:
        special = st.sampled_from([math.nan, math.inf, -math.inf, 0.0, -0.0, 1e300, -1e-300])
        value: st.SearchStrategy[Any] = st.one_of(
            st.floats(-1e6, 1e6, width=32 if dtype == pl.Float32 else 64),
            st.integers(-5, 5).map(float),
            special,
        )
    elif dtype in (pl.Date, pl.Datetime("us"), pl.Datetime("ns", "UTC"), pl.Duration("ms")):
        value = st.integers(-(10**6), 10**6)
    elif dtype == pl.Time:
        value = st.integers(0, 86_399_999_999_999)
    else:
        lo, hi = _int_range(dtype)
        value = st.one_of(st.integers(lo, hi), st.integers(max(lo, -5), min(hi, 5)))
        value = st.one_of(value, st.sampled_from([lo, hi]))
    values = draw(
        st.lists(
            st.one_of(value, st.none()) if draw(st.booleans()) else value, min_size=n, max_size=n
        )
    )
    physical = {
        pl.Date: pl.Int32,
        pl.Time: pl.Int64,
    }.get(dtype)
    if dtype in TEMPORAL:
        s = pl.Series("x", values, dtype=physical or pl.Int64).cast(dtype)
    elif isinstance(dtype, pl.Decimal):
        s = pl.Series("x", values, dtype=pl.Int64).cast(dtype)
    else:
        s = pl.Series("x", values, dtype=dtype, strict=False)
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=2)))
    parts = [s.slice(a, b - a) for a, b in zip([0, *cuts], [*cuts, n])]
    return pl.concat([p for p in parts if p.len() > 0] or [s], rechunk=False)


def _breaks_of(draw: st.DrawFn, s: pl.Series, dtype: Any) -> pl.Series:
    """Non-decreasing breakpoints of `dtype`, partly the column's own values (ties)."""
    valid = s.drop_nulls()
    picks = draw(st.lists(st.integers(0, max(valid.len() - 1, 0)), max_size=6))
    # Gathered in Polars: a date before year 1 has no Python value.
    breaks = valid.gather(picks if valid.len() else []).rename("b")
    if dtype != s.dtype:
        breaks = breaks.cast(dtype, strict=False).drop_nulls()
    extra = draw(st.lists(st.integers(-3, 3), max_size=3))
    if extra and (dtype.is_numeric() or dtype in TEMPORAL):
        more = pl.Series("b", extra, dtype=pl.Int64).cast(dtype, strict=False).drop_nulls()
        breaks = pl.concat([breaks, more])
    return breaks.sort(nulls_last=True)


def same(ours: Callable[[], Any], theirs: Callable[[], Any]) -> None:
    """Both raise, or both give the same frame (values and schema)."""
    try:
        expected = theirs()
    except Exception:
        with pytest.raises(Exception):  # noqa: B017  (Polars raises some errors later)
            ours()
        return
    got = ours()
    assert got.schema == expected.schema, (got.schema, expected.schema)
    assert got.equals(expected), (got, expected)


def _labels(draw: st.DrawFn, bins: int) -> Any:
    return draw(st.sampled_from([False, [f"b{i}" for i in range(bins)]]))


@given(st.data())
def test_bin_intervals_of_breakpoints_equals_polars(data: st.DataObject) -> None:
    s = data.draw(columns(NUMERIC + TEMPORAL))
    same_dtype = s.dtype in TEMPORAL or data.draw(st.booleans())
    dtype = s.dtype if same_dtype else data.draw(st.sampled_from(NUMERIC))
    breaks = _breaks_of(data.draw, s, dtype)
    assume(breaks.len() + 1 <= 12)
    labels = _labels(data.draw, breaks.len() + 1)
    kw = {
        "labels": labels,
        "include_intervals": data.draw(st.booleans()),
        "right_closed": data.draw(st.booleans()),
    }
    df = s.to_frame()
    same(
        lambda: df.select(pl.col("x").gpu_hist.bin_intervals(breaks, **kw)),
        lambda: df.select(pl.col("x").bin_intervals(breaks, **kw)),
    )


@given(st.data())
def test_bin_intervals_of_equal_steps_equals_polars(data: st.DataObject) -> None:
    s = data.draw(columns(NUMERIC))
    k = data.draw(st.integers(1, 9))
    kw = {
        "labels": _labels(data.draw, k),
        "include_intervals": data.draw(st.booleans()),
        "right_closed": data.draw(st.booleans()),
    }
    df = s.to_frame()
    same(
        lambda: df.select(pl.col("x").gpu_hist.bin_intervals(k, **kw)),
        lambda: df.select(pl.col("x").bin_intervals(k, **kw)),
    )


@given(st.data())
def test_bin_quantiles_equals_polars(data: st.DataObject) -> None:
    s = data.draw(columns(NUMERIC))
    if data.draw(st.booleans()):
        q: Any = data.draw(st.integers(1, 9))
        bins = q
    else:
        q = sorted(
            data.draw(st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.5, 0.9, 1.0]), max_size=5))
        )
        bins = len(q) + 1
    kw = {
        "labels": _labels(data.draw, bins),
        "include_intervals": data.draw(st.booleans()),
        "right_closed": data.draw(st.booleans()),
    }
    df = s.to_frame()
    same(
        lambda: df.select(pl.col("x").gpu_hist.bin_quantiles(q, **kw)),
        lambda: df.select(pl.col("x").bin_quantiles(q, **kw)),
    )


@given(st.data())
def test_bin_ranks_equals_polars(data: st.DataObject) -> None:
    s = data.draw(columns(NUMERIC + TEMPORAL))
    if data.draw(st.booleans()):
        r: Any = data.draw(st.integers(1, 9))
        bins = r
    else:
        r = sorted(data.draw(st.lists(st.floats(0, 1), max_size=5)))
        bins = len(r) + 1
    kw = {"labels": _labels(data.draw, bins), "include_intervals": data.draw(st.booleans())}
    df = s.to_frame()
    same(
        lambda: df.select(pl.col("x").gpu_hist.bin_ranks(r, **kw)),
        lambda: df.select(pl.col("x").bin_ranks(r, **kw)),
    )


@given(st.data())
def test_cut_and_qcut_equal_polars(data: st.DataObject) -> None:
    s = data.draw(columns(INTS + FLOATS))
    breaks = sorted(set(data.draw(st.lists(st.floats(-1e6, 1e6), max_size=5))))
    labels = data.draw(st.sampled_from([None, [f"c{i}" for i in range(len(breaks) + 1)]]))
    kw = {
        "labels": labels,
        "left_closed": data.draw(st.booleans()),
        "include_breaks": data.draw(st.booleans()),
    }
    df = s.to_frame()
    same(
        lambda: df.select(pl.col("x").gpu_hist.cut(breaks, **kw)),
        lambda: df.select(pl.col("x").cut(breaks, **kw)),
    )
    q: Any = data.draw(
        st.one_of(st.integers(1, 6), st.lists(st.sampled_from([0.1, 0.3, 0.5, 0.7]), max_size=4))
    )
    nq = (q - 1 if isinstance(q, int) else len(q)) + 1
    qkw = {
        "labels": data.draw(st.sampled_from([None, [f"q{i}" for i in range(nq)]])),
        "left_closed": data.draw(st.booleans()),
        "allow_duplicates": data.draw(st.booleans()),
        "include_breaks": data.draw(st.booleans()),
    }
    if s.dtype in FLOATS and s.is_in([0.0]).any():
        # Polars' sort orders -0.0 and 0.0 as its algorithm happens to (it keeps input order
        # in short columns): a zero breakpoint's sign in the labels follows it. Documented.
        df = df.with_columns(pl.col("x").replace(-0.0, 0.0))
    same(
        lambda: df.select(pl.col("x").gpu_hist.qcut(q, **qkw)),
        lambda: df.select(pl.col("x").qcut(q, **qkw)),
    )


def test_strings_and_categories_bin_as_polars() -> None:
    df = pl.DataFrame(
        {
            "s": ["b", "a", None, "c", "a", "bb"],
            "c": pl.Series(["c", "a", None, "b", "a", "c"], dtype=pl.Categorical),
            "e": pl.Series(["z", "y", None, "x", "y", "z"], dtype=pl.Enum(["z", "y", "x"])),
        }
    )
    for col, breaks in [("s", ["b"]), ("s", [1]), ("c", ["b"]), ("e", ["y"])]:
        for kw in [{"labels": False}, {"labels": False, "include_intervals": True}]:
            c = pl.col(col)
            same(
                lambda c=c, b=breaks, kw=kw: df.select(c.gpu_hist.bin_intervals(b, **kw)),
                lambda c=c, b=breaks, kw=kw: df.select(c.bin_intervals(b, **kw)),
            )
            same(
                lambda c=c, kw=kw: df.select(c.gpu_hist.bin_ranks(2, **kw)),
                lambda c=c, kw=kw: df.select(c.bin_ranks(2, **kw)),
            )


def test_wide_integers_compare_exactly_as_polars() -> None:
    big = 2**53
    df = pl.DataFrame(
        {"i": [big + 1, big + 3, -big - 3, 2**62], "u": [0, 2**64 - 1, 5, big]},
        schema={"i": pl.Int64, "u": pl.UInt64},
    )
    for col, breaks in [("i", [big + 2, big + 4]), ("i", [float(big + 4)]), ("u", [-1, 2**63])]:
        for right in (False, True):
            kw = {"labels": False, "include_intervals": True, "right_closed": right}
            c = pl.col(col)
            same(
                lambda c=c, b=breaks, kw=kw: df.select(c.gpu_hist.bin_intervals(b, **kw)),
                lambda c=c, b=breaks, kw=kw: df.select(c.bin_intervals(b, **kw)),
            )


def test_large_columns_take_the_parallel_search() -> None:
    rng = np.random.default_rng(7)
    x = rng.normal(size=200_000)
    x[::97] = np.nan
    x[::101] = 0.25
    df = pl.DataFrame({"x": x}).with_columns(
        pl.when(pl.int_range(pl.len()) % 13 == 0).then(None).otherwise(pl.col("x")).alias("x")
    )
    edges = [*np.linspace(-3, 3, 101).tolist(), 0.25]
    edges.sort()
    for expr, polars in [
        (
            lambda e: e.gpu_hist.bin_intervals(edges, labels=False),
            lambda e: e.bin_intervals(edges, labels=False),
        ),
        (
            lambda e: e.gpu_hist.bin_intervals(10, labels=False),
            lambda e: e.bin_intervals(10, labels=False),
        ),
        (
            lambda e: e.gpu_hist.bin_quantiles(10, labels=False),
            lambda e: e.bin_quantiles(10, labels=False),
        ),
        (lambda e: e.gpu_hist.bin_ranks(10, labels=False), lambda e: e.bin_ranks(10, labels=False)),
        (
            lambda e: e.gpu_hist.bin_ranks([0.3, 0.3, 0.7], labels=False),
            lambda e: e.bin_ranks([0.3, 0.3, 0.7], labels=False),
        ),
    ]:
        same(lambda e=expr: df.select(e(pl.col("x"))), lambda p=polars: df.select(p(pl.col("x"))))


FRAME = pl.DataFrame(
    {
        "g": [1, 2, 1, 2, 1, 2, 1, 1, 2, 2],
        "x": [0.5, 1.5, None, 2.5, -1.0, 3.0, 3.0, float("nan"), 0.0, 9.0],
    }
)


@pytest.mark.parametrize(
    "ours, theirs",
    [
        (
            lambda: pl.col("x").gpu_hist.bin_intervals([0.0, 2.0], labels=["lo", "mid", "hi"]),
            lambda: pl.col("x").bin_intervals([0.0, 2.0], labels=["lo", "mid", "hi"]),
        ),
        (
            lambda: pl.col("x").gpu_hist.bin_intervals(3, labels=False, include_intervals=True),
            lambda: pl.col("x").bin_intervals(3, labels=False, include_intervals=True),
        ),
        (
            lambda: pl.col("x").gpu_hist.bin_quantiles(3, labels=False),
            lambda: pl.col("x").bin_quantiles(3, labels=False),
        ),
        (
            lambda: pl.col("x").gpu_hist.bin_ranks(3, labels=False, include_intervals=True),
            lambda: pl.col("x").bin_ranks(3, labels=False, include_intervals=True),
        ),
        (lambda: pl.col("x").gpu_hist.cut([1.0]), lambda: pl.col("x").cut([1.0])),
    ],
)
def test_every_context_equals_polars(ours: Any, theirs: Any) -> None:
    df, lf = FRAME, FRAME.lazy()
    contexts: list[Callable[[Any], Any]] = [
        lambda e: df.select(e),
        lambda e: df.with_columns(b=e),
        lambda e: df.with_columns(b=e.over("g")),
        lambda e: df.group_by("g", maintain_order=True).agg(e),
        lambda e: lf.select(e).collect(),
        lambda e: lf.with_columns(b=e.over("g")).collect(engine="streaming"),
        lambda e: lf.group_by("g", maintain_order=True).agg(e).collect(engine="streaming"),
    ]
    for context in contexts:
        same(lambda c=context: c(ours()), lambda c=context: c(theirs()))


def _streaming_graph(lf: pl.LazyFrame) -> str:
    graph = lf.show_graph(engine="streaming", plan_stage="physical", raw_output=True, show=False)
    assert isinstance(graph, str)
    return graph


def test_explicit_breakpoints_stream_without_materializing() -> None:
    """Elementwise as Polars' own: the streaming plan bins in its `with-columns` node, with no
    in-memory fallback node; data-dependent breakpoints need the whole column, as Polars
    says of its own."""
    lf = pl.LazyFrame({"x": [1.0, 2.0, 3.0]})
    for expr in (
        pl.col("x").gpu_hist.bin_intervals([1.5, 2.5], labels=False),
        pl.col("x").gpu_hist.bin_intervals([1.5], labels=["a", "b"], include_intervals=True),
        pl.col("x").gpu_hist.cut([1.5]),
    ):
        graph = _streaming_graph(lf.with_columns(b=expr))
        assert "with-columns" in graph and "row_bins" in graph
        assert "columnar-function" not in graph
    graph = _streaming_graph(lf.with_columns(b=pl.col("x").gpu_hist.bin_ranks(2, labels=False)))
    assert "columnar-function" in graph


def test_errors_are_raised_where_written_as_polars_types() -> None:
    c = pl.col("x").gpu_hist
    with pytest.raises(pl.exceptions.ComputeError, match="non-decreasing"):
        c.bin_intervals([2.0, 1.0], labels=False)
    with pytest.raises(pl.exceptions.ComputeError, match="non-decreasing"):
        c.bin_intervals([math.nan, 1.0], labels=False)
    with pytest.raises(pl.exceptions.ComputeError, match="nulls"):
        c.bin_intervals([1.0, None], labels=False)
    with pytest.raises(pl.exceptions.ShapeError, match="2 bins but got 1 labels"):
        c.bin_intervals([1.0], labels=["a"])
    with pytest.raises(pl.exceptions.ComputeError, match="unique"):
        c.bin_intervals([1.0], labels=["a", "a"])
    with pytest.raises(pl.exceptions.ComputeError, match="at least one bin"):
        c.bin_intervals(0, labels=False)
    with pytest.raises(OverflowError):
        c.bin_intervals(-1, labels=False)
    with pytest.raises(TypeError):
        c.bin_intervals([1.0], labels=True)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        c.bin_intervals([1.0], labels=False, right_closed=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="device"):
        c.bin_intervals([1.0], labels=False, device="tpu")  # type: ignore[arg-type]
    for call in (
        lambda: c.bin_intervals([1.0], labels=False, device="gpu"),
        lambda: c.bin_quantiles(2, labels=False, device="gpu"),
        lambda: c.bin_ranks(2, labels=False, device="gpu"),
        lambda: c.cut([1.0], device="gpu"),
        lambda: c.qcut(2, device="gpu"),
    ):
        with pytest.raises(NotImplementedError, match="no GPU kernel yet"):
            call()
    with pytest.raises(pl.exceptions.ComputeError, match=r"between 0\.0 and 1\.0"):
        c.bin_quantiles([1.5], labels=False)
    with pytest.raises(pl.exceptions.ComputeError, match="non-decreasing"):
        c.bin_ranks([0.5, 0.2], labels=False)
    with pytest.raises(TypeError):
        c.bin_ranks(0.5, labels=False)  # type: ignore[arg-type]
    with pytest.raises(pl.exceptions.DuplicateError):
        c.cut([1.0, 1.0])
    with pytest.raises(pl.exceptions.ComputeError, match="inf"):
        c.cut([1.0, math.inf])
    with pytest.raises(pl.exceptions.ShapeError):
        c.cut([1.0], labels=["a"])
    with pytest.raises(pl.exceptions.ComputeError, match="NaN"):
        c.qcut([math.nan])
    with pytest.raises(pl.exceptions.ShapeError):
        c.qcut([0.5], labels=["a"])
    # Found when the query runs (a plugin's errors are ComputeError there).
    df = pl.DataFrame({"x": [dt.date(2020, 1, 1)]})
    with pytest.raises(pl.exceptions.ComputeError, match="numeric"):
        df.select(c.bin_intervals(2, labels=False))
    with pytest.raises(pl.exceptions.ComputeError, match=r"(Duplicate|not unique)"):
        pl.DataFrame({"x": [1.0, 1.0, 1.0]}).select(c.qcut([0.2, 0.8]))


def test_cut_and_qcut_are_deprecated_as_polars_2s() -> None:
    with pytest.warns(DeprecationWarning, match="bin_intervals"):
        pl.col("x").gpu_hist.cut([1.0])
    with pytest.warns(DeprecationWarning, match="bin_quantiles"):
        pl.col("x").gpu_hist.qcut(2)


def test_series_methods_equal_polars() -> None:
    s = pl.Series("v", [3.0, None, 1.0, 2.0, math.nan])
    assert s.gpu_hist.bin_intervals([1.5], labels=["a", "b"]).equals(
        s.bin_intervals([1.5], labels=["a", "b"])
    )
    assert s.gpu_hist.bin_ranks(2, labels=False).equals(s.bin_ranks(2, labels=False))
    assert s.gpu_hist.bin_quantiles(2, labels=False).equals(s.bin_quantiles(2, labels=False))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert s.gpu_hist.cut([1.5]).equals(s.cut([1.5]))
        assert s.gpu_hist.qcut(2).to_list() == s.qcut(2).to_list()
