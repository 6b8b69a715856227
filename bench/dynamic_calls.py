"""fuel-mlir called on shapes known only at run time (the leading dim
dynamic, as exports with a dynamic batch or sequence have it) against the
same op compiled for the static shape, and numpy's copy of the input (the
memory traffic of an op that reads and writes it once), side by side:
median ms and minor page faults per call, interleaved. A static result is
written into an array the runner allocates with numpy; a dynamic one comes
back in the buffer the compiled code allocated. With --hold N, each
contender keeps its last N results alive, as a program that uses them
does, so that a new result cannot reuse the memory of the last one.

    python bench/dynamic_calls.py [--rounds 11] [--hold 1 4]
                                  [--json bench/dynamic_calls.json]
"""

import argparse
import collections
import json
import sys
from pathlib import Path

import numpy as np

from fuel_mlir import runner

from harness import check_contenders, time_interleaved

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "python"))
import references as ref  # noqa: E402
from numerics import fused_text  # noqa: E402


def rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def cases():
    """(name, op, inputs, params, float64 reference(*inputs))."""
    x = rand((4096, 1024))
    a, w, b = rand((256, 1024)), rand((1024, 1024), 1) / 32, rand(1024, 2)
    return [
        ("softmax 4096x1024", "softmax_last_dim", [x], {}, ref.ref_softmax),
        ("softmax 64x1024", "softmax_last_dim", [x[:64]], {}, ref.ref_softmax),
        ("softmax 4x64", "softmax_last_dim", [x[:4, :64]], {}, ref.ref_softmax),
        ("rms_norm 1024x4096", "rms_norm_last_dim", [x.reshape(1024, 4096)],
         {"eps": 1e-5}, lambda x: ref.ref_rms(x, 1e-5)),
        ("fused_linear 256x1024x1024", "fused_linear", [a, w, b], {},
         lambda a, w, b: a @ w + b),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--hold", nargs="+", type=int, default=[1, 4],
                        help="results each contender keeps alive")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    results = []
    for name, op, inputs, params, reference in cases():
        inputs = [np.ascontiguousarray(i) for i in inputs]
        static = runner.compile(fused_text(op, inputs, params), "f")
        dynamic = runner.compile(fused_text(op, inputs, params, dynamic={0: (0,)}), "f")
        want = reference(*[i.astype(np.float64) for i in inputs])
        check_contenders({"static": lambda: static(*inputs),
                          "dynamic": lambda: dynamic(*inputs)}, want, name, 1e-4)
        for hold in args.hold:
            kept = collections.defaultdict(lambda: collections.deque(maxlen=hold))

            def keeping(who, f):
                return lambda: kept[who].append(f())

            contenders = {
                "static": keeping("static", lambda: static(*inputs)),
                "dynamic": keeping("dynamic", lambda: dynamic(*inputs)),
                "numpy copy": keeping("numpy copy", lambda: inputs[0].copy()),
            }
            faults = {}
            times = time_interleaved(contenders, args.rounds, faults=faults)
            row = {who: {"median": float(np.median(times[who])),
                         "faults": float(np.median(faults[who]))} for who in times}
            print(f"{name}, {hold} held: " + ", ".join(
                f"{who} {r['median']:.3f} ms ({r['faults']:.0f} faults)"
                for who, r in row.items())
                + f"; dynamic / static {row['dynamic']['median'] / row['static']['median']:.2f}")
            results.append({"case": name, "hold": hold, "ms": row})
    if args.json:
        with open(args.json, "w") as out_file:
            json.dump(results, out_file, indent=1)


if __name__ == "__main__":
    main()
