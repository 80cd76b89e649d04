"""histogram_scan: files and LazyFrames in bounded batches, range="auto", bounded memory."""

from __future__ import annotations

import datetime as dt
import io
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    rng = np.random.default_rng(11)
    n = 50_000
    x = rng.normal(0, 1, n)
    x[::97] = np.nan
    return pl.DataFrame(
        {
            "x": x,
            "f": rng.uniform(-1, 1, n).astype(np.float32),
            "i": rng.integers(-1000, 1000, n),
            "w": rng.integers(0, 4, n).astype(np.float64),
        }
    ).with_columns(pl.when(pl.int_range(pl.len()) % 13 == 0).then(None).otherwise("w").alias("w"))


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".ipc"])
def test_files_equal_numpy(tmp_path: Path, frame: pl.DataFrame, suffix: str) -> None:
    path = tmp_path / f"d{suffix}"
    {".parquet": frame.write_parquet, ".csv": frame.write_csv, ".ipc": frame.write_ipc}[suffix](
        path
    )
    h = gh.histogram_scan(path, "x", 40, range=(-3, 3), chunk_size=4096)
    expected, edges = np.histogram(frame["x"].to_numpy(), bins=40, range=(-3, 3))
    np.testing.assert_array_equal(h.counts, expected, strict=False)
    np.testing.assert_array_equal(h.edges, edges)


def test_globs_and_lists_of_files(tmp_path: Path, frame: pl.DataFrame) -> None:
    for k, part in enumerate(frame.iter_slices(12_000)):
        part.write_parquet(tmp_path / f"part{k}.parquet")
    expected, _ = np.histogram(frame["i"].to_numpy(), bins=[-1000, -10, 0, 10, 999])
    by_glob = gh.histogram_scan(str(tmp_path / "part*.parquet"), "i", [-1000, -10, 0, 10, 999])
    files = sorted(tmp_path.glob("part*.parquet"))
    by_list = gh.histogram_scan(files, "i", [-1000, -10, 0, 10, 999])
    np.testing.assert_array_equal(by_glob.counts, expected, strict=False)
    np.testing.assert_array_equal(by_list.counts, expected, strict=False)


@pytest.mark.parametrize("column", ["x", "f", "i"])
def test_auto_range_is_numpys_range_of_all_the_data(frame: pl.DataFrame, column: str) -> None:
    values = frame[column].to_numpy()
    values = values[~np.isnan(values)] if values.dtype.kind == "f" else values
    # float32 data: numpy's linspace runs in float32 over the float32 extremes.
    expected, edges = np.histogram(values, bins=33)
    h = gh.histogram_scan(frame.lazy(), column, 33, range="auto", chunk_size=5000)
    np.testing.assert_array_equal(h.counts, expected, strict=False)
    np.testing.assert_array_equal(h.edges, edges.astype(np.float64))


def test_weights_and_auto_range_leave_out_null_weights(frame: pl.DataFrame) -> None:
    keep = frame.filter(pl.col("w").is_not_null() & pl.col("x").is_not_nan())
    expected, _ = np.histogram(keep["x"].to_numpy(), bins=20, weights=keep["w"].to_numpy())
    h = gh.histogram_scan(frame.lazy(), "x", 20, range="auto", weights="w", chunk_size=7000)
    np.testing.assert_array_equal(h.counts, expected)
    assert h.weighted


def test_closed_right_matches_polars_hist(frame: pl.DataFrame) -> None:
    h = gh.histogram_scan(frame, "i", 16, range="auto", closed="right", chunk_size=3000)
    expected = frame["i"].hist(bin_count=16)["count"].to_numpy()
    np.testing.assert_array_equal(h.counts, expected, strict=False)


