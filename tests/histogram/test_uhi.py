"""The boost-histogram and hist API of Histogram (issue 49 items 2 and 3): Regular axes that
merge with the user's, UHI indexing and assignment, projections, flow bins of every rank,
copies and scaling, each held to boost-histogram 1.8 and hist 2.12 on the same counts
(``to_boost()`` carries them, then the same operation there)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_gpu_hist as gh

bh = pytest.importorskip("boost_histogram")
hist = pytest.importorskip("hist")

EXAMPLES = min(settings().max_examples, 200)


def view(b: Any, flow: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """boost's values and variances (None for counts)."""
    v = b.view(flow=flow)
    if v.dtype.names:
        return np.asarray(v.value), np.asarray(v.variance)
    return np.asarray(v), None


def assert_same(ours: Any, theirs: Any) -> None:
    """Our result equals boost's: a value, or a histogram's contents, flow bins and axes."""
    if not hasattr(theirs, "axes"):
        if hasattr(theirs, "variance"):
            assert (ours.value, ours.variance) == pytest.approx((theirs.value, theirs.variance))
        else:
            assert ours == theirs
        return
    assert isinstance(ours, gh.Histogram)
    flow = ours.axes[0].traits.underflow
    values, variances = view(theirs, flow)
    np.testing.assert_allclose(ours.values(flow=flow), values, rtol=1e-12)
    if variances is not None:
        np.testing.assert_allclose(ours.variances(flow=flow), variances, rtol=1e-12)
    assert ours.ndim == theirs.ndim
    for a, b in zip(ours.axes, theirs.axes):
        # Boost's regular edges are numpy's within a rounding of the axis' span.
        atol = 1e-12 * float(np.abs(a.edges).max())
        np.testing.assert_allclose(a.edges, b.edges, rtol=1e-12, atol=atol)
        np.testing.assert_allclose(a.centers, b.centers, rtol=1e-12, atol=atol)
        np.testing.assert_allclose(a.widths, b.widths, rtol=1e-9, atol=atol)


@st.composite
def histograms(draw: st.DrawFn, max_axes: int = 3) -> gh.Histogram:
    """A filled histogram of 1 to 3 axes (equal, uneven or integer bins), counting or
    weighted, with values outside every axis."""
    d = draw(st.integers(1, max_axes))
    bins: list[Any] = []
    ranges: list[Any] = []
    for _ in range(d):
        kind = draw(st.sampled_from(["regular", "variable", "integer"]))
        n = draw(st.integers(1, 7))
        if kind == "regular":
            lo = draw(st.sampled_from([0.0, -1.0, 0.1, -4.0]))
            bins.append(n)
            ranges.append((lo, lo + draw(st.sampled_from([1.0, 3.0, 100.0]))))
        elif kind == "variable":
            widths = draw(st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=n, max_size=n))
            bins.append([0.0, *np.cumsum(widths).tolist()])
            ranges.append(None)
        else:
            lo = draw(st.integers(-3, 3))
            bins.append("integer")
            ranges.append((lo, lo + n - 1))
    weighted = draw(st.booleans())
    h = gh.Histogram(
        bins if d > 1 else bins[0], range=ranges if d > 1 else ranges[0], weights=weighted
    )
    rows = draw(st.integers(0, 60))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    columns = []
    for axis in h.axes:
        lo, hi = axis.edges[0], axis.edges[-1]
        span = hi - lo
        columns.append(rng.uniform(lo - span / 3, hi + span / 3, rows))
    weights = rng.choice([0.5, 1.0, 2.0, -1.0], rows) if weighted else None
    return h.fill(*columns, weights=weights)


@st.composite
def entries(draw: st.DrawFn, n: int, centres: np.ndarray, flow: bool = True) -> Any:
    """One UHI index entry for an axis of ``n`` bins (locators at bin centres, where boost's
    and numpy's edges agree)."""
    bound = st.one_of(
        st.none(),
        st.integers(-n - 1, n + 1),
        st.sampled_from(centres).map(bh.loc),
    )
    choice = draw(st.sampled_from(["int", "loc", "flow", "slice", "rebin", "sum", "full"]))
    if choice == "int":
        return draw(st.integers(-n, n - 1))
    if choice == "loc":
        return bh.loc(float(draw(st.sampled_from(centres))))
    if choice == "flow":
        return draw(st.sampled_from([bh.underflow, bh.overflow]))
    if choice == "full":
        return slice(None)
    start, stop = draw(bound), draw(bound)
    step = {"slice": None, "rebin": bh.rebin(draw(st.integers(1, 3))), "sum": sum}[choice]
    return slice(start, stop, step)


