"""What `import polars_gpu_hist` costs and shows: no numpy, Altair or Dask until
a function needs them, and a namespace of the public names only."""

from __future__ import annotations

import json
import subprocess
import sys

import polars_gpu_hist as gh

HEAVY = ("numpy", "altair", "dask", "pandas", "pyarrow", "matplotlib")


def fresh(code: str) -> dict:
    """``code``'s JSON answer from a fresh interpreter (what this one imported does not count)."""
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_the_import_and_the_polars_calls_load_no_heavy_module() -> None:
    """numpy comes only with numpy data, the accumulator, the numpy module, Dask or plots."""
    loaded = fresh(
        "import json, sys; import polars as pl; import polars_gpu_hist as gh\n"
        "s = pl.Series('x', [1.0, 2.0, 3.0])\n"
        "gh.histogram(s, 2); s.gpu_hist.histogram(bins=[0, 1, 2])\n"
        "s.to_frame().select(pl.col('x').gpu_hist.histogram(bins=2, range=(0, 4)))\n"
        "s.to_frame().select(pl.col('x').gpu_hist.hist(bin_count=3))\n"
        "gh.histogramdd(s, s.alias('y'), bins=2); gh.explain(s); gh.gpu_available()\n"
        "import polars_gpu_hist.stats as hs\n"
        "h = s.to_frame().select(pl.col('x').gpu_hist.histogram(bins=2, range=(0, 4)))\n"
        "h.select(hs.mean('x').alias('m'), hs.std('x').alias('s'), hs.sum('x').alias('n'))\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    assert loaded == []


def test_the_lazy_names_load_their_modules_on_first_use() -> None:
    loaded = fresh(
        "import json, sys; from polars_gpu_hist import Histogram, histogram_scan\n"
        "print(json.dumps(['numpy' in sys.modules, Histogram.__name__, histogram_scan.__name__]))"
    )
    assert loaded == [True, "Histogram", "histogram_scan"]
    assert gh.Histogram is gh._histogram.histogram.Histogram
    assert gh.Flow is gh._histogram.histogram.Flow


def test_dir_lists_the_public_names_only() -> None:
    names = dir(gh)
    assert names == sorted(gh.__all__)
    for leaked in ("Any", "Path", "pickle", "pl", "builtins", "contextlib", "Union", "annotations"):
        assert leaked not in names
        assert not hasattr(gh, leaked)
    for public in ("histogram", "Histogram", "histogram_scan", "explain", "__version__"):
        assert public in names
        assert getattr(gh, public) is not None


def test_every_public_name_resolves_and_a_missing_one_says_so() -> None:
    for name in gh.__all__:
        getattr(gh, name)
    try:
        gh.no_such_name  # noqa: B018
    except AttributeError as e:
        assert "no_such_name" in str(e)
    else:
        raise AssertionError("a missing name must raise AttributeError")
