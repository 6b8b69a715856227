"""The GPU schedules' tiled forms compute the op: what fuel-codegen-gpu makes
of flash_attn and fused_linear (loops mapped to blocks and threads, no GPU
operation in them) is run on the CPU, its loops in order, and compared with
the float64 numpy references. This checks the schedules' tiling, masking,
key ranges per query row and padding without a GPU; what only a GPU can
check (the mapping, barriers, the hardware's arithmetic) is left to
test_gpu_run.py. The row-wise schedule combines threads with gpu.all_reduce,
which has no CPU form: it is not run here."""

import subprocess

import numpy as np
import pytest

from numerics import BF16, assert_close, fused_text, rand
from test_codegen_attention import CASES as ATTN_CASES, SHAPES, case_id, inputs, reference

from fuel_mlir import runner


def gpu_form(fuel_opt, text):
    """The module after fuel-codegen-gpu: no fused op left."""
    result = subprocess.run([fuel_opt, "--fuel-codegen-gpu"], input=text, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "fuel.fused" not in result.stdout and "#gpu.thread" in result.stdout
    return result.stdout


def run_gpu_form(fuel_opt, name, args, params=None):
    text = gpu_form(fuel_opt, fused_text(name, args, params))
    return runner.compile(text, "f", codegen=False)(*args)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("case", ATTN_CASES, ids=case_id)
def test_attention(fuel_opt, shape, case):
    q, k, v = inputs(*shape)
    params = dict(softmax_scale=0.3, **case)
    out = run_gpu_form(fuel_opt, "flash_attn", [q, k, v], params)
    assert_close(out, reference(q, k, v, params), "f32", loose=True)


def test_attention_alibi_and_k_len(fuel_opt):
    q, k, v = inputs(2, 4, 2, 40, 72, 16, 16)
    slopes = (2.0 ** -np.arange(1, 5)).astype(np.float32)
    params = dict(softmax_scale=0.25, causal=True)
    out = run_gpu_form(fuel_opt, "flash_attn", [q, k, v, slopes, 50], params)
    assert_close(out, reference(q, k, v, params, alibi=slopes, k_len=50), "f32", loose=True)


DTYPES = [("f16", np.float16)] + ([("bf16", BF16)] if BF16 is not None else [])


@pytest.mark.parametrize("name,dtype", DTYPES, ids=[d[0] for d in DTYPES])
def test_attention_half(fuel_opt, name, dtype):
    q, k, v = inputs(1, 2, 2, 48, 80, 32, 32, dtype)
    params = dict(softmax_scale=0.2, causal=True)
    out = run_gpu_form(fuel_opt, "flash_attn", [q, k, v], params)
    assert_close(out, reference(q, k, v, params), name)


# (leading dims, M, K, N): block tiles of 64 and smaller, K off the step.
LINEAR_SHAPES = [((), 64, 64, 64), ((), 256, 96, 512), ((3,), 12, 100, 20), ((), 4, 7, 4)]


@pytest.mark.parametrize("shape", LINEAR_SHAPES, ids=lambda s: "x".join(map(str, s[0] + s[1:])))
@pytest.mark.parametrize("name,dtype", [("f32", np.float32)] + DTYPES, ids=lambda d: d if isinstance(d, str) else "")
def test_linear(fuel_opt, shape, name, dtype):
    lead, m, k, n = shape
    a, w, b = rand(lead + (m, k), dtype), rand((k, n), dtype, 1), rand((n,), dtype, 2)
    out = run_gpu_form(fuel_opt, "fused_linear", [a, w, b])
    f64 = lambda x: np.asarray(x, np.float64)  # noqa: E731
    assert_close(out, f64(a) @ f64(w) + f64(b), name, loose=True)
