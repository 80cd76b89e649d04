"""Command line: the histogram of a column of a Parquet/CSV/IPC file, or of a demo data set.

python -m polars_gpu_hist data.parquet --column x --bins 40 --plot hist.png
python -m polars_gpu_hist data.csv -b -50,0,50  # explicit edges
python -m polars_gpu_hist data.csv -b fd        # numpy's estimators; `integer`: one bin per integer
python -m polars_gpu_hist                      # a generated demo data set

Files are read in bounded batches (``histogram_scan``), so they may be larger than memory;
without ``--range`` equal bins span the column's [min, max], found in a first pass (the file
is then read twice), and so do ``integer``, ``sturges``, ``rice`` and ``sqrt``. numpy's
``auto``, ``fd``, ``doane``, ``scott`` and ``stone`` need every value: the column is read into
memory (it must fit there). A line under the bars accounts for every row: counted, null, NaN,
below and above the range.

CSV files are read as they come (``histogram_scan``'s defaults): ``NA`` and the other usual
spellings of a missing value are nulls (``--null-values`` adds more), timestamps are parsed as
Date/Datetime, and where the dtypes of the first rows do not hold the whole file decides them.
``--where`` keeps the rows of a SQL predicate; ``--by`` draws one histogram per group of one or
more key columns (one binning for all, groups in order of first appearance). A directory of
files (hive-partitioned ones too: ``data/year=2024/*.parquet``) is read whole.

A bad argument, a file that cannot be read or a column that cannot be histogrammed prints one
``error: ...`` line on stderr and exits with status 2 (arguments are checked before the data is
read); success exits with 0.
"""

from __future__ import annotations

import argparse
import difflib
import math
import os
import re
import sys
import time
from pathlib import Path
from typing import Any, Literal

import polars as pl

from polars_gpu_hist import plot
from polars_gpu_hist._args import arguments as _args
from polars_gpu_hist._args.arguments import BIN_RULES
from polars_gpu_hist._histogram.histogram import Histogram
from polars_gpu_hist._scan.csv import CSV_NULL_VALUES, TextColumnError, csv_hint, text_column_error
from polars_gpu_hist._scan.passes import SUPPORTED_DTYPES, supported_dtype
from polars_gpu_hist._scan.scan import grouped, histogram_scan
from polars_gpu_hist._scan.source import is_csv, scan_source

PLOT_SUFFIXES = (".html", ".json", ".png", ".svg")
# Altair writes these through vl-convert; .html and .json need Altair only.
RENDERED_SUFFIXES = (".png", ".svg")
PLOT_INSTALL = "pip install polars-gpu-hist[plot]"


class UsageError(Exception):
    """A bad argument, file or column: one ``error:`` line on stderr and exit status 2."""


class _Parser(argparse.ArgumentParser):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # Values may be negative numbers (`-b -50,0,50`, `-r -1e3 5`), which argparse takes for
        # options unless they are plain integers or decimals. No option here starts with a
        # dash and a digit, so any such token is a value.
        self._negative_number_matcher = re.compile(r"^-\.?\d")

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message}{self._suggestion(message)} (see --help)")

    def _suggestion(self, message: str) -> str:
        """ "did you mean ...?" for a misspelt flag or choice (argparse has it from Python 3.14
        only)."""
        if message.startswith("unrecognized arguments: "):
            known = [o for o in self._option_string_actions if o.startswith("--")]
            tokens = [t for t in message.split(": ", 1)[1].split() if t.startswith("--")]
            guesses = [(t, close(t, known)) for t in tokens]
            return "".join(f"; {t}: did you mean {g}?" for t, g in guesses if g)
        choice = re.search(r"invalid choice: '?([^' ]+)'? \(choose from (.*)\)", message)
        if choice:
            options = [c.strip(" '") for c in choice.group(2).split(",")]
            guess = close(choice.group(1), options)
            return f"; did you mean {guess}?" if guess else ""
        return ""


