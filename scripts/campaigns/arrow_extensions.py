"""Arrow extension columns through every entry point: counted as their storage where the
package takes data (``histogram``, the Series namespace, ``Histogram.fill``, the numpy drop-in,
``histogram_scan`` of a frame), refused in an expression with Polars' ``ComputeError`` naming
``.ext.storage()`` (and that fix counting right), never a panic or a wrong count.

Each case draws a storage dtype (every integer width, float32, float64), values (nulls, the
dtype's extremes, NaN and infinities for floats), an extension wrapper (a pyarrow
``ExtensionType`` of the campaign's own, awkward's ``ak.to_arrow(extensionarray=True)``),
chunking (one chunk, several, sliced) and bins over a range; the reference is
``numpy.histogram`` of the valid storage values.

    python scripts/campaigns/arrow_extensions.py                # 20,000 cases (minutes)
    python scripts/campaigns/arrow_extensions.py --cases 100    # make test's sample

Exit status 1 when a case disagrees; each disagreement prints a line that reproduces it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

import polars_gpu_hist as gh
import polars_gpu_hist.numpy as ghnp

STORAGE = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
STORAGE += ["float32", "float64"]


class Tagged(pa.ExtensionType):  # type: ignore[misc]
    """An extension type of no meaning over any storage, as a user's own type would be."""

    def __init__(self, storage: pa.DataType) -> None:
        super().__init__(storage, "polars_gpu_hist.campaign")

    def __arrow_ext_serialize__(self) -> bytes:
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: pa.DataType, serialized: bytes) -> Tagged:
        return cls(storage_type)


pa.register_extension_type(Tagged(pa.int64()))


