"""What the engine would do with a histogram, and why: the decision a call runs, printed."""

from __future__ import annotations

from typing import Any, Literal, cast

import polars as pl

from polars_gpu_hist import _native
from polars_gpu_hist._args import arguments as _args
from polars_gpu_hist._args.arguments import BinsArg, Closed, Device, Kernel, RangeArg
from polars_gpu_hist._native import cuda_arrays as _cuda
from polars_gpu_hist._native import options as _options


class Explanation(str):
    """The text of :func:`explain`, shown as text where it is shown (a notebook cell's last
    line, the REPL), not as an escaped string."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))

    def _repr_html_(self) -> str:
        import html

        return f"<pre style='white-space:pre-wrap'>{html.escape(str(self))}</pre>"


def explain(
    data: Any,
    bins: BinsArg = 10,
    *,
    range: RangeArg = None,
    weights: bool | str = False,
    closed: Closed = "left",
    flow: bool = False,
    device: Device = "auto",
    kernel: Kernel = "auto",
    column: str | list[str] | None = None,
    by: str | list[str] | None = None,
) -> str:
    """Which backend would compute this histogram and why; on the GPU, which GPU, the kernels,
    grid and shared memory the plan chooses, and where compiled kernels are kept. ``data`` is a
    Series, an array (host or GPU) or a dtype (then for 2^29 rows). The text (a ``str``)
    shows as text in a notebook and the REPL.

    ``data`` may be a LazyFrame (or DataFrame): with ``column``, the plan of
    ``lf.gpu_hist.histogram(column, bins, ...)`` (``weights`` a column name, ``by`` keys): its
    passes, what each reads (the files' Parquet statistics, or the column) and where the fill
    counts. Without ``column``, what the query's own ``gpu_hist`` expressions do: each gets its
    whole input column at once (Polars gathers the input of a plugin expression that is not
    elementwise, whatever the engine), and the lazy namespace is the way to stream.
    """
    __tracebackhide__ = True
    if isinstance(data, (pl.DataFrame, pl.LazyFrame)):
        text = _explain_frame(data, column, bins, range, weights, closed, flow, device, by)
    else:
        text = _explain(data, bins, range, bool(weights), closed, flow, device, kernel)
    return Explanation(text)


def _explain(
    data: Any,
    bins: BinsArg,
    range: RangeArg,
    weights: bool,
    closed: Closed,
    flow: bool,
    device: Device,
    kernel: Kernel,
) -> str:
    __tracebackhide__ = True
    if isinstance(data, (pl.Expr, str)):
        what = "a column name" if isinstance(data, str) else f"a Polars {type(data).__name__}"
        raise TypeError(
            f"explain takes the data or its dtype, got {what}: an expression's dtype and length "
            "are known only when it runs; pass the column (df['x']) or its dtype "
            "(df.schema['x'], then for 2^29 rows), or a LazyFrame and column=..."
        )
    kwargs = _options.pickled_histogram_options(
        _args.histogram_kwargs(
            bins, range, density=False, closed=closed, flow=flow, device=device, kernel=kernel
        )
    )
    # The dtype crosses as an empty Series of it (every dtype can, not every dtype object can).
    iface = _cuda.cuda_array(data)
    if iface is not None:
        empty = pl.Series(values=[], dtype=_dtype_of_typestr(iface["typestr"]))
        rows = iface["shape"][0]
        # The GPU holding the array counts it: found from its address (none for no rows).
        ordinal = _native.device_of(iface["data"][0], "`data`") if rows else None
        return _native.explain(empty, rows, kwargs, bool(weights), "device", ordinal)
    if isinstance(data, (pl.DataType, type)):
        try:
            # A type that is no Polars dtype class is refused by Polars, below.
            empty = pl.Series(values=[], dtype=cast("pl.DataType", data))
        except (TypeError, ValueError, pl.exceptions.PolarsError) as e:
            raise TypeError(f"explain takes a Series, an array or a Polars dtype: {e}") from None
        _args.refuse_object(empty)
        return _native.explain(empty, 1 << 29, kwargs, bool(weights), "host")
    s = data if isinstance(data, pl.Series) else pl.Series(data)
    _args.refuse_object(s)
    ordinal = _native.pinned_device(s)
    location: Literal["pinned", "host"] = "host" if ordinal is None else "pinned"
    return _native.explain(s.clear(), len(s), kwargs, bool(weights), location, ordinal)


def _explain_frame(
    frame: pl.DataFrame | pl.LazyFrame,
    column: str | list[str] | None,
    bins: Any,
    range: Any,
    weights: bool | str,
    closed: Closed,
    flow: bool,
    device: Device,
    by: Any,
) -> str:
    """The lazy namespace's plan for ``column``, or what the query's expressions do."""
    from polars_gpu_hist._scan import plan as _plan
    from polars_gpu_hist._scan import scan as _scan
    from polars_gpu_hist._scan.source import open_dataset

    if column is None:
        return _explain_query(frame.lazy())
    if isinstance(weights, bool):
        if weights:
            raise TypeError("`weights` of a frame's column is a column name (str)")
        weights = None  # type: ignore[assignment]
    r = _plan.request(
        column, bins, range, weights or None, closed, device, 1 << 20, by,
        flow=flow, data_range_by_default=True,
    )  # fmt: skip
    return str(_scan.planned(open_dataset(frame), r))


def _explain_query(lf: pl.LazyFrame) -> str:
    """What the query's gpu_hist expressions do: each reads its whole input into memory."""
    library = next(
        (p.name for p in _native.PLUGIN_PATH.iterdir() if p.suffix in (".so", ".pyd", ".dll")),
        "_internal",
    )
    plan = lf.explain()
    calls = sorted(
        {
            line.split(f"{library}:")[1].split("(")[0]
            for line in plan.splitlines()
            if f"{library}:" in line
        }
    )
    calls = [c for c in calls if c in ("histogram", "histogram_by", "histogramdd", "hist")]
    if not calls:
        return (
            "this query holds no gpu_hist expression; lf.gpu_hist.histogram(column, ...) "
            "histograms a column of it, streamed"
        )
    names = ", ".join(f"gpu_hist {c}" for c in calls)
    return (
        f"this query runs {names}: Polars gives a plugin expression that is not elementwise "
        "its whole input column at once, whatever the engine (the streaming engine gathers it "
        "in memory first), so the column is read into memory before it is counted. To count a "
        "file's column as it is read, in bounded memory, use the LazyFrame's namespace: "
        "lf.gpu_hist.histogram(column, bins=..., ...) (or gh.histogram_scan(files, column, "
        "...)), which gives the same frame."
    )


def _dtype_of_typestr(typestr: str) -> pl.DataType:
    import numpy as np

    return pl.Series(np.empty(0, dtype=np.dtype(typestr))).dtype
