"""histogram_scan: files and LazyFrames in bounded batches, range="auto", bounded memory."""

from __future__ import annotations

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
    from polars_gpu_hist import _scan

    clock = iter(np.arange(0, 1000, 0.3))
    monkeypatch.setattr(_scan.time, "perf_counter", lambda: float(next(clock)))
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
    scan = peak_rss(path, "scan")
    assert scan["total"] == rows
    assert scan["peak_kib"] - scan["base_kib"] < bound_kib, scan
    # The bound is tight enough to catch a scan that loads the file.
    whole = peak_rss(path, "read")
    assert whole["peak_kib"] - whole["base_kib"] > bound_kib, whole
