"""How a scan reads its rows, the pipeline's third stop: a query that Polars' streaming engine
runs, filling a histogram as it decodes (:func:`fill`, through the native sink); the batches in
row order, for what the sink cannot hold (:func:`fill_frames`: groups, n-D flow bins); and the
column in memory, for the rules that need every value (:func:`read_columns`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal

import polars as pl

from polars_gpu_hist import _native
from polars_gpu_hist._histogram.histogram import Histogram
from polars_gpu_hist._native.query_errors import query_errors
from polars_gpu_hist._scan import passes
from polars_gpu_hist._scan import progress as _progress
from polars_gpu_hist._scan.source import Dataset

# The query's row count of what the sink saw, beside any checks computed in the same pass.
_ROWS = "__polars_gpu_hist_rows"
# Partial frames of groups kept before they are merged (rows), for `fill_frames`.
_MERGE_ROWS = 1 << 20

# How Polars' plugin registration takes the sink's flags in this Polars.
_FLAGS: dict[str, bool] = {"is_elementwise": True}


def _init_flags() -> None:
    import inspect

    from polars.plugins import register_plugin_function

    if "is_deterministic" in inspect.signature(register_plugin_function).parameters:
        # Each call counts its rows once more: never merged with another, never cached.
        _FLAGS["is_deterministic"] = False


_init_flags()


def sink_expr(columns: list[str], weights: str | None, token: int) -> pl.Expr:
    """The sink's expression: elementwise (so that the streaming engine runs it on every
    morsel, as it decodes them), a column of nulls as long as the morsel."""
    from polars.plugins import register_plugin_function

    args = [pl.col(c) for c in columns] + ([pl.col(weights)] if weights is not None else [])
    return register_plugin_function(
        plugin_path=_native.PLUGIN_PATH,
        function_name="scan_fill",
        args=args,
        kwargs={"sink": token, "weighted": weights is not None},
        **_FLAGS,
    )


def fill(
    dataset: Dataset,
    histogram: Histogram,
    columns: list[str],
    weights: str | None,
    device: Literal["cpu", "gpu"],
    also: list[pl.Expr],
    bar: _progress.Progress | None,
) -> tuple[Histogram, tuple[Any, ...]]:
    """``histogram`` (empty, its dtypes fixed) filled with every row of the dataset, inside
    Polars' streaming engine: the morsels are counted by the engine's own threads as they are
    decoded (``device="cpu"``), or handed to a thread that fills them in batches on the GPU.
    ``also`` are aggregations computed in the same pass (a check of the extremes); their
    values are returned."""
    sink = _native.ScanSink(histogram._core, device)
    try:
        query = dataset.lazy().select(
            passes.rows_where(sink_expr(columns, weights, sink.token).is_null()).alias(_ROWS), *also
        )
        try:
            with _progress.polled(bar, lambda: sink.rows), query_errors():
                row = query.collect(engine="streaming").row(0)
        except (pl.exceptions.PolarsError, MemoryError, KeyboardInterrupt):
            sink.raise_failure()  # the fill's own error, as its own exception
            raise
        filled = Histogram._wrap(sink.finish())._with_metadata_of(histogram)
    finally:
        sink.close()
    rows = int(row[0])
    if filled.flow.rows != rows:
        raise RuntimeError(
            f"Polars' streaming engine handed the histogram {filled.flow.rows:,} rows of the "
            f"{rows:,} it read: please report it (Polars {pl.__version__})"
        )
    return filled, tuple(row[1:])


def batches(
    dataset: Dataset, names: list[str], chunk_size: int, in_order: bool
) -> Iterable[pl.DataFrame]:
    """The columns ``names`` in batches of about ``chunk_size`` rows, in row order or as they
    come."""
    selected = dataset.lazy().select(list(dict.fromkeys(names)))
    return selected.collect_batches(chunk_size=chunk_size, maintain_order=in_order)


def read_columns(
    dataset: Dataset, names: list[str], chunk_size: int, bar: _progress.Progress | None
) -> pl.DataFrame:
    """The columns in memory, read batch by batch (the rules that need every value)."""
    parts = []
    try:
        for batch in batches(dataset, names, chunk_size, in_order=True):
            parts.append(batch)
            if bar is not None:
                bar.update(batch.height)
    finally:
        if bar is not None:
            bar.close()
    if not parts:
        # An empty file: numpy's answer for empty columns of their dtypes, not of Null.
        return dataset.lazy().select(list(dict.fromkeys(names))).head(0).collect()
    return pl.concat(parts, rechunk=False)


def fill_frames(
    dataset: Dataset,
    names: list[str],
    expr: pl.Expr,
    cells: list[str],
    chunk_size: int,
    check: Callable[[pl.DataFrame], None] | None,
    bar: _progress.Progress | None,
) -> pl.DataFrame:
    """The expression's rows over every batch, in row order: each batch's rows (groups and
    bins, unnested), their ``count`` summed per cell (``cells``: the keys and edges), the
    cells in order of first appearance (groups as the expression orders them over the whole
    column). ``check`` sees every batch first (a range from the data checked)."""
    template = dataset.lazy().select(list(dict.fromkeys(names))).head(0).collect()
    total = _rows_of(template, expr)
    pending: list[pl.DataFrame] = []
    held = 0
    try:
        for batch in batches(dataset, names, chunk_size, in_order=True):
            if check is not None:
                check(batch)
            part = _rows_of(batch, expr)
            pending.append(part)
            held += part.height
            if held >= _MERGE_ROWS:
                total = _merged([total, *pending], cells)
                pending, held = [], 0
            if bar is not None:
                bar.update(batch.height)
        return _merged([total, *pending], cells)
    finally:
        if bar is not None:
            bar.close()


def _rows_of(frame: pl.DataFrame, expr: pl.Expr) -> pl.DataFrame:
    with query_errors():
        return frame.select(expr).to_series().struct.unnest()


def _merged(parts: list[pl.DataFrame], cells: list[str]) -> pl.DataFrame:
    if len(parts) == 1:
        return parts[0]
    together = pl.concat(parts, how="vertical")
    names = together.columns
    merged = together.group_by(cells, maintain_order=True).agg(pl.col("count").sum())
    return merged.select(names)


def check_batches(
    checks: list[passes.SameExtremes], columns: list[str], weights: str | None
) -> Callable[[pl.DataFrame], None]:
    """A batch's check of the extremes a first pass found (one per axis)."""

    def check(batch: pl.DataFrame) -> None:
        w = None if weights is None else batch.get_column(weights)
        for c, name in zip(checks, columns):
            c.batch(batch.get_column(name), w)

    return check