def test_scan_errors_are_clear(tmp_path: Path, frame: pl.DataFrame) -> None:
    path = tmp_path / "d.parquet"
    frame.with_columns(s=pl.lit("a")).write_parquet(path)
    with pytest.raises(pl.exceptions.ColumnNotFoundError, match="no column 'nope'"):
        gh.histogram_scan(path, "nope", 4, range=(0, 1))
    with pytest.raises(TypeError, match="dtype String"):
        gh.histogram_scan(path, "s", 4, range=(0, 1))
    with pytest.raises(ValueError, match="needs `range"):
        gh.histogram_scan(path, "x", 4)
    with pytest.raises(ValueError, match="int `bins`"):
        gh.histogram_scan(path, "x", [0, 1], range="auto")
    with pytest.raises(FileNotFoundError, match="no such file"):
        gh.histogram_scan(tmp_path / "missing.parquet", "x", 4, range=(0, 1))
    with pytest.raises(ValueError, match="cannot read"):
        gh.histogram_scan(tmp_path / "d.xlsx", "x", 4, range=(0, 1))
    with pytest.raises(ValueError, match="not finite"):
        gh.histogram_scan(pl.LazyFrame({"x": [1.0, np.inf]}), "x", 4, range="auto")


def test_progress_bar_draws_on_long_scans(frame: pl.DataFrame, monkeypatch, capsys) -> None:
    from polars_gpu_hist._scan import progress as _progress

    clock = iter(np.arange(0, 1000, 0.3))
    monkeypatch.setattr(_progress.time, "perf_counter", lambda: float(next(clock)))
    out = io.StringIO()
    gh.histogram_scan(frame.lazy(), "x", 4, range=(0, 1), chunk_size=5000, progress=out)
    text = out.getvalue()
    assert "\r" in text and "50,000 rows" in text and text.endswith("\n")
    gh.histogram_scan(frame.lazy(), "x", 4, range=(0, 1), chunk_size=5000)
    assert capsys.readouterr().err == ""  # no bar unless asked


PEAK_RSS = """
import json, sys
import polars_gpu_hist as gh
import polars as pl

def status_kib(key):
    # /proc, not getrusage: ru_maxrss keeps the high-water mark of the forking parent.
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1])

base = status_kib("VmRSS")
path, mode = sys.argv[1], sys.argv[2]
if mode == "scan":
    h = gh.histogram_scan(path, "x", 100, range=(0, 1), chunk_size=1 << 18, device="cpu")
    total = int(h.counts.sum())
else:
    total = pl.read_parquet(path).height
peak = status_kib("VmHWM")
print(json.dumps({"base_kib": base, "peak_kib": peak, "total": total}))
"""


def peak_rss(path: Path, mode: str) -> dict[str, int]:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(PEAK_RSS), str(path), mode],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def test_memory_stays_bounded_on_a_large_file(tmp_path: Path) -> None:
    rows, per_group = 128 << 20, 1 << 20  # 1 GiB of float64 in 128 row groups
    path = tmp_path / "big.parquet"
    rng = np.random.default_rng(5)
    # Uncompressed and incompressible: the file is as large as the data.
    pl.DataFrame({"x": rng.random(rows)}).write_parquet(
        path, compression="uncompressed", row_group_size=per_group, statistics=False
    )
    data_kib = rows * 8 // 1024
    # A memory limit five times smaller than the data, beyond the interpreter and libraries
    # (measured: about 130 MiB for Polars' streaming buffers and ours, whatever the file size).
    bound_kib = data_kib // 5
    try:
        scan = peak_rss(path, "scan")
        # The bound is tight enough to catch a scan that loads the file.
        whole = peak_rss(path, "read")
    finally:
        # pytest keeps the last three runs' folders: a GiB each is too much to leave behind.
        path.unlink()
    assert scan["total"] == rows
    assert scan["peak_kib"] - scan["base_kib"] < bound_kib, scan
    assert whole["peak_kib"] - whole["base_kib"] > bound_kib, whole


# range="auto" reads the data twice (or the statistics, then the data); these change it between
# the passes. The hook runs the first pass, then changes the files, so the second pass sees the
# change (no timing involved).


