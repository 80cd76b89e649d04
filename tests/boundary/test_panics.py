"""A panic inside a plugin call reaches Python as a Polars error, and the next call works."""

from __future__ import annotations

import polars as pl
import pytest


def test_a_panic_inside_a_plugin_call_is_polars_error_and_the_next_call_works(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The plugin's own last-error slot and version symbols (src/python/plugin.rs): Polars reads
    # "PANIC" there as a panic; its message reaches stderr only under POLARS_VERBOSE=1.
    from polars_gpu_hist._expr.polars_hist import _bench_floor_expr

    df = pl.DataFrame({"x": [1.0, 2.0]})
    asked = "the panic a boundary test asked for"
    for verbose in ["0", "1"]:
        monkeypatch.setenv("POLARS_VERBOSE", verbose)
        capfd.readouterr()
        with pytest.raises(pl.exceptions.ComputeError, match="the plugin panicked"):
            df.select(_bench_floor_expr(pl.col("x"), panic=True))
        assert (asked in capfd.readouterr().err) == (verbose == "1")
        assert df.select(_bench_floor_expr(pl.col("x"))).item() == 2
