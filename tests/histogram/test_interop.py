"""scikit-hep interop and axis names: ``to_boost``, ``to_hist``,
``bh.Histogram(h)``, ``hist.Hist(h)`` keep the edges, counts, variances, flow and names."""

from __future__ import annotations

import pickle
import sys

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import polars_gpu_hist as gh

values_st = st.lists(
    st.one_of(st.floats(-10, 10, allow_nan=False), st.just(float("nan"))), max_size=60
)


def check_same(h: gh.Histogram, other: object) -> None:
    """``other`` (boost-histogram or hist) holds ``h``'s edges (boost's Regular ones, within a
    rounding of numpy's), values, variances and flow."""
    for ours, theirs in zip(h.axes, other.axes):  # type: ignore[attr-defined]
        np.testing.assert_allclose(theirs.edges, ours.edges, rtol=1e-15, atol=1e-14)
        assert theirs.name == ours.name and theirs.label == ours.label
    np.testing.assert_array_equal(other.values(flow=True), h.values(flow=True))  # type: ignore[attr-defined]
    np.testing.assert_array_equal(other.variances(flow=True), h.variances(flow=True))  # type: ignore[attr-defined]


@given(values_st, st.booleans(), st.integers(1, 12))
def test_to_boost_and_to_hist_round_trip_counts_variances_and_flow(
    values: list[float], weighted: bool, bins: int
) -> None:
    bh = pytest.importorskip("boost_histogram")
    hist = pytest.importorskip("hist")
    x = np.array(values, dtype=np.float64)
    h = gh.Histogram(bins, range=(-5, 5), weights=weighted, name="x", label="x [cm]")
    if weighted:
        h.fill(x, weights=np.linspace(0.5, 2.0, len(x)))
    else:
        h.fill(x)
    for converted in (h.to_boost(), bh.Histogram(h)):
        assert isinstance(converted, bh.Histogram)
        check_same(h, converted)
    for converted in (h.to_hist(), hist.Hist(h)):
        assert isinstance(converted, hist.Hist)
        check_same(h, converted)
    # numpy's edges exactly, where asked.
    for ours, theirs in zip(h.axes, h.to_hist(axes="variable").axes):
        np.testing.assert_array_equal(theirs.edges, ours.edges)
        assert converted.axes[0].label == "x [cm]"
    storage = bh.storage.Weight if weighted else bh.storage.Int64
    assert isinstance(h.to_boost().storage_type(), storage)


def test_uneven_edges_and_several_axes_convert() -> None:
    bh = pytest.importorskip("boost_histogram")
    h = gh.Histogram([[0, 1, 3, 10], 4], range=[None, (0, 1)], name=["a", "b"])
    h.fill(np.array([0.5, 2, 9, 20]), np.array([0.1, 0.2, 0.9, 0.5]))
    out = h.to_boost()
    assert isinstance(out.axes[0], bh.axis.Variable)
    assert isinstance(out.axes[1], bh.axis.Regular)
    # n-D: the flow bins of every axis (issue 49), as boost has them.
    assert out.axes[0].traits.underflow and out.axes[1].traits.overflow
    np.testing.assert_array_equal(out.values(), h.values())
    np.testing.assert_array_equal(out.values(flow=True), h.values(flow=True))
    assert [a.name for a in out.axes] == ["a", "b"]


def test_a_missing_package_names_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "boost_histogram", None)
    monkeypatch.setitem(sys.modules, "hist", None)
    h = gh.Histogram(2, range=(0, 1))
    with pytest.raises(ImportError, match="pip install boost-histogram"):
        h.to_boost()
    with pytest.raises(ImportError, match="pip install hist"):
        h.to_hist()


def test_axes_take_the_name_of_the_column_and_keep_it() -> None:
    h = gh.Histogram(3, range=(0, 3))
    assert h.axes[0].name == "x"  # unnamed
    h.fill(pl.Series("delay", [0.5, 1.5]))
    h.fill(pl.Series("other", [2.5]))  # the first name stays
    assert h.axes[0].name == h.axes[0].label == "delay"
    assert pickle.loads(pickle.dumps(h)).axes[0].name == "delay"
    assert (gh.Histogram(3, range=(0, 3)) + h).axes[0].name == "delay"
    assert sum([h, h]).axes[0].name == "delay"
    unnamed = gh.Histogram(3, range=(0, 3)).fill(np.array([0.5]))
    assert unnamed.axes[0].name == "x" and unnamed == gh.Histogram(3, range=(0, 3)).fill([0.5])
    labelled = gh.Histogram(3, range=(0, 3), label="delay (min)").fill(np.array([1.0]))
    assert labelled.axes[0].label == "delay (min)" and labelled.axes[0].name == "x"
    two = gh.Histogram([2, 2], range=[(0, 1), (0, 1)]).fill(
        pl.DataFrame({"lat": [0.1], "lon": [0.7]})
    )
    assert [a.name for a in two.axes] == ["lat", "lon"]
    assert two.to_frame().columns == ["lat_start", "lat_end", "lon_start", "lon_end", "count"]
    with pytest.raises(ValueError, match="`name`"):
        gh.Histogram(2, range=(0, 1), name=["a", "b"])


def test_histogram_scan_names_the_axis(tmp_path: object) -> None:
    frame = pl.DataFrame({"speed": [1.0, 2.0, 3.0]}).lazy()
    h = gh.histogram_scan(frame, "speed", bins=3, range=(0, 3))
    assert h.axes[0].name == "speed"


def test_the_plot_titles_the_axis_with_its_label() -> None:
    pytest.importorskip("altair")
    h = gh.Histogram(3, range=(0, 3), label="delay (min)").fill(np.array([0.5, 1.5]))
    spec = h.plot().to_dict()
    assert spec["encoding"]["x"]["title"] == "delay (min)"
    two = gh.Histogram([2, 2], range=[(0, 1), (0, 1)], name=["lat", "lon"]).fill([0.1], [0.7])
    spec = two.plot().to_dict()
    assert (spec["encoding"]["x"]["title"], spec["encoding"]["y"]["title"]) == ("lat", "lon")


def test_mplhep_labels_the_axis_with_its_name() -> None:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    plt = pytest.importorskip("matplotlib.pyplot")
    mplhep = pytest.importorskip("mplhep")
    h = gh.Histogram(3, range=(0, 3)).fill(pl.Series("delay", [0.5, 1.5]))
    fig, ax = plt.subplots()
    try:
        mplhep.histplot(h, ax=ax)
        assert ax.get_xlabel() == "delay"
    finally:
        plt.close(fig)


def test_a_failed_fill_names_nothing_and_names_are_not_labels() -> None:
    h = gh.Histogram(3, range=(0, 3))
    with pytest.raises(TypeError):
        h.fill(pl.Series("words", ["a"]))
    assert h.axes[0].name == "x"
    scanned = gh.histogram_scan(pl.LazyFrame({"v": [1.0]}), "v", 2, range="auto")
    scanned.fill(pl.Series("v", [1.0]))
    state = scanned.__getstate__()
    assert state["names"] == ["v"] and state["labels"] == [None]
