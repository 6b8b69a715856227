"""The quantized schedule (qmatmul with GGML's blocks of 32: Q8_0, Q8_1,
Q4_0, Q4_1, Q5_0 and Q5_1; pairs of blocks read as words and dequantized in
registers, fuel-codegen-cpu) against gguf's dequantizers (the reference
llama.cpp ships) and a float64 product: one row (M = 1, the decode case)
and tiles of rows, several tiles of W, batch dims, the register files it
sizes its vectors to, f32/f16/bf16 activations, scales of every sign and
extreme quants; and the qmatmuls it leaves to the decomposition (the
K-quants, K not a multiple of 64)."""

import numpy as np
import pytest

from fuel_mlir import runner
import references as ref
from numerics import BF16, assert_close, fused_text, rand

pytest.importorskip("gguf.quants", reason="the gguf package is the reference")
from test_qmatmul import as_words, dequant, random_blocks  # noqa: E402


def run(a, rows, qtype, k, n, **options):
    text = fused_text("qmatmul", [a, as_words(rows)], {"quant_type": qtype, "k": k, "n": n})
    return runner.compile(text, "f", **options)(a, as_words(rows))


def reference(a, rows, qtype, k):
    return a.astype(np.float64) @ dequant(qtype, rows, k).T


def assert_dot_close(got, a, rows, qtype, k):
    """Within f32's error bound for dot products of length K: a few ulps of
    sum_k |a[m, k] w[n, k]| per element (an element's own size says nothing
    where the products cancel; K-quant weights reach 10^2)."""
    w = dequant(qtype, rows, k)
    a64 = a.astype(np.float64).reshape(-1, k)
    want = (a64 @ w.T).reshape(got.shape)
    bound = (np.abs(a64) @ np.abs(w).T).reshape(got.shape)
    err = np.abs(np.asarray(got, np.float64) - want)
    assert np.all(err <= 1e-6 * bound + 1e-6), \
        f"max error {err.max():.3g}, worst against the bound {(err / (bound + 1e-30)).max():.3g}"


# (A's shape, N): M = 1 (tiles of 16, 8 or 4 rows of W) and 4, M = 6
# (tiles of one row), N not a multiple of 4, batch dims, K of one pair of
# blocks and of several.
SHAPES = [((1, 64), 4), ((1, 256), 12), ((1, 128), 32), ((1, 64), 24),
          ((4, 128), 8), ((8, 192), 16), ((6, 64), 5), ((2, 4, 128), 4),
          ((3, 1, 64), 3)]


SCHEDULED = ["q8_0", "q8_1", "q4_0", "q4_1", "q5_0", "q5_1"]


@pytest.mark.parametrize("qtype", SCHEDULED)
@pytest.mark.parametrize("a_shape,n", SHAPES, ids=lambda v: str(v))
def test_scheduled(qtype, a_shape, n):
    k = a_shape[-1]
    rows = random_blocks(qtype, n, k, seed=n + k)
    a = rand(a_shape, np.float32, 1)
    assert_close(run(a, rows, qtype, k, n), reference(a, rows, qtype, k), "f32", loose=True)


