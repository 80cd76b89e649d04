"""What the command line prints: a bar when --progress asks, however short
the read; --rows refused for a file; densities to 6 digits; many bins elided with the fullest
named; "did you mean" for misspelt flags, choices and rules."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from polars_gpu_hist._cli.main import MAX_LINES, main

# `[a, b)  count  ###`: the count (or density) is group 1.
BAR_LINE = re.compile(r"^[\[(]\s*\S+,\s*\S+[\])]\s+(\S+)")


def shown(out: str) -> list[str]:
    """The counts (or densities) of the bar lines, as printed."""
    return [m.group(1) for m in map(BAR_LINE.match, out.splitlines()) if m]


@pytest.fixture
def normal(tmp_path: Path) -> Path:
    path = tmp_path / "d.parquet"
    pl.DataFrame({"x": np.random.default_rng(1).normal(size=20_000)}).write_parquet(path)
    return path


@pytest.mark.parametrize("bins", ["5", "auto"])
def test_progress_asked_for_draws_even_a_short_read(normal: Path, bins: str, capsys) -> None:
    assert main([str(normal), "-b", bins, "--progress"]) == 0
    err = capsys.readouterr().err
    assert "20,000/20,000 rows" in err and err.endswith("\n")
    assert main([str(normal), "-b", bins]) == 0
    assert capsys.readouterr().err == ""  # not asked, not a terminal: nothing


def test_rows_with_a_file_is_an_error_naming_the_way(normal: Path, capsys) -> None:
    assert main([str(normal), "--rows", "10"]) == 2
    err = capsys.readouterr().err
    assert "--rows sets the size of the demo data" in err and "--where" in err


def test_a_density_prints_six_significant_digits(normal: Path, capsys) -> None:
    assert main([str(normal), "-b", "7", "--density"]) == 0
    out = capsys.readouterr().out
    values = shown(out)
    assert len(values) == 7
    assert all(len(v.replace(".", "").lstrip("0")) <= 6 for v in values), values
    x = pl.read_parquet(normal)["x"].to_numpy()
    expected, _ = np.histogram(x, 7, density=True)
    assert [float(v) for v in values] == pytest.approx(expected, rel=1e-5)


def test_many_bins_print_the_ends_a_count_of_the_rest_and_the_fullest(normal: Path, capsys) -> None:
    assert main([str(normal), "-b", "fd"]) == 0
    out = capsys.readouterr().out
    x = pl.read_parquet(normal)["x"].to_numpy()
    expected, _ = np.histogram(x, "fd")
    assert len(expected) > MAX_LINES
    counts = [int(c.replace(",", "")) for c in shown(out)]
    half = MAX_LINES // 2
    assert counts == [*expected[:half], *expected[-half:]]
    assert f"... {len(expected) - MAX_LINES:,} more bins (--all-bins" in out
    (fullest,) = [line for line in out.splitlines() if line.startswith("fullest bin: ")]
    assert fullest.endswith(f"{expected.max():,}")
    assert f"{len(expected):,} bins" in out.splitlines()[0]
    assert "20,000 rows: 20,000 counted" in out
    assert main([str(normal), "-b", "fd", "--all-bins"]) == 0
    assert len(shown(capsys.readouterr().out)) == len(expected)


@pytest.mark.parametrize(
    ("argv", "suggestion"),
    [
        (["--densty"], "--densty: did you mean --density?"),
        (["--progres", "--widht", "3"], "--widht: did you mean --width?"),
        (["--device", "gpuu"], "did you mean gpu?"),
        (["-b", "sturge"], "did you mean sturges?"),
        (["--closed", "rigth"], "did you mean right?"),
    ],
)
def test_a_typo_gets_did_you_mean(argv: list[str], suggestion: str, capsys) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert suggestion in err and err.startswith("error: ") and len(err.splitlines()) == 1


def test_an_unknown_flag_far_from_any_gets_no_guess(capsys) -> None:
    assert main(["--zzzzzzzz"]) == 2
    assert "did you mean" not in capsys.readouterr().err
