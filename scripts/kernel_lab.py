# ruff: noqa: B023, E731
# (Each launch closure is timed at once, inside the loop iteration that binds its variables.)
"""Kernel lab: the kernels of kernels/ (and of another checkout, for a baseline) compiled by
NVRTC on the device as the crate compiles them, launched through CuPy family by family and
variant by variant on 2^29 float32 values already on the device. Every result is checked
against a plain reference kernel (one global atomic a row, the same bin rule); times are
CUDA-event medians beside a cupy.sum of the same buffer (the read roofline). The plan in
src/gpu/plan.rs is what ships; this is where its numbers come from.

Usage: python scripts/kernel_lab.py [--log2n 29] [--baseline DIR] [--only shared,packed,...]
Writes $OUT/kernel_lab.json and prints a table last.
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import json
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path

import cupy as cp
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SEG_TILE_ROWS = 16384
SEG_WIDTH_BITS = 15


def source(kernels: Path) -> str:
    """histogram.cu with its headers inlined, instantiated for float32 closed-left uniform bins
    only (NVRTC takes a minute for all of them)."""
    text = (kernels / "histogram.cu").read_text()
    text = re.sub(r"^HIST_KERNELS\((?!u32, UniformRule32, U32Bin, left).*$", "", text, flags=re.M)
    text = text.replace('#include "extremes.cuh"', "").replace('#include "histogramdd.cuh"', "")
    for _ in range(3):  # headers include headers
        for m in re.findall(r'#include "([a-z_]+\.cuh)"', text):
            text = text.replace(f'#include "{m}"', (kernels / m).read_text())
    return text


def nvrtc_library() -> ctypes.CDLL:
    found = sorted(
        glob.glob(f"{sys.prefix}/lib/python3*/site-packages/nvidia/cu13/lib/libnvrtc.so.*")
    )
    found += sorted(glob.glob("/usr/local/cuda/lib64/libnvrtc.so*"))
    return ctypes.CDLL(found[0])


def cubin(code: str, arch: int, *defines: str) -> bytes:
    """NVRTC as the crate calls it (src/gpu/compile.rs); CuPy's own compile adds -ftz=true."""
    nv = nvrtc_library()
    prog = ctypes.c_void_p()
    assert nv.nvrtcCreateProgram(ctypes.byref(prog), code.encode(), b"lab.cu", 0, None, None) == 0
    opts = [
        f"--gpu-architecture=sm_{arch}",
        "-DVALUE_T=float",
        "-std=c++17",
        "--fmad=false",
        "-default-device",
        *defines,
    ]
    arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    if nv.nvrtcCompileProgram(prog, len(opts), arr) != 0:
        size = ctypes.c_size_t()
        nv.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        nv.nvrtcGetProgramLog(prog, log)
        raise RuntimeError(log.value.decode())
    size = ctypes.c_size_t()
    nv.nvrtcGetCUBINSize(prog, ctypes.byref(size))
    out = ctypes.create_string_buffer(size.value)
    nv.nvrtcGetCUBIN(prog, out)
    return out.raw


def module(code: str, *defines: str) -> cp.RawModule:
    major, minor = cp.cuda.Device().compute_capability
    path = Path(tempfile.mkdtemp()) / "lab.cubin"
    path.write_bytes(cubin(code, int(f"{major}{minor}"), *defines))
    return cp.RawModule(path=str(path))


