"""A differential campaign against numpy: random and adversarial cases through the numpy
drop-in (`polars_gpu_hist.numpy`: counts, edges and their dtypes, the exception class of a
refusal), the Series API (counts and edges) and `histogram_bin_edges`, on the CPU backend.

Each case draws a dtype (every integer width, float16, float32, float64), values (normal,
uniform, integers, a dtype's extremes, infinities, subnormals, signed zeros, repeated values,
values on the edges), `bins` (a count, one of numpy's estimators, explicit edges, repeats
included), a `range` (none, Python floats, numpy float16/float32/float64 scalars, the data's
own `(x.min(), x.max())`, ranges near the float limits), weights and `density`. Cases where we
differ from numpy on purpose (docs/semantics.md's table: NaN with no range, narrow integer
weights, ...) are drawn too and counted apart, never as agreements.

    python scripts/campaigns/differential.py                   # 100,000 cases (minutes)
    python scripts/campaigns/differential.py --cases 300       # make test's sample
    python scripts/campaigns/differential.py --seed 7 --json out.json

Exit status 1 when a case disagrees; each disagreement prints a line that reproduces it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections import Counter
from typing import Any

import numpy as np
import polars as pl

import polars_gpu_hist  # noqa: F401  (the namespace)
import polars_gpu_hist.numpy as ghnp

ESTIMATORS = ["auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt"]
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
FLOATS = [np.float16, np.float32, np.float64]
REFUSALS = (ValueError, TypeError, MemoryError, IndexError, OverflowError)


def values(rng: np.random.Generator, dtype: Any) -> np.ndarray:
    """The data of one case, drawn among ordinary and adversarial shapes."""
    size = int(rng.choice([0, 1, 2, 3, 5, 17, 64, 200, 1000]))
    kind = rng.integers(0, 8)
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        if kind == 0:  # the dtype's extremes and their neighbours
            pool = [info.min, info.min + 1, 0, info.max - 1, info.max]
            return rng.choice(np.array(pool, dtype=dtype), size)
        if kind == 1:  # one value, repeated
            return np.full(size, rng.integers(info.min, info.max, endpoint=True, dtype=dtype))
        span = int(rng.choice([3, 50, 1000, 2**20]))
        base = max(int(info.min), -span)
        lo = int(rng.integers(base, min(int(info.max), base + span) + 1))
        hi = min(int(info.max), lo + span)
        return rng.integers(lo, hi, size, endpoint=True, dtype=dtype)
    finfo = np.finfo(dtype)
    scale = 10.0 ** rng.integers(-6, 7)
    if kind == 0:  # the float's extremes, infinities, subnormals, signed zeros
        pool = [finfo.max, -finfo.max, finfo.tiny, finfo.smallest_subnormal, 0.0, -0.0, 1.0]
        if rng.random() < 0.3:
            pool += [np.inf, -np.inf]
        return rng.choice(np.array(pool, dtype=dtype), size)
    if kind == 1:
        return np.full(size, rng.standard_normal() * scale, dtype=dtype)
    if kind == 2:  # a subnormal span (float32: numpy's "Too many bins")
        return (rng.integers(0, 20, size) * finfo.smallest_subnormal).astype(dtype)
    if kind == 3:  # round values: estimators' ties
        return np.round(rng.standard_normal(size) * scale, int(rng.integers(0, 3))).astype(dtype)
    with np.errstate(over="ignore"):
        return (rng.standard_normal(size) * scale).astype(dtype)


def a_range(rng: np.random.Generator, x: np.ndarray) -> Any:
    kind = rng.integers(0, 6)
    if kind == 0 or x.size == 0:
        return None
    finite = x[np.isfinite(x)] if x.dtype.kind == "f" else x
    if finite.size == 0:
        return None
    scalar_type = [float, np.float16, np.float32, np.float64][rng.integers(0, 4)]
    if kind == 1:  # the everyday `(x.min(), x.max())`, numpy scalars of the data's type
        return (finite.min(), finite.max())
    if kind == 2:
        lo, hi = np.sort(rng.choice(finite, 2))
    elif kind == 3:  # wider than the data
        lo, hi = float(finite.min()) - 1.0, float(finite.max()) + 2.5
    elif kind == 4:  # near the float limits
        lo, hi = -np.finfo(np.float64).max / rng.choice([1, 2, 10]), np.finfo(np.float64).max / 3
    else:
        lo, hi = float(np.min(finite)), float(np.min(finite))
    with warnings.catch_warnings(), np.errstate(over="ignore"):
        warnings.simplefilter("ignore")
        pair = (scalar_type(lo), scalar_type(hi))
    if not all(np.isfinite(v) for v in pair):
        return None
    return pair


def a_bins(rng: np.random.Generator, x: np.ndarray) -> Any:
    kind = rng.integers(0, 10)
    if kind < 4:
        return int(rng.choice([1, 2, 3, 7, 10, 64, 255, 1000]))
    if kind < 8:
        return str(rng.choice(ESTIMATORS))
    finite = x[np.isfinite(x)] if x.dtype.kind == "f" else x
    if finite.size == 0:
        return [0.0, 1.0]
    edges = np.sort(rng.choice(finite.astype(np.float64), int(rng.integers(2, 12))))
    if kind == 9:
        edges = np.concatenate([[-np.inf], edges, [np.inf]])
    return edges


def weights_of(rng: np.random.Generator, x: np.ndarray) -> Any:
    kind = rng.integers(0, 5)
    if kind < 3:
        return None
    if kind == 3:
        return rng.random(x.size)
    return rng.integers(-5, 10, x.size).astype(np.int64)


def documented(x: np.ndarray, bins: Any, r: Any, weights: Any, density: bool) -> str | None:
    """Why numpy and we differ on purpose here (docs/semantics.md), or None."""
    if x.dtype.kind == "f" and np.isnan(x).any() and r is None:
        return "NaN with no range"
    if x.dtype.kind == "f" and x.size and not np.isfinite(x).all() and r is None:
        return "an infinite range from the data"
    if x.dtype.kind in "iu" and x.dtype.itemsize <= 2 and density and not isinstance(bins, str):
        if np.ndim(bins) == 1:
            return "narrow integer edges and density"
    if (
        isinstance(bins, str)
        and r is not None
        and float(r[0]) == float(r[1])
        and float(r[0]) - 0.5 == float(r[0])
    ):
        return "an estimator over an empty range whose widening by 0.5 rounds away"
    if r is not None or x.size:
        lo, hi = (float(v) for v in r) if r is not None else (None, None)
        spans = [hi - lo] if r is not None else []
        if x.size and x.dtype.kind in "f":
            finite = x[np.isfinite(x)].astype(np.float64)
            if finite.size:
                spans.append(float(finite.max()) - float(finite.min()))
        if any(not np.isfinite(s) or s > np.finfo(np.float64).max / 4 for s in spans):
            return "a span near or past the float64 maximum"
        if x.dtype == np.float32 and any(s > float(np.finfo(np.float32).max) / 4 for s in spans):
            return "a float32 span near the float32 maximum"
    return None


def run(f: Any, *args: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return f(*args, **kwargs)
        except REFUSALS as e:
            return e


def same(want: Any, got: Any) -> str | None:
    """Why `got` is not numpy's `want`, or None."""
    if isinstance(want, BaseException):
        if not isinstance(got, BaseException):
            return f"numpy raises {type(want).__name__}, we answer"
        # numpy's estimates past 2^28 bins try to allocate them (MemoryError); we refuse them.
        if isinstance(want, MemoryError) and isinstance(got, ValueError):
            return None
        if (
            not isinstance(got, type(want).__mro__[0])
            and type(want).__mro__[1] not in type(got).__mro__
        ):
            return f"numpy raises {type(want).__name__}, we {type(got).__name__}: {got}"
        return None
    if isinstance(got, BaseException):
        return f"numpy answers, we raise {type(got).__name__}: {got}"
    (counts, edges), (our_counts, our_edges) = want, got
    if our_edges.dtype != edges.dtype:
        return f"edges dtype {our_edges.dtype}, numpy's {edges.dtype}"
    if not np.array_equal(our_edges, edges, equal_nan=True):
        return "edges differ"
    if counts.dtype.kind == "f" or our_counts.dtype.kind == "f":
        if not np.allclose(our_counts, counts, rtol=1e-12, atol=0, equal_nan=True):
            return "sums differ"
    elif not np.array_equal(our_counts, counts):
        return "counts differ"
    return None