def spots(axis: Any) -> np.ndarray:
    """Where to locate on an axis: bin centres (boost's and numpy's edges agree there), and the
    values of an integer axis' bins (boost truncates -0.5 towards zero, into the bin of 0)."""
    return axis.edges[:-1] if axis.traits.discrete else axis.centers


def _effective(values: np.ndarray, variances: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(variances > 0, values**2 / variances, 0.0)


def boost_of(h: gh.Histogram) -> Any:
    b = h.to_boost()
    assert_same(h, b)
    return b


class FlowOnlySum(Exception):
    """boost 1.8 refuses a bounded sum of flow bins alone on a histogram of one axis."""


def outcome(f: Any) -> Any:
    """A result, or the exception type raised for a selection of no bins (boost raises it too,
    or, rebinning one bin of a Variable axis by more, makes an axis of none)."""
    try:
        out = f()
    except ValueError as e:
        return FlowOnlySum if "bins > 0 required" in str(e) else ValueError
    except IndexError:
        return IndexError
    if hasattr(out, "axes") and any(len(a) == 0 for a in out.axes):
        return ValueError
    return out


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data())
def test_indexing_equals_boost_histogram_on_the_same_counts(data: st.DataObject) -> None:
    h = data.draw(histograms())
    b = boost_of(h)
    index = tuple(data.draw(entries(len(a), spots(a))) for a in h.axes)
    ours, theirs = outcome(lambda: h[index]), outcome(lambda: b[index])
    if theirs is FlowOnlySum:
        return  # ours sums the flow bins (or refuses an empty selection)
    if isinstance(theirs, type):
        assert ours is theirs or isinstance(ours, type), (index, ours, theirs)
        return
    assert not isinstance(ours, type), (index, ours)
    assert_same(ours, theirs)
    if isinstance(ours, gh.Histogram):
        # The result converts back to what boost made (its axes' kinds too).
        assert_same(ours, ours.to_boost())
        assert [type(a).__name__ for a in ours.to_boost().axes] == [
            type(a).__name__ for a in theirs.axes
        ]


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data())
def test_dict_indexing_by_number_or_name_and_ellipsis(data: st.DataObject) -> None:
    h = data.draw(histograms())
    b = boost_of(h)
    axis = data.draw(st.integers(0, h.ndim - 1))
    entry = data.draw(entries(len(h.axes[axis]), spots(h.axes[axis])))
    theirs = outcome(lambda: b[{axis: entry}])
    if theirs is FlowOnlySum:
        return
    for ours in (
        outcome(lambda: h[{axis: entry}]),
        outcome(lambda: h[{h.axes[axis].name: entry}]),
        outcome(lambda: h[(slice(None),) * axis + (entry, ...)]),
    ):
        if isinstance(theirs, type):
            assert isinstance(ours, type)
        else:
            assert_same(ours, theirs)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data())
def test_hist_complex_shortcuts_equal_hist(data: st.DataObject) -> None:
    h = data.draw(histograms(max_axes=1))
    theirs_h = h.to_hist()
    (axis,) = h.axes
    centre = float(data.draw(st.sampled_from(spots(axis))))
    lo, hi = sorted(data.draw(st.lists(st.sampled_from(spots(axis)), min_size=2, max_size=2)))
    factor = data.draw(st.integers(1, 3))
    for index in (
        centre * 1j,
        slice(lo * 1j, None),
        slice(None, hi * 1j),
        slice(None, None, factor * 1j),
    ):
        ours = outcome(lambda index=index: h[index])
        theirs = outcome(lambda index=index: theirs_h[index])
        if isinstance(theirs, type):
            assert isinstance(ours, type), index
        else:
            assert_same(ours, theirs)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data())
