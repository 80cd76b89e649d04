"""CSV files as they come: R's `NA` and the other usual spellings of a missing value,
a column of integers whose later rows hold floats, timestamps, through histogram_scan and the
command line; counts equal numpy's on the non-null values."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh
from polars_gpu_hist._cli.main import main
from support.cli import assert_usage_error, counts_of, run_cli

ROWS = 600


def write_flights(path: Path) -> dict[str, np.ndarray]:
    """A small CSV shaped like nycflights13's as R writes it: `NA` for missing values (early
    in one column, late in another), an integer column that turns float after 150 rows (so the
    first rows' dtype does not hold), UTC timestamps, a string carrier. Returns the values."""
    rng = np.random.default_rng(32)
    dep_delay = rng.integers(-30, 400, ROWS).astype(float)
    missing = rng.random(ROWS) < 0.05
    missing[3] = True  # an `NA` early, as in flights.csv
    arr_delay = rng.integers(-60, 500, ROWS).astype(float)
    early_na = np.zeros(ROWS, bool)
    early_na[:120] = True  # only `NA` in the first rows: Polars would infer String
    visib = rng.integers(0, 11, ROWS).astype(float)
    visib[150:] += rng.choice([0.0, 0.25, 0.5], ROWS - 150)
    start = dt.datetime(2013, 1, 1, 5)
    hours = rng.integers(0, 24 * 365, ROWS)
    lines = ["year,dep_delay,arr_delay,visib,carrier,time_hour"]
    for i in range(ROWS):
        delay = "NA" if missing[i] else str(int(dep_delay[i]))
        arr = "NA" if early_na[i] else str(int(arr_delay[i]))
        v = str(int(visib[i])) if visib[i].is_integer() else str(visib[i])
        stamp = (start + dt.timedelta(hours=int(hours[i]))).strftime("%Y-%m-%d %H:%M:%S")
        lines.append(f"2013,{delay},{arr},{v},{'UA' if i % 3 else 'AA'},{stamp}")
    path.write_text("\n".join(lines) + "\n")
    return {
        "dep_delay": dep_delay[~missing],
        "arr_delay": arr_delay[~early_na],
        "visib": visib,
        "time_hour": np.array(
            [start + dt.timedelta(hours=int(h)) for h in hours], dtype="datetime64[us]"
        ).astype(np.int64),
        "missing": missing,
    }


@pytest.fixture
def flights(tmp_path: Path) -> tuple[Path, dict[str, np.ndarray]]:
    path = tmp_path / "flights.csv"
    return path, write_flights(path)


def test_r_na_is_null_and_counts_equal_numpy(flights) -> None:
    path, values = flights
    h = gh.histogram_scan(path, "dep_delay", 20, range="auto")
    counts, edges = np.histogram(values["dep_delay"], 20)
    np.testing.assert_array_equal(h.counts, counts)
    np.testing.assert_array_equal(h.edges, edges)
    assert h.flow.null == int(values["missing"].sum())
    assert h.flow.rows == ROWS


def test_a_column_of_only_na_in_its_first_rows_is_numeric(flights) -> None:
    path, values = flights
    h = gh.histogram_scan(path, "arr_delay", [-60, 0, 100, 500])
    counts, _ = np.histogram(values["arr_delay"], [-60, 0, 100, 500])
    np.testing.assert_array_equal(h.counts, counts)
    assert h.null == 120


@pytest.mark.parametrize("bins", [10, "fd", "sturges"])
def test_integers_then_floats_are_read_as_floats(flights, bins) -> None:
    path, values = flights
    h = gh.histogram_scan(path, "visib", bins, range="auto" if bins == 10 else None)
    counts, edges = np.histogram(values["visib"], bins)
    np.testing.assert_array_equal(h.counts, counts)
    np.testing.assert_array_equal(h.edges, edges)


def test_timestamps_are_parsed_as_datetime(flights) -> None:
    path, values = flights
    h = gh.histogram_scan(path, "time_hour", 12, range="auto")
    assert h._core.dtypes[0].startswith("Datetime")
    counts, _ = np.histogram(values["time_hour"], 12)
    np.testing.assert_array_equal(h.counts, counts)
    frame = h.to_frame()
    assert frame.schema["bin_start"] == pl.Datetime("us")


def test_reader_options_reach_polars(tmp_path: Path) -> None:
    path = tmp_path / "semi.csv"
    path.write_text("a;b\n1;-\n2;3\n-;4\n")
    h = gh.histogram_scan(
        path, "b", [0, 5], reader_options={"separator": ";", "null_values": ["-"]}
    )
    assert h.counts.tolist() == [2] and h.null == 1
    with pytest.raises(TypeError, match="reader_options"):
        gh.histogram_scan(path, "b", [0, 5], reader_options={"no_such_option": 1})
    with pytest.raises(TypeError, match="reader_options"):
        gh.histogram_scan(path, "b", [0, 5], reader_options=[("separator", ";")])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="already read"):
        gh.histogram_scan(pl.LazyFrame({"b": [1]}), "b", [0, 5], reader_options={"a": 1})


