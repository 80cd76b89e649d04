"""A notebook shows a histogram as hist does (issue 49 item 7): charts of any size inline, the
flow rows a chart leaves out named, TeX labels plain, the repr's picture from the real edges
(densities for uneven bins, negatives below zero, no stripes from merging), exact totals, axis
names, a readable explain(), tracebacks that end at the user's call."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh
import polars_gpu_hist.numpy as ghnp

alt = pytest.importorskip("altair")


def test_charts_of_any_size_render_inline_without_max_rows_error() -> None:
    rng = np.random.default_rng(0)
    h2 = gh.Histogram([100, 100], range=[(0, 1), (0, 1)]).fill(rng.random((2000, 2)))
    spec = h2.plot().to_dict()  # 10,000 rows: Altair's limit is 5,000
    (values,) = spec["datasets"].values()
    assert len(values) == 10_000
    h1 = gh.Histogram(6000, range=(0, 1)).fill(rng.random(1000))
    assert h1.plot().to_dict()


def test_a_chart_says_which_flow_rows_it_leaves_out() -> None:
    r = pl.DataFrame({"x": [-1.0, 0.5, 2.0, 3.0]}).select(
        pl.col("x").gpu_hist.histogram(bins=2, range=(0, 1), flow=True)
    )
    assert gh.plot.chart(r).to_dict()["title"] == "flow rows not drawn: 1 below, 1 above, holding 3"


def test_tex_labels_are_plain_text_in_charts() -> None:
    h = gh.Histogram(4, range=(0, 1), name="pt", label="$p_{T}$ [GeV]").fill([0.5])
    spec = h.plot().to_dict()
    assert spec["encoding"]["x"]["title"] == "p_T [GeV]"
    assert gh.plot.plain_label(r"$\eta^{2}$, $\Delta R_1$") == "η², Δ R₁"


def _rects(svg: str) -> list[tuple[float, float, float, float]]:
    found = re.findall(r"<rect x='([\d.]+)' y='([\d.]+)' width='([\d.]+)' height='([\d.]+)'", svg)
    return [tuple(map(float, r)) for r in found]  # type: ignore[misc]


def test_the_picture_draws_the_real_edges_and_densities_of_uneven_bins() -> None:
    # A wide last bin holding as many as a narrow one is as tall as its density, not 7x.
    h = gh.Histogram([0, 1, 2, 3, 10]).fill([0.5, 1.5, 2.5] + [5.0] * 7)
    rects = _rects(h._repr_html_())
    assert len(rects) == 4
    widths = [r[2] for r in rects]
    assert widths[3] > 6 * widths[0]
    heights = [r[3] for r in rects]
    assert heights[3] == pytest.approx(heights[0], rel=0.05)


def test_negative_sums_go_below_the_zero_line_and_totals_are_exact() -> None:
    h = gh.Histogram(2, range=(0, 2), weights=True).fill([0.5, 1.5], weights=[2.0, -1.0])
    html = h._repr_html_()
    assert "#e45756" in html and "<line" in html
    big = gh.Histogram(4, range=(0, 1)).fill(np.full(9_999_370, 0.5))
    assert "9,999,370" in big._repr_html_() and "total=9999370" in repr(big)


def test_smooth_data_past_a_bin_a_pixel_draws_no_comb() -> None:
    x = np.random.default_rng(1).normal(size=200_000)
    h = gh.Histogram(1000, range=(-4, 4)).fill(x)
    rects = _rects(h._repr_html_())
    assert len(rects) <= 240
    tops = np.array([r[1] for r in rects])
    # Neighbouring columns of a smooth curve differ a little, never by a comb's teeth.
    assert np.max(np.abs(np.diff(tops))) < 10


def test_the_repr_names_the_axes() -> None:
    h = gh.Histogram([2, 2], range=[(0, 1), (0, 1)], name=["pt", "eta"])
    assert repr(h).startswith("Histogram(pt: bins=2, range=(0, 1); eta: bins=2")
    assert "pt: 2 equal bins" in h._repr_html_()


def test_explain_reads_as_text_where_it_is_shown() -> None:
    text = gh.explain(pl.Series([1.0, 2.0]), 4)
    assert isinstance(text, str)
    assert repr(text) == str(text) and "\\n" not in repr(text)
    assert text._repr_html_().startswith("<pre")


def _shown_frames(call: Any) -> list[str]:
    """The package's frames a traceback of ``call``'s error shows where IPython hides those
    with ``__tracebackhide__`` (the test's own frame left out)."""
    try:
        call()
    except (ValueError, TypeError, IndexError) as e:
        tb = e.__traceback__
    else:
        raise AssertionError("no error")
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    return [
        f"{f.f_code.co_filename}:{f.f_code.co_name}"
        for f in frames[2:]
        if not f.f_locals.get("__tracebackhide__", False)
        and "polars_gpu_hist" in f.f_code.co_filename
    ]


@pytest.mark.parametrize(
    "call",
    [
        lambda: gh.Histogram(4, range=(0, 1)).fill([1.0], weights=[1.0]),
        lambda: gh.Histogram(-4, range=(0, 1)),
        lambda: gh.histogram([1.0], -1),
        lambda: pl.col("x").gpu_hist.histogram(bins="nope"),
        lambda: gh.histogramdd([1.0], [1.0], bins=[2, 2, 2]),
        lambda: ghnp.histogram([1.0], -1),
        lambda: gh.Histogram(4, range=(0, 1))[9],
    ],
)
def test_argument_errors_hide_the_package_frames_the_way_ipython_honours(call: Any) -> None:
    assert _shown_frames(lambda: call()) == []
