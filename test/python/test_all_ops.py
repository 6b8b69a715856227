"""Every op of the registry, decomposed and run in f32, f16, bf16 and with
dynamic dims, against the float64 numpy references."""

import numpy as np
import pytest

import references as ref
from numerics import BF16, assert_close, rand, run_fused
from test_qmatmul import as_words, dequant, random_blocks

from fuel_mlir import registry


def f64(a):
    return np.asarray(a, dtype=np.float64)


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def rms(x, eps=1e-5):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps)


def layer(x, eps=1e-5):
    c = x - x.mean(-1, keepdims=True)
    return c / np.sqrt((c * c).mean(-1, keepdims=True) + eps)


def rope(x, cos, sin):
    h = x.shape[-1] // 2
    return x * cos + np.concatenate([-x[..., h:], x[..., :h]], -1) * sin


def layer_bwd(x, g, eps=1e-5):
    c = x - x.mean(-1, keepdims=True)
    r = 1 / np.sqrt((c * c).mean(-1, keepdims=True) + eps)
    xh = c * r
    return r * (g - g.mean(-1, keepdims=True) - xh * (g * xh).mean(-1, keepdims=True))


def rms_bwd(x, g, eps=1e-5):
    ms = (x * x).mean(-1, keepdims=True)
    return (g - x * (g * x).sum(-1, keepdims=True) / (x.shape[-1] * (ms + eps))) / np.sqrt(ms + eps)


NF4_CODES = np.random.default_rng(0).integers(0, 16, (6, 128))
AWQ_Q = np.random.default_rng(1).integers(0, 16, (128, 16))
AWQ_Z = np.random.default_rng(2).integers(0, 16, (2, 16))
Q6_ROWS = random_blocks("q6_k", 3, 256, seed=3)
PAGED_TABLE = np.array([[3, 1, 0], [2, 5, 4]], np.int32)
PAGED_LENS = np.array([7, 3], np.int32)
SLOPES = (2.0 ** -np.arange(1, 5)).astype(np.float32)


def attn(dt):
    return [rand((1, 4, 3, 8), dt, 1), rand((1, 2, 5, 8), dt, 2), rand((1, 2, 5, 8), dt, 3)]


