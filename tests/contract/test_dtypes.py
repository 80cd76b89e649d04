"""Every Polars dtype through every entry point: each either bins (counts equal numpy's for the
same numbers) or raises an ordinary exception whose message names the dtype; never a panic
(``PanicException`` is a ``BaseException``: ``except Exception`` below would not catch it)."""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh
from polars_gpu_hist._cli.main import main

ROWS = 12
NUMBERS = [0, 1, 2, 3, 5, 8, 13, 21, 34, 55, None, 3]
GROUPS = [i % 2 for i in range(ROWS)]
ORDINARY = (TypeError, ValueError, pl.exceptions.PolarsError)


@dataclass
class Dtype:
    """A column of one dtype, and the numbers numpy bins for it (None: refused)."""

    name: str
    make: Callable[[], pl.Series]
    numbers: Callable[[pl.Series], np.ndarray] | None
    # How an error names it (Polars' Python-facing name).
    named: str = ""
    # Whether it may be a weight (numbers only; temporal values are no weights).
    weight: bool = True

    def __post_init__(self) -> None:
        self.named = self.named or self.name


def _numeric(dtype: pl.DataType) -> Callable[[], pl.Series]:
    return lambda: pl.Series("x", NUMBERS, dtype=pl.Int64).cast(dtype)


def _as_is(s: pl.Series) -> np.ndarray:
    return s.drop_nulls().to_numpy()


def _as_float64(s: pl.Series) -> np.ndarray:
    return s.drop_nulls().cast(pl.Float64).to_numpy()


def _physical(s: pl.Series) -> np.ndarray:
    return s.drop_nulls().to_physical().to_numpy()


def _days() -> pl.Series:
    start = dt.date(2024, 1, 1)
    return pl.Series("x", [None if n is None else start + dt.timedelta(days=n) for n in NUMBERS])


def _datetimes(tz: str | None) -> Callable[[], pl.Series]:
    def make() -> pl.Series:
        base = dt.datetime(2024, 3, 1, 12)
        s = pl.Series("x", [None if n is None else base + dt.timedelta(hours=n) for n in NUMBERS])
        return s.dt.replace_time_zone(tz) if tz else s

    return make


DTYPES = [
    *(
        Dtype(str(d), _numeric(d), _as_is)
        for d in (
            pl.Int8,
            pl.Int16,
            pl.Int32,
            pl.Int64,
            pl.UInt8,
            pl.UInt16,
            pl.UInt32,
            pl.UInt64,
            pl.Float16,
            pl.Float32,
            pl.Float64,
        )
    ),
    Dtype("Int128", _numeric(pl.Int128), _as_float64),
    Dtype("UInt128", _numeric(pl.UInt128), _as_float64),
    Dtype(
        "Decimal",
        lambda: pl.Series(
            "x", [None if n is None else decimal.Decimal(n) / 4 for n in NUMBERS]
        ).cast(pl.Decimal(10, 2)),
        _as_float64,
    ),
    Dtype("Date", _days, _physical, weight=False),
    Dtype("Datetime", _datetimes(None), _physical, weight=False),
    Dtype("Datetime-tz", _datetimes("Europe/Paris"), _physical, weight=False),
    Dtype(
        "Duration",
        lambda: pl.Series("x", [None if n is None else dt.timedelta(minutes=n) for n in NUMBERS]),
        _physical,
        weight=False,
    ),
    # numpy has no time of day: refused, with what to do instead (docs/semantics.md).
    Dtype("Time", lambda: pl.Series("x", [dt.time(n % 24) for n in range(ROWS)]), None),
    Dtype("Boolean", lambda: pl.Series("x", [n % 3 == 0 for n in range(ROWS)]), None),
    Dtype("String", lambda: pl.Series("x", [str(n) for n in range(ROWS)]), None),
    Dtype("Binary", lambda: pl.Series("x", [bytes([n]) for n in range(ROWS)]), None),
    Dtype(
        "Categorical",
        lambda: pl.Series("x", [str(n % 3) for n in range(ROWS)], dtype=pl.Categorical),
        None,
    ),
    Dtype(
        "Enum",
        lambda: pl.Series("x", [str(n % 3) for n in range(ROWS)], dtype=pl.Enum(["0", "1", "2"])),
        None,
    ),
    Dtype("List", lambda: pl.Series("x", [[n, n] for n in range(ROWS)]), None),
    Dtype(
        "Array",
        lambda: pl.Series("x", [[n, n] for n in range(ROWS)], dtype=pl.Array(pl.Int64, 2)),
        None,
    ),
    Dtype("Struct", lambda: pl.Series("x", [{"a": n} for n in range(ROWS)]), None),
    Dtype("Object", lambda: pl.Series("x", [object()] * ROWS, dtype=pl.Object), None),
    Dtype("Null", lambda: pl.Series("x", [None] * ROWS, dtype=pl.Null), None),
]
IDS = [d.name for d in DTYPES]


