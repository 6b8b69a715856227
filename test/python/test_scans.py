"""The Mamba scans against sequential numpy scans."""

import numpy as np
import pytest

import references as ref
from numerics import assert_close, rand, run_fused


def f64(a):
    return np.asarray(a, dtype=np.float64)


@pytest.mark.parametrize("softplus", [False, True])
@pytest.mark.parametrize("shape", [(2, 6, 4, 3), (1, 1, 2, 5), (3, 9, 1, 1)])
def test_selective_scan(softplus, shape):
    B, L, D, N = shape
    u, delta = rand((B, L, D), np.float32, 1), rand((B, L, D), np.float32, 2, scale=0.5)
    if not softplus:
        delta = np.abs(delta)
    a = -np.abs(rand((D, N), np.float32, 3))
    b, c = rand((B, L, N), np.float32, 4), rand((B, L, N), np.float32, 5)
    y, state = run_fused("selective_scan", [u, delta, a, b, c], {"delta_softplus": softplus})
    want_y, want_state = ref.selective_scan(*(f64(t) for t in (u, delta, a, b, c)), softplus)
    assert_close(y, want_y, "f32", loose=True)
    assert_close(state, want_state, "f32", loose=True)


def test_selective_scan_dynamic_length_f16():
    u, delta = rand((1, 7, 4), np.float16, 6), np.abs(rand((1, 7, 4), np.float16, 7, scale=0.3))
    a = -np.abs(rand((4, 2), np.float16, 8))
    b, c = rand((1, 7, 2), np.float16, 9), rand((1, 7, 2), np.float16, 10)
    y, state = run_fused("selective_scan", [u, delta, a, b, c], dynamic={0: (1,), 1: (1,), 3: (1,), 4: (1,)})
    want_y, want_state = ref.selective_scan(*(f64(t) for t in (u, delta, a, b, c)), False)
    assert_close(y, want_y, "f16")
    assert_close(state, want_state, "f16")


@pytest.mark.parametrize("chunk", [1, 2, 4])
@pytest.mark.parametrize("shape", [(2, 4, 3, 2, 5), (1, 8, 1, 4, 1)])
def test_ssd_chunk_scan(chunk, shape):
    B, L, H, P, N = shape
    if L % chunk:
        pytest.skip("chunk_size must divide L")
    x, dt = rand((B, L, H, P), np.float32, 11), np.abs(rand((B, L, H), np.float32, 12, scale=0.5))
    a = -np.abs(rand((H,), np.float32, 13))
    b, c = rand((B, L, H, N), np.float32, 14), rand((B, L, H, N), np.float32, 15)
    y = run_fused("ssd_chunk_scan", [x, dt, a, b, c], {"chunk_size": chunk})
    assert_close(y, ref.ssd_scan(*(f64(t) for t in (x, dt, a, b, c))), "f32", loose=True)
