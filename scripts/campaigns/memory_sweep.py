"""RLIMIT_AS sweeps: every CPU entry point, asked for more memory than there is, under address
space limits from 64 MiB to 4 GiB of headroom over what the process holds, in child processes.

Each try must end in an answer or in the exception the entry point promises for memory
(``MemoryError``; Polars' ``ComputeError`` "out of memory" from an expression in a query of
one's own, as Polars re-raises a plugin's errors): never an abort (Rust's "memory allocation of
N bytes failed"), another signal death or a ``PanicException``. A child that dies is reported
with its stderr (Python's stack, from ``faulthandler``) and the sweep goes on in a new child
from the next headroom.

    python scripts/campaigns/memory_sweep.py                 # the full sweep (minutes)
    python scripts/campaigns/memory_sweep.py --quick         # make test's sample (seconds)
    python scripts/campaigns/memory_sweep.py --json out.json # the outcomes, for a note
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap
from collections import Counter

MiB = 1 << 20
HEADROOMS = [64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096]
QUICK_HEADROOMS = [64, 512]
BIG = 1 << 26

# name -> (setup, call, what a query of one's own raises): every CPU entry point.
CASES: dict[str, tuple[str, str, str]] = {
    "numpy histogram, 2^25 bins": (
        "x = np.array([0.0, 1.0])",
        "ghnp.histogram(x, 2**25)",
        "MemoryError",
    ),
    "numpy histogram, 2^27 bins": (
        "x = np.array([0.5])",
        f"ghnp.histogram(x, {2 * BIG}, range=(0, 1))",
        "MemoryError",
    ),
    "numpy histogram_bin_edges": (
        "x = np.array([0.5])",
        f"ghnp.histogram_bin_edges(x, {2 * BIG}, range=(0, 1))",
        "MemoryError",
    ),
    "numpy histogram, estimator": (
        "x = np.random.default_rng(1).random(2**24)",
        "ghnp.histogram(x, 'auto')",
        "MemoryError",
    ),
    "numpy histogram, weights": (
        "x = np.array([0.5, 0.25]); w = np.array([1.0, 2.0])",
        f"ghnp.histogram(x, {BIG}, range=(0, 1), weights=w)",
        "MemoryError",
    ),
    "numpy histogramdd": (
        "a = np.zeros((3, 2))",
        "ghnp.histogramdd(a, bins=[2**14, 2**13], range=[(0, 1), (0, 1)])",
        "MemoryError",
    ),
    "histogram": (
        "s = pl.Series([0.5])",
        f"gh.histogram(s, {2 * BIG}, range=(0, 1))",
        "MemoryError",
    ),
    "histogram flow": (
        "s = pl.Series([0.5])",
        f"gh.histogram(s, {BIG}, range=(0, 1), flow=True, device='cpu')",
        "MemoryError",
    ),
    "histogram integer": (
        "s = pl.Series([0, 2**27 - 1])",
        "gh.histogram(s, 'integer', device='cpu')",
        "MemoryError",
    ),
    "histogramdd": (
        "a = np.zeros((3, 2))",
        "gh.histogramdd(a, bins=[2**14, 2**13], range=[(0, 1), (0, 1)], device='cpu')",
        "MemoryError",
    ),
    "Series histogram": (
        "s = pl.Series([0.5])",
        f"s.gpu_hist.histogram({2 * BIG}, range=(0, 1), device='cpu')",
        "MemoryError",
    ),
    "Series hist": (
        "s = pl.Series([1.0, 2.0])",
        f"s.gpu_hist.hist(bin_count={BIG})",
        "MemoryError",
    ),
    "expression histogram": (
        "frame = pl.DataFrame({'x': [0.5]})",
        f"frame.select(pl.col('x').gpu_hist.histogram({BIG}, range=(0, 1), device='cpu'))",
        "ComputeError",
    ),
    "expression hist": (
        "frame = pl.DataFrame({'x': [1.0, 2.0]})",
        f"frame.select(pl.col('x').gpu_hist.hist(bin_count={BIG}))",
        "ComputeError",
    ),
    "by=": (
        "frame = pl.DataFrame({'x': [0.5, 0.2, 0.7], 'g': [1, 2, 3]})",
        f"frame.select(pl.col('x').gpu_hist.histogram({BIG // 2}, range=(0, 1), by='g', "
        "device='cpu'))",
        "ComputeError",
    ),
    "estimator of many rows": (
        "s = pl.Series(np.random.default_rng(0).random(2**24))",
        "gh.histogram(s, 'fd', device='cpu')",
        "MemoryError",
    ),
    "Histogram": ("", f"gh.Histogram({2 * BIG}, range=(0, 1))", "MemoryError"),
    "Histogram fill": (
        f"h = gh.Histogram({BIG}, range=(0, 1))",
        "h.fill(np.random.default_rng(0).random(1000))",
        "MemoryError",
    ),
    "histogram_scan": (
        "lf = pl.LazyFrame({'x': [0.5, 0.25]})",
        f"gh.histogram_scan(lf, 'x', {2 * BIG}, range=(0, 1), device='cpu')",
        "MemoryError",
    ),
}
QUICK_CASES = ["numpy histogram, 2^25 bins", "Series histogram", "Histogram"]

CHILD = """
import faulthandler, gc, resource, sys
faulthandler.enable()
import numpy as np
import polars as pl
import polars_gpu_hist as gh
import polars_gpu_hist.numpy as ghnp

