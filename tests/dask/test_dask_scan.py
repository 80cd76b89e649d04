"""polars_gpu_hist.dask.histogram_scan (issue 52): each task scans its own files on its worker,
only partials cross the network; equal to histogram_scan over all the files (numpy's counts),
a range from the data and the streamed rules through a first pass in the same graph."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh

pytest.importorskip("dask")
distributed = pytest.importorskip("dask.distributed")

import polars_gpu_hist.dask as ghd  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with ghd.cluster(0, workers=2, threads_per_worker=1) as cluster:
        with distributed.Client(cluster) as c:
            yield c


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> tuple[Path, pl.DataFrame]:
    root = tmp_path_factory.mktemp("files")
    rng = np.random.default_rng(52)
    frames = []
    for k in range(7):
        n = int(rng.integers(0, 9000)) if k != 3 else 0  # an empty file among them
        x = rng.normal(0, 1, n).astype(np.float32)
        x[::37] = np.nan
        part = pl.DataFrame(
            {"x": x, "i": rng.integers(-80, 80, n), "w": rng.integers(0, 4, n).astype(float)}
        )
        part.write_parquet(root / f"part{k}.parquet", row_group_size=1500)
        frames.append(part)
    return root, pl.concat(frames)


@pytest.mark.parametrize(
    "column, kwargs",
    [
        ("x", dict(bins=24, range=(-3, 3))),
        ("x", dict(bins=24, range="auto")),
        ("x", dict(bins=24, range="auto", weights="w")),
        ("x", dict(bins="sturges")),
        ("i", dict(bins="integer")),
        ("i", dict(bins="rice", range=(-40, 40))),
        ("x", dict(bins=[-2, -1, 0, 0.5, 2], closed="right")),
        ("x", dict(bins=8, range=(-1, 1), where="i > 0")),
    ],
)
@pytest.mark.parametrize("files_per_task", [1, 3])
def test_equals_histogram_scan_over_all_the_files(
    client, files, column: str, kwargs: dict, files_per_task: int
) -> None:
    root, _ = files
    pattern = str(root / "part*.parquet")
    got = ghd.histogram_scan(pattern, column, **kwargs, files_per_task=files_per_task).compute()
    want = gh.histogram_scan(pattern, column, **kwargs, device="cpu")
    assert got == want, (got, want)


def test_counts_equal_numpy(client, files) -> None:
    root, frame = files
    h = ghd.histogram_scan(root, "x", 30, range="auto").compute()
    x = frame["x"].to_numpy()
    counts, edges = np.histogram(x[~np.isnan(x)], 30)
    np.testing.assert_array_equal(h.counts, counts, strict=False)
    np.testing.assert_array_equal(h.edges, edges.astype(np.float64))


def test_a_file_that_changes_after_the_first_pass_is_caught(client, tmp_path: Path) -> None:
    for k in range(2):
        pl.DataFrame({"i": [1, 2, 3 + k]}).write_parquet(tmp_path / f"p{k}.parquet")
    graph = ghd.histogram_scan(tmp_path, "i", 4, range="auto")
    first = graph.compute()
    assert first.flow.rows == 6
    # The same graph, the data rewritten: its first pass and fill both run again.
    pl.DataFrame({"i": [1, 2, 90]}).write_parquet(tmp_path / "p1.parquet")
    again = ghd.histogram_scan(tmp_path, "i", 4, range="auto").compute()
    assert again.edges[-1] == 90


def test_arguments_are_checked_on_the_client(files) -> None:
    root, _ = files
    with pytest.raises(ValueError, match="needs every value in memory"):
        ghd.histogram_scan(root, "x", "fd")
    with pytest.raises(pl.exceptions.ColumnNotFoundError, match="no column 'nope'"):
        ghd.histogram_scan(root, "nope", 4, range=(0, 1))
    with pytest.raises(ValueError, match="files_per_task"):
        ghd.histogram_scan(root, "x", 4, range=(0, 1), files_per_task=0)
    with pytest.raises(FileNotFoundError, match="no file matches"):
        ghd.histogram_scan(str(root / "none*.parquet"), "x", 4, range=(0, 1))
    with pytest.raises(ValueError, match="needs `range"):
        ghd.histogram_scan(root, "x", 4)


def test_the_cluster_gives_each_worker_its_threads() -> None:
    with ghd.cluster(0, workers=2, threads_per_worker=3) as cluster:
        with distributed.Client(cluster) as c:
            seen = c.run(
                lambda: (
                    __import__("os").environ.get("POLARS_MAX_THREADS"),
                    __import__("os").environ.get("RAYON_NUM_THREADS"),
                    __import__("os").environ.get("CUDA_VISIBLE_DEVICES"),
                )
            )
    assert sorted(seen.values()) == [("3", "3", ""), ("3", "3", "")]
    with pytest.raises(ValueError, match="one worker per GPU"):
        ghd.cluster([0, 1], workers=3)
