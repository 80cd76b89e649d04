"""The ``gpu_hist`` namespace of LazyFrames and DataFrames: ``lf.gpu_hist.histogram(...)`` and
``lf.gpu_hist.hist(...)``, the frame the expression gives, computed in Polars' streaming engine
in bounded memory (the expression itself, inside a lazy query, gets its whole column at once:
Polars gathers the input of a function that is not elementwise). The work is the scan's
(``polars_gpu_hist._scan.frames``), imported on first use."""

from __future__ import annotations

from typing import Union

import polars as pl

from polars_gpu_hist._args.arguments import BinsArg, Closed, DdBinsArg, Device, HistBins, RangeArg

# Rows a batch holds where the lazy namespace reads batches in Python (groups, n-D flow bins).
_CHUNK_SIZE = 1 << 20

Columns = Union[str, list[str]]


class _FrameHistograms:
    """What the LazyFrame and DataFrame namespaces share."""

    def __init__(self, frame: pl.LazyFrame | pl.DataFrame) -> None:
        self._frame = frame

    def histogram(
        self,
        column: Columns,
        bins: BinsArg | DdBinsArg = 10,
        *,
        range: RangeArg | list[RangeArg] = None,
        weights: str | None = None,
        density: bool = False,
        closed: Closed = "left",
        flow: bool = False,
        device: Device = "auto",
        by: str | list[str] | None = None,
    ) -> pl.DataFrame:
        """The histogram of ``column`` (or of several columns, as :func:`histogramdd`) over
        the frame's rows: the frame ``select(pl.col(column).gpu_hist.histogram(...))`` gives
        (the same schema, counts and edges: one Struct column named like the column, one row
        per bin), computed by Polars' streaming engine in bounded memory.

        ``bins`` and the other arguments are the expression's. With ``bins=int`` and no
        ``range``, the range is the data's [min, max], found in a first pass (from Parquet
        statistics where they are exact, else by reading the column): the query runs twice.
        numpy's estimators that need every value (``"auto"``, ``"fd"``, ``"doane"``,
        ``"scott"``, ``"stone"``) and time bins read the columns into memory. ``by=`` keys (a
        column name or a list of them) stream too, batches read in row order: groups in order
        of first appearance, as the expression gives them.

        Examples
        --------
        >>> lf = pl.LazyFrame({"x": [0.5, 1.5, 1.5, 2.5, 9.0]})
        >>> lf.gpu_hist.histogram("x", bins=3, range=(0, 3)).unnest("x").rows()
        [(0.0, 1.0, 1), (1.0, 2.0, 2), (2.0, 3.0, 1)]
        """
        from polars_gpu_hist._scan import frames

        return frames.histogram(
            self._frame, column, bins, range, weights, density, closed, flow, device, by,
            _CHUNK_SIZE,
        )  # fmt: skip

    def hist(
        self,
        column: str,
        bins: HistBins = None,
        *,
        bin_count: int | None = None,
        include_category: bool = False,
        include_breakpoint: bool = False,
        device: Device = "auto",
    ) -> pl.DataFrame:
        """Polars' ``hist`` of ``column`` over the frame's rows: the frame
        ``select(pl.col(column).gpu_hist.hist(...))`` gives (Polars' right-closed bins,
        ``category`` labels and UInt32 ``count``), streamed: with ``bin_count`` a first pass
        finds Polars' breaks from the data's min and max.

        Examples
        --------
        >>> lf = pl.LazyFrame({"x": [0.5, 1.5, 1.5, 2.5, 9.0]})
        >>> lf.gpu_hist.hist("x", bins=[0, 1, 2, 3])["x"].to_list()
        [1, 2, 1]
        """
        from polars_gpu_hist._scan import frames

        return frames.hist(
            self._frame, column, bins, bin_count, include_category, include_breakpoint, device,
            _CHUNK_SIZE,
        )  # fmt: skip


@pl.api.register_lazyframe_namespace("gpu_hist")
class GpuHistLazyFrameNamespace(_FrameHistograms):
    """Histograms of a LazyFrame's columns, streamed: ``lf.gpu_hist.histogram("x", ...)``."""


@pl.api.register_dataframe_namespace("gpu_hist")
class GpuHistDataFrameNamespace(_FrameHistograms):
    """Histograms of a DataFrame's columns, as the LazyFrame namespace gives them:
    ``df.gpu_hist.histogram("x", ...)``."""


__all__ = ["GpuHistDataFrameNamespace", "GpuHistLazyFrameNamespace"]
