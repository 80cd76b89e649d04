"""The row-binning methods of the ``gpu_hist`` namespaces (expressions and Series): Polars'
``bin_intervals``, ``bin_quantiles``, ``bin_ranks``, ``cut`` and ``qcut`` with Polars'
arguments and results, and ``device``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from polars_gpu_hist._expr import row_binning as _rows
from polars_gpu_hist._expr.row_binning import Device, Labels


class RowBinningMethods:
    """``bin_intervals``, ``bin_quantiles``, ``bin_ranks``, ``cut``, ``qcut`` of an
    expression."""

    _expr: pl.Expr

    def bin_intervals(
        self,
        intervals: Sequence[Any] | pl.Series | int,
        *,
        labels: Labels,
        include_intervals: bool = False,
        right_closed: bool = False,
        device: Device = "auto",
    ) -> pl.Expr:
        """Polars 2's ``Expr.bin_intervals``: each row's interval among explicit breakpoints
        (elementwise: it streams), or among ``intervals`` equal steps over the column's
        ``[min, max]`` (breakpoints rounded to the column's dtype: integers and decimals to the
        first value of the bin above, floats to nearest).

        Parameters
        ----------
        intervals
            Non-decreasing breakpoints (numbers, dates, times; strings and categories go to
            Polars' own call), or a positive number of equal bins (numeric columns).
        labels
            One label per bin (an Enum), or ``False`` for the bin's UInt32 index.
        include_intervals
            A Struct of ``bin``, ``left`` and ``right`` (the bin's breakpoints in the dtype the
            column is compared in; null below the first and above the last).
        right_closed
            ``(left, right]`` bins instead of ``[left, right)``.
        device
            ``"auto"`` or ``"cpu"``: rows are binned on every CPU core. There is no GPU
            row-binning kernel yet: ``"gpu"`` raises ``NotImplementedError``.

        Examples
        --------
        >>> df = pl.DataFrame({"x": [-2, -1, 0, 1, 2]})
        >>> df.select(pl.col("x").gpu_hist.bin_intervals([-1, 1], labels=False))["x"].to_list()
        [0, 1, 1, 2, 2]
        """
        return _rows.bin_intervals_expr(
            self._expr,
            intervals,
            labels=labels,
            include_intervals=include_intervals,
            right_closed=right_closed,
            device=device,
        )

    def bin_quantiles(
        self,
        quantiles: Sequence[float] | int,
        *,
        labels: Labels,
        include_intervals: bool = False,
        right_closed: bool = False,
        device: Device = "auto",
    ) -> pl.Expr:
        """Polars 2's ``Expr.bin_quantiles``: bins between the data's own values at the
        quantiles (the sorted valid value at ``floor(q * (n - 1))``; ``k`` bins: at
        ``floor(i * (n - 1) / k)``, in integers), found without a sort; equal values share a
        bin, so a bin can be empty. Per group in ``over`` and ``group_by().agg()``.

        Examples
        --------
        >>> df = pl.DataFrame({"x": [1, 1, 2, 2]})
        >>> df.select(pl.col("x").gpu_hist.bin_quantiles([0.1, 0.25, 0.75], labels=False))[
        ...     "x"
        ... ].to_list()
        [2, 2, 3, 3]
        """
        return _rows.bin_quantiles_expr(
            self._expr,
            quantiles,
            labels=labels,
            include_intervals=include_intervals,
            right_closed=right_closed,
            device=device,
        )

    def bin_ranks(
        self,
        ranks: Sequence[float] | int,
        *,
        labels: Labels,
        include_intervals: bool = False,
        device: Device = "auto",
    ) -> pl.Expr:
        """Polars 2's ``Expr.bin_ranks``: bins by position in sorted order, equal values split
        in input order (a stable order, found without a sort); bin ``j`` starts at position
        ``round(r * n)`` (``k`` bins: ``n // k`` rows, the first ``n % k`` one more). The
        ``left``/``right`` of ``include_intervals`` are the values at the bins' starts.

        Examples
        --------
        >>> df = pl.DataFrame({"x": [1, 1, 2, 2]})
        >>> df.select(pl.col("x").gpu_hist.bin_ranks([0.25, 0.75], labels=False))["x"].to_list()
        [0, 1, 1, 2]
        """
        return _rows.bin_ranks_expr(
            self._expr,
            ranks,
            labels=labels,
            include_intervals=include_intervals,
            device=device,
        )

    def cut(
        self,
        breaks: Sequence[float],
        *,
        labels: Sequence[str] | None = None,
        left_closed: bool = False,
        include_breaks: bool = False,
        device: Device = "auto",
    ) -> pl.Expr:
        """Polars' ``Expr.cut`` (Polars 1 and 2; deprecated in Polars 2, as here): an Enum of
        ``(a, b]`` labels (``left_closed``: ``[a, b)``) from -inf to inf, the values compared
        as Float64; NaN rows are null. ``include_breaks`` gives a Struct of ``breakpoint`` (the
        bin's right end) and ``category``.

        Examples
        --------
        >>> import warnings
        >>> warnings.simplefilter("ignore", DeprecationWarning)
        >>> df = pl.DataFrame({"x": [-2, -1, 0, 1, 2]})
        >>> df.select(pl.col("x").gpu_hist.cut([-1, 1]))["x"].to_list()
        ['(-inf, -1]', '(-inf, -1]', '(-1, 1]', '(-1, 1]', '(1, inf]']
        """
        return _rows.cut_expr(
            self._expr,
            breaks,
            labels=labels,
            left_closed=left_closed,
            include_breaks=include_breaks,
            device=device,
        )

    def qcut(
        self,
        quantiles: Sequence[float] | int,
        *,
        labels: Sequence[str] | None = None,
        left_closed: bool = False,
        allow_duplicates: bool = False,
        include_breaks: bool = False,
        device: Device = "auto",
    ) -> pl.Expr:
        """Polars' ``Expr.qcut`` (Polars 1 and 2; deprecated in Polars 2, as here): a
        Categorical of ``cut``'s labels between Polars' linear quantiles of the column (as
        Float64, NaN left out); NaN rows are null. Repeated quantiles raise ``DuplicateError``
        unless ``allow_duplicates``.

        Examples
        --------
        >>> import warnings
        >>> warnings.simplefilter("ignore", DeprecationWarning)
        >>> df = pl.DataFrame({"x": [-2, -1, 0, 1, 2]})
        >>> df.select(pl.col("x").gpu_hist.qcut([0.25, 0.75], labels=["a", "b", "c"]))[
        ...     "x"
        ... ].to_list()
        ['a', 'a', 'b', 'b', 'c']
        """
        return _rows.qcut_expr(
            self._expr,
            quantiles,
            labels=labels,
            left_closed=left_closed,
            allow_duplicates=allow_duplicates,
            include_breaks=include_breaks,
            device=device,
        )


def _of_series(series: pl.Series, expr: pl.Expr) -> pl.Series:
    name = series.name
    return series.to_frame(name).select(expr).to_series()


class RowBinningSeriesMethods:
    """The same methods on a Series (results as Series)."""

    _series: pl.Series

    def bin_intervals(
        self,
        intervals: Sequence[Any] | pl.Series | int,
        *,
        labels: Labels,
        include_intervals: bool = False,
        right_closed: bool = False,
        device: Device = "auto",
    ) -> pl.Series:
        """Polars 2's ``Series.bin_intervals`` (see the expression's ``gpu_hist.bin_intervals``).

        Examples
        --------
        >>> s = pl.Series("x", [-2, -1, 0, 1, 2])
        >>> s.gpu_hist.bin_intervals([-1, 1], labels=["a", "b", "c"]).to_list()
        ['a', 'b', 'b', 'c', 'c']
        """
        expr = _rows.bin_intervals_expr(
            pl.col(self._series.name),
            intervals,
            labels=labels,
            include_intervals=include_intervals,
            right_closed=right_closed,
            device=device,
        )
        return _of_series(self._series, expr)

    def bin_quantiles(
        self,
        quantiles: Sequence[float] | int,
        *,
        labels: Labels,
        include_intervals: bool = False,
        right_closed: bool = False,
        device: Device = "auto",
    ) -> pl.Series:
        """Polars 2's ``Series.bin_quantiles`` (see the expression's method)."""
        expr = _rows.bin_quantiles_expr(
            pl.col(self._series.name),
            quantiles,
            labels=labels,
            include_intervals=include_intervals,
            right_closed=right_closed,
            device=device,
        )
        return _of_series(self._series, expr)

    def bin_ranks(
        self,
        ranks: Sequence[float] | int,
        *,
        labels: Labels,
        include_intervals: bool = False,
        device: Device = "auto",
    ) -> pl.Series:
        """Polars 2's ``Series.bin_ranks`` (see the expression's method)."""
        expr = _rows.bin_ranks_expr(
            pl.col(self._series.name),
            ranks,
            labels=labels,
            include_intervals=include_intervals,
            device=device,
        )
        return _of_series(self._series, expr)

    def cut(
        self,
        breaks: Sequence[float],
        *,
        labels: Sequence[str] | None = None,
        left_closed: bool = False,
        include_breaks: bool = False,
        device: Device = "auto",
    ) -> pl.Series:
        """Polars' ``Series.cut`` (see the expression's method)."""
        expr = _rows.cut_expr(
            pl.col(self._series.name),
            breaks,
            labels=labels,
            left_closed=left_closed,
            include_breaks=include_breaks,
            device=device,
        )
        return _of_series(self._series, expr)

    def qcut(
        self,
        quantiles: Sequence[float] | int,
        *,
        labels: Sequence[str] | None = None,
        left_closed: bool = False,
        allow_duplicates: bool = False,
        include_breaks: bool = False,
        device: Device = "auto",
    ) -> pl.Series:
        """Polars' ``Series.qcut`` (see the expression's method)."""
        expr = _rows.qcut_expr(
            pl.col(self._series.name),
            quantiles,
            labels=labels,
            left_closed=left_closed,
            allow_duplicates=allow_duplicates,
            include_breaks=include_breaks,
            device=device,
        )
        return _of_series(self._series, expr)
