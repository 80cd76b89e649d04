"""How a Histogram shows itself: its text ``repr`` and a notebook's HTML view, with a small SVG
picture drawn from the real edges.

- Uneven bins are drawn at their width, their heights densities (value / width), so that a wide
  bin is not taller for being wide; even bins show their values.
- Past one bin a pixel, each pixel column shows the range of the bins under it (their smallest
  and largest height), never a sum of an unequal number of bins: smooth data stays smooth.
  A heatmap averages equal blocks of cells for the same reason.
- Negative sums of weights go below a zero line (red in a heatmap).
- Totals are exact: integers in full, floats in their shortest round-trip form.
"""

from __future__ import annotations

import html as _html
from typing import Any

import numpy as np

# The histogram shown (not imported: it imports this module).
Histogram = Any


def number(x: float | int) -> str:
    """A total as it is: ``9999370``, ``12.5``, ``0.1``, never ``9.99937e+06``."""
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    x = float(x)
    if x.is_integer() and abs(x) < 1e16:
        return f"{int(x):,}"
    return repr(x)


def _axes_text(h: Histogram) -> list[str]:
    out = []
    for axis in h.axes:
        kind = axis.kind.kind
        e = axis.edges
        what = {"regular": "equal", "integer": "integer", "variable": "uneven"}[kind]
        label = f" ({axis.label})" if axis.label != axis.name else ""
        out.append(f"{axis.name}{label}: {len(axis)} {what} bins on [{e[0]:.6g}, {e[-1]:.6g}]")
    return out


def text(h: Histogram) -> str:
    """The native histogram's text (the binning as given, its dtypes, storage, exact total and
    what was not counted), each axis named: ``Histogram(pt: bins=4, range=(0, 1);
    closed=left; dtype=Float64; storage=count; total=17)``."""
    native = repr(h._core)
    inner = native[len("Histogram(") : -1].split("; ")
    names = h._axis_names()
    axes = [f"{name}: {binning}" for name, binning in zip(names, inner[: len(names)])]
    return f"Histogram({'; '.join(axes + inner[len(names) :])})"


def html(h: Histogram) -> str:
    """A notebook's view: the picture beside the axes, the binning and the totals."""
    values = h.values()
    rows = [("axis" if h.ndim == 1 else "axes", "<br>".join(map(_html.escape, _axes_text(h))))]
    rows += [
        ("closed", h._core.closed),
        ("dtype", " x ".join(d or "(not filled yet)" for d in h._core.dtypes)),
        ("storage", "weights (sums and squares)" if h.weighted else "counts (exact)"),
        ("total", number(h.sum())),
    ]
    flow = h.flow
    if flow.counted != flow.rows:
        rows.append(
            (
                "not counted",
                f"{flow.null:,} null, {flow.nan:,} NaN, {flow.underflow:,} below, "
                f"{flow.overflow:,} above (of {flow.rows:,} rows)",
            )
        )
    if h.ndim > 2:
        rows.append(("cells", f"{values.size:,} ({np.count_nonzero(values):,} not empty)"))
    table = "".join(
        f"<tr><th style='text-align:left'>{k}</th><td style='text-align:left'>{v}</td></tr>"
        for k, v in rows
    )
    picture = ""
    if h.ndim == 1:
        picture = svg_bars(values, h.axes[0].edges)
    elif h.ndim == 2:
        picture = svg_heatmap(values, h.axes[0].edges, h.axes[1].edges)
    return (
        "<div style='display:flex;gap:1.5em;align-items:center'>"
        f"{picture}<table><caption><b>Histogram</b></caption>{table}</table></div>"
    )