def refused(d: Dtype, call: Callable[[], Any], *, weight: bool = False) -> None:
    """``call`` raises an ordinary exception naming the dtype."""
    with pytest.raises(ORDINARY) as info:
        call()
    assert d.named.split("-")[0] in str(info.value), str(info.value)
    if weight:
        assert "weights" in str(info.value), str(info.value)


def counts(frame: pl.DataFrame) -> np.ndarray:
    return frame["count"].to_numpy()


@pytest.mark.parametrize("d", DTYPES, ids=IDS)
@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
def test_the_expression(d: Dtype, lazy: bool) -> None:
    frame = pl.DataFrame({"x": d.make()})
    expr = pl.col("x").gpu_hist.histogram(4, device="cpu")

    def run() -> pl.DataFrame:
        if lazy:
            return frame.lazy().select(expr).collect().unnest("x")
        return frame.select(expr).unnest("x")

    if d.numbers is None:
        return refused(d, run)
    expected, _ = np.histogram(d.numbers(d.make()), 4)
    np.testing.assert_array_equal(counts(run()), expected)


@pytest.mark.parametrize("d", DTYPES, ids=IDS)
def test_histogram_of_a_series(d: Dtype) -> None:
    if d.numbers is None:
        return refused(d, lambda: gh.histogram(d.make(), 4, device="cpu"))
    expected, _ = np.histogram(d.numbers(d.make()), 4)
    np.testing.assert_array_equal(counts(gh.histogram(d.make(), 4, device="cpu")), expected)
    got = d.make().gpu_hist.histogram(4, device="cpu").struct.unnest()
    np.testing.assert_array_equal(counts(got), expected)


@pytest.mark.parametrize("d", DTYPES, ids=IDS)
def test_a_column_of_histogramdd(d: Dtype) -> None:
    x = d.make()
    y = pl.Series("y", np.arange(ROWS, dtype=np.float64))
    if d.numbers is None:
        refused(d, lambda: gh.histogramdd(x, y, bins=[4, 2], device="cpu"))
        frame = pl.DataFrame({"x": x, "y": y})
        return refused(d, lambda: frame.select(gh.histogramdd("x", "y", bins=[4, 2], device="cpu")))
    kept = x.is_not_null().to_numpy()
    expected, _ = np.histogramdd((d.numbers(x), y.to_numpy()[kept]), bins=[4, 2])
    got = gh.histogramdd(x, y, bins=[4, 2], device="cpu")
    np.testing.assert_array_equal(counts(got), expected.ravel())


@pytest.mark.parametrize("d", DTYPES, ids=IDS)
def test_the_values_of_by(d: Dtype) -> None:
    frame = pl.DataFrame({"x": d.make(), "g": GROUPS})
    expr = pl.col("x").gpu_hist.histogram(4, by="g", device="cpu")
    if d.numbers is None:
        return refused(d, lambda: frame.select(expr))
    got = frame.select(expr).unnest("x")
    edges = np.histogram_bin_edges(d.numbers(d.make()), 4)
    for g in (0, 1):
        group = d.make().filter(pl.Series(GROUPS) == g)
        expected, _ = np.histogram(d.numbers(group), edges)
        np.testing.assert_array_equal(counts(got.filter(pl.col("g") == g)), expected)