# name: (inputs for a float dtype, params, reference, dynamic dims per input)
CASES = {
    "softmax_last_dim": (lambda dt: [rand((3, 4, 8), dt)], {}, softmax, {0: (0, 1, 2)}),
    "fused_linear": (lambda dt: [rand((2, 3, 8), dt), rand((8, 5), dt, 1), rand((5,), dt, 2)], {},
                     lambda a, b, c: a @ b + c, {0: (0, 1), 1: (1,), 2: (0,)}),
    "rms_norm_last_dim": (lambda dt: [rand((4, 16), dt)], {"eps": 1e-5}, rms, {0: (0, 1)}),
    "layer_norm_last_dim": (lambda dt: [rand((4, 16), dt)], {"eps": 1e-5}, layer, {0: (0, 1)}),
    "rope": (lambda dt: [rand((2, 3, 8), dt), rand((3, 8), dt, 1), rand((3, 8), dt, 2)], {}, rope,
             {0: (0, 1, 2), 1: (0,), 2: (0,)}),
    "conv2d": (lambda dt: [rand((1, 4, 6, 6), dt), rand((4, 2, 3, 3), dt, 1), rand((4,), dt, 2)],
               {"padding": (1, 1), "groups": 2},
               lambda x, w, b: ref.conv2d(x, w, b, (1, 1), (1, 1), 2), {0: (0, 2, 3)}),
    "softmax_last_dim_backward": (lambda dt: [softmax(rand((3, 8), np.float64)).astype(dt), rand((3, 8), dt, 1)],
                                  {}, lambda y, g: y * (g - (g * y).sum(-1, keepdims=True)),
                                  {0: (0, 1), 1: (0, 1)}),
    "layer_norm_last_dim_backward": (lambda dt: [rand((3, 8), dt), rand((3, 8), dt, 1)], {"eps": 1e-5},
                                     layer_bwd, {0: (0, 1), 1: (0, 1)}),
    "rms_norm_last_dim_backward": (lambda dt: [rand((3, 8), dt), rand((3, 8), dt, 1)], {"eps": 1e-5},
                                   rms_bwd, {0: (0, 1), 1: (0, 1)}),
    "reduce_max_to_backward": (lambda dt: [np.round(rand((4, 6), dt) * 2).astype(dt), rand((4, 1), dt, 1)],
                               {}, ref.reduce_max_backward, {0: (0,)}),
    "conv_transpose_2d": (lambda dt: [rand((1, 2, 4, 4), dt), rand((2, 3, 3, 3), dt, 1)],
                          {"stride": (2, 2), "padding": (1, 1), "output_padding": (1, 1)},
                          lambda x, w: ref.conv_transpose2d(x, w, (2, 2), (1, 1), (1, 1), (1, 1), 1),
                          {0: (0, 2, 3)}),
    "flash_attn": (lambda dt: attn(dt) + [SLOPES], {"softmax_scale": 0.35, "causal": True},
                   lambda q, k, v, s: ref.flash_attn(q, k, v, 0.35, causal=True, alibi=s),
                   {0: (0, 2), 1: (0, 2), 2: (0, 2)}),
    "paged_attn": (lambda dt: [rand((2, 4, 8), dt), rand((6, 2, 4, 8), dt, 1), rand((6, 2, 4, 8), dt, 2),
                               PAGED_TABLE, PAGED_LENS],
                   {"softmax_scale": 0.35, "block_size": 4},
                   lambda q, k, v, t, l: ref.paged_attn(q, k, v, t, l, 0.35, 4),
                   {0: (0,), 1: (0,), 2: (0,), 3: (0, 1), 4: (0,)}),
    "qmatmul": (lambda dt: [rand((3, 256), dt), as_words(Q6_ROWS)], {"quant_type": "q6_k", "k": 256, "n": 3},
                lambda a, w: a @ dequant("q6_k", Q6_ROWS, 256).T, {0: (0,)}),
    "powi_backward": (lambda dt: [rand((5,), dt) + dt(2) if dt is not BF16 else (rand((5,), np.float32) + 2).astype(dt),
                                  rand((5,), dt, 1)],
                      {"exp": 3}, lambda x, g: 3 * x ** 2 * g, {0: (0,), 1: (0,)}),
    "inplace_affine": (lambda dt: [rand((3, 4), dt)], {"mul": 2.0, "add": 0.5}, lambda x: 2 * x + 0.5, {0: (0, 1)}),
    "fused_softmax_cross_entropy": (lambda dt: [rand((6, 10), dt), np.array([1, 2, -100, 9, 0, 4], np.int64)], {},
                                    lambda l, t: ref.cross_entropy(l, t.astype(np.int64)), {0: (0, 1), 1: (0,)}),
    "causal_conv1d": (lambda dt: [rand((2, 3, 9), dt), rand((3, 1, 4), dt, 1), rand((3,), dt, 2)],
                      {"use_silu": True}, lambda x, w, b: ref.causal_conv1d(x, w, b, True),
                      {0: (0, 2), 1: (0,), 2: (0,)}),
    "selective_scan": (lambda dt: [rand((1, 5, 3), dt), np.abs(rand((1, 5, 3), dt, 1)), -np.abs(rand((3, 2), dt, 2)),
                                   rand((1, 5, 2), dt, 3), rand((1, 5, 2), dt, 4)],
                       {"delta_softplus": True},
                       lambda u, d, a, b, c: ref.selective_scan(u, d, a, b, c, True),
                       {0: (1,), 1: (1,), 3: (1,), 4: (1,)}),
    "ssd_chunk_scan": (lambda dt: [rand((1, 4, 2, 3), dt), np.abs(rand((1, 4, 2), dt, 1)), -np.abs(rand((2,), dt, 2)),
                                   rand((1, 4, 2, 2), dt, 3), rand((1, 4, 2, 2), dt, 4)],
                       {"chunk_size": 2}, ref.ssd_scan, {0: (1,), 1: (1,), 3: (1,), 4: (1,)}),
    "nf4_matmul": (lambda dt: [rand((3, 128), dt), ref.nf4_pack(NF4_CODES), np.full((6, 2), 0.5, np.float32)], {},
                   lambda a, w, s: a @ ref.nf4_dequant(NF4_CODES, np.full((6, 2), 0.5), 64).T, {0: (0,)}),
    "flash_attn_backward_q": (lambda dt: attn(dt) + [rand((1, 4, 3, 8), dt, 4)], {"softmax_scale": 0.35}, None,
                              {0: (0, 2), 1: (0, 2), 2: (0, 2), 3: (0, 2)}),
    "flash_attn_backward_k": (lambda dt: attn(dt) + [rand((1, 4, 3, 8), dt, 4)], {"softmax_scale": 0.35}, None,
                              {0: (0, 2), 1: (0, 2), 2: (0, 2), 3: (0, 2)}),
    "flash_attn_backward_v": (lambda dt: attn(dt) + [rand((1, 4, 3, 8), dt, 4)], {"softmax_scale": 0.35}, None,
                              {0: (0, 2), 1: (0, 2), 2: (0, 2), 3: (0, 2)}),
    "awq_matmul": (lambda dt: [rand((2, 128), dt), ref.awq_pack(AWQ_Q).view(np.int32), ref.awq_pack(AWQ_Z).view(np.int32),
                               np.full((2, 16), 0.03, dt)], {"group_size": 64},
                   lambda a, q, z, s: a @ ((AWQ_Q - np.repeat(AWQ_Z, 64, 0)) * np.repeat(s, 64, 0)), {0: (0,)}),
}


