"""The lazy namespace (issue 47 item 2): ``lf.gpu_hist.histogram(...)``, ``lf.gpu_hist.hist(...)``
and ``df.gpu_hist`` give the frame the expression gives, computed in Polars' streaming engine
through the scan's pipeline (the native sink), in bounded memory."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polars_gpu_hist as gh


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    rng = np.random.default_rng(47)
    n = 30_000
    x = rng.normal(0, 1, n)
    x[::53] = np.nan
    days = pl.date_range(dt.date(2020, 1, 1), dt.date(2020, 12, 31), eager=True)
    return pl.DataFrame(
        {
            "x": x,
            "f": rng.uniform(-1, 1, n).astype(np.float32),
            "i": rng.integers(-500, 500, n),
            "u8": rng.integers(0, 256, n).astype(np.uint8),
            "w": rng.integers(0, 5, n).astype(np.float64),  # integer weights: sums are exact
            "k": rng.choice(["a", "b", "c", None], n),
            "j": rng.integers(0, 3, n),
            "d": days.sample(n, with_replacement=True, seed=3),
        }
    ).with_columns(
        pl.when(pl.int_range(pl.len()) % 17 == 0).then(None).otherwise("x").alias("x"),
        pl.when(pl.int_range(pl.len()) % 29 == 0).then(None).otherwise("w").alias("w"),
    )


def expression(lf: pl.LazyFrame, column: str, **kwargs) -> pl.DataFrame:
    return lf.select(pl.col(column).gpu_hist.histogram(**kwargs)).collect()


CASES = [
    dict(bins=10),
    dict(bins=16, range=(-2, 2)),
    dict(bins=[-3, -1, 0, 0.5, 3]),
    dict(bins=10, weights="w"),
    dict(bins=10, density=True),
    dict(bins=8, range=(-1, 1), flow=True),
    dict(bins=8, range=(-1, 1), flow=True, weights="w"),
    dict(bins=12, closed="right"),
    dict(bins="sturges"),
    dict(bins="fd"),
    dict(bins="auto"),
    dict(bins=5, by="k"),
    dict(bins=5, range=(-1, 1), by=["k", "j"], weights="w"),
    dict(bins=5, by="k", density=True),
    dict(bins=4, range=(-1, 1), by="j", flow=True),
]


@pytest.mark.parametrize("kwargs", CASES, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()))
@pytest.mark.parametrize("column", ["x", "f", "i"])
def test_the_lazy_namespace_gives_the_expressions_frame(
    frame: pl.DataFrame, column: str, kwargs: dict
) -> None:
    lf = frame.lazy()
    if column == "i" and kwargs.get("range") == (-1, 1) and not kwargs.get("flow"):
        kwargs = {**kwargs, "range": (-100, 100)}
    got = lf.gpu_hist.histogram(column, **kwargs, device="cpu")
    want = expression(lf, column, **kwargs, device="cpu")
    assert got.schema == want.schema
    assert got.equals(want), (got, want)
    # The DataFrame namespace gives the same.
    assert frame.gpu_hist.histogram(column, **kwargs, device="cpu").equals(want)


def test_float_weights_sum_as_the_expression_up_to_the_order_of_additions(
    frame: pl.DataFrame,
) -> None:
    lf = frame.lazy().with_columns(w=pl.col("w") * 0.1 + pl.col("f").abs())
    got = lf.gpu_hist.histogram("x", bins=9, weights="w", device="cpu").unnest("x")
    want = expression(lf, "x", bins=9, weights="w", device="cpu").unnest("x")
    assert got.drop("count").equals(want.drop("count"))
    np.testing.assert_allclose(got["count"].to_numpy(), want["count"].to_numpy(), rtol=1e-12)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(bins=4),
        dict(bins=[3, 5], range=[(-2, 2), (-1, 1)]),
        dict(bins=3, range=[(-1, 1), (-1, 1)], flow=True),
        dict(bins=4, weights="w"),
        dict(bins=[[-1, 0, 1], 4], range=[None, (-1, 1)]),
    ],
)
def test_several_columns_give_histogramdds_frame(frame: pl.DataFrame, kwargs: dict) -> None:
    lf = frame.lazy()
    got = lf.gpu_hist.histogram(["x", "f"], **kwargs, device="cpu")
    want = lf.select(gh.histogramdd("x", "f", **kwargs, device="cpu")).collect()
    assert got.equals(want), (got, want)


def test_temporal_and_narrow_integer_columns(frame: pl.DataFrame) -> None:
    lf = frame.lazy()
    for column, kwargs in [
        ("d", dict(bins=7)),
        ("d", dict(bins="integer")),
        ("d", dict(bins="1mo")),
        ("u8", dict(bins=256, range=(0, 256))),
        ("u8", dict(bins="integer")),
        ("d", dict(bins=5, flow=True, range=(dt.date(2020, 3, 1), dt.date(2020, 9, 1)))),
    ]:
        got = lf.gpu_hist.histogram(column, **kwargs, device="cpu")
        want = expression(lf, column, **kwargs, device="cpu")
        assert got.equals(want), (column, kwargs, got, want)


HIST_CASES = [
    dict(),
    dict(bin_count=7),
    dict(bin_count=7, include_category=True, include_breakpoint=True),
    dict(bins=[-1.0, 0.0, 0.5, 2.0], include_breakpoint=True),
    dict(bins=[-1.0, 0.0, 0.5, 2.0], include_category=True),
    dict(bins=[1.0]),
]


@pytest.mark.parametrize("kwargs", HIST_CASES)
@pytest.mark.parametrize("column", ["x", "f", "i"])
def test_hist_gives_the_expressions_frame(frame: pl.DataFrame, column: str, kwargs: dict) -> None:
    lf = frame.lazy()
    got = lf.gpu_hist.hist(column, **kwargs, device="cpu")
    want = lf.select(pl.col(column).gpu_hist.hist(**kwargs, device="cpu")).collect()
    assert got.equals(want), (got, want)


@pytest.mark.parametrize(
    "values",
    [[], [None, None], [2.5], [3.0, 3.0, 3.0], [float("nan"), 1.0], [float("nan")]],
    ids=["empty", "nulls", "one", "equal", "nan", "only-nan"],
)
def test_hist_of_degenerate_columns(values: list) -> None:
    lf = pl.LazyFrame({"x": pl.Series(values, dtype=pl.Float64)})
    kwargs = dict(bin_count=3, include_category=True, include_breakpoint=True)
    got = lf.gpu_hist.hist("x", **kwargs)
    want = lf.select(pl.col("x").gpu_hist.hist(**kwargs)).collect()
    assert got.equals(want, null_equal=True), (got, want)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.one_of(st.none(), st.floats(-1e6, 1e6, width=32)), min_size=0, max_size=300),
    st.integers(1, 40),
    st.sampled_from(["left", "right"]),
)
def test_any_column_equals_the_expression(values: list, bins: int, closed: str) -> None:
    lf = pl.LazyFrame({"x": pl.Series(values, dtype=pl.Float32)})
    try:
        want = expression(lf, "x", bins=bins, closed=closed, device="cpu")
    except pl.exceptions.ComputeError as e:
        # Bins the data's range cannot hold: refused alike, as a ValueError here (an argument
        # that does not fit the data, as numpy and histogram_scan raise it).
        reason = str(e).removeprefix("the plugin failed with message: ").split("\n")[0]
        with pytest.raises(ValueError, match=re.escape(reason)):
            lf.gpu_hist.histogram("x", bins=bins, closed=closed, device="cpu")
        return
    got = lf.gpu_hist.histogram("x", bins=bins, closed=closed, device="cpu")
    assert got.equals(want), (got, want)


def test_a_file_is_read_in_the_streaming_engine(tmp_path: Path, frame: pl.DataFrame) -> None:
    path = tmp_path / "d.parquet"
    frame.write_parquet(path, row_group_size=4096)
    lf = pl.scan_parquet(path)
    for kwargs in [dict(bins=20), dict(bins=6, by="k"), dict(bins="rice")]:
        got = lf.gpu_hist.histogram("x", **kwargs, device="cpu")
        assert got.equals(expression(lf, "x", **kwargs, device="cpu"))


def test_errors_name_the_argument(frame: pl.DataFrame) -> None:
    lf = frame.lazy()
    with pytest.raises(pl.exceptions.ColumnNotFoundError, match="no column 'nope'"):
        lf.gpu_hist.histogram("nope", bins=4)
    with pytest.raises(TypeError, match="dtype String"):
        lf.gpu_hist.histogram("k", bins=4)
    with pytest.raises(ValueError, match="`density` cannot be combined with `flow`"):
        lf.gpu_hist.histogram("x", bins=4, range=(0, 1), density=True, flow=True)
    with pytest.raises(TypeError, match="`column` must be"):
        lf.gpu_hist.histogram(3, bins=4)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`closed`"):
        lf.gpu_hist.histogram("x", bins=4, closed="both")  # type: ignore[arg-type]


def test_explain_of_a_lazy_query_names_the_lazy_namespace(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    pl.DataFrame({"x": np.arange(5000.0), "i": np.arange(5000)}).write_parquet(path)
    lf = pl.scan_parquet(path)
    text = gh.explain(lf.select(pl.col("x").gpu_hist.histogram(bins=10)))
    assert "whole input column at once" in text and "lf.gpu_hist.histogram" in text
    assert "no gpu_hist expression" in gh.explain(lf.select(pl.col("x").sum()))
    plan = gh.explain(lf, 10, column="x", device="cpu")
    assert "pass 1   extremes" in plan and "streaming engine" in plan, plan
    assert "by 'i'" not in plan
    grouped = gh.explain(lf, 10, column="x", range=(0, 1), by="i", device="cpu")
    assert "groups by 'i'" in grouped and "batches in row order" in grouped, grouped


GATHERED = """
import warnings
import numpy as np
import polars as pl
import polars_gpu_hist  # noqa: F401

half = pl.Series("x", np.zeros(1 << 26))
x = pl.concat([half, half], rechunk=False)  # 1 GiB of float64 in two pieces
lf = pl.DataFrame({"x": x}).lazy()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for _ in range(2):
        lf.select(pl.col("x").gpu_hist.histogram(bins=4, range=(0, 1))).collect()
    small = pl.concat([half.head(10), half.head(10)], rechunk=False).to_frame()
    small.select(pl.col("x").gpu_hist.histogram(bins=4, range=(0, 1)))
texts = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
print(len(texts))
print(texts[0] if texts else "")
"""


def test_a_large_gathered_column_warns_once() -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", GATHERED], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    count, text = done.stdout.splitlines()[:2]
    assert count == "1", done.stdout
    assert "lf.gpu_hist.histogram" in text and "into memory" in text, text
