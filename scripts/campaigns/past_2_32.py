"""``histogram_scan`` past 2^32 rows: exact counts, or a clear error before any work.

Polars' default runtime (``polars-runtime-32``, ``pl.get_index_type()`` UInt32) indexes at
most 2^32 - 1 rows in one frame or one file; its 64-bit runtime (``polars-runtime-64``, the
``polars[rt64]`` extra) has no such limit. This campaign writes Parquet files with pyarrow, one
row group of 2^26 constant uint8 values at a time (about 12 MB of file for 2^32 rows), and scans
them with a given range, with ``range="auto"`` (a first pass) and with ``bins="sturges"`` (a
rule from the count and the extremes):

- a dataset of files each under 2^32 rows that sum past it: the counts must be exact under
  either runtime (the scan streams batches and counts in 64 bits);
- one file past 2^32 rows: exact counts under the 64-bit runtime; under the 32-bit runtime a
  ``ComputeError`` before any batch is read, naming the row count and ``polars[rt64]``
  (Polars' own, raised while the scan plans the read from the file's metadata).

    python scripts/campaigns/past_2_32.py                # 2^32 + 2^27 rows, minutes
    python scripts/campaigns/past_2_32.py --quick        # make test's sample: 2^22 rows, seconds

Writing takes about a minute per 2^32 rows on the 2-core development machine and the files
are deleted afterwards. Exit status 1 when a scan miscounts or fails otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

import polars_gpu_hist as gh

GROUP = 1 << 26  # rows a row group holds
VALUE = 3  # every row's value: bin 3 of bins=4 over (0, 4)


def write(path: Path, rows: int, group: int) -> None:
    """A Parquet file of `rows` uint8 rows of VALUE, written one row group at a time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    full = pa.table({"x": pa.array(np.full(group, VALUE, np.uint8))})
    with pq.ParquetWriter(path, full.schema, compression="zstd") as writer:
        left = rows
        while left > 0:
            part = full if left >= group else full.slice(0, left)
            writer.write_table(part, row_group_size=group)
            left -= part.num_rows


def scans(source: str, rows: int) -> list[tuple[str, Any, list[int] | None]]:
    """(what, the call, the counts it must give: None where only the size is known)."""
    return [
        (
            "bins=4, range=(0, 4)",
            lambda: gh.histogram_scan(source, "x", 4, range=(0, 4), device="cpu"),
            [0, 0, 0, rows],
        ),
        (
            'bins=4, range="auto"',
            lambda: gh.histogram_scan(source, "x", 4, range="auto", device="cpu"),
            None,
        ),
        ('bins="sturges"', lambda: gh.histogram_scan(source, "x", "sturges", device="cpu"), None),
    ]


def one(what: str, call: Any, counts: list[int] | None, rows: int, wide: bool) -> dict[str, Any]:
    """One scan's outcome: exact, refused as the 32-bit runtime must refuse, or a failure."""
    start = time.perf_counter()
    try:
        h = call()
    except pl.exceptions.ComputeError as e:
        seconds = time.perf_counter() - start
        clear = "polars[rt64]" in str(e) and rows > 2**32 - 1 and not wide
        outcome = "refused" if clear else "failed"
        return {"scan": what, "outcome": outcome, "seconds": seconds, "error": str(e)[:300]}
    except Exception as e:  # anything else is a failure of the campaign's target
        seconds = time.perf_counter() - start
        error = f"{type(e).__name__}: {str(e)[:300]}"
        return {"scan": what, "outcome": "failed", "seconds": seconds, "error": error}
    seconds = time.perf_counter() - start
    got = [int(c) for c in h.counts.tolist()]
    ok = got == counts if counts is not None else sum(got) == rows
    return {
        "scan": what,
        "outcome": "exact" if ok else "miscounted",
        "seconds": seconds,
        "counts": got,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="2^22 rows in groups of 2^20")
    p.add_argument("--json", help="write the outcomes here")
    args = p.parse_args(argv)
    wide = pl.get_index_type() == pl.UInt64
    if args.quick:
        total, group = 1 << 22, 1 << 20
    else:
        total, group = (1 << 32) + (1 << 27), GROUP
    print(f"polars {pl.__version__}, index type {pl.get_index_type()}, {total:,} rows", flush=True)
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="past_2_32_") as tmp:
        root = Path(tmp)
        # A dataset: files each under 2^32 rows (half the total each), together past it.
        (root / "dataset").mkdir()
        half = total // 2 + 1
        start = time.perf_counter()
        write(root / "dataset" / "a.parquet", half, group)
        (root / "dataset" / "b.parquet").write_bytes((root / "dataset" / "a.parquet").read_bytes())
        write(root / "one.parquet", total, group)
        print(f"written in {time.perf_counter() - start:.0f} s", flush=True)
        for source, rows in [
            (str(root / "dataset" / "*.parquet"), 2 * half),
            (str(root / "one.parquet"), total),
        ]:
            for what, call, counts in scans(source, rows):
                r = one(what, call, counts, rows, wide)
                r["source"] = Path(source).name if "*" not in source else "dataset of 2 files"
                r["rows"] = rows
                results.append(r)
                print(json.dumps(r), flush=True)
    bad = [r for r in results if r["outcome"] in ("failed", "miscounted")]
    print(
        f"{len(results)} scans: {len(results) - len(bad)} exact or refused up front, "
        f"{len(bad)} failed",
        flush=True,
    )
    if args.json:
        summary = {"polars": pl.__version__, "index_type": str(pl.get_index_type())}
        Path(args.json).write_text(json.dumps({**summary, "results": results}, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
