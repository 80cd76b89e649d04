"""The deterministic (fixed-point) weighted sums are opt-in (`POLARS_GPU_HIST_SUMS=fixed`, read
once a process: src/fixed.rs `sums`), so the modules that prove them run in a process of their
own with the flag set: each skips itself without it, and a test of the normal suite runs it in a
child pytest under the flag."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

FLAG = "POLARS_GPU_HIST_SUMS"
ROOT = Path(__file__).resolve().parents[2]


def fixed_sums_on() -> bool:
    """Whether this process sums weights in fixed point (the flag as src/fixed.rs reads it)."""
    return os.environ.get(FLAG, "").strip() == "fixed"


def skip_unless_fixed_sums() -> None:
    """A module-level skip for a module that proves the fixed-point sums."""
    if not fixed_sums_on():
        pytest.skip(
            f"proves the fixed-point sums: needs {FLAG}=fixed in the process (read once a "
            "process); tests/contract/test_fixed_sums_flag*.py run it so",
            allow_module_level=True,
        )


def run_under_fixed_sums(paths: list[str], marker: str) -> str:
    """Runs the test modules at `paths` (from the repository root) in a child pytest with
    POLARS_GPU_HIST_SUMS=fixed and `-m marker`; fails unless they ran, passed and none skipped
    itself. Returns pytest's summary line."""
    env = {**os.environ, FLAG: "fixed"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", marker, *paths],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    output = done.stdout + done.stderr
    summary = output.strip().splitlines()[-1] if output.strip() else ""
    assert done.returncode == 0, output[-6000:]
    passed = re.search(r"(\d+) passed", summary)
    assert passed is not None and int(passed.group(1)) > 0, output[-6000:]
    return summary