def test_a_value_that_still_fails_names_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "odd.csv"
    path.write_text("x\n" + "1\n" * 200 + "?\n")
    # The whole file makes it a String column: the first value that is not a number is named.
    with pytest.raises(TypeError, match=r"'\?' is not a number.*'null_values'"):
        gh.histogram_scan(path, "x", [0, 2])
    # With the first rows' dtype kept, the parse fails: Polars' message and its whole hint.
    with pytest.raises(pl.exceptions.ComputeError) as caught:
        gh.histogram_scan(path, "x", [0, 2], reader_options={"infer_schema_length": 100})
    text = str(caught.value)
    assert "could not parse `?`" in text and "null_values" in text and "'?'" in text
    assert "You might want to try" in text
    # With `?` as a null, it reads.
    ok = gh.histogram_scan(path, "x", [0, 2], reader_options={"null_values": ["?"]})
    assert ok.counts.tolist() == [200] and ok.null == 1


def test_an_explicit_infer_schema_length_is_not_overridden(tmp_path: Path) -> None:
    path = tmp_path / "late.csv"
    path.write_text("x\n" + "1\n" * 200 + "1.5\n")
    assert gh.histogram_scan(path, "x", [0, 2]).counts.tolist() == [201]
    with pytest.raises(pl.exceptions.ComputeError, match=r"could not parse `1\.5`"):
        gh.histogram_scan(path, "x", [0, 2], reader_options={"infer_schema_length": 10})


def test_cli_reads_the_csv_as_it_comes(flights, capsys) -> None:
    path, values = flights
    assert main([str(path), "-c", "dep_delay", "-b", "10"]) == 0
    out = capsys.readouterr().out
    counts, _ = np.histogram(values["dep_delay"], 10)
    assert counts_of(out) == counts.tolist()
    nulls = int(values["missing"].sum())
    assert f"{ROWS:,} rows: {ROWS - nulls:,} counted, {nulls:,} null, 0 NaN" in out
    for column in ("arr_delay", "visib", "time_hour"):
        assert main([str(path), "-c", column, "-b", "5"]) == 0, column
    assert "time_hour" in capsys.readouterr().out


