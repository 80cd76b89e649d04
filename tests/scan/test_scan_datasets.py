"""Datasets as they are stored (issue 47 items 4, 5, 7): hive-partitioned directories with
``where=`` pruning whole files, storage options and URLs passed to Polars, a first pass taken
from Parquet statistics where they are exact (and read where they are not, the plan saying
why), ``by=`` keys, and progress with bytes a second and the time left."""

from __future__ import annotations

import io
import sys
import types
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh
from polars_gpu_hist._scan import passes as _passes
from polars_gpu_hist._scan import progress as _progress
from polars_gpu_hist._scan import scan as _scan


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    rng = np.random.default_rng(7)
    n = 12_000
    x = rng.normal(0, 1, n)
    x[::41] = np.nan
    return pl.DataFrame(
        {
            "x": x,
            "i": rng.integers(-300, 300, n),
            "key": rng.choice(["a", "b", "c"], n),
            "year": rng.choice([2021, 2022], n),
        }
    )


def numpy_counts(values: np.ndarray, bins, range=None) -> np.ndarray:
    values = values[~np.isnan(values)] if values.dtype.kind == "f" else values
    return np.histogram(values, bins, range=range)[0]


def write_hive(frame: pl.DataFrame, root: Path, suffix: str = ".parquet") -> None:
    for (key, year), part in frame.group_by(["key", "year"], maintain_order=True):
        folder = root / f"key={key}" / f"year={year}"
        folder.mkdir(parents=True, exist_ok=True)
        data = part.drop("key", "year")
        if suffix == ".parquet":
            data.write_parquet(folder / "part-0.parquet")
        else:
            data.write_csv(folder / "part-0.csv")
    (root / "_SUCCESS").write_text("")  # a marker file a scan leaves out


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_a_hive_directory_and_where_on_its_keys(
    tmp_path: Path, frame: pl.DataFrame, suffix: str
) -> None:
    root = tmp_path / "dataset"
    write_hive(frame, root, suffix)
    whole = gh.histogram_scan(root, "x", 20, range=(-3, 3), device="cpu")
    np.testing.assert_array_equal(
        whole.counts, numpy_counts(frame["x"].to_numpy(), 20, (-3, 3)), strict=False
    )
    kept = frame.filter(pl.col("key") == "b")
    h = gh.histogram_scan(root, "x", 20, range=(-3, 3), where="key = 'b'", device="cpu")
    np.testing.assert_array_equal(
        h.counts, numpy_counts(kept["x"].to_numpy(), 20, (-3, 3)), strict=False
    )
    assert h.flow.rows == kept.height
    # The partition keys are columns: grouped by one, in order of first appearance.
    rows = gh.histogram_scan(root, "x", 4, range=(-2, 2), by="key", device="cpu")
    assert rows["key"].unique(maintain_order=True).to_list() == ["a", "b", "c"]


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_where_on_a_partition_key_leaves_out_whole_files(
    tmp_path: Path, frame: pl.DataFrame, suffix: str
) -> None:
    root = tmp_path / "dataset"
    write_hive(frame, root, suffix)
    # A file that cannot be read: a scan that opens it fails.
    for broken in (root / "key=c").rglob(f"*{suffix}"):
        broken.write_bytes(b"x,i\n1.0,oops\n" if suffix == ".csv" else b"not parquet" * 10)
    kept = frame.filter(pl.col("key") != "c")
    h = gh.histogram_scan(root, "i", 10, range=(-300, 300), where="key <> 'c'", device="cpu")
    np.testing.assert_array_equal(
        h.counts, numpy_counts(kept["i"].to_numpy(), 10, (-300, 300)), strict=False
    )
    with pytest.raises(Exception):  # noqa: B017 - Polars' own error for a corrupt file
        gh.histogram_scan(root, "i", 10, range=(-300, 300), device="cpu")


def test_a_plain_directory_of_files(tmp_path: Path, frame: pl.DataFrame) -> None:
    for k, part in enumerate(frame.iter_slices(5_000)):
        part.write_ipc(tmp_path / f"part{k}.arrow")
    h = gh.histogram_scan(tmp_path, "i", "integer", device="cpu")
    i = frame["i"].to_numpy()
    np.testing.assert_array_equal(
        h.counts, np.histogram(i, np.arange(i.min(), i.max() + 2))[0], strict=False
    )
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="no Parquet/CSV/IPC file"):
        gh.histogram_scan(tmp_path / "empty", "i", 4, range=(0, 1))


