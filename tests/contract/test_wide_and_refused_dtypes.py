"""Wide numbers (Decimal, Int128, UInt128, Float16) bin as numpy bins the same numbers; every
other dtype is refused with its name, never a panic; host arrays of any shape as numpy takes
them."""

from __future__ import annotations

import datetime as dt
import decimal

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh

BINNED = {
    "Decimal": pl.Series(
        "x", [decimal.Decimal("1.25"), None, decimal.Decimal("-3.5")], dtype=pl.Decimal(10, 2)
    ),
    "Int128": pl.Series("x", [1, 2**70, -(2**65), None], dtype=pl.Int128),
    "UInt128": pl.Series("x", [1, 2**100, 7], dtype=pl.UInt128),
}


REFUSED = {
    "Categorical": pl.Series("x", ["a", "b"], dtype=pl.Categorical),
    "Enum": pl.Series("x", ["a", "b"], dtype=pl.Enum(["a", "b"])),
    "String": pl.Series("x", ["a", "b"]),
    "Binary": pl.Series("x", [b"a", b"b"]),
    "List": pl.Series("x", [[1.0], [2.0]]),
    "Array": pl.Series("x", [[1.0, 2.0], [3.0, 4.0]], dtype=pl.Array(pl.Float64, 2)),
    "Struct": pl.Series("x", [{"a": 1}, {"a": 2}]),
    "Null": pl.Series("x", [None, None]),
    "Boolean": pl.Series("x", [True, False]),
    "Time": pl.Series("x", [dt.time(1), dt.time(2)]),
}


@pytest.mark.parametrize("name", sorted(BINNED))
def test_wide_numbers_bin_as_numpy_bins_the_same_numbers_as_float64(name: str) -> None:
    s = BINNED[name]
    as_f64 = s.cast(pl.Float64).drop_nulls().to_numpy()
    expected, edges = np.histogram(as_f64, 4)
    out = gh.histogram(s, 4, device="cpu")
    assert out["count"].to_list() == expected.tolist()
    assert out["bin_start"].to_list() == edges[:-1].tolist()
    frame = pl.DataFrame({"x": s})
    via_expr = frame.select(pl.col("x").gpu_hist.histogram(4, device="cpu")).unnest("x")
    assert via_expr["count"].to_list() == expected.tolist()


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_every_other_dtype_is_refused_with_its_name(name: str) -> None:
    s = REFUSED[name]
    frame = pl.DataFrame({"x": s})
    with pytest.raises((pl.exceptions.PolarsError, TypeError)) as e:
        frame.select(pl.col("x").gpu_hist.histogram(4, range=(0, 1), device="cpu"))
    assert name.lower() in str(e.value).lower() or str(s.dtype).lower() in str(e.value).lower()
    with pytest.raises((TypeError, ValueError)) as e:
        gh.Histogram(4, range=(0, 1)).fill(s)
    assert "panic" not in str(e.value).lower()


def test_decimal_weights_are_numbers() -> None:
    w = pl.Series("w", [decimal.Decimal("0.5"), decimal.Decimal("2.25")], dtype=pl.Decimal(6, 2))
    out = gh.histogram(pl.Series([0.1, 0.9]), 2, range=(0, 1), weights=w, device="cpu")
    assert out["count"].to_list() == [0.5, 2.25]


def test_float16_bins_as_numpy_bins_float16() -> None:
    x = np.array([0.1, 0.2, 0.30004, 0.5, 0.7, 1.0], dtype=np.float16)
    for bins, range in [(5, None), (7, (0.0, 1.0)), (3, (0.1, 0.7))]:
        expected, edges = np.histogram(x, bins, range=range)
        out = gh.histogram(pl.Series("x", x), bins, range=range, device="cpu")
        assert out["count"].to_list() == expected.tolist(), (bins, range)
        assert out["bin_start"].to_list() == edges[:-1].astype(np.float64).tolist()


def test_multidimensional_host_arrays_are_flattened_as_numpy_does() -> None:
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    expected, _ = np.histogram(a, 5)
    assert gh.histogram(a, 5, device="cpu")["count"].to_list() == expected.tolist()


def test_an_n_by_d_host_array_gives_one_dimension_per_column() -> None:
    a = np.random.default_rng(1).random((500, 3))
    expected, _ = np.histogramdd(a, bins=4)
    out = gh.histogramdd(a, bins=4, device="cpu")
    assert out["count"].to_list() == expected.ravel().astype(int).tolist()


def test_panics_never_reach_python_from_the_accumulator() -> None:
    h = gh.Histogram(4, range=(0, 1))
    for s in REFUSED.values():
        try:
            h.fill(s)
        except BaseException as e:
            assert isinstance(e, Exception), type(e)
            assert "panicked" not in str(e)
