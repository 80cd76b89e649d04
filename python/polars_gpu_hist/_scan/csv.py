"""CSV files as they come: the usual spellings of a missing value, timestamps parsed, and
errors that name the option that fixes them (``histogram_scan`` and the command line)."""

from __future__ import annotations

import re
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


# A number as Polars' CSV reader infers one ("1", "-2.5e3", "NaN"), the others castable.
_PLAIN_NUMBER = r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^NaN$"
# A field that is a number written with a decimal comma ("1,5", "-0,25"): no null marker.
_DECIMAL_COMMA = r"^\s*[-+]?\d*,\d+\s*$"


class TextColumnError(TypeError):
    """A CSV column read as text (String): why, with a value that shows it and the option that
    fixes it. `kind` is ``"empty"`` (no value at all: every field empty or a missing-value
    marker), ``"decimal comma"`` (``"1,5"``), ``"number"`` (numbers Polars' CSV reader does not
    infer as such: ``"nan"``, ``"inf"``, padded ones), or ``"text"`` (a value that is no
    number, such as an unlisted missing-value marker)."""

    def __init__(self, column: str, value: str | None, kind: str = "text") -> None:
        self.column, self.value, self.kind = column, value, kind
        super().__init__(self.message(cli=False))

    def message(self, cli: bool) -> str:
        """The message, naming the option that fixes it (the command line's flag with ``cli``)."""
        head = f"column {self.column!r} was read as text (String)"
        if self.kind == "empty" or self.value is None:
            fix = (
                "drop the column or the file"
                if cli
                else f"reader_options={{'schema_overrides': {{{self.column!r}: pl.Float64}}}}"
            )
            return (
                f"{head}: it holds no value, every field empty or a missing-value marker "
                f"({', '.join(map(repr, CSV_NULL_VALUES[1:4]))}, ...); to histogram it as empty, "
                f"give its dtype: {fix}"
            )
        if self.kind == "decimal comma":
            fix = "--decimal-comma" if cli else "reader_options={'decimal_comma': True}"
            return (
                f"{head}: {self.value!r} is a number written with a decimal comma; read the "
                f"file with {fix} (and its field separator, often ';')"
            )
        if self.kind == "number":
            overrides = f"reader_options={{'schema_overrides': {{{self.column!r}: pl.Float64}}}}"
            fix = f"histogram_scan(..., {overrides}), or rewrite them" if cli else overrides
            padded = self.value != self.value.strip()
            why = (
                "a number padded with spaces"
                if padded
                else "a number Polars' CSV reader does not infer as one"
            )
            return f"{head}: {self.value!r} is {why}; give the column's dtype: {fix}" + (
                " (and strip the spaces after the numbers: Polars parses leading ones only)"
                if self.value != self.value.rstrip()
                else ""
            )
        fix = (
            f"--null-values {self.value!r}"
            if cli
            else f"reader_options={{'null_values': ['NA', ..., {self.value!r}]}}"
        )
        return (
            f"{head}: {self.value!r} is not a number; if it marks a missing value, add it with "
            f"{fix}"
        )


def text_column_error(lf: pl.LazyFrame, column: str) -> TextColumnError:
    """Why a CSV column was read as text, shown by one of its values: one that is no number
    (a decimal comma, or text), else one that is a number Polars' reader did not take as one."""
    x = pl.col(column)
    found = (
        lf.select(
            x.filter(x.is_not_null() & x.str.strip_chars().cast(pl.Float64, strict=False).is_null())
            .first()
            .alias("odd"),
            x.filter(x.is_not_null() & ~x.str.contains(_PLAIN_NUMBER)).first().alias("unusual"),
        )
        .collect()
        .row(0)
    )
    odd, unusual = found
    if odd is not None:
        kind = "decimal comma" if re.match(_DECIMAL_COMMA, odd) else "text"
        return TextColumnError(column, odd, kind)
    if unusual is None:
        return TextColumnError(column, None, "empty")
    return TextColumnError(column, unusual, "number")
