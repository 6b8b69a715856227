"""Numerics of the hand-written decompositions (conv, loss, attention)
against the numpy references in references.py."""

import numpy as np
import pytest

import references as ref
from numerics import BF16, assert_close, rand, run_fused


def f64(a):
    return np.asarray(a, dtype=np.float64)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(8, 10), (2, 3, 5), (6, 1)])
def test_cross_entropy(reduction, shape):
    logits = rand(shape, np.float32, 1, scale=3)
    rng = np.random.default_rng(2)
    targets = rng.integers(0, shape[-1], shape[:-1]).astype(np.int64)
    targets.flat[0] = -100
    out = run_fused("fused_softmax_cross_entropy", [logits, targets], {"reduction": reduction})
    assert_close(out, ref.cross_entropy(f64(logits), targets, reduction), "f32")


def test_cross_entropy_ignore_everywhere_and_custom_index():
    logits = rand((4, 7), np.float32, 3)
    targets = np.full((4,), 3, np.int64)
    out = run_fused("fused_softmax_cross_entropy", [logits, targets], {"ignore_index": 3})
    assert np.isnan(out)  # mean over no targets, as PyTorch
    out = run_fused("fused_softmax_cross_entropy", [logits, targets],
                    {"ignore_index": 3, "reduction": "sum"})
    assert out == 0.0


@pytest.mark.parametrize("dtype,name", [(np.float16, "f16")] + ([(BF16, "bf16")] if BF16 else []))
def test_cross_entropy_low_precision(dtype, name):
    logits = rand((8, 10), dtype, 4)
    targets = np.arange(8, dtype=np.int64) % 10
    out = run_fused("fused_softmax_cross_entropy", [logits, targets])
    assert out.dtype == np.float32
    assert_close(out, ref.cross_entropy(f64(logits), targets), name)


@pytest.mark.parametrize("xshape,gshape", [((4, 6), (4, 1)), ((2, 3, 4), (1, 3, 1)), ((5,), (1,))])
def test_reduce_max_to_backward_with_ties(xshape, gshape):
    x = np.round(rand(xshape, np.float32, 5)).astype(np.float32)  # many ties
    g = rand(gshape, np.float32, 6)
    out = run_fused("reduce_max_to_backward", [x, g])
    assert_close(out, ref.reduce_max_backward(f64(x), f64(g)), "f32")


@pytest.mark.parametrize("case", [
    dict(x=(2, 4, 9, 9), w=(8, 4, 3, 3), bias=True, stride=(1, 1), padding=(0, 0), groups=1),
    dict(x=(1, 4, 10, 7), w=(6, 2, 3, 2), bias=False, stride=(2, 1), padding=(1, 2), groups=2),
    dict(x=(2, 3, 5, 5), w=(3, 1, 5, 5), bias=True, stride=(3, 3), padding=(2, 2), groups=3),
])
@pytest.mark.parametrize("dt,dtype", [("f32", np.float32), ("f16", np.float16)])
def test_conv2d(case, dt, dtype):
    x, w = rand(case["x"], dtype, 7), rand(case["w"], dtype, 8)
    b = rand((case["w"][0],), dtype, 9) if case["bias"] else None
    params = dict(stride=case["stride"], padding=case["padding"], groups=case["groups"])
    out = run_fused("conv2d", [x, w, b], params)
    want = ref.conv2d(f64(x), f64(w), None if b is None else f64(b), case["stride"],
                      case["padding"], case["groups"])
    assert_close(out, want, dt, loose=True)


def test_conv2d_dynamic_spatial():
    x, w = rand((1, 2, 8, 6), np.float32, 10), rand((4, 2, 3, 3), np.float32, 11)
    out = run_fused("conv2d", [x, w], {"padding": (1, 1)}, dynamic={0: (0, 2, 3)})
    assert_close(out, ref.conv2d(f64(x), f64(w), None, (1, 1), (1, 1), 1), "f32", loose=True)