def close(word: str, options: Any) -> str | None:
    """The option nearest to a misspelt ``word``, if one is near."""
    found = difflib.get_close_matches(word.split("=")[0], list(options), n=1, cutoff=0.6)
    return found[0] if found else None


def bins_arg(text: str) -> int | str | list[float]:
    """``--bins``: a number of equal bins, comma-separated edges, a rule (numpy's estimators,
    or ``integer``), or time bins (a Polars duration such as ``1h``, ``1w``, ``1mo``)."""
    if text in BIN_RULES or _args.is_time_bins(text):
        try:
            _args.bins(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        return text
    if "," not in text:
        try:
            count = int(text)
        except ValueError:
            guess = close(text, BIN_RULES)
            raise argparse.ArgumentTypeError(
                f"{text!r} is neither a number of bins, comma-separated edges, a rule nor time "
                f"bins (e.g. 20, -50,0,50, one of {', '.join(BIN_RULES)}, or 1h, 1d, 1w, 1mo)"
                + (f"; did you mean {guess}?" if guess else "")
            ) from None
        if count < 1:
            raise argparse.ArgumentTypeError(f"the number of bins must be at least 1, got {count}")
        return count
    edges: list[float] = []
    for part in text.split(","):
        try:
            # Integers stay integers: an integer or temporal column compares them exactly.
            edges.append(int(part) if part.strip().lstrip("+-").isdigit() else float(part))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"edge {part.strip()!r} of {text!r} is not a number: edges are comma-separated "
                "numbers, e.g. -50,0,50"
            ) from None
    for a, b in zip(edges, edges[1:]):
        if not a < b:
            raise argparse.ArgumentTypeError(
                f"edges must increase strictly, got {a:g} before {b:g} in {text!r}"
            )
    return edges


def _int_at_least(low: int) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value

    return parse


DEMO_SCHEMA = pl.Schema({"x": pl.Float64})
DEMO_ROWS = 10_000_000
# More bins than this print the first and last half of it, an elision line and the fullest bin.
MAX_LINES = 40