def test_storage_options_and_urls_reach_polars(
    tmp_path: Path, frame: pl.DataFrame, monkeypatch
) -> None:
    path = tmp_path / "d.parquet"
    frame.write_parquet(path)
    seen: list[dict] = []
    scan_parquet = pl.scan_parquet

    def recording(source, **kwargs):
        seen.append(kwargs)
        return scan_parquet(source, **kwargs)

    from polars_gpu_hist._scan import source as _source

    monkeypatch.setitem(_source.SCANNERS, "parquet", recording)
    options = {"aws_region": "eu-west-1"}
    h = gh.histogram_scan(f"file://{path}", "x", 8, range=(-2, 2), storage_options=options)
    assert seen and all(k.get("storage_options") == options for k in seen)
    np.testing.assert_array_equal(
        h.counts, numpy_counts(frame["x"].to_numpy(), 8, (-2, 2)), strict=False
    )
    with pytest.raises(TypeError, match="`storage_options` must be a dict"):
        gh.histogram_scan(path, "x", 8, range=(-2, 2), storage_options=[("a", 1)])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="for files"):
        gh.histogram_scan(frame, "x", 8, range=(-2, 2), storage_options=options)


# A first pass from Parquet statistics, where they are exact.


def needs_pyarrow() -> None:
    pytest.importorskip("pyarrow", reason="the statistics are read through pyarrow")


