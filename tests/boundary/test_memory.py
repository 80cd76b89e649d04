"""More memory than there is: a ``MemoryError`` (or a ``ValueError`` where the request is past
the limits), never an abort, and the process goes on. Each case runs in a child process under an
address-space limit (``RLIMIT_AS``, Linux), set after a warm-up so that thread pools exist."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from support.memory_limits import PRELUDE

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc are Linux's"
)


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