def values(rng: np.random.Generator, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """The storage values of a case and which of them are valid."""
    n = int(rng.choice([1, 2, 5, 40, 1000]))
    np_type = np.dtype(dtype)
    if np_type.kind in "iu":
        info = np.iinfo(np_type)
        if rng.random() < 0.3:
            pool = np.array([info.min, info.min + 1, 0, info.max - 1, info.max], np_type)
            x = rng.choice(pool, n)
        else:
            x = rng.integers(max(int(info.min), -100), 100, n, endpoint=True).astype(np_type)
    else:
        x = (rng.standard_normal(n) * 10).astype(np_type)
        if rng.random() < 0.3:
            special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], np_type)
            at = rng.integers(0, n, max(1, n // 5))
            x[at] = rng.choice(special, at.size)
    valid = rng.random(n) > (0.2 if rng.random() < 0.5 else 0.0)
    return x, valid


def wrapped(rng: np.random.Generator, x: np.ndarray, valid: np.ndarray) -> tuple[str, Any]:
    """The values as an extension array: a pyarrow extension or awkward's, in chunks."""
    storage = pa.array(x, mask=~valid)
    kind = "pyarrow" if rng.random() < 0.5 else "awkward"
    if kind == "pyarrow":
        ext: Any = pa.ExtensionArray.from_storage(Tagged(storage.type), storage)
    else:
        import awkward as ak

        ext = ak.to_arrow(ak.from_arrow(storage), extensionarray=True)
    parts = int(rng.choice([1, 1, 3]))
    if parts > 1 and len(ext) > parts:
        cuts = sorted(set(rng.integers(1, len(ext), parts - 1).tolist()))
        bounds = [0, *cuts, len(ext)]
        ext = pa.chunked_array([ext[a:b] for a, b in zip(bounds, bounds[1:])])
        kind += f", {len(bounds) - 1} chunks"
    return kind, ext


def case(rng: np.random.Generator) -> dict[str, Any]:
    dtype = str(rng.choice(STORAGE))
    x, valid = values(rng, dtype)
    kind, ext = wrapped(rng, x, valid)
    lo = float(rng.choice([-100.0, -10.0, 0.0]))
    hi = lo + float(rng.choice([1.0, 50.0, 200.0]))
    bins = int(rng.choice([1, 3, 16]))
    kept = x[valid]
    if kept.dtype.kind == "f":
        kept = kept[np.isfinite(kept)]
    want = np.histogram(kept.astype(np.float64), bins, (lo, hi))[0]
    return {
        "dtype": dtype,
        "kind": kind,
        "ext": ext,
        "bins": bins,
        "range": (lo, hi),
        "want": want,
        "x": x,
        "valid": valid,
    }


def entries(c: dict[str, Any]) -> dict[str, Any]:
    """name -> a call giving counts (the expression's refusal is checked apart)."""
    bins, r = c["bins"], c["range"]
    series = pl.Series("x", c["ext"])

    def scan() -> Any:
        return gh.histogram_scan(series.to_frame().lazy(), "x", bins, range=r).counts

    return {
        "histogram": lambda: gh.histogram(series, bins, range=r)["count"].to_numpy(),
        "Series namespace": lambda: (
            series.gpu_hist.histogram(bins, range=r).struct.field("count").to_numpy()
        ),
        "Histogram.fill": lambda: gh.Histogram(bins, range=r).fill(series).counts,
        "Histogram.fill of the Arrow array": lambda: (
            gh.Histogram(bins, range=r).fill(c["ext"]).counts
        ),
        "numpy drop-in": lambda: ghnp.histogram(series, bins, r)[0],
        "histogram_scan of a frame": scan,
        "expression of .ext.storage()": lambda: (
            series.to_frame()
            .select(pl.col("x").ext.storage().gpu_hist.histogram(bins, range=r))["x"]
            .struct.field("count")
            .to_numpy()
        ),
    }


def check(c: dict[str, Any]) -> list[tuple[str, str | None]]:
    """(entry, None or what went wrong) for every entry point of the case."""
    out: list[tuple[str, str | None]] = []
    for name, call in entries(c).items():
        try:
            got = np.asarray(call())
        except BaseException as e:  # a PanicException is a BaseException
            out.append((name, f"raised {type(e).__name__}: {str(e)[:200]}"))
            continue
        same = got.shape == c["want"].shape and np.array_equal(got, c["want"])
        out.append((name, None if same else f"counts {got.tolist()} != {c['want'].tolist()}"))
    # The expression on the extension column itself: Polars' ComputeError naming the fix.
    frame = pl.Series("x", c["ext"]).to_frame()
    try:
        frame.select(pl.col("x").gpu_hist.histogram(c["bins"], range=c["range"]))
        problem: str | None = "expression of an extension column counted (it must be refused)"
    except pl.exceptions.ComputeError as e:
        fine = "ext.storage()" in str(e) and "panicked" not in str(e)
        problem = None if fine else f"expression refused without the fix: {str(e)[:200]}"
    except BaseException as e:
        problem = f"expression raised {type(e).__name__}: {str(e)[:200]}"
    out.append(("expression", problem))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", type=int, default=20_000)
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--json", help="write the summary and the disagreements here")
    args = p.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    tally: Counter[str] = Counter()
    bad: list[str] = []
    start = time.perf_counter()
    for i in range(args.cases):
        c = case(rng)
        for entry, problem in check(c):
            tally[entry] += 1
            if problem is not None:
                line = (
                    f"case {i} (seed {args.seed}) {c['dtype']} as {c['kind']}, "
                    f"bins={c['bins']} range={c['range']}: {entry}: {problem}"
                )
                bad.append(line)
                print(line, flush=True)
    seconds = time.perf_counter() - start
    checks = sum(tally.values())
    print(f"{args.cases:,} cases, {checks:,} checks in {seconds:.0f} s: {len(bad)} disagreements")
    if args.json:
        summary = {"cases": args.cases, "checks": checks, "seconds": seconds, "seed": args.seed}
        with open(args.json, "w") as f:
            json.dump({**summary, "by_entry": dict(tally), "disagreements": bad}, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
