"""--fuel-decompose is numerically exact: every op with a recipe, run through
fuel-to-llvm, against numpy written from the formulas of docs/FusedOps.md."""

import numpy as np
import pytest

from numerics import BF16, assert_close, rand, run_fused
from references import (ref_layer, ref_layer_bwd, ref_rms, ref_rms_bwd, ref_softmax,
                        ref_softmax_bwd)

DTYPES = [("f32", np.float32), ("f16", np.float16)]
if BF16 is not None:
    DTYPES.append(("bf16", BF16))

# Shapes: a batch, a size-1 last dim, a 1-D input; the first is also run
# with dynamic dims.
SHAPES = [(3, 5, 16), (4, 1), (7,)]


def f64(a):
    return np.asarray(a, dtype=np.float64)


def dynamic_all(*arrays):
    return {i: tuple(range(a.ndim)) for i, a in enumerate(arrays)}


@pytest.mark.parametrize("dt,dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_softmax(dt, dtype, shape):
    x = rand(shape, dtype, scale=3)
    assert_close(run_fused("softmax_last_dim", [x]), ref_softmax(f64(x)), dt)


def test_softmax_dynamic_and_extreme():
    x = rand((3, 5, 16), np.float32, scale=30)
    x[0, 0, :] = -1e30  # a row far below the others stays finite
    out = run_fused("softmax_last_dim", [x], dynamic=dynamic_all(x))
    assert_close(out, ref_softmax(f64(x)), "f32")


@pytest.mark.parametrize("dt,dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("op,ref", [("rms_norm_last_dim", ref_rms), ("layer_norm_last_dim", ref_layer)])
def test_norms(dt, dtype, shape, op, ref):
    x = rand(shape, dtype, seed=1)
    out = run_fused(op, [x], {"eps": 1e-5})
    assert_close(out, ref(f64(x), 1e-5), dt)


@pytest.mark.parametrize("op,ref", [("rms_norm_last_dim", ref_rms), ("layer_norm_last_dim", ref_layer)])
def test_norms_dynamic(op, ref):
    x = rand((2, 6, 32), np.float32, seed=2)
    out = run_fused(op, [x], {"eps": 1e-3}, dynamic=dynamic_all(x))
    assert_close(out, ref(f64(x), 1e-3), "f32")


@pytest.mark.parametrize("dt,dtype", DTYPES)
@pytest.mark.parametrize("shapes", [((2, 3, 8), (8, 5)), ((1, 16), (16, 1)), ((4, 2, 3, 7), (7, 9))])
def test_fused_linear(dt, dtype, shapes):
    ashape, bshape = shapes
    a, b = rand(ashape, dtype, 3), rand(bshape, dtype, 4)
    bias = rand((bshape[1],), dtype, 5)
    want = f64(a) @ f64(b) + f64(bias)
    assert_close(run_fused("fused_linear", [a, b, bias]), want, dt, loose=True)


def test_fused_linear_dynamic():
    a, b, bias = rand((5, 3, 8), seed=6), rand((8, 4), seed=7), rand((4,), seed=8)
    out = run_fused("fused_linear", [a, b, bias], dynamic={0: (0, 1), 1: (0,)})
    assert_close(out, f64(a) @ f64(b) + f64(bias), "f32")


def ref_rope(x, cos, sin):
    half = x.shape[-1] // 2
    rot = np.concatenate([-x[..., half:], x[..., :half]], -1)
    return x * cos + rot * sin


@pytest.mark.parametrize("dt,dtype", DTYPES)
@pytest.mark.parametrize("xshape", [(1, 2, 4, 8), (3, 2), (2, 5, 6)])
def test_rope(dt, dtype, xshape):
    x = rand(xshape, dtype, 9)
    s, d = xshape[-2:]
    angles = np.arange(s)[:, None] * (0.1 + np.arange(d)[None, :])
    cos, sin = np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)
    assert_close(run_fused("rope", [x, cos, sin]), ref_rope(f64(x), f64(cos), f64(sin)), dt)


def test_rope_dynamic():
    x = rand((2, 3, 4, 8), seed=10)
    cos, sin = rand((4, 8), seed=11), rand((4, 8), seed=12)
    out = run_fused("rope", [x, cos, sin], dynamic={0: (0, 1, 2, 3), 1: (0,), 2: (0,)})
    assert_close(out, ref_rope(f64(x), f64(cos), f64(sin)), "f32")


@pytest.mark.parametrize("dt,dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_softmax_backward(dt, dtype, shape):
    y = ref_softmax(f64(rand(shape, np.float64, 13))).astype(dtype)
    g = rand(shape, dtype, 14)
    assert_close(run_fused("softmax_last_dim_backward", [y, g]), ref_softmax_bwd(f64(y), f64(g)), dt)


@pytest.mark.parametrize("dt,dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("op,ref", [("layer_norm_last_dim_backward", ref_layer_bwd),
                                    ("rms_norm_last_dim_backward", ref_rms_bwd)])
def test_norm_backwards(dt, dtype, shape, op, ref):
    x, g = rand(shape, dtype, 15), rand(shape, dtype, 16)
    out = run_fused(op, [x, g], {"eps": 1e-5})
    assert_close(out, ref(f64(x), f64(g), 1e-5), dt, loose=True)


@pytest.mark.parametrize("op,fwd,bwd", [
    ("softmax_last_dim_backward", ref_softmax, None),
    ("layer_norm_last_dim_backward", lambda x: ref_layer(x, 1e-5), ref_layer_bwd),
    ("rms_norm_last_dim_backward", lambda x: ref_rms(x, 1e-5), ref_rms_bwd),
])
def test_backwards_match_finite_differences(op, fwd, bwd):
    """The backward ops are the gradients of the forwards: compare with
    central finite differences of the forward (in f64) of <g, fwd(x)>."""
    x = rand((2, 6), np.float64, 17)
    g = rand((2, 6), np.float64, 18)
    h = 1e-6
    fd = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[idx] = h
        fd[idx] = ((g * fwd(x + e)).sum() - (g * fwd(x - e)).sum()) / (2 * h)
    args = [fwd(x), g] if bwd is None else [x, g]
    params = {} if bwd is None else {"eps": 1e-5}
    out = run_fused(op, args, params)
    np.testing.assert_allclose(out, fd, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("exp", [0, 1, 2, 3, -2])
@pytest.mark.parametrize("shape", [(3, 4), (), (5,)])
def test_powi_backward(exp, shape):
    x = rand(shape, np.float32, 19) + np.float32(2.0)
    g = rand(shape, np.float32, 20)
    want = np.zeros(shape) if exp == 0 else exp * f64(x) ** (exp - 1) * f64(g)
    assert_close(run_fused("powi_backward", [x, g], {"exp": exp}), want, "f32")


def test_powi_backward_finite_difference():
    x = rand((6,), np.float64, 21) + 2.0
    g = rand((6,), np.float64, 22)
    h = 1e-6
    fd = g * ((x + h) ** 3 - (x - h) ** 3) / (2 * h)
    np.testing.assert_allclose(run_fused("powi_backward", [x, g], {"exp": 3}), fd, rtol=1e-6)


@pytest.mark.parametrize("dt,dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 4), (1,), (2, 1, 3)])
def test_inplace_affine(dt, dtype, shape):
    x = rand(shape, dtype, 23)
    assert_close(run_fused("inplace_affine", [x], {"mul": 1.5, "add": -0.25}), 1.5 * f64(x) - 0.25, dt)


def test_deterministic():
    x = rand((4, 33), np.float32, 24, scale=5)
    a = run_fused("layer_norm_last_dim", [x], {"eps": 1e-5})
    b = run_fused("layer_norm_last_dim", [x], {"eps": 1e-5})
    assert a.tobytes() == b.tobytes()
