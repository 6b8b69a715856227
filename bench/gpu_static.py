"""Static figures of every op's GPU kernels, where no GPU is attached: each
op compiled with fuel-to-nvvm at the shapes of bench/all_ops.py (and those
of bench/gpu_cases.py) and its PTX assembled by ptxas for sm_80 and sm_90;
per kernel, registers, shared memory, stack, spills, an occupancy
estimate (resident warps per SM over the SM's maximum, from the block size,
registers and shared memory) and how many of its global loads and stores
(in the PTX's text, not as executed) move 16 bytes at once. Where
Debian's llvm-22 and lld-22 are installed, the same ops through
fuel-to-rocdl for gfx942: VGPRs, LDS and scratch per kernel.

    python bench/gpu_static.py            # writes bench/gpu_static.json and prints a table

Needs fuel-opt (FUEL_OPT or the installed package) and ptxas
(nvidia-cuda-nvcc-cu12 or a CUDA toolkit).
"""

import json
import re
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "test" / "python"))

from numerics import fused_text  # noqa: E402

from fuel_mlir import gpu  # noqa: E402

from gpu_cases import gpu_bench_cases  # noqa: E402  (bench/all_ops.py's shapes and more)

# Per SM: warps, registers, shared memory (bytes), blocks.
SM_LIMITS = {"sm_80": (64, 65536, 164 * 1024, 32), "sm_90": (64, 65536, 228 * 1024, 32)}


def occupancy(chip, threads, registers, shared):
    warps_max, regs_max, smem_max, blocks_max = SM_LIMITS[chip]
    warps = -(-threads // 32)
    regs_per_warp = -(-max(registers, 1) * 32 // 256) * 256
    limits = [blocks_max, warps_max // warps, regs_max // (regs_per_warp * warps)]
    if shared:
        limits.append(smem_max // shared)
    return min(limits) * warps / warps_max


def main():
    rows = []
    bench = {label: case[:3] for label, case in gpu_bench_cases().items()}
    for name, (op, inputs, params) in sorted(bench.items()):
        text = fused_text(op, inputs, params)
        for chip in ("sm_80", "sm_90"):
            try:
                kernels = gpu.compile_nvvm(text, chip=chip)
            except gpu.CompileError as e:
                rows.append(dict(op=name, chip=chip, error=str(e).splitlines()[0]))
                continue
            for k in kernels:
                accesses = re.findall(r"^\s*(?:ld|st)\.global(\.v\d)?\.(\w+)", k.ptx, re.M)
                wide = sum(1 for v, t in accesses
                           if (v, t[-2:]) in ((".v4", "32"), (".v2", "64")))
                threads = re.search(r"\.maxntid (\d+), (\d+), (\d+)", k.ptx)
                block = int(threads.group(1)) * int(threads.group(2)) * int(threads.group(3)) if threads else 1
                for r in gpu.ptxas(k.ptx, chip):
                    rows.append(dict(op=name, chip=chip, kernel=r.entry, threads=block,
                                     registers=r.registers, shared=r.shared_bytes, stack=r.stack_bytes,
                                     spills=r.spill_stores + r.spill_loads,
                                     global_accesses=len(accesses), accesses_16b=wide,
                                     occupancy=round(occupancy(chip, block, r.registers, r.shared_bytes), 2)))
        if all(gpu.llvm_tool(t) for t in ("opt", "llc", "ld.lld")):
            for k in gpu.compile_rocdl(text, chip="gfx942"):
                obj = gpu.amdgpu_code_object(k.llvm_ir, "gfx942")
                rows.append(dict(op=name, chip="gfx942", kernel=k.module, vgprs=obj.vgprs,
                                 sgprs=obj.sgprs, lds=obj.lds_bytes, scratch=obj.scratch_bytes))
    (HERE / "gpu_static.json").write_text(json.dumps(rows, indent=1))
    print("| op | kernels | threads | registers (max) | shared bytes (max) | stack bytes (max) "
          "| occupancy (min) | 16-byte global accesses | gfx942 VGPRs (max) | LDS bytes (max) "
          "| scratch bytes (max) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in sorted(bench):
        mine = [r for r in rows if r["op"] == name and r["chip"] == "sm_90" and "kernel" in r]
        amd = [r for r in rows if r["op"] == name and r["chip"] == "gfx942"]
        if not mine:
            print(f"| `{name}` | failed | | | | | | | | | |")
            continue
        amd_cols = (f"{max(r['vgprs'] for r in amd)} | {max(r['lds'] for r in amd)} | "
                    f"{max(r['scratch'] for r in amd)}" if amd else "- | - | -")
        print(f"| `{name}` | {len(mine)} | {'/'.join(sorted({str(r['threads']) for r in mine}, key=int))} | "
              f"{max(r['registers'] for r in mine)} | {max(r['shared'] for r in mine)} | "
              f"{max(r['stack'] for r in mine)} | {min(r['occupancy'] for r in mine):.2f} | "
              f"{sum(r['accesses_16b'] for r in mine)} of {sum(r['global_accesses'] for r in mine)} | "
              f"{amd_cols} |")


if __name__ == "__main__":
    main()
