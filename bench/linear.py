"""fused_linear (a @ b + bias) on the CPU, side by side: fuel-mlir with its
contraction schedule (one thread and two, into a preallocated output),
numpy (its BLAS, as configured) and PyTorch (when installed; one thread and
two). Every result is checked against a float64 product first; then all are
timed interleaved. Reports median, min and max ms, GFLOP/s and the ratio to
fuel-mlir's median; writes JSON.

    python bench/linear.py [--rounds 9] [--sizes 1024x1024x1024 64x4096x4096]
                           [--json bench/linear.json]

(Sizes are MxKxN. By default a square GEMM and a layer of 4096 features
applied to 1, 16 and 64 rows: decoding one token, a batch of sequences,
a prompt; and an MLP's up projection to 11008 features for 16 rows.)
"""

import argparse
import json

import numpy as np

from fuel_mlir import runner

from harness import check_contenders, report, time_interleaved, torch_contenders


def module(m, k, n):
    a, b, c, y = (f"tensor<{m}x{k}xf32>", f"tensor<{k}x{n}xf32>",
                  f"tensor<{n}xf32>", f"tensor<{m}x{n}xf32>")
    return (f"func.func @f(%a: {a}, %b: {b}, %c: {c}) -> {y} {{\n"
            f"  %y = fuel.fused fused_linear (%a, %b, %c) : ({a}, {b}, {c}) -> {y}\n"
            f"  return %y : {y}\n}}\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--sizes", nargs="+", default=["1024x1024x1024", "1x4096x4096", "16x4096x4096",
                                              "64x4096x4096", "16x4096x11008"])
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    results = []
    for size in args.sizes:
        m, k, n = (int(d) for d in size.split("x"))
        rng = np.random.default_rng(0)
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        c = rng.standard_normal(n).astype(np.float32)
        out = np.empty((m, n), np.float32)
        text = module(m, k, n)
        f1 = runner.compile(text, "f")
        f2 = runner.compile(text, "f", threads=2)
        contenders = {
            "fuel out=": lambda: f1(a, b, c, out=out),
            "fuel 2 threads out=": lambda: f2(a, b, c, out=out),
            "numpy": lambda: a @ b + c,
        }
        def torch_addmm(torch):
            at, bt, ct = map(torch.from_numpy, (a, b, c))
            return lambda: torch.addmm(ct, at, bt)
        contenders.update(torch_contenders(torch_addmm))
        check_contenders(contenders, a.astype(np.float64) @ b.astype(np.float64) + c,
                         "fused_linear")
        times = time_interleaved(contenders, args.rounds)
        row = {"op": "fused_linear", "size": [m, k, n],
               "ms": report(f"fused_linear M={m} K={k} N={n}", times, "fuel out=",
                            flops=2.0 * m * k * n)}
        results.append(row)
    if args.json:
        with open(args.json, "w") as out_file:
            json.dump(results, out_file, indent=1)


if __name__ == "__main__":
    main()
