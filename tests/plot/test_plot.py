"""Charts and terminal bars of histogram results: the chart specs (encodings, facets, axis
titles, temporal types and the data handed to Vega-Lite), and one PNG of each kind."""

from __future__ import annotations

import datetime as dt
import re
import sys
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh
from polars_gpu_hist import plot

pytest.importorskip("altair")

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def rows_of(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The data rows of a chart spec (Altair puts a frame in the top-level datasets)."""
    (rows,) = spec["datasets"].values()
    return rows


def bar_line(line: str) -> tuple[str, int, int]:
    """A line of plot.bars: the bin's label, its count and the length of its bar."""
    found = re.fullmatch(r"([\[(].*?[\])])  +(\d+)  (#*)", line)
    assert found, line
    return found[1], int(found[2]), len(found[3])


def grouped(groups: int, bins: int = 4) -> pl.DataFrame:
    """A real by= result, unnested: g, bin_start, bin_end, count."""
    rng = np.random.default_rng(groups)
    n = 60 * groups
    df = pl.DataFrame({"x": rng.random(n), "g": [f"k{i % groups}" for i in range(n)]})
    hist = pl.col("x").gpu_hist.histogram(bins=bins, range=(0, 1), by="g", device="cpu")
    return df.select(hist).unnest("x")


# -- 1-D and 2-D -----------------------------------------------------------------------------


def test_expression_result_as_it_comes_is_a_bar_chart() -> None:
    df = pl.DataFrame({"x": np.linspace(0, 1, 100)})
    result = df.select(pl.col("x").gpu_hist.histogram(5, device="cpu"))  # a Struct column
    for hist in [result, result["x"], result.unnest("x")]:
        spec = plot.chart(hist, title="x").to_dict()
        assert spec["mark"]["type"] == "bar"
        enc = spec["encoding"]
        assert (enc["x"]["field"], enc["x"]["bin"], enc["x2"]["field"]) == (
            "bin_start",
            "binned",
            "bin_end",
        )
        assert (enc["y"]["field"], enc["y"]["title"]) == ("count", "count")
        assert [r["count"] for r in rows_of(spec)] == [20.0] * 5


def test_two_dimensional_results_are_heatmaps() -> None:
    rng = np.random.default_rng(1)
    hist = gh.histogram2d(rng.random(500), rng.random(500), bins=[3, 4], device="cpu")
    spec = plot.chart(hist.to_struct("h").to_frame()).to_dict()
    assert spec["mark"]["type"] == "rect"
    enc = spec["encoding"]
    assert (enc["x"]["field"], enc["x2"]["field"]) == ("x0_start", "x0_end")
    assert (enc["y"]["field"], enc["y2"]["field"]) == ("x1_start", "x1_end")
    assert (enc["color"]["field"], enc["color"]["title"]) == ("count", "count")
    assert sum(r["count"] for r in rows_of(spec)) == 500


def test_other_frames_are_refused() -> None:
    with pytest.raises(ValueError, match="cannot plot"):
        plot.chart(pl.DataFrame({"a": [1], "count": [2]}))
    with pytest.raises(ValueError, match="1-D results"):
        plot.bars(pl.DataFrame({"a": [1], "count": [2]}))
    with pytest.raises(ValueError, match="`kind`"):
        plot.chart(grouped(1), kind="rows")  # type: ignore[arg-type]


def test_dotted_column_names_are_escaped() -> None:
    hist = gh.histogram2d(
        pl.Series("a.b", [0.1, 0.2, 0.9]), pl.Series("c", [0.5, 0.1, 0.3]), bins=2, device="cpu"
    )
    enc = plot.chart(hist).to_dict()["encoding"]
    assert enc["x"]["field"] == "a\\.b_start"


# -- by= results -----------------------------------------------------------------------------


def test_a_few_groups_are_coloured_outlines_in_one_chart() -> None:
    hist = grouped(3)
    assert hist.columns == ["g", "bin_start", "bin_end", "count"]
    spec = plot.chart(hist).to_dict()
    assert spec["mark"]["type"] == "line"
    assert spec["mark"]["interpolate"] == "step-after"
    enc = spec["encoding"]
    assert (enc["color"]["field"], enc["color"]["type"]) == ("g", "nominal")
    assert enc["color"]["sort"] == ["k0", "k1", "k2"]  # first appearance, as the rows come
    assert enc["order"]["field"] == "__order"
    # Each group's outline: up from 0 at the first edge, one point per bin top, down at the end.
    rows = rows_of(spec)
    for key, part in hist.group_by("g", maintain_order=True):
        points = [(r["__edge"], r["__y"]) for r in rows if r["g"] == key[0]]
        counts = part["count"].cast(pl.Float64).to_list()
        edges = part["bin_start"].to_list()
        expected = [(edges[0], 0.0), *zip(edges, counts)]
        expected += [(1.0, counts[-1]), (1.0, 0.0)]
        assert points == expected


def test_many_groups_are_small_multiples() -> None:
    hist = grouped(plot.MAX_OVERLAID_GROUPS + 1)
    spec = plot.chart(hist, title="x by g").to_dict()
    assert spec["facet"]["field"] == "g"
    assert spec["facet"]["sort"] == [f"k{i}" for i in range(plot.MAX_OVERLAID_GROUPS + 1)]
    assert spec["columns"] == 4
    assert spec["spec"]["mark"]["type"] == "bar"
    assert spec["spec"]["encoding"]["y"]["title"] == "count"
    assert spec["title"] == "x by g"


def test_facet_overrides_the_threshold() -> None:
    few, many = grouped(2), grouped(plot.MAX_OVERLAID_GROUPS + 3)
    assert plot.chart(few, facet=True).to_dict()["facet"]["field"] == "g"
    spec = plot.chart(many, facet=False).to_dict()
    assert spec["encoding"]["color"]["field"] == "g"
    assert len(spec["encoding"]["color"]["sort"]) == plot.MAX_OVERLAID_GROUPS + 3
    at_threshold = plot.chart(grouped(plot.MAX_OVERLAID_GROUPS)).to_dict()
    assert at_threshold["encoding"]["color"]["field"] == "g"


def test_integer_null_and_categorical_keys_keep_their_order() -> None:
    df = pl.DataFrame(
        {
            "x": [0.1, 0.6, 0.2, 0.9, 0.4],
            "k": [10, 2, None, 10, 2],
            "c": pl.Series(["b", "a", "b", "c", "a"], dtype=pl.Categorical),
        }
    )
    for key, order in [("k", ["10", "2", "null"]), ("c", ["b", "a", "c"])]:
        hist = df.select(pl.col("x").gpu_hist.histogram(bins=2, range=(0, 1), by=key, device="cpu"))
        spec = plot.chart(hist).to_dict()
        assert spec["encoding"]["color"]["sort"] == order  # not "10" < "2", nulls kept


def test_group_by_agg_results_plot_like_by_results() -> None:
    df = pl.DataFrame({"x": np.linspace(0, 1, 40), "g": ["a", "b"] * 20})
    agg = df.group_by("g", maintain_order=True).agg(
        pl.col("x").gpu_hist.histogram(bins=4, range=(0, 1), device="cpu")
    )
    spec = plot.chart(agg).to_dict()
    assert spec["encoding"]["color"]["field"] == "g"
    assert spec["encoding"]["color"]["sort"] == ["a", "b"]


def test_grouped_heatmaps_are_small_multiples() -> None:
    hist = gh.histogram2d(pl.Series("x", [0.1, 0.7]), pl.Series("y", [0.2, 0.3]), bins=2)
    stacked = pl.concat([hist.with_columns(g=pl.lit("a")), hist.with_columns(g=pl.lit("b"))])
    spec = plot.chart(stacked).to_dict()
    assert spec["facet"]["field"] == "g"
    assert spec["spec"]["mark"]["type"] == "rect"


def test_bars_of_a_by_result_are_one_block_per_group() -> None:
    hist = grouped(3)
    text = plot.bars(hist, width=20)
    blocks = text.split("\n\n")
    assert [b.splitlines()[0] for b in blocks] == ["g = k0", "g = k1", "g = k2"]
    for block, (_, part) in zip(blocks, hist.group_by("g", maintain_order=True)):
        lines = block.splitlines()[1:]
        assert len(lines) == 4
        assert [bar_line(line)[1] for line in lines] == part["count"].to_list()
        assert bar_line(lines[0])[0] == "[   0, 0.25)"
        assert bar_line(lines[-1])[0] == "[0.75,    1]"  # numpy's last bin is closed
    # One scale for all groups: the largest count of any group fills the width.
    tallest = hist["count"].max()
    lengths = {bar_line(line)[1]: bar_line(line)[2] for b in blocks for line in b.splitlines()[1:]}
    assert lengths[tallest] == 20
    assert all(length == round(20 * c / tallest) for c, length in lengths.items())


def test_bars_label_right_closed_bins() -> None:
    df = pl.DataFrame({"x": [0.0, 1.0, 2.0, 3.0]})
    hist = df.select(
        pl.col("x").gpu_hist.histogram(bins=[0, 1, 2, 3], closed="right", device="cpu")
    )
    right = [bar_line(line) for line in plot.bars(hist, closed="right").splitlines()]
    assert [(label, count) for label, count, _ in right] == [
        ("[0, 1]", 2),
        ("(1, 2]", 1),
        ("(2, 3]", 1),
    ]
    left = [bar_line(line)[0] for line in plot.bars(hist).splitlines()]
    assert left == ["[0, 1)", "[1, 2)", "[2, 3]"]
    with pytest.raises(ValueError, match="`closed`"):
        plot.bars(hist, closed="both")  # type: ignore[arg-type]


# -- temporal edges --------------------------------------------------------------------------


def new_york_hours() -> pl.DataFrame:
    """00:00 EST to 05:00 EDT, every half hour: four hours across the change to daylight time."""
    start = dt.datetime(2024, 3, 10, 5, 0)
    utc = pl.datetime_range(
        start, start + dt.timedelta(hours=4), "30m", time_zone="UTC", eager=True
    )
    return pl.DataFrame({"t": utc.dt.convert_time_zone("America/New_York")})


def test_the_plugin_keeps_the_time_zone_of_the_edges() -> None:
    hist = new_york_hours().select(pl.col("t").gpu_hist.histogram(bins=4, device="cpu"))
    assert hist.unnest("t").schema["bin_start"] == pl.Datetime("us", "America/New_York")


def test_time_zone_aware_datetimes_keep_their_wall_clock() -> None:
    df = new_york_hours()
    hist = df.select(pl.col("t").gpu_hist.histogram(bins=4, device="cpu")).unnest("t")
    zoned = pl.Datetime("us", "America/New_York")
    if hist.schema["bin_start"] != zoned:  # see the xfail above: the instants, without the zone
        edges = pl.col("bin_start", "bin_end")
        hist = hist.with_columns(
            edges.dt.replace_time_zone("UTC").dt.convert_time_zone(zoned.time_zone)
        )
    assert hist.schema["bin_start"] == zoned
    spec = plot.chart(hist, title="t").to_dict()
    x = spec["encoding"]["x"]
    assert (x["type"], x["scale"]["type"]) == ("temporal", "utc")
    assert x["title"] == "t (America/New_York)"
    # The UTC scale shows the text's clock: the values' own wall-clock time, across the DST
    # change of that night (02:00 does not exist; the bins are an hour of elapsed time each).
    assert [(r["bin_start"], r["bin_end"]) for r in rows_of(spec)] == [
        ("2024-03-10T00:00:00.000Z", "2024-03-10T01:00:00.000Z"),
        ("2024-03-10T01:00:00.000Z", "2024-03-10T03:00:00.000Z"),
        ("2024-03-10T03:00:00.000Z", "2024-03-10T04:00:00.000Z"),
        ("2024-03-10T04:00:00.000Z", "2024-03-10T05:00:00.000Z"),
    ]
    assert [r["count"] for r in rows_of(spec)] == [2, 2, 2, 3]


def test_naive_datetimes_and_dates_are_time_axes() -> None:
    days = pl.date_range(dt.date(2024, 1, 1), dt.date(2024, 1, 31), eager=True)
    df = pl.DataFrame({"d": days, "t": days.cast(pl.Datetime("ns")) + dt.timedelta(hours=6)})
    for column, first in [("d", "2024-01-01T00:00:00.000Z"), ("t", "2024-01-01T06:00:00.000Z")]:
        hist = df.select(pl.col(column).gpu_hist.histogram(bins=3, device="cpu"))
        spec = plot.chart(hist).to_dict()
        x = spec["encoding"]["x"]
        assert (x["type"], x["scale"]["type"], x["title"]) == ("temporal", "utc", column)
        assert "bin" not in x
        assert rows_of(spec)[0]["bin_start"] == first


def test_durations_get_an_axis_in_a_fitting_unit() -> None:
    waits = pl.Series("wait", [dt.timedelta(minutes=m) for m in (1, 5, 7, 30, 59)])
    df = pl.DataFrame({"wait": waits})
    hist = df.select(pl.col("wait").gpu_hist.histogram(bins=[0, 600e6, 3600e6], device="cpu"))
    assert hist.unnest("wait").schema["bin_start"] == pl.Duration("us")
    spec = plot.chart(hist, title="wait").to_dict()
    x = spec["encoding"]["x"]
    assert (x["type"], x["title"]) == ("quantitative", "wait (minutes)")
    assert [(r["bin_start"], r["bin_end"], r["count"]) for r in rows_of(spec)] == [
        (0.0, 10.0, 3.0),
        (10.0, 60.0, 2.0),
    ]
    short = pl.DataFrame({"lag": pl.Series([dt.timedelta(milliseconds=m) for m in (3, 9)])})
    spec = plot.chart(short.select(pl.col("lag").gpu_hist.histogram(2, device="cpu"))).to_dict()
    assert spec["encoding"]["x"]["title"] == "lag (milliseconds)"  # the Struct's name
    unnested = plot.chart(short.select(pl.col("lag").gpu_hist.histogram(2)).unnest("lag"))
    assert unnested.to_dict()["encoding"]["x"]["title"] == "value (milliseconds)"


def test_temporal_by_results_are_coloured_on_a_time_axis() -> None:
    days = pl.date_range(dt.date(2024, 1, 1), dt.date(2024, 1, 20), eager=True)
    df = pl.DataFrame({"d": days, "g": [i % 2 for i in range(days.len())]})
    hist = df.select(pl.col("d").gpu_hist.histogram(bins=4, by="g", device="cpu"))
    spec = plot.chart(hist).to_dict()
    assert spec["encoding"]["x"]["type"] == "temporal"
    assert rows_of(spec)[0]["__edge"] == "2024-01-01T00:00:00.000Z"


# -- what the y axis says --------------------------------------------------------------------


def test_density_and_weights_are_told_apart() -> None:
    rng = np.random.default_rng(3)
    df = pl.DataFrame(
        {"x": rng.random(300) * 7, "w": rng.random(300), "g": rng.integers(0, 3, 300)}
    )

    def title(**kwargs: Any) -> str:
        hist = df.select(pl.col("x").gpu_hist.histogram(bins=6, device="cpu", **kwargs))
        spec = plot.chart(hist).to_dict()
        return (spec.get("spec", spec))["encoding"]["y"]["title"]

    assert title() == "count"
    assert title(density=True) == "density"
    assert title(density=True, weights="w") == "density"  # a weighted density is a density
    assert title(weights="w") == "sum of weights"
    assert title(density=True, by="g") == "density"  # each group integrates to 1
    assert title(weights="w", by="g") == "sum of weights"
    hist = df.select(pl.col("x").gpu_hist.histogram(bins=6, weights="w", device="cpu"))
    assert plot.chart(hist, kind="density").to_dict()["encoding"]["y"]["title"] == "density"
    assert plot.chart(hist, y_title="kg").to_dict()["encoding"]["y"]["title"] == "kg"


def test_density_of_temporal_and_two_dimensional_results() -> None:
    days = pl.date_range(dt.date(2024, 1, 1), dt.date(2024, 3, 1), eager=True)
    dense = pl.DataFrame({"d": days}).select(
        pl.col("d").gpu_hist.histogram(bins=5, density=True, device="cpu")
    )
    y = plot.chart(dense).to_dict()["encoding"]["y"]
    assert y["title"] == "density (per day)"  # the plugin divides by widths in days
    assert "axis" not in y
    hours = pl.datetime_range(dt.datetime(2024, 1, 1), dt.datetime(2024, 1, 3), "1h", eager=True)
    dense = pl.DataFrame({"t": hours}).select(
        pl.col("t").gpu_hist.histogram(bins=5, density=True, device="cpu")
    )
    y = plot.chart(dense).to_dict()["encoding"]["y"]
    assert y["title"] == "density (per µs)"
    assert y["axis"]["format"] == "~e"  # about 6e-12 per µs: no axis of zeros
    rng = np.random.default_rng(4)
    heat = gh.histogram2d(rng.random(200) * 3, rng.random(200), bins=4, density=True)
    assert plot.chart(heat).to_dict()["encoding"]["color"]["title"] == "density"
    total = gh.Histogram(4, range=(0, 2)).fill(rng.random(50))
    assert total.plot(density=True).to_dict()["encoding"]["y"]["title"] == "density"


# -- installs and files ----------------------------------------------------------------------


def test_a_missing_altair_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "altair", None)
    with pytest.raises(ImportError, match=r"pip install 'polars-gpu-hist\[plot\]'"):
        plot.chart(grouped(1))
    assert plot.bars(grouped(1)).startswith("g = k0")  # terminal bars need no Altair


