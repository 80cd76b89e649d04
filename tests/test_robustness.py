"""Never a wrong count, never a panic (issue 11): every dtype binned or refused clearly through
every entry point, numpy's answers at the float limits, by= in lazy queries, arguments checked
where they are written, temporal ranges and edges, the accumulator's limits."""

from __future__ import annotations

import datetime as dt
import decimal
import pickle
import threading

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh
from polars_gpu_hist import _native

# ---- 3. every Polars dtype: binned like numpy, or refused with an ordinary error ----

BINNED = {
    "Decimal": pl.Series(
        "x", [decimal.Decimal("1.25"), None, decimal.Decimal("-3.5")], dtype=pl.Decimal(10, 2)
    ),
    "Int128": pl.Series("x", [1, 2**70, -(2**65), None], dtype=pl.Int128),
    "UInt128": pl.Series("x", [1, 2**100, 7], dtype=pl.UInt128),
}

REFUSED = {
    "Categorical": pl.Series("x", ["a", "b"], dtype=pl.Categorical),
    "Enum": pl.Series("x", ["a", "b"], dtype=pl.Enum(["a", "b"])),
    "String": pl.Series("x", ["a", "b"]),
    "Binary": pl.Series("x", [b"a", b"b"]),
    "List": pl.Series("x", [[1.0], [2.0]]),
    "Array": pl.Series("x", [[1.0, 2.0], [3.0, 4.0]], dtype=pl.Array(pl.Float64, 2)),
    "Struct": pl.Series("x", [{"a": 1}, {"a": 2}]),
    "Null": pl.Series("x", [None, None]),
    "Boolean": pl.Series("x", [True, False]),
    "Time": pl.Series("x", [dt.time(1), dt.time(2)]),
}


@pytest.mark.parametrize("name", sorted(BINNED))
def test_wide_numbers_bin_as_numpy_bins_the_same_numbers_as_float64(name: str) -> None:
    s = BINNED[name]
    as_f64 = s.cast(pl.Float64).drop_nulls().to_numpy()
    expected, edges = np.histogram(as_f64, 4)
    out = gh.histogram(s, 4, device="cpu")
    assert out["count"].to_list() == expected.tolist()
    assert out["bin_start"].to_list() == edges[:-1].tolist()
    frame = pl.DataFrame({"x": s})
    via_expr = frame.select(pl.col("x").gpu_hist.histogram(4, device="cpu")).unnest("x")
    assert via_expr["count"].to_list() == expected.tolist()


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_every_other_dtype_is_refused_with_its_name(name: str) -> None:
    s = REFUSED[name]
    frame = pl.DataFrame({"x": s})
    with pytest.raises((pl.exceptions.PolarsError, TypeError)) as e:
        frame.select(pl.col("x").gpu_hist.histogram(4, range=(0, 1), device="cpu"))
    assert name.lower() in str(e.value).lower() or str(s.dtype).lower() in str(e.value).lower()
    with pytest.raises((TypeError, ValueError)) as e:
        gh.Histogram(4, range=(0, 1)).fill(s)
    assert "panic" not in str(e.value).lower()


def test_decimal_weights_are_numbers() -> None:
    w = pl.Series("w", [decimal.Decimal("0.5"), decimal.Decimal("2.25")], dtype=pl.Decimal(6, 2))
    out = gh.histogram(pl.Series([0.1, 0.9]), 2, range=(0, 1), weights=w, device="cpu")
    assert out["count"].to_list() == [0.5, 2.25]


def test_float16_bins_as_numpy_bins_float16() -> None:
    x = np.array([0.1, 0.2, 0.30004, 0.5, 0.7, 1.0], dtype=np.float16)
    for bins, range in [(5, None), (7, (0.0, 1.0)), (3, (0.1, 0.7))]:
        expected, edges = np.histogram(x, bins, range=range)
        out = gh.histogram(pl.Series("x", x), bins, range=range, device="cpu")
        assert out["count"].to_list() == expected.tolist(), (bins, range)
        assert out["bin_start"].to_list() == edges[:-1].astype(np.float64).tolist()


def test_multidimensional_host_arrays_are_flattened_as_numpy_does() -> None:
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    expected, _ = np.histogram(a, 5)
    assert gh.histogram(a, 5, device="cpu")["count"].to_list() == expected.tolist()


