"""The attention schedule (flash_attn in FlashAttention-2's tiling: query
blocks in an scf.forall, key blocks in a loop with an online softmax,
fuel-codegen-cpu) computes what docs/FusedOps.md says for flash_attn, within
its tolerances, against numpy in float64 (references.flash_attn): causal and
not, windows, softcap, ALiBi, k_len, grouped-query heads, Sq < Sk and
Sq > Sk (rows that see no key give 0), several query and key blocks,
f32/f16/bf16, and shapes off the blocks (padded)."""

import numpy as np
import pytest

from fuel_mlir import runner
import references as ref
from numerics import BF16, assert_close, fused_text, rand


def f64(a):
    return np.asarray(a, dtype=np.float64)


def inputs(B, Hq, Hkv, Sq, Sk, D, Dv, dtype=np.float32, seed=3):
    return (rand((B, Hq, Sq, D), dtype, seed), rand((B, Hkv, Sk, D), dtype, seed + 1),
            rand((B, Hkv, Sk, Dv), dtype, seed + 2))


def reference(q, k, v, params, alibi=None, k_len=None):
    rename = {"window_size_left": "window_left", "window_size_right": "window_right"}
    p = {rename.get(n, n): x for n, x in params.items() if n != "softmax_scale"}
    return ref.flash_attn(f64(q), f64(k), f64(v), params["softmax_scale"],
                          alibi=None if alibi is None else f64(alibi), k_len=k_len, **p)


def run(args, params, **options):
    text = fused_text("flash_attn", args, params)
    return runner.compile(text, "f", **options)(*args)


# (B, Hq, Hkv, Sq, Sk, D, Dv): one block each way, several query and key
# blocks, grouped-query heads, Sq < Sk and Sq > Sk, blocks smaller than 64.
SHAPES = [(1, 2, 2, 64, 64, 16, 16), (1, 2, 2, 192, 128, 64, 64),
          (2, 4, 2, 64, 192, 32, 16), (1, 2, 1, 40, 80, 16, 48),
          (1, 1, 1, 128, 64, 16, 32)]
CASES = [dict(), dict(causal=True), dict(window_size_left=20),
         dict(window_size_left=9, window_size_right=3), dict(window_size_right=0),
         dict(causal=True, window_size_left=70), dict(causal=True, window_size_right=5),
         dict(causal=True, softcap=2.0)]


def case_id(c):
    return ",".join(f"{n}={x}" for n, x in c.items()) or "plain"


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_scheduled(shape, case):
    q, k, v = inputs(*shape)
    params = dict(softmax_scale=0.3, **case)
    out = run([q, k, v], params)
    assert np.all(np.isfinite(out))
    assert_close(out, reference(q, k, v, params), "f32", loose=True)


def test_rows_that_see_no_key_are_zero():
    # Sq > Sk, causal: the diagonal is aligned bottom-right, so the first
    # Sq - Sk = 64 queries see no key (a whole query block skips the key loop).
    q, k, v = inputs(1, 2, 2, 128, 64, 16, 16)
    params = dict(softmax_scale=0.5, causal=True)
    out = run([q, k, v], params)
    assert np.all(out[:, :, :64] == 0)
    assert_close(out, reference(q, k, v, params), "f32", loose=True)


DTYPES = [("f16", np.float16)] + ([("bf16", BF16)] if BF16 is not None else [])


@pytest.mark.parametrize("dname,dtype", DTYPES, ids=[d[0] for d in DTYPES])
@pytest.mark.parametrize("case", [dict(), dict(causal=True)], ids=case_id)
def test_low_precision(dname, dtype, case):
    q, k, v = inputs(1, 4, 2, 64, 128, 32, 32, dtype)
    params = dict(softmax_scale=0.2, **case)
    out = run([q, k, v], params)
    assert out.dtype == dtype
    assert_close(out, reference(q, k, v, params), dname)


def test_exact_math_and_threads():
    # The approximated exp against libm's, and the query blocks spread over
    # threads: both within the same tolerance of the reference.
    q, k, v = inputs(2, 2, 2, 128, 128, 32, 32)
    params = dict(softmax_scale=0.25, causal=True)
    want = reference(q, k, v, params)
    assert_close(run([q, k, v], params, approximate_math=False), want, "f32", loose=True)
    assert_close(run([q, k, v], params, threads=2), want, "f32", loose=True)


