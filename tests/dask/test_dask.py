"""Dask: per-partition histograms summed in a tree reduction equal numpy over all the data."""

from __future__ import annotations

import operator
import pickle

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


def test_dask_histogramdd_of_an_array_chunked_both_ways_equals_numpy(client) -> None:
    rng = np.random.default_rng(11)
    n = 30_000
    x = rng.normal(0, 1, (n, 3))
    x[::97, 1] = np.nan
    w = rng.integers(0, 4, n).astype(np.float64)
    chunks = (random_splits(rng, n, 6), (2, 1))  # columns split too: rechunked to whole rows
    darr = da.from_array(x, chunks=chunks)
    bins = [5, np.array([-2.0, -0.5, 0.0, 3.0]), 4]
    rng_ = [(-1, 1), None, (-3, 3)]
    got = ghd.histogramdd(darr, bins=bins, range=rng_, split_every=2).compute()
    keep = ~np.isnan(x).any(axis=1)
    expected, edges = np.histogramdd(x[keep], bins=[5, bins[1], 4], range=[(-1, 1), None, (-3, 3)])
    np.testing.assert_array_equal(got.counts, expected, strict=False)
    for mine, theirs in zip(got.edges, edges):
        np.testing.assert_array_equal(mine, theirs)
    assert got.flow.nan == int((~keep).sum()) and got.flow.rows == n
    # The flow cells of several axes add up across partitions as one fill has them.
    one = gh.Histogram([5, bins[1], 4], range=rng_).fill(x)
    np.testing.assert_array_equal(got.values(flow=True), one.values(flow=True))
    weighted = ghd.histogramdd(
        darr, bins=bins, range=rng_, weights=da.from_array(w, chunks=5000)
    ).compute()
    expected, _ = np.histogramdd(x[keep], bins=[5, bins[1], 4], range=rng_, weights=w[keep])
    np.testing.assert_array_equal(weighted.counts, expected)
    squares, _ = np.histogramdd(x[keep], bins=[5, bins[1], 4], range=rng_, weights=w[keep] ** 2)
    np.testing.assert_array_equal(weighted.variances(), squares)
    one = gh.Histogram([5, bins[1], 4], range=rng_, weights=True).fill(x, weights=w)
    np.testing.assert_array_equal(weighted.values(flow=True), one.values(flow=True))
    np.testing.assert_array_equal(weighted.variances(flow=True), one.variances(flow=True))


def test_dask_histogramdd_of_dataframe_columns_equals_numpy(client) -> None:
    rng = np.random.default_rng(12)
    n = 20_000
    frame = pd.DataFrame({"x": rng.random(n), "y": rng.random(n), "w": rng.random(n)})
    ddf = dd.from_pandas(frame, npartitions=5)
    got = ghd.histogramdd(ddf[["x", "y"]], bins=[3, 4], range=[(0, 1), (0, 1)]).compute()
    expected, *_ = np.histogramdd(frame[["x", "y"]].to_numpy(), bins=[3, 4], range=[(0, 1)] * 2)
    np.testing.assert_array_equal(got.counts, expected, strict=False)
    assert [a.name for a in got.axes] == ["x", "y"]


def test_dask_float32_partitions_bin_with_float32_edges_and_keep_the_flow(client) -> None:
    rng = np.random.default_rng(13)
    x = rng.normal(0.5, 0.5, 50_000).astype(np.float32)
    x[::101] = np.nan
    got = ghd.histogram(da.from_array(x, chunks=7_000), bins=1000, range=(0.1, 0.9)).compute()
    whole = gh.Histogram(1000, range=(0.1, 0.9)).fill(x)
    assert got == whole and got.flow == whole.flow
    expected, edges = np.histogram(x[~np.isnan(x)], bins=1000, range=(0.1, 0.9))
    np.testing.assert_array_equal(got.counts, expected, strict=False)
    np.testing.assert_array_equal(got.edges, edges.astype(np.float64))


def test_dask_partials_of_dtypes_numpy_bins_differently_are_refused() -> None:
    from polars_gpu_hist.dask import tasks

    kwargs = {"bins": 4, "range": (0, 1), "closed": "left", "weights": False, "device": "cpu"}
    spec = tasks.Spec(kwargs, "test-mixed-dtypes")
    f32 = tasks.fill(spec, np.array([0.5], np.float32), None, "column")
    f64 = tasks.fill(spec, np.array([0.5]), None, "column")
    i64 = tasks.fill(spec, np.array([0, 1]), None, "column")
    assert tasks.finish(spec, tasks.merge(f64, i64)).counts.tolist() == [1, 0, 1, 1]
    with pytest.raises(ValueError, match=r"[Ff]loat32"):
        tasks.finish(spec, tasks.merge(f32, f64))


