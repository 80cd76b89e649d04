"""CSV files as they come: the usual spellings of a missing value, timestamps parsed, and
errors that name the option that fixes them (``histogram_scan`` and the command line)."""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

# CSV files as they come: the spellings of a missing value that R (`NA`), spreadsheets, pandas
# and databases write, besides Polars' own (an empty field). "NaN" stays a float NaN.
CSV_NULL_VALUES = ("", "NA", "N/A", "n/a", "#N/A", "null", "NULL", "None")
# What a CSV scan gets unless `reader_options` says otherwise: those nulls, and timestamps parsed
# as Date/Datetime (so that a column of them can be histogrammed).
CSV_DEFAULTS: Mapping[str, object] = {
    "null_values": list(CSV_NULL_VALUES),
    "try_parse_dates": True,
}


def csv_retry(error: BaseException) -> bool:
    """Whether a CSV read failed on a value its inferred dtype cannot hold (a float after the
    integers of the first rows), which inferring from the whole file fixes."""
    return isinstance(error, pl.exceptions.ComputeError) and "could not parse" in str(error)


def csv_hint(error: BaseException, cli: bool = False) -> str:
    """Polars' message of a CSV parse failure, its first line, with the option that fixes it in
    the words of the API the user called (the command line's flags with ``cli``)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    # Polars' own line (the last of them where an earlier hint wraps it).
    first = next((x for x in reversed(lines) if x.startswith("could not parse")), None)
    if first is None:
        return lines[0] if lines else type(error).__name__
    value = first.split("`")[1] if first.count("`") >= 2 else ""
    if cli:
        fix = (
            f"if {value!r} marks a missing value, add --null-values {value!r}; otherwise the "
            "column holds values of two types (the dtypes were inferred from the whole file)"
        )
    else:
        fix = (
            f"if {value!r} marks a missing value, add it: reader_options={{'null_values': "
            f"['NA', ..., {value!r}]}}; otherwise give the column's dtype: "
            "reader_options={'schema_overrides': {column: dtype}}"
        )
    return f"{first}: {fix}"


class TextColumnError(TypeError):
    """A CSV column read as text (String), with its first value that is not a number."""

    def __init__(self, column: str, value: str | None) -> None:
        self.column, self.value = column, value
        super().__init__(self.message(cli=False))

    def message(self, cli: bool) -> str:
        """The message, naming the option that fixes it (the command line's flag with ``cli``)."""
        if self.value is None:
            return f"column {self.column!r} was read as text (String)"
        fix = (
            f"--null-values {self.value!r}"
            if cli
            else f"reader_options={{'null_values': ['NA', ..., {self.value!r}]}}"
        )
        return (
            f"column {self.column!r} was read as text (String): {self.value!r} is not a number; "
            f"if it marks a missing value, add it with {fix}"
        )


def text_column_error(lf: pl.LazyFrame, column: str) -> TextColumnError:
    """Why a CSV column was read as text: its first value that is not a number."""
    x = pl.col(column)
    odd = (
        lf.select(x)
        .filter(x.is_not_null() & x.str.strip_chars().cast(pl.Float64, strict=False).is_null())
        .head(1)
        .collect()
    )
    return TextColumnError(column, None if odd.height == 0 else odd.item())