@pytest.mark.parametrize("case", [
    dict(x=(1, 2, 4, 4), w=(2, 3, 3, 3), stride=(1, 1), padding=(0, 0), op=(0, 0), dil=(1, 1), groups=1),
    dict(x=(2, 4, 3, 5), w=(4, 2, 3, 2), stride=(2, 3), padding=(1, 0), op=(1, 2), dil=(1, 1), groups=2),
    dict(x=(1, 2, 5, 5), w=(2, 1, 2, 3), stride=(1, 2), padding=(2, 1), op=(0, 1), dil=(2, 1), groups=1),
    # padding > dilation * (K - 1): the correlation crops instead of padding.
    dict(x=(1, 1, 6, 6), w=(1, 1, 3, 3), stride=(1, 1), padding=(3, 3), op=(0, 0), dil=(1, 1), groups=1),
])
def test_conv_transpose_2d(case):
    x, w = rand(case["x"], np.float32, 12), rand(case["w"], np.float32, 13)
    params = dict(stride=case["stride"], padding=case["padding"], output_padding=case["op"],
                  dilation=case["dil"], groups=case["groups"])
    out = run_fused("conv_transpose_2d", [x, w], params)
    want = ref.conv_transpose2d(f64(x), f64(w), case["stride"], case["padding"], case["op"],
                                case["dil"], case["groups"])
    assert_close(out, want, "f32", loose=True)


@pytest.mark.parametrize("use_silu", [False, True])
@pytest.mark.parametrize("shape", [(2, 3, 10, 4), (1, 1, 4, 4), (3, 2, 7, 1)])
def test_causal_conv1d(use_silu, shape):
    B, C, L, K = shape
    x, w, b = rand((B, C, L), np.float32, 14), rand((C, 1, K), np.float32, 15), rand((C,), np.float32, 16)
    out = run_fused("causal_conv1d", [x, w, b], {"use_silu": use_silu})
    assert_close(out, ref.causal_conv1d(f64(x), f64(w), f64(b), use_silu), "f32", loose=True)


ATTN_CASES = [
    dict(),
    dict(causal=True),
    dict(causal=True, window_left=2),
    dict(window_left=1, window_right=1),
    dict(window_right=0),
    dict(softcap=2.0),
    dict(alibi="heads"),
    dict(alibi="batch", causal=True),
    dict(causal=True, softcap=5.0, alibi="heads", window_left=3),
]


def attn_inputs(B=2, Hq=4, Hkv=2, Sq=3, Sk=5, D=8, Dv=6, dtype=np.float32, seed=20):
    q = rand((B, Hq, Sq, D), dtype, seed)
    k = rand((B, Hkv, Sk, D), dtype, seed + 1)
    v = rand((B, Hkv, Sk, Dv), dtype, seed + 2)
    return q, k, v


def alibi_for(kind, B, Hq):
    if kind == "heads":
        return (2.0 ** -np.arange(1, Hq + 1)).astype(np.float32)
    return (0.1 * (1 + np.arange(B * Hq)).reshape(B, Hq)).astype(np.float32)


def split_attn_params(case, B, Hq):
    """(params for the reference, params for the op, alibi)."""
    params = {k: v for k, v in case.items() if k != "alibi"}
    alibi = alibi_for(case["alibi"], B, Hq) if "alibi" in case else None
    return params, alibi


def op_params(params):
    rename = {"window_left": "window_size_left", "window_right": "window_size_right"}
    return {rename.get(k, k): v for k, v in params.items()}


@pytest.mark.parametrize("case", ATTN_CASES, ids=lambda c: ",".join(c) or "plain")
def test_flash_attn(case):
    q, k, v = attn_inputs()
    params, alibi = split_attn_params(case, 2, 4)
    out = run_fused("flash_attn", [q, k, v, alibi], dict(softmax_scale=0.3, **op_params(params)))
    want = ref.flash_attn(f64(q), f64(k), f64(v), 0.3, alibi=None if alibi is None else f64(alibi), **params)
    assert_close(out, want, "f32", loose=True)


def test_flash_attn_k_len_and_fully_masked_rows():
    q, k, v = attn_inputs(Sq=4, Sk=8)
    # k_len = 2 with a causal mask: queries 0 and 1 (positions -2, -1) see
    # nothing and must give 0, not NaN.
    out = run_fused("flash_attn", [q, k, v, 2], dict(softmax_scale=0.5, causal=True))
    want = ref.flash_attn(f64(q), f64(k), f64(v), 0.5, causal=True, k_len=2)
    assert np.all(np.isfinite(out))
    assert np.all(out[:, :, :2] == 0)
    assert_close(out, want, "f32", loose=True)


@pytest.mark.parametrize("dt,dtype", [("f16", np.float16)] + ([("bf16", BF16)] if BF16 else []))
def test_flash_attn_low_precision(dt, dtype):
    q, k, v = attn_inputs(dtype=dtype)
    out = run_fused("flash_attn", [q, k, v], dict(softmax_scale=0.3, causal=True))
    assert_close(out, ref.flash_attn(f64(q), f64(k), f64(v), 0.3, causal=True), dt)