def between_passes(monkeypatch, change) -> None:
    from polars_gpu_hist._scan import bins as _bins

    first_pass = _bins.first_pass

    def first_pass_then_change(*args, **kwargs):
        extremes = first_pass(*args, **kwargs)
        change()
        return extremes

    monkeypatch.setattr(_bins, "first_pass", first_pass_then_change)


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_auto_range_raises_when_a_rewritten_file_goes_beyond_it(
    tmp_path: Path, monkeypatch, suffix: str
) -> None:
    path = tmp_path / f"d{suffix}"
    write = {".parquet": pl.DataFrame.write_parquet, ".csv": pl.DataFrame.write_csv}[suffix]
    write(pl.DataFrame({"x": [1.0, 2.0, 3.0]}), path)
    between_passes(monkeypatch, lambda: write(pl.DataFrame({"x": [1.0, 2.0, 3.0, 7.5]}), path))
    with pytest.raises(RuntimeError) as caught:
        gh.histogram_scan(path, "x", 4, range="auto", device="cpu")
    message = str(caught.value)
    for fragment in [str(path), "'x'", "changed between the two passes", "[1.0, 3.0]", "7.5"]:
        assert fragment in message
    assert "range=(min, max)" in message and "run again" in message


def test_auto_range_raises_when_the_data_shrinks(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "d.parquet"
    pl.DataFrame({"x": [1.0, 2.0, 3.0]}).write_parquet(path)
    # Nothing beyond the first range, but the bins of [1, 3] are not numpy's for [1, 2].
    between_passes(monkeypatch, lambda: pl.DataFrame({"x": [1.0, 2.0]}).write_parquet(path))
    with pytest.raises(RuntimeError, match=r"the second in \[1\.0, 2\.0\]"):
        gh.histogram_scan(path, "x", 4, range="auto", device="cpu")
    between_passes(monkeypatch, lambda: pl.DataFrame({"x": [None, np.nan]}).write_parquet(path))
    with pytest.raises(RuntimeError, match="the second without values"):
        gh.histogram_scan(path, "x", 4, range="auto", device="cpu")


def test_auto_range_of_rows_added_within_it_is_numpys_for_the_new_data(
    tmp_path: Path, monkeypatch
) -> None:
    path = tmp_path / "d.parquet"
    old = np.array([1.0, 2.0, 3.0])
    new = np.array([1.0, 2.0, 3.0, 2.5, 2.5, np.nan, 1.0])  # more rows, same [min, max]
    pl.DataFrame({"x": old}).write_parquet(path)
    between_passes(monkeypatch, lambda: pl.DataFrame({"x": new}).write_parquet(path))
    h = gh.histogram_scan(path, "x", 4, range="auto", device="cpu")
    expected, edges = np.histogram(new[~np.isnan(new)], bins=4)
    np.testing.assert_array_equal(h.counts, expected, strict=False)
    np.testing.assert_array_equal(h.edges, edges)


def test_auto_range_sees_a_new_file_matching_the_glob(tmp_path: Path, monkeypatch) -> None:
    pl.DataFrame({"i": [0, 5, 10]}).write_parquet(tmp_path / "part0.parquet")
    pattern = str(tmp_path / "part*.parquet")
    between_passes(
        monkeypatch, lambda: pl.DataFrame({"i": [4, 10]}).write_parquet(tmp_path / "part1.parquet")
    )
    h = gh.histogram_scan(pattern, "i", 5, range="auto", chunk_size=2, device="cpu")
    expected, _ = np.histogram([0, 5, 10, 4, 10], bins=5)
    np.testing.assert_array_equal(h.counts, expected, strict=False)
    between_passes(
        monkeypatch, lambda: pl.DataFrame({"i": [-3]}).write_parquet(tmp_path / "part2.parquet")
    )
    with pytest.raises(RuntimeError, match=r"part\*\.parquet.*\[0, 10\].*-3"):
        gh.histogram_scan(pattern, "i", 5, range="auto", device="cpu")


def test_auto_range_over_a_lazyframe_of_a_csv_that_grows(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "d.csv"
    pl.DataFrame({"x": [1, 2, 3]}).write_csv(path)
    between_passes(monkeypatch, lambda: pl.DataFrame({"x": [1, 2, 3, 99]}).write_csv(path))
    with pytest.raises(RuntimeError, match=r"the LazyFrame changed.*99"):
        gh.histogram_scan(pl.scan_csv(path), "x", 2, range="auto", device="cpu")


def test_auto_range_raises_when_the_dtype_changes(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "d.parquet"
    pl.DataFrame({"x": [1.0, 3.0]}).write_parquet(path)
    between_passes(
        monkeypatch,
        lambda: pl.DataFrame({"x": [1.0, 3.0]}, schema={"x": pl.Float32}).write_parquet(path),
    )
    with pytest.raises(RuntimeError, match="dtype Float64, now dtype Float32"):
        gh.histogram_scan(path, "x", 2, range="auto", device="cpu")


def test_auto_range_check_leaves_out_rows_with_null_weights(tmp_path: Path) -> None:
    # Rows with null weights count neither for the range nor in the bins: far values among
    # them are not a change between the passes.
    x = [1.0, 2.0, 1000.0, -1000.0, 3.0, np.nan]
    w = [1.0, 2.0, None, None, 0.5, 4.0]
    path = tmp_path / "d.parquet"
    pl.DataFrame({"x": x, "w": w}).write_parquet(path)
    h = gh.histogram_scan(path, "x", 4, range="auto", weights="w", chunk_size=2, device="cpu")
    expected, _ = np.histogram([1.0, 2.0, 3.0], bins=4, weights=[1.0, 2.0, 0.5])
    np.testing.assert_array_equal(h.counts, expected)


def test_auto_range_check_of_temporal_columns(tmp_path: Path, monkeypatch) -> None:
    from datetime import date

    path = tmp_path / "d.parquet"
    days = [date(2024, 1, 1), date(2024, 1, 31)]
    pl.DataFrame({"d": days}).write_parquet(path)
    h = gh.histogram_scan(path, "d", 3, range="auto", device="cpu")
    assert h.counts.tolist() == [1, 0, 1]
    later = [*days, date(2024, 3, 1)]
    between_passes(monkeypatch, lambda: pl.DataFrame({"d": later}).write_parquet(path))
    with pytest.raises(RuntimeError, match=r"\[2024-01-01, 2024-01-31\].*2024-03-01"):
        gh.histogram_scan(path, "d", 3, range="auto", device="cpu")


def test_arguments_are_checked_before_any_pass(tmp_path: Path, monkeypatch) -> None:
    from polars_gpu_hist._scan import bins as _bins
    from polars_gpu_hist._scan import passes as _scan_passes
    from polars_gpu_hist._scan import reader as _reader

    path = tmp_path / "d.parquet"
    pl.DataFrame({"x": [1.0, 2.0], "s": ["a", "b"]}).write_parquet(path)

    def no_pass(*args, **kwargs):
        raise AssertionError("the data was read before the arguments were checked")

    monkeypatch.setattr(_scan_passes, "first_pass", no_pass)
    monkeypatch.setattr(_bins, "first_pass", no_pass)
    monkeypatch.setattr(_reader, "fill", no_pass)
    monkeypatch.setattr(pl.LazyFrame, "collect_batches", no_pass)
    with pytest.raises(ValueError, match="positive integer"):
        gh.histogram_scan(path, "x", 0, range="auto")
    with pytest.raises(TypeError, match="dtype String"):
        gh.histogram_scan(path, "s", 4, range="auto")
    with pytest.raises(ValueError, match="weights"):
        gh.histogram_scan(path, "x", 4, range="auto", weights="s")
    with pytest.raises(ValueError, match="chunk_size"):
        gh.histogram_scan(path, "x", 4, range="auto", chunk_size=0)
    with pytest.raises(ValueError, match="`closed` must be 'left' or 'right'"):
        gh.histogram_scan(path, "x", 4, range="auto", closed="both")
    with pytest.raises(ValueError, match="`device` must be"):
        gh.histogram_scan(path, "x", 4, range="auto", device="tpu")


def test_numpy_integer_bins_with_auto_range(frame: pl.DataFrame) -> None:
    h = gh.histogram_scan(frame, "i", np.int64(8), range="auto", device="cpu")
    expected, _ = np.histogram(frame["i"].to_numpy(), bins=8)
    np.testing.assert_array_equal(h.counts, expected, strict=False)


def test_bad_sources_and_names_are_type_errors(tmp_path: Path) -> None:
    for source in [42, None, b"d.parquet", [42], [tmp_path / "d.parquet", 3.5], {"a": 1}]:
        with pytest.raises(TypeError, match="`source` must be a LazyFrame"):
            gh.histogram_scan(source, "x", 4, range=(0, 1))
    with pytest.raises(ValueError, match="`source` is an empty list"):
        gh.histogram_scan([], "x", 4, range=(0, 1))
    with pytest.raises(FileNotFoundError, match="no file matches"):
        gh.histogram_scan(str(tmp_path / "none*.parquet"), "x", 4, range=(0, 1))
    frame = pl.LazyFrame({"x": [1.0]})
    with pytest.raises(TypeError, match="`column` must be a column name"):
        gh.histogram_scan(frame, 0, 4, range=(0, 1))
    with pytest.raises(TypeError, match="`weights` must be a column name"):
        gh.histogram_scan(frame, "x", 4, range=(0, 1), weights=pl.col("x"))


def test_progress_bar_ends_its_line_on_an_error(tmp_path: Path, monkeypatch) -> None:
    from polars_gpu_hist._scan import progress as _progress

    clock = iter(np.arange(0, 1000, 0.3))
    monkeypatch.setattr(_progress.time, "perf_counter", lambda: float(next(clock)))
    path = tmp_path / "d.csv"
    pl.DataFrame({"x": np.arange(100.0)}).write_csv(path)
    between_passes(monkeypatch, lambda: pl.DataFrame({"x": np.arange(200.0)}).write_csv(path))
    out = io.StringIO()
    with pytest.raises(RuntimeError):
        gh.histogram_scan(path, "x", 4, range="auto", chunk_size=10, progress=out)
    assert out.getvalue().endswith("\n")


def test_auto_range_raises_when_values_appear_in_data_that_had_none(
    tmp_path: Path, monkeypatch
) -> None:
    path = tmp_path / "d.parquet"
    pl.DataFrame({"x": [None, np.nan]}, schema={"x": pl.Float64}).write_parquet(path)
    between_passes(monkeypatch, lambda: pl.DataFrame({"x": [0.5]}).write_parquet(path))
    with pytest.raises(RuntimeError, match=r"'x' without values, the second a value 0\.5 \("):
        gh.histogram_scan(path, "x", 4, range="auto", device="cpu")


def test_weights_may_be_the_column_itself_and_names_may_look_like_globs(tmp_path: Path) -> None:
    path = tmp_path / "d[1].parquet"  # an existing file, though `[1]` reads as a glob
    pl.DataFrame({"x": [1.0, 2.0, 3.0]}).write_parquet(path)
    h = gh.histogram_scan(path, "x", 2, range="auto", weights="x", device="cpu")
    expected, _ = np.histogram([1.0, 2.0, 3.0], bins=2, weights=[1.0, 2.0, 3.0])
    np.testing.assert_array_equal(h.counts, expected)


ESTIMATORS = ["auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt"]


@pytest.mark.filterwarnings("ignore:The number of bins estimated may be suboptimal")
@pytest.mark.parametrize("rule", ESTIMATORS)
@pytest.mark.parametrize("column", ["x", "f", "i"])
def test_estimators_give_numpys_edges_and_counts(
    tmp_path: Path, frame: pl.DataFrame, rule: str, column: str, monkeypatch
) -> None:
    from polars_gpu_hist._scan import scan as _scan

    path = tmp_path / "d.parquet"
    frame.write_parquet(path)
    values = frame[column].to_numpy()
    values = values[~np.isnan(values)] if values.dtype.kind == "f" else values
    if rule in _scan.STREAMED_RULES:
        # Two streaming passes, never the whole column in memory.
        monkeypatch.setattr(_scan, "memory_columns", None)
    for range in [None, (-0.5, 0.75)]:
        expected, edges = np.histogram(values, rule, range=range)
        h = gh.histogram_scan(path, column, rule, range=range, chunk_size=4096, device="cpu")
        np.testing.assert_array_equal(h.counts, expected, strict=False)
        np.testing.assert_array_equal(h.edges, edges.astype(np.float64))


def test_estimators_over_many_batches_of_a_lazy_frame() -> None:
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.gamma(2.0, size=30_000), [np.nan] * 7]).astype(np.float32)
    lf = pl.LazyFrame({"x": x}).with_columns(
        pl.when(pl.int_range(pl.len()) % 11 == 0).then(None).otherwise("x").alias("x")
    )
    valid = lf.collect()["x"].drop_nulls().drop_nans().to_numpy()
    for rule in ["sturges", "fd", "scott"]:
        expected, edges = np.histogram(valid, rule)
        h = gh.histogram_scan(lf, "x", rule, chunk_size=1000, device="cpu")
        np.testing.assert_array_equal(h.counts, expected, strict=False)
        np.testing.assert_array_equal(h.edges, edges.astype(np.float64))
    empty = gh.histogram_scan(pl.LazyFrame({"x": pl.Series([], dtype=pl.Float64)}), "x", "rice")
    np.testing.assert_array_equal(empty.edges, [0.0, 1.0])


def test_integer_bins_in_a_scan(tmp_path: Path, frame: pl.DataFrame) -> None:
    path = tmp_path / "d.parquet"
    days = pl.date_range(dt.date(2024, 1, 1), dt.date(2024, 3, 1), eager=True)
    frame.head(days.len()).with_columns(d=days.shuffle(seed=1)).write_parquet(path)
    i = frame["i"].head(days.len()).to_numpy()
    h = gh.histogram_scan(path, "i", "integer", chunk_size=7, device="cpu")
    expected, edges = np.histogram(i, np.arange(i.min(), i.max() + 2))
    np.testing.assert_array_equal(h.counts, expected, strict=False)
    np.testing.assert_array_equal(h.edges, edges.astype(np.float64))
    h = gh.histogram_scan(path, "i", "integer", range=(-5, 5), weights="w", device="cpu")
    w = frame["w"].head(days.len()).fill_null(0.0).to_numpy()
    expected, _ = np.histogram(i, np.arange(-5, 7), weights=w)
    np.testing.assert_array_equal(h.counts, expected)
    # One bin per day, the edges dates.
    out = gh.histogram_scan(path, "d", "integer", device="cpu").to_frame()
    assert out["bin_start"].to_list() == days.to_list() and out["count"].sum() == days.len()


def test_rules_in_a_scan_refuse_what_numpy_refuses(tmp_path: Path, frame: pl.DataFrame) -> None:
    path = tmp_path / "d.parquet"
    frame.write_parquet(path)
    with pytest.raises(TypeError, match="not supported for weighted data"):
        gh.histogram_scan(path, "x", "fd", weights="w")
    with pytest.raises(TypeError, match="not supported for weighted data"):
        gh.histogram_scan(path, "x", "sturges", weights="w")
    with pytest.raises(ValueError, match='`bins="integer"` needs an integer'):
        gh.histogram_scan(path, "x", "integer")
    with pytest.raises(ValueError, match="two integers"):
        gh.histogram_scan(path, "i", "integer", range=(0.5, 3))
    with pytest.raises(ValueError, match="range='auto'"):
        gh.histogram_scan(path, "x", "fd", range="auto")
    with pytest.raises(ValueError, match="names no rule"):
        gh.histogram_scan(path, "x", "fast")
