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


def chart(hist: pl.DataFrame, *, title: str = "") -> Any:
    """An Altair bar chart of a 1-D histogram (``bin_start``, ``bin_end``, ``count``)."""
    import altair as alt

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


def save(hist: pl.DataFrame, path: str | Path, *, title: str = "") -> Path:
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
