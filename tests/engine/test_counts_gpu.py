"""GPU counts identical to numpy and to the CPU backend (run on a machine with a GPU: -m gpu)."""

from __future__ import annotations

import threading
import zlib

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings

import polars_gpu_hist as gh
from support.dtypes import NUMERIC
from support.strategies import Case, NdCase, by_cases, cases, nd_cases, numpy_histogram

cp = pytest.importorskip("cupy")

# Every family counts rows and n-D cells; weighted sums take the first two only.
KERNELS = ["shared", "global"]
COUNTING_KERNELS = [*KERNELS, "packed", "spill", "segmented", "batched", "radix"]
# Families of few bins only (a copy of the counters a lane, or 8-bit counters a thread).
FEW_BIN_KERNELS = ["banked", "private"]
DTYPES = list(NUMERIC.values())


def device_counts(x: np.ndarray, bins, **kw) -> np.ndarray:
    return gh.histogram(cp.asarray(x), bins, **kw)["count"].to_numpy()


def sample(dtype: np.dtype, dist: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if np.issubdtype(dtype, np.floating):
        x = {
            "uniform": lambda: rng.random(n),
            "normal": lambda: rng.normal(0.5, 0.1, n),
            "degenerate": lambda: np.full(n, 0.3),
        }[dist]()
        return x.astype(dtype)
    info = np.iinfo(dtype)
    lo, hi = max(int(info.min), -(10**6)), min(int(info.max), 10**6)
    x = {
        "uniform": lambda: rng.integers(lo, hi, n, endpoint=True),
        "normal": lambda: np.clip(rng.normal(0, (hi - lo) / 8, n), lo, hi),
        "degenerate": lambda: np.full(n, (lo + hi) // 3),
    }[dist]()
    return x.astype(dtype)


@pytest.mark.parametrize("kernel", COUNTING_KERNELS)
@pytest.mark.parametrize("dtype", DTYPES, ids=[np.dtype(d).name for d in DTYPES])
@pytest.mark.parametrize("dist", ["uniform", "normal", "degenerate"])
def test_device_arrays_match_numpy(kernel: str, dtype, dist: str) -> None:
    rng = np.random.default_rng(zlib.crc32(f"{kernel}{np.dtype(dtype)}{dist}".encode()))
    x = sample(np.dtype(dtype), dist, 300_001, rng)
    for bins in [1, 7, 256, 4097]:
        expected, edges = np.histogram(x, bins=bins)
        got = gh.histogram(cp.asarray(x), bins, kernel=kernel)
        np.testing.assert_array_equal(got["count"].to_numpy(), expected)
        np.testing.assert_array_equal(got["bin_start"].to_numpy(), edges[:-1].astype(np.float64))
    edges = np.unique(np.quantile(x.astype(np.float64), np.linspace(0, 1, 50)))
    if len(edges) >= 2:
        for closed in ["left", "right"]:
            want = gh.histogram(x, edges, closed=closed, device="cpu")["count"].to_numpy()
            got = device_counts(x, edges, kernel=kernel, closed=closed)
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("bins", [1, 16, 256, 4096, 32_768, 65_536, 1 << 20, 1 << 24])
def test_bin_counts_up_to_16m(bins: int) -> None:
    rng = np.random.default_rng(bins)
    x = rng.random(1 << 22).astype(np.float32)
    x[::97] = np.float32(0.25)  # a hot bin
    expected, _ = np.histogram(x, bins=bins, range=(0.0, 1.0))
    got = device_counts(x, bins, range=(0.0, 1.0))
    np.testing.assert_array_equal(got, expected)
    got = device_counts(x.astype(np.float64), bins, range=(0.0, 1.0), closed="right")
    want = gh.histogram(x.astype(np.float64), bins, range=(0.0, 1.0), closed="right", device="cpu")
    np.testing.assert_array_equal(got, want["count"].to_numpy())


def reference(case: Case) -> np.ndarray | None:
    """numpy's counts, or (where numpy fails or makes NaN edges: spans wider than its
    arithmetic, docs/semantics.md) the CPU backend's, which test_numpy_parity holds to the edges;
    None where both refuse."""
    try:
        with np.errstate(all="ignore"):
            expected, edges = numpy_histogram(case)
        if not np.isnan(edges).any():
            return expected
    except (ValueError, IndexError):
        pass
    frame = pl.DataFrame({"x": case.series, "w": case.weights})
    weights = None if case.weights is None else "w"
    try:
        cpu = frame.select(
            pl.col("x").gpu_hist.histogram(
                case.bins, range=case.range, weights=weights, device="cpu"
            )
        )
    except pl.exceptions.PolarsError:
        return None
    return cpu.unnest("x")["count"].to_numpy()


@settings(max_examples=150, deadline=None)
@given(cases(max_size=2000))
def test_polars_columns_on_gpu_match_numpy(case: Case) -> None:
    expected = reference(case)
    if expected is None:
        return
    frame = pl.DataFrame({"x": case.series})
    for kernel in COUNTING_KERNELS:
        got = frame.select(
            pl.col("x").gpu_hist.histogram(case.bins, range=case.range, device="gpu", kernel=kernel)
        ).unnest("x")
        np.testing.assert_array_equal(got["count"].to_numpy(), expected, strict=False)


@settings(max_examples=60, deadline=None)
@given(cases(weighted=True, max_size=2000))
def test_weighted_polars_columns_on_gpu(case: Case) -> None:
    expected = reference(case)
    if expected is None:
        return
    frame = pl.DataFrame({"x": case.series, "w": case.weights})
    for kernel in KERNELS:
        got = frame.select(
            pl.col("x").gpu_hist.histogram(
                case.bins, range=case.range, weights="w", device="gpu", kernel=kernel
            )
        ).unnest("x")
        if case.exact_weights:  # integer weights: sums are exact in any order
            np.testing.assert_array_equal(got["count"].to_numpy(), expected)
        else:  # float64 atomics add in any order: equal up to rounding
            np.testing.assert_allclose(got["count"].to_numpy(), expected, rtol=1e-9, atol=1e-9)


def test_device_weights_and_density() -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(size=1_000_000)
    w = rng.integers(0, 9, x.size).astype(np.float64)
    for kernel in KERNELS:
        expected, _ = np.histogram(x, bins=300, weights=w)
        got = device_counts(x, 300, weights=cp.asarray(w), kernel=kernel)
        np.testing.assert_array_equal(got, expected)
        expected, _ = np.histogram(x, bins=300, density=True)
        got = device_counts(x, 300, density=True, kernel=kernel)
        np.testing.assert_array_equal(got, expected)


def test_torch_tensors_are_read_in_place() -> None:
    torch = pytest.importorskip("torch")
    t = torch.rand(1 << 20, device="cuda")
    expected, _ = np.histogram(t.cpu().numpy(), bins=64)
    np.testing.assert_array_equal(gh.histogram(t, 64)["count"].to_numpy(), expected)


def test_more_than_2_32_values_count_exactly() -> None:
    n = (1 << 32) + (1 << 20) + 3
    x = cp.ones(n, dtype=cp.uint8)
    x[-5:] = 0
    for kernel in [*COUNTING_KERNELS, *FEW_BIN_KERNELS]:
        got = gh.histogram(x, 2, kernel=kernel)["count"].to_list()
        assert got == [5, n - 5]
    del x
    cp.get_default_memory_pool().free_all_blocks()


@pytest.mark.parametrize("kernel", ["packed", "spill"])
@pytest.mark.parametrize("bins", [2, 4097, 65_536])
def test_packed_counters_spill_exactly(bins: int, kernel: str) -> None:
    # Far more rows of one bin per block than a 16-bit counter holds: every block spills its
    # hot counter many times, while the other bins stay below the threshold.
    rng = np.random.default_rng(bins)
    x = np.full(1 << 25, 0.3, dtype=np.float32)
    x[::3] = rng.random(x[::3].size, dtype=np.float32)
    expected, _ = np.histogram(x, bins=bins, range=(0, 1))
    got = device_counts(x, bins, range=(0, 1), kernel=kernel)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("kernel", ["segmented", "batched"])
@pytest.mark.parametrize("bins", [40_000, 1 << 20, (1 << 24) + 3])
@pytest.mark.parametrize("order", ["shuffled", "sorted", "one value", "nulls and NaN"])
def test_segmented_partitions_hot_sorted_and_sparse(bins: int, order: str, kernel: str) -> None:
    # One hot partition (cut into many items), sorted rows (each partition in a few tiles),
    # and rows that are not counted, against numpy, with an unaligned start.
    rng = np.random.default_rng(bins)
    x = rng.random((1 << 24) + 7)
    if order == "sorted":
        x.sort()
    elif order == "one value":
        x[:] = 0.625
    elif order == "nulls and NaN":
        x[::5] = np.nan
        x[1::7] = 2.0
    x = x[3:]
    expected, _ = np.histogram(x, bins=bins, range=(0, 1))
    got = device_counts(x, bins, range=(0, 1), kernel=kernel)
    np.testing.assert_array_equal(got, expected)
    if order == "nulls and NaN":
        s = pl.Series("x", x).fill_nan(None)
        frame = pl.DataFrame({"x": s}).select(
            pl.col("x").gpu_hist.histogram(bins, range=(0, 1), device="gpu", kernel=kernel)
        )
        np.testing.assert_array_equal(frame.unnest("x")["count"].to_numpy(), expected)


@pytest.mark.parametrize("kernel", ["auto", "segmented", "batched"])
def test_segmented_rows_past_one_launch(kernel: str) -> None:
    # More rows than one segmented launch takes (2^28 to 2^30 by the device's memory): every
    # launch's rows counted once, those at the launches' seams included.
    from polars_gpu_hist import numpy as ghnp

    n = (1 << 30) + 12_345
    x = ((cp.arange(n, dtype=cp.uint32) * cp.uint32(2_654_435_761)) >> 24).astype(cp.uint8)
    x = x[5:]  # an unaligned start
    per_value = cp.bincount(x, minlength=256).get()
    expected = np.zeros(1 << 20, dtype=np.int64)
    expected[:: 1 << 12] = per_value  # value v is bin v * 4096 of 2^20 bins over [0, 256)
    counts, _ = ghnp.histogram(x, 1 << 20, range=(0, 256))
    np.testing.assert_array_equal(counts.get(), expected)
    got = gh.histogram(x, 1 << 20, range=(0, 256), kernel=kernel)["count"].to_numpy()
    np.testing.assert_array_equal(got, expected)


def test_errors_are_clear_and_leave_the_gpu_usable() -> None:
    x = cp.arange(1000, dtype=cp.float32)
    # What the arguments alone decide is refused where the call is written: ValueError.
    with pytest.raises(ValueError, match="weighted sums"):
        gh.histogram(x, 64, weights=cp.ones(1000, dtype=cp.float64), kernel="packed")
    with pytest.raises(ValueError, match="increase strictly"):
        gh.histogram(x, [1.0, 0.0])
    # What the device or the data decide (a block's shared memory, data in GPU memory) is found
    # when the call runs: Polars' ComputeError from the package's Polars API (docs/semantics.md,
    # src/boundary.rs), naming the fix.
    with pytest.raises(pl.exceptions.ComputeError, match="cannot hold 16777216 bins"):
        gh.histogram(x.astype(cp.float64), 1 << 24, kernel="shared")
    with pytest.raises(pl.exceptions.ComputeError, match='`device="cpu"` would copy it'):
        gh.histogram(x, 4, device="cpu")
    assert gh.histogram(x, 4)["count"].to_list() == [250, 250, 250, 250]


def test_concurrent_callers_from_many_threads() -> None:
    # 16 threads x 200 calls, sizes from a few rows to 16 MiB: the staging ring, the device
    # cache and the CPU below the crossover are all shared between callers.
    rng = np.random.default_rng(9)
    sizes = [int(n) for n in rng.integers(1, 300_000, 12)] + [1 << 21, 1 << 22, 3 << 20, 5_000_001]
    frames = [pl.DataFrame({"x": rng.normal(size=n)}) for n in sizes]
    expected = [np.histogram(f["x"].to_numpy(), bins=100)[0] for f in frames]
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for call in range(200):
                device = "gpu" if call % 2 else "auto"
                got = frames[i].select(pl.col("x").gpu_hist.histogram(100, device=device))
                np.testing.assert_array_equal(got.unnest("x")["count"].to_numpy(), expected[i])
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


TRANSFERS = ["pageable", "staged", "registered"]


@pytest.mark.parametrize("transfer", TRANSFERS)
@pytest.mark.parametrize("dtype", DTYPES, ids=[np.dtype(d).name for d in DTYPES])
def test_every_transfer_counts_chunked_columns_with_nulls(
    transfer: str, dtype, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POLARS_GPU_HIST_TRANSFER", transfer)
    rng = np.random.default_rng(zlib.crc32(f"{transfer}{np.dtype(dtype)}".encode()))
    parts = [sample(np.dtype(dtype), "normal", n, rng) for n in (3, 1 << 20, 777_777, 5)]
    s = pl.Series("x", parts[0])
    for p in parts[1:]:
        s.append(pl.Series("x", p))
    s = s.scatter(rng.choice(len(s), 10_000, replace=False), None)
    w = pl.Series("w", rng.integers(0, 4, len(s)).astype(np.float64))
    frame = pl.DataFrame({"x": s, "w": w})
    for weights in [None, "w"]:
        cpu = frame.select(pl.col("x").gpu_hist.histogram(bins=333, weights=weights, device="cpu"))
        gpu = frame.select(pl.col("x").gpu_hist.histogram(bins=333, weights=weights, device="gpu"))
        assert gpu.equals(cpu)
    name = {"pageable": "pageable copy", "staged": "staging ring", "registered": "page-locked"}
    assert name[transfer] in gh.explain(s, 333, device="gpu")


def test_columns_larger_than_the_staging_ring() -> None:
    rng = np.random.default_rng(21)
    x = pl.Series("x", rng.random(1 << 30, dtype=np.float32))  # 4 GiB, 128 ring slots
    x = x.scatter(np.arange(0, len(x), 1 << 20), None)
    frame = pl.DataFrame({"x": x})
    expr = pl.col("x").gpu_hist.histogram(bins=4096, range=(0, 1), device="gpu")
    cpu = frame.select(pl.col("x").gpu_hist.histogram(bins=4096, range=(0, 1), device="cpu"))
    assert frame.select(expr).equals(cpu)


def test_a_column_larger_than_the_device_memory_streams(monkeypatch: pytest.MonkeyPatch) -> None:
    # The device memory a call may use, capped: 64 MiB for a 512 MiB column (with weights).
    monkeypatch.setenv("POLARS_GPU_HIST_DEVICE_BYTES", str(64 << 20))
    rng = np.random.default_rng(22)
    frame = pl.DataFrame(
        {"x": rng.normal(size=1 << 26), "w": rng.integers(0, 3, 1 << 26).astype(np.float64)}
    )
    for weights in [None, "w"]:
        gpu = frame.select(pl.col("x").gpu_hist.histogram(bins=1000, weights=weights, device="gpu"))
        cpu = frame.select(pl.col("x").gpu_hist.histogram(bins=1000, weights=weights, device="cpu"))
        assert gpu.equals(cpu)
    assert "streamed in" in gh.explain(frame["x"], 1000, device="gpu")


def test_explain_names_the_kernel() -> None:
    x = cp.zeros(1 << 20, dtype=cp.float32)
    text = gh.explain(x, 256)
    assert "count_shared_float32_u32_left" in text and "replica" in text
    assert "count_packed_float32_u32_left" in gh.explain(x, 1 << 16)
    assert "count_spill_float32_u32_left" in gh.explain(x, 1 << 16, kernel="spill")
    # Past 16-bit counters the plan takes its tuning's partition family (radix on sm_90,
    # batched elsewhere: src/gpu/plan.rs), whose count pass a warp runs over 32 tiles at once.
    text = gh.explain(x, 1 << 22)
    assert "exceed one block's shared memory even as 16-bit counters" in text
    assert "a warp 32 tiles at once" in text
    assert any(f"count_{family}_float32_u32_left" in text for family in ["radix", "batched"])
    for family in ["radix", "batched", "segmented"]:
        text = gh.explain(x, 1 << 22, kernel=family)
        assert f"count_{family}_float32_u32_left" in text and "forced by the caller" in text
    weighted = gh.explain(x, 1 << 22, weights=True)
    assert "count_global_weighted_" in weighted and "float32" in weighted


def test_reads_wait_for_the_producers_copy() -> None:
    # CuPy copies into a fresh array on the legacy default stream; our kernels run on streams of
    # their own and must still see the whole copy (a race here once miscounted edge rows).
    rng = np.random.default_rng(11)
    edges = np.linspace(-3, 3, 50)
    for _ in range(30):
        x = rng.normal(size=1 << 21).astype(np.float32)
        want = gh.histogram(x, edges, device="cpu")["count"].to_numpy()
        np.testing.assert_array_equal(device_counts(x, edges), want)


# ---- n-D and by= -----------------------------------------------------------------------------


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
@pytest.mark.parametrize("dist", ["uniform", "normal", "degenerate"])
def test_device_nd_matches_numpy_histogramdd(kernel: str, dtype, dist: str) -> None:
    rng = np.random.default_rng(zlib.crc32(f"dd{kernel}{np.dtype(dtype)}{dist}".encode()))
    n = 200_003
    xy = np.stack([sample(np.dtype(dtype), dist, n, rng) for _ in range(3)], axis=1)
    for bins, rng_arg in [(8, None), ([64, 64, 2], None), (5, [(0, 1), None, (0.2, 0.7)])]:
        expected, edges = np.histogramdd(xy, bins=bins, range=rng_arg)
        # One (n, d) array, and three separate arrays: the same answer.
        got = gh.histogramdd(cp.asarray(xy), bins=bins, range=rng_arg, kernel=kernel)
        np.testing.assert_array_equal(got["count"].to_numpy(), expected.ravel())
        cols = [cp.asarray(np.ascontiguousarray(xy[:, j])) for j in range(3)]
        got = gh.histogramdd(*cols, bins=bins, range=rng_arg, kernel=kernel)
        np.testing.assert_array_equal(got["count"].to_numpy(), expected.ravel())
        grid = np.meshgrid(*[e[:-1] for e in edges], indexing="ij")
        np.testing.assert_array_equal(got["x2_start"].to_numpy(), grid[2].ravel())


def test_device_nd_large_grids_weights_and_density() -> None:
    rng = np.random.default_rng(7)
    xy = rng.random((1 << 21, 2)).astype(np.float32)
    xy[::13] = np.float32(0.5)  # a hot cell
    w = rng.integers(0, 4, len(xy)).astype(np.float64)
    for b in [64, 1024]:
        expected, _ = np.histogramdd(xy, bins=b, range=[(0, 1), (0, 1)])
        got = gh.histogramdd(cp.asarray(xy), bins=b, range=[(0, 1), (0, 1)])
        np.testing.assert_array_equal(got["count"].to_numpy(), expected.ravel())
        expected, _ = np.histogramdd(xy, bins=b, range=[(0, 1), (0, 1)], weights=w)
        got = gh.histogramdd(cp.asarray(xy), bins=b, range=[(0, 1), (0, 1)], weights=cp.asarray(w))
        np.testing.assert_array_equal(got["count"].to_numpy(), expected.ravel())
        expected, _ = np.histogramdd(xy, bins=b, density=True)
        got = gh.histogramdd(cp.asarray(xy), bins=b, density=True)
        np.testing.assert_array_equal(got["count"].to_numpy(), expected.ravel())


def test_device_nd_nan_drops_only_its_value_from_the_range() -> None:
    xy = np.array([[0.0, 1.0], [np.nan, 5.0], [2.0, 3.0], [1.0, np.nan]])
    expected, _ = np.histogramdd(xy, bins=3, range=[(0.0, 2.0), (1.0, 5.0)])
    got = gh.histogramdd(cp.asarray(xy), bins=3)
    np.testing.assert_array_equal(got["count"].to_numpy(), expected.ravel())


def nd_ours(case: NdCase, **kwargs: object) -> pl.DataFrame:
    expr = gh.histogramdd(
        *case.names,
        bins=case.bins,
        range=case.range,
        weights="w" if case.weighted else None,
        **kwargs,
    )
    return case.frame.select(expr).unnest(case.names[0])


@settings(max_examples=100, deadline=None)
@given(nd_cases(weighted=False, max_size=2000))
def test_host_nd_gpu_equals_cpu(case: NdCase) -> None:
    for kernel in KERNELS:
        try:
            want = nd_ours(case, device="cpu")
        except pl.exceptions.PolarsError:
            return
        try:
            got = nd_ours(case, device="gpu", kernel=kernel)
        except pl.exceptions.ComputeError as e:
            # A forced kernel refuses cells it cannot hold (50^3 of them in shared memory, as
            # hypothesis found on an H100), with an error that says so: never wrong counts.
            assert kernel == "shared" and "cannot hold" in str(e), e
            continue
        assert got.equals(want)


@settings(max_examples=50, deadline=None)
@given(nd_cases(weighted=True, max_size=2000))
def test_host_nd_weighted_gpu_equals_cpu(case: NdCase) -> None:
    # The CPU's sums are held to numpy.histogramdd's in test_nd (NaN edges of spans wider than
    # float64 and fractions' rounding included).
    try:
        want = nd_ours(case, device="cpu")["count"].to_numpy()
    except pl.exceptions.PolarsError:
        return
    got = nd_ours(case, device="gpu")["count"].to_numpy()
    if case.exact_weights:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


@settings(max_examples=100, deadline=None)
@given(by_cases())
def test_by_gpu_equals_cpu(case: tuple[pl.DataFrame, dict]) -> None:
    frame, kwargs = case
    try:
        want = frame.select(pl.col("x").gpu_hist.histogram(by="g", device="cpu", **kwargs))
    except pl.exceptions.PolarsError:
        return
    for kernel in KERNELS:
        got = frame.select(
            pl.col("x").gpu_hist.histogram(by="g", device="gpu", kernel=kernel, **kwargs)
        )
        if "weights" in kwargs or kwargs.get("density"):
            np.testing.assert_allclose(
                got.unnest("x")["count"].to_numpy(), want.unnest("x")["count"].to_numpy()
            )
        else:
            assert got.equals(want)


def test_by_ten_thousand_groups_on_the_gpu() -> None:
    rng = np.random.default_rng(11)
    n = 1 << 22
    frame = pl.DataFrame({"x": rng.random(n).astype(np.float32), "g": rng.integers(0, 10_000, n)})
    expr = pl.col("x").gpu_hist.histogram(bins=64, range=(0, 1), by="g")
    want = frame.select(pl.col("x").gpu_hist.histogram(bins=64, range=(0, 1), by="g", device="cpu"))
    assert frame.select(expr).equals(want)
    gpu = frame.select(pl.col("x").gpu_hist.histogram(bins=64, range=(0, 1), by="g", device="gpu"))
    assert gpu.equals(want)
