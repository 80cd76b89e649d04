"""Every public entry point once, eagerly and lazily, with counts checked against numpy or
Polars: the quick suite that `make test` also runs against the oldest Polars the package
declares (`.venv-oldest`). It needs only polars, numpy, pytest and hypothesis (the
conftest's), so that the second virtual environment stays small."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh
import polars_gpu_hist.numpy as ghnp

X = [0.5, 1.5, 1.7, 9.0, -2.0, 3.25, 3.25, 7.0]
EDGES = [-2.0, 0.0, 1.0, 2.5, 9.0]
NP_COUNTS = np.histogram(X, EDGES)[0].tolist()
FRAME = pl.DataFrame({"x": X, "y": [v * 2 for v in X], "g": [1, 1, 2, 2, 1, 2, 1, 2]})


@pytest.fixture(params=["eager", "lazy"])
def frame(request: pytest.FixtureRequest) -> pl.DataFrame | pl.LazyFrame:
    return FRAME if request.param == "eager" else FRAME.lazy()


def collect(out: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return out.collect() if isinstance(out, pl.LazyFrame) else out


def test_histogram_namespace_and_function(frame: pl.DataFrame | pl.LazyFrame) -> None:
    for expr in (
        pl.col("x").gpu_hist.histogram(bins=EDGES),
        gh.histogram_expr("x", bins=EDGES),
    ):
        out = collect(frame.select(expr)).unnest("x")
        assert out["count"].to_list() == NP_COUNTS


def test_histogram_with_weights_density_and_flow(frame: pl.DataFrame | pl.LazyFrame) -> None:
    out = collect(frame.select(pl.col("x").gpu_hist.histogram(bins=4, weights="y"))).unnest("x")
    expected = np.histogram(X, 4, weights=[v * 2 for v in X])[0]
    assert out["count"].to_list() == pytest.approx(expected.tolist())
    flow = collect(frame.select(pl.col("x").gpu_hist.histogram(bins=[0.0, 2.0], flow=True)))
    assert flow.unnest("x")["count"].to_list() == [1, 3, 4]


def test_histogram_by_and_agg(frame: pl.DataFrame | pl.LazyFrame) -> None:
    by = collect(frame.select(pl.col("x").gpu_hist.histogram(bins=EDGES, by="g"))).unnest("x")
    agg = collect(
        frame.group_by("g", maintain_order=True).agg(pl.col("x").gpu_hist.histogram(bins=EDGES))
    )
    for key, counts in zip(agg["g"], agg["x"]):
        values = [v for v, g in zip(X, FRAME["g"]) if g == key]
        expected = np.histogram(values, EDGES)[0].tolist()
        assert [c["count"] for c in counts] == expected
        assert by.filter(pl.col("g") == key)["count"].to_list() == expected


def test_hist_drop_in(frame: pl.DataFrame | pl.LazyFrame) -> None:
    flags = {"include_category": True, "include_breakpoint": True}
    for kwargs in ({}, {"bin_count": 3}, {"bins": EDGES}, flags, {"bin_count": 4, **flags}):
        expected = collect(frame.select(pl.col("x").hist(**kwargs)))
        for expr in (pl.col("x").gpu_hist.hist(**kwargs), gh.hist_expr("x", **kwargs)):
            got = collect(frame.select(expr))
            assert got.schema == expected.schema
            assert got.equals(expected)
        expected = collect(frame.group_by("g", maintain_order=True).agg(pl.col("x").hist(**kwargs)))
        got = collect(
            frame.group_by("g", maintain_order=True).agg(pl.col("x").gpu_hist.hist(**kwargs))
        )
        assert got.equals(expected)


def test_row_binning(frame: pl.DataFrame | pl.LazyFrame) -> None:
    """cut and qcut under every Polars declared; the bin_* calls where Polars has them (2.x),
    a NotImplementedError naming the version where it does not."""
    polars_2 = hasattr(pl.Expr, "bin_intervals")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for ours, theirs in (
            (pl.col("x").gpu_hist.cut([1.0, 3.25]), pl.col("x").cut([1.0, 3.25])),
            (
                pl.col("x").gpu_hist.cut([1.0], left_closed=True, include_breaks=True),
                pl.col("x").cut([1.0], left_closed=True, include_breaks=True),
            ),
            (pl.col("x").gpu_hist.qcut(3), pl.col("x").qcut(3)),
            (pl.col("x").gpu_hist.qcut([0.5]).over("g"), pl.col("x").qcut([0.5]).over("g")),
        ):
            assert collect(frame.select(ours)).equals(collect(frame.select(theirs)))
    calls = {
        "bin_intervals": lambda e: e.bin_intervals(EDGES, labels=False),
        "bin_quantiles": lambda e: e.bin_quantiles(3, labels=False),
        "bin_ranks": lambda e: e.bin_ranks(3, labels=False),
    }
    for name, call in calls.items():
        if not polars_2:
            with pytest.raises(NotImplementedError, match=f"{name}.*{pl.__version__}"):
                call(pl.col("x").gpu_hist)
            continue
        got = collect(frame.select(call(pl.col("x").gpu_hist)))
        assert got.equals(collect(frame.select(call(pl.col("x")))))


def test_series_namespace_and_histogram_function() -> None:
    s = FRAME["x"]
    assert s.gpu_hist.hist(bin_count=3).equals(s.hist(bin_count=3))
    assert s.gpu_hist.histogram(bins=EDGES).struct.field("count").to_list() == NP_COUNTS
    assert gh.histogram(s, EDGES)["count"].to_list() == NP_COUNTS
    assert gh.histogram(np.array(X), EDGES)["count"].to_list() == NP_COUNTS


def test_histogramdd_and_2d(frame: pl.DataFrame | pl.LazyFrame) -> None:
    expected = np.histogram2d(X, [v * 2 for v in X], bins=3)[0].ravel().tolist()
    dd = gh.histogramdd(FRAME["x"], FRAME["y"], bins=3)
    assert dd["count"].to_list() == expected
    assert gh.histogram2d(FRAME["x"], FRAME["y"], bins=3)["count"].to_list() == expected
    del frame  # the frame functions take data, not queries: once is enough


def test_numpy_module() -> None:
    a = np.array(X)
    for got, want in (
        (ghnp.histogram(a, 5), np.histogram(a, 5)),
        (ghnp.histogram2d(a, a * 2, 3), np.histogram2d(a, a * 2, 3)),
        (ghnp.histogramdd(np.stack([a, a]).T, 2), np.histogramdd(np.stack([a, a]).T, 2)),
    ):
        np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(
        ghnp.histogram_bin_edges(a, "fd"), np.histogram_bin_edges(a, "fd")
    )


def test_histogram_accumulator_and_scan(tmp_path: Path) -> None:
    h = gh.Histogram(EDGES)
    h.fill(pl.Series(X[:4])).fill(np.array(X[4:]))
    other = gh.Histogram(EDGES).fill(pl.Series(X))
    assert h.counts.tolist() == NP_COUNTS
    assert h.merge(other).counts.tolist() == [2 * c for c in NP_COUNTS]
    path = tmp_path / "x.parquet"
    FRAME.write_parquet(path)
    assert gh.histogram_scan(str(path), "x", EDGES).counts.tolist() == NP_COUNTS
    assert gh.histogram_scan(FRAME.lazy(), "x", EDGES).counts.tolist() == NP_COUNTS


def test_explain_and_devices() -> None:
    assert isinstance(gh.explain(FRAME["x"], 10), str)
    assert isinstance(gh.gpu_available(), bool)


def test_command_line(tmp_path: Path) -> None:
    path = tmp_path / "x.parquet"
    FRAME.write_parquet(path)
    done = subprocess.run(
        [sys.executable, "-m", "polars_gpu_hist", str(path), "--column", "x", "--bins", "4"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