def rule32(n: int, l2_bytes: int, lo: float = 0.0, hi: float = 1.0) -> tuple:
    """numpy's float32 bins over [lo, hi] and the cheap rule's proof (bins.rs, in numpy)."""
    f32 = np.float32
    edges = np.linspace(f32(lo), f32(hi), n + 1, dtype=f32)
    lo32, hi32 = edges[0], edges[-1]
    denom = f32(hi32 - lo32)
    n_f = f32(n)
    scale = f32(n / (float(hi32) - float(lo32)))
    first = edges[:-1]
    last = np.nextafter(edges[1:], f32(-np.inf)).astype(f32)
    last[-1] = edges[-1]
    b = np.arange(n, dtype=np.float64)

    def numpy_est(x):
        with np.errstate(all="ignore"):
            i = np.trunc(((x - lo32) / denom) * n_f).astype(np.float64)
        return np.minimum(i, n - 1)

    literal = not bool(np.all((numpy_est(first) + 1 >= b) & (numpy_est(last) <= b + 1)))
    margin = 0.5
    if not literal and n < (1 << 22):
        est_first = ((first - lo32) * scale).astype(f32).astype(np.float64)
        est_last = ((last - lo32) * scale).astype(f32).astype(np.float64)
        worst = float(np.max(np.maximum(np.maximum(b - est_first, est_last - (b + 1)), 0.0)))
        m = 2.0 * worst + 1e-3
        margin = m if m < 0.25 else 0.5
    d_edges = cp.asarray(edges)
    packed = np.zeros(
        1,
        dtype=[
            ("edges", "u8"),
            ("n", "u4"),
            ("literal", "u4"),
            ("denom", "f4"),
            ("n_f", "f4"),
            ("scale", "f4"),
            ("margin", "f4"),
            ("formula", "u4"),
            ("pad", "u4"),
            ("start", "f8"),
            ("step", "f8"),
        ],
    )
    # numpy made these edges in float32 (float32 start and stop): the kernels may recompute
    # them so (formula 2) where the crate would, past a quarter of L2 (src/gpu/mod.rs).
    formula = 2 if edges.nbytes > l2_bytes // 4 else 0
    step = np.float32(np.float32(hi32 - lo32) / np.float32(n))
    fields = (d_edges.data.ptr, n, int(literal), denom, n_f, scale, np.float32(margin))
    packed[0] = (*fields, formula, 0, float(lo32), float(step))
    return d_edges, packed, int(literal), margin


REFERENCE = r"""
extern "C" __global__ void reference(const Value* values, u64 len, UniformRule32 rule, u64* out)
{
    const UniformBin<float, false> bin(rule);
    const u64 threads = (u64)gridDim.x * blockDim.x;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < len; i += threads) {
        const unsigned int b = bin(values[i]);
        if (b < bin.n) atomicAdd(out + b, 1ull);
    }
}
"""


class Timer:
    def __init__(self, reps: int):
        self.reps = reps

    def __call__(self, run) -> float:
        run()
        cp.cuda.Device().synchronize()
        times = []
        for _ in range(self.reps):
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            run()
            end.record()
            end.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, end))
        return statistics.median(times)


