"""The GPU schedules' tiled forms compute the op: what fuel-codegen-gpu makes
of flash_attn and fused_linear (loops mapped to blocks and threads, no GPU
operation in them) is run on the CPU, its loops in order, and compared with
the float64 numpy references. This checks the schedules' tiling, masking,
key ranges per query row and padding without a GPU; what only a GPU can
check (the mapping, barriers, the hardware's arithmetic) is left to
test_gpu_run.py. The row-wise schedule combines threads with gpu.all_reduce,
which has no CPU form: it is not run here. The schedules built of block
loops (the row loss, the quantized matmuls: lib/Codegen/GpuBlockLoops.h)
are run with each block's threads made one thread that takes every
element (`serialized`): that checks their indexing and the decoding they
evaluate per element, not the reduction across threads."""

import re
import subprocess

import numpy as np
import pytest

from numerics import BF16, assert_close, fused_text, rand
import references as ref
from references import cross_entropy, reduce_max_backward
from test_all_ops import CASES as ALL_CASES, rope as rope_reference
from test_qmatmul import GEOMETRY, as_words, dequant, random_blocks
from test_codegen_quantized import awq_inputs, nf4_inputs
from test_codegen_scan import make, make_ssd, reference as scan_reference, ssd_reference
from test_codegen_conv import (FILTERS_MAJOR, SCHEDULED as CONV_SCHEDULED, STRIDED_GROUPED, TRANSPOSED,
                               reference as conv_reference, transposed_reference)
from test_codegen_causal_conv import (SHAPES as CAUSAL_SHAPES, make as make_causal,
                                      reference as causal_reference)
from test_codegen_paged_attn import (CASES as PAGED_CASES, make as make_paged,
                                     reference as paged_reference)
from test_codegen_attention import (BWD_CASES, BWD_SHAPES, CASES as ATTN_CASES, SHAPES, bwd_reference,
                                    case_id, inputs, reference)

from fuel_mlir import runner