def test_an_n_by_d_host_array_gives_one_dimension_per_column() -> None:
    a = np.random.default_rng(1).random((500, 3))
    expected, _ = np.histogramdd(a, bins=4)
    out = gh.histogramdd(a, bins=4, device="cpu")
    assert out["count"].to_list() == expected.ravel().astype(int).tolist()


def test_panics_never_reach_python_from_the_accumulator() -> None:
    h = gh.Histogram(4, range=(0, 1))
    for s in REFUSED.values():
        try:
            h.fill(s)
        except BaseException as e:
            assert isinstance(e, Exception), type(e)
            assert "panicked" not in str(e)


def test_a_panic_inside_a_plugin_call_is_polars_error_and_the_next_call_works(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The plugin's own last-error slot and version symbols (src/python/plugin.rs): Polars reads
    # "PANIC" there as a panic; its message reaches stderr only under POLARS_VERBOSE=1.
    from polars_gpu_hist._expr.polars_hist import _bench_floor_expr

    df = pl.DataFrame({"x": [1.0, 2.0]})
    asked = "the panic a boundary test asked for"
    for verbose in ["0", "1"]:
        monkeypatch.setenv("POLARS_VERBOSE", verbose)
        capfd.readouterr()
        with pytest.raises(pl.exceptions.ComputeError, match="the plugin panicked"):
            df.select(_bench_floor_expr(pl.col("x"), panic=True))
        assert (asked in capfd.readouterr().err) == (verbose == "1")
        assert df.select(_bench_floor_expr(pl.col("x"))).item() == 2


# ---- 4. silent disagreements with numpy ----


def test_float32_column_with_a_range_wider_than_float32() -> None:
    m = 3.4028234663852886e38
    x = np.array([-1.0, 0.0, 1.0], np.float32)
    assert gh.histogram(x, 4, range=(-m, m), device="cpu")["count"].to_list() == [0, 1, 2, 0]
    x = np.array([-1e38, 0, 1e38], np.float32)
    expected, _ = np.histogram(x, 4, range=(-2e38, 2e38))
    assert gh.histogram(x, 4, range=(-2e38, 2e38), device="cpu")["count"].to_list() == (
        expected.tolist()
    )
    h = gh.Histogram(4, range=(-2e38, 2e38))
    h.fill(pl.Series(x))
    assert h.counts.tolist() == expected.tolist()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_float32_span_wider_than_float32_places_values_by_the_edges() -> None:
    m = float(np.finfo(np.float32).max)
    edges = np.histogram_bin_edges(np.zeros(1, np.float32), 5, range=(-m, m))
    # Just below, on and above numpy's float32 edges, near both ends of float32.
    x = np.concatenate([edges, np.nextafter(edges, np.inf), np.nextafter(edges, -np.inf)])
    x = x.astype(np.float32)
    with pytest.raises(IndexError):  # numpy's float32 `x - min` overflows
        np.histogram(x, 5, range=(-m, m))
    got = gh.histogram(x, 5, range=(-m, m), device="cpu")
    inside = x[(x >= edges[0]) & (x <= edges[-1])]
    index = np.minimum(np.searchsorted(edges, inside, side="right") - 1, 4)
    assert got["count"].to_list() == np.bincount(index, minlength=5).tolist()
    assert got["bin_start"].to_list() == edges[:-1].astype(np.float64).tolist()


def test_a_range_wider_than_float64_keeps_finite_edges_and_counts_everything() -> None:
    out = gh.histogram(pl.Series([-1e308, 0.0, 1e308]), 1, range=(-1e308, 1.5e308), device="cpu")
    assert out["count"].to_list() == [3]
    assert out["bin_start"].to_list() == [-1e308]
    out = gh.histogram(pl.Series([-1e308, 0.0, 1e308]), 4, range=(-1e308, 1e308), device="cpu")
    assert all(np.isfinite(out["bin_start"].to_numpy()))
    assert out["count"].sum() == 3


def test_histogramdd_bins_the_sample_of_the_common_dtype() -> None:
    x = pl.Series("x", [0, 1000, 0], dtype=pl.Int16)
    y = pl.Series("y", [0, 7, 0], dtype=pl.UInt16)
    z = pl.Series("z", [0, 0.3, 0.1], dtype=pl.Float32)
    # numpy stacks a sequence of columns with pairwise promotion: int16, uint16 -> int32, then
    # with float32 -> float64 (np.stack's result_type would say float32).
    expected, _ = np.histogramdd((x.to_numpy(), y.to_numpy(), z.to_numpy()), bins=[1, 1, 3])
    assert expected.ravel().tolist() == [2, 0, 1]
    out = gh.histogramdd(x, y, z, bins=[1, 1, 3], device="cpu")
    assert out["count"].to_list() == expected.ravel().astype(int).tolist()


def test_a_nan_in_one_column_does_not_change_another_columns_range() -> None:
    x = pl.Series("x", [np.nan, 0.5, 0.7])
    y = pl.Series("y", [0.0, 5.0, 10.0])
    out = gh.histogramdd(x, y, bins=[[0, 1], 2], device="cpu")
    assert out["y_start"].to_list() == [0.0, 5.0]
    assert out["count"].to_list() == [0, 2]


def test_a_range_of_numpy_float32_scalars_makes_float32_edges() -> None:
    x = np.random.default_rng(2).random(1000)
    r = (np.float32(0.1), np.float32(0.7))
    expected, edges = np.histogram(x, 7, range=r)
    out = gh.histogram(x, 7, range=r, device="cpu")
    assert out["count"].to_list() == expected.tolist()
    assert out["bin_start"].to_list() == edges[:-1].tolist()


# ---- 4f. weights: the deliberate differences from numpy (README table), each pinned ----

X3 = np.array([0.5, 1.5, 2.5])


def _weighted(x: np.ndarray, bins: object, w: np.ndarray, **kwargs: object) -> list[float]:
    return gh.histogram(x, bins, weights=w, device="cpu", **kwargs)["count"].to_list()


@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_a_nan_weight_stays_in_its_own_bin() -> None:
    w = np.array([np.nan, 1.0, 1.0])
    # numpy's explicit edges sum by cumulative sums, which carry the NaN into every later bin;
    # its equal bins (bincount) keep it in its own bin, as we do with either.
    assert np.isnan(np.histogram(X3, [0, 1, 2, 3], weights=w)[0]).all()
    np.testing.assert_array_equal(np.histogram(X3, 3, range=(0, 3), weights=w)[0], [np.nan, 1, 1])
    for bins, kwargs in (([0, 1, 2, 3], {}), (3, {"range": (0, 3)})):
        np.testing.assert_array_equal(_weighted(X3, bins, w, **kwargs), [np.nan, 1, 1])


@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_infinite_weights_stay_in_their_own_bins() -> None:
    w = np.array([np.inf, -np.inf, 1.0])
    np.testing.assert_array_equal(
        np.histogram(X3, [0, 1, 2, 3], weights=w)[0], [np.inf, np.nan, np.nan]
    )
    np.testing.assert_array_equal(
        np.histogram(X3, 3, range=(0, 3), weights=w)[0], [np.inf, -np.inf, 1]
    )
    for bins, kwargs in (([0, 1, 2, 3], {}), (3, {"range": (0, 3)})):
        np.testing.assert_array_equal(_weighted(X3, bins, w, **kwargs), [np.inf, -np.inf, 1])


def test_narrow_integer_weights_do_not_wrap() -> None:
    x = np.array([0.5, 0.6, 0.7])
    w = np.array([100, 100, 100], dtype=np.int8)
    assert np.histogram(x, [0, 1], weights=w)[0].tolist() == [44]  # int8 sums wrap in numpy
    assert _weighted(x, [0, 1], w) == [300.0]
    assert _weighted(x, 1, w, range=(0, 1)) == [300.0]


def test_float32_weights_sum_in_float64() -> None:
    x = np.array([0.5, 0.6, 0.7])
    w = np.array([1e8, 1, 1], dtype=np.float32)
    assert np.histogram(x, [0, 1], weights=w)[0].tolist() == [1e8]  # float32 sums in numpy
    assert _weighted(x, [0, 1], w) == [100_000_002.0]
    assert _weighted(x, 1, w, range=(0, 1)) == [100_000_002.0]


# ---- 2. by= wherever the expression can be written ----


@pytest.mark.parametrize("engine", ["auto", "in-memory", "streaming"])
def test_by_works_in_lazy_queries_with_every_engine(engine: str) -> None:
    df = pl.DataFrame({"x": [0.1, 0.2, 0.8, 0.9, 0.5], "g": [1, 2, 1, 2, 1]})
    expr = pl.col("x").gpu_hist.histogram(bins=4, range=(0, 1), by="g", device="cpu")
    eager = df.select(expr)
    lazy = df.lazy().select(expr).collect(engine=engine)
    assert lazy.equals(eager)
    assert eager.unnest("x")["g"].to_list() == [1] * 4 + [2] * 4


ENGINES = ["auto", "in-memory", "streaming"]


def _collect(frame: pl.DataFrame, engine: str | None, *exprs: pl.Expr) -> pl.DataFrame:
    if engine is None:
        return frame.select(*exprs)
    return frame.lazy().select(*exprs).collect(engine=engine)  # type: ignore[arg-type]


@pytest.mark.parametrize("engine", [None, *ENGINES])
def test_by_beside_other_aggregations_in_select(engine: str | None) -> None:
    df = pl.DataFrame({"x": [0.1, 0.2, 0.8, 0.9, 0.5], "g": [1, 2, 1, 2, 1]})
    hist = pl.col("x").gpu_hist.histogram(bins=2, range=(0, 1), by="g", device="cpu")
    out = _collect(df, engine, hist, pl.col("x").sum().alias("total"), pl.len().alias("rows"))
    assert out.height == 4
    assert out["total"].to_list() == [pytest.approx(2.5)] * 4
    assert out["rows"].to_list() == [5] * 4
    assert out.unnest("x")["count"].to_list() == [1, 2, 1, 1]


@pytest.mark.parametrize("engine", [None, *ENGINES])
def test_by_over_groups_with_explode(engine: str | None) -> None:
    df = pl.DataFrame(
        {"x": [0.1, 0.2, 0.8, 0.9, 0.5, 0.6], "k": [1, 2, 1, 2, 1, 1], "g": ["a"] * 3 + ["b"] * 3}
    )
    hist = pl.col("x").gpu_hist.histogram(bins=2, range=(0, 1), by="k", device="cpu")
    out = _collect(df, engine, hist.over("g", mapping_strategy="explode")).unnest("x")
    expected = pl.concat([df.filter(pl.col("g") == g).select(hist).unnest("x") for g in ["a", "b"]])
    assert out.columns == ["k", "bin_start", "bin_end", "count"]
    assert out.sort("k", "bin_start").equals(expected.sort("k", "bin_start"))
    # And per group in agg: each group's histogram, the key named as in the query.
    agg = df.group_by("g", maintain_order=True).agg(hist).explode("x").unnest("x")
    assert agg.drop("g").equals(expected)


@pytest.mark.parametrize("engine", [None, *ENGINES])
def test_a_histogram_cannot_sit_beside_the_frame_in_with_columns_as_polars_hist(
    engine: str | None,
) -> None:
    # A histogram has its own length (groups x bins), so, as with Polars' own `hist`, it fits
    # in with_columns only where that length happens to equal the frame's: Polars raises a
    # ShapeError otherwise (README: use select, or group_by().agg()).
    df = pl.DataFrame({"x": [0.1, 0.2, 0.8, 0.9, 0.5], "g": [1, 2, 1, 2, 1]})
    ours = pl.col("x").gpu_hist.histogram(bins=2, range=(0, 1), by="g", device="cpu")
    polars = pl.col("x").hist(bin_count=3)

    def with_columns(expr: pl.Expr) -> pl.DataFrame:
        if engine is None:
            return df.with_columns(expr.alias("h"))
        return df.lazy().with_columns(expr.alias("h")).collect(engine=engine)  # type: ignore[arg-type]

    for expr in (ours, polars):
        with pytest.raises(pl.exceptions.ShapeError):
            with_columns(expr)
    # Lengths that agree (4 rows: 2 groups x 2 bins) are accepted by both.
    df = df.head(4)
    assert with_columns(ours).height == 4
    assert df.with_columns(pl.col("x").hist(bin_count=4).alias("h")).height == 4


def test_by_with_categorical_keys_keeps_their_dtype_lazily() -> None:
    df = pl.DataFrame({"x": [0.1, 0.9, 0.5], "g": pl.Series(["b", "a", "b"], dtype=pl.Categorical)})
    out = df.lazy().select(pl.col("x").gpu_hist.histogram(2, range=(0, 1), by="g")).collect()
    key = out.unnest("x")["g"]
    assert key.dtype == pl.Categorical
    assert key.to_list() == ["b", "b", "a", "a"]


def test_by_on_a_float_key_is_refused() -> None:
    df = pl.DataFrame({"x": [0.1], "g": [1.5]})
    with pytest.raises(pl.exceptions.PolarsError, match="round or cast"):
        df.select(pl.col("x").gpu_hist.histogram(2, range=(0, 1), by="g"))


# ---- 7. arguments checked where they are written ----


@pytest.mark.parametrize(
    ("kwargs", "error", "names"),
    [
        ({"device": "tpu"}, ValueError, "device"),
        ({"closed": "both"}, ValueError, "closed"),
        ({"kernel": "fast"}, ValueError, "kernel"),
        ({"bins": 2**63}, ValueError, "bins"),
        ({"density": "no"}, TypeError, "density"),
        ({"bins": {"a": 1}}, TypeError, "bins"),
        ({"bins": {1.0, 2.0}}, TypeError, "bins"),
        ({"bins": ["0", "1"]}, TypeError, "edge"),
        ({"bins": "many"}, ValueError, "bins"),
        ({"range": "auto"}, TypeError, "range"),
        ({"range": (0, 1, 2)}, TypeError, "range"),
        ({"range": (1, 0)}, ValueError, r"`range` must have min <= max.*swap"),
        ({"range": (0, float("nan"))}, ValueError, r"`range` must be finite"),
        ({"range": (float("-inf"), 0)}, ValueError, r"`range` must be finite"),
        ({"range": (dt.date(2024, 2, 1), dt.date(2024, 1, 1))}, ValueError, "min <= max"),
        ({"bins": [2, 1]}, ValueError, r"`bins` edges must increase strictly.*sort"),
        ({"bins": [0, 1, 1]}, ValueError, "increase strictly"),
        ({"bins": [0, float("nan")]}, ValueError, r"`bins` edges must be numbers.*NaN"),
        ({"bins": [1.0]}, ValueError, "at least two edges"),
    ],
)
def test_bad_arguments_raise_when_the_expression_is_built(kwargs, error, names) -> None:
    kwargs = {"bins": 4, **kwargs}
    with pytest.raises(error, match=names):
        pl.col("x").gpu_hist.histogram(**kwargs)


def test_histogramdd_without_columns_fails_at_the_call() -> None:
    with pytest.raises(ValueError, match="2 to 8 columns"):
        gh.histogramdd()
    with pytest.raises(ValueError, match="2 to 8 columns, got 1: use histogram"):
        gh.histogramdd("x")
    with pytest.raises(ValueError, match="2 to 8 columns"):
        gh.histogramdd(*[f"x{i}" for i in range(9)])
    with pytest.raises(ValueError, match="min <= max"):
        gh.histogramdd("x", "y", range=[(1, 0), None])
    with pytest.raises(ValueError, match="increase strictly"):
        gh.histogramdd("x", "y", bins=[[0, 2, 1], 3])
    with pytest.raises(ValueError, match="min <= max"):
        gh.Histogram(4, range=(1, 0))


def test_the_plugin_checks_arguments_too() -> None:
    # Rust callers (and kwargs made by hand) are checked where the plugin runs.
    from polars.plugins import register_plugin_function

    df = pl.DataFrame({"x": [0.5]})
    for bins, rng, match in (
        ([2.0, 1.0], None, "increase strictly"),
        (4, (1.0, 0.0), "min <= max"),
    ):
        kwargs = {"bins": bins, "range": rng, "device": "cpu"}
        expr = register_plugin_function(
            plugin_path=_native.PLUGIN_PATH,
            function_name="histogram",
            args=[pl.col("x")],
            kwargs=kwargs,
            is_elementwise=False,
            changes_length=True,
        )
        with pytest.raises(pl.exceptions.PolarsError, match=match):
            df.select(expr)


# ---- 8. temporal columns ----


def test_a_time_zone_aware_datetime_keeps_its_zone() -> None:
    tz = "America/New_York"
    s = pl.Series(
        "t", [dt.datetime(2024, 1, 1, 12), dt.datetime(2024, 1, 2, 12)]
    ).dt.replace_time_zone(tz)
    df = pl.DataFrame({"t": s})
    lazy = df.lazy().select(pl.col("t").gpu_hist.histogram(2, device="cpu"))
    out = lazy.collect().unnest("t")
    assert out["bin_start"].dtype == pl.Datetime("us", tz)
    assert lazy.collect_schema()["t"] == pl.Struct(
        {"bin_start": pl.Datetime("us", tz), "bin_end": pl.Datetime("us", tz), "count": pl.UInt64}
    )
    assert out["bin_start"][0] == s[0]


def test_temporal_ranges_and_edges_convert_exactly_to_the_column_unit() -> None:
    days = pl.Series("d", [dt.date(2024, 1, 1), dt.date(2024, 1, 10), dt.date(2024, 2, 1)])
    out = gh.histogram(days, 2, range=(dt.date(2024, 1, 1), dt.date(2024, 2, 2)), device="cpu")
    assert out["bin_start"][0] == dt.date(2024, 1, 1)
    assert out["count"].to_list() == [2, 1]
    ts = pl.Series("t", [dt.datetime(2024, 1, 1, 0, 0, 1), dt.datetime(2024, 1, 1, 0, 0, 3)])
    for unit in ["ns", "us", "ms"]:
        t = ts.cast(pl.Datetime(unit))
        edges = [
            dt.datetime(2024, 1, 1),
            np.datetime64("2024-01-01T00:00:02"),
            dt.datetime(2024, 1, 1, 0, 0, 4),
        ]
        out = gh.histogram(t, edges, device="cpu")
        assert out["count"].to_list() == [1, 1], unit
        assert out["bin_end"][0] == dt.datetime(2024, 1, 1, 0, 0, 2)
    dur = pl.Series("w", [dt.timedelta(minutes=1), dt.timedelta(minutes=5)])
    out = gh.histogram(
        dur, [dt.timedelta(0), dt.timedelta(minutes=2), np.timedelta64(10, "m")], device="cpu"
    )
    assert out["count"].to_list() == [1, 1]


def test_aware_edges_for_an_aware_column_and_mismatches_refused() -> None:
    tz = dt.timezone.utc
    t = pl.Series("t", [dt.datetime(2024, 1, 1, 1)]).dt.replace_time_zone("UTC")
    out = gh.histogram(
        t, [dt.datetime(2024, 1, 1, tzinfo=tz), dt.datetime(2024, 1, 2, tzinfo=tz)], device="cpu"
    )
    assert out["count"].to_list() == [1]
    with pytest.raises(pl.exceptions.PolarsError, match="aware"):
        gh.histogram(t, [dt.datetime(2024, 1, 1), dt.datetime(2024, 1, 2)], device="cpu")
    with pytest.raises(pl.exceptions.PolarsError, match=r"duration|Duration"):
        gh.histogram(pl.Series([1.0]), [dt.timedelta(0), dt.timedelta(1)], device="cpu")


# ---- 5. the accumulator ----


def test_merging_past_two_to_the_64_raises_overflow() -> None:
    big = gh.Histogram([0, 1])
    big._core = gh._internal.Histogram.from_bytes(_state_with_count(2**63 - 1))
    with pytest.raises(OverflowError):
        big + big + big


def _state_with_count(count: int) -> bytes:
    h = gh.Histogram([0, 1])
    state = pickle.loads(h._core.to_bytes())
    state["counts"] = np.array([count], dtype="<u8").tobytes()
    return pickle.dumps(state, protocol=5)


def test_counts_of_2_to_the_63_and_more_round_trip() -> None:
    h = gh.Histogram([0, 1])
    h._core = gh._internal.Histogram.from_bytes(_state_with_count(2**64 - 2))
    back = pickle.loads(pickle.dumps(h))
    assert back.counts.tolist() == [2**64 - 2]


def test_a_hostile_state_is_refused_before_allocating() -> None:
    h = gh.Histogram(4, range=(0, 1))
    state = pickle.loads(h._core.to_bytes())
    state["axes"][0]["bins"] = 2**40
    with pytest.raises(ValueError):
        gh._internal.Histogram.from_bytes(pickle.dumps(state, protocol=5))


def test_sixteen_threads_fill_one_histogram() -> None:
    h = gh.Histogram(10, range=(0, 1))
    data = [np.random.default_rng(i).random(20_000) for i in range(16)]
    errors: list[BaseException] = []

    def fill(x: np.ndarray) -> None:
        try:
            for part in np.array_split(x, 4):
                h.fill(part)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=fill, args=(x,)) for x in data]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    expected, _ = np.histogram(np.concatenate(data), 10, range=(0, 1))
    assert h.counts.tolist() == expected.tolist()
