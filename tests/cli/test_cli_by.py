"""The command line's ``--by`` (issue 47): one histogram per group of key columns, the binning
shared, groups in order of first appearance; a directory of files read whole; progress with
bytes a second and the time left."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from support.cli import assert_usage_error, run_cli


def test_by_draws_each_group_with_one_binning(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    frame = pl.DataFrame({"x": rng.normal(size=2000), "g": rng.choice(["b", "a", "c"], 2000)})
    path = tmp_path / "d.parquet"
    frame.write_parquet(path)
    done = run_cli(str(path), "--column", "x", "--by", "g", "--bins", "4", "--range", "-2", "2")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    headers = [line for line in out.splitlines() if line.startswith("g = ")]
    assert headers == [f"g = {k}" for k in frame["g"].unique(maintain_order=True)]
    expected = frame.filter(pl.col("x").is_between(-2, 2)).height
    assert f"{expected:,} counted in 3 groups" in out


def test_by_keys_are_checked_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    pl.DataFrame({"x": [1.0, 2.0], "g": [1, 2]}).write_parquet(path)
    assert_usage_error(run_cli(str(path), "--by", "nope"), "no column 'nope' for --by")
    assert_usage_error(run_cli(str(path), "--column", "g", "--by", "x"), "not floats")


def test_a_hive_directory_and_progress(tmp_path: Path) -> None:
    root = tmp_path / "data"
    for year in (2023, 2024):
        (root / f"year={year}").mkdir(parents=True)
        pl.DataFrame({"x": np.arange(1000.0) + year}).write_parquet(
            root / f"year={year}" / "part.parquet"
        )
    done = run_cli(str(root), "--column", "x", "--by", "year", "--progress", "-b", "3")
    assert done.returncode == 0, done.stderr
    assert "year = 2023" in done.stdout and "year = 2024" in done.stdout
    assert "2,000/2,000 rows" in done.stderr and "/s" in done.stderr, done.stderr
