"""Plots of histogram results: terminal bars and Altair charts (PNG and SVG need vl-convert).

Every function takes a result as the expression returns it (a Struct column, or a frame holding
one), unnested, or as ``group_by().agg()`` returns it (key columns beside a list of Structs),
``Histogram.to_frame()``, and the frame of ``gpu_hist.hist`` (Polars' ``hist``: ``breakpoint``,
``category``, ``count``; each bin ends at its breakpoint, the first starts where its category
label says):

- 1-D results (``bin_start``, ``bin_end``, ``count``) are bar charts;
- 2-D results (``<x>_start``, ``<x>_end``, ``<y>_start``, ``<y>_end``, ``count``) are heatmaps;
- any other column is a group key (``histogram(..., by="g")`` puts it first): up to
  :data:`MAX_OVERLAID_GROUPS` groups are drawn as overlaid step outlines, one colour each, more
  as small multiples (one panel per group); ``facet=`` overrides the choice.

Date and Datetime edges get a time axis showing the values' own wall-clock time (a time zone is
named in the axis title, never converted to the viewer's), Duration edges a numeric axis in a
fitting unit (``"x (minutes)"``). The y axis (the colour, for heatmaps) is titled ``count``,
``density`` or ``sum of weights``: see :func:`chart` for how it is told.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Union

import polars as pl

from polars_gpu_hist._expr.polars_hist import as_bins

if TYPE_CHECKING:
    import altair as alt

    Chart = Union[alt.Chart, alt.LayerChart, alt.FacetChart]

__all__ = ["MAX_OVERLAID_GROUPS", "bars", "chart", "save"]

#: Results with at most this many groups are drawn in one chart, a colour per group; more groups
#: get one small panel each (overlaid outlines of more groups cannot be told apart).
MAX_OVERLAID_GROUPS = 5

Kind = Literal["count", "density", "weights"]
_Y_TITLES = {"count": "count", "density": "density", "weights": "sum of weights"}

_INSTALL_HINT = "pip install 'polars-gpu-hist[plot]'"

# Duration axes: the largest unit of which the span holds at least two.
_DURATION_UNITS_NS = [
    ("days", 86_400 * 10**9),
    ("hours", 3_600 * 10**9),
    ("minutes", 60 * 10**9),
    ("seconds", 10**9),
    ("milliseconds", 10**6),
    ("microseconds", 10**3),
    ("nanoseconds", 1),
]

# Helper columns of the step outlines (names no histogram field takes).
_EDGE, _Y, _ORDER = "__edge", "__y", "__order"


def bars(
    hist: pl.DataFrame | pl.Series,
    *,
    width: int = 50,
    closed: Literal["left", "right"] | None = None,
) -> str:
    """Terminal bars of a 1-D result, one line per bin: ``[start, end)  count  ######``.

    ``closed`` only labels the bins (a result does not record it): ``"left"`` (numpy's bins,
    the default) prints ``[a, b)`` with the last bin ``[a, b]``, ``"right"`` (the default for
    a ``gpu_hist.hist`` frame, as Polars' bins) prints ``(a, b]`` with the first bin
    ``[a, b]``. A grouped result (``by=``) gets one block of bars per group under a
    ``key = value`` header line; bars of all groups share one scale.
    """
    if closed not in ("left", "right", None):
        raise ValueError(f"`closed` must be 'left' or 'right', got {closed!r}")
    frame = _unnested(hist, bins=False)
    if closed is None:
        closed = "right" if "breakpoint" in frame.columns else "left"
    frame = as_bins(frame)
    axes = _axes(frame)
    if axes != ["bin"] or "count" not in frame.columns:
        raise ValueError(
            "bars() draws 1-D results (bin_start, bin_end, count, and group keys), "
            f"got columns {frame.columns}"
        )
    if frame.height == 0:
        return "(no bins)"
    keys = _keys(frame, axes)
    heights = [_height(c) for c in frame["count"]]
    top = max(heights, default=0.0) or 1.0
    starts = [_fmt(v) for v in frame["bin_start"]]
    ends = [_fmt(v) for v in frame["bin_end"]]
    counts = [_fmt(c) for c in frame["count"]]
    ws, we, wc = (max(len(t) for t in col) for col in (starts, ends, counts))

    blocks: list[str] = []
    for header, rows in _group_rows(frame, keys):
        lines = [header] if header else []
        last = len(rows) - 1
        for position, i in enumerate(rows):
            opening = "(" if closed == "right" and position > 0 else "["
            closing = ")" if closed == "left" and position < last else "]"
            bar = "#" * round(width * heights[i] / top)
            lines.append(
                f"{opening}{starts[i]:>{ws}}, {ends[i]:>{we}}{closing}  {counts[i]:>{wc}}  {bar}"
            )
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def chart(
    hist: pl.DataFrame | pl.Series,
    *,
    title: str = "",
    facet: bool | None = None,
    kind: Kind | None = None,
    y_title: str | None = None,
) -> Chart:
    """An Altair chart of a histogram result: bars for 1-D, a heatmap for 2-D.

    Parameters
    ----------
    hist
        The result as the expression returns it (a Struct column, or a frame holding one),
        unnested, as ``group_by().agg()`` returns it, or ``Histogram.to_frame()``. Columns
        other than the edges and ``count`` are group keys (``by=`` puts its key first).
    title
        The chart's title. The x axis of a 1-D chart is titled with the column's name where the
        result carries it (a Struct column as it comes), else with ``title``, else ``value``.
    facet
        For grouped results: ``True`` draws one panel per group (small multiples), ``False``
        one chart with a colour per group (overlaid step outlines). By default up to
        :data:`MAX_OVERLAID_GROUPS` groups share one chart and more get panels. Grouped
        heatmaps always get panels.
    kind
        What ``count`` holds: ``"count"`` (rows), ``"density"`` or ``"weights"`` (sums of
        weights); it titles the y axis (the colour, for heatmaps). By default an integer
        ``count`` is ``"count"``, and a Float64 one (a result made with ``weights`` or
        ``density``, which the frame does not record) is ``"density"`` when it integrates to 1
        (the sum of count times bin width, in the edges' own units, is 1 within 1e-6 for every
        group) and ``"weights"`` otherwise. A weighted density is a density; pass ``kind`` for
        weights that happen to integrate to 1.
    y_title
        The y axis title itself, overriding ``kind``.

    Raises
    ------
    ImportError
        Altair is not installed: ``pip install 'polars-gpu-hist[plot]'``.
    ValueError
        The frame is not a histogram result, or an argument is not one of its choices.
    """
    _require_altair()
    import altair as alt

    if kind is not None and kind not in _Y_TITLES:
        raise ValueError(f"`kind` must be 'count', 'density' or 'weights', got {kind!r}")
    frame = _unnested(hist)
    column = _column_name(hist)
    names = _axes(frame)
    if (
        len(names) not in (1, 2)
        or (len(names) == 1 and names != ["bin"])
        or ("count" not in frame.columns)
    ):
        raise ValueError(
            "cannot plot this frame: expected bin_start/bin_end/count (1-D) or "
            f"<x>_start/<x>_end/<y>_start/<y>_end/count (2-D), got columns {frame.columns} "
            "(a gpu_hist.hist result needs include_breakpoint=True and include_category=True)"
        )
    frame, dropped = _without_flow_rows(frame, names)
    if dropped:
        title = f"{title} ({dropped})" if title else dropped
    title = plain_label(title)
    keys = _keys(frame, names)
    resolved = kind or _kind(frame, names, keys)
    value_title = plain_label(y_title) if y_title is not None else _Y_TITLES[resolved]
    if y_title is None and resolved == "density" and names == ["bin"]:
        value_title += _per_unit(frame.schema["bin_start"])
    axes = [
        _Axis.of(frame, name, plain_label(column or title if names == ["bin"] else ""))
        for name in names
    ]
    data = frame
    for axis in axes:
        data = axis.convert(data)
    group, order = _group_label(data, keys)
    if group is not None:
        data = data.with_columns(pl.Series(group, _labels(data, keys)))
        data = data.drop([k for k in keys if k != group])
    # Inline values, past Altair's data transformer: its MaxRowsError (5,000 rows) is for raw
    # data to aggregate, and these rows are binned already.
    inline = _inline(data)

    if len(axes) == 2:
        x, y = axes
        heat: alt.Chart = (
            alt.Chart(inline)
            .mark_rect()
            .encode(
                x=x.encoding("x"),
                x2=alt.X2(field=_field(x.end)),
                y=y.encoding("y"),
                y2=alt.Y2(field=_field(y.end)),
                color=alt.Color(field="count", type="quantitative", title=value_title),
                tooltip=[*x.tooltips(), *y.tooltips(), _count_tooltip(value_title)],
            )
        )
        if group is None:
            return heat.properties(title=title) if title else heat
        return _facetted(heat, group, order, title, panel=(180, 180))

    (x,) = axes
    count_y = alt.Y(
        field="count", type="quantitative", title=value_title, axis=_value_axis(data["count"])
    )
    if group is None or facet or (facet is None and len(order) > MAX_OVERLAID_GROUPS):
        tooltip = [*x.tooltips(), _count_tooltip(value_title)]
        if group is not None:
            tooltip.insert(0, alt.Tooltip(field=_field(group), type="nominal"))
        bars_chart: alt.Chart = (
            alt.Chart(inline)
            .mark_bar()
            .encode(
                x=x.encoding("x"),
                x2=alt.X2(field=_field(x.end)),
                y=count_y,
                y2=alt.Y2(datum=0),  # bars from zero: ranged temporal x would make them flat
                tooltip=tooltip,
            )
        )
        if group is None:
            return bars_chart.properties(title=title) if title else bars_chart
        return _facetted(bars_chart, group, order, title, panel=(180, 110))

    steps = _step_points(data, group, x, order)
    outlines: alt.Chart = (
        alt.Chart(_inline(steps), title=_title(title))
        .mark_line(interpolate="step-after")
        .encode(
            x=x.encoding("x", field=_EDGE, binned=False),
            y=alt.Y(
                field=_Y, type="quantitative", title=value_title, axis=_value_axis(data["count"])
            ),
            color=alt.Color(field=_field(group), type="nominal", sort=order, title=group),
            order=alt.Order(field=_ORDER, type="quantitative"),
            tooltip=[
                alt.Tooltip(field=_field(group), type="nominal"),
                *x.tooltips(fields=[(_EDGE, "edge")]),
                alt.Tooltip(field=_Y, type="quantitative", title=value_title),
            ],
        )
    )
    return outlines


def save(
    hist: pl.DataFrame | pl.Series,
    path: str | Path,
    *,
    title: str = "",
    facet: bool | None = None,
    kind: Kind | None = None,
    y_title: str | None = None,
) -> Path:
    """Writes :func:`chart` of ``hist`` as ``.html``, ``.png``, ``.svg`` or ``.json`` (by the
    file's suffix; PNG and SVG need ``vl-convert-python``). Returns the path."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in {".html", ".png", ".svg", ".json"}:
        raise ValueError(f"cannot write a plot as {path.suffix!r}: use .html, .png, .svg or .json")
    figure = chart(hist, title=title, facet=facet, kind=kind, y_title=y_title)
    if suffix in {".png", ".svg"}:
        try:
            import vl_convert  # noqa: F401
        except ImportError as e:
            raise ImportError(f"writing {suffix} needs vl-convert-python: {_INSTALL_HINT}") from e
    figure.save(str(path))
    return path


def _require_altair() -> None:
    try:
        import altair  # noqa: F401
    except ImportError as e:
        raise ImportError(f"polars_gpu_hist.plot charts need Altair: {_INSTALL_HINT}") from e


@dataclass(frozen=True)
class _Axis:
    """One binned dimension: its edge columns and how they are drawn."""

    name: str
    start: str
    end: str
    kind: Literal["quantitative", "temporal"]
    title: str
    # Duration axes: the unit's name and length in nanoseconds.
    unit: tuple[str, int] | None = None

    @classmethod
    def of(cls, frame: pl.DataFrame, name: str, title: str) -> _Axis:
        start, end = f"{name}_start", f"{name}_end"
        dtype = frame.schema[start]
        label = title or ("value" if name == "bin" else name)
        if isinstance(dtype, pl.Datetime) and dtype.time_zone is not None:
            return cls(name, start, end, "temporal", f"{label} ({dtype.time_zone})")
        if isinstance(dtype, (pl.Date, pl.Datetime)):
            return cls(name, start, end, "temporal", label)
        if isinstance(dtype, pl.Duration):
            unit = _duration_unit(frame, start, end)
            return cls(name, start, end, "quantitative", f"{label} ({unit[0]})", unit)
        if not dtype.is_numeric():
            raise ValueError(f"cannot plot edges of dtype {dtype} (column {start!r})")
        return cls(name, start, end, "quantitative", label)

    def convert(self, data: pl.DataFrame) -> pl.DataFrame:
        """The edges as Vega-Lite reads them without a shift: Date and Datetime as wall-clock
        ISO text marked UTC (the axis is a UTC scale, so it shows that wall clock whatever the
        viewer's zone), Duration as a number of the axis unit."""
        columns = [pl.col(self.start), pl.col(self.end)]
        if self.kind == "temporal":
            converted = [_wall_clock_text(c, data.schema[self.start]) for c in columns]
        elif self.unit is not None:
            converted = [c.dt.total_nanoseconds().cast(pl.Float64) / self.unit[1] for c in columns]
        else:
            converted = [c.cast(pl.Float64) for c in columns]
        return data.with_columns(converted)

    def encoding(
        self, channel: Literal["x", "y"], field: str | None = None, binned: bool = True
    ) -> Any:
        import altair as alt

        encode = alt.X if channel == "x" else alt.Y
        if self.kind == "temporal":
            return encode(
                field=_field(field or self.start),
                type="temporal",
                title=self.title,
                scale=alt.Scale(type="utc"),
                axis=alt.Axis(labelOverlap=True),
            )
        if binned:
            return encode(
                field=_field(field or self.start),
                type="quantitative",
                bin="binned",
                title=self.title,
            )
        return encode(field=_field(field or self.start), type="quantitative", title=self.title)

    def tooltips(self, fields: list[tuple[str, str]] | None = None) -> list[alt.Tooltip]:
        import altair as alt

        pairs = fields or [(self.start, f"{self.name}_start"), (self.end, f"{self.name}_end")]
        if self.kind == "temporal":
            return [
                alt.Tooltip(
                    field=_field(f),
                    type="temporal",
                    title=t,
                    format="%Y-%m-%d %H:%M:%S.%L",
                    formatType="utc",
                )
                for f, t in pairs
            ]
        suffix = f" ({self.unit[0]})" if self.unit else ""
        return [
            alt.Tooltip(field=_field(f), type="quantitative", title=t + suffix) for f, t in pairs
        ]


def _wall_clock_text(column: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    if isinstance(dtype, pl.Date):
        column = column.cast(pl.Datetime("ms"))
    elif isinstance(dtype, pl.Datetime) and dtype.time_zone is not None:
        column = column.dt.replace_time_zone(None)  # the wall clock in the values' own zone
    return column.dt.to_string("%Y-%m-%dT%H:%M:%S%.3fZ")


def _duration_unit(frame: pl.DataFrame, start: str, end: str) -> tuple[str, int]:
    ns = frame.select(pl.col(start).dt.total_nanoseconds(), pl.col(end).dt.total_nanoseconds())
    extent = (
        max(abs(v) for column in ns.iter_columns() for v in column if v is not None)
        if (frame.height)
        else 0
    )
    return next(
        ((unit, size) for unit, size in _DURATION_UNITS_NS if extent >= 2 * size),
        ("nanoseconds", 1),
    )


def _column_name(hist: pl.DataFrame | pl.Series) -> str | None:
    """The histogrammed column's name, where the result still carries it (a Struct column as
    the expression returns it)."""
    if isinstance(hist, pl.Series) and isinstance(hist.dtype, (pl.Struct, pl.List)):
        return hist.name
    if isinstance(hist, pl.DataFrame):
        nested = [n for n, t in hist.schema.items() if isinstance(t, (pl.Struct, pl.List))]
        if len(nested) == 1:
            return nested[0]
    return None


def _per_unit(edges: pl.DataType) -> str:
    """What a density of temporal edges is per: their physical unit (the plugin divides by
    widths in it)."""
    if isinstance(edges, pl.Date):
        return " (per day)"
    if isinstance(edges, (pl.Datetime, pl.Duration)):
        return f" (per {_TIME_UNIT_NAMES[edges.time_unit]})"
    return ""


_TIME_UNIT_NAMES = {"ns": "ns", "us": "µs", "ms": "ms"}


def _value_axis(values: pl.Series) -> Any:
    """Tiny values (densities over wide bins) in exponent notation instead of many zeros."""
    import altair as alt

    top = values.cast(pl.Float64).abs().max()
    if isinstance(top, float) and 0 < top < 1e-3:
        return alt.Axis(format="~e")
    return alt.Undefined


def _unnested(hist: pl.DataFrame | pl.Series, *, bins: bool = True) -> pl.DataFrame:
    """The histogram's rows as plain columns: a Struct column is unnested, a list of Structs
    (``group_by().agg()``) exploded first; with ``bins``, a ``hist`` frame's breakpoints made
    bins."""
    if isinstance(hist, pl.Series):
        hist = hist.to_frame()
    if not isinstance(hist, pl.DataFrame):
        raise TypeError(
            f"expected a histogram result (a DataFrame or Series), got {type(hist).__name__}"
        )
    nested = [
        name
        for name, dtype in hist.schema.items()
        if isinstance(dtype, pl.Struct)
        or (isinstance(dtype, pl.List) and isinstance(dtype.inner, pl.Struct))
    ]
    if len(nested) == 1:
        (name,) = nested
        if isinstance(hist.schema[name], pl.List):
            hist = hist.explode(name).drop_nulls(name)
        hist = hist.unnest(name)
    return as_bins(hist) if bins else hist


def _axes(hist: pl.DataFrame) -> list[str]:
    """The axis prefixes ``p`` with ``p_start`` and ``p_end`` columns, in column order."""
    names = set(hist.columns)
    return [
        c[: -len("_start")]
        for c in hist.columns
        if c.endswith("_start") and c[: -len("_start")] + "_end" in names
    ]


def _keys(hist: pl.DataFrame, axes: list[str]) -> list[str]:
    """Group key columns: everything but the edges and ``count``."""
    edges = {f"{a}_{side}" for a in axes for side in ("start", "end")}
    return [c for c in hist.columns if c not in edges and c != "count"]


def _labels(data: pl.DataFrame, keys: list[str]) -> pl.Series:
    """Each row's group as text (``null`` for a null key; ``a=1, b=x`` for several keys)."""
    texts = [pl.col(k).cast(pl.String).fill_null("null") for k in keys]
    if len(keys) == 1:
        return data.select(texts[0]).to_series()
    parts = [pl.lit(f"{k}=") + t for k, t in zip(keys, texts)]
    return data.select(pl.concat_str(parts, separator=", ")).to_series()


def _group_label(data: pl.DataFrame, keys: list[str]) -> tuple[str | None, list[str]]:
    """The name of the group column and the groups in order of first appearance."""
    if not keys:
        return None, []
    name = keys[0] if len(keys) == 1 else ", ".join(keys)
    order = _labels(data, keys).unique(maintain_order=True).to_list()
    return name, order


def _group_rows(frame: pl.DataFrame, keys: list[str]) -> list[tuple[str, list[int]]]:
    """(header, row numbers) of each group in order of first appearance; one headerless group
    for an ungrouped result."""
    if not keys:
        return [("", list(range(frame.height)))]
    labels = _labels(frame, keys)
    name = keys[0] if len(keys) == 1 else None
    groups: dict[str, list[int]] = {}
    for i, label in enumerate(labels):
        groups.setdefault(label, []).append(i)
    return [(f"{name} = {label}" if name else label, rows) for label, rows in groups.items()]


def _kind(frame: pl.DataFrame, axes: list[str], keys: list[str]) -> Kind:
    """``count`` for integer counts; for Float64, ``density`` when every group integrates to 1
    (groups of NaN, an empty group's density, are ignored), else ``weights``."""
    if frame.schema["count"].is_integer():
        return "count"
    width = pl.lit(1.0)
    for a in axes:
        start = pl.col(f"{a}_start").to_physical().cast(pl.Float64)
        end = pl.col(f"{a}_end").to_physical().cast(pl.Float64)
        width = width * (end - start)
    mass = (pl.col("count").cast(pl.Float64) * width).alias("mass")
    per_group = (
        frame.group_by(keys).agg(mass.sum()) if keys else frame.select(mass.sum())
    ).get_column("mass")
    finite = per_group.filter(per_group.is_not_nan())
    if finite.len() and ((finite - 1.0).abs() <= 1e-6).all():
        return "density"
    return "weights"


def _step_points(data: pl.DataFrame, group: str, x: _Axis, order: list[str]) -> pl.DataFrame:
    """The outline of each group's bars: from zero up at the first edge, along every bin's top
    (step-after: a point per bin start, the last bin's height again at its end), down to zero."""
    frames = []
    for part in data.partition_by(group, maintain_order=True):
        edges = part[x.start].to_list() + [part[x.end][-1]] * 2
        heights = part["count"].cast(pl.Float64).to_list()
        ys = [0.0, *heights, heights[-1], 0.0]
        frames.append(
            pl.DataFrame(
                {
                    group: [part[group][0]] * len(ys),
                    _EDGE: [part[x.start][0], *edges],
                    _Y: ys,
                    _ORDER: list(range(len(ys))),
                },
                schema={
                    group: pl.String,
                    _EDGE: data.schema[x.start],
                    _Y: pl.Float64,
                    _ORDER: pl.Int64,
                },
            )
        )
    return pl.concat(frames)


def _facetted(
    panel_chart: alt.Chart, group: str, order: list[str], title: str, panel: tuple[int, int]
) -> alt.FacetChart:
    import altair as alt

    width, height = panel
    chart: alt.FacetChart = panel_chart.properties(width=width, height=height).facet(
        facet=alt.Facet(field=_field(group), type="nominal", sort=order, title=group),
        columns=min(len(order), 4),
        title=_title(title),
    )
    return chart


def _inline(frame: pl.DataFrame) -> Any:
    """The rows as a chart's inline values (Altair's own conversion of a frame's values)."""
    import altair as alt

    values = alt.utils.data.to_values(alt.utils.core.to_eager_narwhals_dataframe(frame))
    return alt.InlineData(values=values["values"])


def _without_flow_rows(frame: pl.DataFrame, names: list[str]) -> tuple[pl.DataFrame, str]:
    """The rows a chart can draw, and a note of the flow rows (``flow=True``'s infinite edges)
    it leaves out, where there are any."""
    below = pl.lit(False)
    above = pl.lit(False)
    for name in names:
        for edge, side in ((f"{name}_start", "below"), (f"{name}_end", "above")):
            dtype = frame.schema[edge]
            if dtype.is_float():
                infinite = pl.col(edge).is_infinite()
                if side == "below":
                    below = below | (infinite & (pl.col(edge) < 0))
                else:
                    above = above | (infinite & (pl.col(edge) > 0))
    counts = frame.select(below.sum().alias("below"), above.sum().alias("above")).row(0)
    if not any(counts):
        return frame, ""
    kept = frame.filter(~(below | above))
    weight = frame.filter(below | above)["count"].sum()
    note = f"flow rows not drawn: {counts[0]} below, {counts[1]} above, holding {weight}"
    return kept, note


# TeX that mplhep renders and Altair prints as it is: its commonest pieces as plain text.
_TEX = {
    r"\alpha": "\u03b1",
    r"\beta": "\u03b2",
    r"\gamma": "\u03b3",
    r"\Delta": "\u0394",
    r"\delta": "\u03b4",
    r"\eta": "\u03b7",
    r"\theta": "\u03b8",
    r"\lambda": "\u03bb",
    r"\mu": "\u03bc",
    r"\nu": "\u03bd",
    r"\pi": "\u03c0",
    r"\phi": "\u03c6",
    r"\Phi": "\u03a6",
    r"\sigma": "\u03c3",
    r"\tau": "\u03c4",
    r"\chi": "\u03c7",
    r"\omega": "\u03c9",
    r"\pm": "\u00b1",
    r"\times": "\u00d7",
    r"\cdot": "\u00b7",
    r"\rightarrow": "\u2192",
    r"\to": "\u2192",
    r"\ell": "\u2113",
    r"\infty": "\u221e",
    r"\sqrt": "\u221a",
    r"\,": " ",
    r"\ ": " ",
}
_SUPERSCRIPTS = str.maketrans("0123456789+-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻")
_SUBSCRIPTS = str.maketrans("0123456789+-", "₀₁₂₃₄₅₆₇₈₉₊₋")


def plain_label(text: str) -> str:
    r"""A label as Altair can show it: the parts between ``$`` signs (TeX, as mplhep renders
    them) made plain text: Greek letters and common symbols as Unicode, ``^2`` and ``_1`` as
    super- and subscripts where Unicode has them, ``\mathrm{...}`` and braces unwrapped
    (``$p_{T}$ [GeV]`` is ``p_T [GeV]``)."""
    import re

    def plain(math: str) -> str:
        math = re.sub(r"\\(?:mathrm|text|mathit|mathbf|rm|bf)\s*\{([^{}]*)\}", r"\1", math)
        for tex, char in sorted(_TEX.items(), key=lambda kv: -len(kv[0])):
            math = math.replace(tex, char)
        math = re.sub(r"\^\{?([0-9+-]+)\}?", lambda m: m.group(1).translate(_SUPERSCRIPTS), math)
        math = re.sub(
            r"_\{?([0-9+-]+)\}?(?![A-Za-z])",
            lambda m: m.group(1).translate(_SUBSCRIPTS),
            math,
        )
        return math.replace("{", "").replace("}", "")

    if "$" not in text:
        return text
    parts = text.split("$")
    return "".join(plain(p) if i % 2 else p for i, p in enumerate(parts))


def _title(title: str) -> Any:
    """A chart title, or none (Altair's Undefined) rather than an empty one."""
    import altair as alt

    return title or alt.Undefined


def _count_tooltip(title: str) -> alt.Tooltip:
    import altair as alt

    return alt.Tooltip(field="count", type="quantitative", title=title)


def _field(name: str) -> str:
    """A column name as a Vega-Lite field (dots and brackets would address nested data)."""
    for special in ("\\", ".", "[", "]"):
        name = name.replace(special, "\\" + special)
    return name


def _height(count: Any) -> float:
    """A bar's length: nulls, NaN (an empty group's density) and negative sums draw nothing."""
    if count is None:
        return 0.0
    value = float(count)
    return value if value > 0 else 0.0


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)
