"""The convolution schedule of causal_conv1d (one scf.forall iteration per
channel of each batch, time in 16-lane vectors, the K shifted inputs
multiplied and added per vector, SiLU in vectors; a length that is not a
multiple of 16 ends with one masked vector) against the numpy reference
(references.causal_conv1d, in float64): kernels of 1 to 5, lengths below,
at and past a vector, with and without SiLU, f32/f16/bf16, two threads; and
the compiled code's structure (no scalar loop is left)."""

import numpy as np
import pytest

from fuel_mlir import passmanager, runner
from fuel_mlir import ir
import references as ref
from numerics import BF16, assert_close, fused_text, rand

DTYPES = [("f32", np.float32), ("f16", np.float16)]
if BF16 is not None:
    DTYPES.append(("bf16", BF16))


def make(b, c, s, k, dtype, seed=0):
    x = rand((b, c, s + k - 1), dtype, seed)
    w = rand((c, 1, k), dtype, seed + 1, scale=0.5)
    bias = rand((c,), dtype, seed + 2)
    return x, w, bias


def reference(x, w, bias, silu):
    f64 = lambda a: np.asarray(a, dtype=np.float64)  # noqa: E731
    return ref.causal_conv1d(f64(x), f64(w), f64(bias), silu)


# (batches, channels, length, kernel)
SHAPES = [(1, 4, 64, 4), (2, 3, 37, 4), (1, 2, 16, 1), (1, 5, 5, 3), (2, 8, 100, 5)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("silu", [False, True])
@pytest.mark.parametrize("dname,dtype", DTYPES, ids=[d[0] for d in DTYPES])
def test_scheduled(shape, silu, dname, dtype):
    x, w, bias = make(*shape, dtype)
    text = fused_text("causal_conv1d", [x, w, bias], {"use_silu": silu})
    got = runner.compile(text, "f")(x, w, bias)
    assert_close(got, reference(x, w, bias, silu), dname)


def test_threads_agree():
    x, w, bias = make(2, 16, 300, 4, np.float32, seed=3)
    text = fused_text("causal_conv1d", [x, w, bias], {"use_silu": True})
    one = runner.compile(text, "f")(x, w, bias)
    two = runner.compile(text, "f", threads=2)(x, w, bias)
    assert np.array_equal(one, two)
    assert_close(two, reference(x, w, bias, True), "f32")


def test_scheduled_not_decomposed():
    x, w, bias = make(1, 4, 40, 4, np.float32)
    text = fused_text("causal_conv1d", [x, w, bias], {"use_silu": True})
    with ir.Context() as ctx:
        module = ir.Module.parse(text)
        passmanager.PassManager.parse("builtin.module(fuel-codegen-cpu)").run(module.operation)
        out = str(module)
    assert "fuel.fused" not in out and "linalg.generic" not in out
    assert "math.fma" in out and "vector<16xf32>" in out


# Batch and length dynamic: one compiled function for every batch and
# sequence length, lengths below, at and past whole vectors.
@pytest.mark.parametrize("silu", [False, True])
def test_dynamic_batch_and_length(silu):
    x, w, bias = make(2, 6, 40, 4, np.float32)
    text = fused_text("causal_conv1d", [x, w, bias], {"use_silu": silu},
                      dynamic={0: (0, 2)})
    assert "tensor<?x6x?x" in text
    f = runner.compile(text, "f")
    for b, s in [(2, 40), (1, 5), (3, 32), (1, 17)]:
        xs, _, _ = make(b, 6, s, 4, np.float32, seed=b + s)
        got = f(xs, w, bias)
        assert got.shape == (b, 6, s)
        assert_close(got, reference(xs, w, bias, silu), "f32")