def test_dask_weighted_series_and_the_threaded_scheduler_equal_numpy() -> None:
    rng = np.random.default_rng(14)
    frame = pd.DataFrame({"x": rng.random(10_000), "w": rng.random(10_000)})
    frame.loc[::7, "w"] = np.nan  # a NaN weight is summed as numpy sums it
    ddf = dd.from_pandas(frame, npartitions=9)
    with dask.config.set(scheduler="threads"):
        got = ghd.histogram(ddf["x"], bins=50, range=(0, 1), weights=ddf["w"]).compute()
    expected, _ = np.histogram(frame["x"], bins=50, range=(0, 1), weights=frame["w"])
    np.testing.assert_array_equal(got.counts, expected)


@pytest.mark.parametrize("weights", [None, "w"])
def test_dask_by_groups_equal_polars_on_the_whole_frame(client, weights: str | None) -> None:
    rng = np.random.default_rng(15)
    n = 20_000
    frame = pd.DataFrame(
        {
            "x": rng.normal(0.5, 0.3, n),
            "g": rng.choice(np.array(["a", "b", "c", None], dtype=object), n),
            "k": rng.integers(0, 3, n),
            "w": rng.integers(0, 5, n).astype(np.float64),
        }
    )
    # Groups that first appear in later partitions, and one only in the last.
    frame.loc[: n // 2, "k"] = 0
    frame.loc[n - 5 :, "g"] = "late"
    ddf = dd.from_pandas(frame, npartitions=6)
    got = ghd.histogram(
        ddf, "x", bins=8, range=(0, 1), weights=weights, by=["g", "k"], split_every=2
    ).compute()
    whole = pl.from_pandas(frame, nan_to_null=False)
    expected = whole.select(
        gh.histogram_expr("x", 8, range=(0, 1), weights=weights, by=["g", "k"])
    ).unnest("x")
    assert got.equals(expected), (got, expected)


def test_dask_histogramdd_and_by_errors_are_clear() -> None:
    ddf = dd.from_pandas(pd.DataFrame({"x": [1.0], "g": [1]}), npartitions=1)
    with pytest.raises(ValueError, match="by= takes a Dask DataFrame and `column`"):
        ghd.histogram(ddf["x"], bins=3, range=(0, 1), by="g")
    with pytest.raises(KeyError, match="no column 'h'"):
        ghd.histogram(ddf, "x", bins=3, range=(0, 1), by="h")
    with pytest.raises(ValueError, match="needs `range"):
        ghd.histogram(ddf, "x", bins=3, by="g")
    with pytest.raises(ValueError, match="2 axes; the data has 3 columns"):
        ghd.histogramdd(da.zeros((4, 3)), bins=[2, 2], range=[(0, 1), (0, 1)])
    with pytest.raises(ValueError, match=r"\(n, d\) Dask Array"):
        ghd.histogramdd(da.zeros(4), bins=2, range=[(0, 1)])
    with pytest.raises(ValueError, match="`split_every`"):
        ghd.histogram(da.zeros(4), bins=2, range=(0, 1), split_every=1)


def test_dask_result_keeps_the_device_and_empty_partitions_add_nothing() -> None:
    x = da.from_array(np.array([0.1, 0.2, 0.9]), chunks=((0, 2, 0, 1),))
    empty = da.from_array(np.array([], np.float32), chunks=((0, 0),))
    with dask.config.set(scheduler="threads"):
        cases = [
            (x, "auto", [2, 1], "Float64"),
            (x, "cpu", [2, 1], "Float64"),
            (empty, "gpu", [0, 0], "Float32"),
        ]
        for data, device, counts, dtype in cases:
            got = ghd.histogram(data, bins=2, range=(0, 1), device=device).compute()
            assert got.counts.tolist() == counts
            asked = gh.Histogram(bins=2, range=(0, 1), device=device)._core.to_bytes()
            state = pickle.loads(got._core.to_bytes())
            assert state["device"] == pickle.loads(asked)["device"]
            assert got._core.dtypes == [dtype]


def test_dask_weighted_partials_with_empty_partitions_equal_one_fill() -> None:
    # Empty partitions give zero sums and squares; the others their counted fills, the flow
    # (NaN, overflow) included.
    values = np.array([0.1, 0.2, 0.9, 1.5, np.nan, 0.5])
    weights = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 0.5])
    chunks = ((0, 2, 0, 3, 1, 0),)
    x = da.from_array(values, chunks=chunks)
    w = da.from_array(weights, chunks=chunks)
    with dask.config.set(scheduler="threads"):
        got = ghd.histogram(x, bins=2, range=(0, 1), weights=w, split_every=2).compute()
    expected = gh.Histogram(bins=2, range=(0, 1), weights=True).fill(values, weights=weights)
    assert got == expected
    assert got.flow.nan == 1 and got.flow.overflow == 1
