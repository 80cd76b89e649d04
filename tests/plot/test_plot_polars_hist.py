"""Plots of ``gpu_hist.hist`` results (Polars' ``hist`` frame: ``breakpoint``, ``category``,
``count``): the same bins and counts as the expression's."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import polars_gpu_hist  # noqa: F401  (registers the namespace)
from polars_gpu_hist import plot

pytest.importorskip("altair")


def rows_of(spec: dict[str, Any]) -> list[dict[str, Any]]:
    (rows,) = spec["datasets"].values()
    return rows


@given(
    st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=50, unique=True),
    st.integers(1, 8),
)
def test_a_hist_frame_is_drawn_with_polars_bins(values: list[float], bins: int) -> None:
    s = pl.Series("x", values)
    frame = s.gpu_hist.hist(bin_count=bins)
    spec = plot.chart(frame).to_dict()
    rows = rows_of(spec)
    assert [r["count"] for r in rows] == frame["count"].to_list()
    assert [r["bin_end"] for r in rows] == frame["breakpoint"].to_list()
    # Each bin starts where the one before ends; the first where Polars' label says.
    starts = [r["bin_start"] for r in rows]
    assert starts[1:] == frame["breakpoint"].to_list()[:-1]
    first = float(frame["category"].cast(pl.String)[0][1:].split(", ")[0])
    assert starts[0] == first


def test_expression_and_grouped_hist_results_are_drawn() -> None:
    df = pl.DataFrame({"x": [1.0, 2.0, 3.0, 5.0, -7.5, 1000.25], "g": [1, 1, 1, 2, 2, 2]})
    hist = pl.col("x").gpu_hist.hist(
        bins=[-10, 0, 10, 2000], include_category=True, include_breakpoint=True
    )
    spec = plot.chart(df.select(hist)).to_dict()
    assert spec["encoding"]["x"]["title"] == "x"
    assert [r["bin_start"] for r in rows_of(spec)] == [-10.0, 0.0, 10.0]
    grouped = df.group_by("g", maintain_order=True).agg(hist)
    spec = plot.chart(grouped, facet=True).to_dict()
    starts = [(r["g"], r["bin_start"]) for r in rows_of(spec)]
    assert starts[:3] == [("1", -10.0), ("1", 0.0), ("1", 10.0)]
    text = plot.bars(grouped)
    assert "g = 2" in text and "(  0,   10]" in text  # Polars' bins are right-closed


def test_thousands_separators_in_labels_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    s = pl.Series("x", np.array([-12345.5, 0.0, 99999.0]))
    with pl.Config(thousands_separator=True):
        frame = s.gpu_hist.hist(bins=[-20000.5, 0, 100000])
        rows = rows_of(plot.chart(frame).to_dict())
    assert rows[0]["bin_start"] == -20000.5


def test_hist_frames_without_the_edges_are_refused_with_the_fix() -> None:
    df = pl.DataFrame({"x": [1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match="include_category=True"):
        plot.chart(df.select(pl.col("x").gpu_hist.hist(bin_count=2, include_breakpoint=True)))
    with pytest.raises(ValueError, match="include_breakpoint=True and include_category=True"):
        plot.chart(df.select(pl.col("x").gpu_hist.hist(bin_count=2)))