def test_projections_sums_and_flow_of_every_rank_equal_boost(data: st.DataObject) -> None:
    h = data.draw(histograms())
    b = boost_of(h)
    assert h.values(flow=True).shape == tuple(len(a) + 2 for a in h.axes)
    for flow in (False, True):
        assert h.sum(flow=flow) == pytest.approx(
            b.sum(flow=flow).value if h.weighted else b.sum(flow=flow)
        )
        # Weighted: UHI's effective counts, sum(w)**2 / sum(w**2) (boost 1.8 gives the sums of
        # weights of its Weight storage there, against its own docstring).
        values, variances = view(b, flow)
        expected = b.counts(flow=flow) if variances is None else _effective(values, variances)
        np.testing.assert_allclose(h.counts(flow=flow), expected, rtol=1e-12)
    order = data.draw(st.permutations(range(h.ndim)))
    keep = order[: data.draw(st.integers(1, h.ndim))]
    assert_same(h.project(*keep), b.project(*keep))
    names = [h.axes[i].name for i in keep]
    assert_same(h.project(*names), b.project(*keep))


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data())
def test_setting_equals_boost(data: st.DataObject) -> None:
    h = data.draw(histograms(max_axes=2))
    b = boost_of(h)
    index = tuple(
        data.draw(
            st.one_of(
                st.integers(0, len(a) - 1),
                st.just(slice(None)),
                st.sampled_from([bh.underflow, bh.overflow]),
                st.integers(0, len(a) - 1).map(lambda i: slice(i, None)),
            )
        )
        for a in h.axes
    )
    value: Any = data.draw(st.integers(0, 9))
    if h.weighted:
        value = bh.accumulators.WeightedSum(value, value * 2)
    h[index] = value
    b[index] = value
    assert_same(h, b)


def test_regular_axes_merge_with_the_users_hist() -> None:
    # Boost's regular edges differ from numpy's at some bins here (14, 28, 56, 58).
    x = np.random.default_rng(0).uniform(0, 100, 1000)
    ours = gh.Histogram(50, range=(0, 100), name="pt").fill(x)
    user = hist.Hist.new.Reg(50, 0, 100, name="pt").Int64().fill(x[:10])
    total = ours.to_hist() + user
    assert type(total.axes[0]).__name__ == "Regular"
    np.testing.assert_array_equal(ours.to_hist().values(), ours.values())
    assert total.sum() == 1010
    exact = ours.to_hist(axes="variable")
    assert type(exact.axes[0]).__name__ == "Variable"
    np.testing.assert_array_equal(exact.axes[0].edges, np.linspace(0, 100, 51))
    assert not np.array_equal(ours.to_boost().axes[0].edges, np.linspace(0, 100, 51))
    np.testing.assert_array_equal(ours.to_boost().values(), np.histogram(x, 50, (0, 100))[0])
    ints = gh.Histogram("integer", range=(0, 9)).fill(np.arange(12))
    assert type(ints.to_boost().axes[0]).__name__ == "Integer"
    assert ints.to_boost().axes[0].edges.tolist() == list(range(11))
    assert ints.axes[0].centers[0] == 0.5 and ints.axes[0].traits.discrete


def test_axes_name_label_and_the_rest_of_the_api() -> None:
    h = gh.Histogram([4, 2], range=[(0, 4), (0, 2)], name=["pt", "eta"], label=["$p_T$", None])
    h.fill([0.5, 1.5, 9.0], [0.5, 1.5, 0.5])
    assert h.ndim == 2 and h.axes.name == ("pt", "eta") and h.axes.label == ("$p_T$", "eta")
    assert h.axes["eta"] is not None and h.axes["eta"].size == 2
    np.testing.assert_array_equal(h.axes[0].widths, [1.0] * 4)
    c = h.copy()
    assert c == h and c is not h
    c.fill([0.5], [0.5])
    assert c != h
    assert h.copy().reset().sum(flow=True) == 0
    scaled = h * 2
    assert scaled.weighted and scaled.sum() == 2 * h.sum()
    np.testing.assert_array_equal(scaled.variances(), 4 * h.values())
    np.testing.assert_array_equal((h / 2).values(), h.values() / 2)
    h2 = h.copy()
    h2 *= 3
    np.testing.assert_array_equal(h2.values(flow=True), 3 * h.values(flow=True))
    with pytest.raises(ValueError, match="whole numbers"):
        h[0, 0] = 0.5
    with pytest.raises(KeyError, match="no axis named"):
        h[{"phi": 0}]


@pytest.mark.parametrize("d", [2, 3])
def test_an_index_of_too_few_or_too_many_entries_is_refused_as_boost_refuses_it(d: int) -> None:
    h = gh.Histogram([4] * d, range=[(0, 1)] * d)
    h.fill(*np.random.default_rng(d).random((d, 50)))
    b = h.to_boost()
    whole = (slice(1, 3), *[slice(None, None, sum)] * (d - 1))
    assert_same(h[whole], b[whole])
    for index in [whole[:-1], (*whole, 0)]:
        for ours_or_boost in (h, b):
            with pytest.raises(IndexError):
                ours_or_boost[index]
    # An ellipsis stands for the entries left out.
    assert_same(h[1:3, ...], b[1:3, ...])