def test_large_scores_do_not_overflow():
    # Scores of several hundred: exp(s) overflows f32, the running max keeps
    # exp's argument <= 0. A score s carries an f32 rounding error of about
    # |s| * 6e-8 into p's exponent (3e-5 here), hence the tolerance.
    q, k, v = inputs(1, 1, 1, 64, 128, 16, 16)
    params = dict(softmax_scale=40.0, causal=True)
    out = run([q, k, v], params)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, reference(q, k, v, params), rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("kind", ["heads", "batch"])
@pytest.mark.parametrize("case", [dict(), dict(causal=True, window_size_left=30)], ids=case_id)
def test_alibi(kind, case):
    q, k, v = inputs(2, 4, 2, 64, 128, 16, 16)
    slopes = (2.0 ** -np.arange(1, 5)).astype(np.float32)
    if kind == "batch":
        slopes = (0.05 * (1 + np.arange(8))).reshape(2, 4).astype(np.float32)
    params = dict(softmax_scale=0.3, **case)
    assert_close(run([q, k, v, slopes], params),
                 reference(q, k, v, params, alibi=slopes), "f32", loose=True)


@pytest.mark.parametrize("k_len", [0, 1, 20, 64, 100, 128])
@pytest.mark.parametrize("case", [dict(), dict(causal=True), dict(causal=True, softcap=3.0)],
                         ids=case_id)
def test_k_len(k_len, case):
    # K/V as a capacity buffer of 128 keys, the first k_len live: the key
    # loop stops at the last live block, the rest is masked; rows that see
    # no key give 0.
    q, k, v = inputs(1, 2, 2, 64, 128, 16, 16)
    params = dict(softmax_scale=0.3, **case)
    out = run([q, k, v, k_len], params)
    assert np.all(np.isfinite(out))
    assert_close(out, reference(q, k, v, params, k_len=k_len), "f32", loose=True)


# Shapes off the blocks: sequences padded to whole blocks (padded keys
# masked, padded queries dropped), head dims padded to 16.
RAGGED = [(2, 4, 2, 3, 5, 8, 6), (1, 2, 2, 1, 100, 64, 64), (1, 2, 1, 100, 37, 20, 12),
          (1, 1, 1, 1000, 1000, 64, 64), (1, 2, 2, 65, 130, 16, 16)]


