"""A weighted Histogram's storage (issue 49 item 6): the sums of the weights and of their
squares, and the flow's rows, counted in one pass over the rows on the CPU (src/cpu
`weight_storage`); equal to boost-histogram's Weight() storage and to numpy, in the default float
sums. The same bits however the rows are split into chunks, threads and fills (fixed point, opt-in):
test_histogram_weight_storage_fixed.py."""

from __future__ import annotations

import boost_histogram as bh
import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_gpu_hist as gh

EXAMPLES = min(settings().max_examples, 100)

# Values over the bins and the flow (not 1.0: numpy's last bin, boost's overflow); halves as
# weights (sums exact in any order).
values = st.sampled_from([-1.0, 0.0, 0.25, 0.5, 0.999, 1.5, np.nan, np.inf, -np.inf])
halves = st.integers(-8, 8).map(lambda i: i / 2)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.lists(st.tuples(values, halves), max_size=300), st.integers(1, 7))
def test_weighted_fill_is_boost_histograms_weight_storage(
    rows: list[tuple[float, float]], bins: int
) -> None:
    x = np.array([r[0] for r in rows], dtype=np.float64)
    w = np.array([r[1] for r in rows], dtype=np.float64)
    h = gh.Histogram(bins, range=(0, 1), weights=True).fill(x, weights=w)
    ref = bh.Histogram(bh.axis.Regular(bins, 0, 1), storage=bh.storage.Weight())
    finite = ~np.isnan(x)
    ref.fill(x[finite], weight=w[finite])
    view = ref.view(flow=True)
    assert h.values(flow=True).tolist() == view.value.tolist()
    assert h.variances(flow=True).tolist() == view.variance.tolist()
    # numpy's weighted sums of the bins, and the rows of the flow.
    sums, _ = np.histogram(x, bins, (0, 1), weights=w)
    squares, _ = np.histogram(x, bins, (0, 1), weights=w * w)
    assert h.values().tolist() == sums.tolist()
    assert h.variances().tolist() == squares.tolist()
    assert h.nan == int(np.isnan(x).sum())
    assert h.underflow == int((x < 0).sum()) and h.overflow == int((x > 1).sum())


def test_null_weights_and_values_are_nulls_and_nan_weights_make_their_bin_nan() -> None:
    h = gh.Histogram(2, range=(0, 2), weights=True)
    x = pl.Series([0.5, 0.5, 1.5, None, 1.5, -3.0, 9.0])
    w = pl.Series([1.0, float("nan"), None, 2.0, float("-inf"), float("inf"), 0.5])
    h.fill(x, weights=w)
    assert h.flow == gh.Flow(rows=7, counted=3, null=2, nan=0, underflow=1, overflow=1)
    values, variances = h.values(flow=True), h.variances(flow=True)
    assert np.isnan(values[1]) and np.isnan(variances[1])
    assert values.tolist()[2:] == [-np.inf, 0.5] and values[0] == np.inf
    assert variances.tolist()[2:] == [np.inf, 0.25] and variances[0] == np.inf


def test_squares_past_float64s_range_are_infinite_and_the_rest_exact() -> None:
    # 1e200 squared is +inf: the squares' grid comes from the largest finite square (0.25), so
    # the other bins' squares stay exact (the sums share 1e200's grid: 0.25 and 0.5 are below
    # its step there, docs/semantics.md).
    x = np.array([0.5, 1.5, 1.5])
    w = np.array([1e200, 0.25, 0.5])
    h = gh.Histogram(3, range=(0, 3), weights=True).fill(x, weights=w)
    assert h.values()[0] == 1e200
    assert h.variances().tolist() == [np.inf, 0.3125, 0.0]


def test_the_sums_are_numpys_in_any_chunking() -> None:
    # The default float sums: within float64's rounding of numpy's, however the rows are chunked.
    rng = np.random.default_rng(49)
    x = rng.standard_normal(300_000)
    w = rng.standard_normal(300_000) * 1e3
    sums, _ = np.histogram(x, 256, (-3, 3), weights=w)
    squares, _ = np.histogram(x, 256, (-3, 3), weights=w * w)
    for chunks in (1, 7):
        xs = pl.concat([pl.Series(p) for p in np.array_split(x, chunks)], rechunk=False)
        ws = pl.concat([pl.Series(p) for p in np.array_split(w, chunks + 2)], rechunk=False)
        h = gh.Histogram(256, range=(-3, 3), weights=True).fill(xs, weights=ws)
        np.testing.assert_allclose(h.values(), sums, rtol=1e-9, atol=1e-6)
        np.testing.assert_allclose(h.variances(), squares, rtol=1e-9)
