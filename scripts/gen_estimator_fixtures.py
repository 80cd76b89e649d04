"""Regenerates tests/fixtures/estimators.json: numpy's bin estimators on a few hundred samples.

    /work/main/.venv/bin/python scripts/gen_estimator_fixtures.py

On a CPU with AVX-512, numpy computes `log2` and `power` with SVML, whose last bit may differ
from the C library's that `src/estimators` replays (the "doane" widths of a few cases): turn
those paths off for the run with NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR".

For each sample (every dtype; random, skewed, degenerate and limit values; with and without a
`range`) it records, per estimator, numpy's bin count, its bin width (the selector's return, as
float64 bits) and whether "stone" warned, or that numpy fails. `src/estimators/tests.rs` checks
`estimators::equal_bin_count` against it.

numpy builds the edges right after choosing the count and may then refuse them ("Too many bins
for data range"); the count is still what the estimator chose, so `np.linspace` is wrapped to
read it. Values are stored exactly: floats as their IEEE bits, integers as integers. Large
samples are stored as a formula (`gen`) that Rust evaluates with the same float operations.
"""

import json
import pathlib
import warnings

import numpy as np
from numpy.lib import _histograms_impl as impl

ESTIMATORS = ["auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt"]
DTYPES = [
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
]
MAX_BINS = 1 << 28
STONE_MAX_N = 5000  # "stone" histograms every count up to sqrt(n): keep the Rust test quick
OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "estimators.json"

_linspace = np.linspace
_state: dict = {}


class _Stop(Exception):
    pass


def _recording_linspace(start, stop, num=50, *args, **kwargs):
    _state["num"] = num
    if _state.get("phase") == "final" and not 1 <= num <= (1 << 20):
        raise _Stop
    return _linspace(start, stop, num, *args, **kwargs)


def _recording_selector(selector):
    def wrapped(x, range):
        _state["phase"] = "selector"
        try:
            width = selector(x, range)
        except Exception:
            _state["phase"] = "failed"
            raise
        _state["phase"] = "final"
        _state["width"] = width
        return width

    return wrapped


def numpy_estimate(a, estimator, range):
    """[bins, width bits as hex, warned] as numpy decides, or None where numpy fails."""
    _state.clear()
    _state["phase"] = "final"
    np.linspace = _recording_linspace
    selectors = dict(impl._hist_bin_selectors)
    impl._hist_bin_selectors.update({k: _recording_selector(v) for k, v in selectors.items()})
    try:
        with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
            warnings.simplefilter("always")
            try:
                impl.histogram_bin_edges(a, estimator, range=range)
            except _Stop:
                pass
            except Exception as e:  # numpy fails: only a refusal of the edges keeps the count
                if not (_state.get("phase") == "final" and "Too many bins" in str(e)):
                    return None
    finally:
        np.linspace = _linspace
        impl._hist_bin_selectors.update(selectors)
    bins = _state["num"] - 1
    if not 1 <= bins <= MAX_BINS:
        return None  # numpy fails further on (0 bins) or cannot allocate them
    width = float(_state.get("width", 0.0))
    warned = any("suboptimal" in str(w.message) for w in caught)
    return [
        int(bins),
        np.float64(width).view(np.uint64).item().to_bytes(8, "big").hex(),
        int(warned),
    ]


def stored(a):
    if a.dtype.kind == "f":
        bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
        return [int(v) for v in a.view(bits)]
    return [int(v) for v in a]