@pytest.mark.parametrize("shape", RAGGED, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("case", [dict(), dict(causal=True), dict(causal=True, window_size_left=7),
                                  dict(softcap=3.0, window_size_right=2)], ids=case_id)
def test_ragged(shape, case):
    q, k, v = inputs(*shape)
    params = dict(softmax_scale=0.3, **case)
    out = run([q, k, v], params)
    assert out.shape == q.shape[:3] + v.shape[3:]
    assert np.all(np.isfinite(out))
    assert_close(out, reference(q, k, v, params), "f32", loose=True)


@pytest.mark.parametrize("k_len", [0, 3, 37, 40])
def test_ragged_k_len(k_len):
    # k_len beyond Sk (40 > 37) sees every key; the padded keys stay masked.
    q, k, v = inputs(1, 2, 2, 10, 37, 16, 16)
    params = dict(softmax_scale=0.3, causal=True)
    assert_close(run([q, k, v, k_len], params),
                 reference(q, k, v, params, k_len=k_len), "f32", loose=True)


# Dynamic sequence lengths (dim 2 of q, and of k and v): one compiled
# function for every length, the blocks padded at run time (padded keys
# masked, padded queries dropped).
DYNAMIC_CASES = [dict(), dict(causal=True), dict(causal=True, window_size_left=7),
                 dict(window_size_left=9, window_size_right=3), dict(causal=True, softcap=2.0)]


@pytest.mark.parametrize("case", DYNAMIC_CASES, ids=case_id)
@pytest.mark.parametrize("which", ["q", "kv", "both"])
def test_dynamic_lengths(case, which):
    params = dict(softmax_scale=0.3, **case)
    dyn_q, dyn_kv = which in ("q", "both"), which in ("kv", "both")
    dynamic = {0: (2,) if dyn_q else (), 1: (2,) if dyn_kv else (), 2: (2,) if dyn_kv else ()}
    q0, k0, v0 = inputs(1, 4, 2, 64, 64, 16, 16)
    f = runner.compile(fused_text("flash_attn", [q0, k0, v0], params, dynamic=dynamic), "f")
    for sq, sk in [(1, 1), (64, 64), (100, 37), (37, 150), (130, 130)]:
        sq, sk = (sq if dyn_q else 64), (sk if dyn_kv else 64)
        q, k, v = inputs(1, 4, 2, sq, sk, 16, 16, seed=sq + sk)
        out = f(q, k, v)
        assert out.shape == (1, 4, sq, 16)
        assert np.all(np.isfinite(out))
        assert_close(out, reference(q, k, v, params), "f32", loose=True)


def test_dynamic_lengths_k_len_alibi_f16():
    params = dict(softmax_scale=0.3, causal=True)
    q0, k0, v0 = inputs(1, 2, 2, 16, 16, 16, 16, np.float16)
    slopes = np.array([0.25, 0.5], np.float32)
    f = runner.compile(fused_text("flash_attn", [q0, k0, v0, slopes, 7], params,
                                  dynamic={0: (2,), 1: (2,), 2: (2,)}), "f")
    for sq, sk, k_len in [(5, 90, 60), (70, 70, 70), (3, 200, 0)]:
        q, k, v = inputs(1, 2, 2, sq, sk, 16, 16, np.float16, seed=sq)
        out = f(q, k, v, slopes, k_len)
        assert out.dtype == np.float16 and out.shape == (1, 2, sq, 16)
        assert_close(out, reference(q, k, v, params, alibi=slopes, k_len=k_len), "f16")


# The backwards: FlashAttention-2's backward (lse and D per query row in a
# first pass; dq per query block, dk and dv per key block), against the
# numpy gradients of references.flash_attn_grads, which the first test
# checks against finite differences.
def bwd_reference(q, k, v, do, params, alibi=None):
    rename = {"window_size_left": "window_left", "window_size_right": "window_right"}
    p = {rename.get(n, n): x for n, x in params.items() if n != "softmax_scale"}
    return ref.flash_attn_grads(f64(q), f64(k), f64(v), f64(do), params["softmax_scale"],
                                alibi=None if alibi is None else f64(alibi), **p)


def test_backward_reference_is_the_gradient():
    q, k, v = (f64(a) for a in inputs(1, 2, 1, 3, 4, 3, 2))
    do = f64(rand((1, 2, 3, 2), np.float32, 9))
    params = dict(softmax_scale=0.4, causal=True, softcap=3.0)
    alibi = np.array([0.5, 0.25])
    grads = bwd_reference(q, k, v, do, params, alibi)

    def loss(which, x):
        args = {"q": q, "k": k, "v": v}
        args[which] = x
        return (do * ref.flash_attn(args["q"], args["k"], args["v"], 0.4, causal=True,
                                    softcap=3.0, alibi=alibi)).sum()

    for which, got in zip("qkv", grads):
        want = ref.grad(lambda x: loss(which, x), {"q": q, "k": k, "v": v}[which])
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


BWD_SHAPES = [(1, 2, 2, 64, 64, 16, 16), (1, 2, 2, 128, 192, 64, 64), (2, 4, 2, 40, 72, 20, 12),
              (1, 2, 1, 3, 5, 8, 6)]
BWD_CASES = [dict(), dict(causal=True), dict(causal=True, window_size_left=9),
             dict(softcap=2.0, window_size_right=3), dict(causal=True, alibi=True),
             dict(softcap=2.0, alibi=True)]


@pytest.mark.parametrize("shape", BWD_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("case", BWD_CASES, ids=case_id)
def test_backward(shape, case):
    q, k, v = inputs(*shape)
    do = rand(q.shape[:3] + v.shape[3:], np.float32, 7)
    case = dict(case)
    alibi = (2.0 ** -np.arange(1, shape[1] + 1)).astype(np.float32) if case.pop("alibi", False) else None
    params = dict(softmax_scale=0.3, **case)
    grads = bwd_reference(q, k, v, do, params, alibi)
    for which, want in zip("qkv", grads):
        args = [q, k, v, do] + ([alibi] if alibi is not None else [])
        text = fused_text(f"flash_attn_backward_{which}", args, params)
        got = runner.compile(text, "f")(*args)
        assert got.shape == want.shape
        assert_close(got, want, "f32", loose=True)


# Dynamic sequence lengths in the backwards (dim 2 of q and do, of k and v,
# or both): one compiled function per gradient for every length, padded at
# run time as in the forward.
@pytest.mark.parametrize("case", [dict(), dict(causal=True), dict(causal=True, window_size_left=9),
                                  dict(softcap=2.0, window_size_right=3)], ids=case_id)
@pytest.mark.parametrize("which", ["q", "kv", "both"])
def test_backward_dynamic_lengths(case, which):
    params = dict(softmax_scale=0.3, **case)
    dyn_q, dyn_kv = which in ("q", "both"), which in ("kv", "both")
    q0, k0, v0 = inputs(1, 4, 2, 64, 64, 16, 16)
    do0 = rand((1, 4, 64, 16), np.float32, 7)
    dynamic = {0: (2,) if dyn_q else (), 1: (2,) if dyn_kv else (), 2: (2,) if dyn_kv else (),
               3: (2,) if dyn_q else ()}
    fs = {w: runner.compile(fused_text(f"flash_attn_backward_{w}", [q0, k0, v0, do0], params,
                                       dynamic=dynamic), "f") for w in "qkv"}
    for sq, sk in [(1, 1), (64, 64), (100, 37), (37, 150)]:
        sq, sk = (sq if dyn_q else 64), (sk if dyn_kv else 64)
        q, k, v = inputs(1, 4, 2, sq, sk, 16, 16, seed=sq + sk)
        do = rand((1, 4, sq, 16), np.float32, sq)
        for which_grad, want in zip("qkv", bwd_reference(q, k, v, do, params)):
            got = fs[which_grad](q, k, v, do)
            assert got.shape == want.shape
            assert np.all(np.isfinite(got))
            assert_close(got, want, "f32", loose=True)


@pytest.mark.skipif(BF16 is None, reason="bf16 needs ml_dtypes")
def test_backward_dynamic_lengths_alibi_bf16():
    params = dict(softmax_scale=0.3, causal=True)
    q0, k0, v0 = inputs(1, 2, 1, 16, 16, 16, 8, BF16)
    do0 = rand((1, 2, 16, 8), BF16, 7)
    slopes = np.array([0.25, 0.5], np.float32)
    fs = {w: runner.compile(fused_text(f"flash_attn_backward_{w}", [q0, k0, v0, do0, slopes], params,
                                       dynamic={0: (2,), 1: (2,), 2: (2,), 3: (2,)}), "f")
          for w in "qkv"}
    for sq, sk in [(5, 90), (70, 70)]:
        q, k, v = inputs(1, 2, 1, sq, sk, 16, 8, BF16, seed=sq)
        do = rand((1, 2, sq, 8), BF16, sq)
        for which_grad, want in zip("qkv", bwd_reference(q, k, v, do, params, slopes)):
            got = fs[which_grad](q, k, v, do, slopes)
            assert got.dtype == BF16 and got.shape == want.shape
            assert_close(got, want, "bf16")


@pytest.mark.parametrize("dname,dtype", DTYPES, ids=[d[0] for d in DTYPES])
def test_backward_low_precision(dname, dtype):
    q, k, v = inputs(1, 2, 2, 64, 64, 16, 16, dtype)
    do = rand((1, 2, 64, 16), dtype, 7)
    params = dict(softmax_scale=0.3, causal=True)
    for which, want in zip("qkv", bwd_reference(q, k, v, do, params)):
        got = runner.compile(fused_text(f"flash_attn_backward_{which}", [q, k, v, do], params),
                             "f")(q, k, v, do)
        assert got.dtype == dtype
        assert_close(got, want, dname)
