"""The scikit-hep world plots a Histogram through the UHI protocol: mplhep and hist accept it
and draw its values, edges and errors (matplotlib's Agg backend, no display)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import polars_gpu_hist as gh

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
plt = pytest.importorskip("matplotlib.pyplot")
mplhep = pytest.importorskip("mplhep")
hist_plot = pytest.importorskip("hist.plot")


@pytest.fixture
def ax() -> Iterator[Any]:
    fig, axes = plt.subplots()
    yield axes
    plt.close(fig)


def weighted() -> gh.Histogram:
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=1000), rng.uniform(0.5, 2.0, 1000)
    return gh.Histogram(12, range=(-3, 3), weights=True).fill(x, weights=w)


def check_stairs(artists: list, h: gh.Histogram) -> None:
    (drawn,) = artists
    values, edges = drawn.stairs.get_data()[:2]
    np.testing.assert_array_equal(values, h.values())
    np.testing.assert_array_equal(edges, h.edges)
    # Errors from the weighted storage: sqrt of the sums of squared weights.
    _, _, (bars,) = drawn.errorbar.lines
    lengths = [segment[1, 1] - segment[0, 1] for segment in bars.get_segments()]
    np.testing.assert_allclose(lengths, 2 * np.sqrt(h.variances()), rtol=1e-12)


def test_mplhep_histplot_draws_a_weighted_histogram_with_its_variances(ax: Any) -> None:
    h = weighted()
    assert not np.array_equal(h.variances(), h.values())  # a weighted storage, not Poisson
    check_stairs(mplhep.histplot(h, ax=ax), h)


def test_mplhep_hist2dplot_draws_the_cells(ax: Any) -> None:
    rng = np.random.default_rng(1)
    h = gh.Histogram([5, 4], range=[(0, 1), (0, 2)]).fill(rng.random(500), 2 * rng.random(500))
    mesh = mplhep.hist2dplot(h, ax=ax).pcolormesh
    # pcolormesh takes (y, x): the counts transposed.
    np.testing.assert_array_equal(np.asarray(mesh.get_array()).reshape(4, 5), h.values().T)
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    assert (x0, x1, y0, y1) == (0.0, 1.0, 0.0, 2.0)


def test_hist_plot_histplot_accepts_a_histogram(ax: Any) -> None:
    h = weighted()
    check_stairs(hist_plot.histplot(h, ax=ax), h)