def raw_arg(record: np.ndarray) -> np.void:
    """A structured array's first record, which CuPy passes by value as a C struct."""
    return record[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--log2n", type=int, default=29)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--baseline", type=Path, default=None, help="a kernels/ folder to compare")
    ap.add_argument("--only", default="", help="families, comma-separated")
    ap.add_argument("--dists", default="", help="distributions, comma-separated")
    ap.add_argument("--bins", default="", help="bin counts, comma-separated")
    ap.add_argument("--variants", default="1,2,4", help="loads in flight to compare")
    ap.add_argument("--defines", default="", help="extra variants: NAME=-DX=1 -DY=2;...")
    args = ap.parse_args()
    only = set(filter(None, args.only.split(",")))
    n_rows = 1 << args.log2n
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    sms = props["multiProcessorCount"]
    optin = props["sharedMemPerBlockOptin"]
    per_sm = props["sharedMemPerMultiprocessor"]
    name = props["name"].decode()
    print(
        f"device {name}: {sms} SMs, {optin} B shared a block, {per_sm} a SM, "
        f"L2 {props['l2CacheSize']}"
    )
    timer = Timer(args.reps)

    variants = {}
    for loads in map(int, args.variants.split(",")):
        variants[f"loads{loads}"] = module(
            source(ROOT / "kernels"),
            f"-DHIST_LOADS_IN_FLIGHT={loads}",
            f"-DPACKED_LOADS_IN_FLIGHT={loads}",
        )
    for spec in filter(None, args.defines.split(";")):
        vname, flags = spec.split("=", 1)
        variants[vname] = module(source(ROOT / "kernels"), *flags.split())
    current = variants.get("loads2") or next(iter(variants.values()))
    for vname, mod in variants.items():
        for fname in ("hist_shared_u32_left", "hist_packed_u32_left", "hist_segmented_u32_left"):
            f = mod.get_function(fname)
            print(f"{vname} {fname}: {f.num_regs} registers, {f.local_size_bytes} B local")
    # The reference uses the baseline's copy of the rule when there is one: an independent check.
    ref_mod = module(source(args.baseline or ROOT / "kernels") + REFERENCE)
    reference = ref_mod.get_function("reference")
    baseline = module(source(args.baseline)) if args.baseline else None

    rng = cp.random.default_rng(7)
    data = {
        "uniform": rng.random(n_rows, dtype=cp.float32),
        "normal": cp.clip(rng.standard_normal(n_rows, dtype=cp.float32) * 0.1 + 0.5, 0, 0.999999),
        "degenerate": cp.full(n_rows, 0.3, dtype=cp.float32),
    }
    data["sorted"] = cp.sort(data["uniform"])
    # Values on edges, NaN, outside the range and a misaligned start, to exercise every path.
    adversarial = rng.random(n_rows // 8 + 3, dtype=cp.float32)
    adversarial[::7] = cp.float32(np.nan)
    adversarial[1::11] = 1.0
    adversarial[2::13] = 0.0
    adversarial[3::17] = 1.5
    data["adversarial"] = adversarial[1:]  # 4-byte misaligned head
    rows_of = {k: int(v.size) for k, v in data.items()}

    results = []
    dists = set(filter(None, args.dists.split(",")))
    wanted_bins = {int(b) for b in args.bins.split(",") if b}
    for dist, x in data.items():
        if dists and dist not in dists:
            continue
        roof = timer(lambda: x.sum())
        for bins in (16, 256, 4096, 32768, 65536, 1 << 20, 1 << 24):
            if wanted_bins and bins not in wanted_bins:
                continue
            if dist in ("sorted", "adversarial") and bins not in (256, 65536, 1 << 20, 1 << 24):
                continue
            _edges, rule, literal, margin = rule32(bins, props["l2CacheSize"])  # _edges: alive
            ref_rule = rule.copy()
            ref_rule["formula"] = 0  # the reference reads every edge
            ref_out = cp.zeros(bins, dtype=cp.uint64)
            reference((sms * 8,), (256,), (x, np.uint64(x.size), raw_arg(ref_rule), ref_out))
            expected = ref_out.get()

            def record(family, variant, ms, out, plan):
                ok = bool(np.array_equal(out.get(), expected))
                results.append(
                    dict(
                        dist=dist,
                        bins=bins,
                        family=family,
                        variant=variant,
                        ms=ms,
                        roof_ms=roof,
                        share=roof / ms,
                        exact=ok,
                        plan=plan,
                        literal=literal,
                        margin=margin,
                        rows=x.size,
                    )
                )
                flag = "" if ok else "  MISMATCH"
                print(
                    f"{dist:11s} {bins:9d} {family:10s} {variant:8s} {ms:8.3f} ms "
                    f"{100 * roof / ms:5.1f}%{flag}",
                    flush=True,
                )

            # shared: replicated u32 histograms, 512 threads, up to 4 blocks a SM
            stride = (bins + 1) | 1
            one = stride * 4
            if one <= optin and (not only or "shared" in only):
                blocks = max(b for b in range(1, 5) if b == 1 or (one + 1024) * b <= per_sm)
                block = 512 if blocks > 1 else 1024
                budget = min(per_sm // blocks - 1024, optin)
                replicas = max(1, min(16, budget // one))
                shared_bytes = replicas * one
                for vname, mod in list(variants.items()) + (
                    [("baseline", baseline)] if baseline else []
                ):
                    f = mod.get_function("hist_shared_u32_left")
                    if shared_bytes > 48 * 1024:
                        f.max_dynamic_shared_size_bytes = shared_bytes
                    out = cp.zeros(bins, dtype=cp.uint64)
                    st = stride if vname != "baseline" else (bins | 1)
                    sb = replicas * st * 4
                    launch = lambda: (
                        out.fill(0),
                        f(
                            (sms * blocks,),
                            (block,),
                            (
                                x,
                                np.uint64(x.size),
                                np.uint64(0),
                                np.uint64(0),
                                raw_arg(rule),
                                np.uint32(replicas),
                                np.uint32(st),
                                out,
                            ),
                            shared_mem=sb,
                        ),
                    )
                    ms = timer(launch)
                    record("shared", vname, ms, out, f"{sms * blocks}x{block} r{replicas}")

            # packed: 16-bit counters, one block of 1024 a SM (or more when they fit)
            words = (bins + 1) // 2
            if words * 4 <= optin and bins >= 4096 and (not only or "packed" in only):
                for vname, mod in variants.items():
                    f = mod.get_function("hist_packed_u32_left")
                    sb = words * 4
                    if sb > 48 * 1024:
                        f.max_dynamic_shared_size_bytes = sb
                    blocks = max(1, min(2, per_sm // (sb + 1024)))
                    out = cp.zeros(bins, dtype=cp.uint64)
                    launch = lambda: (
                        out.fill(0),
                        f(
                            (sms * blocks,),
                            (1024,),
                            (x, np.uint64(x.size), np.uint64(0), np.uint64(0), raw_arg(rule), out),
                            shared_mem=sb,
                        ),
                    )
                    ms = timer(launch)
                    record("packed", vname, ms, out, f"{sms * blocks}x1024")

            # segmented: partition, scan, count
            if bins >= 32768 and (not only or "segmented" in only):
                P = -(-bins // (1 << SEG_WIDTH_BITS))
                tiles = -(-x.size // SEG_TILE_ROWS)
                keys = cp.empty(tiles * SEG_TILE_ROWS, dtype=cp.uint16)
                starts = cp.empty(tiles * (P + 1), dtype=cp.uint16)
                cum = cp.empty(P * tiles, dtype=cp.uint32)
                totals = cp.empty(P, dtype=cp.uint32)
                part = current.get_function("hist_segmented_u32_left")
                scan = current.get_function("seg_scan")
                count = current.get_function("seg_count")
                part_bytes = (32 + (P + 3) // 4 * 4 + SEG_TILE_ROWS + SEG_TILE_ROWS // 2) * 4
                count_bytes = (32 + P + 1 + (1 << SEG_WIDTH_BITS)) * 4
                part.max_dynamic_shared_size_bytes = part_bytes
                count.max_dynamic_shared_size_bytes = count_bytes
                part_blocks = max(1, min(4, per_sm // (part_bytes + 1024)))
                count_grid = sms
                per_item = max(x.size // (2 * count_grid), SEG_TILE_ROWS)
                seg = np.zeros(
                    1,
                    dtype=[
                        ("keys", "u8"),
                        ("starts", "u8"),
                        ("cum", "u8"),
                        ("totals", "u8"),
                        ("partitions", "u4"),
                        ("width_bits", "u4"),
                        ("tiles", "u4"),
                        ("rows_per_item", "u4"),
                    ],
                )
                seg[0] = (
                    keys.data.ptr,
                    starts.data.ptr,
                    cum.data.ptr,
                    totals.data.ptr,
                    P,
                    SEG_WIDTH_BITS,
                    tiles,
                    per_item,
                )
                seg_arg = raw_arg(seg)
                out = cp.zeros(bins, dtype=cp.uint64)

                def partition():
                    args = (x, np.uint64(x.size), np.uint64(0), np.uint64(0), raw_arg(rule))
                    grid = (sms * part_blocks,)
                    part(grid, (512,), (*args, seg_arg, out), shared_mem=part_bytes)

                def scan_tiles():
                    scan((P,), (1024,), (seg_arg,))

                def count_items():
                    args = (seg_arg, np.uint32(bins), out)
                    count((count_grid,), (1024,), args, shared_mem=count_bytes)

                stages = {"partition": partition, "scan": scan_tiles, "count": count_items}

                def launch():
                    out.fill(0)
                    for stage in stages.values():
                        stage()

                ms = timer(launch)
                stage_ms = {name: round(timer(stage), 4) for name, stage in stages.items()}
                launch()
                record("segmented", "", ms, out, f"P={P} part {sms * part_blocks}x512 {stage_ms}")

            # global atomics, current and baseline
            if bins >= 32768 and (not only or "global" in only):
                for vname, mod in [("current", current)] + (
                    [("baseline", baseline)] if baseline else []
                ):
                    f = mod.get_function("hist_global_u32_left")
                    out = cp.zeros(bins, dtype=cp.uint64)
                    launch = lambda: (
                        out.fill(0),
                        f(
                            (sms * 4,),
                            (512,),
                            (x, np.uint64(x.size), np.uint64(0), np.uint64(0), raw_arg(rule), out),
                        ),
                    )
                    ms = timer(launch)
                    record("global", vname, ms, out, f"{sms * 4}x512")

    out_dir = Path(os.environ.get("OUT", "/tmp"))
    (out_dir / "kernel_lab.json").write_text(
        json.dumps(dict(device=name, rows=rows_of, results=results), indent=1)
    )
    print(f"\n{name}: best of each family, share of the read roofline (cupy.sum)")
    print("| data | bins | family | variant | ms | share | exact |")
    print("|---|---:|---|---|---:|---:|---|")
    best = {}
    for r in results:
        key = (r["dist"], r["bins"], r["family"])
        if r["variant"] == "baseline":
            key = (*key, "baseline")
        if key not in best or r["ms"] < best[key]["ms"]:
            best[key] = r
    for r in best.values():
        print(
            f"| {r['dist']} | {r['bins']} | {r['family']} | {r['variant']} | {r['ms']:.3f} | "
            f"{100 * r['share']:.0f}% | {'yes' if r['exact'] else 'NO'} |"
        )


if __name__ == "__main__":
    main()
