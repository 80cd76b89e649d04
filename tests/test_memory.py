"""More memory than there is: a ``MemoryError`` (or a ``ValueError`` where the request is past
the limits), never an abort, and the process goes on. Each case runs in a child process under an
address-space limit (``RLIMIT_AS``, Linux), set after a warm-up so that thread pools exist."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc are Linux's"
)

PRELUDE = """
import pickle
import resource

import numpy as np
import polars as pl
import polars_gpu_hist as gh


def vm_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024


def limit(extra):
    gh.histogram(pl.Series([0.5] * 300_000), 4, range=(0, 1), device="cpu")
    resource.setrlimit(resource.RLIMIT_AS, (vm_bytes() + extra, resource.RLIM_INFINITY))


def expect(error, f):
    try:
        f()
    except error as e:
        print("raised", type(e).__name__, str(e).splitlines()[0])
    else:
        raise SystemExit("no error raised")
    # The next call works.
    out = gh.histogram(pl.Series([0.1, 0.6, 0.7]), 2, range=(0, 1), device="cpu")
    assert out["count"].to_list() == [1, 2], out


def state(bins, counts=None):
    h = gh.Histogram(4, range=(0, 1))
    s = pickle.loads(h._core.to_bytes())
    s["axes"] = [dict(s["axes"][0], bins=b) for b in bins]
    s["dtypes"] = [None] * len(bins)
    if counts is not None:
        s["counts"] = counts
    return pickle.dumps(s, protocol=5)
"""

GiB = 1 << 30

CASES = {
    # 2^28 bins: 2 GiB of edges alone.
    "histogram": (
        f"limit({GiB})",
        "expect(MemoryError, lambda: gh.histogram(pl.Series([0.5]), 2**28, range=(0, 1), "
        "device='cpu'))",
    ),
    "series namespace": (
        f"limit({GiB})",
        "expect(MemoryError, lambda: pl.Series([0.5]).gpu_hist.histogram(2**28, range=(0, 1), "
        "device='cpu'))",
    ),
    "histogramdd": (
        f"limit({GiB})",
        "expect(MemoryError, lambda: gh.histogramdd(np.zeros((3, 2)), bins=[2**14, 2**14], "
        "range=[(0, 1), (0, 1)], device='cpu'))",
    ),
    "accumulator": (
        f"limit({GiB})",
        "expect(MemoryError, lambda: gh.Histogram(2**28, range=(0, 1)))",
    ),
    # 2^56 cells: refused from the bin counts, before any allocation.
    "accumulator cells": (
        f"limit({GiB})",
        "expect(ValueError, lambda: gh.Histogram([2**28] * 2, range=[(0, 1)] * 2))",
    ),
    "hostile state": (
        f"limit({GiB})",
        "expect(ValueError, lambda: gh._internal.Histogram.from_bytes(state([2**28, 2**28])))",
    ),
    # A consistent state of 2^25 cells (256 MiB of counts) with room for about one copy.
    "state too large": (
        "payload = state([2**25], bytes(8 << 25)); limit(3 << 27)",
        "expect(MemoryError, lambda: gh._internal.Histogram.from_bytes(payload))",
    ),
    # A histogram that fits, whose counts cannot be copied out.
    "counts": (
        "h = gh.Histogram(2**25, range=(0, 1)); limit(1 << 27)",
        "expect(MemoryError, lambda: h.counts)",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_more_memory_than_there_is_raises_and_the_process_goes_on(case: str) -> None:
    setup, call = CASES[case]
    script = textwrap.dedent(PRELUDE) + f"\n{setup}\n{call}\nprint('done')\n"
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, f"exit {run.returncode}\n{run.stdout}\n{run.stderr[-3000:]}"
    assert "done" in run.stdout, run.stdout
    error = "ValueError" if case in ("accumulator cells", "hostile state") else "MemoryError"
    assert f"raised {error}" in run.stdout, run.stdout
