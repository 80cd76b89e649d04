"""Dask: per-partition histograms summed in a tree reduction equal numpy over all the data."""

from __future__ import annotations

import operator

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("dask.distributed")
pd = pytest.importorskip("pandas")

import polars_gpu_hist.dask as ghd  # noqa: E402


@pytest.fixture(scope="module")
def client():
    # Worker processes: partials really travel pickled between processes.
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
    )
    with cluster, distributed.Client(cluster) as c:
        yield c


def random_splits(rng: np.random.Generator, n: int, parts: int) -> tuple[int, ...]:
    cuts = np.sort(rng.integers(0, n + 1, parts - 1))
    return tuple(np.diff(np.concatenate([[0], cuts, [n]])).tolist())


@pytest.mark.parametrize("seed", range(4))
def test_dask_array_on_a_cluster_equals_numpy(client, seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60_000))
    dtype = [np.float64, np.float32, np.int32, np.uint8][seed]
    x = (rng.normal(0, 40, n)).astype(dtype) if dtype != np.uint8 else rng.integers(0, 255, n)
    x = x.astype(dtype)
    chunks = random_splits(rng, n, int(rng.integers(1, 12)))
    darr = da.from_array(x, chunks=(chunks,))
    # Python floats, as numpy sees a range.
    lo, hi = (float(v) for v in sorted(rng.uniform(-50, 260, 2)))
    bins = int(rng.integers(1, 300))
    got = ghd.histogram(darr, bins=bins, range=(lo, hi), split_every=3).compute()
    expected, edges = np.histogram(x, bins=bins, range=(lo, hi))
    np.testing.assert_array_equal(got.counts, expected, strict=False)
    np.testing.assert_array_equal(got.edges, edges.astype(np.float64))


def test_dask_dataframe_with_weights_equals_numpy(client) -> None:
    rng = np.random.default_rng(3)
    n = 40_000
    frame = pd.DataFrame(
        {"x": rng.uniform(-1, 1, n), "w": rng.integers(0, 5, n).astype(float), "s": "a"}
    )
    frame.loc[::50, "x"] = np.nan
    ddf = dd.from_pandas(frame, npartitions=7)
    edges = [-1, -0.5, 0, 0.1, 0.2, 1]
    got = ghd.histogram(ddf, "x", edges, weights="w").compute()
    keep = ~frame["x"].isna()
    expected, _ = np.histogram(frame["x"][keep], bins=edges, weights=frame["w"][keep])
    np.testing.assert_array_equal(got.counts, expected)
    plain = ghd.histogram(ddf["x"], bins=edges).compute()
    expected, _ = np.histogram(frame["x"][keep], bins=edges)
    np.testing.assert_array_equal(plain.counts, expected, strict=False)
    # The result is a Histogram: it merges with others of its binning.
    assert (plain + gh.Histogram(edges).fill(np.array([0.05]))).counts[2] == expected[2] + 1


def test_histograms_serve_in_dask_reductions(client) -> None:
    bag = pytest.importorskip("dask.bag")
    rng = np.random.default_rng(9)
    pieces = [rng.normal(size=int(k)) for k in rng.integers(0, 2000, 9)]

    def partial(x: np.ndarray) -> gh.Histogram:
        return gh.Histogram(16, range=(-2, 2)).fill(x)

    total = bag.from_sequence(pieces, npartitions=4).map(partial).fold(operator.add).compute()
    expected, _ = np.histogram(np.concatenate(pieces), bins=16, range=(-2, 2))
    np.testing.assert_array_equal(total.counts, expected, strict=False)


def test_dask_errors_are_clear() -> None:
    x = da.zeros(10, chunks=5)
    with pytest.raises(ValueError, match="needs `range"):
        ghd.histogram(x, bins=10)
    with pytest.raises(ValueError, match="`column` is only"):
        ghd.histogram(x, "x", bins=3, range=(0, 1))
    with pytest.raises(ValueError, match="1-D"):
        ghd.histogram(da.zeros((2, 2)), bins=3, range=(0, 1))
    ddf = dd.from_pandas(pd.DataFrame({"x": [1.0]}), npartitions=1)
    with pytest.raises(ValueError, match="needs `column`"):
        ghd.histogram(ddf, bins=3, range=(0, 1))
    with pytest.raises(KeyError, match="no column 'y'"):
        ghd.histogram(ddf, "y", bins=3, range=(0, 1))
    with pytest.raises(TypeError, match="Dask DataFrame, Series or Array"):
        ghd.histogram(pl.Series([1.0]), bins=3, range=(0, 1))
    # The same graph runs on any scheduler.
    assert ghd.histogram(x, bins=2, range=(0, 1)).compute().counts.tolist() == [10, 0]
