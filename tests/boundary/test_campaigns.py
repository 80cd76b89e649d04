"""The campaigns of scripts/campaigns/ (issue 48: a differential run
against numpy, RLIMIT_AS sweeps, Arrow extension columns, CSV text columns, scans past 2^32
rows) run in full by hand; here a bounded sample of each, seconds apiece, in a child process as
a user runs them, so that each script keeps working and its sample keeps passing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CAMPAIGNS = Path(__file__).resolve().parents[2] / "scripts" / "campaigns"
PYTHON_DIR = Path(__file__).resolve().parents[2] / "python"


@pytest.mark.parametrize(
    "script",
    [
        ["differential.py", "--cases", "300"],
        ["memory_sweep.py", "--quick"],
        ["arrow_extensions.py", "--cases", "60"],
        ["csv_text_columns.py", "--cases", "36"],
        ["past_2_32.py", "--quick"],
    ],
    ids=lambda script: script[0],
)
def test_the_campaigns_sample_passes(script: list[str]) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(PYTHON_DIR), os.environ.get("PYTHONPATH", "")]),
    }
    run = subprocess.run(
        [sys.executable, str(CAMPAIGNS / script[0]), *script[1:]],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert run.returncode == 0, f"{run.stdout[-4000:]}\n{run.stderr[-4000:]}"
