"""Altair charts of histogram results: bars for 1-D, a heatmap for 2-D."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist  # noqa: F401
from polars_gpu_hist import plot

pytest.importorskip("altair")


def test_expression_result_as_it_comes_is_a_bar_chart() -> None:
    df = pl.DataFrame({"x": np.linspace(0, 1, 100)})
    result = df.select(pl.col("x").gpu_hist.histogram(5))  # a Struct column
    for hist in [result, result["x"], result.unnest("x")]:
        spec = plot.chart(hist, title="x").to_dict()
        assert spec["mark"]["type"] == "bar"
        assert spec["encoding"]["x2"]["field"] == "bin_end"


def test_two_dimensional_results_are_heatmaps() -> None:
    hist = pl.DataFrame(
        {
            "x_start": [0.0, 0.0, 1.0, 1.0],
            "x_end": [1.0, 1.0, 2.0, 2.0],
            "y_start": [0.0, 5.0, 0.0, 5.0],
            "y_end": [5.0, 10.0, 5.0, 10.0],
            "count": [1, 2, 3, 4],
        }
    )
    spec = plot.chart(hist.to_struct("h").to_frame()).to_dict()
    assert spec["mark"]["type"] == "rect"
    enc = spec["encoding"]
    assert (enc["x"]["field"], enc["x2"]["field"]) == ("x_start", "x_end")
    assert (enc["y"]["field"], enc["y2"]["field"]) == ("y_start", "y_end")
    assert enc["color"]["field"] == "count"


def test_other_frames_are_refused() -> None:
    with pytest.raises(ValueError, match="cannot plot"):
        plot.chart(pl.DataFrame({"a": [1], "count": [2]}))
