"""The command line: files of each format, the demo data, plots and errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from polars_gpu_hist.__main__ import main


@pytest.fixture
def data(tmp_path: Path) -> pl.DataFrame:
    rng = np.random.default_rng(3)
    return pl.DataFrame({"name": ["a"] * 500, "v": rng.uniform(0, 10, 500), "w": np.ones(500)})


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".ipc"])
def test_file_formats(tmp_path: Path, data: pl.DataFrame, suffix: str, capsys) -> None:
    path = tmp_path / f"data{suffix}"
    {".parquet": data.write_parquet, ".csv": data.write_csv, ".ipc": data.write_ipc}[suffix](path)
    assert main([str(path), "--column", "v", "--bins", "5", "--range", "0", "10"]) == 0
    out = capsys.readouterr().out
    expected, _ = np.histogram(data["v"].to_numpy(), bins=5, range=(0, 10))
    lines = [line for line in out.splitlines() if line.startswith("[")]
    assert len(lines) == 5
    assert [int(line.split(")")[1].split()[0]) for line in lines] == expected.tolist()


def test_default_column_is_first_numeric(tmp_path: Path, data: pl.DataFrame, capsys) -> None:
    path = tmp_path / "d.parquet"
    data.write_parquet(path)
    main([str(path), "--bins", "0,5,10", "--weights", "w"])
    assert "column 'v', 2 bins" in capsys.readouterr().out


def test_demo_data_and_plots(tmp_path: Path, capsys) -> None:
    html = tmp_path / "h.html"
    assert main(["--rows", "20000", "--bins", "12", "--plot", str(html)]) == 0
    out = capsys.readouterr().out
    assert "demo data" in out and "12 bins" in out
    assert "vega" in html.read_text().lower()


def test_png_plot(tmp_path: Path) -> None:
    pytest.importorskip("vl_convert")
    png = tmp_path / "h.png"
    main(["--rows", "5000", "--plot", str(png)])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_errors_are_messages_not_tracebacks(tmp_path: Path, data: pl.DataFrame) -> None:
    path = tmp_path / "d.parquet"
    data.write_parquet(path)
    for argv, message in [
        ([str(tmp_path / "missing.parquet")], "no such file"),
        ([str(path), "--column", "nope"], "no column"),
        ([str(path), "--column", "name"], "dtype String"),
        ([str(tmp_path / "x.xlsx")], "cannot read"),
    ]:
        with pytest.raises(SystemExit, match=message):
            main(argv)


def test_module_entry_point_runs() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "polars_gpu_hist", "--rows", "1000", "--bins", "3"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "3 bins" in done.stdout


def test_files_without_range_take_numpys_range_in_a_first_pass(
    tmp_path: Path, data: pl.DataFrame, capsys
) -> None:
    path = tmp_path / "d.parquet"
    data.write_parquet(path)
    assert main([str(path), "--column", "v", "--bins", "7", "--progress"]) == 0
    captured = capsys.readouterr()
    expected, _ = np.histogram(data["v"].to_numpy(), bins=7)
    lines = [line for line in captured.out.splitlines() if line.startswith("[")]
    assert [int(line.split(")")[1].split()[0]) for line in lines] == expected.tolist()