def flash_grad(which):
    def reference(q, k, v, do):
        args = {"q": q, "k": k, "v": v}

        def loss(x):
            a = dict(args)
            a[which] = x
            return (do * ref.flash_attn(a["q"], a["k"], a["v"], 0.35)).sum()

        return ref.grad(loss, args[which])
    return reference


for _w in "qkv":
    _c = CASES[f"flash_attn_backward_{_w}"]
    CASES[f"flash_attn_backward_{_w}"] = (_c[0], _c[1], flash_grad(_w), _c[3])


def test_every_op_is_covered():
    assert sorted(CASES) == sorted(e.name for e in registry.entries() if not e.is_runtime)


VARIANTS = [("f32", np.float32), ("f16", np.float16)] + ([("bf16", BF16)] if BF16 else []) + [("dynamic", np.float32)]


@pytest.mark.parametrize("variant,dtype", VARIANTS, ids=[v[0] for v in VARIANTS])
@pytest.mark.parametrize("name", sorted(CASES))
def test_op(name, variant, dtype):
    make, params, reference, dyn = CASES[name]
    inputs = make(dtype)
    out = run_fused(name, inputs, params, dynamic=dyn if variant == "dynamic" else None)
    want = reference(*(f64(x) if np.asarray(x).dtype.kind == "f" or np.asarray(x).dtype == BF16 else x
                       for x in inputs))
    outs = out if isinstance(out, tuple) else (out,)
    wants = want if isinstance(want, tuple) else (want,)
    tol = "f32" if variant == "dynamic" else variant
    for o, w in zip(outs, wants):
        assert_close(o, w, tol, loose=True)


# What each decline may say: the static dims these decompositions need.
STATIC_NEEDS = ("needs static head counts", "needs static weight dims", "needs a static weight shape",
                "must be known statically")


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", sorted(CASES))
def test_op_random_dynamic_dims(name, seed):
    """Any subset of dims may be dynamic: the op either computes the same
    values or stays fused saying which dims it needs static."""
    make, params, reference, _ = CASES[name]
    inputs = make(np.float32)
    rng = np.random.default_rng(seed + 100 * sorted(CASES).index(name))
    dynamic = {i: tuple(d for d in range(np.ndim(x)) if rng.random() < 0.5)
               for i, x in enumerate(inputs) if not isinstance(x, int)}
    try:
        out = run_fused(name, inputs, params, dynamic=dynamic)
    except Exception as e:  # noqa: BLE001 - checked below
        assert "left fused" in str(e) and any(s in str(e) for s in STATIC_NEEDS), str(e)
        return
    want = reference(*(f64(x) if np.asarray(x).dtype.kind == "f" else x for x in inputs))
    for o, w in zip(out if isinstance(out, tuple) else (out,), want if isinstance(want, tuple) else (want,)):
        assert_close(o, w, "f32", loose=True)
