"""Hypothesis strategies for columns that stress the bin rules, and the numpy reference."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
from hypothesis import strategies as st

import polars_gpu_hist  # noqa: F401  (the `gpu_hist` namespace of the `by=` helpers)
from support.dtypes import NUMERIC


@dataclass
class Case:
    """A column (possibly chunked, with nulls) and histogram arguments."""

    series: pl.Series
    bins: int | list[float]
    range: tuple[float, float] | None = None
    weights: pl.Series | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def exact_weights(self) -> bool:
        """Whether every weighted sum is exact in any order (integer weights)."""
        w = self.weights
        if w is None or w.dtype.is_integer():
            return True
        finite = w.drop_nulls().to_numpy()
        return bool(np.isfinite(finite).all() and (finite == np.round(finite)).all())

    def valid_numpy(self) -> tuple[np.ndarray, np.ndarray | None]:
        """The values numpy should see: nulls (in values or weights) and NaN dropped. Weights
        are given to numpy as float64 or int64: narrow integer weights (int8) wrap and float32
        ones round in numpy's own sums, which we do not copy (docs/semantics.md)."""
        s = self.series.to_physical()
        mask = s.is_not_null()
        if self.weights is not None:
            mask &= self.weights.is_not_null()
        if s.dtype.is_float():
            mask &= ~s.is_nan().fill_null(True)
        np_dtype = NUMERIC[s.dtype]
        values = s.filter(mask).to_numpy().astype(np_dtype, copy=False)
        w = None
        if self.weights is not None:
            wide = pl.Int64 if self.weights.dtype.is_integer() else pl.Float64
            w = self.weights.filter(mask).cast(wide).to_numpy()
        return values, w


def numpy_histogram(case: Case, density: bool = False) -> tuple[np.ndarray, np.ndarray]:
    values, w = case.valid_numpy()
    counts, edges = np.histogram(
        values, bins=case.bins, range=case.range, weights=w, density=density
    )
    if w is not None and not isinstance(case.bins, int) and not np.isfinite(w).all():
        # numpy sums explicit edges' weights by cumulative sums, which carry a NaN or an
        # infinity into every later bin (docs/semantics.md); its equal bins sum each bin on its own
        # (bincount), as we do for both: that is the reference, over numpy's own bins.
        counts = per_bin_sums(values, w, edges)
    return counts, edges


