"""Correct calls through the typed path: mypy must accept this file as it is (test_typing.py).

Type checkers cannot see a namespace registered at run time, so ``pl.col("x").gpu_hist`` is an
error to them; the module-level functions take the same arguments and are fully annotated. The
file also runs (``run()``), so the calls are right at run time too.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl

import polars_gpu_hist as gh
import polars_gpu_hist.stats as hs
from polars_gpu_hist import plot


def run() -> pl.DataFrame:
    df = pl.DataFrame({"x": np.linspace(0.0, 1.0, 101), "w": np.ones(101), "g": [0, 1] * 50 + [0]})

    one: pl.Expr = gh.histogram_expr(pl.col("x"), bins=10, range=(0, 1), device="cpu")
    edges: pl.Expr = gh.histogram_expr("x", [0.0, 0.5, 1.0], closed="right", device="cpu")
    weighted: pl.Expr = gh.histogram_expr(
        "x", 4, weights="w", density=True, device="cpu", kernel="auto"
    )
    by_group: pl.Expr = gh.histogram_expr("x", 4, range=(0.0, 1.0), by="g", device="cpu")
    by_keys: pl.Expr = gh.histogram_expr("x", 4, by=["g", pl.col("g").alias("h")], device="cpu")
    per_group: pl.DataFrame = df.group_by("g", maintain_order=True).agg(
        gh.histogram_expr("x", bins=4, range=(0, 1), device="cpu")
    )
    polars_hist: pl.Expr = gh.hist_expr("x", bins=[0.0, 0.5, 1.0], device="cpu")
    polars_counted: pl.Expr = gh.hist_expr(pl.col("x"), bin_count=4, include_category=False)
    array_edges: pl.Expr = gh.hist_expr("x", bins=np.linspace(0.0, 1.0, 5))
    dd = gh.histogramdd("x", "w", bins=[4, "sturges"], range=[(0, 1), None], device="cpu")
    dd_edges = gh.histogramdd("x", "w", bins=[[0.0, 0.5, 1.0], 3], device="cpu")
    dd_rule = gh.histogram2d(df["x"], df["w"], bins="sqrt", device="cpu")
    results = [df.select(e) for e in (one, edges, weighted, by_group, by_keys)]
    extra = [df.select(e) for e in (polars_hist, polars_counted, array_edges, dd, dd_edges)]
    assert [r.height for r in extra] == [2, 4, 4, 4, 6] and dd_rule.height == 11

    frame: pl.DataFrame = gh.histogram(df["x"], 5, device="cpu")
    acc: gh.Histogram = gh.Histogram(4, range=(0.0, 1.0), device="cpu").fill(df["x"])
    total: gh.Histogram = acc + gh.Histogram(4, range=(0.0, 1.0)).fill(np.array([0.25]))
    counts: np.ndarray = total.counts
    scanned: gh.Histogram = gh.histogram_scan(df.lazy(), "x", 4, range="auto", device="cpu")
    plan: str = gh.explain(pl.Float64, 64, range=(0, 1), device="cpu")
    usable: bool = gh.gpu_available()

    named = gh.Histogram(4, range=(0.0, 1.0), name="x", label="x [m]").fill(df["x"])
    centre: float = named.mean()
    spread: float = named.std(ddof=1)
    middle: float = named.quantile(0.5)
    filled: int | float = named.sum(flow=True)
    summary = df.select(one).select(
        hs.quantile("x", 0.5), hs.mean("x").alias("m"), hs.std("x", ddof=1).alias("s")
    )
    assert summary.width == 3 and 0.4 < centre < 0.6 and 0.4 < middle < 0.6 and spread > 0
    assert filled == 101
    text: str = plot.bars(results[0], width=20, closed="left")
    assert counts.sum() == 102 and scanned.counts.sum() == 101 and plan and text
    assert isinstance(usable, bool) and per_group.height == 2 and frame.height == 5
    times = pl.datetime_range(dt.datetime(2024, 3, 1), dt.datetime(2024, 4, 30), "5h", eager=True)
    times = times.alias("t")
    weekly: pl.DataFrame = gh.histogram(times, "1w", device="cpu")
    hourly: pl.Expr = gh.histogram_expr("t", bins=dt.timedelta(hours=6), by="g")
    per_axis = gh.histogramdd(times, times.dt.hour().alias("hour"), bins=["1mo", 24])
    assert weekly.height == 10 and per_axis.height == 2 * 24
    assert pl.DataFrame({"t": times, "g": times.dt.weekday()}).select(hourly).height > 0
    equi: pl.Expr = gh.histogram_expr("x", bins=gh.quantile_bins(4, "median_unbiased"))
    equi_frame: pl.DataFrame = gh.histogram(df["x"], gh.quantile_bins(4), device="cpu")
    equi_scan: gh.Histogram = gh.histogram_scan(df.lazy(), "x", gh.quantile_bins(4))
    fixed = gh.Histogram(gh.quantile_bins(4).edges(df["x"])).fill(df["x"])
    assert df.select(equi).height == equi_frame.height == 4 and equi_scan.counts.sum() == 101
    assert fixed.counts.sum() == 101
    return results[3].unnest("x")


def chart_of(hist: pl.DataFrame) -> plot.Chart:
    """Only type-checked (charts need Altair)."""
    return plot.chart(hist, title="x by g", facet=True, kind="count")
