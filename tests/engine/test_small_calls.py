"""The small call's shortcuts never change an answer: kwargs checked and pickled
once per combination, numpy's raw buffers beside its frame, `auto` counting small host columns
on the calling thread, and the benchmarks' floors returning the shapes they stand for."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import polars_gpu_hist as gh
import polars_gpu_hist.numpy as ghnp
from polars_gpu_hist import _internal
from polars_gpu_hist import numpy as numpy_module
from polars_gpu_hist._args import arguments as _args
from polars_gpu_hist._args.plain_kwargs import plain_histogram_kwargs
from polars_gpu_hist._expr.polars_hist import _bench_floor_expr, _bench_floor_struct_expr

PLAIN = [
    (bins, density, closed, flow, device, kernel)
    for bins in (1, 10, 1000)
    for density in (False, True)
    for closed in ("left", "right")
    for flow in (False, True)
    for device, kernel in (("auto", "auto"), ("cpu", "auto"), ("gpu", "shared"))
    if not (density and flow)
]


@pytest.mark.parametrize("args", PLAIN)
def test_cached_kwargs_are_the_checked_ones(args: tuple[int, bool, str, bool, str, str]) -> None:
    bins, density, closed, flow, device, kernel = args
    cached = plain_histogram_kwargs(bins, None, density, closed, flow, device, kernel)
    assert cached is not None
    checked = _args.histogram_kwargs(
        bins, None, density=density, closed=closed, flow=flow, device=device, kernel=kernel
    )
    assert pickle.loads(cached) == checked


@pytest.mark.parametrize(
    "bins",
    [True, np.int64(10), 10.0, "auto", [0.0, 1.0]],
)
def test_other_types_are_not_cached(bins: object) -> None:
    # `True == 1` and `np.int64(10) == 10`: a cache keyed on values alone would mix them.
    assert plain_histogram_kwargs(bins, None, False, "left", False, "auto", "auto") is None


def test_other_flags_are_not_cached() -> None:
    plain = plain_histogram_kwargs
    assert plain(10, None, np.bool_(False), "left", False, "auto", "auto") is None
    assert plain(10, None, False, "left", 0, "auto", "auto") is None


@pytest.mark.parametrize(
    "range_",
    [
        (np.float32(0), 1.0),
        (np.float64(0), 1.0),
        (True, 2),
        (0, 1, 2),
        (0,),
        "01",
        np.array([0, 1]),
    ],
)
def test_a_range_of_other_types_is_not_cached(range_: object) -> None:
    # numpy scalars decide the edges' precision; `True == 1`.
    assert plain_histogram_kwargs(10, range_, False, "left", False, "auto", "auto") is None


PLAIN_NUMBER = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 0.0, -0.0, 1, 1.0]),
)


def outcome(make: Any) -> bytes | tuple[type, str]:
    try:
        return make()
    except Exception as e:  # the comparison is the point: errors must match too
        return type(e), str(e)


@given(
    lo=PLAIN_NUMBER,
    hi=PLAIN_NUMBER,
    as_list=st.booleans(),
    closed=st.sampled_from(["left", "right"]),
)
def test_a_cached_range_gives_the_checked_kwargs_bytes_for_bytes(
    lo: float, hi: float, as_list: bool, closed: str
) -> None:
    # Bytes, not values: 0.0 == -0.0 and 1 == 1.0, but their pickles (and edges) differ.
    range_ = [lo, hi] if as_list else (lo, hi)
    for _ in range(2):  # the second call is the cache's
        cached = outcome(
            lambda: plain_histogram_kwargs(10, range_, False, closed, False, "cpu", "auto")
        )
        checked = outcome(
            lambda: pickle.dumps(
                _args.histogram_kwargs(
                    10,
                    range_,
                    density=False,
                    closed=closed,
                    flow=False,
                    device="cpu",
                    kernel="auto",
                ),
                protocol=5,
            )
        )
        assert cached == checked


def test_zeros_of_both_signs_and_ints_and_floats_are_kept_apart() -> None:
    plain = plain_histogram_kwargs
    ranges = [(0.0, 1.0), (-0.0, 1.0), (0, 1), (0, 1.0)]
    pickles = [plain(4, r, False, "left", False, "cpu", "auto") for r in ranges * 2]
    assert len(set(pickles[:4])) == 4 and pickles[:4] == pickles[4:]
    # numpy keeps the sign of a zero `stop` in the last edge.
    values = [-1.0, -0.5, -0.0, 0.0]
    df = pl.DataFrame({"x": values})
    for r in [(-1.0, 0.0), (-1.0, -0.0), (-1.0, 0.0)]:
        ends = df.select(pl.col("x").gpu_hist.histogram(4, range=r, device="cpu")).unnest("x")
        expected = np.histogram(values, 4, range=r)[1]
        assert np.signbit(ends["bin_end"][-1]) == np.signbit(expected[-1]) == np.signbit(r[1])


def test_a_refused_combination_raises_every_time() -> None:
    for _ in range(2):
        with pytest.raises(ValueError, match="positive integer"):
            pl.col("x").gpu_hist.histogram(bins=0)
        with pytest.raises(ValueError, match="kernel"):
            pl.col("x").gpu_hist.histogram(bins=4, device="cpu", kernel="shared")
    with pytest.raises(TypeError):
        pl.col("x").gpu_hist.histogram(bins=True)


@pytest.mark.parametrize("args", [a for a in PLAIN if a[4] != "gpu"])
def test_cached_and_checked_expressions_agree(args: tuple[int, bool, str, bool, str, str]) -> None:
    bins, density, closed, flow, device, _ = args
    df = pl.DataFrame({"x": np.random.default_rng(bins).normal(size=500)})
    kw = {"density": density, "closed": closed, "flow": flow, "device": device}
    cached = df.select(pl.col("x").gpu_hist.histogram(bins=bins, **kw))
    # A numpy integer takes the checked path.
    checked = df.select(pl.col("x").gpu_hist.histogram(bins=np.int64(bins), **kw))
    assert cached.equals(checked)
    assert cached.schema == checked.schema


def test_hist_labels_follow_the_config_in_force() -> None:
    df = pl.DataFrame({"x": [0.123456, 1.5, 2.75]})
    expected = df.select(pl.col("x").hist(bin_count=2, include_category=True))
    assert df.select(pl.col("x").gpu_hist.hist(bin_count=2, include_category=True)).equals(expected)
    with pl.Config(float_precision=2):
        expected = df.select(pl.col("x").hist(bin_count=2, include_category=True))
        ours = df.select(pl.col("x").gpu_hist.hist(bin_count=2, include_category=True))
        assert ours.equals(expected)
    for breakpoint in (False, True, False):
        expected = df.select(pl.col("x").hist(bin_count=2, include_breakpoint=breakpoint))
        ours = df.select(pl.col("x").gpu_hist.hist(bin_count=2, include_breakpoint=breakpoint))
        assert ours.equals(expected)


def _frame_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """numpy.histogram without its raw buffers: the frame's path."""
    monkeypatch.setattr(numpy_module, "_numeric_histogram", lambda *args: None)