def no_reading(monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("the first pass read the column")

    monkeypatch.setattr(_passes, "first_pass", refuse)
    monkeypatch.setattr(_passes, "summary", refuse)


def test_integer_columns_take_their_range_from_the_statistics(
    tmp_path: Path, frame: pl.DataFrame, monkeypatch
) -> None:
    needs_pyarrow()
    for k, part in enumerate(frame.iter_slices(3_000)):
        part.write_parquet(tmp_path / f"p{k}.parquet", row_group_size=1000)
    pattern = str(tmp_path / "p*.parquet")
    plan = plan_of(pattern, "i", 7, range="auto")
    assert "extremes from the Parquet statistics of 12 row groups in 4 files" in plan, plan
    no_reading(monkeypatch)
    i = frame["i"].to_numpy()
    for bins in (17, "sturges", "rice", "sqrt", "integer"):
        h = gh.histogram_scan(pattern, "i", bins, range="auto" if bins == 17 else None)
        counts, edges = np.histogram(
            i, bins if bins != "integer" else np.arange(i.min(), i.max() + 2)
        )
        np.testing.assert_array_equal(h.counts, counts, strict=False)
        np.testing.assert_array_equal(h.edges, edges.astype(np.float64))


def test_float_columns_use_statistics_for_their_range_nan_left_out(
    tmp_path: Path, frame: pl.DataFrame, monkeypatch
) -> None:
    needs_pyarrow()
    path = tmp_path / "d.parquet"
    frame.write_parquet(path, row_group_size=2000)
    plan = plan_of(path, "x", 12, range="auto")
    assert "Parquet statistics of 6 row groups" in plan, plan
    no_reading(monkeypatch)
    h = gh.histogram_scan(path, "x", 12, range="auto")
    x = frame["x"].to_numpy()
    counts, edges = np.histogram(x[~np.isnan(x)], 12)
    np.testing.assert_array_equal(h.counts, counts, strict=False)
    np.testing.assert_array_equal(h.edges, edges)


def plan_of(source, column: str, bins, **kwargs) -> str:
    from polars_gpu_hist._scan import plan as _plan
    from polars_gpu_hist._scan.source import open_dataset

    r = _plan.request(column, bins, kwargs.pop("range", None), kwargs.pop("weights", None),
                      "left", "cpu", 1 << 20)  # fmt: skip
    return str(_scan.planned(open_dataset(source, **kwargs), r))


@pytest.mark.parametrize(
    "case, reason",
    [
        ("zero", "a zero min/max"),
        ("no-statistics", "has no statistics"),
        ("sturges-float", "do not count NaN"),
        ("where", "`where` keeps some rows"),
        ("null-weights", "may hold nulls"),
        ("csv", "CSV files keep no statistics"),
    ],
)
def test_where_the_statistics_cannot_be_trusted_the_column_is_read(
    tmp_path: Path, case: str, reason: str
) -> None:
    if case != "csv":
        needs_pyarrow()
    x = np.array([0.0, 1.5, 2.0, np.nan, 3.25, -1.0])
    frame = pl.DataFrame({"x": x if case != "zero" else np.abs(x), "w": [1.0, None, 2, 3, 4, 5]})
    path = tmp_path / ("d.csv" if case == "csv" else "d.parquet")
    if case == "csv":
        frame.write_csv(path)
    else:
        frame.write_parquet(path, statistics=case != "no-statistics")
    bins = "sturges" if case == "sturges-float" else 5
    kwargs: dict = {"range": None if bins == "sturges" else "auto"}
    if case == "where":
        kwargs["where"] = "x < 3"
    if case == "null-weights":
        kwargs["weights"] = "w"
    plan_kwargs = {k: v for k, v in kwargs.items() if k != "where"}
    from polars_gpu_hist._scan.scan import _predicate

    text = plan_of(path, "x", bins, **plan_kwargs, where=_predicate(kwargs.get("where")))
    assert "a streaming pass reading the column" in text and reason in text, text
    h = gh.histogram_scan(path, "x", bins, **kwargs)
    keep = frame
    if case == "where":
        keep = frame.filter(pl.col("x") < 3)
    if case == "null-weights":
        keep = frame.filter(pl.col("w").is_not_null())
    values = keep["x"].to_numpy()
    values = values[~np.isnan(values)]
    w = None
    if case == "null-weights":
        w = keep.filter(pl.col("x").is_not_nan())["w"].to_numpy()
    counts, edges = np.histogram(values, bins, weights=w)
    np.testing.assert_array_equal(h.counts, counts, strict=False)
    np.testing.assert_array_equal(h.edges, edges)


def test_a_file_rewritten_after_its_statistics_were_read_is_caught(
    tmp_path: Path, monkeypatch
) -> None:
    path = tmp_path / "d.parquet"
    pl.DataFrame({"i": [1, 2, 3]}).write_parquet(path)
    from polars_gpu_hist._scan import bins as _bins

    first_pass = _bins.first_pass

    def then_rewrite(plan):
        found = first_pass(plan)
        pl.DataFrame({"i": [1, 2, 3, 40]}).write_parquet(path)
        return found

    monkeypatch.setattr(_bins, "first_pass", then_rewrite)
    with pytest.raises(RuntimeError, match=r"changed between the two passes.*\[1, 3\].*40"):
        gh.histogram_scan(path, "i", 4, range="auto", device="cpu")


# by= keys in a scan.


def test_by_keys_give_the_expressions_rows_over_every_file(
    tmp_path: Path, frame: pl.DataFrame
) -> None:
    for k, part in enumerate(frame.iter_slices(2_500)):
        part.write_parquet(tmp_path / f"p{k:02d}.parquet")
    pattern = str(tmp_path / "p*.parquet")
    for kwargs in [
        dict(bins=6, range=(-2, 2)),
        dict(bins=6, range="auto"),
        dict(bins=[-1, 0, 1], by=["key", "year"]),
    ]:
        by = kwargs.pop("by", "key")
        rng = kwargs.get("range")
        got = gh.histogram_scan(pattern, "x", **kwargs, by=by, chunk_size=700, device="cpu")
        expr_range = None if rng == "auto" else rng
        want = frame.select(
            pl.col("x").gpu_hist.histogram(bins=kwargs["bins"], range=expr_range, by=by)
        ).unnest("x")
        assert got.equals(want), (got, want)


def test_by_arguments_are_checked(tmp_path: Path, frame: pl.DataFrame) -> None:
    with pytest.raises(TypeError, match="`by` of a scan"):
        gh.histogram_scan(frame, "x", 4, range=(0, 1), by=pl.col("key"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`by` takes one column"):
        gh.histogram_scan(frame, ["x", "i"], 4, range=[(0, 1), (0, 1)], by="key")
    with pytest.raises(pl.exceptions.ColumnNotFoundError, match="no column 'nope'"):
        gh.histogram_scan(frame, "x", 4, range=(0, 1), by="nope")


def test_several_columns_in_a_scan(tmp_path: Path, frame: pl.DataFrame) -> None:
    path = tmp_path / "d.parquet"
    frame.write_parquet(path)
    h = gh.histogram_scan(path, ["x", "i"], [4, 6], range=[(-2, 2), (-300, 300)], device="cpu")
    sample = frame.filter(pl.col("x").is_not_nan())
    counts, _ = np.histogramdd(
        sample.select("x", "i").to_numpy(), [4, 6], range=[(-2, 2), (-300, 300)]
    )
    np.testing.assert_array_equal(h.counts, counts, strict=False)


# Progress: bytes a second, the time left, one display in a notebook.


def test_progress_says_bytes_a_second_and_the_time_left(monkeypatch) -> None:
    clock = iter(np.arange(0, 1000, 0.5))
    monkeypatch.setattr(_progress.time, "perf_counter", lambda: float(next(clock)))
    out = io.StringIO()
    bar = _progress.Progress("d.parquet", 1000, file_bytes=4_000_000, stream=out)
    bar.update(250)
    text = out.getvalue()
    assert "250/1,000 rows" in text and "MB/s" in text and "s left" in text, text
    bar.close()
    assert out.getvalue().endswith("\n")


def test_progress_in_a_notebook_is_one_display_updated_in_place(monkeypatch) -> None:
    shown: list = []

    class Handle:
        def update(self, obj) -> None:
            shown.append(("update", obj.text))

    def display(obj, display_id=False):
        assert display_id
        shown.append(("display", obj.text))
        return Handle()

    ipython = types.ModuleType("IPython")
    ipython_display = types.ModuleType("IPython.display")
    ipython_display.display = display  # type: ignore[attr-defined]

    class Kernel:
        def __init__(self) -> None:
            self.config = {"IPKernelApp": {}}

    ipython.get_ipython = lambda: Kernel()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", ipython_display)
    assert _progress.in_notebook()
    clock = iter(np.arange(0, 1000, 0.3))
    monkeypatch.setattr(_progress.time, "perf_counter", lambda: float(next(clock)))
    bar = _progress.make("auto", "the LazyFrame", lambda: 300)
    assert bar is not None and bar._notebook
    for _ in range(3):
        bar.update(100)
    bar.close()
    kinds = [k for k, _ in shown]
    assert kinds[0] == "display" and kinds.count("display") == 1 and len(kinds) >= 3, shown
    assert "300/300 rows" in shown[-1][1]
    # A whole scan in a notebook draws through the same display (past "auto"'s half second).
    shown.clear()
    slow = iter(np.arange(0, 1000, 1.0))
    monkeypatch.setattr(_progress.time, "perf_counter", lambda: float(next(slow)))
    lf = pl.LazyFrame({"x": np.arange(300_000, dtype=np.float64)})
    gh.histogram_scan(lf, "x", 4, range=(0, 1), progress="auto", device="cpu")
    assert [k for k, _ in shown].count("display") == 1 and "300,000 rows" in shown[-1][1]


@pytest.mark.parametrize("weighted", [False, True])
def test_many_bins_are_counted_in_batches_by_the_feeder(weighted: bool) -> None:
    # More than 65,536 cells: the morsels go to the feeder thread (the GPU's path, on the CPU).
    rng = np.random.default_rng(70)
    n = 600_000
    x = rng.random(n)
    x[::997] = np.nan
    w = rng.integers(0, 3, n).astype(np.float64)
    lf = pl.LazyFrame({"x": x, "w": w})
    from polars_gpu_hist import _native

    h = gh.Histogram(100_000, range=(0, 1), device="cpu").fill(pl.Series("x", [], pl.Float64))
    assert _native.ScanSink(h._core, "cpu").counting == "batched on cpu"
    got = gh.histogram_scan(
        lf, "x", 100_000, range=(0, 1), weights="w" if weighted else None, device="cpu"
    )
    keep = ~np.isnan(x)
    want, _ = np.histogram(x[keep], 100_000, range=(0, 1), weights=w[keep] if weighted else None)
    np.testing.assert_array_equal(got.counts, want, strict=False)
    assert got.flow.rows == n and got.flow.nan == int((~keep).sum())
