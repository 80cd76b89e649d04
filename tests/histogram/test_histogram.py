"""The mergeable Histogram: any batch split equals one numpy.histogram; refusals; pickling."""

from __future__ import annotations

import datetime as dt
import pickle
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import polars_gpu_hist as gh
from polars_gpu_hist._scan.passes import data_extremes
from support.numpy_reference import collapses, edges_of, span_overflows
from support.strategies import Case, cases, numpy_histogram

# Each example fills several batches: fewer examples than the one-call parity tests.
EXAMPLES = min(settings().max_examples, 150)


def split_points(draw: st.DrawFn, n: int) -> list[int]:
    cuts = draw(st.lists(st.integers(0, n), max_size=6))
    return [0, *sorted(cuts), n]


def batches(case: Case, cuts: list[int]) -> list[tuple[pl.Series, pl.Series | None]]:
    out = []
    for a, b in zip(cuts[:-1], cuts[1:]):
        w = None if case.weights is None else case.weights.slice(a, b - a)
        out.append((case.series.slice(a, b - a), w))
    return out


def new_histogram(case: Case) -> gh.Histogram:
    weighted = case.weights is not None
    if isinstance(case.bins, int) and case.range is None:
        # numpy's range from all the data, found first (what histogram_scan(range="auto") does).
        frame = pl.DataFrame({"x": case.series, "w": case.weights})
        w = None if case.weights is None else "w"
        extremes = data_extremes(frame.lazy(), "x", case.series.dtype, w)
        return gh.Histogram._from_data_range(
            case.bins, extremes, closed="left", weights=weighted, device="cpu"
        )
    return gh.Histogram(case.bins, range=case.range, weights=weighted, device="cpu")