def test_flash_attn_dynamic_sequence():
    q, k, v = attn_inputs(Sq=5, Sk=5)
    out = run_fused("flash_attn", [q, k, v], dict(softmax_scale=0.3, causal=True),
                    dynamic={0: (0, 2), 1: (0, 2), 2: (0, 2)})
    assert_close(out, ref.flash_attn(f64(q), f64(k), f64(v), 0.3, causal=True), "f32", loose=True)


@pytest.mark.parametrize("grad_of", ["q", "k", "v"])
@pytest.mark.parametrize("case", [dict(), dict(causal=True, softcap=3.0), dict(alibi="heads", window_left=1),
                                  dict(softcap=3.0, alibi="heads")],
                         ids=["plain", "causal,softcap", "alibi,window", "softcap,alibi"])
def test_flash_attn_backward_matches_finite_differences(grad_of, case):
    q, k, v = (f64(a) for a in attn_inputs(B=1, Hq=4, Hkv=2, Sq=3, Sk=4, D=3, Dv=2))
    do = rand((1, 4, 3, 2), np.float64, 30)
    params, alibi = split_attn_params(case, 1, 4)
    alibi64 = None if alibi is None else f64(alibi)
    args = {"q": q, "k": k, "v": v}

    def loss(x):
        a = dict(args)
        a[grad_of] = x
        return (do * ref.flash_attn(a["q"], a["k"], a["v"], 0.4, alibi=alibi64, **params)).sum()

    want = ref.grad(loss, args[grad_of])
    # alibi slopes are f32 (powers of two: exact in f64 too).
    out = run_fused(f"flash_attn_backward_{grad_of}", [q, k, v, do, alibi],
                    dict(softmax_scale=0.4, **op_params(params)))
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("block_size,lens", [(4, [5, 1, 8]), (2, [3, 4, 1]), (8, [8, 2, 7])])
@pytest.mark.parametrize("extras", [dict(), dict(softcap=4.0, alibi=True)], ids=["plain", "softcap,alibi"])
def test_paged_attn(block_size, lens, extras):
    S, Hq, Hkv, D = 3, 4, 2, 8
    num_blocks = 10
    q = rand((S, Hq, D), np.float32, 40)
    kc, vc = rand((num_blocks, Hkv, block_size, D), np.float32, 41), rand((num_blocks, Hkv, block_size, D), np.float32, 42)
    max_blocks = max((n + block_size - 1) // block_size for n in lens) + 1
    rng = np.random.default_rng(43)
    table = rng.permutation(num_blocks)[:S * max_blocks].reshape(S, max_blocks).astype(np.int32)
    table[0, -1] = -7  # past every length: never read
    ctx = np.array(lens, np.int32)
    alibi = (2.0 ** -np.arange(1, Hq + 1)).astype(np.float32) if extras.get("alibi") else None
    params = dict(softmax_scale=0.35, block_size=block_size)
    if "softcap" in extras:
        params["softcap"] = extras["softcap"]
    out = run_fused("paged_attn", [q, kc, vc, table, ctx, alibi], params)
    want = ref.paged_attn(f64(q), f64(kc), f64(vc), table, ctx, 0.35, block_size,
                          softcap=extras.get("softcap"), alibi=None if alibi is None else f64(alibi))
    assert_close(out, want, "f32", loose=True)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("sq,sk,dynamic", [(3, 5, False), (6, 6, False), (4, 9, True)])
@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_flash_attn_basic_form(causal, sq, sk, dynamic, dtype):
    """The form flash_attn's recipe covers (decomposed through the recipe,
    the causal mask bottom-right aligned) against the reference."""
    dt = np.float32 if dtype == "f32" else np.float16
    q = rand((2, 3, sq, 8), dt, 1)
    k = rand((2, 3, sk, 8), dt, 2)
    v = rand((2, 3, sk, 4), dt, 3)
    dyn = {0: (0, 2), 1: (0, 2), 2: (0, 2)} if dynamic else None
    got = run_fused("flash_attn", [q, k, v], {"softmax_scale": 0.3, "causal": causal}, dyn)
    want = ref.flash_attn(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64), 0.3,
                          causal=causal)
    assert_close(got, want, dtype)