@pytest.mark.parametrize("d", DTYPES, ids=IDS)
def test_as_weights(d: Dtype) -> None:
    x = pl.Series("x", np.linspace(0, 1, ROWS))
    w = d.make().alias("w")
    frame = pl.DataFrame({"x": x, "w": w})
    expr = pl.col("x").gpu_hist.histogram(4, weights="w", device="cpu")
    if d.numbers is None or not d.weight:
        refused(d, lambda: gh.histogram(x, 4, weights=w, device="cpu"), weight=True)
        return refused(d, lambda: frame.select(expr), weight=True)
    kept = w.is_not_null().to_numpy()
    # Small integers and quarters: exact sums in every dtype, numpy's and ours.
    expected, _ = np.histogram(x.to_numpy()[kept], 4, weights=d.numbers(w).astype(np.float64))
    np.testing.assert_array_equal(counts(gh.histogram(x, 4, weights=w, device="cpu")), expected)
    np.testing.assert_array_equal(counts(frame.select(expr).unnest("x")), expected)


def _range(d: Dtype) -> tuple[float, float]:
    numbers = d.numbers(d.make()) if d.numbers is not None else np.array([0, 1])
    return float(numbers.min()), float(numbers.max())


@pytest.mark.parametrize("d", DTYPES, ids=IDS)
def test_histogram_fill_and_merge(d: Dtype) -> None:
    h = gh.Histogram(4, range=_range(d))
    if d.numbers is None:
        return refused(d, lambda: h.fill(d.make()))
    h.fill(d.make())
    other = gh.Histogram(4, range=_range(d)).fill(d.make())
    total = (h + other).fill(d.make())
    expected, _ = np.histogram(d.numbers(d.make()), 4, range=_range(d))
    np.testing.assert_array_equal(total.counts, 3 * expected)
    # Its state round-trips, dtype included.
    import pickle

    back = pickle.loads(pickle.dumps(total))
    assert back == total


@pytest.mark.parametrize("d", DTYPES, ids=IDS)
def test_explain_a_series_and_a_dtype(d: Dtype) -> None:
    s = d.make()
    if d.numbers is None:
        refused(d, lambda: gh.explain(s, 4, device="cpu"))
        return refused(d, lambda: gh.explain(s.dtype, 4, device="cpu"))
    assert "cpu" in gh.explain(s, 4, device="cpu").lower()
    assert "cpu" in gh.explain(s.dtype, 4, device="cpu").lower()


def test_explain_a_dtype_made_by_hand() -> None:
    # An Enum made by hand could not cross to the native side (AttributeError) before.
    for dtype in (pl.Enum(["a", "b"]), pl.Categorical(), pl.List(pl.Int8), pl.Array(pl.Int8, 2)):
        with pytest.raises(TypeError, match=r"Enum|Categorical|List|Array"):
            gh.explain(dtype, 4)
    assert "cpu" in gh.explain(pl.Decimal(10, 2), 4, device="cpu").lower()


@pytest.mark.parametrize("d", DTYPES, ids=IDS)
@pytest.mark.parametrize("auto", [False, True], ids=["range", "auto"])
def test_histogram_scan(d: Dtype, auto: bool) -> None:
    lf = pl.LazyFrame({"x": d.make()})
    rng: Any = "auto" if auto else _range(d)
    if d.numbers is None:
        return refused(d, lambda: gh.histogram_scan(lf, "x", 4, range=rng, device="cpu"))
    h = gh.histogram_scan(lf, "x", 4, range=rng, device="cpu", chunk_size=5)
    expected, _ = np.histogram(d.numbers(d.make()), 4, range=None if auto else rng)
    np.testing.assert_array_equal(h.counts, expected)


