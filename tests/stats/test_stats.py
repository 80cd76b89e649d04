"""Statistics of a histogram: ``Histogram.quantile/mean/std/sum`` and the
expressions of ``polars_gpu_hist.stats`` against numpy on the bin-interpolated distribution."""

from __future__ import annotations

import datetime as dt
import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import polars_gpu_hist as gh
import polars_gpu_hist.stats as hs

# Edges: strictly increasing, from sorted distinct integers scaled (exact widths).
edges_st = st.lists(st.integers(-1000, 1000), min_size=2, max_size=12, unique=True).map(
    lambda xs: np.array(sorted(xs), dtype=np.float64) / 4
)


def filled(edges: np.ndarray, counts: list[int]) -> gh.Histogram:
    """A histogram of these edges whose bins hold ``counts`` (each bin's left edge repeated)."""
    values = np.repeat(edges[:-1], counts)
    return gh.Histogram(list(edges)).fill(values)


def spread_sample(edges: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The bin-interpolated distribution as a sample: each bin's c counts at a + j (b - a) / c
    (j < c), then the last non-empty bin's end."""
    points = [
        edges[i] + np.arange(c) * (edges[i + 1] - edges[i]) / c
        for i, c in enumerate(counts)
        if c > 0
    ]
    last = int(np.flatnonzero(counts)[-1])
    return np.concatenate([*points, [edges[last + 1]]])


@st.composite
def binned(draw: st.DrawFn, empty_bins: bool) -> tuple[np.ndarray, np.ndarray]:
    edges = draw(edges_st)
    low = 0 if empty_bins else 1
    counts = draw(st.lists(st.integers(low, 20), min_size=len(edges) - 1, max_size=len(edges) - 1))
    counts = np.array(counts)
    if counts.sum() == 0:
        counts[draw(st.integers(0, len(counts) - 1))] = 1
    return edges, counts


@given(binned(empty_bins=False), st.lists(st.floats(0, 1), min_size=1, max_size=8))
def test_quantile_is_numpys_linear_quantile_of_the_spread_sample(
    data: tuple[np.ndarray, np.ndarray], qs: list[float]
) -> None:
    edges, counts = data
    h = filled(edges, list(counts))
    expected = np.quantile(spread_sample(edges, counts), qs)
    span = edges[-1] - edges[0]
    np.testing.assert_allclose(h.quantile(qs), expected, rtol=0, atol=1e-9 * span)
    np.testing.assert_allclose(
        np.percentile(spread_sample(edges, counts), [100 * q for q in qs]),
        h.quantile(qs),
        rtol=0,
        atol=1e-9 * span,
    )


@given(binned(empty_bins=True), st.data())
def test_quantile_across_empty_bins_agrees_with_numpy_at_every_count(
    data: tuple[np.ndarray, np.ndarray], draw: st.DataObject
) -> None:
    """With empty bins between counted ones numpy's sample interpolates across the gap; at
    q = k / total both name the same point (a flat stretch of the CDF: the next bin's start)."""
    edges, counts = data
    total = int(counts.sum())
    k = draw.draw(st.integers(0, total))
    h = filled(edges, list(counts))
    expected = np.quantile(spread_sample(edges, counts), k / total)
    assert h.quantile(k / total) == pytest.approx(expected, abs=1e-9 * (edges[-1] - edges[0]))


def test_a_count_short_by_rounding_still_ends_the_flat_stretch() -> None:
    # 88 / 138 * 138 rounds to 87.99999999999999: found by hypothesis in CI. The 88th count ends
    # at the empty bin [0.25, 0.5); numpy's sample names the next counted bin's start.
    edges = np.arange(-4, 6) / 4
    counts = [8, 20, 20, 20, 20, 0, 10, 20, 20]
    q = 88 / sum(counts)
    expected = np.quantile(spread_sample(edges, np.array(counts)), q)
    assert expected == pytest.approx(0.5)
    assert filled(edges, counts).quantile(q) == 0.5
    frame = pl.DataFrame({"x": np.repeat(edges[:-1], counts)})
    result = frame.select(pl.col("x").gpu_hist.histogram(bins=list(edges)))
    assert result.select(hs.quantile("x", q)).item() == 0.5


@given(binned(empty_bins=True), st.lists(st.floats(0, 1), min_size=2, max_size=8))
def test_quantile_is_monotone_and_inside_the_counted_bins(
    data: tuple[np.ndarray, np.ndarray], qs: list[float]
) -> None:
    edges, counts = data
    q = np.sort(qs)
    out = filled(edges, list(counts)).quantile(q)
    assert np.all(np.diff(out) >= 0)
    nonzero = np.flatnonzero(counts)
    assert edges[nonzero[0]] <= out.min() and out.max() <= edges[nonzero[-1] + 1]


@given(binned(empty_bins=True))
def test_mean_and_std_are_those_of_the_bin_centres(data: tuple[np.ndarray, np.ndarray]) -> None:
    edges, counts = data
    h = filled(edges, list(counts))
    centres = np.repeat((edges[:-1] + edges[1:]) / 2, counts)
    span = edges[-1] - edges[0]
    assert h.mean() == pytest.approx(centres.mean(), abs=1e-9 * span)
    assert h.std() == pytest.approx(centres.std(), abs=1e-9 * span)
    if len(centres) > 1:
        assert h.std(ddof=1) == pytest.approx(centres.std(ddof=1), abs=1e-9 * span)
    assert h.sum() == counts.sum()


@given(binned(empty_bins=True), st.floats(0, 1))
def test_integer_weights_give_the_statistics_of_the_counts(
    data: tuple[np.ndarray, np.ndarray], q: float
) -> None:
    edges, counts = data
    nonzero = np.flatnonzero(counts)
    w = gh.Histogram(list(edges), weights=True).fill(
        edges[:-1][nonzero], weights=counts[nonzero].astype(np.float64)
    )
    h = filled(edges, list(counts))
    assert w.quantile(q) == pytest.approx(h.quantile(q))
    assert w.mean() == pytest.approx(h.mean())
    assert w.std() == pytest.approx(h.std())
    assert w.sum() == float(h.sum())


@given(binned(empty_bins=True), st.data())
def test_expressions_give_what_the_histogram_gives(
    data: tuple[np.ndarray, np.ndarray], draw: st.DataObject
) -> None:
    edges, counts = data
    q = draw.draw(st.floats(0, 1))
    flow = draw.draw(st.booleans())
    h = filled(edges, list(counts))
    values = np.concatenate([np.repeat(edges[:-1], counts), [edges[0] - 1, edges[-1] + 1]])
    result = pl.DataFrame({"v": values}).select(
        pl.col("v").gpu_hist.histogram(list(edges), flow=flow)
    )
    row = result.select(
        hs.quantile("v", q, flow=flow).alias("q"),
        hs.mean("v", flow=flow).alias("mean"),
        hs.std("v", flow=flow).alias("std"),
        hs.sum("v", flow=flow).alias("sum"),
    ).row(0, named=True)
    span = edges[-1] - edges[0]
    assert row["q"] == pytest.approx(h.quantile(q), abs=1e-9 * span)
    assert row["mean"] == pytest.approx(h.mean(), abs=1e-9 * span)
    assert row["std"] == pytest.approx(h.std(), abs=1e-9 * span)
    assert row["sum"] == h.sum()


def test_flow_is_left_out_and_said_so() -> None:
    h = gh.Histogram(4, range=(0, 4)).fill(np.array([-5.0, 0.5, 1.5, 2.5, 3.5, 7.0, np.nan]))
    inside = gh.Histogram(4, range=(0, 4)).fill(np.array([0.5, 1.5, 2.5, 3.5]))
    assert h.quantile(0.5) == inside.quantile(0.5) == 2.0
    assert h.mean() == inside.mean() == 2.0
    assert h.std() == inside.std()
    assert h.sum() == 4
    assert h.sum(flow=True) == 6  # under- and overflow, never NaN
    assert h.quantile([0, 1]).tolist() == [0.0, 4.0]


def test_an_empty_histogram_gives_nan_with_a_warning() -> None:
    h = gh.Histogram(3, range=(0, 1))
    for stat in (h.mean, h.std, lambda: h.quantile(0.5)):
        with pytest.warns(RuntimeWarning, match="empty histogram"):
            assert np.isnan(stat())
    with pytest.warns(RuntimeWarning):
        assert np.isnan(h.quantile([0.1, 0.9])).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert h.sum() == 0
    one = gh.Histogram(3, range=(0, 3)).fill(np.array([1.5]))
    with pytest.warns(RuntimeWarning, match="ddof"):
        assert np.isnan(one.std(ddof=1))
    empty = pl.DataFrame({"x": []}, schema={"x": pl.Float64}).select(
        pl.col("x").gpu_hist.histogram(3, range=(0, 1))
    )
    row = empty.select(hs.quantile("x", 0.5), hs.mean("x").alias("m")).row(0)
    assert all(np.isnan(v) for v in row)


def test_bad_arguments_are_named() -> None:
    h = gh.Histogram(3, range=(0, 3)).fill(np.array([1.5]))
    for q in (1.5, -0.1, float("nan"), [0.5, 2]):
        with pytest.raises(ValueError, match="`q` must be in \\[0, 1\\]"):
            h.quantile(q)
    with pytest.raises(TypeError, match="`q`"):
        h.quantile("median")
    with pytest.raises(ValueError, match="`ddof`"):
        h.std(ddof=-1)
    with pytest.raises(TypeError, match="one number"):
        hs.quantile("x", [0.1, 0.5])
    with pytest.raises(TypeError, match="histogram result column"):
        hs.mean(3)  # type: ignore[arg-type]
    negative = gh.Histogram(2, range=(0, 2), weights=True).fill([0.5], weights=[-1.0])
    with pytest.raises(ValueError, match="negative"):
        negative.quantile(0.5)


def test_several_axes_need_an_axis_and_give_its_marginal() -> None:
    rng = np.random.default_rng(3)
    x, y = rng.uniform(0, 4, 500), rng.uniform(0, 2, 500)
    h = gh.Histogram([4, 8], range=[(0, 4), (0, 2)]).fill(x, y)
    with pytest.raises(ValueError, match=r"axis=0\.\.1"):
        h.mean()
    with pytest.raises(ValueError, match="`axis`"):
        h.quantile(0.5, axis=2)
    hx = gh.Histogram(4, range=(0, 4)).fill(x)
    hy = gh.Histogram(8, range=(0, 2)).fill(y)
    assert h.mean(axis=0) == pytest.approx(hx.mean())
    assert h.std(axis=-1) == pytest.approx(hy.std())
    assert h.quantile(0.3, axis=1) == pytest.approx(hy.quantile(0.3))


def test_temporal_results_give_temporal_statistics() -> None:
    start = dt.datetime(2024, 3, 1)
    times = pl.datetime_range(
        start, dt.datetime(2024, 3, 2), "1h", eager=True, time_zone="Europe/Paris"
    )
    result = pl.DataFrame({"t": times}).select(pl.col("t").gpu_hist.histogram(4))
    out = result.select(hs.quantile("t", 0.5), hs.mean("t").alias("m"), hs.std("t").alias("s"))
    assert out.schema["t"] == times.dtype and out.schema["m"] == times.dtype
    assert out.schema["s"] == pl.Duration("us")
    numeric = pl.DataFrame({"t": times.dt.epoch("us").cast(pl.Float64)}).select(
        pl.col("t").gpu_hist.histogram(4)
    )
    expected = numeric.select(hs.mean("t")).item()
    assert out["m"].dt.epoch("us").item() == int(expected)


@given(
    edges_st,
    st.lists(st.floats(1e-3, 1e6), min_size=1, max_size=40),
    st.lists(st.floats(0, 1), min_size=2, max_size=6),
)
def test_float_weights_give_monotone_quantiles_on_the_counted_bins(
    edges: np.ndarray, weights: list[float], qs: list[float]
) -> None:
    x = np.resize(edges[:-1], len(weights))
    h = gh.Histogram(list(edges), weights=True).fill(x, weights=np.array(weights))
    out = h.quantile(np.sort(qs))
    assert np.all(np.diff(out) >= 0)
    used = np.flatnonzero(h.values())
    assert edges[used[0]] <= out.min() and out.max() <= edges[used[-1] + 1]
    frame = pl.DataFrame({"v": x, "w": weights}).select(
        pl.col("v").gpu_hist.histogram(list(edges), weights="w")
    )
    q = float(np.sort(qs)[0])
    assert frame.select(hs.quantile("v", q)).item() == pytest.approx(h.quantile(q), rel=1e-12)


def test_an_empty_temporal_result_gives_nulls_and_n_d_results_are_refused() -> None:
    utc = dt.timezone.utc
    span = (dt.datetime(2020, 1, 1, tzinfo=utc), dt.datetime(2020, 1, 2, tzinfo=utc))
    empty = pl.DataFrame({"t": []}, schema={"t": pl.Datetime("us", "UTC")}).select(
        pl.col("t").gpu_hist.histogram(3, range=span)
    )
    row = empty.select(hs.quantile("t", 0.5), hs.mean("t").alias("m"), hs.std("t").alias("s"))
    assert row.row(0) == (None, None, None)
    dd = pl.DataFrame({"x": [1.0, 2.0], "y": [1.0, 2.0]}).select(gh.histogramdd("x", "y", bins=2))
    with pytest.raises(pl.exceptions.StructFieldNotFoundError, match="bin_start"):
        dd.select(hs.mean("x"))
