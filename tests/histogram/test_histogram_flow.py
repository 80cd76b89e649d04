"""What a Histogram did not count: nulls, NaN, under- and overflow, kept through fills, merges
and pickles, as boost-histogram keeps its flow bins; every row accounted for."""

from __future__ import annotations

import pickle

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_gpu_hist as gh

EXAMPLES = min(settings().max_examples, 100)


def expected_flow(x: np.ndarray, valid: np.ndarray, edges: np.ndarray) -> tuple[int, ...]:
    """(null, nan, underflow, overflow) by numpy: nulls first, then NaN, then outside."""
    present = x[valid]
    nan = int(np.isnan(present).sum()) if present.dtype.kind == "f" else 0
    finite = present[~np.isnan(present)] if present.dtype.kind == "f" else present
    return (
        int((~valid).sum()),
        nan,
        int((finite < edges[0]).sum()),
        int((finite > edges[-1]).sum()),
    )


def test_the_issues_example_records_the_three_not_counted() -> None:
    h = gh.Histogram(4, range=(0, 1)).fill(np.array([-5.0, 0.5, 7.0, np.nan]))
    assert h.counts.sum() == 1
    assert (h.underflow, h.overflow, h.nan, h.null) == (1, 1, 1, 0)
    assert h.flow == gh.Flow(rows=4, counted=1, null=0, nan=1, underflow=1, overflow=1)
    assert h.values(flow=True).tolist() == [1.0, 0.0, 0.0, 1.0, 0.0, 1.0]
    assert "underflow=1" in repr(h) and "nan=1" in repr(h)
    assert "not counted" in h._repr_html_()


