"""flash_attn on the CPU, side by side: fuel-mlir with its attention schedule
(FlashAttention-2's tiling and online softmax; one thread and two, into a
preallocated output), numpy (the textbook softmax(q k^T) v over a full
score matrix) and PyTorch's scaled_dot_product_attention (when installed;
one thread and two). Every result is checked against a float64 reference
first; then all are timed interleaved. Reports median, min and max ms,
GFLOP/s (the multiply-adds the mask leaves) and the ratio to fuel-mlir's
median; writes JSON. `--long S` then runs one causal attention over S
tokens in a fresh process and reports its peak memory against the size of
q, k, v and o (a full score matrix would take 4 * H * S^2 bytes).

    python bench/attention.py [--rounds 9] [--shapes 1x8x1024x64]
                              [--long 16384] [--json bench/attention.json]
"""

import argparse
import json
import resource
import subprocess
import sys

import numpy as np

from fuel_mlir import runner

from harness import report, time_interleaved


def module(b, h, s, d, causal):
    t = f"tensor<{b}x{h}x{s}x{d}xf32>"
    flags = "causal = true, " if causal else ""
    return (f"func.func @f(%q: {t}, %k: {t}, %v: {t}) -> {t} {{\n"
            f"  %o = fuel.fused flash_attn {{{flags}softmax_scale = {d ** -0.5} : f32}}"
            f" (%q, %k, %v) : ({t}, {t}, {t}) -> {t}\n"
            f"  return %o : {t}\n}}\n")


def reference(q, k, v, causal, dtype=np.float64):
    q, k, v = (x.astype(dtype) for x in (q, k, v))
    s = (q @ k.transpose(0, 1, 3, 2)) * q.shape[-1] ** -0.5
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    s = np.exp(s - s.max(-1, keepdims=True))
    return (s / s.sum(-1, keepdims=True)) @ v


def inputs(b, h, s, d):
    rng = np.random.default_rng(0)
    return [rng.standard_normal((b, h, s, d)).astype(np.float32) for _ in range(3)]


def long_run(s):
    """Runs one causal [1, 8, s, 64] attention; prints the peak RSS (MiB)."""
    b, h, d = 1, 8, 64
    q, k, v = inputs(b, h, s, d)
    f = runner.compile(module(b, h, s, d, True), "f")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = np.empty_like(q)
    f(q, k, v, out=out)
    assert np.all(np.isfinite(out))
    # The last query sees every key: check it against float64.
    kk, vv = k[0].astype(np.float64), v[0].astype(np.float64)
    sl = np.einsum("hd,hsd->hs", q[0, :, -1].astype(np.float64), kk) * d ** -0.5
    p = np.exp(sl - sl.max(-1, keepdims=True))
    want = np.einsum("hs,hsd->hd", p / p.sum(-1, keepdims=True), vv)
    assert np.abs(out[0, :, -1] - want).max() < 1e-4
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"peak_mib": after / 1024, "growth_mib": (after - before) / 1024}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--shapes", nargs="+", default=["1x8x1024x64"])
    parser.add_argument("--long", type=int, default=0)
    parser.add_argument("--json", default=None)
    parser.add_argument("--long-child", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.long_child:
        return long_run(args.long_child)
    results = []
    for shape in args.shapes:
        b, h, s, d = (int(x) for x in shape.split("x"))
        q, k, v = inputs(b, h, s, d)
        out = np.empty_like(q)
        for causal in (True, False):
            text = module(b, h, s, d, causal)
            f1 = runner.compile(text, "f")
            f2 = runner.compile(text, "f", threads=2)
            contenders = {
                "fuel out=": lambda: f1(q, k, v, out=out),
                "fuel 2 threads out=": lambda: f2(q, k, v, out=out),
                "numpy": lambda: reference(q, k, v, causal, np.float32),
            }
            try:
                import torch
                tq, tk, tv = map(torch.from_numpy, (q, k, v))
                for threads in (1, 2):
                    def run(threads=threads):
                        torch.set_num_threads(threads)
                        return torch.nn.functional.scaled_dot_product_attention(
                            tq, tk, tv, is_causal=causal, scale=d ** -0.5).numpy()
                    contenders[f"torch {threads} thread" + ("s" if threads > 1 else "")] = run
            except ImportError:
                pass
            want = reference(q, k, v, causal)
            for who, f in contenders.items():
                got = np.asarray(f(), dtype=np.float64)
                err = np.abs(got - want).max()
                if not err < 1e-4:
                    raise SystemExit(f"{who} computes attention wrong: max error {err:.2e}")
            times = time_interleaved(contenders, args.rounds)
            pairs = s * (s + 1) / 2 if causal else s * s
            name = f"flash_attn {'causal' if causal else 'full'} [{b}, {h}, {s}, {d}]"
            results.append({"op": "flash_attn causal" if causal else "flash_attn",
                            "shape": [b, h, s, d],
                            "ms": report(name, times, "fuel out=",
                                         flops=4.0 * b * h * pairs * d)})
    if args.long:
        child = subprocess.run([sys.executable, __file__, "--long-child", str(args.long)],
                               check=True, capture_output=True, text=True)
        mem = json.loads(child.stdout.strip().splitlines()[-1])
        tensors = 4 * 4 * 8 * args.long * 64 / 2**20
        scores = 4 * 8 * args.long ** 2 / 2**20
        print(f"\nflash_attn causal [1, 8, {args.long}, 64]: peak RSS {mem['peak_mib']:.0f} MiB "
              f"(q, k, v, o: {tensors:.0f} MiB; one score matrix would be {scores:.0f} MiB)")
        results.append({"op": "flash_attn causal long", "shape": [1, 8, args.long, 64],
                        "peak_mib": mem["peak_mib"], "tensors_mib": tensors,
                        "score_matrix_mib": scores})
    if args.json:
        with open(args.json, "w") as out_file:
            json.dump(results, out_file, indent=1)


if __name__ == "__main__":
    main()
