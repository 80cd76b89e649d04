"""The typed path: mypy and pyright (basedpyright, in pyright's "standard" mode) accept correct
calls of the module-level functions and report wrong arguments, while the registered
``gpu_hist`` namespace stays invisible to them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import polars_gpu_hist

TESTS = Path(__file__).parent
EXAMPLE = TESTS / "typed_usage.py"

# One wrong call a line; what mypy must say about it (its error code and a fragment).
WRONG_CALLS = {
    'gh.histogram_expr("x", bins="ten")': ("arg-type", 'Argument "bins"'),
    'gh.histogram_expr("x", 10, device="tpu")': ("arg-type", 'Argument "device"'),
    'gh.histogram_expr("x", 10, closed="both")': ("arg-type", 'Argument "closed"'),
    'gh.histogram_expr("x", 10, range="auto")': ("arg-type", 'Argument "range"'),
    'gh.histogram_expr("x", 10, bogus=1)': ("call-arg", 'Unexpected keyword argument "bogus"'),
    'gh.histogram_expr("x", 10, (0, 1))': ("call-arg", "Too many positional arguments"),
    'gh.histogram(np.zeros(3), 4, kernel="fast")': ("arg-type", 'Argument "kernel"'),
    'gh.Histogram(4, range=(0, 1), device="tpu")': ("arg-type", 'Argument "device"'),
    'gh.histogram_scan("a.parquet", "x", 4, range="full")': ("arg-type", 'Argument "range"'),
    "e: int = gh.histogram_expr('x')": ("assignment", "Incompatible types in assignment"),
    'plot.bars(pl.DataFrame(), closed="both")': ("arg-type", 'Argument "closed"'),
    'gh.hist_expr("x", bins="ten")': ("arg-type", 'Argument "bins"'),
    'gh.hist_expr("x", bins=[0, 1], bin_count="4")': ("arg-type", 'Argument "bin_count"'),
    'gh.histogramdd("x", "y", bins="ten")': ("arg-type", 'Argument "bins"'),
    'gh.histogramdd("x", "y", bins=[4, "ten"])': ("list-item", "List item 1"),
    'gh.histogramdd("x", "y", range=(0, 1))': ("arg-type", 'Argument "range"'),
    'gh.histogram2d("x", "y", bins=["fd", "ten"])': ("list-item", "List item 1"),
    # Why the typed path exists: the namespace is registered at run time only.
    'pl.col("x").gpu_hist.histogram(10)': ("attr-defined", 'has no attribute "gpu_hist"'),
}

# Correct at run time (``_bins`` takes numpy integers and any sequence or array of edges), but
# ``BinsArg = int | Sequence[float]`` refuses them: numpy arrays and Series are not Sequences.
ARRAY_CALLS = """\
import numpy as np
import polars as pl

import polars_gpu_hist as gh

