"""CSV columns read as text, through ``histogram_scan``: each file either counts exactly as
numpy counts its numbers, or raises a ``TypeError`` that names a value of the column and the
option that fixes it; the fix applied (as the message names it, at most three in turn), the
counts are exact.

Each case writes a column of random numbers in one of the spellings files come in (plain,
a decimal comma with ``;`` between fields, lowercase ``nan``/``inf`` among the numbers, numbers
padded with leading spaces, a missing-value marker Polars' defaults do not list, only missing
values), with or without the usual markers (``NA``, empty fields), a second column beside it,
and scans it with a given range.

    python scripts/campaigns/csv_text_columns.py                # 3,000 files (minutes)
    python scripts/campaigns/csv_text_columns.py --cases 40     # make test's sample

Exit status 1 when a file miscounts, fails otherwise, or names a fix that does not work.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

import polars_gpu_hist as gh
from polars_gpu_hist._scan.csv import TextColumnError

STYLES = ["plain", "decimal comma", "lowercase nan", "padded", "unlisted marker", "missing only"]
MARKERS = ["?", "-", "missing", "n.a."]
BINS, RANGE = 5, (-10.0, 10.0)


def column(rng: np.random.Generator, style: str) -> tuple[list[str], list[float]]:
    """The fields of a column in `style`, and the numbers numpy counts (NaN is uncounted)."""
    n = int(rng.integers(1, 60))
    values = np.round(rng.uniform(-12, 12, n), int(rng.integers(0, 4)))
    fields = [repr(float(v)) for v in values]
    numbers = [float(v) for v in values]
    if style == "decimal comma":
        fields = [f.replace(".", ",") for f in fields]
    elif style == "padded":
        fields = ["  " + f for f in fields]
    elif style == "lowercase nan":
        for i in rng.integers(0, n, max(1, n // 4)):
            fields[i], numbers[i] = str(rng.choice(["nan", "inf", "-inf"])), float("nan")
    elif style == "unlisted marker":
        marker = str(rng.choice(MARKERS))
        for i in rng.integers(0, n, max(1, n // 4)):
            fields[i], numbers[i] = marker, float("nan")
    elif style == "missing only":
        fields, numbers = [str(rng.choice(["NA", ""])) for _ in range(n)], [float("nan")] * n
    if rng.random() < 0.3 and style != "missing only":  # the usual markers too
        for i in rng.integers(0, n, max(1, n // 5)):
            fields[i], numbers[i] = str(rng.choice(["NA", "", "null"])), float("nan")
    return fields, numbers


def fix(e: TextColumnError, options: dict[str, Any]) -> dict[str, Any]:
    """The reader options with the fix the error names."""
    if e.kind == "decimal comma":
        assert "'decimal_comma': True" in str(e), str(e)
        return {**options, "decimal_comma": True}
    if e.kind in ("number", "empty"):
        assert "schema_overrides" in str(e), str(e)
        return {**options, "schema_overrides": {"v": pl.Float64}}
    assert e.value is not None and repr(e.value) in str(e) and "null_values" in str(e), str(e)
    markers = list(options.get("null_values", ["", "NA", "N/A", "n/a", "#N/A", "null", "NULL"]))
    return {**options, "null_values": [*markers, e.value]}


def one(path: Path, style: str, rng: np.random.Generator) -> tuple[str, str | None]:
    """Write a file in `style`, scan it, apply the fixes named: the outcome and any problem."""
    fields, numbers = column(rng, style)
    sep = ";" if style == "decimal comma" else ","
    other = [str(i) for i in range(len(fields))]
    path.write_text("v" + sep + "w\n" + "".join(f"{a}{sep}{b}\n" for a, b in zip(fields, other)))
    kept = np.array(numbers, np.float64)
    want = np.histogram(kept[np.isfinite(kept)], BINS, RANGE)[0].tolist()
    options: dict[str, Any] = {"separator": sep} if sep != "," else {}
    fixes = 0
    while True:
        try:
            h = gh.histogram_scan(path, "v", BINS, range=RANGE, reader_options=options or None)
        except TextColumnError as e:
            if not (e.value is None or repr(e.value) in str(e)):
                return "refused", f"the message names no value of the column: {e}"
            if fixes == 3:
                return "refused", f"still refused after 3 fixes: {e}"
            try:
                options = fix(e, options)
            except AssertionError as a:
                return "refused", f"the message names no fix: {a}"
            fixes += 1
            continue
        except BaseException as e:  # a PanicException is a BaseException
            return "failed", f"{type(e).__name__}: {str(e)[:300]}"
        got = [int(c) for c in h.counts.tolist()]
        outcome = "counted" if fixes == 0 else f"counted after {fixes} fix(es)"
        return outcome, None if got == want else f"counts {got} != numpy's {want}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", type=int, default=3_000)
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--json", help="write the summary and the disagreements here")
    args = p.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    tally: Counter[str] = Counter()
    bad: list[str] = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="csv_text_") as tmp:
        for i in range(args.cases):
            style = STYLES[i % len(STYLES)]
            path = Path(tmp) / f"case{i}.csv"
            outcome, problem = one(path, style, rng)
            tally[f"{style}: {outcome}"] += 1
            if problem is not None:
                line = f"case {i} (seed {args.seed}) {style}: {problem}\n{path.read_text()[:400]}"
                bad.append(line)
                print(line, flush=True)
            path.unlink()
    seconds = time.perf_counter() - start
    for key, n in sorted(tally.items()):
        print(f"  {key}: {n}")
    print(f"{args.cases:,} files in {seconds:.0f} s: {len(bad)} problems")
    if args.json:
        summary = {"cases": args.cases, "seconds": seconds, "seed": args.seed}
        with open(args.json, "w") as f:
            json.dump({**summary, "outcomes": dict(tally), "problems": bad}, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