def gpu_form(fuel_opt, text, options=""):
    """The module after fuel-codegen-gpu (with `options`): no fused op left."""
    flag = "--fuel-codegen-gpu" + (f"={options}" if options else "")
    result = subprocess.run([fuel_opt, flag], input=text, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "fuel.fused" not in result.stdout and "#gpu.thread" in result.stdout
    return result.stdout


WORKGROUP = " {memory_space = #gpu.address_space<workgroup>}"


def form_of(text):
    """Which GPU form `text` has: "split" (keys split over groups of lanes,
    whose dot products a clustered subgroup reduction sums:
    GpuSplitKeysAttention.cpp), "staged" (blocks in workgroup memory) or
    "caches" (neither)."""
    if "gpu.subgroup_reduce" in text:
        return "split"
    return "staged" if WORKGROUP in text else "caches"


def run_gpu_form(fuel_opt, name, args, params=None, staged=None, options=""):
    """The GPU form of `name` run on the CPU, its workgroup buffers in
    ordinary memory; with `staged` set, whether it must be staged (True),
    read through the caches (False) or, for "split", flash_attn's
    split-keys form. That form's lanes shuffle, which only a GPU (or its
    emulator) does: it runs on the NVIDIA emulator, forward and in
    reverse order."""
    text = gpu_form(fuel_opt, fused_text(name, args, params), options)
    if staged is not None:
        assert form_of(text) == {True: "staged", False: "caches"}.get(staged, staged)
    if staged == "split":
        return run_on_emulator(name, args, params)
    return runner.compile(text.replace(WORKGROUP, ""), "f", codegen=False)(*args)


def run_on_emulator(name, args, params=None):
    """`name` compiled for an H100 and run on the GPU emulator, each
    block's threads forward and in reverse order (the same result)."""
    fn = runner.compile(fused_text(name, list(args), params), "f", target="cuda-emulator")
    outs = []
    for order in ("forward", "reverse"):
        runner.emulator_order(order)
        try:
            outs.append(fn(*args))
        finally:
            runner.emulator_order("forward")
    np.testing.assert_array_equal(outs[0], outs[1])
    return outs[0]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("case", ATTN_CASES, ids=case_id)
def test_attention(fuel_opt, shape, case):
    q, k, v = inputs(*shape)
    params = dict(softmax_scale=0.3, **case)
    # Query blocks of 32 rows or more stage their key and value blocks in
    # workgroup memory (GpuStagedAttention.cpp): values 48 wide too, whose
    # rows' 12 chunks of 4 the 64 threads copy in 16 groups of 4 over the
    # 16 keys.
    out = run_gpu_form(fuel_opt, "flash_attn", [q, k, v], params, staged=True)
    assert_close(out, reference(q, k, v, params), "f32", loose=True)


# The staged form at shapes that pad: queries (100 rows: two blocks of 64),
# keys (100: the last block of 16 half past Sk), grouped heads, blocks of
# 32 rows (a key's 64 columns copied by 32 threads, two each), a head dim
# of 16 (a pass of 64 threads copies 4 keys), 40 queries (a block of 64).
STAGED_ATTN = [(1, 4, 2, 100, 100, 64, 32), (2, 2, 2, 32, 48, 64, 32),
               (1, 1, 1, 64, 24, 16, 64), (1, 2, 1, 40, 56, 32, 32)]
STAGED_ATTN_CASES = [dict(), dict(causal=True), dict(window_size_left=9, window_size_right=3),
                     dict(causal=True, softcap=2.0), dict(window_size_left=20)]


@pytest.mark.parametrize("shape", STAGED_ATTN, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("case", STAGED_ATTN_CASES, ids=case_id)
def test_attention_staged(fuel_opt, shape, case):
    q, k, v = inputs(*shape)
    params = dict(softmax_scale=0.3, **case)
    out = run_gpu_form(fuel_opt, "flash_attn", [q, k, v], params, staged=True)
    assert_close(out, reference(q, k, v, params), "f32", loose=True)


# Wider heads as fuel-to-nvvm stages them from sm_90 on
# (max-staged-head-dim=128): the forward and dv at 128, dq and dk at 64.
@pytest.mark.parametrize("case", STAGED_ATTN_CASES, ids=case_id)
def test_attention_wide_heads_staged(fuel_opt, case):
    q, k, v = inputs(1, 2, 1, 64, 40, 128, 128)
    params = dict(softmax_scale=0.1, **case)
    out = run_gpu_form(fuel_opt, "flash_attn", [q, k, v], params, staged=True,
                       options="max-staged-head-dim=128")
    assert_close(out, reference(q, k, v, params), "f32", loose=True)
    q, k, v = inputs(1, 2, 1, 64, 96, 64, 64)
    do = rand(q.shape[:3] + v.shape[3:], np.float32, 7)
    for which, want in zip("qk", bwd_reference(q, k, v, do, params)):
        got = run_gpu_form(fuel_opt, f"flash_attn_backward_{which}", [q, k, v, do], params, staged=True,
                           options="max-staged-head-dim=128")
        assert_close(got, want, "f32", loose=True)
    q, k, v = inputs(1, 2, 1, 64, 96, 128, 128)
    do = rand(q.shape[:3] + v.shape[3:], np.float32, 7)
    got = run_gpu_form(fuel_opt, "flash_attn_backward_v", [q, k, v, do], params, staged=True,
                       options="max-staged-head-dim=128")
    assert_close(got, bwd_reference(q, k, v, do, params)[2], "f32", loose=True)


def test_attention_staged_alibi_and_k_len(fuel_opt):
    q, k, v = inputs(2, 4, 2, 64, 72, 32, 16)
    slopes = (2.0 ** -np.arange(1, 9)).reshape(2, 4).astype(np.float32)
    params = dict(softmax_scale=0.25, causal=True)
    out = run_gpu_form(fuel_opt, "flash_attn", [q, k, v, slopes, 50], params, staged=True)
    assert_close(out, reference(q, k, v, params, alibi=slopes, k_len=50), "f32", loose=True)


def test_attention_alibi_and_k_len(fuel_opt):
    q, k, v = inputs(2, 4, 2, 40, 72, 16, 16)
    slopes = (2.0 ** -np.arange(1, 5)).astype(np.float32)
    params = dict(softmax_scale=0.25, causal=True)
    out = run_gpu_form(fuel_opt, "flash_attn", [q, k, v, slopes, 50], params)
    assert_close(out, reference(q, k, v, params, alibi=slopes, k_len=50), "f32", loose=True)


# flash_attn's split-keys form (fewer than 32 query rows, 64 keys or
# more): decoding (one query; 202 keys: the last step of 4 keys read from
# Sk - 4 with the keys before its start masked), a few queries with
# grouped heads, heads of 128 and 256 (64 and 32 threads: their partials
# fit workgroup memory), heads of 16 with Dv = 48 (columns over 16 threads, three each),
# 24 rows against 64 keys (from 25 rows on, the staged form pads them to a
# block of 32), and rows whose keys are partitioned over blocks (2 and 5
# partitions; empty ones where windows leave a row few keys). Heads whose
# pieces of 4 columns some lanes of a group lack (those lanes' last piece
# clamped to the row's last and left out): 80 (8 lanes of 3 pieces, 4 of
# them 2), 112 (a warp, 28 lanes a piece), D = 48 with Dv = 96 (16 lanes:
# 12 of them a piece of q and k; 2 pieces of v each but 8 lanes 1).
SPLIT_ATTN = [(1, 2, 2, 1, 202, 64, 64), (1, 4, 2, 3, 100, 32, 16), (2, 2, 1, 5, 256, 128, 128),
              (1, 2, 2, 7, 77, 16, 48), (1, 1, 1, 24, 64, 16, 16), (1, 2, 1, 2, 1103, 32, 32),
              (1, 1, 1, 1, 3001, 16, 16), (1, 2, 1, 2, 300, 256, 256), (1, 2, 1, 2, 300, 80, 80),
              (1, 2, 2, 1, 515, 112, 112), (1, 1, 1, 3, 150, 48, 96)]


@pytest.mark.parametrize("shape", SPLIT_ATTN, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("case", STAGED_ATTN_CASES, ids=case_id)
def test_attention_split_keys(fuel_opt, shape, case):
    q, k, v = inputs(*shape)
    params = dict(softmax_scale=0.3, **case)
    out = run_gpu_form(fuel_opt, "flash_attn", [q, k, v], params, staged="split")
    assert_close(out, reference(q, k, v, params), "f32", loose=True)


def test_attention_split_keys_alibi_and_k_len(fuel_opt):
    # ALiBi per batch and head; k_len 150 of 180 keys (the threads whose
    # keys start past it take none: their weight is 0), and 600 of 1,100
    # in two partitions.
    slopes = (2.0 ** -np.arange(1, 9)).reshape(2, 4).astype(np.float32)
    params = dict(softmax_scale=0.25, causal=True)
    for sk, k_len in ((180, 150), (1100, 600)):
        q, k, v = inputs(2, 4, 2, 2, sk, 32, 32)
        out = run_gpu_form(fuel_opt, "flash_attn", [q, k, v, slopes, k_len], params, staged="split")
        assert_close(out, reference(q, k, v, params, alibi=slopes, k_len=k_len), "f32", loose=True)


def test_attention_split_keys_rows_that_see_no_key(fuel_opt):
    # Causal with k_len 1 of 64 keys and 4 queries (off = -3): queries 0 to
    # 2 see no key, so every thread's partial is empty (its max -inf, its
    # weight 0) and their rows are 0; query 3 sees key 0, one thread's.
    q, k, v = inputs(1, 2, 1, 4, 64, 16, 16)
    params = dict(softmax_scale=0.3, causal=True)
    out = run_gpu_form(fuel_opt, "flash_attn", [q, k, v, 1], params, staged="split")
    want = reference(q, k, v, params, k_len=1)
    assert not want[:, :, :3].any() and want[:, :, 3].any()
    assert_close(out, want, "f32", loose=True)


DTYPES = [("f16", np.float16)] + ([("bf16", BF16)] if BF16 is not None else [])


# Half precision: 24 rows (too few to stage) against 48 keys (a thread per
# row) and 80 (the keys split over threads), 40 rows (a block of 64,
# padded) and 96 (blocks of 32), staged.
@pytest.mark.parametrize("name,dtype", DTYPES, ids=[d[0] for d in DTYPES])
@pytest.mark.parametrize("sq,sk,form", [(24, 48, False), (24, 80, "split"), (40, 80, True), (96, 80, True)],
                         ids=["24x48", "24x80", "40x80", "96x80"])
def test_attention_half(fuel_opt, name, dtype, sq, sk, form):
    q, k, v = inputs(1, 2, 2, sq, sk, 32, 32, dtype)
    params = dict(softmax_scale=0.2, causal=True)
    out = run_gpu_form(fuel_opt, "flash_attn", [q, k, v], params, staged=form)
    assert_close(out, reference(q, k, v, params), name)


# The backwards' GPU form: a thread per query row (dq, and lse and D for
# dk and dv), a thread per key row (dk, dv).
@pytest.mark.parametrize("shape", BWD_SHAPES + [(1, 4, 1, 33, 100, 128, 96)],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("case", BWD_CASES, ids=case_id)
def test_attention_backward(fuel_opt, shape, case):
    q, k, v = inputs(*shape)
    do = rand(q.shape[:3] + v.shape[3:], np.float32, 7)
    case = dict(case)
    alibi = (2.0 ** -np.arange(1, shape[1] + 1)).astype(np.float32) if case.pop("alibi", False) else None
    params = dict(softmax_scale=0.3, **case)
    args = [q, k, v, do] + ([alibi] if alibi is not None else [])
    for which, want in zip("qkv", bwd_reference(q, k, v, do, params, alibi)):
        # Head dims that are multiples of 16 up to 32 (dv: 64) stage the
        # blocks the rows share, with sequences of 32 rows or more: query
        # rows (dq; lse and D for dk and dv) and key rows (dk, dv).
        widest = 64 if which == "v" else 32
        heads = all(d % 16 == 0 and d <= widest for d in shape[5:])
        staged = heads and shape[3] >= 32 and (which == "q" or shape[4] >= 32)
        got = run_gpu_form(fuel_opt, f"flash_attn_backward_{which}", args, params, staged=staged)
        assert got.shape == want.shape
        assert_close(got, want, "f32", loose=True)


def staged_backward_case(shape, case):
    """The operands, params and float64 reference gradients (dq, dk, dv) of
    a backward of `shape` with `case`'s params (ALiBi slopes per batch and
    head where it says so)."""
    q, k, v = inputs(*shape)
    do = rand(q.shape[:3] + v.shape[3:], np.float32, 7)
    case = dict(case)
    alibi = None
    if case.pop("alibi", False):
        alibi = (2.0 ** -np.arange(1, shape[0] * shape[1] + 1)).reshape(shape[:2]).astype(np.float32)
    params = dict(softmax_scale=0.3, **case)
    args = [q, k, v, do] + ([alibi] if alibi is not None else [])
    return args, params, bwd_reference(q, k, v, do, params, alibi)


# dq's staged form at shapes that pad (queries, keys), with grouped heads,
# blocks of 32 rows (a key's 32 columns copied by 32 threads) and a head
# dim of 16.
STAGED_DQ = [(1, 4, 2, 100, 100, 32, 32), (2, 2, 2, 32, 48, 32, 16), (1, 1, 1, 64, 24, 16, 32)]
# dk and dv staged (a thread per key row over staged blocks of queries and
# do): keys and queries padded (100 rows: two blocks of 64, and 112 in
# steps of 16), grouped heads (the query heads of a kv head in turn),
# blocks of 32 rows, D = 16, Dv = 32 and the reverse; 48 queries and 40
# keys (blocks of 64, padded).
STAGED_DKV = [(1, 4, 2, 100, 100, 32, 32), (2, 2, 1, 32, 96, 32, 16), (1, 1, 1, 64, 64, 16, 32),
              (1, 2, 1, 48, 40, 16, 16)]


@pytest.mark.parametrize("which,shape", [("q", s) for s in STAGED_DQ] + [("kv", s) for s in STAGED_DKV],
                         ids=lambda x: "x".join(map(str, x)) if isinstance(x, tuple) else x)
@pytest.mark.parametrize("case", BWD_CASES, ids=case_id)
def test_attention_backward_staged(fuel_opt, which, shape, case):
    args, params, grads = staged_backward_case(shape, case)
    for name, want in zip("qkv", grads):
        if name in which:
            got = run_gpu_form(fuel_opt, f"flash_attn_backward_{name}", args, params, staged=True)
            assert got.shape == want.shape
            assert_close(got, want, "f32", loose=True)


@pytest.mark.parametrize("name,dtype", DTYPES, ids=[d[0] for d in DTYPES])
@pytest.mark.parametrize("sq", [24, 40, 96])
def test_attention_backward_half(fuel_opt, name, dtype, sq):
    q, k, v = inputs(1, 2, 2, sq, 80, 32, 32, dtype)
    do = rand((1, 2, sq, 32), dtype, 7)
    params = dict(softmax_scale=0.2, causal=True)
    for which, want in zip("qkv", bwd_reference(q, k, v, do, params)):
        got = run_gpu_form(fuel_opt, f"flash_attn_backward_{which}", [q, k, v, do], params,
                           staged=sq >= 32)
        assert got.dtype == dtype
        assert_close(got, want, name)


# The scans' GPU form: a thread per channel (blocks of up to 256 channels,
# padded to whole blocks), the state in registers along the sequence.
@pytest.mark.parametrize("shape", [(1, 5, 3, 2), (2, 13, 300, 16), (1, 9, 48, 64)],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("softplus", [False, True])
@pytest.mark.parametrize("name,dtype", [("f32", np.float32)] + DTYPES, ids=lambda d: d if isinstance(d, str) else "")
def test_selective_scan(fuel_opt, shape, softplus, name, dtype):
    args = make(*shape, dtype)
    y, state = run_gpu_form(fuel_opt, "selective_scan", args, {"delta_softplus": softplus})
    want_y, want_state = scan_reference(args, softplus)
    assert_close(y, want_y, name, loose=True)
    assert_close(state, want_state, name, loose=True)


@pytest.mark.parametrize("shape", [(1, 5, 1, 3, 2), (2, 12, 3, 48, 16), (1, 4, 2, 32, 128)],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name,dtype", [("f32", np.float32)] + DTYPES, ids=lambda d: d if isinstance(d, str) else "")
def test_ssd_chunk_scan(fuel_opt, shape, name, dtype):
    args = make_ssd(*shape, dtype)
    y = run_gpu_form(fuel_opt, "ssd_chunk_scan", args, {"chunk_size": shape[1]})
    assert_close(y, ssd_reference(args), name, loose=True)


# paged_attn's GPU form: a block per (sequence, query head) and partition
# of 512 tokens of the table; groups of lanes (a token's key split over a
# group, 4 elements a lane, the dot products summed by shuffles) write the
# scores of their tokens into a row in workgroup memory, then a thread per
# output column reads them; a second kernel combines the partitions. The
# CPU schedule's cases, tables of more tokens than groups (each several),
# of several partitions (contexts ending in the first, within and at the
# end of later ones, empty, past the table), head dims of 8 to 64 (groups
# of 2 to 16 lanes, several a warp) and of 6 and 10 (not a multiple of 4:
# a thread a token). Its lanes shuffle: it runs on the NVIDIA emulator.
def run_paged_gpu_form(fuel_opt, args, params):
    text = gpu_form(fuel_opt, fused_text("paged_attn", list(args), params))
    assert "#gpu.address_space<workgroup>" in text
    assert ("gpu.subgroup_reduce" in text) == (args[0].shape[-1] % 4 == 0)
    return run_on_emulator("paged_attn", args, params)


PAGED_GPU_CASES = PAGED_CASES + [(1, 2, 1, 8, 1, 300, [299]),        # block_size 1, 2 tokens a thread
                                 (2, 4, 4, 48, 16, 40, [600, 257]),   # 2 partitions
                                 (3, 2, 1, 16, 8, 200, [1600, 0, 700]),  # 4, the last of 64 tokens
                                 (1, 2, 2, 16, 16, 1024, [16000]),    # 32
                                 (2, 2, 1, 10, 4, 60, [130, 240]),    # D = 10: a thread a token
                                 (1, 2, 2, 6, 8, 100, [700])]         # D = 6, 2 partitions


@pytest.mark.parametrize("case", PAGED_GPU_CASES, ids=lambda c: "-".join(map(str, c[:6])))
@pytest.mark.parametrize("name,dtype", [("f32", np.float32)] + DTYPES, ids=lambda d: d if isinstance(d, str) else "")
def test_paged_attention(fuel_opt, case, name, dtype):
    *shape, lens = case
    args = make_paged(*shape, lens, dtype, seed=len(lens))
    params = {"softmax_scale": 0.125, "block_size": shape[4]}
    out = run_paged_gpu_form(fuel_opt, args, params)
    assert out.dtype == dtype
    assert_close(out, paged_reference(args, params), name, loose=True)


@pytest.mark.parametrize("max_blocks", [3, 100], ids=["one-block", "partitioned"])
def test_paged_attention_softcap_alibi_and_overlong(fuel_opt, max_blocks):
    # ALiBi, softcap; a context of none and one longer than its table
    # (the table's tokens are attended, as the decomposition does).
    tokens = 8 * max_blocks
    q, kc, vc, table, lens = make_paged(3, 4, 2, 40, 8, max_blocks, [20, 0, tokens + 50], np.float32, seed=5)
    alibi = (2.0 ** -np.arange(1, 5)).astype(np.float32)
    params = {"softmax_scale": 0.2, "block_size": 8, "softcap": 3.0}
    got = run_paged_gpu_form(fuel_opt, [q, kc, vc, table, lens, alibi], params)
    assert np.all(got[1] == 0)
    capped = [q, kc, vc, table, np.array([20, 0, tokens], np.int32)]
    assert_close(got, paged_reference(capped, params, alibi), "f32", loose=True)


# rope's GPU form: a thread per pair (p, p + D/2) of a row, blocks of rows;
# rank 2 and 4, a half row of 300 pairs (150 threads of 2), odd rows.
@pytest.mark.parametrize("shape", [(7, 64), (2, 3, 5, 8), (1, 2, 9, 600), (3, 1, 13, 20)],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name,dtype", [("f32", np.float32)] + DTYPES, ids=lambda d: d if isinstance(d, str) else "")
def test_rope(fuel_opt, shape, name, dtype):
    x, cos, sin = rand(shape, dtype), rand(shape[-2:], dtype, 1), rand(shape[-2:], dtype, 2)
    out = run_gpu_form(fuel_opt, "rope", [x, cos, sin])
    assert out.dtype == dtype and out.shape == shape
    f64 = lambda a: np.asarray(a, np.float64)  # noqa: E731
    assert_close(out, rope_reference(f64(x), f64(cos), f64(sin)), name)


# reduce_max_to_backward's GPU form: a block per group (its max and count
# each a block reduction, serialized here), then dx elementwise. Values
# rounded to halves so that groups have ties; groups of the last dim, of
# the last two, of everything, and of 700 (several elements a thread).
@pytest.mark.parametrize("xs,gs", [((4, 6, 10), (4, 6, 1)), ((4, 6, 10), (4, 1, 1)), ((3, 5, 7), (1, 1, 1)),
                                   ((2, 700), (2, 1)), ((5, 3, 8), (1, 3, 1))],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name,dtype", [("f32", np.float32)] + DTYPES, ids=lambda d: d if isinstance(d, str) else "")
def test_reduce_max_backward(fuel_opt, xs, gs, name, dtype):
    x = (np.round(rand(xs, np.float32) * 2) / 2).astype(dtype)
    g = rand(gs, dtype, 1)
    out = run_serialized(fuel_opt, "reduce_max_to_backward", [x, g])
    assert out.dtype == dtype and out.shape == xs
    f64 = lambda a: np.asarray(a, np.float64)  # noqa: E731
    assert_close(out, reduce_max_backward(f64(x), f64(g)), name)


# The convolutions' GPU form: a thread per tile of 4 output columns by up to
# 4 filters, blocks of an output row's column tiles (up to 32; wider rows in
# blocks of 16 to 32 tiles, padded) by filter tiles. The CPU schedule's
# cases (strides, groups, depthwise, widths off the tile), a row of 224
# (56 tiles: blocks of 28) and of 150 (38 tiles: 2 blocks of 19), f16.
CONV_CASES = ([({"padding": padding}, xs, ws) for xs, ws, padding, _ in CONV_SCHEDULED]
              + STRIDED_GROUPED + FILTERS_MAJOR
              + [({"padding": (1, 1)}, (1, 3, 4, 224), (8, 3, 3, 3)),
                 ({"groups": 2, "stride": (1, 2), "padding": (0, 1)}, (2, 4, 3, 300), (6, 2, 1, 3))])


@pytest.mark.parametrize("params,xs,ws", CONV_CASES, ids=lambda v: str(v))
def test_conv2d(fuel_opt, params, xs, ws):
    x, w, b = rand(xs, np.float32, 1), rand(ws, np.float32, 2), rand((ws[0],), np.float32, 3)
    out = run_gpu_form(fuel_opt, "conv2d", [x, w, b], params)
    want = conv_reference(x, w, b, params.get("stride", (1, 1)), params.get("padding", (0, 0)),
                          params.get("groups", 1))
    assert out.shape == want.shape
    assert_close(out, want, "f32", loose=True)


# One group, filters and output pixels multiples of 32, C * kh * kw of 8:
# an implicit matrix product per image, the weight's and the pixels' tiles
# staged in workgroup memory, the padding read as zeros. (x, w, stride,
# padding, bias): K steps of 8 and 16, strides, padding on either side,
# 64 x 64, 32 x 64 and 32 x 32 tiles, a batch.
STAGED_CONV = [((2, 8, 8, 8), (32, 8, 3, 3), (1, 1), (1, 1), True),
               ((1, 16, 16, 16), (64, 16, 3, 3), (2, 2), (1, 1), True),
               ((1, 24, 4, 8), (96, 24, 1, 3), (1, 1), (0, 1), False),
               ((3, 8, 8, 16), (32, 8, 3, 1), (1, 2), (3, 0), True)]


@pytest.mark.parametrize("xs,ws,stride,padding,bias", STAGED_CONV, ids=lambda v: str(v))
def test_conv2d_staged(fuel_opt, xs, ws, stride, padding, bias):
    x, w = rand(xs, np.float32, 1), rand(ws, np.float32, 2)
    b = rand((ws[0],), np.float32, 3) if bias else None
    args = [x, w] + ([b] if bias else [])
    out = run_gpu_form(fuel_opt, "conv2d", args, {"stride": stride, "padding": padding}, staged=True)
    want = conv_reference(x, w, b, stride, padding)
    assert out.shape == want.shape
    assert_close(out, want, "f32", loose=True)


def test_conv2d_staged_large_tiles(fuel_opt):
    # 128 filters by 16 x 16 pixels in 2 groups, tiles of 128 x 128, 8 x 8
    # a thread (compute-units=1): the bias added per filter of the group.
    x, w, b = rand((1, 16, 16, 16), np.float32, 1), rand((256, 8, 3, 3), np.float32, 2), rand((256,), np.float32, 3)
    params = {"padding": (1, 1), "groups": 2}
    text = gpu_form(fuel_opt, fused_text("conv2d", [x, w, b], params), "compute-units=1")
    assert LARGE_TILES in text
    out = runner.compile(text.replace(WORKGROUP, ""), "f", codegen=False)(x, w, b)
    assert_close(out, conv_reference(x, w, b, (1, 1), (1, 1), 2), "f32", loose=True)


def test_conv2d_staged_groups(fuel_opt):
    # 2 groups of 32 filters over 8 channels each: a block row per (image,
    # group).
    x, w, b = rand((2, 16, 8, 8), np.float32, 1), rand((64, 8, 3, 3), np.float32, 2), rand((64,), np.float32, 3)
    params = {"padding": (1, 1), "groups": 2}
    out = run_gpu_form(fuel_opt, "conv2d", [x, w, b], params, staged=True)
    assert_close(out, conv_reference(x, w, b, (1, 1), (1, 1), 2), "f32", loose=True)


# conv_transpose_2d staged: output pixels between the strided inputs, or
# off a dilated tap, read as zeros. (x, w [C, F/groups, kh, kw], stride,
# padding, output_padding, dilation, groups)
STAGED_TRANSPOSED = [((1, 16, 8, 8), (16, 32, 4, 4), (2, 2), (1, 1), (0, 0), (1, 1), 1),
                     ((2, 8, 6, 7), (8, 32, 3, 3), (1, 2), (1, 0), (0, 1), (2, 1), 1),
                     ((1, 16, 8, 8), (16, 32, 4, 4), (2, 2), (1, 1), (0, 0), (1, 1), 2)]


@pytest.mark.parametrize("xs,ws,stride,padding,output_padding,dilation,groups", STAGED_TRANSPOSED,
                         ids=lambda v: str(v))
def test_conv_transpose_2d_staged(fuel_opt, xs, ws, stride, padding, output_padding, dilation, groups):
    x, w = rand(xs, np.float32, 4), rand(ws, np.float32, 5)
    params = {"stride": stride, "padding": padding, "output_padding": output_padding,
              "dilation": dilation, "groups": groups}
    out = run_gpu_form(fuel_opt, "conv_transpose_2d", [x, w], params, staged=True)
    want = ref.conv_transpose2d(np.asarray(x, np.float64), np.asarray(w, np.float64), stride, padding,
                                output_padding, dilation, groups)
    assert out.shape == want.shape
    assert_close(out, want, "f32", loose=True)


@pytest.mark.parametrize("name,dtype", DTYPES, ids=[d[0] for d in DTYPES])
def test_conv2d_staged_low_precision(fuel_opt, name, dtype):
    x, w, b = rand((2, 8, 8, 8), dtype, 1), rand((32, 8, 3, 3), dtype, 2), rand((32,), dtype, 3)
    out = run_gpu_form(fuel_opt, "conv2d", [x, w, b], {"padding": (1, 1)}, staged=True)
    assert out.dtype == dtype
    assert_close(out, conv_reference(x, w, b, (1, 1), (1, 1)), name)


@pytest.mark.parametrize("name,dtype", DTYPES, ids=[d[0] for d in DTYPES])
def test_conv2d_low_precision_no_bias(fuel_opt, name, dtype):
    x, w = rand((2, 4, 9, 11), dtype, 1), rand((8, 4, 3, 3), dtype, 2)
    out = run_gpu_form(fuel_opt, "conv2d", [x, w], {"stride": (2, 1), "padding": (1, 1)})
    assert out.dtype == dtype
    assert_close(out, conv_reference(x, w, None, (2, 1), (1, 1)), name)


@pytest.mark.parametrize("xs,ws,stride,padding,output_padding", TRANSPOSED, ids=lambda v: str(v))
def test_conv_transpose_2d(fuel_opt, xs, ws, stride, padding, output_padding):
    x, w = rand(xs, np.float32, 4), rand(ws, np.float32, 5)
    params = {"stride": stride, "padding": padding, "output_padding": output_padding}
    out = run_gpu_form(fuel_opt, "conv_transpose_2d", [x, w], params)
    assert_close(out, transposed_reference(x, w, stride, padding, output_padding), "f32", loose=True)


# causal_conv1d: a block per (batch, channel, stretch of up to 1024
# outputs), 4 a thread; lengths off a thread's 4 and a stretch's.
@pytest.mark.parametrize("shape", CAUSAL_SHAPES + [(1, 3, 1030, 4), (2, 2, 2048, 3), (1, 1, 1, 4)],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("silu", [False, True])
@pytest.mark.parametrize("name,dtype", [("f32", np.float32)] + DTYPES, ids=lambda d: d if isinstance(d, str) else "")
def test_causal_conv1d(fuel_opt, shape, silu, name, dtype):
    x, w, bias = make_causal(*shape, dtype)
    out = run_gpu_form(fuel_opt, "causal_conv1d", [x, w, bias], {"use_silu": silu})
    assert out.dtype == dtype
    assert_close(out, causal_reference(x, w, bias, silu), name)


# (leading dims, M, K, N). Staged in workgroup memory (M and N multiples
# of 32, K of 8): block tiles of 64 x 64, 32 x 64, 64 x 32 and 32 x 32, K
# steps of 16 and 8, one and several steps, a leading dim. Read through
# the caches: block tiles of 64 and smaller, K off the step.
# The staged tiles are copied in chunks of consecutive columns (4 f32; 4 or,
# for ((), 96, 48, 32)'s [32, 16] and [16, 32] tiles, 8 f16 or bf16).
STAGED_LINEAR_SHAPES = [((), 64, 64, 64), ((), 256, 96, 512), ((2,), 96, 40, 32), ((), 32, 8, 192),
                        ((3,), 64, 24, 96), ((), 96, 48, 32)]
LINEAR_SHAPES = [((3,), 12, 100, 20), ((), 4, 7, 4), ((), 64, 12, 64)]


# With one multiprocessor (compute-units=1) the largest tiles the shape
# allows (128 x 128 for 256 x 512); with the default 108, the small grids
# of these shapes take 32 x 32 tiles.
@pytest.mark.parametrize("shape", STAGED_LINEAR_SHAPES + LINEAR_SHAPES,
                         ids=lambda s: "x".join(map(str, s[0] + s[1:])))
@pytest.mark.parametrize("name,dtype", [("f32", np.float32)] + DTYPES, ids=lambda d: d if isinstance(d, str) else "")
@pytest.mark.parametrize("units", [1, 108])
def test_linear(fuel_opt, shape, name, dtype, units):
    lead, m, k, n = shape
    a, w, b = rand(lead + (m, k), dtype), rand((k, n), dtype, 1), rand((n,), dtype, 2)
    out = run_gpu_form(fuel_opt, "fused_linear", [a, w, b], staged=shape in STAGED_LINEAR_SHAPES,
                       options=f"compute-units={units}")
    f64 = lambda x: np.asarray(x, np.float64)  # noqa: E731
    assert_close(out, f64(a) @ f64(w) + f64(b), name, loose=True)


# 128 x 128 block tiles of 8 x 8 thread tiles where the grid of those has a
# block for each multiprocessor (compute-units, here 1 and 4): a leading
# dim, K steps of 8 and 16, several tiles each way. The finish writes each
# 8-float row in two 16-byte pieces.
LARGE_TILE_LINEAR = [((), 128, 16, 128, 1), ((2,), 256, 40, 128, 4), ((), 128, 24, 512, 4)]
LARGE_TILES = "tensor<16x16x8x8xf32>"


@pytest.mark.parametrize("shape", LARGE_TILE_LINEAR, ids=lambda s: "x".join(map(str, s[0] + s[1:4])))
@pytest.mark.parametrize("name,dtype", [("f32", np.float32)] + DTYPES, ids=lambda d: d if isinstance(d, str) else "")
def test_linear_large_tiles(fuel_opt, shape, name, dtype):
    lead, m, k, n, units = shape
    a, w, b = rand(lead + (m, k), dtype), rand((k, n), dtype, 1), rand((n,), dtype, 2)
    text = gpu_form(fuel_opt, fused_text("fused_linear", [a, w, b]), f"compute-units={units}")
    assert LARGE_TILES in text and form_of(text) == "staged"
    out = runner.compile(text.replace(WORKGROUP, ""), "f", codegen=False)(a, w, b)
    f64 = lambda x: np.asarray(x, np.float64)  # noqa: E731
    assert_close(out, f64(a) @ f64(w) + f64(b), name, loose=True)


def test_large_tiles_need_a_block_per_multiprocessor(fuel_opt):
    # 4 tiles of 128 x 128 against 5 multiprocessors: 64 x 64 tiles (16
    # blocks) instead.
    a, w, b = rand((256, 16), np.float32), rand((16, 256), np.float32, 1), rand((256,), np.float32, 2)
    text = gpu_form(fuel_opt, fused_text("fused_linear", [a, w, b]), "compute-units=5")
    assert LARGE_TILES not in text and "tensor<16x16x4x4xf32>" in text
    assert LARGE_TILES in gpu_form(fuel_opt, fused_text("fused_linear", [a, w, b]), "compute-units=4")


def test_small_grids_take_smaller_tiles(fuel_opt):
    # 32 blocks of 64 x 64 (the output is 256 x 512): enough for up to 32
    # multiprocessors; for more, 32 x 64 tiles (64 blocks, 8 x 16 threads),
    # and for more than 64, 32 x 32 tiles (128 blocks, 8 x 8 threads), the
    # smallest, however many there are.
    a, w, b = rand((256, 16), np.float32), rand((16, 512), np.float32, 1), rand((512,), np.float32, 2)
    text = fused_text("fused_linear", [a, w, b])
    for units, threads in ((32, "16x16"), (33, "8x16"), (64, "8x16"), (65, "8x8"), (10000, "8x8")):
        form = gpu_form(fuel_opt, text, f"compute-units={units}")
        assert f"tensor<{threads}x4x4xf32>" in form and form_of(form) == "staged", units
    # A leading dim counts: 3 x 16 blocks of 32 x 64 give 48 multiprocessors
    # a block each; 49 take 32 x 32 tiles.
    a, w, b = rand((3, 64, 24), np.float32), rand((24, 512), np.float32, 1), rand((512,), np.float32, 2)
    f64 = lambda x: np.asarray(x, np.float64)  # noqa: E731
    for units, threads in ((48, "8x16"), (49, "8x8")):
        form = gpu_form(fuel_opt, fused_text("fused_linear", [a, w, b]), f"compute-units={units}")
        assert f"tensor<{threads}x4x4xf32>" in form, units
        out = runner.compile(form.replace(WORKGROUP, ""), "f", codegen=False)(a, w, b)
        assert_close(out, f64(a) @ f64(w) + f64(b), "f32", loose=True)


def serialized(text):
    """`text` (canonicalized) with each block's thread loop (an scf.forall
    whose shared output is a workgroup buffer of slots) run by one thread:
    its strided loops (from the thread's index, step the thread count) take
    every element, and gpu.all_reduce of one thread is its operand (x + -0.0
    is x for every x). The slots stay in ordinary memory."""
    lines = text.split("\n")
    threads = [i for i in range(1, len(lines))
               if "scf.forall" in lines[i] and "alloc_tensor" in lines[i - 1]]
    assert threads, "no thread loop of block loops"
    for i in threads:
        lines[i] = re.sub(r"in \((\d+)\)", "in (1)", lines[i], count=1)
    text = "\n".join(lines)
    text, reductions = re.subn(r"(%\w+) = gpu\.all_reduce\s+\w+ (%\w+) uniform \{\s*\} : \(f32\) -> f32",
                               r"\1 = arith.addf \2, %serial_zero : f32", text)
    assert reductions, "no block reduction"
    text = re.sub(r"(scf\.for %\w+ = %\w+ to %\w+) step %\w+", r"\1 step %serial_one", text)
    text = text.replace(" {memory_space = #gpu.address_space<workgroup>}", "")
    return re.sub(r"(func\.func @f\([^\n]*\{\n)",
                  r"\1    %serial_one = arith.constant 1 : index\n    %serial_zero = arith.constant -0.0 : f32\n",
                  text, count=1)


def run_serialized(fuel_opt, name, args, params=None):
    result = subprocess.run([fuel_opt, "--fuel-codegen-gpu", "--canonicalize"],
                            input=fused_text(name, args, params), capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "fuel.fused" not in result.stdout
    return runner.compile(serialized(result.stdout), "f", codegen=False)(*args)


@pytest.mark.parametrize("qtype", sorted(GEOMETRY))
@pytest.mark.parametrize("m", [1, 3])
def test_quantized(fuel_opt, qtype, m):
    qk = GEOMETRY[qtype][0]
    k, n = 2 * qk, 5
    rows = random_blocks(qtype, n, k, seed=len(qtype) + m)
    a = rand((m, k), np.float32, 3)
    out = run_serialized(fuel_opt, "qmatmul", [a, as_words(rows)], {"quant_type": qtype, "k": k, "n": n})
    assert_close(out, a.astype(np.float64) @ dequant(qtype, rows, k).T, "f32", loose=True)


def assert_dot_close(got, a, w, rtol):
    """Each output of a @ w.T within rtol of the sum of its products'
    magnitudes: the error bound of an f32 dot product in any order (a
    difference of large products may cancel to a small result)."""
    a, w = np.asarray(a, np.float64), np.asarray(w, np.float64)
    bound = rtol * (np.abs(a) @ np.abs(w).T) + 1e-6
    err = np.abs(np.asarray(got, np.float64) - a @ w.T)
    assert np.all(err <= bound), f"max error / bound {np.max(err / bound):.3g}"


# More rows (prefill): the contraction schedule's block and thread tiles,
# the weight decoded per thread tile and step; no gpu.all_reduce, so the
# GPU form runs as it is.
@pytest.mark.parametrize("qtype", sorted(GEOMETRY))
def test_quantized_many_rows(fuel_opt, qtype):
    qk = GEOMETRY[qtype][0]
    k, n = 2 * qk, 12
    rows = random_blocks(qtype, n, k, seed=len(qtype))
    a = rand((20, k), np.float32, 3)
    out = run_gpu_form(fuel_opt, "qmatmul", [a, as_words(rows)], {"quant_type": qtype, "k": k, "n": n})
    assert_dot_close(out, a, dequant(qtype, rows, k), 1e-5)


# f16 and bf16 activations (a result of their type): the decomposition's
# f32 contraction takes the schedule (decode: a block per output, or lanes
# along n for awq; prefill: staged tiles, or the contraction schedule's
# register tiles of the conversion), each output converted where it is
# written: no conversion over the whole f32 result is left.
@pytest.mark.parametrize("m,form", [(3, "decode"), (20, "caches"), (64, "staged")])
@pytest.mark.parametrize("dname,dtype", DTYPES, ids=[d[0] for d in DTYPES])
def test_quantized_half_activations(fuel_opt, m, form, dname, dtype):
    k, n = 64, 64
    rows = random_blocks("q4_0", n, k, seed=9)
    a = rand((m, k), dtype, 3)
    args, params = [a, as_words(rows)], {"quant_type": "q4_0", "k": k, "n": n}
    text = gpu_form(fuel_opt, fused_text("qmatmul", args, params))
    assert re.search(r"arith\.truncf %\S+ : (vector<[0-9x]+)?f32>? to (vector<[0-9x]+)?b?f16", text)
    conversion = re.search(r"linalg\.generic .*outs\(%\w+ : tensor<[0-9x]+(f16|bf16)>\)", text)
    assert ("gpu.all_reduce" in text) == (form == "decode")
    assert conversion is None
    out = (run_serialized(fuel_opt, "qmatmul", args, params) if form == "decode"
           else run_gpu_form(fuel_opt, "qmatmul", args, params, staged=form == "staged"))
    assert out.dtype == np.asarray(a).dtype
    assert_close(out, np.asarray(a, np.float64) @ dequant("q4_0", rows, k).T, dname, loose=True)


@pytest.mark.parametrize("dname,dtype", DTYPES, ids=[d[0] for d in DTYPES])
def test_awq_decode_half_activations(fuel_opt, dname, dtype):
    a, qw, qz, s, w = awq_inputs((2, 128), 64, 64, dtype)
    text = gpu_form(fuel_opt, fused_text("awq_matmul", [a, qw, qz, s], {"group_size": 64}))
    assert "x104xf32>" in text and "arith.truncf" in text
    assert not re.search(r"linalg\.generic .*outs\(%\w+ : tensor<[0-9x]+(f16|bf16)>\)", text)
    out = runner.compile(text.replace(WORKGROUP, ""), "f", codegen=False)(a, qw, qz, s)
    assert out.dtype == np.asarray(a).dtype
    assert_close(out, np.asarray(a, np.float64) @ w, dname, loose=True)


# Many rows with M and N multiples of 32: the activations and the decoded
# weight staged in workgroup memory per block tile and K step (the weight
# copied along K where it is [N, K], along N for awq's [K, N]).
@pytest.mark.parametrize("qtype", sorted(GEOMETRY))
def test_quantized_staged(fuel_opt, qtype):
    qk = GEOMETRY[qtype][0]
    k, n = 2 * qk, 96
    rows = random_blocks(qtype, n, k, seed=len(qtype) + 1)
    a = rand((64, k), np.float32, 4)
    out = run_gpu_form(fuel_opt, "qmatmul", [a, as_words(rows)], {"quant_type": qtype, "k": k, "n": n},
                       staged=True)
    assert_dot_close(out, a, dequant(qtype, rows, k), 1e-5)


def test_quantized_staged_large_tiles(fuel_opt):
    # 128 x 128 tiles of 8 x 8 (compute-units=1): the weight decoded along
    # K as it is staged, as in the smaller tiles.
    k, n = 256, 128
    rows = random_blocks("q4_k", n, k, seed=7)
    a = rand((128, k), np.float32, 4)
    text = gpu_form(fuel_opt, fused_text("qmatmul", [a, as_words(rows)], {"quant_type": "q4_k", "k": k, "n": n}),
                    "compute-units=1")
    assert LARGE_TILES in text
    out = runner.compile(text.replace(WORKGROUP, ""), "f", codegen=False)(a, as_words(rows))
    assert_dot_close(out, a, dequant("q4_k", rows, k), 1e-5)


def test_nf4_and_awq_staged(fuel_opt):
    dtype = np.float32
    a, packed, absmax, w = nf4_inputs((32, 128), 64, 64, dtype)
    out = run_gpu_form(fuel_opt, "nf4_matmul", [a, packed, absmax], {"block_size": 64}, staged=True)
    assert_close(out, np.asarray(a, np.float64) @ w.T, "f32", loose=True)
    a, qw, qz, s, w = awq_inputs((96, 128), 32, 64, dtype)
    out = run_gpu_form(fuel_opt, "awq_matmul", [a, qw, qz, s], {"group_size": 64}, staged=True)
    assert_close(out, np.asarray(a, np.float64) @ w, "f32", loose=True)


def test_awq_many_rows(fuel_opt):
    make, params, reference, _ = ALL_CASES["awq_matmul"]
    args = make(np.float32)
    args[0] = np.tile(args[0], (12, 1))
    out = run_gpu_form(fuel_opt, "awq_matmul", args, params)
    f64 = [np.asarray(x, np.float64) if np.asarray(x).dtype.kind == "f" else x for x in args]
    assert_close(out, reference(*f64), "f32", loose=True)


def test_nf4_decode(fuel_opt):
    make, params, reference, _ = ALL_CASES["nf4_matmul"]
    args = make(np.float32)
    out = run_serialized(fuel_opt, "nf4_matmul", args, params)
    f64 = [np.asarray(x, np.float64) if np.asarray(x).dtype.kind == "f" else x for x in args]
    assert_close(out, reference(*f64), "f32", loose=True)


# awq's [K, N] weight (8 codes a word along n) decoded by lanes along n:
# a block per row and run of words, each thread a word's 8 columns and a
# share of K, its partials in workgroup memory and added by a thread per
# column after the barrier (no gpu.all_reduce). Leading dims, runs of
# fewer than 8 words (N = 24: one word a block; N = 16: two), up to 16
# rows, groups of 64 and 128.
@pytest.mark.parametrize("lead,k,n,group", [
    ((2,), 128, 16, 64), ((3,), 256, 128, 128), ((2, 3), 128, 24, 64), ((16,), 128, 512, 64)])
def test_awq_decode_along_n(fuel_opt, lead, k, n, group):
    a, qw, qz, s, w = awq_inputs(lead + (k,), n, group)
    text = gpu_form(fuel_opt, fused_text("awq_matmul", [a, qw, qz, s], {"group_size": group}))
    assert "gpu.all_reduce" not in text and WORKGROUP in text
    out = runner.compile(text.replace(WORKGROUP, ""), "f", codegen=False)(a, qw, qz, s)
    assert out.shape == lead + (n,)
    assert_close(out, np.asarray(a, np.float64) @ w, "f32", loose=True)


# Few blocks (1 row, 64 columns: 1 block) split K into partitions, a block
# each, until there are two per multiprocessor or each thread has one chunk
# of 8 k a partition (K = 1024: 128 chunks, 256 threads of 32 splits: 4 at
# most); a second kernel adds the partitions' sums.
@pytest.mark.parametrize("units,partitions", [(1, 2), (2, 4), (108, 4)])
def test_awq_decode_partitions(fuel_opt, units, partitions):
    a, qw, qz, s, w = awq_inputs((1, 1024), 64, 128)
    text = gpu_form(fuel_opt, fused_text("awq_matmul", [a, qw, qz, s], {"group_size": 128}),
                    f"compute-units={units}")
    # The block loops (the thread loops write tensor<1x64xf32> slices).
    loops = re.findall(r"scf\.forall \(%\w+\) in \((\d+)\) shared_outs\(%\w+ = %\w+\) -> \(tensor<(\d+)x64xf32>\)",
                       text)
    assert [x for x in loops if x[0] != "64"] == [(str(partitions), str(partitions)), ("1", "1")]
    assert text.count("mapping = [#gpu.block<x>]") == 2
    out = runner.compile(text.replace(WORKGROUP, ""), "f", codegen=False)(a, qw, qz, s)
    assert_close(out, np.asarray(a, np.float64) @ w, "f32", loose=True)


def test_awq_decode_partials_fit_workgroup_memory(fuel_opt):
    # max-threads=1024 would take 128 splits of K, whose partials (rows of
    # 104 floats) are 53,248 bytes, more than the static 48 KiB: 512
    # threads instead, 64 rows.
    a, qw, qz, s, w = awq_inputs((1, 4096), 64, 128)
    text = gpu_form(fuel_opt, fused_text("awq_matmul", [a, qw, qz, s], {"group_size": 128}),
                    "max-threads=1024")
    assert "tensor<64x104xf32>" in text and "in (512)" in text and "in (1024)" not in text
    out = runner.compile(text.replace(WORKGROUP, ""), "f", codegen=False)(a, qw, qz, s)
    assert_close(out, np.asarray(a, np.float64) @ w, "f32", loose=True)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name,dtype", [("f32", np.float32)] + DTYPES, ids=lambda d: d if isinstance(d, str) else "")
def test_row_loss(fuel_opt, reduction, name, dtype):
    logits = rand((2, 3, 300), dtype, 5)
    targets = np.array([[4, -100, 299], [0, 17, 4]], np.int64)
    out = run_serialized(fuel_opt, "fused_softmax_cross_entropy", [logits, targets], {"reduction": reduction})
    want = cross_entropy(np.asarray(logits, np.float64), targets, reduction)
    assert_close(out, want, name if dtype is not np.float32 else "f32", loose=True)