def per_bin_sums(values: np.ndarray, w: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Each bin's sum of weights, bins as numpy's explicit edges place values (closed left,
    the last bin closed)."""
    inside = (values >= edges[0]) & (values <= edges[-1])
    index = np.searchsorted(edges, values[inside], side="right") - 1
    index = np.minimum(index, len(edges) - 2)
    return np.bincount(index, weights=w[inside], minlength=len(edges) - 1)


def numpy_bin_count(
    x: np.ndarray, rule: str, range: tuple[float, float] | None = None
) -> int | None:
    """How many bins numpy's estimator `rule` makes for x, without making them; None where numpy
    refuses. numpy builds every edge it estimates: a few billion from a tiny spread (hypothesis
    finds those) ran a CI machine out of memory, and the kernel killed the test run."""
    try:
        from numpy.lib import _histograms_impl as impl
    except ImportError:  # numpy 1.x
        from numpy.lib import histograms as impl  # type: ignore[no-redef]
    a = np.asarray(x).ravel()
    try:
        first, last = impl._get_outer_edges(a, range)
    except ValueError:
        return None
    if range is not None:
        a = a[(a >= first) & (a <= last)]
    if a.size == 0:
        return 1
    width = impl._hist_bin_selectors[rule](a, (first, last))
    if not width:
        return 1
    if np.issubdtype(a.dtype, np.integer) and width < 1:
        width = 1
    count = np.ceil(impl._unsigned_subtract(last, first) / width)
    return int(count) if np.isfinite(count) else None


def _int_info(np_dtype: Any) -> tuple[int, int]:
    info = np.iinfo(np_dtype)
    return int(info.min), int(info.max)


@st.composite
def base_values(draw: st.DrawFn, np_dtype: Any, size: int) -> np.ndarray:
    if np.issubdtype(np_dtype, np.floating):
        width = 32 if np_dtype == np.float32 else 64
        top = float(np.finfo(np_dtype).max)
        near_limits = [top, -top, top / 2, -top / 2, 1e308, -1e308, 3e38, -3e38]
        special = st.sampled_from(
            [0.0, -0.0, 1.0, -1.0, 0.5, 1e-30, np.nan, *(v for v in near_limits if abs(v) <= top)]
        )
        scale = float(np_dtype(draw(st.sampled_from([1.0, 1e-3, 1e3, 1e12]))))
        plain = st.floats(-scale, scale, width=width)
        wild = st.floats(width=width, allow_nan=True, allow_infinity=True)
        elements = st.one_of(plain, plain, plain, special, wild)
        style = draw(st.sampled_from(["plain", "wild", "few", "one"]))
        if style == "plain":
            elements = plain
        elif style == "few":
            pool = draw(st.lists(plain, min_size=1, max_size=4))
            elements = st.sampled_from(pool)
        elif style == "one":
            elements = st.just(draw(plain))
        return np.array(draw(st.lists(elements, min_size=size, max_size=size)), dtype=np_dtype)
    lo, hi = _int_info(np_dtype)
    span = draw(st.sampled_from(["full", "small", "one", "near_max"]))
    if span == "small":
        lo, hi = max(lo, -50), min(hi, 50)
    elif span == "one":
        v = draw(st.integers(lo, hi))
        lo, hi = v, v
    elif span == "near_max":
        lo = max(lo, hi - 1000)
    ints = st.integers(lo, hi)
    return np.array(draw(st.lists(ints, min_size=size, max_size=size)), dtype=np_dtype)


def with_edge_values(values: np.ndarray, edges: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Adds values placed exactly on numpy's edges and one ulp either side."""
    if len(edges) == 0:
        return values
    picks = edges[rng.integers(0, len(edges), size=min(len(edges), 64))]
    if np.issubdtype(values.dtype, np.floating):
        picks = picks.astype(values.dtype)
        picks = np.concatenate(
            [picks, np.nextafter(picks, np.inf), np.nextafter(picks, -np.inf)]
        ).astype(values.dtype)
    else:
        info = np.iinfo(values.dtype)
        finite = picks[np.isfinite(picks)]
        finite = np.clip(np.floor(finite), float(info.min), float(info.max))
        # float -> int at the top of int64/uint64 can overflow: keep what converts back exactly
        ok = finite < 2.0**63 if info.max > 2**62 else np.ones(len(finite), bool)
        picks = finite[ok].astype(values.dtype)
    return np.concatenate([values, picks])


def two_edges(e0: float) -> list[float]:
    """Two finite, increasing edges from one (below it at the top of float64)."""
    e1 = e0 + max(1.0, abs(e0) * 2.0**-50)
    return [e0, e1] if np.isfinite(e1) else [e0 - abs(e0) * 2.0**-50, e0]


def to_series(
    values: np.ndarray, pl_dtype: Any, null_mask: np.ndarray, n_chunks: int, name: str = "x"
) -> pl.Series:
    s = pl.Series(name, values, dtype=pl_dtype)
    if null_mask.any():
        s = s.scatter(np.flatnonzero(null_mask), None)
    if n_chunks <= 1 or len(s) < n_chunks:
        return s
    cuts = np.linspace(0, len(s), n_chunks + 1).astype(int)
    parts = [s.slice(a, b - a) for a, b in zip(cuts[:-1], cuts[1:])]
    out = parts[0].clone()
    for p in parts[1:]:
        out.append(p)
    return out


@st.composite
def cases(
    draw: st.DrawFn,
    dtypes: list[Any] | None = None,
    explicit_edges: bool | None = None,
    weighted: bool = False,
    max_size: int = 300,
) -> Case:
    pl_dtype = draw(st.sampled_from(dtypes or list(NUMERIC)))
    np_dtype = NUMERIC[pl_dtype]
    size = draw(st.integers(0, max_size))
    values = draw(base_values(np_dtype, size))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if explicit_edges is None:
        explicit_edges = draw(st.booleans())
    finite = values[np.isfinite(values.astype(np.float64))] if values.size else values
    if explicit_edges:
        anchors = (
            st.floats(-1e6, 1e6)
            if finite.size == 0
            else st.sampled_from([float(v) for v in finite])
            | st.floats(float(finite.min()) - 1, float(finite.max()) + 1)
        )
        edges = sorted(set(draw(st.lists(anchors, min_size=2, max_size=40))))
        if len(edges) < 2:
            edges = two_edges(edges[0] if edges else 0.0)
        bins: int | list[float] = edges
        rng_arg = None
        numpy_edges = np.array(edges)
    else:
        common = st.sampled_from([1, 2, 3, 5, 10, 64, 100, 255, 256, 1000])
        bins = draw(common | st.integers(1, 5000))
        rng_arg = None
        style = draw(st.sampled_from(["none", "none", "quantiles", "plain", "limits"]))
        if style == "quantiles" and finite.size:
            lo = float(np.quantile(finite.astype(np.float64), draw(st.floats(0, 0.5))))
            hi = float(np.quantile(finite.astype(np.float64), draw(st.floats(0.5, 1))))
            rng_arg = (lo, hi)
        elif style in ("plain", "quantiles"):
            a, b = sorted(draw(st.lists(st.floats(-1e9, 1e9), min_size=2, max_size=2)))
            rng_arg = (a, b)
        elif style == "limits":
            rng_arg = draw(limit_ranges())
            # Values near and on those limits (and on the edges, below).
            lo, hi = rng_arg
            extra = np.array([lo, hi, lo / 2, hi / 2, lo / 3 + hi / 3], dtype=np.float64)
            if np.issubdtype(np_dtype, np.floating):
                top = float(np.finfo(np_dtype).max)
                values = np.concatenate([values, extra[np.abs(extra) <= top].astype(np_dtype)])
        try:
            ok = values[~np.isnan(values.astype(np.float64))] if values.size else values
            numpy_edges = np.histogram_bin_edges(ok, bins=bins, range=rng_arg)
        except ValueError:
            numpy_edges = np.array([])
    values = with_edge_values(values, numpy_edges, rng)
    rng.shuffle(values)
    null_rate = draw(st.sampled_from([0.0, 0.0, 0.1, 0.5, 1.0]))
    nulls = rng.random(len(values)) < null_rate
    n_chunks = draw(st.sampled_from([1, 1, 2, 3, 7]))
    series = to_series(values, pl_dtype, nulls, n_chunks)
    weights = None
    if weighted:
        w, w_dtype = draw(weight_values(len(values), rng))
        w_nulls = rng.random(len(values)) < draw(st.sampled_from([0.0, 0.2]))
        weights = to_series(w, w_dtype, w_nulls, draw(st.sampled_from([1, 2, 5])), "w")
    return Case(series=series, bins=bins, range=rng_arg, weights=weights)


# The float32 and float64 limits, and ranges near them whose widths overflow either type.
LIMITS = [
    float(np.finfo(np.float32).max),
    3e38,
    2e38,
    1e39,
    1e300,
    1e308,
    1.5e308,
    1.7e308,
    float(np.finfo(np.float64).max),
]


@st.composite
def limit_ranges(draw: st.DrawFn) -> tuple[float, float]:
    """A range near the float32 or float64 limits: symmetric, one-sided, or narrow at the top
    (its width overflows float32, float64, or neither)."""
    a, b = draw(st.sampled_from(LIMITS)), draw(st.sampled_from(LIMITS))
    shape = draw(st.sampled_from(["across", "from zero", "to zero", "at the top"]))
    if shape == "across":
        return (-a, b)
    if shape == "from zero":
        return (0.0, a)
    if shape == "to zero":
        return (-a, 0.0)
    lo, hi = sorted((a, b))
    return (lo / 2, hi) if lo == hi else (lo, hi)


@st.composite
def weight_values(draw: st.DrawFn, size: int, rng: np.random.Generator) -> tuple[np.ndarray, Any]:
    """Weights of one kind: integers in float64 (sums exact in any order), fractions, fractions
    with NaN and infinities, float32, or int8 (whose sums numpy wraps)."""
    kind = draw(st.sampled_from(["integers", "integers", "fractions", "non-finite", "f32", "i8"]))
    if kind == "integers":
        return rng.integers(-3, 10, size=size).astype(np.float64), pl.Float64
    if kind == "i8":
        return rng.integers(-128, 128, size=size).astype(np.int8), pl.Int8
    w = rng.normal(size=size) * draw(st.sampled_from([1.0, 1e-3, 1e6]))
    if kind == "f32":
        return w.astype(np.float32), pl.Float32
    if kind == "non-finite" and size:
        picks = rng.integers(0, size, size=rng.integers(1, 4))
        w[picks] = rng.choice([np.nan, np.inf, -np.inf], size=len(picks))
    return w, pl.Float64


@dataclass
class NdCase:
    frame: pl.DataFrame  # columns x0.. and optionally w
    bins: list[Any]
    range: list[tuple[float, float] | None] | None
    weighted: bool

    @property
    def names(self) -> list[str]:
        return [c for c in self.frame.columns if c != "w"]

    @property
    def exact_weights(self) -> bool:
        """Whether every weighted sum is exact in any order (integer weights)."""
        if not self.weighted or self.frame["w"].dtype.is_integer():
            return True
        w = self.frame["w"].drop_nulls().to_numpy()
        return bool(np.isfinite(w).all() and (w == np.round(w)).all())

    def numpy(self, density: bool = False) -> tuple[np.ndarray, list[np.ndarray]]:
        """numpy.histogramdd over the rows with no null. numpy refuses NaN where a range comes
        from the data; the package takes that range from the column's other values (a NaN
        drops only its value), so the same range is given to numpy here, as scalars of the
        sample's dtype (numpy's own extremes would be)."""
        kept = self.frame.filter(pl.all_horizontal(pl.all().is_not_null()))
        sample = [kept[c].to_numpy().astype(NUMERIC[kept[c].dtype]) for c in self.names]
        # numpy stacks a sequence of columns by pairwise promotion.
        dtype = functools.reduce(np.promote_types, [a.dtype for a in sample])
        ranges = list(self.range) if self.range is not None else [None] * len(self.names)
        for i, b in enumerate(self.bins):
            if isinstance(b, int) and ranges[i] is None:
                column = sample[i].astype(dtype)
                finite = column[~np.isnan(column)] if column.dtype.kind == "f" else column
                if finite.size:
                    ranges[i] = (finite.min(), finite.max())
                elif column.size:
                    ranges[i] = (0.0, 1.0)  # only NaN: no values, so numpy's empty range
        weights = kept["w"].to_numpy() if self.weighted else None
        return np.histogramdd(
            sample, bins=self.bins, range=ranges, weights=weights, density=density
        )


@st.composite
def nd_cases(draw: st.DrawFn, weighted: bool = False, max_size: int = 200) -> NdCase:
    dims = draw(st.sampled_from([2, 2, 3]))
    size = draw(st.integers(0, max_size))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    family = draw(st.sampled_from(["f32", "f64", "int", "mixed"]))
    pool = {
        "f32": [pl.Float32],
        "f64": [pl.Float64],
        "int": [pl.Int8, pl.Int32, pl.Int64, pl.UInt16, pl.UInt64],
        "mixed": list(NUMERIC),
    }[family]
    columns, bins, ranges = {}, [], []
    for j in range(dims):
        pl_dtype = draw(st.sampled_from(pool))
        values = draw(base_values(NUMERIC[pl_dtype], size))
        finite = values[np.isfinite(values.astype(np.float64))]
        kind = draw(st.sampled_from(["count", "count", "range", "edges"]))
        if kind == "edges":
            lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
            cuts = draw(st.lists(st.floats(lo - 1, hi + 1), min_size=2, max_size=12))
            edges = sorted({*cuts, *(float(v) for v in finite[:3])})
            if len(edges) < 2:
                edges = two_edges(edges[0])
            bins.append(edges)
            ranges.append(None)
            values = with_edge_values(values, np.array(edges), rng)[:size]
        else:
            bins.append(draw(st.sampled_from([1, 2, 3, 7, 16, 50])))
            if kind == "range" and draw(st.integers(0, 3)) == 0:
                ranges.append(draw(limit_ranges()))
            elif kind == "range":
                a, b = sorted(draw(st.lists(st.floats(-1e3, 1e3), min_size=2, max_size=2)))
                ranges.append((a, b))
            else:
                ranges.append(None)
        nulls = rng.random(size) < draw(st.sampled_from([0.0, 0.0, 0.2]))
        columns[f"x{j}"] = to_series(
            values, pl_dtype, nulls, draw(st.sampled_from([1, 2, 3])), f"x{j}"
        )
    frame = pl.DataFrame(columns)
    if weighted:
        w, w_dtype = draw(weight_values(size, rng))
        frame = frame.with_columns(w=to_series(w, w_dtype, rng.random(size) < 0.1, 2, "w"))
    use_range = ranges if any(r is not None for r in ranges) else None
    return NdCase(frame, bins, use_range, weighted)


@st.composite
def by_cases(draw: st.DrawFn) -> tuple[pl.DataFrame, dict[str, Any]]:
    size = draw(st.integers(0, 300))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    groups = draw(st.sampled_from([1, 3, 17, 100]))
    key_kind = draw(
        st.sampled_from(["int", "int8", "uint64", "str", "cat", "enum", "bool", "date", "datetime"])
    )
    ids = rng.integers(0, groups, size)
    key: pl.Series
    if key_kind == "int":
        key = pl.Series("g", ids * 7 - 20)
    elif key_kind == "int8":
        key = pl.Series("g", ids - 50, dtype=pl.Int8)
    elif key_kind == "uint64":
        key = pl.Series("g", ids.astype(np.uint64) + np.uint64(2**63), dtype=pl.UInt64)
    elif key_kind == "bool":
        key = pl.Series("g", ids % 2 == 0)
    elif key_kind == "date":
        key = pl.Series("g", ids * 31 - 400, dtype=pl.Int32).cast(pl.Date)
    elif key_kind == "datetime":
        key = pl.Series("g", ids * 3_600_000_000 - 7, dtype=pl.Int64).cast(
            pl.Datetime("us", "Europe/Paris")
        )
    else:
        key = pl.Series("g", [f"k{i}" for i in ids], dtype=pl.String)
        if key_kind == "cat":
            key = key.cast(pl.Categorical)
        elif key_kind == "enum":
            key = key.cast(pl.Enum([f"k{i}" for i in reversed(range(groups))]))
    # Keys with and without nulls (a null key is a group of its own).
    if draw(st.booleans()):
        key = key.scatter(np.flatnonzero(rng.random(size) < 0.05), None)
    pl_dtype = draw(st.sampled_from([pl.Float32, pl.Float64, pl.Int32, pl.UInt8]))
    values = draw(base_values(NUMERIC[pl_dtype], size))
    x = to_series(values, pl_dtype, rng.random(size) < 0.1, draw(st.sampled_from([1, 3])))
    frame = pl.DataFrame({"x": x, "g": key, "w": rng.integers(0, 5, size).astype(np.float64)})
    finite = values[np.isfinite(values.astype(np.float64))]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    if draw(st.booleans()):
        kwargs: dict[str, Any] = {"bins": sorted({lo - 1, (lo + hi) / 2, hi + 1})}
    elif draw(st.integers(0, 4)) == 0:
        # Ranges near the float limits: a Float32 column with a float64-only range included.
        kwargs = {"bins": draw(st.sampled_from([1, 4, 10])), "range": draw(limit_ranges())}
    else:
        kwargs = {"bins": draw(st.sampled_from([1, 4, 10])), "range": (lo, hi)}
    kwargs["closed"] = draw(st.sampled_from(["left", "right"]))
    kwargs["density"] = draw(st.booleans())
    if draw(st.booleans()):
        kwargs["weights"] = "w"
    return frame, kwargs


# ---- `by=` keys grouped from their first rows ----

FIRST_ROWS = 1 << 18  # src/api/by.rs: the rows whose keys' span is tried first
WIDE_KEYS = [pl.Int32, pl.Int64, pl.UInt32, pl.Datetime("us")]
STRAYS = ["none", "just past the first rows", "below the span", "far, near the end", "the last row"]


def by_first_rows_case(dtype: pl.DataType, stray: str) -> pl.DataFrame:
    """1,000 keys that all appear in the first rows, and one `stray` key later (or none)."""
    n = 2 * FIRST_ROWS + 5
    g = (np.arange(n, dtype=np.int64) * 31) % 1_000 + 100
    if stray == "just past the first rows":
        g[FIRST_ROWS + 1] = 5_000
    elif stray == "below the span":
        g[FIRST_ROWS + 3] = 0
    elif stray == "far, near the end":
        g[n - 2] = 2**31 - 1
    elif stray == "the last row":
        g[n - 1] = 1_100
    x = np.random.default_rng(3).random(n)
    return pl.DataFrame({"x": x, "g": g}).with_columns(pl.col("g").cast(dtype))


def by_against_hashed_keys(frame: pl.DataFrame, device: str) -> None:
    """`by=` on `frame` equals `by=` on its keys as strings (grouped by hashing every row)."""
    expr = pl.col("x").gpu_hist.histogram(bins=4, range=(0.0, 1.0), by="g", device=device)
    got = frame.select(expr).unnest("x")
    hashed = frame.with_columns(pl.col("g").cast(pl.String)).select(expr).unnest("x")
    assert got["g"].cast(pl.String).equals(hashed["g"])
    assert got["count"].equals(hashed["count"]) and got["bin_start"].equals(hashed["bin_start"])
    assert got["count"].sum() == frame.height
