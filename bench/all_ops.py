"""Every op of the registry on the CPU at a moderate, realistic shape, side
by side: fuel-mlir (its schedule where the op has one, else the decomposed
scalar loops), the op written in numpy (the float64 references of the test
suite, run on the f32 inputs) and PyTorch where it has the op or a short
composition of it (one thread). Every fuel-mlir result is checked against
the float64 reference (PyTorch's autograd in float64 for the attention
backwards) first; then all are timed interleaved. Prints, per op, median ms
and the ratio of each alternative to fuel-mlir (above 1: fuel-mlir is
faster); writes JSON.

    python bench/all_ops.py [--rounds 5] [--ops softmax_last_dim ...]
                            [--json bench/all_ops.json]
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from fuel_mlir import registry, runner

from harness import time_interleaved

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "python"))
import references as ref  # noqa: E402
from numerics import fused_text  # noqa: E402

try:
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(1)
except ImportError:  # pragma: no cover
    torch = None


def rand(shape, seed=0, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def t(*arrays):
    return [torch.from_numpy(np.ascontiguousarray(a)) for a in arrays]


def q_blocks(n, k, nbytes, seed):
    rng = np.random.default_rng(seed)
    blocks = rng.integers(0, 256, (n, k // 32, nbytes), dtype=np.uint8)
    blocks[:, :, 0:2] = rng.uniform(0.01, 0.1, (n, k // 32)).astype(np.float16).view(np.uint8).reshape(n, k // 32, 2)
    return blocks.reshape(n, -1)


def cases():
    """name -> (inputs, params, numpy(*inputs), torch(*inputs) or None)."""
    c = {}
    x = rand((4096, 1024))
    g = rand((4096, 1024), 1)
    y = ref.ref_softmax(x.astype(np.float64)).astype(np.float32)
    c["softmax_last_dim"] = ([x], {}, ref.ref_softmax, lambda x: torch.softmax(*t(x), -1))
    c["rms_norm_last_dim"] = ([x], {"eps": 1e-5}, lambda x: ref.ref_rms(x, 1e-5),
                              lambda x: F.rms_norm(*t(x), (1024,), eps=1e-5))
    c["layer_norm_last_dim"] = ([x], {"eps": 1e-5}, lambda x: ref.ref_layer(x, 1e-5),
                                lambda x: F.layer_norm(*t(x), (1024,), eps=1e-5))
    c["softmax_last_dim_backward"] = ([y, g], {}, ref.ref_softmax_bwd,
                                      lambda y, g: torch._softmax_backward_data(*t(g, y), -1, torch.float32))
    # PyTorch's layer norm backward kernel, given the forward's saved mean
    # and 1/std (fuel-mlir recomputes them from x); its CPU RMS norm has no
    # backward kernel, so autograd runs the forward and the backward.
    ln_stats = (torch.ops.aten.native_layer_norm(torch.from_numpy(x), [1024], None, None, 1e-5)[1:]
                if torch is not None else None)
    c["layer_norm_last_dim_backward"] = (
        [x, g], {"eps": 1e-5}, lambda x, g: ref.ref_layer_bwd(x, g, 1e-5),
        lambda x, g: torch.ops.aten.native_layer_norm_backward(
            *t(g, x), [1024], *ln_stats, None, None, [True, False, False])[0])

    def rms_bwd(x, g):
        xx = t(x)[0].requires_grad_()
        return torch.autograd.grad(F.rms_norm(xx, (1024,), eps=1e-5), xx, *t(g))[0]
    c["rms_norm_last_dim_backward"] = ([x, g], {"eps": 1e-5}, lambda x, g: ref.ref_rms_bwd(x, g, 1e-5),
                                       rms_bwd)
    c["inplace_affine"] = ([x], {"mul": 2.0, "add": 0.5}, lambda x: 2 * x + 0.5,
                           lambda x: torch.addcmul(torch.tensor(0.5), *t(x), torch.tensor(2.0)))
    def amax_bwd(x, g):
        xx = t(x)[0].requires_grad_()
        return torch.autograd.grad(torch.amax(xx, -1, keepdim=True), xx, *t(g))[0]
    c["reduce_max_to_backward"] = ([np.round(x * 2), rand((4096, 1), 2)], {}, ref.reduce_max_backward,
                                   amax_bwd)
    c["powi_backward"] = ([rand((1 << 22,), 3), rand((1 << 22,), 4)], {"exp": 3},
                          lambda x, g: 3 * x ** 2 * g, lambda x, g: (lambda a, b: 3 * a * a * b)(*t(x, g)))
    a, w, b = rand((256, 1024)), rand((1024, 1024), 1, 0.03), rand((1024,), 2)
    c["fused_linear"] = ([a, w, b], {}, lambda a, w, b: a @ w + b, lambda a, w, b: torch.addmm(*t(b, a, w)))
    xr, cos, sin = rand((8, 1024, 128)), rand((1024, 128), 1), rand((1024, 128), 2)

    def rope_np(x, cs, sn):
        h = x.shape[-1] // 2
        return x * cs + np.concatenate([-x[..., h:], x[..., :h]], -1) * sn

    def rope_torch(x, cs, sn):
        x, cs, sn = t(x, cs, sn)
        return x * cs + torch.cat([-x[..., 64:], x[..., :64]], -1) * sn

    c["rope"] = ([xr, cos, sin], {}, rope_np, rope_torch)
    xc, wc, bc = rand((1, 64, 56, 56)), rand((64, 64, 3, 3), 1, 0.05), rand((64,), 2)
    c["conv2d"] = ([xc, wc, bc], {"padding": (1, 1)}, lambda x, w, b: ref.conv2d(x, w, b, (1, 1), (1, 1), 1),
                   lambda x, w, b: F.conv2d(*t(x, w, b), padding=1))
    xt, wt = rand((1, 32, 28, 28)), rand((32, 32, 3, 3), 1, 0.05)
    c["conv_transpose_2d"] = ([xt, wt], {"stride": (2, 2), "padding": (1, 1), "output_padding": (1, 1)},
                              lambda x, w: ref.conv_transpose2d(x, w, (2, 2), (1, 1), (1, 1), (1, 1), 1),
                              lambda x, w: F.conv_transpose2d(*t(x, w), stride=2, padding=1, output_padding=1))
    q, k, v = rand((1, 8, 1024, 64)), rand((1, 8, 1024, 64), 1), rand((1, 8, 1024, 64), 2)
    c["flash_attn"] = ([q, k, v], {"softmax_scale": 0.125, "causal": True},
                       lambda q, k, v: ref.flash_attn(q, k, v, 0.125, causal=True),
                       lambda q, k, v: F.scaled_dot_product_attention(*t(q, k, v), is_causal=True, scale=0.125))
    qs, ks, vs, do = (rand((1, 8, 256, 64), s) for s in range(4))
    for which, idx in (("q", 0), ("k", 1), ("v", 2)):
        def bwd(q, k, v, do, idx=idx):
            qq, kk, vv = (x.requires_grad_() for x in t(q, k, v))
            o = F.scaled_dot_product_attention(qq, kk, vv, scale=0.125)
            return torch.autograd.grad(o, (qq, kk, vv)[idx], *t(do))[0]
        c[f"flash_attn_backward_{which}"] = ([qs, ks, vs, do], {"softmax_scale": 0.125}, None, bwd)
    S, H, D, bs, nb = 16, 8, 64, 16, 128
    qp, kc, vc = rand((S, H, D)), rand((nb, H, bs, D), 1), rand((nb, H, bs, D), 2)
    table = np.random.default_rng(5).permutation(nb)[:S * 8].reshape(S, 8).astype(np.int32)
    lens = np.random.default_rng(6).integers(1, 8 * bs, S).astype(np.int32)
    c["paged_attn"] = ([qp, kc, vc, table, lens], {"softmax_scale": 0.125, "block_size": bs},
                       lambda q, kc, vc, tb, ln: ref.paged_attn(q, kc, vc, tb, ln, 0.125, bs), None)
    rows = q_blocks(4096, 4096, 34, 7)
    wq = rows.reshape(-1).view("<u4")
    w8 = (rows.reshape(4096, 128, 34)[:, :, 2:].view(np.int8).astype(np.float32)
          * rows.reshape(4096, 128, 34)[:, :, 0:2].copy().view(np.float16).astype(np.float32)).reshape(4096, 4096)
    a1 = rand((1, 4096), 8)
    c["qmatmul"] = ([a1, wq], {"quant_type": "q8_0", "k": 4096, "n": 4096}, lambda a, w: a @ w8.T,
                    lambda a, w: torch.matmul(*t(a), torch.from_numpy(w8).T))
    codes = np.random.default_rng(9).integers(0, 16, (4096, 4096))
    absmax = np.abs(rand((4096, 64), 10)) + 0.1
    wn = ref.nf4_dequant(codes, absmax, 64).astype(np.float32)
    c["nf4_matmul"] = ([a1, ref.nf4_pack(codes).view(np.int8), absmax], {}, lambda a, p, s: a @ wn.T,
                       lambda a, p, s: torch.matmul(*t(a), torch.from_numpy(wn).T))
    aq = np.random.default_rng(11).integers(0, 16, (4096, 4096))
    az = np.random.default_rng(12).integers(0, 16, (32, 4096))
    asc = np.abs(rand((32, 4096), 13, 0.01))
    wa = ((aq - np.repeat(az, 128, 0)) * np.repeat(asc, 128, 0)).astype(np.float32)
    c["awq_matmul"] = ([a1, ref.awq_pack(aq).view(np.int32), ref.awq_pack(az).view(np.int32), asc],
                       {"group_size": 128}, lambda a, q, z, s: a @ wa,
                       lambda a, q, z, s: torch.matmul(*t(a), torch.from_numpy(wa)))
    logits = rand((4096, 1024))
    labels = np.random.default_rng(14).integers(0, 1024, 4096).astype(np.int64)
    c["fused_softmax_cross_entropy"] = ([logits, labels], {}, lambda l, y: ref.cross_entropy(l, y),
                                        lambda l, y: F.cross_entropy(*t(l, y)))
    xcv, wcv, bcv = rand((1, 1024, 2048)), rand((1024, 1, 4), 1), rand((1024,), 2)
    c["causal_conv1d"] = ([xcv, wcv, bcv], {"use_silu": True},
                          lambda x, w, b: ref.causal_conv1d(x, w, b, True),
                          lambda x, w, b: F.silu(F.conv1d(F.pad(t(x)[0], (3, 0)), *t(w, b), groups=1024)))
    u, dl = rand((1, 256, 256)), np.abs(rand((1, 256, 256), 1))
    am, bm, cm = -np.abs(rand((256, 16), 2)), rand((1, 256, 16), 3), rand((1, 256, 16), 4)
    c["selective_scan"] = ([u, dl, am, bm, cm], {"delta_softplus": True},
                           lambda *a: ref.selective_scan(*a, True), None)
    xs, dts = rand((1, 256, 8, 64)), np.abs(rand((1, 256, 8), 1, 0.1))
    ah, bh, ch = -np.abs(rand((8,), 2)), rand((1, 256, 8, 16), 3), rand((1, 256, 8, 16), 4)
    c["ssd_chunk_scan"] = ([xs, dts, ah, bh, ch], {"chunk_size": 64}, ref.ssd_scan, None)
    return c


def first(x):
    return x[0] if isinstance(x, (tuple, list)) else x


def to_np(x):
    x = first(x)
    return x.detach().numpy() if torch is not None and isinstance(x, torch.Tensor) else np.asarray(x)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--ops", nargs="+", default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    table = cases()
    missing = sorted({e.name for e in registry.entries()} - set(table))
    if missing:
        raise SystemExit(f"no bench case for {', '.join(missing)}")
    results = []
    print(f"{'op':32s} {'fuel ms':>9s} {'numpy':>8s} {'torch':>8s}   (alternatives: their time / fuel's)")
    for name in args.ops or sorted(table):
        inputs, params, np_f, torch_f = table[name]
        f = runner.compile(fused_text(name, inputs, params), "f")
        got = to_np(f(*inputs)).astype(np.float64)
        if torch_f is not None and np_f is None:
            want = to_np(torch_f(*[i.astype(np.float64) if i.dtype == np.float32 else i for i in inputs]))
        else:
            want = to_np(np_f(*[i.astype(np.float64) if i.dtype == np.float32 else i for i in inputs]))
        err = np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)
        if not err < 1e-3:
            raise SystemExit(f"fuel-mlir computes {name} wrong: relative error {err:.2e}")
        contenders = {"fuel": lambda: f(*inputs)}
        if np_f is not None:
            contenders["numpy"] = lambda: np_f(*inputs)
        if torch_f is not None and torch is not None:
            contenders["torch 1 thread"] = lambda: torch_f(*inputs)
        times = time_interleaved(contenders, args.rounds)
        med = {who: float(np.median(ts)) for who, ts in times.items()}
        ratio = {who: med[who] / med["fuel"] for who in med if who != "fuel"}
        print(f"{name:32s} {med['fuel']:9.2f} "
              + " ".join(f"{ratio[w]:8.2f}" if w in ratio else f"{'-':>8s}" for w in ("numpy", "torch 1 thread")),
              flush=True)
        results.append({"op": name, "shapes": [list(np.shape(i)) for i in inputs],
                         "median_ms": med, "ratio_to_fuel": ratio})
    if args.json:
        with open(args.json, "w") as out_file:
            json.dump(results, out_file, indent=1)


if __name__ == "__main__":
    main()
