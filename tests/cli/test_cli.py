"""The command line: files of each format, the demo data, plots, and errors that are one
`error: ...` line with exit status 2, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from polars_gpu_hist._cli.main import main, terminal_bars
from support.cli import PYTHON_DIR, assert_usage_error, bar_rows, counts_of, run_cli


@pytest.fixture
def data() -> pl.DataFrame:
    rng = np.random.default_rng(3)
    return pl.DataFrame({"name": ["a"] * 500, "v": rng.uniform(0, 10, 500), "w": np.ones(500)})


@pytest.fixture
def parquet(tmp_path: Path, data: pl.DataFrame) -> Path:
    path = tmp_path / "d.parquet"
    data.write_parquet(path)
    return path


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".ipc"])
def test_file_formats(tmp_path: Path, data: pl.DataFrame, suffix: str, capsys) -> None:
    path = tmp_path / f"data{suffix}"
    {".parquet": data.write_parquet, ".csv": data.write_csv, ".ipc": data.write_ipc}[suffix](path)
    assert main([str(path), "--column", "v", "--bins", "5", "--range", "0", "10"]) == 0
    out = capsys.readouterr().out
    expected, _ = np.histogram(data["v"].to_numpy(), bins=5, range=(0, 10))
    assert counts_of(out) == expected.tolist()
    # numpy's bins: [a, b) and the last one closed.
    assert [(r[0], r[3]) for r in bar_rows(out)] == [("[", ")")] * 4 + [("[", "]")]


def test_default_column_is_first_numeric(parquet: Path, capsys) -> None:
    assert main([str(parquet), "--bins", "0,5,10", "--weights", "w"]) == 0
    assert "column 'v', 2 bins" in capsys.readouterr().out


def test_default_column_skips_strings_and_the_weights(tmp_path: Path, capsys) -> None:
    path = tmp_path / "d.csv"
    frame = pl.DataFrame({"label": ["p", "q", "r"], "w": [1.0, 2.0, 3.0], "v": [1, 2, 2]})
    frame.write_csv(path)
    assert main([str(path), "--bins", "2", "--device", "cpu"]) == 0
    assert "column 'w', 2 bins" in capsys.readouterr().out
    assert main([str(path), "--bins", "2", "--weights", "w", "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "column 'v', 2 bins" in out
    assert counts_of(out) == [1.0, 5.0]


def test_demo_data_and_plots(tmp_path: Path, capsys) -> None:
    html = tmp_path / "h.html"
    assert main(["--rows", "20000", "--bins", "12", "--plot", str(html)]) == 0
    out = capsys.readouterr().out
    assert "demo data" in out and "12 bins" in out
    assert "vega" in html.read_text().lower()


def test_png_plot(tmp_path: Path) -> None:
    pytest.importorskip("vl_convert")
    png = tmp_path / "h.png"
    assert main(["--rows", "5000", "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_module_entry_point_runs() -> None:
    done = run_cli("--rows", "1000", "--bins", "3", "--device", "cpu")
    assert done.returncode == 0, done.stderr
    assert "3 bins" in done.stdout and done.stderr == ""


def test_help_exits_zero() -> None:
    done = run_cli("--help")
    assert done.returncode == 0 and "--bins" in done.stdout


def test_files_without_range_take_numpys_range_in_a_first_pass(
    parquet: Path, data: pl.DataFrame, capsys
) -> None:
    assert main([str(parquet), "--column", "v", "--bins", "7", "--progress"]) == 0
    captured = capsys.readouterr()
    expected, _ = np.histogram(data["v"].to_numpy(), bins=7)
    assert counts_of(captured.out) == expected.tolist()


def test_negative_edges_and_range_are_values(tmp_path: Path, capsys) -> None:
    x = np.linspace(-80, 80, 321)
    path = tmp_path / "d.parquet"
    pl.DataFrame({"x": x}).write_parquet(path)
    for flag in ("-b", "--bins"):
        assert main([str(path), flag, "-50,0,50", "--device", "cpu"]) == 0
        out = capsys.readouterr().out
        assert counts_of(out) == np.histogram(x, bins=[-50, 0, 50])[0].tolist()
    assert main([str(path), "-r", "-1e3", "-.5", "-b", "4", "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert counts_of(out) == np.histogram(x, bins=4, range=(-1000, -0.5))[0].tolist()


def test_closed_right_prints_right_closed_bins(tmp_path: Path, capsys) -> None:
    values = np.array([0, 1, 1, 2, 3, 3, 3, 4], dtype=np.int64)
    path = tmp_path / "d.parquet"
    pl.DataFrame({"i": values}).write_parquet(path)
    assert main([str(path), "-b", "4", "--closed", "right", "--device", "cpu"]) == 0
    rows = bar_rows(capsys.readouterr().out)
    # Polars' hist: (a, b] bins, the first closed.
    assert [(r[0], r[3]) for r in rows] == [("[", "]")] + [("(", "]")] * 3
    expected = pl.Series(values).hist(bin_count=4)
    assert [float(r[4].replace(",", "")) for r in rows] == expected["count"].cast(
        pl.Float64
    ).to_list()
    assert [float(r[2]) for r in rows] == expected["breakpoint"].to_list()


def test_weighted_sums_and_densities_print_in_full(tmp_path: Path, capsys) -> None:
    path = tmp_path / "d.parquet"
    w = [1234567.25, 0.125, 1234567.25, 7.0]
    pl.DataFrame({"x": [0.5, 0.5, 1.5, 1.5], "w": w}).write_parquet(path)
    argv = [str(path), "-c", "x", "-b", "0,1,2", "-w", "w", "--device", "cpu"]
    assert main(argv) == 0
    rows = bar_rows(capsys.readouterr().out)
    assert [r[4] for r in rows] == ["1234567.375", "1234574.25"]
    assert main([*argv, "--density"]) == 0
    rows = bar_rows(capsys.readouterr().out)
    expected, _ = np.histogram([0.5, 0.5, 1.5, 1.5], bins=[0, 1, 2], weights=w, density=True)
    assert [r[4] for r in rows] == [f"{d:.6g}" for d in expected]  # not 19 digits


def test_terminal_bars_keep_close_edges_apart() -> None:
    hist = pl.DataFrame(
        {
            "bin_start": [1e6, 1e6 + 0.25, 1e6 + 0.5],
            "bin_end": [1e6 + 0.25, 1e6 + 0.5, 1e6 + 0.75],
            "count": pl.Series([1, 0, 2], dtype=pl.UInt64),
        }
    )
    rows = bar_rows(terminal_bars(hist, closed="left", width=4))
    assert [(r[1], r[2]) for r in rows] == [
        ("1000000", "1000000.25"),
        ("1000000.25", "1000000.5"),
        ("1000000.5", "1000000.75"),
    ]
    assert [r[4] for r in rows] == ["1", "0", "2"]


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["--bins", "abc"], ["--bins", "'abc'"]),
        (["--bins", "1,x"], ["--bins", "'x'"]),
        (["--bins", "0"], ["--bins", "at least 1"]),
        (["-b"], ["-b/--bins", "expected one argument"]),
        (["--rows", "-5"], ["--rows", "at least 1"]),
        (["--rows", "many"], ["--rows", "'many'"]),
        (["--width", "-1"], ["--width"]),
        (["--closed", "middle"], ["--closed", "'middle'"]),
        (["--plot", "h.xyz"], [".xyz", ".html, .json, .png, .svg"]),
        (["--plot", "h"], ["without an extension"]),
        (["--column", "y"], ["no column 'y'", "x (Float64)"]),
        (["--weights", "w"], ["no column 'w' for --weights"]),
        (["--range", "1", "0"], ["range"]),
        (["--range", "0", "nan"], ["range"]),
        (["--bins", "3,2,1"], ["bins"]),
        (["--nope"], ["--nope"]),
    ],
)
def test_bad_arguments_are_one_error_line(args: list[str], fragments: list[str]) -> None:
    assert_usage_error(run_cli("--rows", "100", "--device", "cpu", *args), *fragments)


def test_bad_files_and_columns_are_one_error_line(
    tmp_path: Path, parquet: Path, data: pl.DataFrame
) -> None:
    corrupt = tmp_path / "corrupt.parquet"
    corrupt.write_bytes(b"PAR1 this is not a parquet file")
    truncated = tmp_path / "truncated.parquet"
    truncated.write_bytes(parquet.read_bytes()[:-100])
    categorical = tmp_path / "cat.ipc"
    data.with_columns(pl.col("name").cast(pl.Categorical)).write_ipc(categorical)
    strings = tmp_path / "strings.csv"
    pl.DataFrame({"s": ["a", "b"]}).write_csv(strings)
    cases = [
        ([str(corrupt)], ["cannot read", "corrupt.parquet"]),
        ([str(truncated)], ["cannot read", "truncated.parquet"]),
        ([str(tmp_path / "missing.parquet")], ["no such file"]),
        ([str(tmp_path / "x.xlsx")], ["cannot read", ".parquet"]),
        ([str(categorical), "--column", "name"], ["'name'", "dtype Categorical"]),
        ([str(parquet), "--column", "name"], ["'name'", "dtype String"]),
        ([str(strings)], ["no column", "can be histogrammed", "s (String)"]),
        ([str(parquet), "--column", "v", "--weights", "name"], ["weights", "String"]),
        ([str(parquet), "--column", "nope"], ["no column 'nope'"]),
    ]
    for args, fragments in cases:
        assert_usage_error(run_cli(*args, "--device", "cpu"), *fragments)


def test_plot_is_checked_before_the_file_is_read(tmp_path: Path) -> None:
    corrupt = tmp_path / "corrupt.parquet"
    corrupt.write_bytes(b"not parquet")
    assert_usage_error(run_cli(str(corrupt), "--plot", str(tmp_path / "h.xyz")), ".xyz")
    missing = tmp_path / "no" / "such" / "dir" / "h.html"
    assert_usage_error(run_cli(str(corrupt), "--plot", str(missing)), "no directory")
    assert_usage_error(run_cli(str(corrupt), "--plot", str(tmp_path)), "extension")
    assert not missing.parent.exists()


@pytest.mark.parametrize(
    ("hidden", "suffix"),
    [(["vl_convert"], ".png"), (["vl_convert"], ".svg"), (["altair", "vl_convert"], ".html")],
)
def test_plot_without_the_plot_extra(tmp_path: Path, hidden: list[str], suffix: str) -> None:
    # `sys.modules[name] = None` makes `import name` raise ImportError, as if not installed.
    prelude = "import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in hidden)
    done = run_cli("--rows", "100", "--plot", str(tmp_path / f"h{suffix}"), prelude=prelude)
    assert_usage_error(done, "pip install polars-gpu-hist[plot]")
    assert not (tmp_path / f"h{suffix}").exists()


def test_html_plot_needs_only_altair(tmp_path: Path) -> None:
    done = run_cli(
        "--rows",
        "100",
        "--device",
        "cpu",
        "--plot",
        str(tmp_path / "h.html"),
        prelude="import sys\nsys.modules['vl_convert'] = None",
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "h.html").exists()


def test_main_returns_two_after_one_error_line(capsys) -> None:
    assert main(["--rows", "10", "--bins", "abc"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ")


def test_an_internal_error_is_one_line_too(monkeypatch, capsys) -> None:
    import polars_gpu_hist._cli.main as cli

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(cli, "terminal_bars", broken)
    assert main(["--rows", "10", "--device", "cpu"]) == 1
    err = capsys.readouterr().err
    assert err == "error: internal error, please report it: ZeroDivisionError: a bug\n"


def test_a_closed_pipe_is_not_a_traceback() -> None:
    # 20000 lines, far more than a pipe holds: the CLI writes on after `head` has left.
    env = {**os.environ, "PYTHONPATH": PYTHON_DIR}
    command = (
        f"{sys.executable} -m polars_gpu_hist --rows 1000 --bins 20000 --device cpu | head -n 1"
    )
    done = subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.stdout.startswith("demo data")
    assert done.stderr == "", done.stderr


@pytest.mark.filterwarnings("ignore:The number of bins estimated may be suboptimal")
@pytest.mark.parametrize(
    "rule", ["auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt"]
)
def test_numpys_estimators_on_files(tmp_path: Path, rule: str, capsys) -> None:
    rng = np.random.default_rng(8)
    x = np.concatenate([rng.gamma(2.0, 3.0, 3000), [np.nan]])
    path = tmp_path / "d.parquet"
    pl.DataFrame({"x": x, "f": x.astype(np.float32)}).write_parquet(path)
    valid = x[~np.isnan(x)]
    for column, values in (("x", valid), ("f", valid.astype(np.float32))):
        for extra in ([], ["--range", "1", "9"]):
            argv = [str(path), "-c", column, "-b", rule, "--device", "cpu", "--all-bins"]
            assert main([*argv, *extra]) == 0
            out = capsys.readouterr().out
            range = None if not extra else (1.0, 9.0)
            expected, edges = np.histogram(values, rule, range=range)
            assert counts_of(out) == expected.tolist(), (column, extra)
            rows = bar_rows(out)
            assert f"{len(expected)} bins" in out
            assert float(rows[0][1]) == pytest.approx(edges[0], rel=1e-5)
            assert float(rows[-1][2]) == pytest.approx(edges[-1], rel=1e-5)


def test_integer_bins_on_files_and_the_demo(tmp_path: Path, capsys) -> None:
    n = np.array([1, 1, 2, 5, 2, 1, 0, 3])
    path = tmp_path / "d.csv"
    pl.DataFrame({"passengers": n}).write_csv(path)
    assert main([str(path), "--bins", "integer", "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    expected, _ = np.histogram(n, np.arange(n.min(), n.max() + 2))
    assert counts_of(out) == expected.tolist()
    assert [row[1] for row in bar_rows(out)] == ["0", "1", "2", "3", "4", "5"]
    assert main([str(path), "-b", "integer", "-r", "1", "3", "--device", "cpu"]) == 0
    assert counts_of(capsys.readouterr().out) == [3, 2, 1]
    assert main(["--rows", "1000", "--bins", "sturges", "--device", "cpu"]) == 0
    assert "11 bins" in capsys.readouterr().out  # numpy: log2(999) + 1 -> 11 for the demo


def test_rules_that_cannot_apply_are_one_error_line(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    pl.DataFrame({"x": [0.5, 1.5], "i": [1, 2], "w": [1.0, 2.0]}).write_parquet(path)
    cases = [
        (["-c", "x", "-b", "fd", "-w", "w"], ["fd", "weighted data"]),
        (["-c", "x", "-b", "integer"], ["integer", "Float64"]),
        (["-c", "i", "-b", "integer", "-r", "0.5", "2"], ["integer", "two integers"]),
        (["-c", "x", "-b", "Auto"], ["--bins", "'Auto'"]),
    ]
    for args, fragments in cases:
        assert_usage_error(run_cli(str(path), *args, "--device", "cpu"), *fragments)