@pytest.mark.parametrize("qtype", SCHEDULED)
def test_extremes(qtype):
    # Every quant at its extremes (int8 -128 and 127; nibbles 0 and 15;
    # fifth bits all set in one block, clear in the next) and negative,
    # tiny and large f16 scales (and minimums).
    n, k = 4, 128
    rows = random_blocks(qtype, n, k, seed=3)
    blocks = rows.reshape(n, k // 32, -1)
    nbytes = blocks.shape[-1]
    if qtype.startswith("q8"):
        start = nbytes - 32
        blocks[..., start:] = np.where(np.arange(32) % 2 == 0, 0x80, 0x7F).astype(np.uint8)
    else:
        start = nbytes - 16
        blocks[..., start:] = np.where(np.arange(16) % 2 == 0, 0xF0, 0x0F).astype(np.uint8)
        if qtype.startswith("q5"):
            high = start - 4
            blocks[:, 0::2, high:start] = 0xFF
            blocks[:, 1::2, high:start] = 0
    scales = np.array([-0.5, 6e-8, 1000.0, -3.25], np.float16)
    blocks[..., 0:2] = np.repeat(scales.view(np.uint8).reshape(1, 4, 2), n, 0)
    if qtype in ("q4_1", "q5_1"):
        blocks[..., 2:4] = np.repeat(scales[::-1].copy().view(np.uint8).reshape(1, 4, 2), n, 0)
    rows = blocks.reshape(n, -1)
    for a_rows in (1, 4):
        a = rand((a_rows, k), np.float32, 2)
        assert_close(run(a, rows, qtype, k, n), reference(a, rows, qtype, k), "f32", loose=True)


# Register files (count, bits) the schedule sizes its vectors and tiles to:
# AVX-512's (16 lanes), AVX2's (8), SSE's (4) and a 64-bit one (2 lanes, 32
# vectors a step); each changes the order the weights decode in, and so
# the packing of A that matches it. M = 1 and M = 8 (tiles of 8, 4, 2 or 1
# rows of A), N odd (tiles of one row of W).
REGISTER_FILES = [(32, 512), (16, 256), (8, 128), (4, 64)]


@pytest.mark.parametrize("qtype", SCHEDULED)
@pytest.mark.parametrize("registers", REGISTER_FILES, ids=lambda v: f"{v[0]}x{v[1]}")
@pytest.mark.parametrize("a_shape,n", [((1, 192), 16), ((8, 128), 8), ((8, 64), 3),
                                       ((6, 128), 4)], ids=lambda v: str(v))
def test_register_files(qtype, registers, a_shape, n):
    k = a_shape[-1]
    rows = random_blocks(qtype, n, k, seed=n * k)
    a = rand(a_shape, np.float32, 7)
    got = run(a, rows, qtype, k, n, vector_registers=registers)
    assert_close(got, reference(a, rows, qtype, k), "f32", loose=True)


@pytest.mark.parametrize("qtype", ["q8_0", "q4_0"])
@pytest.mark.parametrize("registers", [(32, 512), (16, 256)], ids=lambda v: f"{v[0]}x{v[1]}")
def test_register_files_f16(qtype, registers):
    # The packing of A also widens it to f32.
    rows = random_blocks(qtype, 8, 128, seed=13)
    a = rand((8, 128), np.float16, 8)
    out = run(a, rows, qtype, 128, 8, vector_registers=registers)
    assert out.dtype == np.float16
    assert_close(out, reference(a, rows, qtype, 128), "f16")


# Q4_K and Q5_K: super-blocks of 256 (four chunks of 64 per step, each two
# sub-blocks with 6-bit scales and minimums, both halves of
# get_scale_min_k4's packing; Q5_K's fifth bits); Q2_K (four sub-blocks of
# 16 per chunk, 4-bit scales and minimums, 2-bit quants), K of one
# super-block and of several.
Q4_K_SHAPES = [((1, 256), 16), ((1, 512), 8), ((8, 256), 8), ((6, 256), 3), ((2, 3, 256), 4)]


@pytest.mark.parametrize("qtype", ["q2_k", "q4_k", "q5_k"])
@pytest.mark.parametrize("registers", REGISTER_FILES, ids=lambda v: f"{v[0]}x{v[1]}")
@pytest.mark.parametrize("a_shape,n", Q4_K_SHAPES, ids=lambda v: str(v))
def test_k_quants(qtype, registers, a_shape, n):
    k = a_shape[-1]
    rows = random_blocks(qtype, n, k, seed=n + k)
    a = rand(a_shape, np.float32, 3)
    got = run(a, rows, qtype, k, n, vector_registers=registers)
    assert_dot_close(got, a, rows, qtype, k)


# Q3_K and Q6_K: steps of two super-blocks (eight chunks, each four
# sub-blocks of 16 with signed scales; Q6_K's top two bits of every quant
# from qh, Q3_K's third bit from hmask), so K is a multiple of 512; the
# second super-block of a step starts two bytes into a word.
Q6_K_SHAPES = [((1, 512), 16), ((1, 1024), 8), ((8, 512), 8), ((6, 512), 3), ((2, 3, 512), 4)]


@pytest.mark.parametrize("qtype", ["q3_k", "q6_k"])
@pytest.mark.parametrize("registers", REGISTER_FILES, ids=lambda v: f"{v[0]}x{v[1]}")
@pytest.mark.parametrize("a_shape,n", Q6_K_SHAPES, ids=lambda v: str(v))
def test_super_block_pairs(qtype, registers, a_shape, n):
    k = a_shape[-1]
    rows = random_blocks(qtype, n, k, seed=n + k)
    a = rand(a_shape, np.float32, 3)
    got = run(a, rows, qtype, k, n, vector_registers=registers)
    assert_dot_close(got, a, rows, qtype, k)


# Prefill: rows of A from the panels' fewest (9 for the K-quants, 17 for
# the blocks of 32 with nibbles, 32 for Q8_0 and Q8_1; padded to a multiple
# of the register tile's rows) run on panels: each scf.forall iteration
# dequantizes its rows of W once, a block of the reduction at a time,
# transposed into a panel whose lanes are rows of W, and runs every
# register tile of its rows of A over it. Every type, with the register
# files' tiles and panels (AVX-512: 8 x 32, panels of 128 weights; AVX2:
# 4 x 16, panels of 256; 64-bit: 1 x 4), a step of Q3_K and Q6_K split into
# several panels, batch dims, several iterations over rows of W.
PANEL_TYPES = SCHEDULED + ["q2_k", "q3_k", "q4_k", "q5_k", "q6_k"]


@pytest.mark.parametrize("qtype", PANEL_TYPES)
@pytest.mark.parametrize("registers", [(32, 512), (16, 256), (4, 64)],
                         ids=lambda v: f"{v[0]}x{v[1]}")
@pytest.mark.parametrize("a_shape,n", [((32, 512), 64), ((2, 24, 1024), 32)],
                         ids=lambda v: str(v))
def test_panels(qtype, registers, a_shape, n):
    k = a_shape[-1]
    rows = random_blocks(qtype, n, k, seed=n + k)
    a = rand(a_shape, np.float32, 9)
    got = run(a, rows, qtype, k, n, vector_registers=registers)
    assert_dot_close(got, a, rows, qtype, k)


# Blocks of 128 rows of A (M = 384: three), K of three chunks (panels of
# one), Q6_K's 16 rows, f16 and bf16 activations and results (the sums in
# f32, narrowed once), two threads; and what stays on the tiles of rows:
# N that is not a multiple of the tile's rows of W, 16 rows of Q5_1.
@pytest.mark.parametrize("qtype,a_shape,n,dtype", [
    ("q4_k", (384, 256), 32, np.float32),
    ("q8_0", (32, 192), 16, np.float32),
    ("q6_k", (16, 512), 16, np.float32),
    ("q6_k", (32, 512), 16, np.float16),
    ("q5_1", (16, 320), 48, np.float32),
    ("q4_0", (32, 256), 24, np.float32),
] + ([("q4_1", (32, 256), 16, BF16)] if BF16 is not None else []),
    ids=lambda v: str(v) if not isinstance(v, type) else v.__name__)
def test_panel_shapes(qtype, a_shape, n, dtype):
    k = a_shape[-1]
    rows = random_blocks(qtype, n, k, seed=k)
    a = rand(a_shape, dtype, 4)
    got = run(a, rows, qtype, k, n)
    assert got.dtype == dtype
    if dtype == np.float32:
        assert_dot_close(got, a, rows, qtype, k)
    else:
        assert_close(got, reference(a, rows, qtype, k), "f16" if dtype == np.float16 else "bf16")
    assert np.array_equal(got, run(a, rows, qtype, k, n, threads=2))


# Dynamic rows: a branch on the row count runs those short of the panels'
# fewest (9, 17 or 32, above) on the tiles of rows and the rest on panels,
# in blocks of 128 rows whose last one's register tiles stop at its rows
# (padded with zero rows to a multiple of the tile's). Each side of every
# bound (8 and 9, 16 and 17, 31 and 32), 130 (a second block of 2 rows),
# every register file; with a dim of 1 before the rows, f16 (the K-quants)
# and two threads (the same bits).
@pytest.mark.parametrize("qtype", PANEL_TYPES)
@pytest.mark.parametrize("registers", [(32, 512), (16, 256), (4, 64)],
                         ids=lambda v: f"{v[0]}x{v[1]}")
def test_dynamic_rows_on_panels(qtype, registers):
    k, n = 256, 64
    rows = random_blocks(qtype, n, k, seed=21)
    dtype = np.float16 if qtype.endswith("_k") and registers[0] == 16 else np.float32
    text = fused_text("qmatmul", [rand((1, 40, k), dtype, 1), as_words(rows)],
                      {"quant_type": qtype, "k": k, "n": n}, dynamic={0: (1,)})
    f = runner.compile(text, "f", vector_registers=registers)
    f2 = (runner.compile(text, "f", vector_registers=registers, threads=2)
          if registers[0] == 16 else None)
    for m in (8, 9, 16, 17, 31, 32, 130):
        a = rand((1, m, k), dtype, m)
        got = f(a, as_words(rows))
        assert got.shape == (1, m, n) and got.dtype == dtype
        if dtype == np.float32:
            assert_dot_close(got, a, rows, qtype, k)
        else:
            assert_close(got, reference(a, rows, qtype, k), "f16")
        if f2 is not None:
            assert np.array_equal(got, f2(a, as_words(rows)))


# Static rows that are not whole tiles: padded with zero rows to whole
# tiles and sliced back (3 rows a tile of 4, 5 a tile of 8; 13, 30 and 130
# rows on panels where they reach the panels' fewest, 9 for the K-quants,
# 17 for Q4_1 and Q5_0, 32 for Q8_0, as 16, 32 and 132 rows with AVX2's
# register tiles of 4 rows; else on tiles of 8, 13 rows as 16).
@pytest.mark.parametrize("qtype", ["q8_0", "q4_1", "q5_0", "q4_k", "q6_k"])
@pytest.mark.parametrize("m", [3, 5, 13, 30, 130])
def test_static_rows_padded(qtype, m):
    k, n = 256, 64
    rows = random_blocks(qtype, n, k, seed=m)
    a = rand((m, k), np.float32, m)
    got = run(a, rows, qtype, k, n, vector_registers=(16, 256))
    assert got.shape == (m, n)
    assert_dot_close(got, a, rows, qtype, k)


def test_static_rows_padded_batch():
    # [3, 5, K]: 15 rows as one dim, padded to two tiles of 8, the result
    # sliced and viewed back as [3, 5, N].
    k, n = 256, 64
    rows = random_blocks("q4_0", n, k, seed=15)
    a = rand((3, 5, k), np.float32, 15)
    got = run(a, rows, "q4_0", k, n, vector_registers=(16, 256))
    assert got.shape == (3, 5, n)
    assert_dot_close(got, a, rows, "q4_0", k)


def assert_identity_exact(qtype, rows, k, n, atol=0.0):
    """With A the identity, each output is a single dequantized weight (to
    f32's rounding), under every register file."""
    for registers in REGISTER_FILES:
        got = run(np.eye(k, dtype=np.float32), rows, qtype, k, n, vector_registers=registers)
        np.testing.assert_allclose(got, dequant(qtype, rows, k).T, rtol=1e-6, atol=atol)


def test_q3_k_extremes():
    # hmask bits all set and all clear, quants 3 and 0, scale bytes all
    # ones and all zeros (6-bit scales 63 and 0, less 32), a negative d;
    # with A the identity, each output is one weight.
    n, k = 4, 512
    rows = random_blocks("q3_k", n, k, seed=7)
    blocks = rows.reshape(n, k // 256, 110)
    blocks[:, 0, :96] = 0xFF
    blocks[:, 1, :96] = 0
    blocks[:, 0, 96:108] = 0xFF
    blocks[:, 1, 96:108] = 0
    blocks[:, 1, 96] = 0x1F
    blocks[..., 108:110] = np.array([-0.5], np.float16).view(np.uint8)
    assert_identity_exact("q3_k", blocks.reshape(n, -1), k, n)


def test_q6_k_extremes():
    # Quants 0 and 63 (every low nibble and top bit pair set or clear),
    # scales -128 and 127, a negative d; with A the identity, each output is
    # a single dequantized weight, d * sc * (q - 32), to f32's rounding.
    n, k = 4, 512
    rows = random_blocks("q6_k", n, k, seed=6)
    blocks = rows.reshape(n, k // 256, 210)
    blocks[:, 0, :192] = 0xFF
    blocks[:, 1, :192] = 0
    blocks[:, :, 192:208] = np.tile(np.array([-128, 127], np.int8).view(np.uint8), 8)
    blocks[:, 1, 200:208] = np.arange(8, dtype=np.int8).view(np.uint8)
    blocks[..., 208:210] = np.array([-0.5], np.float16).view(np.uint8)
    assert_identity_exact("q6_k", blocks.reshape(n, -1), k, n)


@pytest.mark.parametrize("qtype", ["q2_k", "q3_k", "q6_k"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
def test_k_quant_dynamic_rows(qtype, dtype):
    k, n = 512, 8
    rows = random_blocks(qtype, n, k, seed=12)
    text = fused_text("qmatmul", [rand((3, k), dtype, 1), as_words(rows)],
                      {"quant_type": qtype, "k": k, "n": n}, dynamic={0: (0,)})
    f = runner.compile(text, "f")
    for m in (1, 3, 5, 13):
        a = rand((m, k), dtype, m)
        out = f(a, as_words(rows))
        assert out.dtype == dtype
        assert_close(out, reference(a, rows, qtype, k), "f16" if dtype == np.float16 else "f32",
                     loose=True)


def test_q2_k_extremes():
    # Scale and minimum nibbles 15 and 0 in turn, quants all 3 and all 0,
    # negative d and dmin; with A the identity, each output is one weight.
    n, k = 4, 512
    rows = random_blocks("q2_k", n, k, seed=8)
    blocks = rows.reshape(n, k // 256, 84)
    blocks[:, 0, :16] = np.tile(np.array([0xF0, 0x0F], np.uint8), 8)
    blocks[:, 1, :16] = np.arange(16, dtype=np.uint8) * 17
    blocks[:, 0, 16:80] = 0xFF
    blocks[:, 1, 16:48] = 0
    blocks[..., 80:82] = np.array([-0.25], np.float16).view(np.uint8)
    blocks[..., 82:84] = np.array([-0.125], np.float16).view(np.uint8)
    rows = blocks.reshape(n, -1)
    assert_identity_exact("q2_k", rows, k, n, atol=1e-7)
    a = rand((1, k), np.float32, 9)
    assert_dot_close(run(a, rows, "q2_k", k, n), a, rows, "q2_k", k)


def test_q4_k_extremes():
    # Scale bytes all ones (every 6-bit scale and minimum 63, through both
    # halves of the packing) and all zeros; nibbles 0 and 15; negative d and
    # dmin.
    n, k = 4, 512
    rows = random_blocks("q4_k", n, k, seed=4)
    blocks = rows.reshape(n, k // 256, 144)
    blocks[:, 0, 4:16] = 0xFF
    blocks[:, 1, 4:16] = 0
    blocks[:, 1, 4] = 0x3F
    blocks[..., 16:] = np.where(np.arange(128) % 2 == 0, 0xF0, 0x0F).astype(np.uint8)
    blocks[..., 0:2] = np.array([-0.25], np.float16).view(np.uint8)
    blocks[..., 2:4] = np.array([-0.125], np.float16).view(np.uint8)
    rows = blocks.reshape(n, -1)
    for a_rows in (1, 8):
        a = rand((a_rows, k), np.float32, 5)
        assert_close(run(a, rows, "q4_k", k, n), reference(a, rows, "q4_k", k), "f32", loose=True)


DTYPES = [("f16", np.float16)] + ([("bf16", BF16)] if BF16 is not None else [])


@pytest.mark.parametrize("dname,dtype", DTYPES, ids=[d[0] for d in DTYPES])
def test_low_precision(dname, dtype):
    rows = random_blocks("q8_0", 8, 128, seed=5)
    a = rand((4, 128), dtype, 3)
    out = run(a, rows, "q8_0", 128, 8)
    assert out.dtype == dtype
    assert_close(out, reference(a, rows, "q8_0", 128), dname)


def test_threads():
    rows = random_blocks("q4_0", 16, 256, seed=9)
    a = rand((1, 256), np.float32, 4)
    one = run(a, rows, "q4_0", 256, 16)
    two = run(a, rows, "q4_0", 256, 16, threads=2)
    assert np.array_equal(one, two)


@pytest.mark.parametrize("qtype,k", [("q6_k", 256), ("q3_k", 256), ("q8_0", 32), ("q5_1", 96)])
def test_left_to_the_decomposition(qtype, k):
    rows = random_blocks(qtype, 4, k, seed=11)
    a = rand((2, k), np.float32, 5)
    assert_close(run(a, rows, qtype, k, 4), reference(a, rows, qtype, k), "f32", loose=True)


# awq_matmul (AutoAWQ's GEMM format): W[k, n] = (q - z[k / G]) * s[k / G],
# eight nibbles per word along N in the pack order; tiles of the columns of
# 16, 8, 4 or 2 words, one row of A or two.
AWQ_SHAPES = [((1, 128), 64, 64), ((4, 256), 128, 128), ((6, 128), 48, 64),
              ((2, 3, 128), 32, 128), ((1, 64), 16, 64)]


def awq_inputs(a_shape, n, group, dtype=np.float32, seed=0, scale_dtype=None):
    k = a_shape[-1]
    rng = np.random.default_rng(seed)
    q = rng.integers(0, 16, (k, n))
    z = rng.integers(0, 16, (k // group, n))
    s = (np.abs(rand((k // group, n), np.float32, seed + 1)) * 0.05).astype(scale_dtype or dtype)
    a = rand(a_shape, dtype, seed + 2)
    w = (q - np.repeat(z, group, 0)) * np.repeat(s.astype(np.float64), group, 0)
    return a, ref.awq_pack(q).view(np.int32), ref.awq_pack(z).view(np.int32), s, w


@pytest.mark.parametrize("a_shape,n,group", AWQ_SHAPES, ids=lambda v: str(v))
def test_awq(a_shape, n, group):
    a, qw, qz, s, w = awq_inputs(a_shape, n, group)
    text = fused_text("awq_matmul", [a, qw, qz, s], {"group_size": group})
    out = runner.compile(text, "f")(a, qw, qz, s)
    assert_close(out, a.astype(np.float64) @ w, "f32", loose=True)


@pytest.mark.parametrize("dname,dtype", DTYPES, ids=[d[0] for d in DTYPES])
def test_awq_low_precision(dname, dtype):
    a, qw, qz, s, w = awq_inputs((4, 128), 64, 64, dtype)
    text = fused_text("awq_matmul", [a, qw, qz, s], {"group_size": 64})
    out = runner.compile(text, "f")(a, qw, qz, s)
    assert out.dtype == dtype
    assert_close(out, a.astype(np.float64) @ w, dname)


# Each register file sizes the tile: the columns of 16, 8, 4 or 2 words (a
# vector of words per k) by the most rows of A up to 4 that divide them
# (with more than one, 4 rows of the weight a step); a block is as many tiles side by side as 16 KiB of partial
# sums hold and divide the tiles ([3, 384] x [384, 1024]: the row's 128
# words one block, over 3 groups; [1, 64] x [64, 8192]: 1024 words, two
# blocks or more; [1, 64] x [64, 11008]: 1376 words, 43 x 2^i tiles, blocks
# of 2, 43, 86 or 172; [2, 128] x [128, 192]: one block of 3, 6 or 12;
# [48, 384] x [384, 512]: 12 blocks of rows).
@pytest.mark.parametrize("registers", REGISTER_FILES, ids=lambda v: f"{v[0]}x{v[1]}")
@pytest.mark.parametrize("a_shape,n,group", [((1, 256), 128, 128), ((4, 128), 64, 64),
                                             ((3, 64), 16, 64), ((2, 128), 256, 64),
                                             ((3, 384), 1024, 128), ((1, 64), 8192, 64),
                                             ((1, 64), 11008, 64), ((2, 128), 192, 64),
                                             ((8, 256), 128, 128), ((6, 128), 64, 64),
                                             ((48, 384), 512, 128), ((12, 128), 32, 64)],
                         ids=lambda v: str(v))
def test_awq_register_files(registers, a_shape, n, group):
    a, qw, qz, s, w = awq_inputs(a_shape, n, group, seed=n)
    text = fused_text("awq_matmul", [a, qw, qz, s], {"group_size": group})
    out = runner.compile(text, "f", vector_registers=registers)(a, qw, qz, s)
    # f32 sums of K products: within a few ulp of the sum of their
    # magnitudes (outputs that cancel to near zero included).
    want = a.astype(np.float64) @ w
    scale = np.abs(a).astype(np.float64) @ np.abs(w)
    assert np.all(np.abs(out - want) <= 2e-6 * scale + 1e-6), np.max(np.abs(out - want) / scale)


# 128 rows of A or more (a multiple of the register tile's) run on panels:
# each iteration dequantizes a panel of its words once, (q - z) s per
# nibble position, and runs fused_linear's register tiles over it; each row
# of sums is put back in column order at the end. Register files (AVX-512:
# 8 x 32 tiles, panels of 32 steps of 128 columns; AVX2: 4 x 16, 64 of 64;
# 64-bit: 1 x 4), panels as long as the group or shorter, batch dims,
# blocks of 128 rows (M = 256: two), several panels of columns.
@pytest.mark.parametrize("registers", [(32, 512), (16, 256), (4, 64)],
                         ids=lambda v: f"{v[0]}x{v[1]}")
@pytest.mark.parametrize("a_shape,n,group", [((128, 256), 128, 128), ((2, 64, 512), 256, 64),
                                             ((256, 128), 128, 64), ((128, 384), 512, 128)],
                         ids=lambda v: str(v))
def test_awq_panels(registers, a_shape, n, group):
    a, qw, qz, s, w = awq_inputs(a_shape, n, group, seed=n + group)
    text = fused_text("awq_matmul", [a, qw, qz, s], {"group_size": group})
    out = runner.compile(text, "f", vector_registers=registers)(a, qw, qz, s)
    want = a.astype(np.float64).reshape(-1, a_shape[-1]) @ w
    scale = np.abs(a).astype(np.float64).reshape(-1, a_shape[-1]) @ np.abs(w)
    err = np.abs(out.reshape(want.shape) - want)
    assert np.all(err <= 2e-6 * scale + 1e-6), np.max(err / scale)


# Dynamic rows: from 128 rows on panels (blocks of 128, the last one's
# register tiles to its rows), fewer on the tiles of rows; two threads give
# the same bits.
@pytest.mark.parametrize("registers", [(32, 512), (16, 256), (4, 64)],
                         ids=lambda v: f"{v[0]}x{v[1]}")
def test_awq_dynamic_rows_on_panels(registers):
    a, qw, qz, s, w = awq_inputs((4, 128), 128, 64, seed=5)
    text = fused_text("awq_matmul", [a, qw, qz, s], {"group_size": 64}, dynamic={0: (0,)})
    f = runner.compile(text, "f", vector_registers=registers)
    f2 = runner.compile(text, "f", vector_registers=registers, threads=2)
    for m in (127, 128, 129, 262):
        x = rand((m, 128), np.float32, m)
        out = f(x, qw, qz, s)
        want = x.astype(np.float64) @ w
        err = np.abs(out - want)
        assert np.all(err <= 2e-6 * (np.abs(x).astype(np.float64) @ np.abs(w)) + 1e-6)
        assert np.array_equal(out, f2(x, qw, qz, s))


# Static rows that are not whole tiles, padded with zero rows: awq_matmul
# 3 and 6 rows (tiles of 4), 130 (panels: 132 rows, blocks of 128 and 4);
# nf4_matmul 5 and 13 (tiles of 8).
@pytest.mark.parametrize("m", [3, 6, 130])
def test_awq_static_rows_padded(m):
    a, qw, qz, s, w = awq_inputs((m, 128), 128, 64, seed=m)
    out = runner.compile(fused_text("awq_matmul", [a, qw, qz, s], {"group_size": 64}), "f",
                         vector_registers=(16, 256))(a, qw, qz, s)
    assert out.shape == (m, 128)
    want = a.astype(np.float64) @ w
    assert np.all(np.abs(out - want) <= 2e-6 * (np.abs(a).astype(np.float64) @ np.abs(w)) + 1e-6)


@pytest.mark.parametrize("m", [5, 13])
def test_nf4_static_rows_padded(m):
    a, packed, absmax, w = nf4_inputs((m, 128), 64, 64)
    out = runner.compile(fused_text("nf4_matmul", [a, packed, absmax], {"block_size": 64}),
                         "f", vector_registers=(16, 256))(a, packed, absmax)
    assert out.shape == (m, 64)
    assert_close(out, a.astype(np.float64) @ w.T, "f32", loose=True)


@pytest.mark.parametrize("dname,dtype", DTYPES, ids=[d[0] for d in DTYPES])
def test_awq_panels_low_precision(dname, dtype):
    # f16 or bf16 activations, scales and result: A widened per element,
    # the sums in f32, narrowed once; two threads give the same bits.
    a, qw, qz, s, w = awq_inputs((128, 256), 128, 64, dtype, seed=3)
    text = fused_text("awq_matmul", [a, qw, qz, s], {"group_size": 64})
    out = runner.compile(text, "f")(a, qw, qz, s)
    assert out.dtype == dtype
    assert_close(out, a.astype(np.float64) @ w, dname)
    assert np.array_equal(out, runner.compile(text, "f", threads=2)(a, qw, qz, s))


# Every nibble position, lane, quant and zero, exactly: with A the identity,
# each output is (q - z) s rounded once (the weights and zeros decode as
# 1 + q / 16 and 1 + z / 16, whose difference is exact, and the other
# groups add exact zeros). All 128 rows of the identity run on panels,
# its first 64 on tiles of 4 rows (4 rows of the weight a step).
@pytest.mark.parametrize("registers", REGISTER_FILES, ids=lambda v: f"{v[0]}x{v[1]}")
@pytest.mark.parametrize("m", [128, 64])
def test_awq_every_nibble_exact(registers, m):
    k, n, group = 128, 256, 64
    rng = np.random.default_rng(9)
    q = rng.permuted(np.arange(k * n).reshape(k, n) % 16, axis=1)
    z = rng.permuted(np.arange(2 * n).reshape(2, n) % 16, axis=1)
    s = rng.uniform(0.01, 2.0, (2, n)).astype(np.float32)
    want = ((q - np.repeat(z, group, 0)) * np.repeat(s.astype(np.float64), group, 0)).astype(np.float32)
    a = np.eye(k, dtype=np.float32)[:m]
    qw, qz = ref.awq_pack(q).view(np.int32), ref.awq_pack(z).view(np.int32)
    text = fused_text("awq_matmul", [a, qw, qz, s], {"group_size": group})
    out = runner.compile(text, "f", vector_registers=registers)(a, qw, qz, s)
    np.testing.assert_array_equal(out, want[:m])


# nf4_matmul (bitsandbytes): W[n, k] = NF4[code] * absmax[n, k / B], codes
# packed two per byte, the even element in the high nibble.
NF4_SHAPES = [((1, 64), 4, 64), ((4, 128), 8, 64), ((6, 96), 5, 32),
              ((2, 2, 256), 12, 128)]


def nf4_inputs(a_shape, n, block, dtype=np.float32, seed=0):
    k = a_shape[-1]
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 16, (n, k))
    absmax = (np.abs(rand((n, k // block), np.float32, seed + 1)) + 0.1)
    a = rand(a_shape, dtype, seed + 2)
    return a, ref.nf4_pack(codes).view(np.int8), absmax, ref.nf4_dequant(codes, absmax, block)


@pytest.mark.parametrize("a_shape,n,block", NF4_SHAPES, ids=lambda v: str(v))
def test_nf4(a_shape, n, block):
    a, packed, absmax, w = nf4_inputs(a_shape, n, block)
    text = fused_text("nf4_matmul", [a, packed, absmax], {"block_size": block})
    out = runner.compile(text, "f")(a, packed, absmax)
    assert_close(out, a.astype(np.float64) @ w.T, "f32", loose=True)


# Each register file sizes the code vectors (16 or 2 lanes: the code book
# looked up in 1 or 8 parts; 8 or 4 lanes: each byte of its values looked
# up as a table of 16 bytes, from one vector of 32 codes or two of 16) and
# the tiles (one row of A by up to 16 rows of W; up to 8 rows of A).
@pytest.mark.parametrize("registers", REGISTER_FILES, ids=lambda v: f"{v[0]}x{v[1]}")
@pytest.mark.parametrize("a_shape,n,block", [((1, 256), 32, 64), ((8, 128), 16, 32),
                                             ((16, 64), 4, 64), ((3, 96), 2, 96)],
                         ids=lambda v: str(v))
def test_nf4_register_files(registers, a_shape, n, block):
    a, packed, absmax, w = nf4_inputs(a_shape, n, block, seed=n)
    text = fused_text("nf4_matmul", [a, packed, absmax], {"block_size": block})
    out = runner.compile(text, "f", vector_registers=registers)(a, packed, absmax)
    assert_close(out, a.astype(np.float64) @ w.T, "f32", loose=True)


# Every code in every lane, exactly: with A the identity, C = W^T is the
# code book entries times the absmax of their blocks, each a single rounded
# product (the other terms add exact zeros).
@pytest.mark.parametrize("registers", REGISTER_FILES, ids=lambda v: f"{v[0]}x{v[1]}")
def test_nf4_every_code_exact(registers):
    k, n, block = 64, 16, 32
    codes = np.arange(n * k).reshape(n, k) % 16
    codes = np.random.default_rng(5).permuted(codes, axis=1)
    absmax = np.linspace(0.5, 2.0, n * (k // block), dtype=np.float32).reshape(n, k // block)
    packed = ref.nf4_pack(codes).view(np.int8)
    a = np.eye(k, dtype=np.float32)
    text = fused_text("nf4_matmul", [a, packed, absmax], {"block_size": block})
    out = runner.compile(text, "f", vector_registers=registers)(a, packed, absmax)
    book = ref.NF4.astype(np.float32)
    expected = (book[codes] * np.repeat(absmax, block, axis=1)).T
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("dname,dtype", DTYPES, ids=[d[0] for d in DTYPES])
def test_nf4_low_precision(dname, dtype):
    a, packed, absmax, w = nf4_inputs((4, 128), 8, 64, dtype)
    text = fused_text("nf4_matmul", [a, packed, absmax], {"block_size": 64})
    out = runner.compile(text, "f")(a, packed, absmax)
    assert out.dtype == dtype
    assert_close(out, a.astype(np.float64) @ w.T, dname)


# Dynamic rows (one dynamic leading dim of the activations): one compiled
# function for every row count. With no static dim before them, one row and
# 2 to 4 rows run apart, as static rows (1, 3, 4); more rows, or rows after
# a static dim (2 x 1 to 2 x 13), run in tiles of several rows, padded with
# zero rows at run time (5, 13: a partial tile, two).
@pytest.mark.parametrize("qtype", SCHEDULED)
@pytest.mark.parametrize("a_shape,dynamic", [((3, 128), (0,)), ((2, 3, 64), (1,))],
                         ids=lambda v: str(v))
def test_dynamic_rows(qtype, a_shape, dynamic):
    k, n = a_shape[-1], 8
    rows = random_blocks(qtype, n, k, seed=3)
    text = fused_text("qmatmul", [rand(a_shape, np.float32, 1), as_words(rows)],
                      {"quant_type": qtype, "k": k, "n": n}, dynamic={0: dynamic})
    f = runner.compile(text, "f")
    for m in (1, 3, 4, 5, 13):
        shape = tuple(m if i in dynamic else d for i, d in enumerate(a_shape))
        a = rand(shape, np.float32, m)
        assert_close(f(a, as_words(rows)), reference(a, rows, qtype, k), "f32", loose=True)


def test_awq_and_nf4_dynamic_rows():
    a, qw, qz, s, w = awq_inputs((4, 128), 64, 64)
    f = runner.compile(fused_text("awq_matmul", [a, qw, qz, s], {"group_size": 64},
                                  dynamic={0: (0,)}), "f")
    for m in (1, 3, 6, 13):
        x = rand((m, 128), np.float32, m)
        assert_close(f(x, qw, qz, s), x.astype(np.float64) @ w, "f32", loose=True)
    a, packed, absmax, w = nf4_inputs((4, 128), 8, 64)
    f = runner.compile(fused_text("nf4_matmul", [a, packed, absmax], {"block_size": 64},
                                  dynamic={0: (0,)}), "f")
    for m in (1, 2, 7, 13):
        x = rand((m, 128), np.float32, m)
        assert_close(f(x, packed, absmax), x.astype(np.float64) @ w.T, "f32", loose=True)