def test_a_missing_vl_convert_names_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setitem(sys.modules, "vl_convert", None)
    with pytest.raises(
        ImportError, match=r"vl-convert-python: pip install 'polars-gpu-hist\[plot\]'"
    ):
        plot.save(grouped(1), tmp_path / "h.png")
    assert not (tmp_path / "h.png").exists()
    plot.save(grouped(1), tmp_path / "h.json")  # JSON and HTML need no converter
    assert (tmp_path / "h.json").read_text().startswith("{")


def test_one_png_of_each_kind(tmp_path) -> None:
    pytest.importorskip("vl_convert")
    rng = np.random.default_rng(5)
    start = dt.datetime(2024, 1, 1)
    times = pl.datetime_range(start, start + dt.timedelta(days=2), "1h", eager=True)
    df = pl.DataFrame(
        {
            "t": times.dt.replace_time_zone("Europe/Berlin"),
            "wait": pl.Series([dt.timedelta(seconds=int(s)) for s in rng.integers(0, 900, 49)]),
        }
    )
    kinds = {
        "bars": df.select(pl.col("wait").gpu_hist.histogram(8, device="cpu")),
        "heatmap": gh.histogram2d(rng.random(400), rng.random(400), bins=8, device="cpu"),
        "coloured": grouped(3),
        "facets": grouped(plot.MAX_OVERLAID_GROUPS + 2),
        "datetime": df.select(pl.col("t").gpu_hist.histogram(6, density=True, device="cpu")),
    }
    for name, hist in kinds.items():
        path = plot.save(hist, tmp_path / f"{name}.png", title=name)
        data = path.read_bytes()
        assert data[:8] == PNG_MAGIC, name
        assert len(data) > 2000, name
    with pytest.raises(ValueError, match=r"\.pdf"):
        plot.save(grouped(1), tmp_path / "h.pdf")
