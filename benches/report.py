"""Markdown tables from one GPU run: our kernels beside the peers measured in the same call.

Usage: python benches/report.py OUTDIR  (reads gpu_bench.json and peers' anchors_gpu_*.json)
"""

from __future__ import annotations

import glob
import json
import os
import sys


def _ms(v: float | None) -> str:
    return f"{v:.2f}" if v else "-"


def _ratio(peer: float | None, ours: float) -> str:
    return f"{peer / ours:.1f}x" if peer else "-"


def main(out: str) -> None:
    ours = json.load(open(os.path.join(out, "gpu_bench.json")))
    peers: dict[tuple[str, int, str], float] = {}
    roof = None
    for path in glob.glob(os.path.join(out, "anchors_gpu_*.json")):
        for r in json.load(open(path)):
            if r.get("what") == "gpu_1d" and "ms" in r:
                peers[(r["impl"], r["bins"], r["dist"])] = r["ms"]
            if r.get("what") == "gpu_2d" and "ms" in r:
                peers[("cupy.histogramdd", r["bins"], "2d")] = r["ms"]
            if r.get("what") == "read_roofline_cupy_sum":
                roof = r["ms"]
    print(
        f"{ours['device']}, 2^29 values on the device: whole Python calls, synchronized (ms); "
        f"the read roofline is the peers' cupy.sum of the same buffer ({roof:.3f} ms)\n"
    )
    print(
        "| dtype | data | bins | plan's kernel | kernels ms | numpy drop-in ms | of roofline "
        "| DataFrame ms | torch.histc ms | cupy.histogram ms | vs torch | vs cupy |"
    )
    print("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in ours.get("device_resident", []):
        key_t = ("torch.histc", r["bins"], r["dist"])
        key_c = ("cupy.histogram(edges)", r["bins"], r["dist"])
        t = peers.get(key_t) if r["dtype"] == "float32" else None
        c = peers.get(key_c) if r["dtype"] == "float32" else None
        ms = r["numpy_ms"]
        share = f"{100 * roof / ms:.0f}%" if roof else "-"
        print(
            f"| {r['dtype']} | {r['dist']} | {r['bins']} | `{r['kernel']}` | "
            f"{r['kernel_ms']:.3f} | {ms:.3f} | {share} | {r['api_ms']:.2f} | {_ms(t)} | "
            f"{_ms(c)} | {_ratio(t, ms)} | {_ratio(c, ms)} |"
        )
    pinned = next(
        (
            r["gbps"]
            for path in glob.glob(os.path.join(out, "anchors_gpu_*.json"))
            for r in json.load(open(path))
            if r.get("what") == "h2d_pinned"
        ),
        None,
    )
    e2e = {
        r["what"]: r["ms"]
        for path in glob.glob(os.path.join(out, "anchors_gpu_*.json"))
        for r in json.load(open(path))
        if r.get("what", "").startswith("e2e_host") and "ms" in r
    }
    print(
        "\nFrom a Polars column in host memory, end to end (median ms of `df.select(...)`); the "
        "call copying the column, by each transfer; GB/s of the best and its "
        f"share of the pinned copy rate measured in the same run ({pinned or 0:.1f} GB/s):\n"
    )
    print(
        "| dtype | rows | bins | pageable | staged | registered | best GB/s | of pinned "
        "| pinned | auto | cpu, 16 cores | Polars `hist` |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in ours["host"]:
        firsts = [r["first_pageable_ms"], r["first_staged_ms"], r["first_registered_ms"]]
        best = min(v for v in firsts if v == v)  # NaN: that transfer failed (see the log)
        gbps = r["bytes"] / best / 1e6
        share = f"{100 * gbps / pinned:.0f}%" if pinned else "-"
        print(
            f"| {r['dtype']} | {r['n']} | {r['bins']} | {r['first_pageable_ms']:.1f} "
            f"| {r['first_staged_ms']:.1f} | {r['first_registered_ms']:.1f} | {gbps:.1f} "
            f"| {share} | {r['pinned_ms']:.2f} | {r['auto_ms']:.1f} | {r['cpu_ms']:.1f} "
            f"| {r['polars_hist_ms']:.1f} |"
        )
    if e2e:
        print(
            "\nPeers from the same host array (2^28 float32, 256 bins): "
            + ", ".join(f"{k.removeprefix('e2e_host_')} {v:.1f} ms" for k, v in e2e.items())
        )
    nd = ours.get("nd", [])
    print("\n2-D, 2^27 float32 (x, y) pairs in one (n, 2) device array, whole calls (ms):\n")
    print("| bins | ours, equal bins | ours, explicit edges | cupy.histogramdd (edges) | vs cupy |")
    print("|---|---:|---:|---:|---:|")
    device_2d = [r for r in nd if r["what"] == "2d_device"]
    for b in dict.fromkeys(r["bins"] for r in device_2d):
        equal = next(r for r in device_2d if r["bins"] == b and r["how"] == "equal bins")
        edges = next(r for r in device_2d if r["bins"] == b and r["how"] == "edges")
        c = peers.get(("cupy.histogramdd", b, "2d"))
        print(
            f"| {b} | {equal['api_ms']:.3f} | {edges['api_ms']:.3f} | {_ms(c)} "
            f"| {_ratio(c, equal['api_ms'])} / {_ratio(c, edges['api_ms'])} |"
        )
    for r in nd:
        if r["what"] == "2d_host":
            print(
                f"\nFrom a Polars frame, 2^27 pairs, {r['bins']}: gpu {r['gpu_ms']:.1f} ms, "
                f"cpu {r['cpu_ms']:.1f} ms"
            )
        if r["what"] == "by":
            print(
                f"\nby= with {r['groups']} groups, {r['rows']} float32 rows, {r['bins']} bins: "
                f"by= gpu {r['by_gpu_ms']:.1f} ms, by= cpu {r['by_cpu_ms']:.1f} ms, "
                f"group_by().agg() {r['group_by_agg_ms']:.1f} ms"
            )


if __name__ == "__main__":
    main(sys.argv[1])
