"""What a call raises is mapped once, where it returns to Python (src/boundary.rs), to what the
API the user called promises (docs/semantics.md, "Bad arguments, memory, panics and Ctrl-C"):
numpy's types in the numpy drop-in, Polars' `ComputeError` in the package's Polars API (the
Series namespace, `histogram`, `histogramdd`, `hist`), as an expression in a query raises it;
`MemoryError` and `KeyboardInterrupt` everywhere. Arguments that cannot be used raise where they
are written."""

from __future__ import annotations

import warnings
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh
import polars_gpu_hist.numpy as ghnp
from polars_gpu_hist._expr import polars_hist


def quiet(call: Any) -> Any:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return call()


@pytest.mark.parametrize(
    ("call", "numpy_call", "error"),
    [
        # An estimator over a span past the float maximum: numpy's ValueError.
        (
            lambda: ghnp.histogram(np.array([-1.7e308, 1.7e308]), "fd"),
            lambda: np.histogram(np.array([-1.7e308, 1.7e308]), "fd"),
            ValueError,
        ),
        # An estimate of infinitely many bins (a float16 span that overflows): OverflowError.
        (
            lambda: ghnp.histogram(np.array([-6e4, -1, 0, 1, 6e4], np.float16), "fd"),
            lambda: np.histogram(np.array([-6e4, -1, 0, 1, 6e4], np.float16), "fd"),
            OverflowError,
        ),
        # String data: numpy's TypeError (its UFuncTypeError).
        (
            lambda: ghnp.histogram(np.array(["a", "b"]), 3),
            lambda: np.histogram(np.array(["a", "b"]), 3),
            TypeError,
        ),
        # Text weights: TypeError, in histogram and histogramdd.
        (
            lambda: ghnp.histogram(np.arange(3.0), 3, weights=np.array(["a", "b", "c"])),
            lambda: np.histogram(np.arange(3.0), 3, weights=np.array(["a", "b", "c"])),
            TypeError,
        ),
        (
            lambda: ghnp.histogramdd(np.ones((4, 2)), weights=np.array(["a"] * 4)),
            lambda: np.histogramdd(np.ones((4, 2)), weights=np.array(["a"] * 4)),
            TypeError,
        ),
        # A sample of no dimensions: ValueError (numpy's, where this raised IndexError).
        (
            lambda: ghnp.histogramdd(np.ones((4, 0)), 3),
            lambda: np.histogramdd(np.ones((4, 0)), 3),
            ValueError,
        ),
    ],
)
def test_the_numpy_drop_in_raises_numpys_types(call: Any, numpy_call: Any, error: type) -> None:
    with pytest.raises(error):
        quiet(numpy_call)
    with pytest.raises(error) as raised:
        quiet(call)
    assert not isinstance(raised.value, pl.exceptions.PolarsError)


def test_an_estimate_past_the_limit_is_a_value_error_before_any_allocation() -> None:
    # numpy tries to allocate 4.6e16 bins (MemoryError); the drop-in refuses with the fix.
    x = np.r_[np.zeros(1000), 1e12, np.linspace(0, 1e-3, 10**5)]
    with pytest.raises(ValueError, match="more than the 268435456"):
        ghnp.histogram(x, "fd")


def test_histogram2d_of_two_lengths_says_numpys_message() -> None:
    with pytest.raises(ValueError, match=r"^x and y must have the same length\.$"):
        ghnp.histogram2d(np.arange(5.0), np.arange(3.0))


@pytest.mark.parametrize(
    "call",
    [
        lambda: pl.Series(["a"]).gpu_hist.histogram(3),
        lambda: gh.histogram(pl.Series(["a", "b"]), 3),
        lambda: gh.histogram(pl.Series([0.0, 1e-300]), "stone", range=(0, 1e300)),
        lambda: gh.histogramdd(pl.Series("a", ["a"]), pl.Series("b", [1.0]), bins=2),
        lambda: pl.Series([1, 2], dtype=pl.Date).gpu_hist.hist(bin_count=2),
    ],
)
def test_the_polars_api_raises_computeerror_as_its_expression_does(call: Any) -> None:
    with pytest.raises(pl.exceptions.ComputeError):
        quiet(call)


def test_the_series_namespace_and_the_expression_raise_the_same_type() -> None:
    s = pl.Series("x", ["a"])
    with pytest.raises(pl.exceptions.ComputeError) as direct:
        s.gpu_hist.histogram(3)
    with pytest.raises(pl.exceptions.ComputeError) as query:
        s.to_frame().select(pl.col("x").gpu_hist.histogram(3))
    assert str(direct.value) in str(query.value)


@pytest.mark.parametrize(
    "write",
    [
        lambda: pl.col("x").gpu_hist.histogram(3, density=True, flow=True),
        lambda: pl.Series([0.5]).gpu_hist.histogram(3, density=True, flow=True),
        lambda: gh.histogramdd("x", "y", density=True, flow=True),
    ],
)
def test_density_with_flow_is_refused_where_written(write: Any) -> None:
    with pytest.raises(ValueError, match="`density` cannot be combined with `flow`"):
        write()


