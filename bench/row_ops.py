"""Row-wise fused ops on the CPU, side by side: fuel-mlir with its schedule
(into a new array, and into a preallocated one with `out=`), fuel-mlir as
decomposed (scalar loops, `codegen=False`), numpy and PyTorch
(when installed), each on one thread and on two, and a copy of the input as
the memory-bound floor.

Every contender's result is checked against a float64 numpy reference
first; then all are timed interleaved, round after round, so a noisy
machine slows them alike. Reports median, min and max per contender, the
ratios to fuel-mlir's median, and writes everything as JSON.

    python bench/row_ops.py [--rounds 15] [--json bench/row_ops.json]
                            [--shapes 4096x4096 64x32768]
"""

import argparse
import json

import numpy as np

from fuel_mlir import runner

from harness import report, time_interleaved

EPS = 1e-5


def reference(name, x):
    x = x.astype(np.float64)
    if name == "softmax_last_dim":
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)
    if name == "rms_norm_last_dim":
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + EPS)
    c = x - x.mean(-1, keepdims=True)
    return c / np.sqrt((c * c).mean(-1, keepdims=True) + EPS)


def numpy_impl(name):
    if name == "softmax_last_dim":
        def f(x):
            e = np.exp(x - x.max(-1, keepdims=True))
            return e / e.sum(-1, keepdims=True)
    elif name == "rms_norm_last_dim":
        def f(x):
            return x / np.sqrt((x * x).mean(-1, keepdims=True) + np.float32(EPS))
    else:
        def f(x):
            c = x - x.mean(-1, keepdims=True)
            return c / np.sqrt((c * c).mean(-1, keepdims=True) + np.float32(EPS))
    return f


def torch_impl(name, threads):
    try:
        import torch
    except ImportError:
        return None
    F = torch.nn.functional
    if name == "softmax_last_dim":
        op = lambda t: torch.softmax(t, -1)
    elif name == "rms_norm_last_dim":
        op = lambda t: F.rms_norm(t, (t.shape[-1],), eps=EPS)
    else:
        op = lambda t: F.layer_norm(t, (t.shape[-1],), eps=EPS)
    def run(x):
        torch.set_num_threads(threads)
        return op(torch.from_numpy(x)).numpy()
    return run


def module(name, shape):
    t = "tensor<" + "x".join(map(str, shape)) + "xf32>"
    params = "" if name == "softmax_last_dim" else "{eps = 1.0e-05 : f64} "
    return (f"func.func @f(%x: {t}) -> {t} {{\n"
            f"  %y = fuel.fused {name} {params}(%x) : ({t}) -> {t}\n"
            f"  return %y : {t}\n}}\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--shapes", nargs="+", default=["4096x4096", "64x32768"])
    parser.add_argument("--json", default=None, help="write the results here")
    args = parser.parse_args()

    results = []
    for shape_text in args.shapes:
        shape = tuple(int(d) for d in shape_text.split("x"))
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        for name in ("softmax_last_dim", "rms_norm_last_dim", "layer_norm_last_dim"):
            text = module(name, shape)
            fuel = runner.compile(text, "f")
            fuel2 = runner.compile(text, "f", threads=2)
            dest = np.empty_like(x)
            contenders = {
                "fuel": fuel,
                "fuel out=": lambda a, f=fuel, d=dest: f(a, out=d),
                "fuel 2 threads out=": lambda a, f=fuel2, d=dest: f(a, out=d),
                "fuel scalar": runner.compile(text, "f", codegen=False),
                "numpy": numpy_impl(name),
            }
            for threads in (1, 2):
                t = torch_impl(name, threads)
                if t is not None:
                    contenders[f"torch {threads} thread" + ("s" if threads > 1 else "")] = t
            want = reference(name, x)
            for who, f in contenders.items():
                err = np.abs(f(x).astype(np.float64) - want).max() / np.abs(want).max()
                if not err < 1e-5:
                    raise SystemExit(f"{who} computes {name} wrong: relative error {err:.2e}")
            contenders["copy of the input"] = lambda a: a.copy()
            times = time_interleaved({who: (lambda f=f: f(x)) for who, f in contenders.items()},
                                     args.rounds)
            row = {"op": name, "shape": list(shape),
                   "ms": report(f"{name} {shape_text}", times, "fuel")}
            results.append(row)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=1)


if __name__ == "__main__":
    main()
