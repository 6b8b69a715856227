"""Static figures of the decoding kernels, where no GPU is attached, each
compiled with fuel-to-nvvm and assembled by ptxas for sm_80 and sm_90:

- flash_attn's split-keys kernel per head dim and dtype (one query against
  4,096 keys, 32 query heads on 8, causal);
- qmatmul's decode kernel per GGML type (one row, K = N = 4,096).

Per kernel: registers, shared memory, stack and spill bytes, its global
loads in the PTX's text and how many of them are vectors, and for qmatmul
the instructions of its loop over chunks of 8 weights. Where Debian's
llvm-22 and lld-22 are installed, the same kernels through fuel-to-rocdl
for gfx942: VGPRs (registers), LDS (shared bytes) and scratch (stack).

    python bench/gpu_decode.py [--heads 64 80 96 ...] [--types q8_0 q4_0 ...]

Needs fuel-opt (FUEL_OPT or the installed package) and ptxas
(nvidia-cuda-nvcc-cu12 or a CUDA toolkit).
"""

import argparse
import re
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "test" / "python"))

from numerics import fused_text  # noqa: E402

from fuel_mlir import gpu  # noqa: E402

from qmatmul import GEOMETRY  # noqa: E402  (the GGML types' block geometry)

VECTOR_LOAD = re.compile(r"ld\.global(?:\.nc)?\.v[24]\.")
ANY_LOAD = re.compile(r"ld\.global\.")
CHIPS = ("sm_80", "sm_90")


def loop_instructions(ptx):
    """The instructions of the PTX's longest loop (a label and a later
    branch back to it)."""
    lines = ptx.splitlines()
    labels = {m.group(1): i for i, line in enumerate(lines)
              if (m := re.match(r"^(\$L__BB\d+_\d+):", line))}
    longest = 0
    for i, line in enumerate(lines):
        m = re.search(r"bra(?:\.uni)?\s+(\$L__BB\d+_\d+);", line)
        if m and labels.get(m.group(1), i) < i:
            body = [x for x in lines[labels[m.group(1)] + 1:i + 1] if x.strip().endswith(";")]
            longest = max(longest, len(body))
    return longest


def figures(ptx, chip):
    (report,) = gpu.ptxas(ptx, chip)
    return [report.registers, report.shared_bytes, report.stack_bytes, report.spill_stores,
            len(ANY_LOAD.findall(ptx)), len(VECTOR_LOAD.findall(ptx))]


def have_rocm_tools():
    return all(gpu.llvm_tool(t) for t in ("opt", "llc", "ld.lld"))


def gfx942(text, marker):
    """The gfx942 figures of the kernel of `text` whose device LLVM IR has
    `marker`, as the table's cells (no PTX, so no loads)."""
    kernels = [k for k in gpu.compile_rocdl(text, chip="gfx942") if marker in k.llvm_ir]
    if len(kernels) != 1:
        raise SystemExit(f"{len(kernels)} gfx942 kernels with {marker}")
    obj = gpu.amdgpu_code_object(kernels[0].llvm_ir, "gfx942")
    return ["gfx942", obj.vgprs, obj.lds_bytes, obj.scratch_bytes, "-", "-", "-"]


def row(cells):
    print("| " + " | ".join(str(c) for c in cells) + " |")


COLUMNS = ["chip", "registers", "shared bytes", "stack", "spill stores", "global loads", "of them vectors"]


def attention(heads, keys):
    row(["head dim", "dtype"] + COLUMNS)
    row(["---"] * (len(COLUMNS) + 2))
    for d in heads:
        for dtype in (np.float32, np.float16):
            q = np.zeros((1, 32, 1, d), dtype)
            kv = np.zeros((1, 8, keys, d), dtype)
            text = fused_text("flash_attn", [q, kv, kv], {"softmax_scale": 0.1, "causal": True})
            for chip in CHIPS:
                split = [k for k in gpu.compile_nvvm(text, chip=chip) if "shfl.sync" in k.ptx]
                if len(split) != 1:
                    raise SystemExit(f"heads of {d}: no split-keys kernel")
                row([d, np.dtype(dtype).name, chip] + figures(split[0].ptx, chip))
            if have_rocm_tools():
                row([d, np.dtype(dtype).name] + gfx942(text, "ds.bpermute"))


def qmatmul(types, k, n):
    row(["type"] + COLUMNS + ["loop instructions"])
    row(["---"] * (len(COLUMNS) + 2))
    for qtype in types:
        qk, block_bytes = GEOMETRY[qtype][:2]
        words = np.zeros(n * (k // qk) * block_bytes // 4, np.uint32)
        text = fused_text("qmatmul", [np.zeros((1, k), np.float32), words],
                          {"quant_type": qtype, "k": k, "n": n})
        for chip in CHIPS:
            (kernel,) = gpu.compile_nvvm(text, chip=chip)
            row([qtype, chip] + figures(kernel.ptx, chip) + [loop_instructions(kernel.ptx)])
        if have_rocm_tools():
            row([qtype] + gfx942(text, "define") + ["-"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--heads", type=int, nargs="+", default=[64, 80, 96, 112, 128, 160, 192, 256])
    parser.add_argument("--keys", type=int, default=4096)
    parser.add_argument("--types", nargs="+", choices=sorted(GEOMETRY),
                        default=["q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q4_k", "q5_k", "q6_k"])
    parser.add_argument("--kn", type=int, default=4096, help="qmatmul's K and N")
    args = parser.parse_args()
    if gpu.ptxas_path() is None:
        raise SystemExit("ptxas not found: install nvidia-cuda-nvcc-cu12 or a CUDA toolkit")
    if args.heads:
        attention(args.heads, args.keys)
        print()
    if args.types:
        qmatmul(args.types, args.kn, args.kn)


if __name__ == "__main__":
    main()