NUMERIC_DTYPES = st.sampled_from(
    [np.float64, np.float32, np.float16, np.int64, np.int8, np.uint8, np.uint64, np.bool_]
)


@pytest.mark.filterwarnings("ignore:Converting input from bool:RuntimeWarning")
@given(
    a=NUMERIC_DTYPES.flatmap(lambda d: hnp.arrays(d, st.integers(0, 300))),
    bins=st.one_of(st.integers(1, 70), st.sampled_from(["auto", "sturges", [0, 1, 2.5, 7]])),
    density=st.booleans(),
    weighted=st.sampled_from([None, "int", "float"]),
)
def test_raw_buffers_and_the_frame_agree(
    a: np.ndarray, bins: object, density: bool, weighted: str | None
) -> None:
    weights = None
    if weighted is not None:
        weights = np.arange(a.size, dtype=np.int64 if weighted == "int" else np.float64)
        if isinstance(bins, str):
            return  # numpy's estimators take no weights
    with pytest.MonkeyPatch.context() as mp:
        try:
            fast = ghnp.histogram(a, bins, density=density, weights=weights)
        except Exception as e:  # the same refusal both ways
            _frame_path(mp)
            with pytest.raises(type(e)):
                ghnp.histogram(a, bins, density=density, weights=weights)
            return
        _frame_path(mp)
        framed = ghnp.histogram(a, bins, density=density, weights=weights)
    for got, want in zip(fast, framed):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        assert got.flags.writeable


def test_numpy_small_arrays_equal_numpy() -> None:
    rng = np.random.default_rng(3)
    for a in (rng.normal(size=100), rng.integers(-5, 5, 100), rng.random(100).astype(np.float32)):
        for bins in (1, 10, 64, [-1, 0, 0.5, 3]):
            counts, edges = ghnp.histogram(a, bins)
            want_counts, want_edges = np.histogram(a, bins)
            np.testing.assert_array_equal(counts, want_counts)
            np.testing.assert_array_equal(edges, want_edges)
            assert counts.dtype == want_counts.dtype and edges.dtype == want_edges.dtype


def test_auto_counts_small_host_columns_on_the_calling_thread() -> None:
    small = gh.explain(pl.Series("x", np.zeros(100)), 10)
    assert "fewer than 4096 rows: counted on the calling thread" in small
    large = gh.explain(pl.Series("x", np.zeros(10_000)), 10)
    assert "calling thread" not in large
    assert "calling thread" not in gh.explain(pl.Series("x", np.zeros(100)), 10, device="cpu")


def test_floors_return_the_shapes_they_stand_for() -> None:
    df = pl.DataFrame({"x": np.arange(100.0)})
    struct = df.select(_bench_floor_struct_expr(pl.col("x"), 10))
    ours = df.select(pl.col("x").gpu_hist.histogram(bins=10))
    assert struct.schema == ours.schema and struct.height == ours.height
    assert df.select(_bench_floor_expr(pl.col("x"))).item() == 100
    both = {"include_category": True, "include_breakpoint": True}
    hist_shape = df.select(_bench_floor_struct_expr(pl.col("x"), 20, hist=True))
    hist = df.select(pl.col("x").gpu_hist.hist(bin_count=20, **both))
    polars = df.select(pl.col("x").hist(bin_count=20, **both))
    assert hist_shape.schema == hist.schema == polars.schema
    assert hist_shape.height == hist.height
    agg = pl.DataFrame({"g": [1, 1, 2], "x": [0.0, 1.0, 2.0]}).group_by("g", maintain_order=True)
    assert agg.agg(_bench_floor_struct_expr(pl.col("x"), 16))["x"].list.len().to_list() == [16, 16]


def test_the_timing_hook_counts() -> None:
    s = pl.Series("x", np.arange(100.0))
    options = pickle.dumps(
        _args.histogram_kwargs(
            10, None, density=False, closed="left", flow=False, device="auto", kernel="auto"
        ),
        protocol=5,
    )
    assert _internal._time_histogram(s, options, 10) > 0.0
