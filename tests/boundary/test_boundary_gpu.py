"""The boundary on the GPU's entry points: what depends on the data raises the type the API the
user called promises (numpy's in the numpy drop-in given device arrays, Polars' ComputeError in
the package's Polars API on device="gpu"), and Ctrl-C during a GPU call is a
``KeyboardInterrupt`` (when the call returns: GPU calls read no interrupt); the next call
counts right. (No test here fills the GPU's memory: gpu_check.sh runs these tests beside
others on one device.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh
import polars_gpu_hist.numpy as ghnp


def quiet(call: Any) -> Any:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return call()


@pytest.mark.parametrize(
    ("data", "bins", "error"),
    [
        (np.array([-1.7e308, 1.7e308]), "fd", ValueError),  # a span past the float maximum
        # Infinitely many: a float32 span that overflows (float16, where the host path meets it,
        # is a dtype the GPU does not read: the last case).
        (np.array([-3e38, -1, 0, 1, 3e38], np.float32), "fd", OverflowError),
        (np.array([0.0, 1e-3]), 2**28 + 1, ValueError),  # past the bins' limit
        (np.array([-6e4, -1, 0, 1, 6e4], np.float16), "fd", TypeError),  # a dtype, named
    ],
)
def test_the_numpy_drop_in_on_device_arrays_raises_numpys_types(
    data: np.ndarray, bins: Any, error: type
) -> None:
    cp = pytest.importorskip("cupy")
    with pytest.raises(error) as raised:
        quiet(lambda: ghnp.histogram(cp.asarray(data), bins))
    assert not isinstance(raised.value, pl.exceptions.PolarsError)
    if error is TypeError:
        assert "<f2" in str(raised.value)  # the dtype named
    elif isinstance(bins, str):  # numpy's estimator raises the same on the host
        with pytest.raises(error):
            quiet(lambda: np.histogram(data, bins))


def test_the_polars_api_on_the_gpu_raises_computeerror_as_its_expression_does() -> None:
    s = pl.Series("x", [-1.7e308, 1.7e308])
    with pytest.raises(pl.exceptions.ComputeError) as direct:
        quiet(lambda: gh.histogram(s, "fd", device="gpu"))
    with pytest.raises(pl.exceptions.ComputeError) as query:
        quiet(lambda: s.to_frame().select(pl.col("x").gpu_hist.histogram("fd", device="gpu")))
    assert str(direct.value).split(":")[0] in str(query.value)


CHILD = """
import sys
import time

import numpy as np
import polars as pl
import polars_gpu_hist as gh

chunk, chunks = int(sys.argv[1]), int(sys.argv[2])
one = pl.Series("x", np.full(chunk, 7, np.uint16))
s = pl.concat([one] * chunks, rechunk=False)
gh.histogram(one[:1000], 16, range=(0, 16), device="gpu")  # the kernels compiled first
start = time.perf_counter()
gh.histogram(s, 16, range=(0, 16), device="gpu")
print(f"uninterrupted {time.perf_counter() - start:.3f}", flush=True)
print("calling", flush=True)
start = time.perf_counter()
try:
    gh.histogram(s, 16, range=(0, 16), device="gpu")
except KeyboardInterrupt:
    print(f"interrupted {time.perf_counter() - start:.3f}", flush=True)
else:
    print(f"finished {time.perf_counter() - start:.3f}", flush=True)
got = gh.histogram(pl.Series([1, 2, 2], dtype=pl.UInt16), 4, range=(0, 4), device="gpu")
assert got["count"].to_list() == [0, 1, 2, 0], got
print("next call ok", flush=True)
"""


def test_ctrl_c_during_a_gpu_call_is_a_keyboard_interrupt() -> None:
    # 2e9 host rows copied to the device in batches: a call of seconds on any host.
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(CHILD), str(100_000_000), "20"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        whole = float(child.stdout.readline().split()[1])
        assert child.stdout.readline().strip() == "calling"
        time.sleep(min(0.3, whole / 4))
        sent = time.perf_counter()
        os.kill(child.pid, signal.SIGINT)
        line = child.stdout.readline().strip()
        latency = time.perf_counter() - sent
        out = child.stdout.read()
        assert child.stderr is not None
        err = child.stderr.read()
        child.wait(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
    assert line.startswith("interrupted"), f"{line} (uninterrupted {whole} s)\n{out}\n{err[-3000:]}"
    print(f"KeyboardInterrupt {latency * 1000:.0f} ms after SIGINT (call of {whole:.2f} s)")
    # GPU calls read no interrupt (docs/semantics.md): the KeyboardInterrupt comes when the call
    # returns at the latest, never a finished call that swallowed it.
    assert latency < max(1.5, whole + 0.5), f"KeyboardInterrupt {latency:.2f} s after SIGINT"
    assert "next call ok" in out, f"{out}\n{err[-3000:]}"