def test_cli_csv_flags(tmp_path: Path, capsys) -> None:
    path = tmp_path / "semi.csv"
    path.write_text("a;b\n1;-\n2;3\n?;4\n")
    args = [str(path), "-c", "a", "-b", "0,5", "--separator", ";", "--null-values", "?"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert counts_of(out) == [2.0] and "1 null" in out
    # The first two rows say Int64; `?` then fails, and the message names the flag.
    assert main([*args[:-2], "--infer-schema-length", "2"]) == 2
    assert "--null-values '?'" in capsys.readouterr().err
    # The whole file says String: the column cannot be histogrammed.
    assert main([*args[:-2], "--infer-schema-length", "0"]) == 2
    assert "String" in capsys.readouterr().err


def test_cli_parse_failure_is_one_line_naming_the_flag(tmp_path: Path) -> None:
    path = tmp_path / "odd.csv"
    path.write_text("x\n" + "1\n" * 200 + "?\n")
    done = run_cli(str(path), "-c", "x")
    assert_usage_error(done, "'?' is not a number", "--null-values '?'")
    done = run_cli(str(path), "-c", "x", "--infer-schema-length", "50")
    assert_usage_error(done, "could not parse `?`", "--null-values '?'")


def test_cli_csv_flags_are_for_csv_files(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    pl.DataFrame({"x": [1.0, 2.0]}).write_parquet(path)
    assert_usage_error(run_cli(str(path), "--separator", ";"), "--separator", "CSV")


def test_cli_default_column_holds_more_than_one_value(flights, capsys) -> None:
    path, _ = flights
    # `year` is the first numeric column, and holds one value: one bar says nothing.
    assert main([str(path), "-b", "5"]) == 0
    assert "column 'dep_delay'" in capsys.readouterr().out
    constant = path.parent / "constant.csv"
    constant.write_text("a,b\n1,2\n1,2\n")
    assert main([str(constant), "-b", "2"]) == 0
    assert "column 'a'" in capsys.readouterr().out


def test_where_keeps_the_rows_of_a_sql_predicate(flights, capsys) -> None:
    path, _ = flights
    frame = pl.read_csv(path, null_values=["NA"], infer_schema_length=None)
    predicate = (pl.col("carrier") == "AA") & (pl.col("visib") > 2)
    kept = frame.filter(predicate)
    for where in ("carrier = 'AA' AND visib > 2", predicate):
        h = gh.histogram_scan(path, "dep_delay", 8, range="auto", where=where)
        counts, _ = np.histogram(kept["dep_delay"].drop_nulls().to_numpy(), 8)
        np.testing.assert_array_equal(h.counts, counts)
        assert h.flow.rows == kept.height
    with pytest.raises(ValueError, match="`where`"):
        gh.histogram_scan(path, "dep_delay", 8, where="carrier =")
    with pytest.raises(TypeError, match="`where`"):
        gh.histogram_scan(path, "dep_delay", 8, where=3)  # type: ignore[arg-type]
    assert main([str(path), "-c", "dep_delay", "-b", "8", "--where", "carrier = 'AA'"]) == 0
    n = frame.filter(pl.col("carrier") == "AA").height
    assert f"{n:,} rows:" in capsys.readouterr().out


@pytest.mark.parametrize("every", ["1w", "1mo", "1d"])
def test_time_bins_of_csv_timestamps_on_the_cli_and_scan(flights, every: str, capsys) -> None:
    """`-c time_hour --bins 1w`: the parsed timestamps binned as dt.truncate groups them."""
    path, values = flights
    stamps = pl.Series("t", values["time_hour"]).cast(pl.Datetime("us"))
    expected = stamps.dt.truncate(every).value_counts(sort=True, name="n").sort("t")
    h = gh.histogram_scan(path, "time_hour", every)
    frame = h.to_frame().filter(pl.col("count") > 0)
    assert frame["bin_start"].to_list() == expected["t"].to_list()
    assert frame["count"].to_list() == expected["n"].to_list()
    assert main([str(path), "-c", "time_hour", "--bins", every, "--all-bins"]) == 0
    out = capsys.readouterr().out
    # `[2013-01-07 00:00:00, 2013-01-14 00:00:00)  12  ###`: edges with spaces, then the count.
    counts = [int(m.group(1)) for m in re.finditer(r"^[\[(][^\])]*[\])]\s+(\d+)", out, re.M)]
    assert [c for c in counts if c] == expected["n"].to_list()
    assert f"{ROWS:,} rows: {ROWS:,} counted" in out


def test_time_bins_errors_on_the_cli(flights) -> None:
    path, _ = flights
    assert_usage_error(run_cli(str(path), "-c", "dep_delay", "--bins", "1w"), "time bins", "Int64")
    assert_usage_error(run_cli(str(path), "-c", "time_hour", "--bins", "0d"), "is zero")
    assert_usage_error(run_cli(str(path), "-c", "time_hour", "--bins", "1x"), "time bins", "1mo")