def _heights(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Values of even bins, densities (value / width) of uneven ones."""
    widths = np.diff(edges)
    even = np.allclose(widths, widths[0], rtol=1e-9) if len(widths) else True
    if even or not np.all(np.isfinite(widths)) or np.any(widths <= 0):
        return values
    heights: np.ndarray = values / widths
    return heights


def svg_bars(values: np.ndarray, edges: np.ndarray, width: int = 240, height: int = 90) -> str:
    """The bars of a 1-D histogram over the real edges; past a bin a pixel, each pixel column
    spans the smallest to the largest bar under it."""
    values = np.asarray(values, dtype=np.float64)
    heights = _heights(values, edges)
    finite = np.isfinite(edges)
    lo, hi = (edges[finite][0], edges[finite][-1]) if finite.sum() >= 2 else (0.0, 1.0)
    span = (hi - lo) or 1.0
    x = (np.clip(edges, lo, hi) - lo) / span * width
    top, bottom = (
        max(float(np.max(heights, initial=0)), 0.0),
        min(float(np.min(heights, initial=0)), 0.0),
    )
    scale = (height - 4) / ((top - bottom) or 1.0)
    zero = 2 + top * scale
    if len(values) <= width:
        bars = [(x[i], x[i + 1], v, v) for i, v in enumerate(heights) if v != 0 and x[i + 1] > x[i]]
    else:
        # One column a pixel: the range of the bars whose left edge falls in it.
        column = np.minimum((x[:-1]).astype(int), width - 1)
        lows = np.full(width, np.inf)
        highs = np.full(width, -np.inf)
        np.minimum.at(lows, column, heights)
        np.maximum.at(highs, column, heights)
        bars = [
            (float(c), float(c + 1), lows[c], highs[c])
            for c in range(width)
            if np.isfinite(lows[c]) and (lows[c] != 0 or highs[c] != 0)
        ]
    rects = []
    for x0, x1, low, high in bars:
        up, down = max(high, 0.0), min(low, 0.0)
        if low > 0:  # a column of positive bars: from zero to the highest
            down = 0.0
        if high < 0:
            up = 0.0
        colour = "#4c78a8" if high > 0 else "#e45756"
        rects.append(
            f"<rect x='{x0:.2f}' y='{zero - up * scale:.2f}' width='{max(x1 - x0 - 0.3, 0.5):.2f}' "
            f"height='{max((up - down) * scale, 0.5):.2f}' fill='{colour}'/>"
        )
    baseline = (
        f"<line x1='0' x2='{width}' y1='{zero:.2f}' y2='{zero:.2f}' stroke='#999' "
        "stroke-width='0.5'/>"
    )
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"style='background:#f7f7f7'>{''.join(rects)}{baseline}</svg>"
    )


def svg_heatmap(
    values: np.ndarray,
    x_edges: np.ndarray,
    y_edges: np.ndarray,
    width: int = 200,
    height: int = 160,
) -> str:
    """The cells of a 2-D histogram over the real edges: x to the right, y upwards, darker for
    larger densities (negative sums of weights in red); past a cell every 4 pixels, equal
    blocks of cells are averaged (never summed: blocks of unequal size would stripe)."""
    values = np.asarray(values, dtype=np.float64)
    widths = np.outer(np.diff(x_edges), np.diff(y_edges))
    dens = values
    if not (np.allclose(widths, widths.flat[0]) if widths.size else True):
        with np.errstate(divide="ignore", invalid="ignore"):
            dens = np.where(widths > 0, values / widths, 0.0)
    xs, ys = x_edges, y_edges
    for axis, pixels in ((0, width), (1, height)):
        n = dens.shape[axis]
        block = -(-n // (pixels // 4))  # ceiling: at most pixels // 4 blocks
        if block > 1:
            whole = n // block * block
            kept = np.take(dens, np.arange(whole), axis=axis)
            shape = list(kept.shape)
            shape[axis : axis + 1] = [whole // block, block]
            dens = kept.reshape(shape).mean(axis=axis + 1)
            e = xs if axis == 0 else ys
            e = e[: whole + 1 : block]
            xs, ys = (e, ys) if axis == 0 else (xs, e)
    top = float(np.max(np.abs(dens), initial=0))

    def scaled(e: np.ndarray, pixels: int) -> np.ndarray:
        finite = e[np.isfinite(e)]
        lo, hi = (finite[0], finite[-1]) if len(finite) >= 2 else (0.0, 1.0)
        out: np.ndarray = (np.clip(e, lo, hi) - lo) / ((hi - lo) or 1.0) * pixels
        return out

    px, py = scaled(xs, width), scaled(ys, height)
    cells = []
    for i in range(dens.shape[0]):
        for j in range(dens.shape[1]):
            v = dens[i, j]
            if v == 0 or top == 0:
                continue
            colour = "#4c78a8" if v > 0 else "#e45756"
            opacity = 0.08 + 0.92 * abs(v) / top
            cells.append(
                f"<rect x='{px[i]:.2f}' y='{height - py[j + 1]:.2f}' "
                f"width='{px[i + 1] - px[i]:.2f}' height='{py[j + 1] - py[j]:.2f}' "
                f"fill='{colour}' fill-opacity='{opacity:.3f}'/>"
            )
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"style='background:#f7f7f7'>{''.join(cells)}</svg>"
    )
