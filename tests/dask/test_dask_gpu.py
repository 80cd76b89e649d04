"""Dask on a host with two GPUs (marker `gpu`): one worker per GPU, exact counts.

Runs without the project's conftest (`pytest --noconftest tests/dask/test_dask_gpu.py`, see
scripts/dask_gpu_check.sh), so it checks for its GPUs itself.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

import polars_gpu_hist as gh

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


def check_coverage_on_every_gpu(client: distributed.Client) -> None:
    """Issue 35: CuPy (n, d) arrays, weights, n-D, NaN and the flow, equal to numpy and to
    one Histogram filled on the host."""
    cp = pytest.importorskip("cupy")

    def block(i: int, d: int) -> object:
        import cupy

        rs = cupy.random.default_rng(i)
        out = rs.standard_normal((1 << 18, d), dtype=cupy.float32) * 0.4 + 0.5
        out[:: 977 + i] = cupy.nan
        return out

    workers = sorted(client.scheduler_info()["workers"])
    parts = [
        client.submit(block, i, 2, pure=False, workers=[workers[i % len(workers)]])
        for i in range(12)
    ]
    distributed.wait(parts)
    assert len({w for w, keys in client.has_what().items() if keys}) == 2
    x = da.concatenate(
        [
            da.from_delayed(
                p, shape=(1 << 18, 2), dtype=np.float32, meta=cp.empty((0, 2), cp.float32)
            )
            for p in parts
        ]
    )
    host = np.concatenate(client.gather([client.submit(lambda b: b.get(), p) for p in parts]))
    # 1-D: the first column, weighted and not; the flow as the host's fill finds it.
    col = x[:, 0].map_blocks(cp.ascontiguousarray)
    w = col.map_blocks(lambda b: cp.floor(cp.abs(b) * 4).astype(cp.float64))
    w_host = np.floor(np.abs(host[:, 0]) * 4).astype(np.float64)
    got = ghd.histogram(col, bins=1000, range=(0.0, 1.0), device="gpu").compute()
    whole = gh.Histogram(1000, range=(0.0, 1.0), device="cpu").fill(host[:, 0])
    assert got == whole and got.flow == whole.flow
    weighted = ghd.histogram(col, bins=64, range=(0.0, 1.0), weights=w, device="gpu").compute()
    keep = ~np.isnan(host[:, 0])
    expected, _ = np.histogram(host[keep, 0], bins=64, range=(0.0, 1.0), weights=w_host[keep])
    np.testing.assert_array_equal(weighted.counts, expected)
    # n-D of the (n, 2) CuPy array, chunked along rows.
    dd_hist = ghd.histogramdd(x, bins=[50, 70], range=[(0, 1), (0.2, 0.8)], device="gpu").compute()
    rows = ~np.isnan(host).any(axis=1)
    expected, *_ = np.histogramdd(host[rows], bins=[50, 70], range=[(0, 1), (0.2, 0.8)])
    np.testing.assert_array_equal(dd_hist.counts, expected, strict=False)


def test_coverage_one_nanny_per_gpu(two_gpus: None) -> None:
    with ghd._per_gpu_cluster([0, 1]) as cluster, distributed.Client(cluster) as client:
        check_coverage_on_every_gpu(client)


def test_cudf_dataframes_two_workers(two_gpus: None) -> None:
    cudf = pytest.importorskip("cudf")
    dd = pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(3)
    n = 1 << 20
    pd = pytest.importorskip("pandas")
    x = rng.random(n)
    x[::11] = np.nan  # nulls in cuDF
    host = pd.DataFrame({"x": x, "w": rng.integers(0, 3, n).astype(float)})
    frame = cudf.DataFrame.from_pandas(host, nan_as_null=True)
    assert int(frame["x"].null_count) == len(x[::11])
    ddf = dd.from_pandas(frame, npartitions=8)
    with ghd._per_gpu_cluster([0, 1]) as cluster, distributed.Client(cluster):
        got = ghd.histogram(ddf, "x", bins=100, range=(0, 1), weights="w").compute()
    keep = host["x"].notna()
    expected, _ = np.histogram(host["x"][keep], bins=100, range=(0, 1), weights=host["w"][keep])
    np.testing.assert_array_equal(got.counts, expected)
    assert got.flow.null == int((~keep).sum())


def test_pandas_dataframes_counted_on_two_gpus(two_gpus: None) -> None:
    # Host frames, each worker counting its partitions on its own GPU: weights, by=, n-D.
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    rng = np.random.default_rng(4)
    n = 1 << 20
    frame = pd.DataFrame(
        {
            "x": rng.random(n),
            "y": rng.random(n).astype(np.float32),
            "w": rng.integers(0, 3, n).astype(float),
            "z": rng.random(n),
            "g": rng.integers(0, 5, n),
        }
    )
    frame.loc[::13, "x"] = np.nan
    ddf = dd.from_pandas(frame, npartitions=8)
    with ghd._per_gpu_cluster([0, 1]) as cluster, distributed.Client(cluster):
        ddf = ddf.persist()
        distributed.wait(ddf)
        got = ghd.histogram(ddf, "x", bins=100, range=(0, 1), weights="w", device="gpu").compute()
        by = ghd.histogram(ddf, "y", bins=64, range=(0, 1), by="g", device="gpu").compute()
        nd = ghd.histogramdd(ddf[["x", "z"]], bins=[10, 20], range=[(0, 1)] * 2, device="gpu")
        nd = nd.compute()
    keep = frame["x"].notna()
    expected, _ = np.histogram(frame["x"][keep], bins=100, range=(0, 1), weights=frame["w"][keep])
    np.testing.assert_array_equal(got.counts, expected)
    whole = pl.from_pandas(frame).select(gh.histogram_expr("y", 64, range=(0, 1), by="g"))
    assert by.equals(whole.unnest("y"))
    expected, *_ = np.histogramdd(
        np.column_stack([frame["x"][keep], frame["z"][keep]]), bins=[10, 20], range=[(0, 1)] * 2
    )
    np.testing.assert_array_equal(nd.counts, expected, strict=False)
