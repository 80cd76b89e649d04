"""Empty files give numpy's answer for their dtype, through histogram_scan and the command line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh
from polars_gpu_hist._cli.main import main
from support.cli import counts_of

ESTIMATORS = ["auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt"]


@pytest.mark.parametrize("suffix", [".parquet", ".ipc"])
@pytest.mark.parametrize("rule", [*ESTIMATORS, "integer", 10])
@pytest.mark.parametrize("dtype", [pl.UInt8, pl.Int64, pl.Float32, pl.Float64])
def test_an_empty_file_gives_numpys_answer_for_its_dtype(
    tmp_path: Path, suffix: str, rule: object, dtype: pl.DataType
) -> None:
    if rule == "integer" and dtype.is_float():
        pytest.skip("integer bins refuse float columns")
    path = tmp_path / f"empty{suffix}"
    frame = pl.DataFrame({"x": pl.Series([], dtype=dtype)})
    frame.write_parquet(path) if suffix == ".parquet" else frame.write_ipc(path)
    h = gh.histogram_scan(path, "x", rule, range="auto" if rule == 10 else None)
    empty = frame["x"].to_numpy()
    counts, edges = np.histogram(empty, "auto" if rule == "integer" else rule)
    if rule == "integer":
        counts, edges = np.array([0]), np.array([0.0, 1.0])  # np.arange(0, 2)
    np.testing.assert_array_equal(h.counts, counts)
    np.testing.assert_array_equal(h.edges, edges)
    assert h._core.dtypes == [str(dtype)]
    assert h.flow.rows == 0


@pytest.mark.parametrize("rule", ["auto", "fd", "sturges"])
def test_the_cli_on_an_empty_file(tmp_path: Path, rule: str, capsys) -> None:
    path = tmp_path / "empty.parquet"
    pl.DataFrame({"x": pl.Series([], dtype=pl.UInt8)}).write_parquet(path)
    assert main([str(path), "-b", rule]) == 0
    out = capsys.readouterr().out
    assert counts_of(out) == [0.0] and "0 rows: 0 counted" in out
