"""Explicit edges on the CPU backend against numpy, on the process's SIMD path.

`POLARS_GPU_HIST_SIMD=avx512 python3 scripts/edges_check.py` (and avx2, scalar): uneven,
geometric, clustered edges, edges at the float64 grid, large values close together, many edges;
values on and a ulp beside every edge, inside and outside the span, one value repeated, NaN, inf.
"""

import numpy as np
import polars as pl

import polars_gpu_hist  # noqa: F401

rng = np.random.default_rng(1)
SETS = {
    "uneven 257": np.sort(np.concatenate([[0.0, 1.0], rng.random(255)])),
    "geometric 257": 1e-6 * 1e6 ** (np.arange(257) / 256),
    "clustered": np.array([0.0, 1e-9, 2e-9, 3e-9, 1.0, 1000.0]),
    "float grid": 1.0 + np.floor(np.arange(41) * 1.5) * np.finfo(float).eps,
    "large close": 1e15 + np.arange(51.0) ** 2 * 0.125,
    "normal 300": np.sort(rng.normal(size=300)),
    "many 70001": np.arange(70001) * 0.37 - 5.0,
}


def main() -> None:
    bad = 0
    for name, e in SETS.items():
        lo, hi = e[0], e[-1]
        x = np.concatenate(
            [
                e,
                np.nextafter(e, np.inf),
                np.nextafter(e, -np.inf),
                lo + (hi - lo) * rng.random(200_000),
                lo + (hi - lo) * (1.3 * rng.random(50_000) - 0.15),
                np.repeat(e[len(e) // 2], 999),
                [np.nan, np.inf, -np.inf, 0.0, -0.0],
            ]
        )
        rng.shuffle(x)
        want = np.histogram(x[np.isfinite(x)], bins=e)[0]
        got = pl.DataFrame({"x": x}).select(
            pl.col("x").gpu_hist.histogram(bins=e.tolist(), device="cpu")
        )
        same = bool((got.unnest("x")["count"].to_numpy() == want).all())
        bad += not same
        print(f"{name}: {'exact' if same else 'DIFFERENT'} ({len(x)} values, {len(e)} edges)")
    print("all exact" if bad == 0 else f"{bad} sets differ")
    raise SystemExit(bad > 0)


if __name__ == "__main__":
    main()
