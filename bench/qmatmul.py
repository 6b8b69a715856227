"""qmatmul (GGML Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K and Q5_K weights) on
the CPU, side by side: fuel-mlir with its quantized schedule (one thread
and two, into a preallocated output) against what a user without it does:
dequantize the weight with gguf and multiply in numpy, or keep an f32 copy
of the weight (4-8x the bytes) and multiply with numpy or PyTorch (when
installed; one thread and two). Every result is checked against a float64
product with gguf's dequantization first; then all are timed interleaved.
Reports median, min and max ms, GFLOP/s and the ratio to fuel-mlir's
median; writes JSON. With --dynamic, also fuel-mlir compiled once for
every M (the rows dynamic, as exports with a dynamic sequence have them).

    python bench/qmatmul.py [--rounds 9] [--types q8_0 q4_0 q4_k] [--m 1 64]
                            [--kn 4096x4096] [--dynamic] [--json bench/qmatmul.json]
"""

import argparse
import json

import numpy as np
from gguf import GGMLQuantizationType
from gguf.quants import dequantize

from fuel_mlir import runner

from harness import check_contenders, report, time_interleaved, torch_contenders

# type: (weights per block, bytes per block, offsets of its f16 fields, gguf's type)
GEOMETRY = {
    "q8_0": (32, 34, [0], GGMLQuantizationType.Q8_0),
    "q4_0": (32, 18, [0], GGMLQuantizationType.Q4_0),
    "q4_1": (32, 20, [0, 2], GGMLQuantizationType.Q4_1),
    "q5_0": (32, 22, [0], GGMLQuantizationType.Q5_0),
    "q5_1": (32, 24, [0, 2], GGMLQuantizationType.Q5_1),
    "q2_k": (256, 84, [80, 82], GGMLQuantizationType.Q2_K),
    "q3_k": (256, 110, [108], GGMLQuantizationType.Q3_K),
    "q4_k": (256, 144, [0, 2], GGMLQuantizationType.Q4_K),
    "q5_k": (256, 176, [0, 2], GGMLQuantizationType.Q5_K),
    "q6_k": (256, 210, [208], GGMLQuantizationType.Q6_K),
}


def random_weight(qtype, n, k, rng):
    """N rows of K values in GGML blocks (random quants and scale bytes, f16
    scales and minimums in [0.01, 0.1]) and the same as u32 words."""
    qk, nbytes, halves, _ = GEOMETRY[qtype]
    blocks = rng.integers(0, 256, (n, k // qk, nbytes), dtype=np.uint8)
    for off in halves:
        h = rng.uniform(0.01, 0.1, (n, k // qk)).astype(np.float16)
        blocks[:, :, off:off + 2] = h.view(np.uint8).reshape(n, k // qk, 2)
    rows = blocks.reshape(n, -1)
    return rows, rows.reshape(-1).view("<u4")


def module(qtype, m, k, n, words):
    a, w, c = f"tensor<{m}x{k}xf32>", f"tensor<{words}xi32>", f"tensor<{m}x{n}xf32>"
    return (f"func.func @f(%a: {a}, %w: {w}) -> {c} {{\n"
            f"  %c = fuel.fused qmatmul {{quant_type = #fuel.quant<{qtype}>, k = {k} : i64, "
            f"n = {n} : i64}} (%a, %w) : ({a}, {w}) -> {c}\n"
            f"  return %c : {c}\n}}\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--types", nargs="+", choices=sorted(GEOMETRY),
                        default=["q8_0", "q4_0", "q4_k"])
    parser.add_argument("--m", nargs="+", type=int, default=[1, 64])
    parser.add_argument("--kn", default="4096x4096")
    parser.add_argument("--dynamic", action="store_true",
                        help="also time one function compiled for every M")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    k, n = (int(x) for x in args.kn.split("x"))
    rng = np.random.default_rng(0)
    results = []
    for qtype in args.types:
        rows, words = random_weight(qtype, n, k, rng)
        gtype = GEOMETRY[qtype][3]
        w32 = dequantize(rows, gtype).astype(np.float32)  # [N, K]
        dynamic = (runner.compile(module(qtype, "?", k, n, words.size), "f")
                   if args.dynamic else None)
        for m in args.m:
            a = rng.standard_normal((m, k)).astype(np.float32)
            out = np.empty((m, n), np.float32)
            text = module(qtype, m, k, n, words.size)
            f1 = runner.compile(text, "f")
            f2 = runner.compile(text, "f", threads=2)
            contenders = {
                "fuel out=": lambda: f1(a, words, out=out),
                "fuel 2 threads out=": lambda: f2(a, words, out=out),
                **({"fuel dynamic rows": lambda: dynamic(a, words)} if dynamic else {}),
                "numpy dequantize + matmul": lambda: a @ dequantize(rows, gtype).astype(np.float32).T,
                "numpy": lambda: a @ w32.T,
            }
            def torch_matmul(torch):
                at, wt = torch.from_numpy(a), torch.from_numpy(w32)
                return lambda: torch.matmul(at, wt.T)
            contenders.update(torch_contenders(torch_matmul))
            check_contenders(contenders, a.astype(np.float64) @ w32.astype(np.float64).T,
                             "qmatmul")
            times = time_interleaved(contenders, args.rounds)
            results.append({"op": f"qmatmul {qtype}", "shape": [m, k, n],
                            "ms": report(f"qmatmul {qtype} M={m} K={k} N={n} (torch, numpy: "
                                         "the f32 weight)", times, "fuel out=",
                                         flops=2.0 * m * k * n)})
    if args.json:
        with open(args.json, "w") as out_file:
            json.dump(results, out_file, indent=1)


if __name__ == "__main__":
    main()