def test_weights_of_another_shape_are_refused_as_numpy_refuses_them() -> None:
    with pytest.raises(ValueError, match=r"^weights should have the same shape as a\.$"):
        np.histogram(np.arange(10.0), 3, weights=np.ones((5, 2)))
    with pytest.raises(ValueError, match="`weights` has shape"):
        gh.histogram(np.arange(10.0), 3, weights=np.ones((5, 2)))
    with pytest.raises(ValueError, match="`weights` has shape"):
        pl.Series(np.arange(10.0)).gpu_hist.histogram(3, weights=np.ones((5, 2)))
    # The same shape is each value's weight, as numpy pairs them.
    same = gh.histogram(np.ones((5, 2)), 3, range=(0, 3), weights=np.full((5, 2), 2.0))
    assert same["count"].to_list() == [0.0, 20.0, 0.0]


def test_hist_refuses_too_many_edges_before_converting_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An edge that no conversion takes: refusing it first proves nothing was converted.
    monkeypatch.setattr(polars_hist, "MAX_BINS", 4)
    edges: list[Any] = [0.0, 1.0, 2.0, 3.0, 4.0, object()]
    with pytest.raises(ValueError, match="gives 5 bins, more than the 4"):
        pl.col("x").gpu_hist.hist(bins=edges)
    with pytest.raises(ValueError, match="gives 5 bins"):
        pl.Series([1.0]).gpu_hist.hist(bins=np.arange(6.0))


@pytest.mark.parametrize("unit", ["ms", "us", "ns"])
def test_polars_least_datetime_is_an_edge_not_nat(unit: Literal["ms", "us", "ns"]) -> None:
    # Polars has no NaT: -2**63 is its least Datetime (and Duration), an edge like any other.
    least = -(2**63)
    data = pl.Series("t", [0, 5, 10**6], pl.Int64).cast(pl.Datetime(unit))
    edges = pl.Series([least, 1, 2**62], dtype=pl.Int64).cast(pl.Datetime(unit))
    assert gh.histogram(data, edges)["count"].to_list() == [1, 2]
    durations = pl.Series("d", [0, 5], pl.Int64).cast(pl.Duration(unit))
    edges = pl.Series([least, 1, 10], dtype=pl.Int64).cast(pl.Duration(unit))
    assert gh.histogram(durations, edges)["count"].to_list() == [1, 1]
    # Dates and aware datetimes by their physical values too.
    aware = data.dt.replace_time_zone("UTC")
    aware_edges = pl.Series([least, 1, 2**62], dtype=pl.Int64).cast(pl.Datetime(unit, "UTC"))
    assert gh.histogram(aware, aware_edges)["count"].to_list() == [1, 2]
    assert gh.histogram(data, [datetime(1969, 1, 1), datetime(2000, 1, 1)])["count"][0] == 3


@pytest.mark.parametrize(
    ("text", "options", "match"),
    [
        (
            "v\n1.5\nnan\n2\n",
            {},
            r"'nan' is a number Polars' CSV reader does not infer.*"
            r"schema_overrides",
        ),
        ("v\n 1.5\n 2.0\n", {}, r"' 1.5' is a number padded with spaces.*schema_overrides"),
        (
            "v;w\n1,5;1\n2,25;2\n",
            {"separator": ";"},
            r"'1,5' is a number written with a decimal "
            r"comma.*'decimal_comma': True",
        ),
        ("v,w\nNA,1\nNA,2\n", {}, r"holds no value.*schema_overrides"),
        ("v\n1.5\n?\n", {}, r"'\?' is not a number.*'null_values'"),
    ],
)
def test_a_csv_column_read_as_text_names_a_value_and_the_fix(
    tmp_path: Path, text: str, options: dict[str, Any], match: str
) -> None:
    path = tmp_path / "t.csv"
    path.write_text(text)
    with pytest.raises(TypeError, match=match):
        gh.histogram_scan(path, "v", 3, range=(0, 3), reader_options=options or None)


@pytest.mark.parametrize(
    ("text", "options", "counts"),
    [
        ("v\n1.5\nnan\n2\n", {"schema_overrides": {"v": pl.Float64}}, [0, 1, 1]),
        ("v;w\n1,5;1\n2,25;2\n", {"separator": ";", "decimal_comma": True}, [0, 1, 1]),
    ],
)
def test_the_fixes_the_messages_name_work(
    tmp_path: Path, text: str, options: dict[str, Any], counts: list[int]
) -> None:
    path = tmp_path / "t.csv"
    path.write_text(text)
    h = gh.histogram_scan(path, "v", 3, range=(0, 3), reader_options=options)
    assert h.counts.tolist() == counts