@pytest.mark.parametrize("d", [d for d in DTYPES if d.name != "Object"], ids=lambda d: d.name)
@pytest.mark.parametrize("suffix", [".parquet", ".arrow"])
def test_the_command_line(
    d: Dtype, suffix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / f"data{suffix}"
    frame = pl.DataFrame({"x": d.make()})
    (frame.write_parquet if suffix == ".parquet" else frame.write_ipc)(path)
    status = main([str(path), "--column", "x", "--bins", "4"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    if d.numbers is None:
        assert status == 2, (out, err)
        assert err.startswith("error: ") and d.named.split("-")[0] in err, err
        return
    assert status == 0, err
    expected, _ = np.histogram(d.numbers(d.make()), 4)
    rows = [line for line in out.splitlines() if line.startswith(("[", "("))]
    got = [int(line.split(")")[-1].split("]")[-1].split()[0]) for line in rows]
    assert got == expected.tolist(), out


def test_an_object_column_is_named_object() -> None:
    s = pl.Series("x", [object()] * 3, dtype=pl.Object)
    for call in (
        lambda: gh.histogram(s, 4),
        lambda: s.gpu_hist.histogram(4),
        lambda: gh.explain(s),
        lambda: gh.Histogram([0, 1]).fill(s),
    ):
        with pytest.raises(TypeError, match="dtype Object"):
            call()
    with pytest.raises(TypeError, match=r"weights.*Object"):
        gh.histogram(pl.Series([1.0, 2.0, 3.0]), 4, weights=s)
    # In a frame, pyo3-polars hands it over as Binary: the message says so.
    frame = pl.DataFrame({"x": s, "v": [1.0, 2.0, 3.0]})
    with pytest.raises(pl.exceptions.PolarsError, match="Object"):
        frame.select(pl.col("x").gpu_hist.histogram(4))
    with pytest.raises(pl.exceptions.PolarsError, match="Object"):
        frame.select(pl.col("v").gpu_hist.histogram(4, weights="x"))
    with pytest.raises(pl.exceptions.PolarsError, match="Object"):
        frame.select(pl.col("v").gpu_hist.histogram(4, by="x"))


def test_weights_errors_use_polars_names() -> None:
    x = pl.Series([1.0, 2.0])
    for w, name in [
        (pl.Series(["a", "b"]), "String"),
        (pl.Series(["a", "b"], dtype=pl.Categorical), "Categorical"),
        (pl.Series([True, False]), "Boolean"),
        (pl.Series([dt.date(2024, 1, 1)] * 2), "Date"),
    ]:
        with pytest.raises(pl.exceptions.PolarsError, match=f"got dtype {name}"):
            gh.histogram(x, 2, weights=w)


def test_float16_histogramdd_bins_a_float16_sample_as_numpy() -> None:
    rng = np.random.default_rng(5)
    for other in (np.float16, np.int8, np.uint8, np.int16, np.float32, np.float64):
        x = rng.normal(size=500).astype(np.float16)
        y = (rng.normal(size=500) * 20).astype(other)
        sample_x, sample_y = np.array([x, y])  # numpy's own stacking of the two
        for bins in (3, 7, 40):
            expected, edges = np.histogramdd((x, y), bins=bins)
            got = gh.histogramdd(pl.Series("x", x), pl.Series("y", y), bins=bins, device="cpu")
            np.testing.assert_array_equal(counts(got), expected.ravel(), err_msg=str(other))
            starts = got["x_start"].unique(maintain_order=True).to_numpy()
            np.testing.assert_array_equal(starts, edges[0][:-1], err_msg=str(other))
        assert sample_x.dtype == sample_y.dtype


@pytest.mark.parametrize("data", [pl.col("x"), "x"])
def test_explain_of_an_expression_says_what_to_pass(data: object) -> None:
    with pytest.raises(TypeError, match=r"pass the column \(df\['x'\]\) or its dtype"):
        gh.explain(data, 100)


@pytest.mark.parametrize("frame", [pl.DataFrame({"x": [1.0]}), pl.LazyFrame({"x": [1.0]})])
def test_explain_of_a_frame_without_a_column_says_it_has_no_gpu_hist_expression(
    frame: pl.DataFrame | pl.LazyFrame,
) -> None:
    # A frame is explained as a query (tests/scan has the lazy namespace's plans).
    assert "no gpu_hist expression" in gh.explain(frame, 100)