def check_batches(case: Case, cuts: list[int], merge_at: int) -> None:
    def one_call() -> tuple[np.ndarray, np.ndarray]:
        one = gh.histogram(
            case.series, case.bins, range=case.range, weights=case.weights, device="cpu"
        )
        return one["count"].to_numpy(), edges_of(one)

    try:
        with np.errstate(all="ignore"):
            expected, expected_edges = numpy_histogram(case)
    except IndexError:
        # numpy's arithmetic overflows and it fails (test_numpy_parity holds ours to the
        # edges there): the batches must equal one call of ours.
        expected, expected_edges = one_call()
    except ValueError as e:
        if "too many bins" in str(e).lower() and span_overflows(case) and not collapses(case):
            expected, expected_edges = one_call()  # the same deliberate difference
        else:
            return check_refused(case, cuts, e)
    parts = batches(case, cuts)
    # Two histograms fill the batches before and after `merge_at`, then merge.
    merge_at = min(merge_at, len(parts))
    first, second = new_histogram(case), new_histogram(case)
    for values, w in parts[:merge_at]:
        first.fill(values, w)
    for values, w in parts[merge_at:]:
        second.fill(values, w)
    total = first + second
    if np.isnan(expected_edges).any():
        # numpy's NaN edges over a span wider than float64 (docs/semantics.md): ours equal one call.
        expected, expected_edges = one_call()
    if case.exact_weights:
        np.testing.assert_array_equal(total.counts, expected, strict=False)
    else:
        # Sums of fractions: equal up to the order of additions (NaN and infinities alike).
        np.testing.assert_allclose(total.counts, expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(total.edges, expected_edges.astype(np.float64))
    frame = total.to_frame()
    assert frame.columns == ["bin_start", "bin_end", "count"]
    assert frame.height == len(expected)


def check_refused(case: Case, cuts: list[int], e: ValueError) -> None:
    message = "not finite" if "not finite" in str(e) else "too many bins"
    with pytest.raises(ValueError, match=message):
        h = new_histogram(case)
        for values, w in batches(case, cuts):
            h.fill(values, w)


@settings(max_examples=EXAMPLES)
@given(cases(), st.data())
def test_any_batch_split_equals_numpy(case: Case, data: st.DataObject) -> None:
    cuts = split_points(data.draw, len(case.series))
    check_batches(case, cuts, data.draw(st.integers(0, len(cuts))))


@settings(max_examples=EXAMPLES // 2)
@given(cases(weighted=True, max_size=200), st.data())
def test_weights_in_batches_equal_numpy(case: Case, data: st.DataObject) -> None:
    cuts = split_points(data.draw, len(case.series))
    check_batches(case, cuts, data.draw(st.integers(0, len(cuts))))


def test_to_frame_matches_the_expression() -> None:
    x = pl.Series("x", np.random.default_rng(1).normal(size=5000))
    h = gh.Histogram([-3, -1, 0, 0.5, 2, 3]).fill(x[:1234]).fill(x[1234:])
    expected = pl.DataFrame({"x": x}).select(pl.col("x").gpu_hist.histogram([-3, -1, 0, 0.5, 2, 3]))
    assert h.to_frame().equals(expected.unnest("x"))
    dens = pl.DataFrame({"x": x}).select(
        pl.col("x").gpu_hist.histogram([-3, -1, 0, 0.5, 2, 3], density=True)
    )
    assert h.to_frame(density=True).equals(dens.unnest("x"))


def test_inputs_of_every_kind() -> None:
    pd = pytest.importorskip("pandas")
    values = [0.5, 1.5, 2.5, np.nan]
    h = gh.Histogram(3, range=(0, 3))
    h.fill(pl.Series(values)).fill(np.array(values)).fill(values)
    h.fill(pl.DataFrame({"v": values})).fill(pd.Series(values))
    assert h.counts.tolist() == [5, 5, 5]
    with pytest.raises(TypeError, match="one column"):
        h.fill(pl.DataFrame({"a": [1.0], "b": [2.0]}))
    # One axis flattens an array of several dimensions as numpy does (issue 49 item 9); the
    # columns of several axes must be 1-D.
    h.fill(np.zeros((2, 2)))
    assert h.counts.tolist() == [9, 5, 5]
    with pytest.raises(ValueError, match="1-D"):
        gh.Histogram([2, 2], range=[(0, 1), (0, 1)]).fill(np.zeros((2, 2)), np.zeros((2, 2)))
    with pytest.raises(TypeError, match="histogram_scan"):
        h.fill(pl.LazyFrame({"a": [1.0]}))


def test_merge_refuses_different_binning() -> None:
    a = gh.Histogram(10, range=(0, 1))
    for other in [
        gh.Histogram(11, range=(0, 1)),
        gh.Histogram(10, range=(0, 2)),
        gh.Histogram(10, range=(0, 1), closed="right"),
        gh.Histogram(np.linspace(0, 1, 11)),
    ]:
        with pytest.raises(ValueError, match="different binning"):
            a + other
    with pytest.raises(ValueError, match="weighted"):
        a.merge(gh.Histogram(10, range=(0, 1), weights=True))
    with pytest.raises(TypeError):
        a + 1  # type: ignore[operator]


def test_the_first_fill_fixes_the_dtype() -> None:
    f32 = gh.Histogram(10, range=(0.1, 0.9)).fill(np.float32([0.1, 0.3]))
    # numpy bins Float32 data with float32 edges: 0.1f32 != 0.1.
    assert f32.edges[0] == np.float32(0.1)
    before = f32.counts.copy()
    with pytest.raises(ValueError, match="Float32"):
        f32.fill(np.float64([0.5]))
    np.testing.assert_array_equal(f32.counts, before)  # nothing changed
    f64 = gh.Histogram(10, range=(0.1, 0.9)).fill(np.float64([0.5]))
    with pytest.raises(ValueError, match="Float32"):
        f64 + f32
    # Integers bin like Float64 and mix with it.
    f64.fill(np.int64([0, 1])).fill(pl.Series([1], dtype=pl.UInt8))
    assert int(f64.counts.sum()) == 1
    # An unfilled histogram merges with anything of its binning and takes its dtype.
    taken = gh.Histogram(10, range=(0.1, 0.9)) + f32
    with pytest.raises(ValueError, match="Float32"):
        taken.fill(np.float64([0.5]))


def test_temporal_fills_keep_dtype_and_units() -> None:
    days = pl.Series([dt.date(2024, 1, d) for d in range(1, 11)])
    lo, hi = days.to_physical().min(), days.to_physical().max()
    h = gh.Histogram(3, range=(lo, hi)).fill(days[:4]).fill(days[4:])
    frame = h.to_frame()
    assert frame["bin_start"].dtype == pl.Date
    assert frame["count"].to_list() == [3, 3, 4]
    with pytest.raises(ValueError, match="other units"):
        h.fill(days.cast(pl.Datetime("us")))


def test_bad_arguments_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="needs `range=\\(min, max\\)`"):
        gh.Histogram(10)
    with pytest.raises(ValueError, match="histogram_scan"):
        gh.Histogram(10, range="auto")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="positive"):
        gh.Histogram(0, range=(0, 1))
    with pytest.raises(ValueError, match="min <= max"):
        gh.Histogram(3, range=(1, 0))
    with pytest.raises(ValueError, match="increase strictly"):
        gh.Histogram([0, 2, 1])
    with pytest.raises(ValueError, match="left"):
        gh.Histogram(3, range=(0, 1), closed="middle")  # type: ignore[arg-type]
    counting, summing = gh.Histogram(2, range=(0, 1)), gh.Histogram(2, range=(0, 1), weights=True)
    with pytest.raises(ValueError, match="weights=True"):
        counting.fill([0.5], weights=[2.0])
    with pytest.raises(ValueError, match="needs `weights`"):
        summing.fill([0.5])
    with pytest.raises(ValueError, match="same length"):
        summing.fill([0.5, 0.6], weights=[1.0])
    with pytest.raises(TypeError, match="dtype String"):
        counting.fill(pl.Series(["a"]))


