"""polars_gpu_hist.dask.histogram_scan on one worker per GPU (issue 52): every configuration
equal to the CPU's scan of the same files, each worker counting on its own GPU."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh

pytest.importorskip("dask")
distributed = pytest.importorskip("dask.distributed")
cupy = pytest.importorskip("cupy")

import polars_gpu_hist.dask as ghd  # noqa: E402


def gpus() -> int:
    try:
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:
        return 0


@pytest.mark.skipif(gpus() < 1, reason="needs a GPU")
@pytest.mark.parametrize(
    "bins, range", [(256, (0, 1)), (65536, (0, 1)), (64, "auto"), ("sturges", None)]
)
def test_one_worker_per_gpu_equals_the_cpu_scan(tmp_path: Path, bins, range) -> None:
    rng = np.random.default_rng(52)
    for k in range(6):
        x = rng.random(300_000, dtype=np.float32)
        x[::1001] = np.nan
        pl.DataFrame({"x": x}).write_parquet(tmp_path / f"p{k}.parquet")
    want = gh.histogram_scan(tmp_path, "x", bins, range=range, device="cpu")
    with ghd.cluster(min(gpus(), 2)) as cluster, distributed.Client(cluster) as client:
        seen = client.run(lambda: __import__("os").environ["CUDA_VISIBLE_DEVICES"])
        assert sorted(seen.values()) == [str(i) for i in range(min(gpus(), 2))]
        got = ghd.histogram_scan(tmp_path, "x", bins, range=range, device="gpu").compute()
    assert got == want, (got, want)
