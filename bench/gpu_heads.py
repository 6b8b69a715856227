"""Static figures of flash_attn's split-keys (decoding) kernel per head
dim, where no GPU is attached: one query against 4,096 keys, 32 query heads
on 8, causal, compiled with fuel-to-nvvm and assembled by ptxas for sm_80
and sm_90; per head dim and dtype, the kernel's registers, shared memory,
stack and spill bytes, and how many of its global loads (in the PTX's text)
there are and how many of them are vectors.

    python bench/gpu_heads.py [--heads 64 80 96 112 128 160 192 256]

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

VECTOR_LOAD = re.compile(r"ld\.global(?:\.nc)?\.v[24]\.")
ANY_LOAD = re.compile(r"ld\.global\.")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--heads", type=int, nargs="+", default=[64, 80, 96, 112, 128, 160, 192, 256])
    parser.add_argument("--keys", type=int, default=4096)
    args = parser.parse_args()
    if gpu.ptxas_path() is None:
        raise SystemExit("ptxas not found: install nvidia-cuda-nvcc-cu12 or a CUDA toolkit")
    print("| head dim | dtype | chip | registers | shared bytes | stack | spill stores "
          "| global loads | of them vectors |")
    print("|---|---|---|---|---|---|---|---|---|")
    for d in args.heads:
        for dtype in (np.float32, np.float16):
            q = np.zeros((1, 32, 1, d), dtype)
            kv = np.zeros((1, 8, args.keys, d), dtype)
            text = fused_text("flash_attn", [q, kv, kv], {"softmax_scale": 0.1, "causal": True})
            for chip in ("sm_80", "sm_90"):
                kernels = gpu.compile_nvvm(text, chip=chip)
                split = [k for k in kernels if "shfl.sync" in k.ptx]
                if len(split) != 1:
                    raise SystemExit(f"heads of {d}: no split-keys kernel ({len(kernels)} kernels)")
                ptx = split[0].ptx
                (report,) = gpu.ptxas(ptx, chip)
                print(f"| {d} | {np.dtype(dtype).name} | {chip} | {report.registers} | "
                      f"{report.shared_bytes} | {report.stack_bytes} | {report.spill_stores} | "
                      f"{len(ANY_LOAD.findall(ptx))} | {len(VECTOR_LOAD.findall(ptx))} |")


if __name__ == "__main__":
    main()
