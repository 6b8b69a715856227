"""conv2d and conv_transpose_2d on the CPU over ResNet-50's layer shapes
and a few others (a patch embedding, ResNet's last 1x1 layers, transposed
convolutions of a DCGAN and a U-Net), side by side: fuel-mlir with its
convolution schedule (one thread) and PyTorch's CPU convolution (one
thread, when installed). Every result is checked against a float64
reference first; then all are timed interleaved, each call after an
untimed 64 MB read (the weights and the image come from memory, as in a
network's forward pass). Reports median, min and max ms, GFLOP/s and the
ratio to fuel-mlir's median; writes JSON.

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
    "1x1-512-2048": ((1, 512, 7, 7), (2048, 512, 1, 1), 1, 0, 1),
    "1x1-2048-512": ((1, 2048, 7, 7), (512, 2048, 1, 1), 1, 0, 1),
    "16x16-patch": ((1, 3, 224, 224), (768, 3, 16, 16), 16, 0, 1),
}

# conv_transpose_2d, name: (x shape, w shape [C, F, kh, kw], stride,
# padding, output_padding)
TRANSPOSED = {
    "t4x4-512-256": ((1, 512, 8, 8), (512, 256, 4, 4), 2, 1, 0),
    "t2x2-512-256": ((1, 512, 16, 16), (512, 256, 2, 2), 2, 0, 0),
    "t2x2-256-128": ((1, 256, 32, 32), (256, 128, 2, 2), 2, 0, 0),
    "t3x3-64": ((1, 64, 56, 56), (64, 64, 3, 3), 2, 1, 1),
}


def reference(op, x, w, b, stride, padding, extra):
    """The float64 result: `extra` is groups (conv2d) or output_padding."""
    s, p = (stride, stride), (padding, padding)
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    if op == "conv2d":
        return ref.conv2d(x64, w64, b.astype(np.float64), s, p, extra)
    return ref.conv_transpose2d(x64, w64, s, p, (extra, extra), (1, 1), 1)


def contenders(op, x, w, b, stride, padding, extra, out):
    """{name: callable} for fuel-mlir (into `out`) and PyTorch (one thread)."""
    s, p = (stride, stride), (padding, padding)
    if op == "conv2d":
        f = runner.compile(fused_text(op, [x, w, b], {"stride": s, "padding": p,
                                                      "groups": extra}), "f")
        calls = {"fuel out=": lambda: f(x, w, b, out=out)}
    else:
        f = runner.compile(fused_text(op, [x, w], {"stride": s, "padding": p,
                                                   "output_padding": (extra, extra)}), "f")
        calls = {"fuel out=": lambda: f(x, w, out=out)}
    try:
        import torch
        import torch.nn.functional as F
        xt, wt, bt = map(torch.from_numpy, (x, w, b))

        def torch_conv():
            torch.set_num_threads(1)
            if op == "conv2d":
                return F.conv2d(xt, wt, bt, stride=stride, padding=padding,
                                groups=extra).numpy()
            return F.conv_transpose2d(xt, wt, stride=stride, padding=padding,
                                      output_padding=extra).numpy()
        calls["torch 1 thread"] = torch_conv
    except ImportError:
        pass
    return calls


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--layers", nargs="+", default=list(LAYERS) + list(TRANSPOSED),
                        choices=list(LAYERS) + list(TRANSPOSED))
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    evict = np.ones(16 << 20, np.float32)
    results = []
    for name in args.layers:
        op = "conv2d" if name in LAYERS else "conv_transpose_2d"
        xs, ws, stride, padding, extra = (LAYERS if op == "conv2d" else TRANSPOSED)[name]
        rng = np.random.default_rng(0)
        x = rng.standard_normal(xs).astype(np.float32)
        fan_in = np.prod(ws[1:]) if op == "conv2d" else ws[0] * ws[2] * ws[3]
        w = (rng.standard_normal(ws) / np.sqrt(fan_in)).astype(np.float32)
        filters = ws[0] if op == "conv2d" else ws[1]
        b = rng.standard_normal(filters).astype(np.float32)
        want = reference(op, x, w, b, stride, padding, extra)
        out = np.empty(want.shape, np.float32)
        calls = contenders(op, x, w, b, stride, padding, extra, out)
        for who, call in calls.items():
            err = np.abs(np.asarray(call(), np.float64) - want).max() / np.abs(want).max()
            if not err < 1e-5:
                raise SystemExit(f"{who} computes {name} wrong: relative error {err:.2e}")
        times = time_interleaved(calls, args.rounds, before=evict.sum)
        # Multiply-adds: each output of conv2d, each input of the
        # transposed convolution, times its kernel's weights.
        flops = (2.0 * np.prod(want.shape) * np.prod(ws[1:]) if op == "conv2d"
                 else 2.0 * np.prod(xs) * np.prod(ws[1:]))
        results.append({"op": op, "layer": name, "x": xs, "w": ws, "stride": stride,
                        "padding": padding,
                        ("groups" if op == "conv2d" else "output_padding"): extra,
                        "ms": report(f"{op} {name} x={xs} w={ws}", times, "fuel out=",
                                     flops=flops)})
    if args.json:
        with open(args.json, "w") as out_file:
            json.dump(results, out_file, indent=1)


if __name__ == "__main__":
    main()
