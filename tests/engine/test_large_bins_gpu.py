"""Large bin counts: the spill family (16-bit counters that spill as they wrap), the batched
count pass of the segmented family, and the extremes kernel's 16-byte reads, each against numpy
on CPU-computed references (run on a machine with a GPU: -m gpu)."""

from __future__ import annotations

import zlib

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh
import polars_gpu_hist.numpy as ghnp

cp = pytest.importorskip("cupy")

INF = np.inf


def rng_for(*key: object) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def counts(x: np.ndarray, bins, kernel: str, **kw) -> np.ndarray:
    return gh.histogram(cp.asarray(x), bins, kernel=kernel, **kw)["count"].to_numpy()


def strays(x: np.ndarray) -> np.ndarray:
    """x with NaN, +-inf, values past both ends of [0, 1) and on its edges, every few rows."""
    x = x.copy()
    x[::11] = np.nan
    x[1::13] = INF
    x[2::17] = -INF
    x[3::19] = 1.5
    x[4::23] = -0.5
    x[5::29] = 1.0
    x[6::31] = 0.0
    return x


# ---- spill: 16-bit counters, a counter that wraps moves 65,536 to global memory ----


@pytest.mark.parametrize("bins", [65_535, 65_536, 100_001])
@pytest.mark.parametrize(
    "data", ["both halves of a word hot", "alternating neighbours", "one value", "strays"]
)
def test_spill_counters_wrap_exactly(bins: int, data: str) -> None:
    # Far more rows of a bin per block than 0xFFFF: a word's low counter wraps (carrying into
    # its neighbour, taken back), its high counter wraps off the word, both at once; an odd bin
    # count leaves the last word's high half as padding.
    rng = rng_for("spill", bins, data)
    n = (1 << 25) + 5
    x = rng.random(n, dtype=np.float32)
    width = np.float32(1.0 / bins)
    if data == "both halves of a word hot":
        x[::2] = np.float32(0.5) * width  # bin 0
        x[1::3] = np.float32(1.5) * width  # bin 1, the same word's high half
        x[2::5] = np.float32(1.0) - width / 2  # the last bin (the padded word when odd)
    elif data == "alternating neighbours":
        # Runs of one row: every add is its own atomic, low and high halves interleaved.
        x[: n // 4 * 4 : 2] = np.float32(2.5) * width
        x[1 : n // 4 * 4 : 2] = np.float32(3.5) * width
    elif data == "one value":
        x[:] = np.float32(0.5) * width
    else:
        x = strays(x.astype(np.float64)).astype(np.float32)
    x = x[3:]  # an unaligned start
    expected, _ = np.histogram(x, bins=bins, range=(0, 1))
    np.testing.assert_array_equal(counts(x, bins, "spill", range=(0, 1)), expected)
    np.testing.assert_array_equal(counts(x, bins, "packed", range=(0, 1)), expected)


def test_spill_is_a_pin_away_where_16_bit_counters_fit_and_takes_both_closed_sides() -> None:
    # Rows binned one by one take packed (faster on an H100 at 65,536 bins), spill by a pin.
    x = strays(rng_for("closed").random(1 << 22))
    assert "count_packed_float64" in gh.explain(cp.asarray(x), 65_536)
    assert "count_spill_float64" in gh.explain(cp.asarray(x), 65_536, kernel="spill")
    for closed in ["left", "right"]:
        want = gh.histogram(x, 65_536, range=(0, 1), closed=closed, device="cpu")["count"]
        got = counts(x, 65_536, "spill", range=(0, 1), closed=closed)
        np.testing.assert_array_equal(got, want.to_numpy())
    edges = np.unique(np.concatenate([[-INF, INF], np.sort(rng_for("e").random(70_000))]))
    want = gh.histogram(x, edges, device="cpu")["count"].to_numpy()
    np.testing.assert_array_equal(counts(x, edges, "spill"), want)
    np.testing.assert_array_equal(want, np.histogram(x, edges)[0])


@pytest.mark.parametrize("dtype", [np.uint16, np.int16])
def test_spill_counts_16_bit_values_at_their_extremes(dtype) -> None:
    info = np.iinfo(dtype)
    rng = rng_for("by value", np.dtype(dtype).name)
    x = rng.integers(info.min, info.max, (1 << 24) + 3, endpoint=True, dtype=dtype)
    x[::5] = info.min
    x[1::7] = info.max
    x[2::3] = info.min + 1
    lo, hi = int(info.min), int(info.max) + 1
    for bins, range_ in [(hi - lo, (lo, hi)), (40_000, (lo + 7, hi - 1000)), (70_001, None)]:
        expected, _ = np.histogram(x, bins=bins, range=range_)
        for kernel in ["auto", "spill"]:
            got = counts(x, bins, kernel, range=range_)
            np.testing.assert_array_equal(got, expected)


def test_spill_refuses_weights_where_they_are_written() -> None:
    x = cp.arange(1000, dtype=cp.float32)
    with pytest.warns(DeprecationWarning, match="spill"):
        with pytest.raises(ValueError, match="weighted sums"):
            gh.histogram(x, 64, weights=cp.ones(1000, dtype=cp.float64), kernel="spill")
    with pytest.raises(ValueError, match="weighted sums"):
        gh.histogram(x, 64, weights=cp.ones(1000, dtype=cp.float64), kernel="batched")
    # A block's shared memory is the device's: found when the call runs, Polars' ComputeError
    # from the package's Polars API (docs/semantics.md).
    with pytest.warns(DeprecationWarning, match="spill"):
        with pytest.raises(pl.exceptions.ComputeError, match="spill kernel cannot hold"):
            gh.histogram(x, 1 << 20, kernel="spill")


# ---- batched: the segmented family's count pass, a warp reading 32 tiles at once ----


@pytest.mark.parametrize("bins", [1 << 20, 1 << 22, (1 << 24) + 3])
@pytest.mark.parametrize("dist", ["uniform", "normal", "sorted", "strays"])
def test_batched_long_and_short_runs(bins: int, dist: str) -> None:
    # 1M bins: 512 keys a tile and partition (the warp's runs); 4M: 128 (a lane's); 16M: 32;
    # normal data mixes both in one batch of 32 tiles, sorted data leaves most runs empty.
    rng = rng_for("batched", bins, dist)
    n = (1 << 25) + 9
    x = {
        "uniform": lambda: rng.random(n),
        "normal": lambda: rng.normal(0.5, 0.05, n),
        "sorted": lambda: np.sort(rng.random(n)),
        "strays": lambda: strays(rng.random(n)),
    }[dist]()
    x = x[1:]
    expected, _ = np.histogram(x, bins=bins, range=(0, 1))
    np.testing.assert_array_equal(counts(x, bins, "batched", range=(0, 1)), expected)
    if dist == "strays":
        want = gh.histogram(x, bins, range=(0, 1), closed="right", device="cpu")["count"]
        got = counts(x, bins, "batched", range=(0, 1), closed="right")
        np.testing.assert_array_equal(got, want.to_numpy())


@pytest.mark.parametrize(
    "pattern", ["hot", "two alternating", "three cycling", "hot with pairs of strays", "sorted"]
)
def test_global_runs_taken_up_again_count_every_row(pattern: str) -> None:
    """The global family's two runs (a run that a row of another bin interrupted is taken up
    again): one hot value among spread ones, values alternating or cycling (a third bin adds the
    interrupted run), sorted rows; pinned, and as the plan picks after its sample of runs."""
    n = (1 << 20) + 5
    rng = rng_for("runs", pattern)
    spread = rng.random(n, dtype=np.float32)
    i = np.arange(n)
    x = {
        "hot": np.where(rng.random(n) < 0.97, np.float32(0.3), spread),
        "two alternating": np.where(i % 2 == 0, np.float32(0.1), np.float32(0.9)),
        "three cycling": np.array([0.1, 0.5, 0.9], np.float32)[i % 3],
        "hot with pairs of strays": np.where(i % 7 < 5, np.float32(0.3), spread),
        "sorted": np.sort(spread),
    }[pattern]
    x = strays(x)
    for bins in [1 << 20, 1 << 21]:
        want, _ = np.histogram(x, bins, range=(0, 1))
        np.testing.assert_array_equal(counts(x, bins, "global", range=(0, 1)), want)
        got, _ = ghnp.histogram(cp.asarray(x), bins, range=(0, 1))
        np.testing.assert_array_equal(cp.asnumpy(got), want)


def test_a_partition_family_is_chosen_past_16_bit_counters_and_counts_2d_cells() -> None:
    # Which partition family the plan takes is its tuning's (radix on sm_90, batched elsewhere:
    # src/gpu/plan.rs; test_families_gpu.py pins each by a tuning); explain says why, in the
    # words of the family it names.
    rng = rng_for("2d")
    xy = rng.random((1 << 22, 2)).astype(np.float32)
    xy[::7] = np.float32(0.25)
    xy[1::11, 0] = np.nan
    xy[2::13, 1] = 2.0
    xy[3::17, 0] = -INF
    text = gh.explain(cp.asarray(xy[:, 0]), 1 << 20)
    assert "exceed one block's shared memory even as 16-bit counters" in text
    how = {
        "radix": "each tile's rows grouped by the high bits of their bins",
        "batched": "a warp counting 32 tiles at once",
    }
    chosen = [f for f in how if f"count_{f}_float32" in text]
    assert len(chosen) == 1 and how[chosen[0]] in text, text
    expected, _ = np.histogramdd(xy, bins=1024, range=[(0, 1), (0, 1)])
    for kernel in ["auto", "batched", "radix", "segmented"]:
        got = gh.histogramdd(cp.asarray(xy), bins=1024, range=[(0, 1), (0, 1)], kernel=kernel)
        np.testing.assert_array_equal(got["count"].to_numpy(), expected.ravel())


# ---- extremes: a device column's range, read 16 bytes a thread ----


DTYPES = [np.uint8, np.int8, np.uint16, np.int16, np.int32, np.uint64, np.float32, np.float64]


@pytest.mark.parametrize("dtype", DTYPES, ids=[np.dtype(d).name for d in DTYPES])
def test_extremes_at_every_alignment_and_length(dtype) -> None:
    rng = rng_for("extremes", np.dtype(dtype).name)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        base = rng.integers(info.min, info.max, 1 << 20, endpoint=True, dtype=dtype)
    else:
        base = rng.normal(0, 1e3, 1 << 20).astype(dtype)
        base[::3] = np.nan
    device = cp.asarray(base)
    for start in range(17):
        for length in [1, 2, 15, 16, 17, 33, 1000, (1 << 20) - start]:
            x = base[start : start + length]
            if np.issubdtype(dtype, np.floating) and np.isnan(x).all():
                continue
            # The extremes sit in the unaligned head, the tail, and the body in turn.
            try:
                expected, edges = np.histogram(x[~np.isnan(x)] if x.dtype.kind == "f" else x, 10)
            except ValueError:
                # numpy refuses (uint64 extremes whose float64 range has no 10 finite bins):
                # so does the drop-in.
                with pytest.raises(ValueError):
                    ghnp.histogram(device[start : start + length], 10)
                continue
            got, got_edges = ghnp.histogram(device[start : start + length], 10)
            np.testing.assert_array_equal(got_edges.get(), edges)
            np.testing.assert_array_equal(got.get(), expected)
    # A strided view of device memory is refused with the fix (run on an H100: the numpy
    # module reads contiguous device arrays only).
    with pytest.raises(ValueError, match="contiguous"):
        ghnp.histogram(device[5::3], 10)


def test_uint8_range_from_data_of_a_gibibyte() -> None:
    x = cp.zeros(1 << 30, dtype=cp.uint8)
    x[12_345] = 7
    x[-3] = 200
    got, edges = ghnp.histogram(x[1:], 256)
    assert float(edges[0]) == 0.0 and float(edges[-1]) == 200.0
    assert int(got.sum()) == (1 << 30) - 1
    frame = gh.histogram(pl.Series(x[1:].get()), 256, device="gpu")
    np.testing.assert_array_equal(frame["count"].to_numpy(), got.get())
