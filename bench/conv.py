"""conv2d on the CPU over ResNet-50's layer shapes, side by side: fuel-mlir
with its convolution schedule (one thread) and PyTorch's CPU convolution
(one thread, when installed). Every result is checked against a float64
reference first; then all are timed interleaved, each call after an
untimed 64 MB read (the weights and the image come from memory, as in a
network's forward pass). Reports median, min and max ms, GFLOP/s and the ratio to
fuel-mlir's median; writes JSON.

    python bench/conv.py [--rounds 9] [--layers 3x3-256 1x1-64-256]
                         [--json bench/conv.json]
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from fuel_mlir import runner

from harness import report, time_interleaved

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test" / "python"))
import references as ref  # noqa: E402
from numerics import fused_text  # noqa: E402

# name: (x shape, w shape, stride, padding, groups)
LAYERS = {
    "7x7-stem": ((1, 3, 224, 224), (64, 3, 7, 7), 2, 3, 1),
    "3x3-64": ((1, 64, 56, 56), (64, 64, 3, 3), 1, 1, 1),
    "3x3-128": ((1, 128, 28, 28), (128, 128, 3, 3), 1, 1, 1),
    "3x3-256": ((1, 256, 14, 14), (256, 256, 3, 3), 1, 1, 1),
    "3x3-512": ((1, 512, 7, 7), (512, 512, 3, 3), 1, 1, 1),
    "3x3-128-s2": ((1, 128, 56, 56), (128, 128, 3, 3), 2, 1, 1),
    "1x1-64-256": ((1, 64, 56, 56), (256, 64, 1, 1), 1, 0, 1),
    "1x1-256-64": ((1, 256, 56, 56), (64, 256, 1, 1), 1, 0, 1),
    "3x3-128-g32": ((1, 128, 28, 28), (128, 4, 3, 3), 1, 1, 32),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--layers", nargs="+", default=list(LAYERS), choices=list(LAYERS))
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    evict = np.ones(16 << 20, np.float32)
    results = []
    for name in args.layers:
        xs, ws, stride, padding, groups = LAYERS[name]
        rng = np.random.default_rng(0)
        x = rng.standard_normal(xs).astype(np.float32)
        w = (rng.standard_normal(ws) / np.sqrt(np.prod(ws[1:]))).astype(np.float32)
        b = rng.standard_normal(ws[0]).astype(np.float32)
        want = ref.conv2d(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64),
                          (stride, stride), (padding, padding), groups)
        out = np.empty(want.shape, np.float32)
        params = {"stride": (stride, stride), "padding": (padding, padding), "groups": groups}
        f = runner.compile(fused_text("conv2d", [x, w, b], params), "f")
        calls = {"fuel out=": lambda: f(x, w, b, out=out)}
        try:
            import torch
            import torch.nn.functional as F
            xt, wt, bt = map(torch.from_numpy, (x, w, b))

            def torch_conv():
                torch.set_num_threads(1)
                return F.conv2d(xt, wt, bt, stride=stride, padding=padding,
                                groups=groups).numpy()
            calls["torch 1 thread"] = torch_conv
        except ImportError:
            pass
        for who, call in calls.items():
            err = np.abs(np.asarray(call(), np.float64) - want).max() / np.abs(want).max()
            if not err < 1e-5:
                raise SystemExit(f"{who} computes {name} wrong: relative error {err:.2e}")
        times = time_interleaved(calls, args.rounds, before=evict.sum)
        flops = 2.0 * np.prod(want.shape) * np.prod(ws[1:])
        results.append({"op": "conv2d", "layer": name, "x": xs, "w": ws, "stride": stride,
                        "padding": padding, "groups": groups,
                        "ms": report(f"conv2d {name} x={xs} w={ws}", times, "fuel out=",
                                     flops=flops)})
    if args.json:
        with open(args.json, "w") as out_file:
            json.dump(results, out_file, indent=1)


if __name__ == "__main__":
    main()
