"""Dask on a host with two GPUs (marker `gpu`): one worker per GPU, exact counts.

Runs without the project's conftest (`pytest --noconftest -m gpu tests/test_dask_gpu.py`, see
scripts/dask_gpu_check.sh), so it checks for its GPUs itself.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

import polars_gpu_hist as gh

pytestmark = pytest.mark.gpu

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("dask.distributed")

import polars_gpu_hist.dask as ghd  # noqa: E402


def gpu_count() -> int:
    if shutil.which("nvidia-smi") is None:
        return 0
    done = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
    return sum(line.startswith("GPU ") for line in done.stdout.splitlines())


@pytest.fixture(scope="module")
def two_gpus() -> None:
    if gpu_count() < 2 or not gh.gpu_available():
        pytest.skip("needs two NVIDIA GPUs with a driver")


def check_exact_on_every_gpu(client: distributed.Client) -> None:
    seen = client.run(lambda: (os.environ.get("CUDA_VISIBLE_DEVICES"), gh.gpu_available()))
    assert len(seen) == 2 and all(ok for _, ok in seen.values()), seen
    # Each worker's first visible GPU is another device.
    assert len({visible.split(",")[0] for visible, _ in seen.values()}) == 2, seen
    # Generated on the workers, never on the client; 64 partitions over both.
    x = da.random.default_rng(0).random(1 << 26, dtype=np.float32, chunks=1 << 20).persist()
    distributed.wait(x)
    holders = {w for w, keys in client.has_what().items() if keys}
    assert len(holders) == 2, "both workers hold partitions"
    for bins, rng in [(1000, (0.0, 1.0)), (65_536, (0.25, 0.75))]:
        got = ghd.histogram(x, bins=bins, range=rng, device="gpu").compute()
        expected, edges = np.histogram(x.compute(), bins=bins, range=rng)
        np.testing.assert_array_equal(got.counts, expected, strict=False)
        np.testing.assert_array_equal(got.edges, edges.astype(np.float64))
    edges = np.sort(np.random.default_rng(1).random(300))
    got = ghd.histogram(x, bins=edges, device="gpu").compute()
    np.testing.assert_array_equal(
        got.counts, np.histogram(x.compute(), bins=edges)[0], strict=False
    )


def test_local_cuda_cluster_two_workers_exact(two_gpus: None) -> None:
    dask_cuda = pytest.importorskip("dask_cuda")
    cluster = dask_cuda.LocalCUDACluster(CUDA_VISIBLE_DEVICES="0,1", dashboard_address=None)
    with cluster, distributed.Client(cluster) as client:
        check_exact_on_every_gpu(client)


def test_one_worker_per_gpu_without_dask_cuda(two_gpus: None) -> None:
    with ghd._per_gpu_cluster([0, 1]) as cluster, distributed.Client(cluster) as client:
        check_exact_on_every_gpu(client)
