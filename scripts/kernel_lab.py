# ruff: noqa: B023, E731
# (Each launch closure is timed at once, inside the loop iteration that binds its variables.)
"""Kernel lab: the kernels of kernels/ compiled by NVRTC on the device as the crate compiles
them (one module per kernel, its variant fixed by -D flags: src/gpu/kernel.rs), launched
through CuPy family by family on 2^29 float32 values already on the device. Every result is
checked against a plain reference kernel (one global atomic a row, the same binner); times are
CUDA-event medians beside a cupy.sum of the same buffer (the read roofline). The plan in
src/gpu/plan.rs is what ships; this is where its numbers come from.

Usage: python scripts/kernel_lab.py [--log2n 29] [--only shared,packed,...] [--tag name]
       [--dtype uint16] (2^log2n uint16 values counted by value, one bin a value)
       [--define -DPACKED_LOADS_IN_FLIGHT=2 ...] (the counting kernels' tunables)
Writes $OUT/kernel_lab[_tag].json and prints a table last.
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

import cupy as cp
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SEG_TILE_ROWS = 16384
SEG_WIDTH_BITS = 15
HEADERS = [
    "abi.cuh",
    "bin_rule.cuh",
    "binners.cuh",
    "rows.cuh",
    "cells.cuh",
    "counters.cuh",
    "families.cuh",
    "segmented.cuh",
    "extremes.cuh",
]


def source(extra: str = "") -> str:
    """histogram.cu with its headers inlined, as src/gpu/compile.rs inlines them."""
    text = (ROOT / "kernels" / "histogram.cu").read_text()
    for name in HEADERS:
        text = text.replace(f'#include "{name}"', (ROOT / "kernels" / name).read_text())
    return text + extra


def nvrtc_library() -> ctypes.CDLL:
    found = sorted(
        glob.glob(f"{sys.prefix}/lib/python3*/site-packages/nvidia/cu13/lib/libnvrtc.so.*")
    )
    found += sorted(glob.glob("/usr/local/cuda/lib64/libnvrtc.so*"))
    return ctypes.CDLL(found[0])


def module(*defines: str, extra: str = "") -> cp.RawModule:
    """A module as the crate compiles it (CuPy's own compile would add -ftz=true)."""
    nv = nvrtc_library()
    major, minor = cp.cuda.Device().compute_capability
    prog = ctypes.c_void_p()
    code = source(extra).encode()
    assert nv.nvrtcCreateProgram(ctypes.byref(prog), code, b"lab.cu", 0, None, None) == 0
    opts = [
        f"--gpu-architecture=sm_{major}{minor}",
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
    path = Path(tempfile.mkdtemp()) / "lab.cubin"
    path.write_bytes(out.raw)
    return cp.RawModule(path=str(path))


COLUMN = [
    ("values", "u8"),
    ("validity", "u8"),
    ("validity_offset", "u8"),
    ("len", "u8"),
    ("stride", "u8"),
]
WEIGHTS = [("values", "u8"), ("validity", "u8"), ("validity_offset", "u8")]
RULE = [
    ("edges", "u8"),
    ("table", "u8"),
    ("lo", "i8"),
    ("n", "u4"),
    ("pad", "u4"),
    ("first", "f8"),
    ("last", "f8"),
    ("denom", "f8"),
    ("n_f", "f8"),
    ("scale", "f8"),
    ("margin", "f8"),
    ("start", "f8"),
    ("step", "f8"),
    ("at_min", "u4"),
    ("at_max", "u4"),
]
SEGMENTS = [
    ("keys", "u8"),
    ("starts", "u8"),
    ("cum", "u8"),
    ("totals", "u8"),
    ("partitions", "u4"),
    ("width_bits", "u4"),
    ("tiles", "u4"),
    ("rows_per_item", "u4"),
]
MAX_RANK = 8
COUNT_PARAMS = np.dtype(
    [
        ("columns", COLUMN, (MAX_RANK,)),
        ("rules", RULE, (MAX_RANK,)),
        ("cell_strides", "u4", (MAX_RANK,)),
        ("cells", "u4"),
        ("pad", "u4"),
        ("weights", WEIGHTS),
        ("shared", [("replicas", "u4"), ("stride", "u4")]),
        ("seg", SEGMENTS),
        ("out", "u8"),
    ],
    align=True,
)
assert COUNT_PARAMS.itemsize == 1280, "kernels/abi.cuh's CountParams (src/gpu/abi.rs asserts it)"


def rule32(n: int, l2_bytes: int) -> tuple[cp.ndarray, dict, bool, float, int]:
    """numpy's float32 bins over [0, 1] (float32 linspace, as float32 data's own extremes make
    them) and the cheap rule's proof (bins/uniform.rs, in numpy)."""
    f32 = np.float32
    edges = np.linspace(f32(0), f32(1), n + 1, dtype=f32)
    lo, hi = edges[0], edges[-1]
    denom = f32(hi - lo)
    scale = f32(n / (float(hi) - float(lo)))
    first = edges[:-1]
    last = np.nextafter(edges[1:], f32(-np.inf)).astype(f32)
    last[-1] = edges[-1]
    b = np.arange(n, dtype=np.float64)

    def numpy_est(x):
        with np.errstate(all="ignore"):
            i = np.trunc(((x - lo) / denom) * f32(n)).astype(np.float64)
        return np.minimum(i, n - 1)

    literal = not bool(np.all((numpy_est(first) + 1 >= b) & (numpy_est(last) <= b + 1)))
    margin = 0.5
    if not literal and n < (1 << 22):
        est_first = ((first - lo) * scale).astype(f32).astype(np.float64)
        est_last = ((last - lo) * scale).astype(f32).astype(np.float64)
        worst = float(np.max(np.maximum(np.maximum(b - est_first, est_last - (b + 1)), 0.0)))
        m = 2.0 * worst + 1e-3
        margin = m if m < 0.25 else 0.5
    # Recomputed from the float32 linspace formula that made them (src/gpu/kernel.rs).
    formula = 2
    d_edges = cp.asarray(edges)
    step = f32(f32(hi - lo) / f32(n))
    rule = dict(
        edges=d_edges.data.ptr if formula == 0 else 0,
        n=n,
        first=float(lo),
        last=float(hi),
        denom=float(denom),
        n_f=float(n),
        scale=float(scale),
        margin=margin,
        start=float(lo),
        step=float(step),
    )
    return d_edges, rule, literal, margin, formula


REFERENCE = r"""
typedef BinnerOf<AXIS0, false>::type RefBin;
extern "C" __global__ void reference(const __grid_constant__ CountParams p)
{
    const RefBin bin(p.rules[0]);
    const RefBin::Value* values = static_cast<const RefBin::Value*>(p.columns[0].values);
    const u64 threads = (u64)gridDim.x * blockDim.x;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < p.columns[0].len; i += threads) {
        const unsigned int b = bin(values[i]);
        if (b < bin.n) atomicAdd(static_cast<u64*>(p.out) + b, 1ull);
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


def params(x: cp.ndarray, rule: dict, out: cp.ndarray, **extra) -> np.void:
    p = np.zeros(1, dtype=COUNT_PARAMS)
    p["columns"]["values"][0, 0] = x.data.ptr
    p["columns"]["len"][0, 0] = x.size
    p["columns"]["stride"][0, 0] = 1
    for k, v in rule.items():
        p["rules"][k][0, 0] = v
    p["cell_strides"][0, 0] = 1
    p["cells"] = rule["n"]
    p["out"] = out.data.ptr
    for k, v in extra.items():
        group, field = k.split("__")
        p[group][field] = v
    return p[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--log2n", type=int, default=29)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--only", default="", help="families, comma-separated")
    ap.add_argument("--dists", default="", help="distributions, comma-separated")
    ap.add_argument("--bins", default="", help="bin counts, comma-separated")
    ap.add_argument("--tag", default="", help="names the JSON written")
    ap.add_argument("--dtype", default="float32", choices=["float32", "uint16"])
    ap.add_argument(
        "--define", action="append", default=[], help="-DNAME=VALUE for the counting kernels"
    )
    args = ap.parse_args()
    only = set(filter(None, args.only.split(",")))
    n_rows = 1 << args.log2n
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    sms = props["multiProcessorCount"]
    optin = props["sharedMemPerBlockOptin"]
    per_sm = props["sharedMemPerMultiprocessor"]
    l2 = props["l2CacheSize"]
    name = props["name"].decode()
    print(f"device {name}: {sms} SMs, {optin} B shared a block, {per_sm} a SM, L2 {l2}")
    timer = Timer(args.reps)
    cache: dict[tuple, cp.RawModule] = {}

    by_value = args.dtype == "uint16"

    def kernel(family: str, literal: bool, formula: int, extra: str = "") -> cp.RawFunction:
        key = (family, literal, formula, extra)
        if key not in cache:
            # float32 data, float32 equal bins (RULE_U32 = 1), closed left, float32 estimate;
            # or uint16 values counted by value (RULE_INDEX = 4).
            axis = (
                "unsigned short,4,0,0,0,0,0"
                if by_value
                else (f"float,1,0,{int(literal)},{formula},0,0")
            )
            defines = ["-DRANK=1", f"-DAXIS0={axis}"]
            if family == "reference":
                cache[key] = module(*defines, extra=REFERENCE)
            elif family in ("seg_scan", "seg_count", "seg_count_batched"):
                cache[key] = module(f"-DKERNEL_{family.upper()}")
            else:
                cache[key] = module(
                    "-DKERNEL_COUNT", f"-DFAMILY=FAMILY_{family.upper()}", *defines, *args.define
                )
            f = cache[key].get_function(
                "reference"
                if family == "reference"
                else family
                if family.startswith("seg_")
                else "count"
            )
            print(
                f"{family} literal={literal} formula={formula}: {f.num_regs} registers, "
                f"{f.local_size_bytes} B local",
                flush=True,
            )
        entry = (
            "reference"
            if family == "reference"
            else (family if family.startswith("seg_") else "count")
        )
        return cache[key].get_function(entry)

    rng = cp.random.default_rng(7)
    if by_value:
        data = {
            "uniform": rng.integers(0, 1 << 16, n_rows, dtype=cp.int32).astype(cp.uint16),
            "normal": cp.clip(rng.standard_normal(n_rows) * 6000 + 32768, 0, 65535).astype(
                cp.uint16
            ),
            "degenerate": cp.full(n_rows, 1234, dtype=cp.uint16),
        }
        data["sorted"] = cp.sort(data["uniform"])
    else:
        data = {
            "uniform": rng.random(n_rows, dtype=cp.float32),
            "normal": cp.clip(
                rng.standard_normal(n_rows, dtype=cp.float32) * 0.1 + 0.5, 0, 0.999999
            ),
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
        every = (65536,) if by_value else (16, 256, 4096, 32768, 65536, 1 << 20, 1 << 24)
        for bins in sorted(wanted_bins) if wanted_bins else every:
            if dist in ("sorted", "adversarial") and bins not in (256, 65536, 1 << 20, 1 << 24):
                continue
            if by_value:
                rule, literal, margin, formula = dict(n=bins, lo=0), False, 0.0, 0
                ref_rule = rule
            else:
                edges, rule, literal, margin, formula = rule32(bins, l2)
                ref_rule = dict(rule, edges=edges.data.ptr)
            ref_out = cp.zeros(bins, dtype=cp.uint64)
            kernel("reference", literal, 0)((sms * 8,), (256,), (params(x, ref_rule, ref_out),))
            expected = ref_out.get()

            def record(family, ms, out, plan):
                ok = bool(np.array_equal(out.get(), expected))
                results.append(
                    dict(
                        dist=dist,
                        bins=bins,
                        family=family,
                        ms=ms,
                        roof_ms=roof,
                        share=roof / ms,
                        exact=ok,
                        plan=plan,
                        literal=literal,
                        margin=margin,
                        formula=formula,
                        rows=x.size,
                    )
                )
                flag = "" if ok else "  MISMATCH"
                print(
                    f"{dist:11s} {bins:9d} {family:10s} {ms:8.3f} ms {100 * roof / ms:5.1f}%{flag}"
                    f"  {plan}",
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
                sb = replicas * one
                f = kernel("shared", literal, formula)
                if sb > 48 * 1024:
                    f.max_dynamic_shared_size_bytes = sb
                out = cp.zeros(bins, dtype=cp.uint64)
                p = params(x, rule, out, shared__replicas=replicas, shared__stride=stride)
                launch = lambda: (out.fill(0), f((sms * blocks,), (block,), (p,), shared_mem=sb))
                record("shared", timer(launch), out, f"{sms * blocks}x{block} r{replicas}")

            # packed and spill: 16-bit counters, one block of 1024 a SM (or more when they fit)
            for sixteen in ("packed", "spill"):
                # packed sweeps 16 bytes a read: whole groups of four words
                words = (bins + 7) // 8 * 4 if sixteen == "packed" else (bins + 1) // 2
                if words * 4 > optin or bins < 4096 or (only and sixteen not in only):
                    continue
                f = kernel(sixteen, literal, formula)
                sb = words * 4
                if sb > 48 * 1024:
                    f.max_dynamic_shared_size_bytes = sb
                blocks = max(1, min(2, per_sm // (sb + 1024)))
                out = cp.zeros(bins, dtype=cp.uint64)
                p = params(x, rule, out)
                launch = lambda: (out.fill(0), f((sms * blocks,), (1024,), (p,), shared_mem=sb))
                record(sixteen, timer(launch), out, f"{sms * blocks}x1024")

            # segmented and batched: partition, scan, count (a warp a tile, or 32 tiles at once)
            for segmented, count_pass in (
                ("segmented", "seg_count"),
                ("batched", "seg_count_batched"),
            ):
                if bins < 32768 or (only and segmented not in only):
                    continue
                P = -(-bins // (1 << SEG_WIDTH_BITS))
                tiles = -(-x.size // SEG_TILE_ROWS)
                keys = cp.empty(tiles * SEG_TILE_ROWS, dtype=cp.uint16)
                starts = cp.empty(tiles * (P + 1), dtype=cp.uint16)
                cum = cp.empty(P * tiles, dtype=cp.uint32)
                totals = cp.empty(P, dtype=cp.uint32)
                part = kernel(segmented, literal, formula)
                scan = kernel("seg_scan", False, 0)
                count = kernel(count_pass, False, 0)
                part_bytes = (32 + (P + 3) // 4 * 4 + SEG_TILE_ROWS + SEG_TILE_ROWS // 2) * 4
                count_bytes = (32 + P + 1 + (1 << SEG_WIDTH_BITS)) * 4
                part.max_dynamic_shared_size_bytes = part_bytes
                count.max_dynamic_shared_size_bytes = count_bytes
                part_blocks = max(1, min(4, per_sm // (part_bytes + 1024)))
                per_item = max(x.size // (2 * sms), SEG_TILE_ROWS)
                seg = np.zeros(1, dtype=np.dtype(SEGMENTS, align=True))
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
                out = cp.zeros(bins, dtype=cp.uint64)
                p = params(x, rule, out, **{f"seg__{k}": seg[0][k] for k in seg.dtype.names})
                stages = {
                    "partition": lambda: part(
                        (sms * part_blocks,), (512,), (p,), shared_mem=part_bytes
                    ),
                    "scan": lambda: scan((P,), (1024,), (seg[0],)),
                    "count": lambda: count(
                        (sms,), (1024,), (seg[0], np.uint32(bins), out), shared_mem=count_bytes
                    ),
                }

                def launch():
                    out.fill(0)
                    for stage in stages.values():
                        stage()

                ms = timer(launch)
                stage_ms = {k: round(timer(s), 4) for k, s in stages.items()}
                launch()
                record(segmented, ms, out, f"P={P} part {sms * part_blocks}x512 {stage_ms}")

            # global atomics
            if bins >= 32768 and (not only or "global" in only):
                f = kernel("global", literal, formula)
                out = cp.zeros(bins, dtype=cp.uint64)
                p = params(x, rule, out)
                launch = lambda: (out.fill(0), f((sms * 4,), (512,), (p,)))
                record("global", timer(launch), out, f"{sms * 4}x512")

    out_dir = Path(os.environ.get("OUT", "/tmp"))
    tag = f"_{args.tag}" if args.tag else ""
    (out_dir / f"kernel_lab{tag}.json").write_text(
        json.dumps(dict(device=name, rows=rows_of, results=results), indent=1)
    )
    print(f"\n{name}: each family, share of the read roofline (cupy.sum)")
    print("| data | bins | family | ms | share | exact |")
    print("|---|---:|---|---:|---:|---|")
    for r in results:
        print(
            f"| {r['dist']} | {r['bins']} | {r['family']} | {r['ms']:.3f} | "
            f"{100 * r['share']:.0f}% | {'yes' if r['exact'] else 'NO'} |"
        )


if __name__ == "__main__":
    main()
