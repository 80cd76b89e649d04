"""Plots of histogram results: terminal bars and Altair charts (PNG needs vl-convert-python)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl


def bars(hist: pl.DataFrame, *, width: int = 50) -> str:
    """Terminal bars, one line per bin: ``[start, end)  count  ######``."""
    if hist.height == 0:
        return "(no bins)"
    starts = [_fmt(v) for v in hist["bin_start"]]
    ends = [_fmt(v) for v in hist["bin_end"]]
    counts = hist["count"].to_list()
    top = max((float(c) for c in counts), default=0.0) or 1.0
    count_text = [_fmt(c) for c in counts]
    ws, we, wc = (max(len(t) for t in col) for col in (starts, ends, count_text))
    lines = []
    for s, e, c, text in zip(starts, ends, counts, count_text):
        bar = "#" * round(width * float(c) / top)
        lines.append(f"[{s:>{ws}}, {e:>{we}})  {text:>{wc}}  {bar}")
    return "\n".join(lines)


def chart(hist: pl.DataFrame | pl.Series, *, title: str = "") -> Any:
    """An Altair chart of a histogram result: bars for 1-D (``bin_start``, ``bin_end``,
    ``count``), a heatmap for 2-D (``<x>_start``, ``<x>_end``, ``<y>_start``, ``<y>_end``,
    ``count``). Takes the expression's result as it comes (a Struct column, or a frame holding
    one) or unnested, and ``Histogram.to_frame()``.
    """
    import altair as alt

    hist = _unnested(hist)
    axes = _axes(hist)
    if axes == ["bin"]:
        return (
            alt.Chart(hist, title=title)
            .mark_bar()
            .encode(
                x=alt.X("bin_start", bin="binned", title=title or "value"),
                x2="bin_end",
                y=alt.Y("count", title="count"),
                tooltip=["bin_start", "bin_end", "count"],
            )
        )
    if len(axes) == 2:
        x, y = axes
        return (
            alt.Chart(hist, title=title)
            .mark_rect()
            .encode(
                x=alt.X(f"{x}_start", bin="binned", title=x),
                x2=f"{x}_end",
                y=alt.Y(f"{y}_start", bin="binned", title=y),
                y2=f"{y}_end",
                color=alt.Color("count", title="count"),
                tooltip=[f"{x}_start", f"{x}_end", f"{y}_start", f"{y}_end", "count"],
            )
        )
    raise ValueError(
        "cannot plot this frame: expected bin_start/bin_end/count (1-D) or "
        f"<x>_start/<x>_end/<y>_start/<y>_end/count (2-D), got columns {hist.columns}"
    )


def _unnested(hist: pl.DataFrame | pl.Series) -> pl.DataFrame:
    """The histogram's rows as plain columns (a lone Struct column is unnested)."""
    if isinstance(hist, pl.Series):
        hist = hist.to_frame()
    if hist.width == 1 and isinstance(hist.dtypes[0], pl.Struct):
        hist = hist.unnest(hist.columns[0])
    return hist


def _axes(hist: pl.DataFrame) -> list[str]:
    """The axis prefixes ``p`` with ``p_start`` and ``p_end`` columns, in column order."""
    names = set(hist.columns)
    return [
        c[: -len("_start")]
        for c in hist.columns
        if c.endswith("_start") and c[: -len("_start")] + "_end" in names
    ]


def save(hist: pl.DataFrame | pl.Series, path: str | Path, *, title: str = "") -> Path:
    """Writes the chart as ``.html``, ``.png``, ``.svg`` or ``.json`` (by the file's suffix)."""
    path = Path(path)
    if path.suffix.lower() not in {".html", ".png", ".svg", ".json"}:
        raise ValueError(f"cannot write a plot as {path.suffix!r}: use .html, .png, .svg or .json")
    chart(hist, title=title).save(str(path))
    return path


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)
