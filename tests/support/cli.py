"""Running the command line and reading its bars (cli/, scan/, args/ tests)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

PYTHON_DIR = str(Path(__file__).resolve().parents[2] / "python")


# `[a, b)  count  ###`: the interval's brackets, its edges and its count (or sum).
BAR_LINE = re.compile(r"^([\[(])\s*(\S+),\s*(\S+)([\])])\s+(\S+)")


def bar_rows(out: str) -> list[tuple[str, str, str, str, str]]:
    return [m.groups() for m in map(BAR_LINE.match, out.splitlines()) if m]


def counts_of(out: str) -> list[float]:
    return [float(row[4].replace(",", "")) for row in bar_rows(out)]


def run_cli(*args: str, prelude: str = "") -> subprocess.CompletedProcess[str]:
    """``python -m polars_gpu_hist ARGS`` in a fresh interpreter (``prelude`` runs first)."""
    env = {**os.environ, "PYTHONPATH": PYTHON_DIR}
    code = f"{prelude}\nimport sys, runpy\nrunpy.run_module('polars_gpu_hist', run_name='__main__')"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=300
    )


def assert_usage_error(done: subprocess.CompletedProcess[str], *fragments: str) -> str:
    """Exit status 2, and stderr is one `error: ...` line holding every fragment."""
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 2, (done.returncode, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]
