"""The prebuilt kernels' paths on a GPU: the CUBIN of the device's architecture, the
bundle's PTX (`POLARS_GPU_HIST_KERNELS=ptx`), NVRTC 12.0's PTX as under a CUDA 12 driver
(`POLARS_GPU_HIST_DRIVER_VERSION=12000`), each in a fresh process, counts equal to numpy's.
Run on a machine with a GPU: -m gpu."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import polars_gpu_hist as gh

BUNDLE = Path(gh.__file__).parent / "kernels.bundle"

# Counts of every common dtype on the GPU against numpy, and what `explain` says of the kernels.
PROBE = """
import json
import numpy as np
import polars as pl
import polars_gpu_hist as gh
rng = np.random.default_rng(7)
ok = True
for dtype in ("float32", "float64", "int32", "int64", "uint8"):
    x = (rng.random(1 << 20) * 200 - 50).astype(dtype)
    for bins, rng_ in ((64, (0, 100)), (1000, None)):
        got = gh.histogram(pl.Series(x), bins, range=rng_, device="gpu")["count"].to_numpy()
        want = np.histogram(x, bins, range=rng_)[0]
        ok &= bool((got == want).all())
text = gh.explain(pl.Series(x), 64, device="gpu")
kernels = [line for line in text.splitlines() if line.startswith("kernels")]
print(json.dumps({"ok": ok, "kernels": kernels}))
"""


def probe(**env: str) -> dict:
    run = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "POLARS_GPU_HIST_CACHE": "/nonexistent/no-cache", **env},
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.fixture(autouse=True)
def _needs_the_bundle() -> None:
    if not gh.gpu_available():
        pytest.skip("no GPU")
    if not BUNDLE.exists():
        pytest.skip("no kernels.bundle beside the package (make bundle)")


def test_the_devices_own_cubin_is_used() -> None:
    out = probe()
    assert out["ok"]
    assert "(CUBIN, NVRTC 13.0)" in out["kernels"][0], out


def test_the_ptx_path_counts_like_numpy() -> None:
    out = probe(POLARS_GPU_HIST_KERNELS="ptx")
    assert out["ok"]
    assert "PTX for compute_75 (NVRTC 13.0)" in out["kernels"][0], out


def test_the_cuda_12_path_counts_like_numpy() -> None:
    out = probe(POLARS_GPU_HIST_DRIVER_VERSION="12000")
    assert out["ok"]
    assert "PTX for compute_70 (NVRTC 12.0)" in out["kernels"][0], out


def test_a_bad_kernel_source_is_named() -> None:
    run = subprocess.run(
        [sys.executable, "-c", "import polars_gpu_hist as gh; print(gh.gpu_available())"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "POLARS_GPU_HIST_KERNELS": "cubin"},
    )
    assert run.stdout.strip() == "False"
    code = (
        "import polars as pl, polars_gpu_hist as gh\n"
        "try:\n"
        "    gh.histogram(pl.Series([1.0]), 2, device='gpu')\n"
        "except Exception as e:\n"
        "    print(e)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "POLARS_GPU_HIST_KERNELS": "cubin"},
    )
    assert "POLARS_GPU_HIST_KERNELS" in run.stdout, run.stdout + run.stderr
