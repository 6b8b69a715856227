"""qmatmul against gguf's dequantizers (the reference llama.cpp ships),
on random GGML block streams."""

import numpy as np
import pytest

from numerics import assert_close, rand, run_fused

gguf_quants = pytest.importorskip("gguf.quants", reason="the gguf package is the reference")
from gguf import GGMLQuantizationType as Q  # noqa: E402

# type: (values per block, bytes per block, offsets of its f16 fields)
GEOMETRY = {
    "q4_0": (32, 18, [0]), "q4_1": (32, 20, [0, 2]), "q5_0": (32, 22, [0]),
    "q5_1": (32, 24, [0, 2]), "q8_0": (32, 34, [0]), "q8_1": (32, 36, [0, 2]),
    "q2_k": (256, 84, [80, 82]), "q3_k": (256, 110, [108]), "q4_k": (256, 144, [0, 2]),
    "q5_k": (256, 176, [0, 2]), "q6_k": (256, 210, [208]),
}
GGUF_TYPES = {"q4_0": Q.Q4_0, "q4_1": Q.Q4_1, "q5_0": Q.Q5_0, "q5_1": Q.Q5_1, "q8_0": Q.Q8_0,
              "q2_k": Q.Q2_K, "q3_k": Q.Q3_K, "q4_k": Q.Q4_K, "q5_k": Q.Q5_K, "q6_k": Q.Q6_K}


def random_blocks(qtype, n, k, seed):
    """Random bytes for N rows of K values, with sane f16 scale fields."""
    qk, nbytes, halves = GEOMETRY[qtype]
    rng = np.random.default_rng(seed)
    blocks = rng.integers(0, 256, (n, k // qk, nbytes), dtype=np.uint8)
    for off in halves:
        h = rng.uniform(0.01, 0.1, (n, k // qk)).astype(np.float16)
        blocks[:, :, off:off + 2] = h.view(np.uint8).reshape(n, k // qk, 2)
    return blocks.reshape(n, -1)


def as_words(rows):
    stream = rows.reshape(-1)
    pad = (-stream.size) % 4
    stream = np.concatenate([stream, np.zeros(pad, np.uint8)])
    return stream.view("<u4")


def dequant(qtype, rows, k):
    if qtype == "q8_1":
        # f16 d, f16 s, 32 int8 values: value = d * q (s unused).
        blocks = rows.reshape(rows.shape[0], -1, 36)
        d = blocks[..., 0:2].copy().view(np.float16).astype(np.float64)
        q = blocks[..., 4:].view(np.int8).astype(np.float64)
        return (d * q).reshape(rows.shape[0], k)
    return gguf_quants.dequantize(rows, GGUF_TYPES[qtype]).astype(np.float64)


@pytest.mark.parametrize("qtype", sorted(GEOMETRY))
@pytest.mark.parametrize("mkn", [(3, 1, 5), (2, 2, 3)], ids=["one-block", "two-blocks"])
def test_qmatmul(qtype, mkn):
    m, blocks_per_row, n = mkn
    qk = GEOMETRY[qtype][0]
    k = qk * blocks_per_row
    rows = random_blocks(qtype, n, k, seed=sum(qtype.encode()))
    a = rand((m, k), np.float32, 1)
    out = run_fused("qmatmul", [a, as_words(rows)], {"quant_type": qtype, "k": k, "n": n})
    want = a.astype(np.float64) @ dequant(qtype, rows, k).T
    assert_close(out, want, "f32", loose=True)


def test_qmatmul_batched_f16():
    rows = random_blocks("q4_0", 4, 64, seed=7)
    a = rand((2, 3, 64), np.float16, 2)
    out = run_fused("qmatmul", [a, as_words(rows)], {"quant_type": "q4_0", "k": 64, "n": 4})
    assert_close(out, a.astype(np.float64) @ dequant("q4_0", rows, 64).T, "f16")
