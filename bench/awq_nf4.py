"""awq_matmul (AutoAWQ's GEMM format, groups of 128) and nf4_matmul
(bitsandbytes' NF4, blocks of 64) on the CPU, side by side: fuel-mlir with
its quantized schedules (one thread and two, into a preallocated output)
against an f32 copy of the dequantized weight multiplied by numpy and by
PyTorch (when installed; one thread and two). Every result is checked
against a float64 product first; then all are timed interleaved. Reports
median, min and max ms, GFLOP/s and the ratio to fuel-mlir's median;
writes JSON.

    python bench/awq_nf4.py [--rounds 9] [--ops awq_matmul nf4_matmul]
                            [--m 1 64] [--kn 4096x4096] [--json FILE]
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from fuel_mlir import runner

from harness import check_contenders, report, time_interleaved, torch_contenders

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "python"))
import references as ref  # noqa: E402
from numerics import fused_text  # noqa: E402


def weights(op, k, n, rng):
    """The operands after A, and the dequantized weight as [K, N] f32."""
    if op == "awq_matmul":
        q = rng.integers(0, 16, (k, n))
        z = rng.integers(0, 16, (k // 128, n))
        s = (np.abs(rng.standard_normal((k // 128, n))) * 0.01).astype(np.float32)
        w = (q - np.repeat(z, 128, 0)) * np.repeat(s, 128, 0)
        return ([ref.awq_pack(q).view(np.int32), ref.awq_pack(z).view(np.int32), s],
                {"group_size": 128}, w.astype(np.float32))
    codes = rng.integers(0, 16, (n, k))
    absmax = (np.abs(rng.standard_normal((n, k // 64))) + 0.1).astype(np.float32)
    w = ref.nf4_dequant(codes, absmax, 64).astype(np.float32)
    return [ref.nf4_pack(codes).view(np.int8), absmax], {}, np.ascontiguousarray(w.T)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--ops", nargs="+", choices=["awq_matmul", "nf4_matmul"],
                        default=["awq_matmul", "nf4_matmul"])
    parser.add_argument("--m", nargs="+", type=int, default=[1, 64])
    parser.add_argument("--kn", default="4096x4096")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    k, n = (int(x) for x in args.kn.split("x"))
    rng = np.random.default_rng(0)
    results = []
    for op in args.ops:
        operands, params, w32 = weights(op, k, n, rng)
        for m in args.m:
            a = rng.standard_normal((m, k)).astype(np.float32)
            out = np.empty((m, n), np.float32)
            text = fused_text(op, [a] + operands, params)
            f1 = runner.compile(text, "f")
            f2 = runner.compile(text, "f", threads=2)
            contenders = {
                "fuel out=": lambda: f1(a, *operands, out=out),
                "fuel 2 threads out=": lambda: f2(a, *operands, out=out),
                "numpy": lambda: a @ w32,
            }
            def torch_matmul(torch):
                at, wt = torch.from_numpy(a), torch.from_numpy(w32)
                return lambda: torch.matmul(at, wt)
            contenders.update(torch_contenders(torch_matmul))
            check_contenders(contenders, a.astype(np.float64) @ w32.astype(np.float64), op)
            times = time_interleaved(contenders, args.rounds)
            results.append({"op": op, "shape": [m, k, n],
                            "ms": report(f"{op} M={m} K={k} N={n} (torch, numpy: the f32 "
                                         "weight)", times, "fuel out=",
                                         flops=2.0 * m * k * n)})
    if args.json:
        with open(args.json, "w") as out_file:
            json.dump(results, out_file, indent=1)


if __name__ == "__main__":
    main()
