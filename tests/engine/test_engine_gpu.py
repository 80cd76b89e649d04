"""The one engine on the GPU: no stale device copy ever answers, pinned columns, n-D cells in every
family, flow bins, by= group tables, float16 on the CPU, edges made on the device, the caller's
stream, the first call in a fresh process and the kernel cache (run on a machine with a GPU:
-m gpu; the numpy drop-in on device arrays is in numpy/test_numpy_device_gpu.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh
import polars_gpu_hist.numpy as ghnp
from support.strategies import STRAYS, WIDE_KEYS, by_against_hashed_keys, by_first_rows_case

cp = pytest.importorskip("cupy")

FAMILIES = [
    "shared", "packed", "spill", "segmented", "batched", "global", "private", "banked", "radix"
]  # fmt: skip


def counts(frame: pl.DataFrame, device: str, **kwargs) -> list[int]:
    out = frame.select(pl.col("x").gpu_hist.histogram(device=device, **kwargs))
    return out.unnest("x")["count"].to_list()


# ---- issue 11.1: memory that changes in place is never answered from an old copy ----


def test_a_numpy_backed_column_changed_in_place_is_counted_again() -> None:
    x = np.random.default_rng(0).random(1 << 24)
    s = pl.Series("x", x)
    first = gh.histogram(s, 64, range=(0, 2), device="gpu")["count"].to_list()
    assert first == np.histogram(x, 64, range=(0, 2))[0].tolist()
    x *= 2
    assert s[0] == x[0], "the Series must share numpy's buffer, or nothing changed in place"
    second = gh.histogram(s, 64, range=(0, 2), device="gpu")["count"].to_list()
    assert second == np.histogram(x, 64, range=(0, 2))[0].tolist()
    assert first != second
    # The same through a frame and the expression.
    df = pl.DataFrame({"x": x})
    before = counts(df, "gpu", bins=64, range=(0, 2))
    x /= 4
    assert df["x"][0] == x[0]
    after = counts(df, "gpu", bins=64, range=(0, 2))
    assert after == np.histogram(x, 64, range=(0, 2))[0].tolist()
    assert before != after


def test_a_pyarrow_backed_column_changed_in_place_is_counted_again() -> None:
    pa = pytest.importorskip("pyarrow")
    x = np.random.default_rng(1).random(1 << 22)
    # An Arrow array over numpy's own buffer (no copy), and a Series over that.
    s = pl.from_arrow(pa.Array.from_buffers(pa.float64(), len(x), [None, pa.py_buffer(x)]))
    first = gh.histogram(s, 16, range=(0, 2), device="gpu")["count"].to_list()
    x *= 2
    assert s[0] == x[0], "the Series must share numpy's buffer, or nothing changed in place"
    second = gh.histogram(s, 16, range=(0, 2), device="gpu")["count"].to_list()
    assert second == np.histogram(x, 16, range=(0, 2))[0].tolist()
    assert first != second


def test_a_memory_mapped_ipc_column_rewritten_is_counted_again(tmp_path) -> None:
    pa = pytest.importorskip("pyarrow")
    path = tmp_path / "x.arrow"
    n = 1 << 20
    pl.DataFrame({"x": np.full(n, 0.25)}).write_ipc(path, compression="uncompressed")
    # pyarrow maps the file (Polars reads IPC files into memory), and Polars takes its
    # buffers as they are.
    df = pl.from_arrow(pa.ipc.open_file(pa.memory_map(str(path), "r")).read_all())
    before = counts(df, "gpu", bins=2, range=(0, 1))
    assert before == [n, 0]
    # Every value rewritten in place through another descriptor, the inode kept: positioned
    # reads and writes, no seek on a file object.
    fd = os.open(path, os.O_RDWR)
    try:
        data = os.pread(fd, os.fstat(fd).st_size, 0)
        changed = data.replace(np.float64(0.25).tobytes(), np.float64(0.75).tobytes())
        assert os.pwrite(fd, changed, 0) == len(changed)
    finally:
        os.close(fd)
    assert df["x"][0] == 0.75, "the column must be the mapped file, or nothing changed"
    after = counts(df, "gpu", bins=2, range=(0, 1))
    assert after == [0, n]
    assert before != after


def test_pinned_columns_are_read_from_the_device_copy() -> None:
    s = pl.Series("x", np.random.default_rng(2).random(1 << 22))
    frame = pl.DataFrame({"x": s})
    assert "copied by" in gh.explain(s, 64, device="gpu")
    nbytes = gh.pin(frame)
    assert nbytes == 8 << 22 and gh.pinned() == (1, nbytes)
    assert "pinned device copy" in gh.explain(s, 64, device="gpu")
    for bins in [10, 64, 1000]:
        assert counts(frame, "gpu", bins=bins) == counts(frame, "cpu", bins=bins)
    gh.unpin(frame)
    assert gh.pinned() == (0, 0)
    assert "copied by" in gh.explain(s, 64, device="gpu")


# ---- the one engine: n-D cells in every family, flow, by= tables ----


@pytest.mark.parametrize("kernel", FAMILIES)
def test_n_d_cells_in_every_family(kernel: str) -> None:
    rng = np.random.default_rng(3)
    xy = rng.random((1 << 20, 2)).astype(np.float32)
    xy[::17] = np.float32(0.25)
    for b in [16, 256, 1024]:
        if (kernel, b) in {
            ("shared", 256),
            ("shared", 1024),
            ("packed", 1024),
            ("spill", 1024),
            ("private", 256),
            ("private", 1024),
            ("banked", 256),
            ("banked", 1024),
        }:
            # More cells than a block's shared memory holds: forcing the family is refused,
            # naming it and the cells, when the call runs (the device decides): Polars'
            # ComputeError from the package's Polars API and from a query (docs/semantics.md).
            name = "shared-memory" if kernel == "shared" else kernel
            refusal = f"the {name} kernel cannot hold {b * b} bins"
            with pytest.raises(pl.exceptions.ComputeError, match=refusal):
                gh.histogramdd(cp.asarray(xy), bins=b, range=[(0, 1), (0, 1)], kernel=kernel)
            frame = pl.DataFrame({"a": xy[:, 0], "b": xy[:, 1]})
            with pytest.raises(pl.exceptions.ComputeError, match=refusal):
                frame.select(
                    gh.histogramdd(
                        "a", "b", bins=b, range=[(0, 1), (0, 1)], device="gpu", kernel=kernel
                    )
                )
            continue
        expected, _ = np.histogramdd(xy, bins=b, range=[(0, 1), (0, 1)])
        got = gh.histogramdd(cp.asarray(xy), bins=b, range=[(0, 1), (0, 1)], kernel=kernel)
        np.testing.assert_array_equal(got["count"].to_numpy(), expected.ravel())
        frame = pl.DataFrame({"a": xy[:, 0], "b": xy[:, 1]})
        host = frame.select(
            gh.histogramdd("a", "b", bins=b, range=[(0, 1), (0, 1)], device="gpu", kernel=kernel)
        )
        np.testing.assert_array_equal(host.unnest("a")["count"].to_numpy(), expected.ravel())


def test_n_d_host_columns_of_mixed_dtypes_with_nulls() -> None:
    rng = np.random.default_rng(4)
    n = 300_001
    frame = pl.DataFrame(
        {
            "a": pl.Series(rng.integers(-50, 50, n), dtype=pl.Int16),
            "b": pl.Series(rng.random(n), dtype=pl.Float32),
            "c": pl.Series(rng.integers(0, 9, n), dtype=pl.UInt8),
        }
    ).with_columns(
        pl.when(pl.int_range(pl.len()) % 11 == 0).then(None).otherwise(pl.col("b")).alias("b")
    )
    expr = lambda device: gh.histogramdd("a", "b", "c", bins=[7, 5, 3], device=device)  # noqa: E731
    assert frame.select(expr("gpu")).equals(frame.select(expr("cpu")))


@pytest.mark.parametrize("closed", ["left", "right"])
def test_flow_bins_on_the_gpu(closed: str) -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(0.5, 0.5, 1 << 20)
    x[::101] = np.nan
    frame = pl.DataFrame({"x": x})
    for bins in [10, [0.0, 0.1, 0.5, 1.0]]:
        kw = dict(bins=bins, flow=True, closed=closed)
        if isinstance(bins, int):
            kw["range"] = (0, 1)
        assert counts(frame, "gpu", **kw) == counts(frame, "cpu", **kw)
        got = gh.histogram(cp.asarray(x), **kw)["count"].to_list()
        assert got == counts(frame, "cpu", **kw)


def test_by_with_a_group_table_on_the_gpu() -> None:
    rng = np.random.default_rng(6)
    n = 1 << 22
    frame = pl.DataFrame(
        {"x": rng.random(n).astype(np.float32), "g": rng.integers(-5000, 5000, n).astype(np.int16)}
    )
    expr = lambda device: pl.col("x").gpu_hist.histogram(  # noqa: E731
        bins=64, range=(0, 1), by="g", device=device
    )
    assert frame.select(expr("gpu")).equals(frame.select(expr("cpu")))


@pytest.mark.parametrize(
    ("dtype", "lo", "span"),
    [
        (np.int64, -7, 10_000),  # UInt16 offsets
        (np.int64, 1 << 40, 1 << 16),  # the widest UInt16 span, keys far from 0
        (np.int64, -(1 << 20), 200_003),  # UInt32 offsets
        (np.int32, 3, 40_000),  # UInt16 offsets of Int32 keys
        (np.int8, -100, 200),  # already narrow: travels as it is
    ],
)
@pytest.mark.parametrize("how", ["staged", "pageable", "registered", "windows", "pinned"])
def test_by_keys_travel_as_offsets_from_the_lowest_key(dtype, lo, span, how, monkeypatch) -> None:
    """Integer keys mapped by a table are copied as offsets from the lowest key (UInt16 or
    UInt32) through every transfer and in windows; a pinned key column is read as it is."""
    if how in ("staged", "pageable", "registered"):
        monkeypatch.setenv("POLARS_GPU_HIST_TRANSFER", how)
    elif how == "windows":
        monkeypatch.setenv("POLARS_GPU_HIST_DEVICE_BYTES", str(1 << 23))
    rng = np.random.default_rng(span)
    n = (1 << 22) + 3
    g = lo + rng.integers(0, span, n)
    g[:2] = [lo + span - 1, lo]  # both ends of the span appear
    frame = pl.DataFrame({"x": rng.random(n).astype(np.float32), "g": g.astype(dtype)})
    expr = lambda device: pl.col("x").gpu_hist.histogram(  # noqa: E731
        bins=16, range=(0, 1), by="g", device=device
    )
    if how == "pinned":
        gh.pin(frame["g"])
    try:
        assert frame.select(expr("gpu")).equals(frame.select(expr("cpu")))
    finally:
        if how == "pinned":
            gh.unpin(frame["g"])


@pytest.mark.parametrize("dtype", WIDE_KEYS)
@pytest.mark.parametrize("stray", STRAYS)
@pytest.mark.parametrize("how", ["staged", "pageable", "windows", "pinned"])
def test_by_groups_from_the_first_rows_are_checked_on_the_way_to_the_gpu(
    dtype, stray, how, monkeypatch
) -> None:
    """Keys grouped from the first rows travel as offsets that are checked against the span on
    the way (every transfer, and window by window); a stray has the count redone from every row.
    A pinned key column, read in place, is grouped from every row."""
    frame = by_first_rows_case(dtype, stray)
    if how in ("staged", "pageable"):
        monkeypatch.setenv("POLARS_GPU_HIST_TRANSFER", how)
    elif how == "windows":
        monkeypatch.setenv("POLARS_GPU_HIST_DEVICE_BYTES", str(1 << 21))
    else:
        gh.pin(frame["g"])
    try:
        by_against_hashed_keys(frame, "gpu")
    finally:
        if how == "pinned":
            gh.unpin(frame["g"])


def test_float16_is_binned_on_the_cpu() -> None:
    # 5,000 rows: fewer than 4,096 stay on the calling thread before the dtype is asked.
    s = pl.Series("x", np.random.default_rng(7).random(5000).astype(np.float16))
    auto = gh.histogram(s, 10)
    assert auto.equals(gh.histogram(s, 10, device="cpu"))
    with pytest.raises(pl.exceptions.PolarsError, match="Float16"):
        gh.histogram(s, 10, device="gpu")
    # `explain` plans from the dtype and row count, before any float16 bins are made: it names
    # the CPU, for its cost (the call itself refuses the GPU for float16 bins, as above).
    assert "backend  cpu" in gh.explain(s, 10)


# ---- issue 12.3: equal bins' edges made on the device, in numpy's dtype ----

EDGE_CASES = [
    (np.float32, 10, (0.0, 1.0)),  # float32 edges from a float64 linspace
    (np.float32, 1 << 24, (0.0, 1.0)),
    (np.float32, 1000, (np.float32(0.1), np.float32(0.7))),  # linspace in float32
    (np.float32, 333, None),  # the data's float32 extremes
    (np.float64, 1 << 20, (-3.3, 1e5)),
    (np.float64, 100, (np.float32(0.1), np.float32(0.7))),  # float32 linspace, float64 edges
    (np.int32, 4097, None),
    (np.uint8, 7, (0.0, 300.0)),
    (np.float32, [-50.0, 0.0, 0.5, 149.0], None),  # explicit edges: copied over as given
]


@pytest.mark.parametrize("dtype, bins, range_", EDGE_CASES)
def test_device_made_edges_are_numpys(dtype, bins, range_) -> None:
    x = (np.random.default_rng(len(np.atleast_1d(bins))).random(1 << 16) * 200 - 50).astype(dtype)
    expected, edges = np.histogram(x, bins, range=range_)
    got, got_edges = ghnp.histogram(cp.asarray(x), bins, range=range_)
    assert isinstance(got_edges, cp.ndarray) and got_edges.dtype == edges.dtype
    assert got_edges.device == got.device
    np.testing.assert_array_equal(got_edges.get(), edges)
    np.testing.assert_array_equal(got.get(), expected)


def test_device_made_edges_as_torch_tensors_on_the_same_device() -> None:
    torch = pytest.importorskip("torch")
    x = torch.rand(1 << 20, device="cuda")
    for bins, range_ in [(1 << 20, (0.0, 1.0)), (50, None), ([0.0, 0.25, 1.0], None)]:
        _, edges = np.histogram(x.cpu().numpy(), bins, range=range_)
        got, got_edges = ghnp.histogram(x, bins, range=range_)
        assert isinstance(got_edges, torch.Tensor) and got_edges.device == x.device
        assert got.device == x.device
        assert got_edges.dtype == torch.from_numpy(edges).dtype
        np.testing.assert_array_equal(got_edges.cpu().numpy(), edges)


def test_device_made_edges_of_histogramdd() -> None:
    xy = cp.random.default_rng(3).random((1 << 16, 2), dtype=cp.float32)
    for bins, range_ in [([64, 1 << 12], None), (8, [(0.0, 1.0), (np.float32(0.2), 0.9)])]:
        _, edges = np.histogramdd(xy.get(), bins=bins, range=range_)
        _, got_edges = ghnp.histogramdd(xy, bins=bins, range=range_)
        for a, b in zip(got_edges, edges):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a.get(), b)


# ---- issue 12.1: the first call ----


def test_the_first_call_in_a_fresh_process_with_an_empty_cache(tmp_path) -> None:
    code = (
        "import time, cupy as cp; x = cp.random.random(1 << 24, dtype=cp.float32); "
        "cp.cuda.Device().synchronize(); t = time.perf_counter(); "
        "import polars_gpu_hist as gh; gh.histogram(x, 256); "
        "print(time.perf_counter() - t)"
    )
    env = dict(os.environ, POLARS_GPU_HIST_CACHE=str(tmp_path / "cache"))
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    first = float(out.stdout.strip())
    print(f"first call {first:.2f} s (process {time.perf_counter() - t0:.2f} s)")
    assert first < 30  # the target (1.5 s on an H100) is a benchmark, not a test


# ---- issue 12: the drop-in queued on the caller's stream, the data's own shape ----


def test_the_numpy_module_runs_on_the_current_cupy_stream() -> None:
    rng = cp.random.default_rng(11)
    with cp.cuda.Stream(non_blocking=True) as stream:
        x = rng.random(1 << 22, dtype=cp.float32)
        got, _ = ghnp.histogram(x, 1000, range=(0.0, 1.0))
        got2d, _ = ghnp.histogramdd(cp.stack([x, x * 0.5], 1), bins=[16, 1 << 16])
        stream.synchronize()
    host = x.get()
    np.testing.assert_array_equal(got.get(), np.histogram(host, 1000, range=(0.0, 1.0))[0])
    want2d = np.histogramdd(np.stack([host, host * np.float32(0.5)], 1), bins=[16, 1 << 16])[0]
    np.testing.assert_array_equal(got2d.get(), want2d)


def test_the_numpy_module_runs_on_the_current_torch_stream() -> None:
    torch = pytest.importorskip("torch")
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        x = torch.rand(1 << 22, device="cuda")
        got, _ = ghnp.histogram(x, 4096, range=(0.0, 1.0))
    side.synchronize()
    want = np.histogram(x.cpu().numpy(), 4096, range=(0.0, 1.0))[0]
    np.testing.assert_array_equal(got.cpu().numpy(), want)


@pytest.mark.parametrize("shape", ["sorted", "degenerate", "uniform"])
@pytest.mark.parametrize("bins", [1 << 20, 1 << 24])
def test_large_histograms_of_sorted_or_one_valued_data(shape: str, bins: int) -> None:
    x = cp.random.default_rng(bins).random(1 << 23, dtype=cp.float32)
    if shape == "sorted":
        x = cp.sort(x)
    elif shape == "degenerate":
        x = cp.full(x.size, 0.3, dtype=cp.float32)
    got, _ = ghnp.histogram(x, bins, range=(0.0, 1.0))
    want = np.histogram(x.get(), bins, range=(0.0, 1.0))[0]
    np.testing.assert_array_equal(got.get(), want)
    frame = pl.DataFrame({"x": x.get()})
    host = counts(frame, "gpu", bins=bins, range=(0.0, 1.0))
    np.testing.assert_array_equal(np.asarray(host), want)


def test_histogramdd_of_separate_device_arrays_reads_them_where_they_lie() -> None:
    rng = cp.random.default_rng(5)
    x, y, z = (rng.random(1 << 20, dtype=cp.float64) for _ in range(3))
    got, got_edges = ghnp.histogramdd([x, y, z], bins=[7, [0.0, 0.5, 1.0], 5])
    want, edges = np.histogramdd([x.get(), y.get(), z.get()], bins=[7, [0.0, 0.5, 1.0], 5])
    np.testing.assert_array_equal(got.get(), want)
    for a, b in zip(got_edges, edges):
        np.testing.assert_array_equal(cp.asnumpy(a), b)
    # Mixed dtypes are stacked into numpy's common dtype first.
    xi = (x * 100).astype(cp.int16)
    got, _ = ghnp.histogramdd([xi, y.astype(cp.float32)], bins=[10, 10])
    want, _ = np.histogramdd([xi.get(), y.get().astype(np.float32)], bins=[10, 10])
    np.testing.assert_array_equal(got.get(), want)


@pytest.mark.parametrize("bins", [64, 256, 1024])
def test_histogram2d_of_an_n_by_2_array_in_every_size(bins: int) -> None:
    xy = cp.random.default_rng(bins).random((1 << 21, 2), dtype=cp.float32)
    got, xe, ye = ghnp.histogram2d(xy[:, 0], xy[:, 1], bins=bins, range=[(0, 1), (0, 1)])
    want, xe_np, ye_np = np.histogram2d(*xy.get().T, bins=bins, range=[(0, 1), (0, 1)])
    np.testing.assert_array_equal(got.get(), want)
    np.testing.assert_array_equal(xe.get(), xe_np)
    np.testing.assert_array_equal(ye.get(), ye_np)
    got_dd, _ = ghnp.histogramdd(xy, bins=bins, range=[(0, 1), (0, 1)])
    np.testing.assert_array_equal(got_dd.get(), want)
    frame = gh.histogramdd(xy, bins=bins, range=[(0, 1), (0, 1)])
    np.testing.assert_array_equal(frame["count"].to_numpy().reshape(bins, bins), want)


# ---- issue 11.6: the kernel disk cache ----


def _explain_with_cache(cache) -> str:
    code = (
        "import numpy as np, polars_gpu_hist as gh; "
        "print(gh.explain(np.zeros(1 << 20, np.float32), 64, range=(0, 1), device='gpu'))"
    )
    env = dict(os.environ, POLARS_GPU_HIST_CACHE=str(cache))
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def test_a_cache_others_can_write_is_not_used_and_explain_says_so(tmp_path) -> None:
    cache = tmp_path / "open"
    cache.mkdir()
    cache.chmod(0o777)
    out = _explain_with_cache(cache)
    assert "kernels  compiled in memory, not cached" in out, out
    assert "can be written by others" in out, out
    assert cache.stat().st_mode & 0o777 == 0o777  # not ours to change


def test_a_cache_of_ours_readable_by_others_is_made_private(tmp_path) -> None:
    cache = tmp_path / "readable"
    cache.mkdir()
    cache.chmod(0o755)
    out = _explain_with_cache(cache)
    assert f"kernels  compiled once, kept in {cache}" in out, out
    assert cache.stat().st_mode & 0o777 == 0o700


@pytest.mark.parametrize("kernel", ["auto", "shared", "global", "segmented", "batched", "spill"])
def test_numpy_float64_scalars_make_float64_bins_on_the_gpu(kernel: str) -> None:
    """float32 data with a range of numpy float64 scalars: float64 bins, as numpy makes them,
    from a Polars column and from a CuPy array alike."""
    rng = np.random.default_rng(12)
    x = rng.random(200_003).astype(np.float32)
    lo, hi = np.float64(0.1), np.float64(0.7)
    x[:1000] = np.float32(np.linspace(lo, hi, 1000))  # values on and beside float64 edges
    expected, edges = np.histogram(x, bins=37, range=(lo, hi))
    got = gh.histogram(pl.Series(x), bins=37, range=(lo, hi), device="gpu", kernel=kernel)
    np.testing.assert_array_equal(got["count"].to_numpy(), expected)
    np.testing.assert_array_equal(got["bin_start"].to_numpy(), edges[:-1])
    on_device = gh.histogram(cp.asarray(x), bins=37, range=(lo, hi), device="gpu", kernel=kernel)
    np.testing.assert_array_equal(on_device["count"].to_numpy(), expected)
    # The drop-in reads the float32 array as it is (no float64 copy) and returns float64 edges.
    drop_counts, drop_edges = ghnp.histogram(cp.asarray(x), 37, range=(lo, hi))
    np.testing.assert_array_equal(cp.asnumpy(drop_counts), expected)
    assert drop_edges.dtype == np.float64
    np.testing.assert_array_equal(cp.asnumpy(drop_edges), edges)


def test_segmented_scratch_reused_across_calls_sizes_and_threads() -> None:
    """The segmented family (uniform data, 1M bins) takes its scratch from a pool that keeps it
    between calls: a smaller call after a larger one, calls on other streams and from several
    threads at once each see only their own rows."""
    from concurrent.futures import ThreadPoolExecutor

    rng = cp.random.default_rng(29)
    arrays = [rng.random(n, dtype=cp.float32) for n in (1 << 24, 1 << 18, 3_000_001, 1 << 22)]
    wants = [np.histogram(a.get(), 1 << 20, range=(0.0, 1.0))[0] for a in arrays]

    def one(i: int) -> np.ndarray:
        with cp.cuda.Stream(non_blocking=True) as stream:
            got, _ = ghnp.histogram(arrays[i], 1 << 20, range=(0.0, 1.0))
            stream.synchronize()
        return got.get()

    for i, want in enumerate(wants):
        np.testing.assert_array_equal(one(i), want)
    with ThreadPoolExecutor(4) as pool:
        for got, want in zip(pool.map(one, [0, 1, 2, 3] * 3), wants * 3):
            np.testing.assert_array_equal(got, want)


def test_large_results_come_back_exact_through_the_staging_ring() -> None:
    """Results of 1 MB and more come to the host through the pinned ring that uploads use:
    sizes on both sides of that threshold and of a chunk (32 MiB), weighted sums, and several
    threads at once, each also uploading host columns through the same ring, all exact."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(41)
    host = rng.random(1 << 22)
    weights = rng.integers(0, 4, 1 << 22).astype(np.float64)
    cases = [
        ((1 << 17) - 1, False),  # below the threshold: one direct copy
        (1 << 17, False),  # exactly 1 MiB of counts
        ((1 << 22) + 5, False),  # one chunk and a few bytes
        ((1 << 24) + 3, False),  # around the ring more than once
        (5_000_011, True),  # weighted sums, two chunks
    ]
    wants = [
        np.histogram(host, bins, range=(0.0, 1.0), weights=weights if w else None)[0]
        for bins, w in cases
    ]

    def one(i: int) -> np.ndarray:
        bins, w = cases[i]
        if i % 2:
            frame = pl.DataFrame({"x": host, "w": weights})
            out = frame.select(
                pl.col("x").gpu_hist.histogram(
                    bins=bins, range=(0.0, 1.0), weights="w" if w else None, device="gpu"
                )
            ).unnest("x")
        else:
            out = gh.histogram(
                cp.asarray(host), bins, range=(0.0, 1.0), weights=cp.asarray(weights) if w else None
            )
        return out["count"].to_numpy()

    for i, want in enumerate(wants):
        np.testing.assert_array_equal(one(i), want)
    with ThreadPoolExecutor(4) as pool:
        order = [4, 3, 2, 1, 0] * 2
        for i, got in zip(order, pool.map(one, order)):
            np.testing.assert_array_equal(got, wants[i])