def generated(dtype, n, seed, scale, offset):
    """The samples Rust rebuilds from `gen`: a hash of the index, skewed by a cube."""
    h = np.arange(n, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(seed)
    u = (h >> np.uint64(11)).astype(np.float64) / 2.0**53
    x = ((u * u) * u - 0.25) * scale + offset
    if dtype.startswith("float"):
        return x.astype(dtype)
    info = np.iinfo(dtype)
    return np.clip(np.floor(x), info.min, info.max).astype(dtype)


def sample(rng, dtype, n, kind):
    if dtype.startswith("float"):
        fmax = float(np.finfo(dtype).max)
        tiny = float(np.finfo(dtype).smallest_subnormal)
        shapes = {
            "normal": lambda: rng.standard_normal(n),
            "uniform": lambda: rng.uniform(-1, 1, n),
            "cauchy": lambda: rng.standard_cauchy(n),
            "lognormal": lambda: rng.lognormal(0, 2, n),
            "two": lambda: rng.choice(rng.standard_normal(2), n),
            "constant": lambda: np.full(n, rng.standard_normal()),
            "rounded": lambda: np.round(rng.standard_normal(n) * 4) / 4,
            "huge": lambda: rng.uniform(-1, 1, n) * fmax * rng.uniform(0.2, 1),
            "subnormal": lambda: rng.standard_normal(n) * tiny * rng.integers(1, 1000),
            "offset": lambda: 10.0 ** rng.uniform(3, 12) + rng.standard_normal(n),
        }
        x = shapes[kind]()
        if kind not in ("huge", "subnormal", "offset"):
            x = x * 10.0 ** rng.uniform(-6, 6)
        with np.errstate(all="ignore"):
            return x.astype(dtype)
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    if kind == "limits":
        k = int(rng.integers(1, 100))
        return np.concatenate(
            [
                rng.integers(lo, lo + k, n // 2, dtype=dtype, endpoint=True),
                rng.integers(hi - k, hi, n - n // 2, dtype=dtype, endpoint=True),
            ]
        )
    if kind == "full":
        return rng.integers(lo, hi, n, dtype=dtype, endpoint=True)
    if kind == "narrow":
        base = rng.integers(lo, hi - 4, dtype=dtype, endpoint=True)
        return base + rng.integers(0, 4, n).astype(dtype)
    span = (hi - lo) * 10.0 ** rng.uniform(-6, -0.5)
    centre = lo + (hi - lo) / 2
    shapes = {"normal": rng.standard_normal, "exponential": lambda n: rng.exponential(1.0, n)}
    x = np.clip(shapes[kind](n) * span / 8 + centre, lo, hi)
    return np.array([min(max(int(v), lo), hi) for v in x], dtype=dtype)


def pick_range(rng, a, mode):
    v = a.astype(np.float64)
    if mode == "none" or not np.isfinite(v).all():
        return None
    vmin, vmax = float(v.min()), float(v.max())
    if mode == "cut":
        q = np.sort(rng.uniform(0, 1, 2))
        return (float(np.quantile(v, q[0])), float(np.quantile(v, q[1])))
    if mode == "wide":
        w = (vmax - vmin) or 1.0
        return (vmin - w, vmax + 2 * w)
    if mode == "point":
        x = float(rng.choice(v))
        return (x, x)
    if mode == "disjoint":
        return (vmax + 1 + abs(vmax), vmax + 2 + 2 * abs(vmax))
    raise ValueError(mode)


def case(a, range, gen=None):
    clean = a[~np.isnan(a)] if a.dtype.kind == "f" else a
    expect = []
    for e in ESTIMATORS:
        if e == "stone" and clean.size > STONE_MAX_N:
            expect.append("skip")
        else:
            expect.append(numpy_estimate(clean, e, range))
    out = {"dtype": str(a.dtype)}
    if gen is None:
        out["values"] = stored(a)
    else:
        out["gen"] = gen
    out["range"] = None if range is None else [np.float64(r).view(np.uint64).item() for r in range]
    out["expect"] = expect
    return out


def main():
    rng = np.random.default_rng(20261124)
    cases = []
    float_kinds = [
        "normal",
        "uniform",
        "cauchy",
        "lognormal",
        "two",
        "constant",
        "rounded",
        "huge",
        "subnormal",
        "offset",
    ]
    int_kinds = ["normal", "exponential", "limits", "full", "narrow"]
    modes = ["none", "none", "cut", "wide", "point", "disjoint"]
    for dtype in DTYPES:
        kinds = float_kinds if dtype.startswith("float") else int_kinds
        for i in range(24 if dtype.startswith("float") else 16):
            kind = kinds[i % len(kinds)]
            n = (
                [1, 2, 3, 5, 9, 17, 40][int(rng.integers(0, 7))]
                if i % 3
                else int(rng.integers(50, 200))
            )
            a = sample(rng, dtype, n, kind)
            if dtype.startswith("float") and i % 7 == 6:
                a[rng.integers(0, n)] = np.nan  # skipped, as the histogram skips it
            cases.append(case(a, pick_range(rng, a, modes[i % len(modes)])))
    # Powers of two for the log2 of "sturges" and "doane".
    for n in [2, 4, 16, 64, 256]:
        cases.append(case(rng.standard_normal(n), None))
        cases.append(case(rng.integers(0, 1000, n).astype("int32"), None))
    # Infinite values: refused without a range, cut away with one.
    inf = np.array([1.0, 2.0, np.inf, 3.0])
    cases.append(case(inf, None))
    cases.append(case(inf, (0.0, 10.0)))
    # Large samples from a formula: deep pairwise trees, integer sums in 8192-value buffers and the
    # radix selection of the quartiles (above 32768 values).
    for dtype in DTYPES:
        for n, seed in [(40_000, 11), (70_001, 12)]:
            info = np.finfo(dtype) if dtype.startswith("float") else np.iinfo(dtype)
            scale = 1e3 if dtype.startswith("float") else float(info.max - info.min) / 2
            offset = 7.5 if dtype.startswith("float") else float(info.min) + scale / 3
            gen = {"n": n, "seed": seed, "scale": scale, "offset": offset}
            a = generated(dtype, **gen)
            cases.append(case(a, None, gen))
            cases.append(case(a, (offset, offset + scale / 4), gen))
    cases += float16_cases()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(
        {"numpy": np.__version__, "estimators": ESTIMATORS, "cases": cases}, separators=(",", ":")
    )
    OUT.write_text(text + "\n")
    print(f"{len(cases)} cases, {len(text) // 1024} KiB -> {OUT}")


def float16_cases():
    """float16 samples, which numpy's estimators compute in float16 (float32 steps rounded to
    float16; the mean's sum cast to float32). A generator of their own, so the other cases keep
    their values."""
    rng = np.random.default_rng(20261127)
    kinds = ["normal", "uniform", "lognormal", "two", "rounded", "huge", "subnormal", "cauchy"]
    modes = ["none", "none", "cut", "wide", "point"]
    cases = []
    for i in range(48):
        n = [2, 3, 5, 9, 17, 40, 120, 300][i % 8]
        a = sample(rng, "float16", n, kinds[i % len(kinds)])
        if i % 11 == 10:
            a[rng.integers(0, n)] = np.nan
        cases.append(case(a, pick_range(rng, a, modes[i % len(modes)])))
    # The reported ones: "scott" over one subnormal and zero, "doane" over zeros of both signs.
    cases.append(case(np.array([5.96e-08, 0.0], np.float16), (5.96e-08, 5.96e-08)))
    cases.append(case(np.array([0.0, 6.1e-05, -0.0], np.float16), None))
    # Past numpy's 8192-value cast buffers and the quartiles' radix selection.
    for n, seed in [(9_000, 13), (40_000, 14)]:
        gen = {"n": n, "seed": seed, "scale": 1e3, "offset": 7.5}
        a = generated("float16", **gen)
        cases.append(case(a, None, gen))
        cases.append(case(a, (7.5, 7.5 + 1e3 / 4), gen))
    return cases


if __name__ == "__main__":
    main()