INF = resource.RLIM_INFINITY
PROMISED = {promised!r}


def vm_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024


def check_next_call():
    out = gh.histogram(pl.Series([0.1, 0.6, 0.7]), 2, range=(0, 1), device="cpu")
    assert out["count"].to_list() == [1, 2], out


{setup}
check_next_call()  # warm-up: thread pools, the plugin, Polars' engine
for headroom in {headrooms!r}:
    print("try", headroom, flush=True)
    gc.collect()
    resource.setrlimit(resource.RLIMIT_AS, (vm_bytes() + headroom * (1 << 20), INF))
    try:
        {call}
        outcome = "answer"
    except BaseException as e:
        name = type(e).__name__
        memory = name == "MemoryError" or (
            name == PROMISED == "ComputeError" and "memory" in str(e).lower()
        )
        outcome = name if memory else f"WRONG {{type(e).__module__}}.{{name}}: {{str(e)[:200]}}"
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (INF, INF))
    print("outcome", headroom, outcome, flush=True)
    check_next_call()
print("done", flush=True)
"""


def sweep(name: str, headrooms: list[int]) -> list[dict[str, object]]:
    """One case over `headrooms` (MiB), a new child after any death."""
    setup, call, promised = CASES[name]
    results: list[dict[str, object]] = []
    left = list(headrooms)
    while left:
        script = textwrap.dedent(CHILD).format(
            setup=setup, call=call, promised=promised, headrooms=left
        )
        run = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=900
        )
        tried = None
        for line in run.stdout.splitlines():
            words = line.split(" ", 2)
            if words[0] == "try":
                tried = int(words[1])
            elif words[0] == "outcome":
                results.append({"case": name, "headroom_mib": int(words[1]), "outcome": words[2]})
                left.remove(int(words[1]))
                tried = None
        if run.returncode == 0:
            break
        # The child died (a signal, or an exit): report where, with its stack, and go on.
        where = tried if tried is not None else left[0]
        death = (
            f"DIED {run.returncode} (signal {-run.returncode})"
            if run.returncode < 0
            else (f"EXIT {run.returncode}")
        )
        results.append(
            {"case": name, "headroom_mib": where, "outcome": death, "stderr": run.stderr[-4000:]}
        )
        left = [h for h in left if h != where]
    return results


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="make test's sample")
    p.add_argument("--case", action="append", help="one case by name (repeatable)")
    p.add_argument("--json", help="write the outcomes here")
    args = p.parse_args(argv)
    names = args.case or (QUICK_CASES if args.quick else list(CASES))
    headrooms = QUICK_HEADROOMS if args.quick else HEADROOMS
    results = [r for name in names for r in sweep(name, headrooms)]
    bad = [r for r in results if str(r["outcome"]).startswith(("WRONG", "DIED", "EXIT"))]
    summary = Counter(str(r["outcome"]).split(" ")[0] for r in results)
    print(f"{len(results)} tries over {len(names)} entry points: {dict(summary)}")
    for r in bad:
        print(f"  {r['case']} at +{r['headroom_mib']} MiB: {r['outcome']}")
        if "stderr" in r:
            print(textwrap.indent(str(r["stderr"]), "    | "))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
