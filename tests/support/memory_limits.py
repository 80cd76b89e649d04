"""A child process's prelude that sets address-space limits (boundary/, expr/ tests)."""

from __future__ import annotations

import sys

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