a: pl.Expr = gh.histogram_expr("x", bins=np.linspace(0, 1, 11))
b: pl.Expr = gh.histogram_expr("x", bins=pl.Series([0.0, 0.5, 1.0]))
c: pl.Expr = gh.histogram_expr("x", bins=np.int64(8), range=(0, 1))
d: gh.Histogram = gh.Histogram(np.linspace(0, 1, 5))
"""

MYPY_LINE = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+): error: (?P<text>.*)\[(?P<code>[a-z-]+)\]$")


# The package the tests import (the work tree, or the installed one), for the checkers to find.
PACKAGE_ROOT = str(Path(polars_gpu_hist.__file__).parent.parent)
# What the example files' errors look like to a test: `{file name: {line: ["text [code]"]}}`.
Errors = dict[str, dict[int, list[str]]]


@pytest.fixture(scope="module")
def checked_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    """A work directory and the files both checkers read: the example, the wrong calls (one a
    line from line 7) and the calls with arrays."""
    work = tmp_path_factory.mktemp("typing")
    wrong = work / "wrong_calls.py"
    header = "import numpy as np\nimport polars as pl\n\nimport polars_gpu_hist as gh\n"
    header += "from polars_gpu_hist import plot\n\n"
    wrong.write_text(header + "\n".join(WRONG_CALLS) + "\n")
    arrays = work / "array_calls.py"
    arrays.write_text(ARRAY_CALLS)
    return work, [EXAMPLE, wrong, arrays]


@pytest.fixture(scope="module")
def mypy_errors(checked_files: tuple[Path, list[Path]]) -> Errors:
    """mypy's errors (``text [code]`` by file name and line) for the example and the wrong
    calls, from one run on all files (the first analysis of Polars takes most of the time)."""
    pytest.importorskip("mypy")
    work, files = checked_files
    package_root = PACKAGE_ROOT
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    env.pop("MYPYPATH", None)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--follow-imports=silent",  # the users' files are checked, not the libraries'
            "--no-error-summary",
            "--show-error-codes",
            "--hide-error-context",
            "--no-pretty",
            "--cache-dir",
            str(work / "cache"),
            "--config-file",
            os.devnull,
            *map(str, files),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=work,
        timeout=300,
    )
    if run.returncode not in (0, 1):  # 2: mypy itself failed
        pytest.fail(f"mypy did not run: {run.stdout}{run.stderr}")
    errors: dict[str, dict[int, list[str]]] = {}
    for line in run.stdout.splitlines():
        found = MYPY_LINE.match(line)
        if found:
            lines = errors.setdefault(Path(found["file"]).name, {})
            lines.setdefault(int(found["line"]), []).append(f"{found['text']}[{found['code']}]")
    assert errors or run.returncode == 0, run.stdout
    return errors


@pytest.fixture(scope="module")
def pyright_errors(checked_files: tuple[Path, list[Path]]) -> Errors:
    """pyright's errors (``text [rule]`` by file name and line), from basedpyright in pyright's
    "standard" mode: the checks of pyright itself, run by its own Node.js from PyPI."""
    pytest.importorskip("basedpyright")
    work, files = checked_files
    config = work / "pyrightconfig.json"
    config.write_text(
        json.dumps(
            {
                "typeCheckingMode": "standard",
                "extraPaths": [PACKAGE_ROOT],
                "pythonVersion": f"{sys.version_info.major}.{sys.version_info.minor}",
            }
        )
    )
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "basedpyright",
            "--outputjson",
            "--pythonpath",
            sys.executable,
            "--project",
            str(config),
            *map(str, files),
        ],
        capture_output=True,
        text=True,
        cwd=work,
        timeout=300,
    )
    if run.returncode not in (0, 1):  # 1: errors found; others: pyright itself failed
        pytest.fail(f"basedpyright did not run: {run.stdout[-2000:]}{run.stderr}")
    errors: Errors = {}
    for d in json.loads(run.stdout)["generalDiagnostics"]:
        if d["severity"] == "error":
            lines = errors.setdefault(Path(d["file"]).name, {})
            line = d["range"]["start"]["line"] + 1
            lines.setdefault(line, []).append(f"{d['message']} [{d.get('rule', '')}]")
    return errors


@pytest.fixture(params=["mypy", "pyright"])
def checker_errors(request: pytest.FixtureRequest) -> Errors:
    """Either checker's errors (the tests that hold for both)."""
    return request.getfixturevalue(f"{request.param}_errors")


def test_correct_calls_of_the_typed_functions_pass_both_checkers(checker_errors: Errors) -> None:
    assert checker_errors.get(EXAMPLE.name, {}) == {}


@pytest.mark.parametrize("call", list(WRONG_CALLS))
def test_mypy_reports_a_wrong_argument(
    mypy_errors: dict[str, dict[int, list[str]]], call: str
) -> None:
    code, fragment = WRONG_CALLS[call]
    line = 7 + list(WRONG_CALLS).index(call)
    reported = mypy_errors.get("wrong_calls.py", {}).get(line, [])
    assert any(fragment in e and e.endswith(f"[{code}]") for e in reported), (call, reported)


def test_every_wrong_call_is_reported_on_its_own_line(checker_errors: Errors) -> None:
    lines = sorted(checker_errors.get("wrong_calls.py", {}))
    assert lines == list(range(7, 7 + len(WRONG_CALLS))), checker_errors


def test_pyright_names_the_wrong_argument(pyright_errors: Errors) -> None:
    reported = pyright_errors.get("wrong_calls.py", {})
    for line, call in enumerate(WRONG_CALLS, start=7):
        errors = " ".join(reported.get(line, []))
        if "Argument" in WRONG_CALLS[call][1]:
            name = WRONG_CALLS[call][1].split('"')[1]
            assert f'parameter "{name}"' in errors, (call, errors)


def test_edges_as_arrays_pass_both_checkers(checker_errors: Errors) -> None:
    assert checker_errors.get("array_calls.py", {}) == {}


def test_the_typed_example_runs() -> None:
    import typed_usage

    by_group = typed_usage.run()
    assert by_group.columns == ["g", "bin_start", "bin_end", "count"]
    assert by_group["count"].sum() == 101
