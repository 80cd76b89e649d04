"""The expression in Polars' contexts, dtypes of the result, temporal columns and bad input."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh


@pytest.fixture
def frame() -> pl.DataFrame:
    rng = np.random.default_rng(1)
    n = 10_000
    return pl.DataFrame(
        {
            "x": rng.normal(size=n),
            "w": rng.integers(0, 5, n).astype(np.float64),
            "g": rng.integers(0, 7, n),
            "s": rng.integers(0, 3, n).astype(str),
        }
    )


def test_result_schema(frame: pl.DataFrame) -> None:
    out = frame.select(pl.col("x").gpu_hist.histogram(bins=8))
    assert out.schema["x"] == pl.Struct(
        {"bin_start": pl.Float64, "bin_end": pl.Float64, "count": pl.UInt64}
    )
    assert out.height == 8
    weighted = frame.select(pl.col("x").gpu_hist.histogram(bins=8, weights="w"))
    assert weighted.schema["x"].to_schema()["count"] == pl.Float64
    dens = frame.select(pl.col("x").gpu_hist.histogram(bins=8, density=True))
    assert dens.schema["x"].to_schema()["count"] == pl.Float64


def test_lazy_equals_eager_and_schema_is_known(frame: pl.DataFrame) -> None:
    expr = pl.col("x").gpu_hist.histogram(bins=[-1, 0, 0.5, 2], weights=pl.col("w") * 2)
    lazy = frame.lazy().select(expr)
    assert lazy.collect_schema()["x"] == frame.select(expr).schema["x"]
    assert lazy.collect().equals(frame.select(expr))


def test_several_histograms_in_one_select(frame: pl.DataFrame) -> None:
    out = frame.select(
        pl.col("x").gpu_hist.histogram(bins=4).alias("a"),
        pl.col("w").gpu_hist.histogram(bins=4).alias("b"),
    )
    assert out.columns == ["a", "b"]
    expected, _ = np.histogram(frame["w"].to_numpy(), bins=4)
    assert out.unnest("b")["count"].to_list() == expected.tolist()


def test_group_by_gives_one_histogram_per_group(frame: pl.DataFrame) -> None:
    edges = [-3.0, -1.0, 0.0, 1.0, 3.0]
    out = frame.group_by("g").agg(pl.col("x").gpu_hist.histogram(bins=edges, weights="w")).sort("g")
    assert out.schema["x"] == pl.List(
        pl.Struct({"bin_start": pl.Float64, "bin_end": pl.Float64, "count": pl.Float64})
    )
    for g, hist in zip(out["g"], out["x"]):
        part = frame.filter(pl.col("g") == g)
        expected, _ = np.histogram(part["x"].to_numpy(), bins=edges, weights=part["w"].to_numpy())
        got = [row["count"] for row in hist]
        np.testing.assert_array_equal(got, expected)


def test_remembered_arguments_never_mix_up_calls() -> None:
    """The plugin remembers the last arguments and bin proofs of each thread: calls whose
    arguments differ in one bit (float32 against float64 ranges, a range a step apart, closed,
    more option sets than it remembers) each get their own answer, in any order."""
    rng = np.random.default_rng(4)
    x = rng.random(2_000)
    frame = pl.DataFrame({"x": x, "x32": x.astype(np.float32)})
    lo = 0.1
    cases = [
        (bins, rng_, closed)
        for bins in (7, 8, 64)
        for rng_ in ((0.0, 1.0), (lo, 0.9), (math.nextafter(lo, 1.0), 0.9), (np.float32(0.1), 0.9))
        for closed in ("left", "right")
    ]

    def run(bins: int, rng_: tuple, closed: str, column: str) -> pl.DataFrame:
        return frame.select(
            pl.col(column).gpu_hist.histogram(bins=bins, range=rng_, closed=closed, device="cpu")
        ).unnest(column)

    keys = [(*case, column) for case in cases for column in ("x", "x32")]
    first = {key: run(*key) for key in keys}
    for key in reversed(keys):
        assert run(*key).equals(first[key]), key
    for (bins, rng_, closed, column), got in first.items():
        if closed == "left":
            expected, edges = np.histogram(frame[column].to_numpy(), bins=bins, range=rng_)
            assert got["count"].to_list() == expected.tolist(), (bins, rng_, column)
            assert got["bin_start"].to_list() == edges[:-1].astype(float).tolist()
    # Ranges a step apart make different edges (and so were not mixed up above).
    assert not first[(8, (lo, 0.9), "left", "x")].equals(
        first[(8, (math.nextafter(lo, 1.0), 0.9), "left", "x")]
    )


def test_group_by_equal_bins_take_each_groups_range(frame: pl.DataFrame) -> None:
    out = frame.group_by("s").agg(pl.col("x").gpu_hist.histogram(bins=5)).sort("s")
    for s, hist in zip(out["s"], out["x"]):
        part = frame.filter(pl.col("s") == s)["x"].to_numpy()
        expected, edges = np.histogram(part, bins=5)
        assert [row["count"] for row in hist] == expected.tolist()
        assert [row["bin_start"] for row in hist] == edges[:-1].tolist()


def test_numpy_scalars_and_arrays_as_arguments(frame: pl.DataFrame) -> None:
    a = frame.select(
        pl.col("x").gpu_hist.histogram(
            bins=np.int64(6), range=(np.float32(-1), np.float64(1)), density=np.bool_(True)
        )
    )
    b = frame.select(pl.col("x").gpu_hist.histogram(bins=6, range=(-1.0, 1.0), density=True))
    assert a.equals(b)
    edges = np.linspace(-1, 1, 7)
    c = frame.select(pl.col("x").gpu_hist.histogram(bins=edges))
    d = frame.select(pl.col("x").gpu_hist.histogram(bins=edges.tolist()))
    assert c.equals(d)


@pytest.mark.parametrize(
    ("dtype", "values"),
    [
        (pl.Date, [dt.date(2020, 1, 1), dt.date(2020, 1, 11), dt.date(2020, 3, 1), None]),
        (
            pl.Datetime("us"),
            [dt.datetime(2021, 5, 1, 12), dt.datetime(2021, 5, 2), dt.datetime(2021, 5, 9)],
        ),
        (pl.Duration("ms"), [dt.timedelta(seconds=1), dt.timedelta(hours=2), None]),
    ],
)
def test_temporal_columns_bin_physical_values(dtype: pl.DataType, values: list) -> None:
    s = pl.Series("t", values, dtype=dtype)
    out = gh.histogram(s, 4)
    assert out.schema["bin_start"] == dtype
    assert out.schema["bin_end"] == dtype
    expected, edges = np.histogram(s.drop_nulls().to_physical().to_numpy(), bins=4)
    assert out["count"].to_list() == expected.tolist()
    starts = out["bin_start"].to_physical().to_numpy()
    np.testing.assert_array_equal(starts, edges[:-1].astype(np.int64))


def test_histogram_function_accepts_arrays_and_series() -> None:
    x = np.arange(10, dtype=np.float32)
    a = gh.histogram(x, 5)
    b = gh.histogram(pl.Series(x), 5)
    assert a.equals(b)
    assert a.columns == ["bin_start", "bin_end", "count"]


# ---- bad input: a clear error naming the problem, never a panic -------------------------------


def _select(frame: pl.DataFrame, expr: pl.Expr) -> pl.DataFrame:
    return frame.select(expr)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"bins": 0}, "positive integer"),
        ({"bins": -3}, "positive integer"),
        ({"bins": 2**40}, "more than"),
        ({"bins": [0.0, 1.0, 1.0]}, "increase strictly"),
        ({"bins": [2.0, 1.0]}, "increase strictly"),
        ({"bins": [0.0, float("nan")]}, "NaN"),
        ({"bins": [float("inf"), 0.0]}, "increase strictly"),
        ({"bins": [1.0]}, "at least two edges"),
        ({"bins": 3, "range": (1.0, 0.0)}, "min <= max"),
        ({"bins": 3, "range": (0.0, float("nan"))}, "finite"),
        ({"bins": 3, "range": (float("-inf"), 0.0)}, "finite"),
        ({"bins": [0.0, 1.0], "range": (0.0, 1.0)}, "cannot be combined"),
        ({"bins": 3, "closed": "both"}, "closed|unknown variant"),
        ({"bins": 3, "device": "tpu"}, "device|unknown variant"),
    ],
)
def test_bad_arguments(frame: pl.DataFrame, kwargs: dict, message: str) -> None:
    with pytest.raises((pl.exceptions.PolarsError, ValueError), match=message):
        frame.select(pl.col("x").gpu_hist.histogram(**kwargs))


@pytest.mark.parametrize(
    ("bins", "error"),
    [("10", TypeError), (True, TypeError), (None, TypeError), (1.5, TypeError)],
)
def test_bad_argument_types(bins: object, error: type) -> None:
    with pytest.raises(error):
        pl.col("x").gpu_hist.histogram(bins=bins)  # type: ignore[arg-type]


def test_non_numeric_dtype_is_named(frame: pl.DataFrame) -> None:
    with pytest.raises(pl.exceptions.PolarsError, match="dtype String"):
        frame.select(pl.col("s").gpu_hist.histogram(bins=3))
    with pytest.raises(pl.exceptions.PolarsError, match="dtype Boolean"):
        pl.DataFrame({"b": [True, False]}).select(pl.col("b").gpu_hist.histogram())


def test_bad_weights(frame: pl.DataFrame) -> None:
    with pytest.raises(pl.exceptions.PolarsError, match=r"weights.*numeric"):
        frame.select(pl.col("x").gpu_hist.histogram(weights="s"))
    with pytest.raises(pl.exceptions.PolarsError, match="same length"):
        frame.select(pl.col("x").gpu_hist.histogram(weights=pl.col("w").head(3)))


def test_infinite_data_needs_a_range() -> None:
    s = pl.Series("x", [1.0, float("inf")])
    with pytest.raises(pl.exceptions.PolarsError, match="not finite"):
        gh.histogram(s, 3)
    assert gh.histogram(s, 2, range=(0, 2))["count"].to_list() == [0, 1]


def test_errors_leave_the_plugin_usable(frame: pl.DataFrame) -> None:
    for _ in range(3):
        with pytest.raises(pl.exceptions.PolarsError):
            frame.select(pl.col("x").cast(pl.String).gpu_hist.histogram(bins=2))
        # Bad edges raise where the expression is written, before the plugin runs.
        with pytest.raises(ValueError, match="increase strictly"):
            pl.col("x").gpu_hist.histogram(bins=[1.0, 0.0])
        assert frame.select(pl.col("x").gpu_hist.histogram(bins=2)).height == 2
