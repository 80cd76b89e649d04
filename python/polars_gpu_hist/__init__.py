"""Numpy-exact histograms of Polars columns, on NVIDIA GPUs and all CPU cores.

Importing this package registers the ``gpu_hist`` expression namespace::

    import polars as pl
    import polars_gpu_hist  # noqa: F401

    df.select(pl.col("x").gpu_hist.histogram(bins=100))
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Union

import polars as pl
from polars.plugins import register_plugin_function

from polars_gpu_hist._internal import __version__

if TYPE_CHECKING:
    from typing_extensions import TypeAlias

__all__ = ["GpuHistNamespace", "__version__", "histogram", "histogram_expr"]

_PLUGIN_PATH = Path(__file__).parent

BinsArg: TypeAlias = Union[int, Sequence[float]]
RangeArg: TypeAlias = Union[tuple[float, float], Sequence[float], None]
Closed: TypeAlias = Literal["left", "right"]
Device: TypeAlias = Literal["auto", "cpu", "gpu"]


def _bins(bins: Any) -> int | list[float]:
    """An int (numpy integers too) or a list of float edges (any sequence or array)."""
    if isinstance(bins, bool) or isinstance(bins, (str, bytes)):
        raise TypeError(f"`bins` must be an int or a sequence of edges, got {bins!r}")
    try:
        count = operator.index(bins)
    except TypeError:
        pass
    else:
        if count < 1:
            raise ValueError(f"`bins` must be a positive integer, got {count}")
        return count
    try:
        return [float(edge) for edge in bins]
    except TypeError:
        raise TypeError(
            f"`bins` must be an int or a sequence of edges, got {type(bins).__name__}"
        ) from None


def _range(range: Any) -> tuple[float, float] | None:
    if range is None:
        return None
    try:
        lo, hi = range
        return float(lo), float(hi)
    except (TypeError, ValueError):
        raise TypeError(f"`range` must be a pair (min, max), got {range!r}") from None


def _kwargs(bins: Any, range: Any, density: bool, closed: str, device: str) -> dict[str, Any]:
    return {
        "bins": _bins(bins),
        "range": _range(range),
        "density": bool(density),
        "closed": str(closed),
        "device": str(device),
    }


def histogram_expr(
    expr: pl.Expr | str,
    bins: BinsArg = 10,
    *,
    range: RangeArg = None,
    weights: pl.Expr | str | None = None,
    density: bool = False,
    closed: Closed = "left",
    device: Device = "auto",
) -> pl.Expr:
    """The histogram of ``expr`` as an expression; see :meth:`GpuHistNamespace.histogram`."""
    args = [pl.col(expr) if isinstance(expr, str) else expr]
    if weights is not None:
        args.append(pl.col(weights) if isinstance(weights, str) else weights)
    return register_plugin_function(
        plugin_path=_PLUGIN_PATH,
        function_name="histogram",
        args=args,
        kwargs=_kwargs(bins, range, density, closed, device),
        is_elementwise=False,
        changes_length=True,
    )


@pl.api.register_expr_namespace("gpu_hist")
class GpuHistNamespace:
    """Histograms of an expression: ``pl.col("x").gpu_hist.histogram(...)``."""

    def __init__(self, expr: pl.Expr) -> None:
        self._expr = expr

    def histogram(
        self,
        bins: BinsArg = 10,
        *,
        range: RangeArg = None,
        weights: pl.Expr | str | None = None,
        density: bool = False,
        closed: Closed = "left",
        device: Device = "auto",
    ) -> pl.Expr:
        """One row per bin: a Struct with fields ``bin_start``, ``bin_end`` and ``count``.

        Counts are identical to ``numpy.histogram`` with the same arguments; nulls, NaN and
        values outside the bins are not counted.

        Parameters
        ----------
        bins
            The number of equal-width bins over ``range`` (or over the [min, max] of the
            column's valid values), or a sequence of strictly increasing edges.
        range
            ``(min, max)`` of the equal-width bins. Not allowed with explicit edges.
        weights
            A column name or expression of the same length: ``count`` becomes the sum of the
            weights in each bin (Float64). A null in either the value or its weight skips the row.
        density
            numpy's density: ``count / bin width / total``, so the histogram integrates to 1.
        closed
            ``"left"``: bins ``[a, b)`` with the last bin closed, as numpy.
            ``"right"``: bins ``(a, b]`` with the first bin closed, as Polars' ``Expr.hist``.
        device
            ``"auto"`` (the fastest available), ``"cpu"`` or ``"gpu"``.

        Returns
        -------
        pl.Expr
            A Struct column with one row per bin; in ``group_by().agg()`` a list of them per group.
            ``bin_start``/``bin_end`` are Float64, or the column's own dtype for Date, Datetime
            and Duration. ``count`` is UInt64, or Float64 with ``weights`` or ``density``.
        """
        return histogram_expr(
            self._expr,
            bins,
            range=range,
            weights=weights,
            density=density,
            closed=closed,
            device=device,
        )


def histogram(
    data: Any,
    bins: BinsArg = 10,
    *,
    range: RangeArg = None,
    weights: Any = None,
    density: bool = False,
    closed: Closed = "left",
    device: Device = "auto",
) -> pl.DataFrame:
    """The histogram of a Series or array-like as a DataFrame (``bin_start``, ``bin_end``,
    ``count``), with the same arguments and results as the ``gpu_hist.histogram`` expression.
    """
    x = data if isinstance(data, pl.Series) else pl.Series("x", data)
    frame = pl.DataFrame({"x": x})
    w = None
    if weights is not None:
        frame = frame.with_columns(
            w=weights if isinstance(weights, pl.Series) else pl.Series("w", weights)
        )
        w = "w"
    out = frame.select(
        histogram_expr(
            "x", bins, range=range, weights=w, density=density, closed=closed, device=device
        )
    )
    return out.unnest("x")