@settings(max_examples=EXAMPLES)
@given(
    st.lists(
        st.one_of(
            st.none(),
            st.floats(allow_nan=True, allow_infinity=True, width=64),
            st.sampled_from([0.0, 1.0, -1.0, 2.0, 0.25]),
        ),
        max_size=60,
    ),
    st.sampled_from(["left", "right"]),
    st.integers(1, 4),
)
def test_every_row_is_accounted_for(values: list, closed: str, cuts: int) -> None:
    s = pl.Series("x", values, dtype=pl.Float64)
    h = gh.Histogram(5, range=(0.0, 1.0), closed=closed)
    step = max(1, len(s) // cuts)
    for start in range(0, max(len(s), 1), step):
        h.fill(s.slice(start, step))
    x = s.fill_null(0.0).to_numpy()
    null, nan, under, over = expected_flow(x, s.is_not_null().to_numpy(), h.edges)
    f = h.flow
    assert (f.null, f.nan, f.underflow, f.overflow) == (null, nan, under, over)
    assert f.rows == len(s) == f.counted + f.null + f.nan + f.underflow + f.overflow
    assert f.counted == int(h.counts.sum())


@pytest.mark.parametrize(
    "dtype", [pl.Int8, pl.UInt64, pl.Int64, pl.Float32, pl.Float16, pl.Datetime("ns")]
)
def test_flow_of_every_dtype_compares_as_the_bins_do(dtype: pl.DataType) -> None:
    raw = [0, 0, 1, 2, 3, 4, 5, 9, None, 100]
    s = pl.Series("x", raw).cast(dtype)
    h = gh.Histogram([1, 2, 4], closed="left").fill(s)
    # 1, 2, 3, 4 are counted (the last bin is closed); 0, 0 below; 5, 9, 100 above.
    assert int(h.counts.sum()) == 4
    assert h.flow == gh.Flow(rows=10, counted=4, null=1, nan=0, underflow=2, overflow=3)


def test_float32_values_on_a_float32_edge_are_not_flow() -> None:
    # numpy bins float32 data with float32 edges: 0.1f32 is the first edge, not below it.
    x = np.array([0.1, 0.3, 0.2], dtype=np.float32)
    h = gh.Histogram(2, range=(np.float32(0.1), np.float32(0.3))).fill(x)
    assert int(h.counts.sum()) == 3 and h.flow.underflow == h.flow.overflow == 0
    lo = np.nextafter(np.float32(0.1), np.float32(0))
    h.fill(np.array([lo], dtype=np.float32))
    assert h.underflow == 1


def test_weighted_flow_keeps_rows_and_weights() -> None:
    h = gh.Histogram(2, range=(0, 2), weights=True)
    x = pl.Series([-1.0, 0.5, 3.0, None, float("nan"), 1.5, 7.0])
    w = pl.Series([2.0, 1.0, 3.0, 5.0, 1.0, None, 4.0])
    h.fill(x, weights=w)
    # The null weight drops its row (1.5) as a null.
    assert h.flow == gh.Flow(rows=7, counted=1, null=2, nan=1, underflow=1, overflow=2)
    assert h.values(flow=True).tolist() == [2.0, 1.0, 0.0, 7.0]
    assert h.variances(flow=True).tolist() == [4.0, 1.0, 0.0, 25.0]


def test_flow_survives_merges_sums_and_pickles() -> None:
    a = gh.Histogram(3, range=(0, 3)).fill(np.array([-1.0, 0.5, 4.0, np.nan]))
    b = gh.Histogram(3, range=(0, 3)).fill(pl.Series([None, 5.0, 1.5]))
    total = a + b
    assert total.flow == gh.Flow(rows=7, counted=2, null=1, nan=1, underflow=1, overflow=2)
    assert sum([a, b]).flow == total.flow
    back = pickle.loads(pickle.dumps(total))
    assert back.flow == total.flow and back == total
    # A merge leaves its operands as they were.
    assert a.flow.rows == 4 and b.flow.rows == 3


def test_a_pickle_of_the_previous_format_still_loads() -> None:
    # Format 3 (before the flow was kept): its rows are the counted ones, nothing else known.
    h = gh.Histogram(3, range=(0, 3)).fill(np.array([0.5, 1.5, 1.7, 9.0]))
    state = pickle.loads(h.__getstate__()["state"])
    state["format"] = 3
    del state["flow"]
    old = gh.Histogram.__new__(gh.Histogram)
    old.__setstate__({"state": pickle.dumps(state, protocol=2)})
    assert old.counts.tolist() == [1, 2, 0]
    assert old.flow == gh.Flow(rows=3, counted=3, null=0, nan=0, underflow=0, overflow=0)
    # And a newer format than this version reads is refused, not misread.
    state["format"] = 99
    with pytest.raises(ValueError, match="format 99"):
        gh.Histogram.__new__(gh.Histogram).__setstate__({"state": pickle.dumps(state)})


def test_n_d_flow_rows_and_the_first_outside_axis_decides() -> None:
    h = gh.Histogram([2, 2], range=[(0, 1), (0, 1)])
    x = pl.Series([0.5, -1.0, 0.5, 2.0, None, np.nan, 0.5, -1.0])
    y = pl.Series([0.5, 0.5, 3.0, -4.0, 0.5, 0.5, None, np.nan])
    h.fill(x, y)
    # Rows: counted; x below; y above; x above (first axis decides); null; NaN; null; NaN.
    assert h.flow == gh.Flow(rows=8, counted=1, null=2, nan=2, underflow=1, overflow=2)
    # n-D axes have boost's flow bins, (n + 2) x (m + 2): x below at y inside; y above at x
    # inside; x above at y below (the row of (2, -4)); NaN and nulls in none.
    expected = np.zeros((4, 4))
    expected[0, 2] = expected[2, 3] = expected[3, 0] = 1
    expected[2, 2] = 1  # the row counted, at (0.5, 0.5)
    np.testing.assert_array_equal(h.values(flow=True), expected)
    assert h.axes[0].traits.underflow and h.axes[1].traits.overflow
    one = gh.Histogram(2, range=(0, 1))
    assert one.axes[0].traits.underflow and one.axes[0].traits.overflow


def test_flow_argument_is_checked() -> None:
    h = gh.Histogram(2, range=(0, 1))
    with pytest.raises(TypeError, match="`flow`"):
        h.values(flow="yes")  # type: ignore[arg-type]


def test_empty_like_clears_the_flow() -> None:
    h = gh.Histogram(2, range=(0, 1)).fill(np.array([5.0]))
    assert (0 + h).flow.overflow == 1
    assert h._core.empty_like().flow()[:5] == (0, 0, 0, 0, 0)


def test_flow_of_integers_past_2_53_adds_up() -> None:
    # A Histogram's edges are float64: integers round as numpy rounds them against float
    # edges, and the flow says where each row went, every row accounted for.
    big = 2**62
    x = pl.Series([big - 4096, big, big + 2048, big + 8192, None], dtype=pl.Int64)
    h = gh.Histogram([big, big + 2048], weights=True).fill(x, weights=np.ones(5))
    expected, _ = np.histogram(x.drop_nulls().to_numpy().astype(float), [big, big + 2048])
    assert h.counts.tolist() == expected.tolist() == [2]
    assert h.flow == gh.Flow(rows=5, counted=2, null=1, nan=0, underflow=1, overflow=1)
