"""Quantized matmuls against references that pack weights the way the
original libraries do (bitsandbytes NF4, AutoAWQ GEMM)."""

import numpy as np
import pytest

import references as ref
from numerics import assert_close, rand, run_fused


def f64(a):
    return np.asarray(a, dtype=np.float64)


@pytest.mark.parametrize("shape", [(4, 64, 8, 64), (2, 128, 16, 32), (1, 64, 3, 64)],
                         ids=["one-block", "four-blocks", "n3"])
@pytest.mark.parametrize("dtype,name", [(np.float32, "f32"), (np.float16, "f16")])
def test_nf4_matmul(shape, dtype, name):
    M, K, N, bs = shape
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 16, (N, K))
    absmax = rng.uniform(0.5, 2.0, (N, K // bs)).astype(np.float32)
    act = rand((M, K), dtype, 2)
    out = run_fused("nf4_matmul", [act, ref.nf4_pack(codes), absmax], {"block_size": bs})
    want = f64(act) @ ref.nf4_dequant(codes, absmax, bs).T
    assert_close(out, want, name, loose=True)


def test_nf4_matmul_batched():
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 16, (8, 128))
    absmax = rng.uniform(0.5, 2.0, (8, 2)).astype(np.float32)
    act = rand((2, 3, 128), np.float32, 4)
    out = run_fused("nf4_matmul", [act, ref.nf4_pack(codes), absmax])
    assert_close(out, f64(act) @ ref.nf4_dequant(codes, absmax, 64).T, "f32", loose=True)


@pytest.mark.parametrize("shape", [(3, 128, 16, 128), (2, 128, 8, 64), (1, 256, 24, 64)])
@pytest.mark.parametrize("dtype,name", [(np.float16, "f16"), (np.float32, "f32")])
def test_awq_matmul(shape, dtype, name):
    M, K, N, g = shape
    rng = np.random.default_rng(5)
    q = rng.integers(0, 16, (K, N))
    z = rng.integers(0, 16, (K // g, N))
    scales = rng.uniform(0.01, 0.05, (K // g, N)).astype(dtype)
    act = rand((M, K), dtype, 6)
    qweight = ref.awq_pack(q).view(np.int32)
    qzeros = ref.awq_pack(z).view(np.int32)
    out = run_fused("awq_matmul", [act, qweight, qzeros, scales], {"group_size": g})
    w = (q - np.repeat(z, g, axis=0)) * np.repeat(f64(scales), g, axis=0)
    assert_close(out, f64(act) @ w, name, loose=True)