def test_pickles_and_sums() -> None:
    rng = np.random.default_rng(7)
    x, w = rng.uniform(-1, 2, 1000).astype(np.float32), rng.integers(0, 5, 1000).astype(float)
    h = gh.Histogram(7, range=(0, 1), weights=True, device="cpu").fill(x, w)
    back = pickle.loads(pickle.dumps(h))
    np.testing.assert_array_equal(back.counts, h.counts)
    np.testing.assert_array_equal(back.edges, h.edges)  # float32 edges survive
    assert back.to_frame().equals(h.to_frame())
    with pytest.raises(ValueError, match="Float32"):
        back.fill(x.astype(np.float64), w)
    parts = [
        gh.Histogram(7, range=(0, 1), weights=True).fill(xs, ws)
        for xs, ws in zip(np.array_split(x, 5), np.array_split(w, 5))
    ]
    np.testing.assert_array_equal(sum(parts).counts, h.counts)
    expected, _ = np.histogram(x, bins=7, range=(0, 1), weights=w)
    np.testing.assert_array_equal(h.counts, expected)
    assert len(h) == 7 and h.weighted


def test_pickles_of_version_0_1_load() -> None:
    # Written by 0.1 (the Histogram's module was `polars_gpu_hist._accumulator` then).
    stored = (Path(__file__).parents[1] / "fixtures" / "histograms_0.1.pickle").read_bytes()
    assert b"polars_gpu_hist._accumulator" in stored
    state = pickle.loads(stored)
    one, two = state["one_axis"], state["two_axes_weighted"]
    assert isinstance(one, gh.Histogram) and isinstance(state["flow"], gh.Flow)
    np.testing.assert_array_equal(one.counts, [1, 2, 0, 1])
    assert one.flow == state["flow"] == gh.Flow(7, 4, 0, 1, 1, 1)
    np.testing.assert_array_equal(two.counts, [[2.0, 0.0], [0.0, 0.5]])
    np.testing.assert_array_equal(two.variances(), [[4.0, 0.0], [0.0, 0.25]])
    # Pickled again, they name the public path.
    again = pickle.dumps(one)
    assert b"polars_gpu_hist._accumulator" not in again
    assert pickle.loads(again) == one


def test_counts_beyond_u32_survive_merges_and_pickles() -> None:
    h = gh.Histogram(2, range=(0, 1)).fill(np.zeros(1000))
    total = h
    for _ in range(32):  # 1000 * 2^32 rows' worth of counts by doubling
        total = total + total
    assert int(total.counts[0]) == 1000 * 2**32
    assert int(pickle.loads(pickle.dumps(total)).counts[0]) == 1000 * 2**32


def test_plot_is_an_altair_bar_chart() -> None:
    pytest.importorskip("altair")
    chart = gh.Histogram(4, range=(0, 1)).fill(np.linspace(0, 1, 50)).plot(title="t")
    spec = chart.to_dict()
    assert spec["mark"]["type"] == "bar"
    assert spec["encoding"]["x"]["field"] == "bin_start"


# --- n-D, variances, numpy's form, equality, the plotting protocol -------------------------


