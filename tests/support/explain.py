"""What the engine decides and reports for a call (engine/test_explain*.py)."""

from __future__ import annotations

import pickle

import polars as pl

from polars_gpu_hist import _internal
from polars_gpu_hist._args import arguments as _args


def decision(report: str) -> list[str]:
    """A report's decision: every line but the call's times, the copy it made (a call's own
    route, an estimate in `explain`) and where kernels are cached (said by `explain` only)."""
    return [
        line for line in report.splitlines() if not line.startswith(("time", "copy", "kernels"))
    ]


def pickled_options(bins: int, device: str, kernel: str = "auto") -> bytes:
    return pickle.dumps(
        _args.histogram_kwargs(
            bins, (0, 1), density=False, closed="left", flow=False, device=device, kernel=kernel
        )
    )


def host_report(values: pl.Series, bins: int, device: str, kernel: str = "auto") -> str:
    _, report = _internal._histogram_report(values, pickled_options(bins, device, kernel))
    return report