def case(rng: np.random.Generator) -> tuple[str, dict[str, Any]]:
    dtype = [*INTS, *FLOATS][rng.integers(0, len(INTS) + len(FLOATS))]
    x = values(rng, dtype)
    bins = a_bins(rng, x)
    r = a_range(rng, x) if not np.ndim(bins) == 1 else None
    weights = None if isinstance(bins, str) else weights_of(rng, x)
    density = bool(rng.random() < 0.2)
    entry = str(rng.choice(["numpy", "numpy", "series", "bin_edges"]))
    return entry, {"x": x, "bins": bins, "range": r, "weights": weights, "density": density}


def check(entry: str, c: dict[str, Any]) -> tuple[str, str | None]:
    x, bins, r, weights, density = c["x"], c["bins"], c["range"], c["weights"], c["density"]
    reason = documented(x, bins, r, weights, density)
    if entry == "bin_edges":
        want = run(np.histogram_bin_edges, x, bins, r)
        got = run(ghnp.histogram_bin_edges, x, bins, r)
        if not isinstance(want, BaseException) and not isinstance(got, BaseException):
            want, got = (np.zeros(0), want), (np.zeros(0), got)
        why = same(want, got)
    elif entry == "numpy":
        want = run(np.histogram, x, bins, r, density=density, weights=weights)
        got = run(ghnp.histogram, x, bins, r, density=density, weights=weights)
        if isinstance(want, tuple) and weights is not None and not density:
            # Sums in float64 against numpy's sums in the weights' type (semantics.md).
            want = (want[0].astype(np.float64), want[1])
            if isinstance(got, tuple):
                got = (got[0].astype(np.float64), got[1])
        why = same(want, got)
    else:
        want = run(np.histogram, x, bins, r, density=density, weights=weights)
        if isinstance(want, BaseException):
            return ("refused by numpy (series)", None)
        series = pl.Series("x", x)
        w = None if weights is None else pl.Series("w", weights)
        if np.ndim(bins) == 1 and not np.all(np.diff(bins) > 0):
            return ("repeated edges (series)", None)
        got_frame = run(
            lambda: series.gpu_hist.histogram(
                bins, range=r, weights=w, density=density, device="cpu"
            ).struct.unnest()
        )
        if isinstance(got_frame, BaseException) or isinstance(got_frame, pl.exceptions.PolarsError):
            why = f"numpy answers, the Series API raises {type(got_frame).__name__}: {got_frame}"
        else:
            counts = got_frame["count"].to_numpy()
            edges = np.append(
                got_frame["bin_start"].to_numpy(), got_frame["bin_end"].to_numpy()[-1:]
            )
            wc = want[0].astype(counts.dtype)
            we = want[1].astype(np.float64)
            why = same((wc, we), (counts, edges))
    if reason is not None:
        return (f"documented: {reason}", None)
    return ("agrees" if why is None else "DISAGREES", why)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--json", help="write the summary and the disagreements here")
    args = p.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    tally: Counter[str] = Counter()
    bad: list[dict[str, Any]] = []
    start = time.perf_counter()
    for i in range(args.cases):
        entry, c = case(rng)
        try:
            outcome, why = check(entry, c)
        except pl.exceptions.PolarsError as e:  # the Series API's refusal where numpy refuses
            outcome, why = "DISAGREES", f"{type(e).__name__}: {e}"
        tally[f"{entry}: {outcome}"] += 1
        if why is not None and outcome == "DISAGREES":
            shown = {k: repr(v)[:2000] for k, v in c.items()}
            bad.append({"case": i, "entry": entry, "why": why, **shown})
    seconds = time.perf_counter() - start
    print(f"{args.cases} cases (seed {args.seed}) in {seconds:.0f} s")
    for key, n in sorted(tally.items()):
        print(f"  {n:7d}  {key}")
    for b in bad[:50]:
        # Reproduce one with `case(...)` after drawing the cases before it from the same seed.
        x = b["x"] if len(b["x"]) < 300 else b["x"][:300] + "..."
        print(
            f"DISAGREES case {b['case']} ({b['entry']}): {b['why']}\n"
            f"    x={x}\n    bins={b['bins']} range={b['range']} weights={b['weights'][:80]} "
            f"density={b['density']}"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cases": args.cases, "seed": args.seed, "tally": tally, "bad": bad}, f)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