@settings(max_examples=EXAMPLES // 3)
@given(
    st.lists(
        st.tuples(
            st.floats(-2, 3, allow_nan=False), st.floats(0, 10, allow_nan=False), st.integers(0, 4)
        ),
        max_size=300,
    ),
    st.integers(1, 6),
    st.data(),
)
def test_n_d_fills_in_batches_equal_histogramdd(
    rows: list[tuple[float, float, int]], nx: int, data: st.DataObject
) -> None:
    x = np.array([r[0] for r in rows], dtype=np.float64)
    y = np.array([r[1] for r in rows], dtype=np.float32)
    w = np.array([r[2] for r in rows], dtype=np.float64)
    y_edges = [0.0, 2.5, 2.75, 10.0]
    expected, edges = np.histogramdd((x, y), bins=[nx, y_edges], range=[(-1, 2), None], weights=w)
    cuts = split_points(data.draw, len(rows))
    h = gh.Histogram([nx, y_edges], range=[(-1, 2), None], weights=True, device="cpu")
    for a, b in zip(cuts[:-1], cuts[1:]):
        h.fill(x[a:b], y[a:b], weights=w[a:b])
    assert h.shape == (nx, 3)
    np.testing.assert_array_equal(h.counts, expected)
    squares, _ = np.histogramdd((x, y), bins=[nx, y_edges], range=[(-1, 2), None], weights=w**2)
    np.testing.assert_array_equal(h.variances(), squares)
    counts, *got_edges = h.to_numpy()
    assert isinstance(counts, np.ndarray) and type(counts) is np.ndarray
    for e, g in zip(edges, got_edges):
        np.testing.assert_array_equal(g, e)
    _, dd_edges = h.to_numpy(dd=True)
    assert len(dd_edges) == 2


def test_n_d_takes_columns_in_every_form() -> None:
    x, y = np.array([0.1, 0.6, 0.9]), np.array([1.0, 2.5, 0.2])
    expected, _, _ = np.histogram2d(x, y, bins=[2, 3], range=[(0, 1), (0, 3)])
    forms = [(x, y), ((x, y),), (pl.DataFrame({"a": x, "b": y}),), (np.column_stack([x, y]),)]
    for form in forms:
        h = gh.Histogram([2, 3], range=[(0, 1), (0, 3)]).fill(*form)
        np.testing.assert_array_equal(h.counts, expected)
    frame = h.to_frame()
    assert frame.columns == ["x_start", "x_end", "y_start", "y_end", "count"]
    with pytest.raises(TypeError, match="2 axes"):
        h.fill(x)
    with pytest.raises(ValueError, match="one per axis"):
        gh.Histogram([2, 3, 4], range=[(0, 1), (0, 3)])


def test_variances_of_a_counting_histogram_are_its_counts() -> None:
    h = gh.Histogram(3, range=(0, 3)).fill([0.5, 0.5, 2.5])
    np.testing.assert_array_equal(h.variances(), [2.0, 0.0, 1.0])
    np.testing.assert_array_equal(h.counts(), [2.0, 0.0, 1.0])
    w = gh.Histogram(2, range=(0, 2), weights=True).fill([0.5, 0.5, 1.5], weights=[1.0, 3.0, 2.0])
    np.testing.assert_array_equal(w.variances(), [10.0, 4.0])
    np.testing.assert_allclose(w.counts(), [16.0 / 10.0, 1.0])  # effective entries
    back = pickle.loads(pickle.dumps(w))
    np.testing.assert_array_equal(back.variances(), w.variances())


def test_equality_compares_binning_dtype_and_contents() -> None:
    a = gh.Histogram(4, range=(0, 1)).fill([0.1, 0.2])
    assert a == gh.Histogram(4, range=(0, 1)).fill([0.2, 0.1])
    assert a != gh.Histogram(4, range=(0, 1)).fill([0.1, 0.9])
    assert a != gh.Histogram(4, range=(0, 1), closed="right").fill([0.1, 0.2])
    assert a != gh.Histogram(4, range=(0, 1)).fill(np.float32([0.1, 0.2]))
    assert a != gh.Histogram(5, range=(0, 1)).fill([0.1, 0.2])
    assert a == pickle.loads(pickle.dumps(a))


def test_the_plotting_protocol_is_followed() -> None:
    plottable = pytest.importorskip("uhi.typing.plottable")
    h = gh.Histogram([3, [0.0, 1.0, 4.0]], range=[(0, 3), None]).fill([0.5, 2.5], [0.5, 3.0])
    assert isinstance(h, plottable.PlottableHistogram)
    assert h.kind == "COUNT" and isinstance(h.kind, str)
    assert [len(a) for a in h.axes] == [3, 2]
    assert h.axes[1][1] == (1.0, 4.0) and h.axes[0][-1] == (2.0, 3.0)
    np.testing.assert_array_equal(h.axes[1].edges, [0.0, 1.0, 4.0])
    assert h.values().shape == h.variances().shape == h.counts().shape == (3, 2)
    assert not h.axes[0].traits.circular and not h.axes[0].traits.discrete


def test_repr_and_notebook_view_are_balanced() -> None:
    h = gh.Histogram(4, range=(0, 1)).fill([0.1, 0.2, 0.3])
    text = repr(h)
    assert text.startswith("Histogram(") and text.endswith(")")
    assert text.count("(") == text.count(")") and "total=3" in text
    html = h._repr_html_()
    # A bar for each bin that holds anything.
    assert html.count("<svg") == 1 and html.count("<rect") == 2 and "Float64" in html


def test_notebook_view_draws_a_heatmap_in_2d_and_sums_up_more_axes() -> None:
    h = gh.Histogram([3, 2], range=[(0, 3), (0, 2)]).fill([0.5, 0.5, 2.5], [0.5, 0.5, 1.5])
    html = h._repr_html_()
    # One cell per non-empty bin, the fuller one darker; y grows upwards.
    assert html.count("<svg") == 1 and html.count("<rect") == 2
    assert "fill-opacity='1.000'" in html
    assert "x: 3 equal bins on [0, 3]<br>y: 2 equal bins on [0, 2]" in html
    big = gh.Histogram([1000, 500], range=[(0, 1), (0, 1)]).fill(
        np.random.default_rng(0).random((20_000, 2))
    )
    html = big._repr_html_()
    # Cells merged to a few pixels each: a small SVG whatever the binning.
    assert html.count("<rect") <= 50 * 40 and len(html) < 200_000
    three = gh.Histogram([2, 2, 2], range=[(0, 1)] * 3).fill([0.1], [0.1], [0.9])
    html = three._repr_html_()
    assert "<svg" not in html and "8 (1 not empty)" in html


@given(
    st.one_of(
        st.lists(st.integers(-(2**40), 2**40), min_size=1, max_size=5),
        st.lists(st.floats(-1e12, 1e12), min_size=1, max_size=5),
    )
)
@example([0.1, 1e300])  # 1e300, not 301 digits
@example([-43, 1301])
@example([0.0, 5e-324])  # too narrow for 4 bins: refused, as numpy refuses it
def test_repr_writes_a_range_from_the_data_as_a_user_writes_it(values: list) -> None:
    # Not Rust's debug text (`Integer("-43", "1301")`): `range=(-43, 1301) (from the data)`.
    try:
        h = gh.histogram_scan(pl.LazyFrame({"x": values}), "x", 4, range="auto")
    except ValueError as refused:
        assert "too many bins for the data range" in str(refused)
        with pytest.raises(ValueError, match="Too many bins"):
            np.histogram(values, 4)
        return
    text = repr(h)
    found = re.search(r"range=\((\S+), (\S+)\) \(from the data\)", text)
    assert found is not None, text
    number = int if isinstance(values[0], int) else float
    assert [number(found.group(1)), number(found.group(2))] == [min(values), max(values)]
    assert "Integer(" not in text and "Float64(" not in text
    empty = pl.LazyFrame({"x": []}, schema={"x": pl.Float64})
    assert "range from the data (no values)" in repr(gh.histogram_scan(empty, "x", 4, range="auto"))


def test_repr_writes_large_and_tiny_numbers_short() -> None:
    assert "range=(1e-300, 1e300)" in repr(gh.Histogram(4, range=(1e-300, 1e300)))
    assert "range=(0, 1)" in repr(gh.Histogram(4, range=(0, 1)))
    edges = [0.0, 1e-9, *np.linspace(1, 1e20, 9)]
    assert "bins=[0, 1e-9, ..., 1e20] (11 edges)" in repr(gh.Histogram(edges))