def demo_frame(rows: int = DEMO_ROWS, seed: int = 0) -> pl.LazyFrame:
    """Two overlapping normal populations (float64) with a NaN every 1000 rows."""
    import numpy as np

    rng = np.random.default_rng(seed)
    a = rng.normal(0.0, 1.0, rows - rows // 3)
    b = rng.normal(3.0, 0.5, rows // 3)
    x = np.concatenate([a, b])
    rng.shuffle(x)
    x[::1000] = np.nan
    return pl.LazyFrame({"x": x})


def reader_options(args: argparse.Namespace) -> dict[str, Any] | None:
    """Polars' scanner options from the CSV flags (``None`` for other files, which take none)."""
    csv = {
        "null_values": [*CSV_NULL_VALUES, *(args.null_values or [])],
        "try_parse_dates": args.try_parse_dates,
    }
    if args.separator is not None:
        csv["separator"] = args.separator
    if args.infer_schema_length is not None:
        csv["infer_schema_length"] = args.infer_schema_length or None
    if args.file is not None and is_csv(str(args.file)):
        return csv
    given = [
        flag
        for flag, value in (
            ("--null-values", args.null_values),
            ("--separator", args.separator),
            ("--infer-schema-length", args.infer_schema_length),
        )
        if value is not None
    ]
    if given:
        raise UsageError(f"{', '.join(given)} are for CSV files; {args.file or 'demo data'} is not")
    return None


def scan(path: Path, options: dict[str, Any] | None = None) -> pl.LazyFrame:
    """The file as a LazyFrame whose schema could be read; ``UsageError`` otherwise."""
    try:
        lf = scan_source(path, options)
        lf.collect_schema()
    except (FileNotFoundError, ValueError, TypeError) as e:
        raise UsageError(_one_line(e)) from None
    except (pl.exceptions.PolarsError, OSError) as e:
        raise UsageError(f"cannot read {path}: {_one_line(e)}") from None
    return lf


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = _Parser(
        prog="polars-gpu-hist",
        description="Histogram a column of a Parquet/CSV/IPC file (or a demo data set).",
        epilog="Errors print one 'error: ...' line and exit with status 2.",
    )
    p.add_argument("file", nargs="?", type=Path, help="Parquet, CSV or IPC file; demo data if none")
    p.add_argument(
        "-c",
        "--column",
        help="column to histogram (default: the first numeric or temporal one, not --weights, "
        "with more than one distinct value)",
    )
    p.add_argument(
        "-b",
        "--bins",
        default=20,
        type=bins_arg,
        help="number of equal bins, comma-separated edges such as -50,0,50, or a rule: "
        "numpy's estimators auto, fd, doane, scott, stone, rice, sturges, sqrt, or integer "
        "(one bin per integer), or time bins of a date/time column: a Polars duration such as "
        "1h, 1d, 1w, 1mo, 1q, 1y or 90m (calendar bins in the column's time zone); auto, fd, "
        "doane, scott, stone and time bins read the column into memory (default 20)",
    )
    p.add_argument("-r", "--range", nargs=2, type=float, metavar=("MIN", "MAX"))
    p.add_argument("-w", "--weights", help="column of weights")
    p.add_argument("--density", action="store_true", help="normalize to a density")
    p.add_argument(
        "--closed",
        choices=["left", "right"],
        default="left",
        help="left: [a, b) bins, the last [a, b] (numpy); right: (a, b], the first [a, b]",
    )
    p.add_argument("--device", choices=["auto", "cpu", "gpu"], default="auto")
    p.add_argument(
        "--rows",
        type=_int_at_least(1),
        help=f"rows of the demo data (default {DEMO_ROWS:,}); not for a file (--where keeps "
        "some of its rows)",
    )
    p.add_argument(
        "--where",
        metavar="EXPR",
        help="only the rows where this SQL predicate holds, e.g. \"origin = 'JFK'\"",
    )
    p.add_argument(
        "--by",
        action="append",
        metavar="KEY",
        help="one histogram per group of this key column (comma-separated or repeated for "
        "several keys); groups in order of first appearance, one binning for all",
    )
    csv = p.add_argument_group("CSV files")
    csv.add_argument(
        "--null-values",
        action="append",
        metavar="TEXT",
        help=f"a spelling of a missing value, besides {', '.join(map(repr, CSV_NULL_VALUES))} "
        "(repeat the flag for more)",
    )
    csv.add_argument("--separator", help="the field separator (default ',', '\\t' for .tsv)")
    csv.add_argument(
        "--infer-schema-length",
        type=_int_at_least(0),
        metavar="ROWS",
        help="rows read to infer the dtypes, 0 for the whole file (default: Polars' 100, then "
        "the whole file where they do not hold)",
    )
    csv.add_argument(
        "--try-parse-dates",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="parse timestamps as Date/Datetime (default: yes)",
    )
    p.add_argument(
        "--plot",
        type=Path,
        help=f"also write a chart ({', '.join(PLOT_SUFFIXES)}; needs {PLOT_INSTALL})",
    )
    p.add_argument("--width", type=_int_at_least(0), default=50, help="width of the terminal bars")
    p.add_argument(
        "--all-bins",
        action="store_true",
        help=f"print every bin (by default, more than {MAX_LINES} bins print the first and last "
        f"{MAX_LINES // 2} and the fullest)",
    )
    p.add_argument(
        "--progress",
        action="store_true",
        help="show a progress bar on stderr, ending with a line of the rows read (by default "
        "one is shown when stderr is a terminal and reading takes over half a second)",
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Runs the command line; returns the exit status (2 after an ``error:`` line)."""
    try:
        return run(parse_args(argv))
    except UsageError as e:
        print(f"error: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader left (`| head`): no traceback, and none at exit when stdout is flushed.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except (Exception, pl.exceptions.PanicException) as e:
        # A bug, not a usage error: still one line, with what to report.
        print(
            f"error: internal error, please report it: {type(e).__name__}: {_one_line(e)}",
            file=sys.stderr,
        )
        return 1


def run(args: argparse.Namespace) -> int:
    plot_path = None if args.plot is None else check_plot_path(args.plot)
    if args.file is not None and args.rows is not None:
        raise UsageError(
            f"--rows sets the size of the demo data, not of {args.file}: drop it, or keep some "
            "rows with --where"
        )
    options = reader_options(args)
    if args.file is None:
        source, schema = "demo data", DEMO_SCHEMA
    else:
        source, lf = str(args.file), scan(args.file, options)
        schema = lf.collect_schema()
        wanted = [n for n in (args.column, args.weights) if n in schema]
        if (
            options is not None
            and "infer_schema_length" not in options
            and any(schema[n] == pl.String for n in wanted)
        ):
            # Only nulls (or a stray word) in the first rows: the whole file decides.
            lf = scan(args.file, {**options, "infer_schema_length": None})
            schema = lf.collect_schema()
        if options is not None and args.column in schema and schema[args.column] == pl.String:
            raise UsageError(text_column_error(lf, args.column).message(cli=True))
    keys = by_keys(args.by, schema, source)
    column = choose_column(
        schema, args.column, args.weights, source, None if args.file is None else lf, keys
    )
    bins = args.bins
    t0 = time.perf_counter()
    scanned: Histogram | None = None
    try:
        # Asked for, a bar from the start; else one on a terminal for a long read.
        progress: Literal[True, "auto"] = True if args.progress else "auto"
        auto = args.range is None and isinstance(bins, int)
        data = demo_frame(args.rows or DEMO_ROWS) if args.file is None else args.file
        common: dict[str, Any] = {
            "range": "auto" if auto else args.range,
            "weights": args.weights,
            "closed": args.closed,
            "device": args.device,
            "progress": progress,
            "reader_options": options,
            "where": args.where,
        }
        if keys:
            hist = grouped(data, column, bins, by=keys, density=args.density, **common)
        else:
            scanned = histogram_scan(data, column, bins, **common)
            hist = scanned.to_frame(density=args.density)
    except TextColumnError as e:
        raise UsageError(e.message(cli=True)) from None
    except pl.exceptions.ComputeError as e:
        if "could not parse" in str(e):
            raise UsageError(csv_hint(e, cli=True)) from None
        raise UsageError(_one_line(e)) from None
    except (pl.exceptions.PolarsError, ValueError, TypeError, RuntimeError, OSError) as e:
        raise UsageError(_one_line(e)) from None
    except MemoryError:
        raise UsageError("out of memory") from None
    elapsed = time.perf_counter() - t0
    if scanned is None:
        groups = hist.select(keys).unique().height
        print(
            f"{source}: column {column!r} by {', '.join(map(repr, keys))}, {groups:,} groups "
            f"of {hist.height // max(groups, 1):,} bins, {elapsed * 1e3:.1f} ms"
        )
        print(plot.bars(hist, closed=args.closed, width=args.width))
        print(group_summary(hist, keys, args.density))
    else:
        print(f"{source}: column {column!r}, {hist.height:,} bins, {elapsed * 1e3:.1f} ms")
        limit = None if args.all_bins else MAX_LINES
        print(
            terminal_bars(
                hist, closed=args.closed, width=args.width, max_lines=limit, density=args.density
            )
        )
        print(summary(scanned))
    if plot_path is not None:
        try:
            plot.save(hist, plot_path, title=f"{column} ({source})")
        except (OSError, ValueError) as e:
            raise UsageError(f"cannot write {plot_path}: {_one_line(e)}") from None
        print(f"wrote {plot_path}")
    return 0


def check_plot_path(path: Path) -> Path:
    """``--plot``'s format, directory and libraries, checked before any data is read."""
    suffix = path.suffix.lower()
    if suffix not in PLOT_SUFFIXES:
        raise UsageError(
            f"--plot {path}: cannot write a chart as {suffix or 'a file without an extension'}; "
            f"use a file ending in {', '.join(PLOT_SUFFIXES)}"
        )
    directory = path.parent
    if not directory.is_dir():
        raise UsageError(f"--plot {path}: no directory {directory} to write it in")
    if path.is_dir():
        raise UsageError(f"--plot {path}: is a directory, not a file")
    if not os.access(directory, os.W_OK):
        raise UsageError(f"--plot {path}: the directory {directory} is not writable")
    try:
        import altair  # noqa: F401
    except ImportError:
        raise UsageError(f"--plot needs Altair: {PLOT_INSTALL}") from None
    if suffix in RENDERED_SUFFIXES:
        try:
            import vl_convert  # noqa: F401
        except ImportError:
            raise UsageError(
                f"--plot {suffix} needs vl-convert-python: {PLOT_INSTALL} "
                "(.html and .json need only Altair)"
            ) from None
    return path


def by_keys(by: list[str] | None, schema: pl.Schema, source: str) -> list[str]:
    """``--by``'s keys (comma-separated or repeated), each a column of the data."""
    keys = [k.strip() for flag in by or [] for k in flag.split(",") if k.strip()]
    names = ", ".join(schema.names())
    for key in keys:
        if key not in schema:
            raise UsageError(f"no column {key!r} for --by in {source}; columns: {names}")
        if schema[key].is_float():
            raise UsageError(
                f"--by {key}: group keys are integers, strings, booleans, dates or categories, "
                f"not floats ({schema[key]})"
            )
    return list(dict.fromkeys(keys))


def group_summary(hist: pl.DataFrame, keys: list[str], density: bool) -> str:
    """One line of the groups and the rows (or weights) counted in them."""
    groups = hist.select(keys).unique().height
    if density:
        return f"{groups:,} groups, each a density"
    total = hist["count"].sum()
    shown = f"{total:,}" if isinstance(total, int) else f"{total:.6g}"
    return f"{shown} counted in {groups:,} groups"


def choose_column(
    schema: pl.Schema,
    column: str | None,
    weights: str | None,
    source: str,
    lf: pl.LazyFrame | None = None,
    keys: list[str] | None = None,
) -> str:
    """``--column``, or the first column that can be histogrammed (other than the weights) and
    holds more than one distinct value (found in one pass over ``lf``; the first such column
    where none does)."""
    names = ", ".join(f"{n} ({t})" for n, t in schema.items())
    if weights is not None and weights not in schema:
        raise UsageError(f"no column {weights!r} for --weights in {source}; columns: {names}")
    if column is None:
        skip = {weights, *(keys or [])}
        candidates = [n for n, t in schema.items() if n not in skip and supported_dtype(t)]
        if not candidates:
            raise UsageError(
                f"no column of {source} can be histogrammed (it takes {SUPPORTED_DTYPES} column); "
                f"columns: {names}"
            )
        if lf is None or len(candidates) == 1:
            return candidates[0]
        return _first_varying(lf, candidates, source)
    if column not in schema:
        raise UsageError(f"no column {column!r} in {source}; columns: {names}")
    if not supported_dtype(schema[column]):
        raise UsageError(
            f"column {column!r} has dtype {schema[column]}, which cannot be histogrammed: "
            f"use {SUPPORTED_DTYPES} column"
        )
    return column


def _first_varying(lf: pl.LazyFrame, candidates: list[str], source: str) -> str:
    """The first of ``candidates`` with two distinct values (a constant such as a `year` column
    makes one bar); the first candidate where none has."""

    def varies(name: str) -> pl.Expr:
        x = pl.col(name).to_physical()
        x = x.filter(x.is_not_nan()) if schema[name].is_float() else x
        return (x.min() < x.max()).fill_null(False).alias(name)

    schema = lf.collect_schema()
    try:
        row = lf.select([varies(n) for n in candidates]).collect(engine="streaming").row(0)
    except pl.exceptions.ComputeError as e:
        if "could not parse" not in str(e):
            raise UsageError(f"cannot read {source}: {_one_line(e)}") from None
        # A CSV column whose first rows' dtype does not hold: it is no candidate then (the
        # whole file may find it is one, but choosing a column should not read the file twice).
        bad = _one_line(e).split("at column ")[-1].split(" ")[0].strip("'\"")
        rest = [n for n in candidates if n != bad]
        if len(rest) == len(candidates) or not rest:
            raise UsageError(csv_hint(e, cli=True)) from None
        return _first_varying(lf, rest, source)
    except (pl.exceptions.PolarsError, OSError) as e:
        raise UsageError(f"cannot read {source}: {_one_line(e)}") from None
    return next((n for n, v in zip(candidates, row) if v), candidates[0])


def terminal_bars(
    hist: pl.DataFrame,
    *,
    closed: str = "left",
    width: int = 50,
    max_lines: int | None = None,
    density: bool = False,
) -> str:
    """One line per bin: its interval as values fall in it (``closed="left"``: ``[a, b)``, the
    last ``[a, b]``; ``"right"``: ``(a, b]``, the first ``[a, b]``), its count or sum of
    weights in full (a ``density`` to 6 significant digits: its digits past those are the
    division's, not the data's), and a bar. More than ``max_lines`` bins print the first and
    last half of them, a line for those left out, and the fullest bin."""
    n = hist.height
    if n == 0:
        return "(no bins)"
    edges = _edge_labels(hist["bin_start"].to_list() + hist["bin_end"].to_list())
    starts, ends = edges[:n], edges[n:]
    counts = hist["count"].to_list()
    count_text = [
        (f"{c:.6g}" if density else repr(c)) if isinstance(c, float) else f"{c:,}" for c in counts
    ]
    finite = [float(c) for c in counts if math.isfinite(float(c))]
    top = max(finite, default=0.0)
    ws, we, wc = (max(len(t) for t in col) for col in (starts, ends, count_text))
    lines = []
    for i, (s, e, c, text) in enumerate(zip(starts, ends, counts, count_text)):
        c = float(c)
        bar = "#" * round(width * c / top) if top > 0 and math.isfinite(c) and c > 0 else ""
        opening = "[" if closed == "left" or i == 0 else "("
        closing = ")" if closed == "left" and i < n - 1 else "]"
        lines.append(f"{opening}{s:>{ws}}, {e:>{we}}{closing}  {text:>{wc}}  {bar}".rstrip())
    if max_lines is None or n <= max_lines:
        return "\n".join(lines)
    half = max_lines // 2
    fullest = max(range(n), key=lambda i: _sort_key(counts[i]))
    return "\n".join(
        [
            *lines[:half],
            f"... {n - 2 * half:,} more bins (--all-bins prints every bin, --plot draws them)",
            *lines[-half:],
            f"fullest bin: {lines[fullest].split('  #')[0].rstrip()}",
        ]
    )


def _sort_key(count: Any) -> float:
    """A bin's count for finding the fullest (NaN, an empty group's density, last)."""
    c = float(count)
    return c if not math.isnan(c) else -math.inf


def summary(hist: Histogram) -> str:
    """One line that accounts for every row: those counted and those not, by reason."""
    f = hist.flow
    return (
        f"{f.rows:,} rows: {f.counted:,} counted, {f.null:,} null, {f.nan:,} NaN, "
        f"{f.underflow:,} below and {f.overflow:,} above the range"
    )


def _edge_labels(values: list[Any]) -> list[str]:
    """Floats to 6 significant digits, or where that would merge distinct edges (narrow bins
    far from 0), to one digit more than it takes to tell them apart; dates and times as they
    print."""
    if not all(isinstance(v, float) for v in values):
        return [str(v) for v in values]
    distinct = len(set(values))
    for digits in range(6, 17):
        if len({f"{v:.{digits}g}" for v in values}) == distinct:
            shown = digits if digits == 6 else digits + 1
            return [f"{v:.{shown}g}" for v in values]
    return [repr(v) for v in values]


def _one_line(error: BaseException) -> str:
    """The first line of an error's message (Polars adds the query plan below it)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    if not lines:
        return type(error).__name__
    # Polars wraps a plugin's errors; the wrapper says nothing to a user of the command line.
    return lines[0].removeprefix("the plugin failed with message: ")
