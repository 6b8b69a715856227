"""fuel-to-nvvm: every op compiles to GPU kernels (PTX), which ptxas accepts
for sm_80 and sm_90 where a CUDA toolkit is installed; the row-wise ops get
their GPU schedule (a block per row, reductions across the block)."""

import re

import numpy as np
import pytest

from numerics import fused_text
from test_all_ops import CASES
from test_qmatmul import as_words, random_blocks

from fuel_mlir import gpu

HAVE_PTXAS = gpu.ptxas_path() is not None
needs_ptxas = pytest.mark.skipif(not HAVE_PTXAS, reason="no ptxas (pip install nvidia-cuda-nvcc-cu12)")


@pytest.fixture(autouse=True)
def _fuel_opt(fuel_opt, monkeypatch):
    monkeypatch.setenv("FUEL_OPT", fuel_opt)


def no_device_malloc(kernels):
    for k in kernels:
        assert "malloc" not in k.ptx, f"{k.module} allocates with the device's malloc"


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_every_op_compiles(name, dtype):
    make, params, _, _ = CASES[name]
    kernels = gpu.compile_nvvm(fused_text(name, make(dtype), params), chip="sm_80")
    assert kernels, "no GPU kernel"
    for k in kernels:
        assert k.entries, f"{k.module} has no entry"
        assert ".target sm_80" in k.ptx
    no_device_malloc(kernels)
    if HAVE_PTXAS:
        for k in kernels:
            reports = gpu.ptxas(k.ptx, "sm_80")
            assert [r.entry for r in reports] == list(k.entries)
    # sm_90 from its own compile: the PTX names its target.
    if HAVE_PTXAS:
        for k in gpu.compile_nvvm(fused_text(name, make(dtype), params), chip="sm_90"):
            assert [r.entry for r in gpu.ptxas(k.ptx, "sm_90")] == list(k.entries)


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_op_compiles_with_dynamic_dims(name):
    """Dynamic dims take the decomposed lowering: sizes read at run time,
    grids computed on the host."""
    make, params, _, dynamic = CASES[name]
    kernels = gpu.compile_nvvm(fused_text(name, make(np.float32), params, dynamic=dynamic), chip="sm_80")
    assert kernels
    no_device_malloc(kernels)
    if HAVE_PTXAS:
        for k in kernels:
            assert [r.entry for r in gpu.ptxas(k.ptx, "sm_80")] == list(k.entries)


# Held-out shapes: rows long enough for the GPU row-wise schedule.
ROW_CASES = {
    "softmax_last_dim": ([(8, 3, 1536)], {}),
    "rms_norm_last_dim": ([(5, 2048)], {"eps": 1e-6}),
    "layer_norm_last_dim": ([(7, 4096)], {"eps": 1e-5}),
    "softmax_last_dim_backward": ([(6, 768), (6, 768)], {}),
    "rms_norm_last_dim_backward": ([(3, 1024), (3, 1024)], {"eps": 1e-5}),
    "layer_norm_last_dim_backward": ([(2, 2, 320), (2, 2, 320)], {"eps": 1e-5}),
    "inplace_affine": ([(9, 96)], {"mul": 0.5, "add": -1.0}),
}


@pytest.mark.parametrize("name", sorted(ROW_CASES))
def test_row_ops_are_one_block_per_row(name):
    shapes, params = ROW_CASES[name]
    args = [np.zeros(s, np.float32) for s in shapes]
    for chip in ("sm_80", "sm_90"):
        kernels = gpu.compile_nvvm(fused_text(name, args, params), chip=chip)
        no_device_malloc(kernels)
        assert len(kernels) == 1, [k.module for k in kernels]
        ptx = kernels[0].ptx
        if name != "inplace_affine":
            # Reductions across the block: warp shuffles, then shared memory.
            assert "shfl.sync.bfly" in ptx and "bar.sync" in ptx
        if HAVE_PTXAS:
            (report,) = gpu.ptxas(ptx, chip)
            assert report.stack_bytes == 0 and report.spill_stores == 0, report
            if name != "inplace_affine":
                assert report.shared_bytes > 0, report


# Held-out shapes: (op, input shapes, dtype, bytes a thread's chunk loads).
# A thread's elements of a row are chunks of 16 bytes where some number of
# threads (32 to 256) takes the row in them, with fewer threads than divide
# the row if need be; single elements where none does and the thread's part
# is odd.
CHUNKED_ROWS = [
    ("rms_norm_last_dim", [(5, 2048)], np.float32, 16),        # 256 threads x 2 x 4
    ("softmax_last_dim", [(3, 2, 4096)], np.float16, 16),      # 256 threads x 2 x 8
    ("softmax_last_dim_backward", [(6, 768), (6, 768)], np.float32, 16),  # 64 threads x 3 x 4
    ("layer_norm_last_dim", [(7, 512)], np.float32, 16),       # 128 threads x 4
    # 128 threads x 3 x 4: chunks of 16 bytes of f32, a row the loop
    # slices being f32, so 8 bytes of the f16 input.
    ("rms_norm_last_dim", [(3, 1536)], np.float16, 8),
    ("softmax_last_dim", [(9, 96)], np.float32, 4),             # 32 threads x 3
]


@pytest.mark.parametrize("name,shapes,dtype,width", CHUNKED_ROWS,
                         ids=[f"{c[0]}-{c[2].__name__}-{c[3]}" for c in CHUNKED_ROWS])
def test_row_ops_load_and_store_chunks(name, shapes, dtype, width):
    args = [np.zeros(s, dtype) for s in shapes]
    params = {"eps": 1e-5} if "norm" in name else {}
    (kernel,) = gpu.compile_nvvm(fused_text(name, args, params), chip="sm_90")
    ptx = kernel.ptx
    loads = [line.split()[0] for line in ptx.splitlines() if line.strip().startswith("ld.global")]
    stores = [line.split()[0] for line in ptx.splitlines() if line.strip().startswith("st.global")]
    assert loads and stores
    # Every access of a row is one instruction of `width` bytes: v4.b32 is
    # 16 bytes (4 f32 or 8 f16), v2.b32 8, b32 4 (f32); f16 scalars b16.
    bits = {"v4.b32": 128, "v2.b32": 64, "b32": 32, "v2.b16": 32, "b16": 16, "v4.b16": 64}
    for op in loads + stores:
        kind = op.split(".", 2)[2]
        assert bits.get(kind) == 8 * width, (op, width)


# Held-out shapes: a class count off the block, rows off a warp.
@pytest.mark.parametrize("reduction,kernels", [("mean", 2), ("sum", 2), ("none", 1)])
def test_cross_entropy_is_one_block_per_row(reduction, kernels):
    logits = np.zeros((3, 37, 5003), np.float16)
    targets = np.zeros((3, 37), np.int64)
    text = fused_text("fused_softmax_cross_entropy", [logits, targets],
                      {"reduction": reduction, "ignore_index": 7})
    compiled = gpu.compile_nvvm(text, chip="sm_90")
    no_device_malloc(compiled)
    # The row loss, then for the sum or the mean one block over the rows.
    assert len(compiled) == kernels, [k.module for k in compiled]
    rows = compiled[0].ptx
    # The exponentials in the row loop; max and sum across the block.
    assert "ex2.approx" in rows and "shfl.sync.bfly" in rows and "bar.sync" in rows
    assert ".maxntid 256, 1, 1" in rows  # the default max-threads
    if HAVE_PTXAS:
        for k in compiled:
            (report,) = gpu.ptxas(k.ptx, "sm_90")
            assert report.stack_bytes == 0 and report.spill_stores == 0, report
            assert report.shared_bytes > 0, report


# Held-out shapes: more rows than the tests', a K of several blocks.
@pytest.mark.parametrize("qtype", ["q4_0", "q8_0", "q4_k", "q6_k"])
def test_qmatmul_decodes_in_registers(qtype):
    k, n = 2048, 96
    rows = random_blocks(qtype, n, k, seed=1)
    text = fused_text("qmatmul", [np.zeros((2, k), np.float32), as_words(rows)],
                      {"quant_type": qtype, "k": k, "n": n})
    for chip in ("sm_80", "sm_90"):
        # One kernel: no dequantized weight is written by a kernel of its own.
        (kernel,) = gpu.compile_nvvm(text, chip=chip)
        no_device_malloc([kernel])
        assert "shfl.sync.bfly" in kernel.ptx and ".maxntid 256, 1, 1" in kernel.ptx
        # A thread's chunk of 8 consecutive k: its activations two 16-byte
        # loads, the only vector loads; in q4_0 and q8_0 its 8 weights
        # share their block's f16 scale, converted once.
        assert re.findall(r"ld\.global\.v\d[.\w]*", kernel.ptx) == ["ld.global.v4.b32"] * 2
        if qtype in ("q4_0", "q8_0"):
            assert kernel.ptx.count("cvt.f32.f16") == 1
            # Its 8 bytes of quants lie in 3 consecutive words (blocks of
            # 18 and 34 bytes: a chunk starts 2 bytes into a word at
            # worst), each read once, and the scale's word: 4 word loads,
            # where a load a byte was 9.
            assert len(re.findall(r"ld\.global(?:\.nc)?\.b32", kernel.ptx)) == 4
        if HAVE_PTXAS:
            (report,) = gpu.ptxas(kernel.ptx, chip)
            assert report.stack_bytes == 0 and report.spill_stores == 0, report


@pytest.mark.parametrize("qtype", ["q4_0", "q8_0", "q4_k", "q6_k"])
def test_qmatmul_prefill_is_one_kernel_of_register_tiles(qtype):
    # Held-out shape: 64 rows, K of 8 blocks or super-blocks, N = 96.
    k, n = 8 * (256 if qtype.endswith("_k") else 32), 96
    rows = random_blocks(qtype, n, k, seed=2)
    for m in (64, 20):
        text = fused_text("qmatmul", [np.zeros((m, k), np.float32), as_words(rows)],
                          {"quant_type": qtype, "k": k, "n": n})
        # One kernel: the weight is decoded in it, never written out as f32.
        (kernel,) = gpu.compile_nvvm(text, chip="sm_90")
        no_device_malloc([kernel])
        assert kernel.ptx.count("fma.rn.f32") >= 16
        # 64 rows: the activations and the decoded weight staged in shared
        # memory, 32 x 32 block tiles (3 of 64 x 32 would leave most SMs
        # idle); 20 rows: read through the caches.
        assert ("bar.sync" in kernel.ptx) == (m == 64)
        if HAVE_PTXAS:
            (report,) = gpu.ptxas(kernel.ptx, "sm_90")
            assert report.stack_bytes == 0 and report.spill_stores == 0, report
            # The activations' tile [32, 16] and the weight's [16, 32], its
            # rows 36 words apart (written along K, down the columns).
            assert report.shared_bytes == ((32 * 16 + 16 * 36) * 4 if m == 64 else 0), report


# awq with many rows where its tiles are not staged (N = 48: not a
# multiple of 32): its dequantization (an elementwise op of the words,
# zeros and scales, f16 scales widened by an op of their own) is computed
# per reduction step of 8 k, in registers. Computed whole before the
# steps, it was a thread's [K, 4] f32 columns in local memory: 64 KiB a
# thread at K = 4096.
@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
def test_awq_prefill_register_tiles_decode_per_step(dtype):
    from test_codegen_quantized import awq_inputs
    a, qw, qz, s, _ = awq_inputs((20, 4096), 48, 128, dtype)
    text = fused_text("awq_matmul", [a, qw, qz, s], {"group_size": 128})
    for chip in ("sm_80", "sm_90"):
        (kernel,) = gpu.compile_nvvm(text, chip=chip)
        no_device_malloc([kernel])
        assert "bar.sync" not in kernel.ptx and kernel.ptx.count("fma.rn.f32") >= 16
        assert ".local" not in kernel.ptx
        if HAVE_PTXAS:
            (report,) = gpu.ptxas(kernel.ptx, chip)
            assert report.stack_bytes == 0 and report.spill_stores == 0, report


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
def test_linear_is_one_kernel_of_register_tiles(dtype):
    # Held-out shape: a batch dim, K not a multiple of the step's 8.
    args = [np.zeros((3, 96, 100), dtype), np.zeros((100, 80), dtype), np.zeros((80,), dtype)]
    (kernel,) = gpu.compile_nvvm(fused_text("fused_linear", args), chip="sm_90")
    no_device_malloc([kernel])
    # Each thread's 4 x 4 tile accumulates with fused multiply-adds.
    assert kernel.ptx.count("fma.rn.f32") >= 16
    if HAVE_PTXAS:
        (report,) = gpu.ptxas(kernel.ptx, "sm_90")
        assert report.stack_bytes == 0 and report.spill_stores == 0, report


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
def test_linear_stages_tiles_in_shared_memory(dtype):
    # Held-out shape: a leading dim, 64 x 32 block tiles, K in 17 steps of 8
    # (a grid of 18, for a GPU of 18 SMs: more would take 32 x 32 tiles).
    args = [np.zeros((2, 192, 136), dtype), np.zeros((136, 96), dtype), np.zeros((96,), dtype)]
    for chip in ("sm_80", "sm_90"):
        (kernel,) = gpu.compile_nvvm(fused_text("fused_linear", args), chip=chip, compute_units=18)
        no_device_malloc([kernel])
        # A step: copy the tiles, barrier, accumulate from shared memory,
        # barrier; the accumulators are registers (no local memory).
        assert kernel.ptx.count("bar.sync") >= 3
        assert "ld.shared" in kernel.ptx and "st.shared" in kernel.ptx
        assert ".local" not in kernel.ptx
        assert kernel.ptx.count("fma.rn.f32") >= 16 * 8
        # The tiles are copied in chunks of consecutive columns, a vector
        # load each: A's [64, 8] in 4s, B's [8, 32] in 2s (4 would leave the
        # 128 threads 16 rows a pass); no global load of one element.
        loads = re.findall(r"^\s*ld\.global(\.v\d)?\.", kernel.ptx, re.M)
        assert sorted(loads) == [".v2", ".v4", ".v4"], loads  # B, A, the bias
        if HAVE_PTXAS:
            (report,) = gpu.ptxas(kernel.ptx, chip)
            # The A tile [64, 8] and the B tile [8, 32], f32.
            assert report.shared_bytes == (64 * 8 + 8 * 32) * 4, report
            assert report.stack_bytes == 0 and report.spill_stores == 0, report


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
def test_linear_takes_large_tiles_where_they_fill_the_gpu(dtype):
    # Held-out shape: 1536 x 1280 is 12 x 10 = 120 tiles of 128 x 128: a
    # block for each of sm_80's 108 multiprocessors (A100), not for sm_90's
    # 132 (H100), which keeps 64 x 64 tiles (480 blocks).
    args = [np.zeros((1536, 384), dtype), np.zeros((384, 1280), dtype), np.zeros((1280,), dtype)]
    for chip, large in (("sm_80", True), ("sm_90", False)):
        (kernel,) = gpu.compile_nvvm(fused_text("fused_linear", args), chip=chip)
        no_device_malloc([kernel])
        assert ".maxntid 16, 16, 1" in kernel.ptx
        # A step's products: 8 x 8 or 4 x 4 a thread, 16 deep.
        assert kernel.ptx.count("fma.rn.f32") == (64 if large else 16) * 16
        # f32: every global load and store moves 16 bytes, the chunks of
        # the tiles, the bias and the output (an 8 x 8 tile's rows in two
        # halves). f16 in 8 x 8 tiles: the A chunks, the bias and the
        # output's rows 16 bytes, the B chunks 8 (4 consecutive columns of
        # B are consecutive in its shared tile); in 4 x 4 tiles the output's
        # rows and all chunks 8 (8 would leave the [64, 16] tile's 256
        # threads more rows than it has).
        loads = re.findall(r"^\s*ld\.global(\.v\d\.b\d+)", kernel.ptx, re.M)
        stores = re.findall(r"^\s*st\.global(\.v\d\.b\d+)", kernel.ptx, re.M)
        if dtype == np.float32:
            assert set(loads) == set(stores) == {".v4.b32"}, (loads, stores)
        elif large:
            assert sorted(loads) == [".v4.b16"] * 2 + [".v4.b32"] * 2, loads
            assert stores == [".v4.b32"] * 8, stores
        else:
            assert set(loads) == {".v4.b16"} and set(stores) == {".v2.b32"}, (loads, stores)
        if HAVE_PTXAS:
            (report,) = gpu.ptxas(kernel.ptx, chip)
            # The A tile [T, 16] and the B tile [16, T], f32.
            tile = 128 if large else 64
            assert report.shared_bytes == 2 * tile * 16 * 4, report
            assert report.stack_bytes == 0 and report.spill_stores == 0, report
            assert report.registers <= (128 if large else 64), report


def test_compute_units_override_the_chip():
    # The 12 x 10 grid of 128 x 128 tiles above, for a GPU of each
    # generation with other SM counts: an sm_90 part with 108 SMs takes the
    # large tiles, an sm_80 part with 132 does not; with 1,000, 480 blocks
    # of 64 x 64 are short too, and 32 x 32 tiles (1,920 blocks) are taken.
    args = [np.zeros((1536, 384), np.float32), np.zeros((384, 1280), np.float32),
            np.zeros((1280,), np.float32)]
    text = fused_text("fused_linear", args)
    for chip, units, threads in (("sm_90", 108, "16, 16"), ("sm_80", 132, "16, 16"),
                                 ("sm_80", 1000, "8, 8")):
        (kernel,) = gpu.compile_nvvm(text, chip=chip, compute_units=units)
        assert f".maxntid {threads}, 1" in kernel.ptx, (chip, units)
        large = units == 108
        assert kernel.ptx.count("fma.rn.f32") == (64 if large else 16) * 16, (chip, units)
    # gfx942 (304 compute units by default) with 120: the large tiles, each
    # thread's 8 x 8 tile written in 16 aligned 16-byte halves.
    (kernel,) = gpu.compile_rocdl(text, chip="gfx942", compute_units=120)
    stores = re.findall(r"store <4 x float> %\w+, ptr %\w+, align 16", kernel.llvm_ir)
    assert len(stores) == 16, stores
    with pytest.raises(gpu.CompileError, match="compute-units must be 0"):
        gpu.compile_nvvm(text, compute_units=-1)


def test_linear_f16_takes_16_byte_chunks_in_small_tiles():
    # Held-out shape: 96 x 32 outputs in 32 x 32 tiles of 4 x 4 (64
    # threads), K = 48: the [32, 16] A tile and the [16, 32] B tile each
    # copied in chunks of 8 f16 (16 bytes), one per thread; the bias's 4
    # f16 are 8 bytes.
    args = [np.zeros((96, 48), np.float16), np.zeros((48, 32), np.float16), np.zeros((32,), np.float16)]
    (kernel,) = gpu.compile_nvvm(fused_text("fused_linear", args), chip="sm_90")
    loads = re.findall(r"^\s*ld\.global(\.v\d\.b\d+)", kernel.ptx, re.M)
    assert sorted(loads) == [".v4.b16", ".v4.b32", ".v4.b32"], loads


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
@pytest.mark.parametrize("d", [32, 64])
def test_attention_stages_key_blocks_in_shared_memory(d, dtype):
    # Held-out shape: causal, GQA, sequences off the blocks (200 queries in
    # blocks of 64 rows, 200 keys in blocks of 16).
    q = np.zeros((1, 4, 200, d), dtype)
    kv = np.zeros((1, 2, 200, d), dtype)
    for chip in ("sm_80", "sm_90"):
        kernels = gpu.compile_nvvm(fused_text("flash_attn", [q, kv, kv], {"softmax_scale": 0.125, "causal": True}),
                                   chip=chip)
        no_device_malloc(kernels)
        # One kernel computes the attention (another cuts the padded rows
        # off the result).
        (main,) = [k for k in kernels if "ex2.approx" in k.ptx]
        # A key block: copy, barrier, update the rows, barrier; the rows'
        # state is registers (no local memory).
        assert main.ptx.count("bar.sync") >= 3
        assert "ld.shared" in main.ptx and "st.shared" in main.ptx
        assert ".local" not in main.ptx
        if HAVE_PTXAS:
            (report,) = gpu.ptxas(main.ptx, chip)
            # The keys [D, 16] (rows of 20 words: written down the columns)
            # and the values [16, D], f32; the block's 64 query rows, each
            # read by its thread at every key block, copied once (rows of
            # D + 4 words: 16-byte reads free of bank conflicts).
            assert report.shared_bytes == (d * 20 + 16 * d + 64 * (d + 4)) * 4, report
            assert report.stack_bytes == 0 and report.spill_stores == 0, report


@pytest.mark.parametrize("d", [48, 80, 96])
def test_attention_heads_staged_by_thread_groups(d):
    # Heads of 48, 80 and 96 for sm_90: the 64 threads copy a [D, 16] key
    # block in groups of gcd(D, 64) along D and a [16, D] value block in
    # groups of gcd(D / 4, 64) along its chunks of 4, the groups over the
    # other dim (a copy needed D a multiple of 64 threads, or 64 of D).
    q = np.zeros((1, 4, 200, d), np.float32)
    kv = np.zeros((1, 2, 200, d), np.float32)
    kernels = gpu.compile_nvvm(fused_text("flash_attn", [q, kv, kv], {"softmax_scale": 0.125, "causal": True}),
                               chip="sm_90")
    no_device_malloc(kernels)
    (main,) = [k for k in kernels if "ex2.approx" in k.ptx]
    assert ".maxntid 64, 1, 1" in main.ptx and "st.shared" in main.ptx and ".local" not in main.ptx
    if HAVE_PTXAS:
        (report,) = gpu.ptxas(main.ptx, "sm_90")
        # The keys (rows of 20 words) and the values, f32 (each variable
        # aligned to up to 512 bytes); the 64 query rows (rows of D + 4
        # words) where all of it fits own-rows-bytes (32 KiB): D = 48, not
        # 80 (32.25 KiB) or 96.
        tiles = d * 20 + 16 * d
        own = 64 * (d + 4) if (tiles + 64 * (d + 4)) * 4 <= 32 * 1024 else 0
        assert own or d != 48
        assert 0 <= report.shared_bytes - (tiles + own) * 4 < 512, report
        assert report.stack_bytes == 0 and report.spill_stores == 0, report


@pytest.mark.parametrize("name,d", [("flash_attn", 128), ("flash_attn_backward_q", 64),
                                    ("flash_attn_backward_k", 64), ("flash_attn_backward_v", 128)])
def test_attention_stages_wider_heads_from_sm_90(name, d):
    # fuel-to-nvvm stages heads up to 128 wide (dq, dk: 64) from sm_90 on,
    # whose ptxas fits them without spills; for sm_80 they keep a thread per
    # row.
    q = np.zeros((1, 4, 200, d), np.float32)
    kv = np.zeros((1, 2, 200, d), np.float32)
    args = [q, kv, kv] + ([q] if name != "flash_attn" else [])
    text = fused_text(name, args, {"softmax_scale": 0.125, "window_size_left": 50})
    for chip, staged in (("sm_80", False), ("sm_90", True)):
        kernels = gpu.compile_nvvm(text, chip=chip)
        no_device_malloc(kernels)
        # dk and dv: every query row's lse and D, then the key rows' sums.
        computing = [k for k in kernels if "ex2.approx" in k.ptx]
        assert len(computing) == (2 if name[-1] in "kv" else 1), chip
        for main in computing:
            assert ("st.shared" in main.ptx) == staged, chip
            if HAVE_PTXAS and staged:
                (report,) = gpu.ptxas(main.ptx, chip)
                assert report.stack_bytes == 0 and report.spill_stores == 0, report


@pytest.mark.parametrize("name", ["flash_attn", "flash_attn_backward_q", "flash_attn_backward_k",
                                  "flash_attn_backward_v"])
def test_attention_short_sequences_stage_padded_blocks(name):
    # 40 queries and 48 keys, whose blocks on the CPU are 8 and 48 rows: the
    # staged forms pad them to blocks of 64 rows rather than leave them to a
    # thread per row in blocks of part of a warp.
    q = np.zeros((1, 8, 40, 32), np.float32)
    kv = np.zeros((1, 8, 48, 32), np.float32)
    args = [q, kv, kv] + ([q] if name != "flash_attn" else [])
    kernels = gpu.compile_nvvm(fused_text(name, args, {"softmax_scale": 0.1, "causal": True}), chip="sm_80")
    no_device_malloc(kernels)
    computing = [k for k in kernels if "ex2.approx" in k.ptx]
    assert len(computing) == (2 if name[-1] in "kv" else 1)
    for kernel in computing:
        assert ".maxntid 64, 1, 1" in kernel.ptx and "st.shared" in kernel.ptx
        if HAVE_PTXAS:
            (report,) = gpu.ptxas(kernel.ptx, "sm_80")
            assert report.stack_bytes == 0 and report.spill_stores == 0, report


# (batch, heads, kv heads, queries, keys, head dim, dtype, partitions,
# threads, lanes a key)
SPLIT_KEYS = [(2, 8, 2, 1, 3000, 64, np.float32, 5, 128, 16),
              (16, 16, 4, 1, 2001, 128, np.float16, 1, 128, 32),
              (2, 8, 2, 3, 3000, 32, np.float32, 5, 128, 8),
              (1, 2, 1, 1, 1049, 96, np.float32, 2, 128, 32),
              (1, 4, 1, 1, 900, 112, np.float16, 1, 128, 32),
              (1, 4, 1, 1, 900, 80, np.float16, 1, 128, 8),
              (1, 2, 1, 1, 1049, 256, np.float32, 2, 128, 32)]


@pytest.mark.parametrize("b,h,hkv,sq,sk,d,dtype,partitions,threads,lanes", SPLIT_KEYS,
                         ids=["decode-5-partitions", "decode-256-rows-f16", "3-queries-window",
                              "decode-heads-of-96", "decode-heads-of-112-f16", "decode-heads-of-80-f16",
                              "decode-heads-of-256"])
def test_attention_with_few_queries_splits_the_keys(b, h, hkv, sq, sk, d, dtype, partitions, threads,
                                                    lanes):
    # Held-out decoding shapes, GQA, causal (and a window): a block per
    # (batch, head, query) and partition of its keys (partitions of 512
    # keys at least, until there are 256 blocks) whose 128 threads form
    # groups of d / 4 lanes (at most a warp), a group taking a share of
    # the keys and each lane pieces of 4 elements of a key (a 16-byte load
    # each for f32, every load of the kernel a vector), the lanes' dot
    # products summed by butterfly shuffles within the group (log2(lanes)
    # of them a key, 4 keys a step); then a barrier and the combine; with
    # partitions, a second kernel combines theirs. Nothing copies or
    # transposes the keys first. Heads of 96 and 112: a warp a key, 24 and
    # 28 of its lanes a piece each (the others' clamped to the row's last
    # and left out); 80: 8 lanes, 3 pieces each but 4 lanes 2 (the
    # accumulator rows in workgroup memory padded to 8 x 3 pieces); 256:
    # 2 pieces a lane (32 bytes, which read as one vector went a float at a
    # time).
    q = np.zeros((b, h, sq, d), dtype)
    kv = np.zeros((b, hkv, sk, d), dtype)
    params = {"softmax_scale": 0.125, "causal": True}
    if sq > 1:
        params["window_size_left"] = 300
    for chip in ("sm_80", "sm_90"):
        kernels = gpu.compile_nvvm(fused_text("flash_attn", [q, kv, kv], params), chip=chip)
        no_device_malloc(kernels)
        assert len(kernels) == (2 if partitions > 1 else 1)
        (split,) = [k for k in kernels if "st.shared" in k.ptx]
        assert f".maxntid {threads}, 1, 1" in split.ptx and "bar.sync" in split.ptx
        shuffles = re.findall(r"shfl\.sync\.bfly\.b32\s[^;]*, (\d+), 31, -1;", split.ptx)
        assert sorted(set(map(int, shuffles))) == [1 << i for i in range(lanes.bit_length() - 1)]
        assert len(shuffles) == 4 * (lanes.bit_length() - 1)
        if dtype == np.float32:
            # A lane's 4 floats of a key and of a value: 16-byte loads.
            assert "ld.global.v4.b32" in split.ptx or "ld.global.v4.f32" in split.ptx
        # No element loaded alone: every global load is a lane's piece.
        assert not re.findall(r"ld\.global(?:\.nc)?\.[bfus](?:16|32)\s", split.ptx)
        if HAVE_PTXAS:
            for kernel in kernels:
                (report,) = gpu.ptxas(kernel.ptx, chip)
                # The split: each group's accumulator row and each
                # thread's max and sum; the combine of partitions: nothing.
                padded = lanes * -(-d // (4 * lanes)) * 4
                shared = ((threads // lanes) * padded + 2 * threads) * 4 if kernel is split else 0
                assert report.shared_bytes == shared, report
                assert report.stack_bytes == 0 and report.spill_stores == 0, report


@pytest.mark.parametrize("d,dv", [(40, 40), (128, 128), (96, 64)])
def test_attention_is_a_thread_per_query_row(d, dv):
    # Held-out shape: causal, GQA, sequences off the blocks; a head dim of 40
    # (not a multiple of 16), 128 or 96 (wider than staged before sm_90;
    # sm_80 here): no staging.
    q = np.zeros((1, 4, 200, d), np.float32)
    keys = np.zeros((1, 2, 200, d), np.float32)
    values = np.zeros((1, 2, 200, dv), np.float32)
    kernels = gpu.compile_nvvm(fused_text("flash_attn", [q, keys, values], {"softmax_scale": 0.125, "causal": True}),
                               chip="sm_80")
    no_device_malloc(kernels)
    assert not any("st.shared" in k.ptx and "ex2.approx" in k.ptx for k in kernels)
    # One kernel computes the attention (the others pad and transpose q, k, v
    # and cut the result): it has the exponentials, in a loop over keys.
    (main,) = [k for k in kernels if "ex2.approx" in k.ptx]
    assert ".maxntid" in main.ptx
    if HAVE_PTXAS:
        (report,) = gpu.ptxas(main.ptx, "sm_80")
        assert report.spill_stores == 0 and report.stack_bytes == 0, report


@pytest.mark.parametrize("d,dv", [(96, 64), (80, 64)])
def test_attention_rows_steps_fit_the_keys(d, dv):
    # Keys wider than 64 and values of 64 (a thread per row on sm_80): the
    # contractions take steps of 8, as for wide values. In steps of 16 (the
    # whole key block, from the values' width alone), q . k held a [16, 16]
    # block of keys a step: 168 registers and 3.5 KiB of spills with a
    # window (64 queries against 16 keys).
    q = np.zeros((2, 4, 64, d), np.float32)
    keys = np.zeros((2, 1, 16, d), np.float32)
    values = np.zeros((2, 1, 16, dv), np.float32)
    text = fused_text("flash_attn", [q, keys, values], {"softmax_scale": 0.3, "window_size_left": 3})
    kernels = gpu.compile_nvvm(text, chip="sm_80")
    no_device_malloc(kernels)
    (main,) = [k for k in kernels if "ex2.approx" in k.ptx]
    assert "st.shared" not in main.ptx and ".local" not in main.ptx
    if HAVE_PTXAS:
        (report,) = gpu.ptxas(main.ptx, "sm_80")
        assert report.stack_bytes == 0 and report.spill_stores == 0, report


@pytest.mark.parametrize("max_blocks,count", [(24, 1), (200, 2)], ids=["384-tokens", "3200-tokens"])
def test_paged_attention_is_a_block_per_query_head(max_blocks, count):
    # Held-out shapes: 4 sequences, GQA (8 query heads on 2), D = 128,
    # tables of 24 and 200 blocks of 16. A block per (sequence, head) and
    # partition of 512 tokens: the scores into shared memory (256 threads,
    # 8 warps that each take a token at a time, a lane 4 elements of its
    # key: one 16-byte load, and 5 butterfly shuffles sum the dot product;
    # a row of 512 slots, 2 KiB); the row's max and the sum of its
    # exponentials by two block reductions (a slot a thread, 1 KiB each,
    # and 32 floats of warp partials each), the exponentials once a token
    # in place; then the output a thread per column; 3,200 tokens are 7
    # partitions, combined by a second kernel. No [S, tokens] tensor in
    # global memory.
    z = np.zeros
    args = [z((4, 8, 128), np.float32), z((900, 2, 16, 128), np.float32), z((900, 2, 16, 128), np.float32),
            z((4, max_blocks), np.int32), z((4,), np.int32)]
    kernels = gpu.compile_nvvm(fused_text("paged_attn", args, {"softmax_scale": 0.088, "block_size": 16}),
                               chip="sm_90")
    no_device_malloc(kernels)
    assert len(kernels) == count, [k.module for k in kernels]
    scores = kernels[0]
    assert ".maxntid 256, 1, 1" in scores.ptx and "ex2.approx" in scores.ptx
    assert "bar.sync" in scores.ptx and ".shared" in scores.ptx
    # The dot products' shuffles come first, before any barrier.
    first = scores.ptx.split("bar.sync")[0]
    shuffles = re.findall(r"shfl\.sync\.bfly\.b32\s[^;]*, (\d+), 31, -1;", first)
    assert sorted(map(int, shuffles)) == [1, 2, 4, 8, 16]
    # The output's loop (after the last barrier) computes no exponential.
    assert "ex2.approx" in scores.ptx and "ex2.approx" not in scores.ptx.split("bar.sync")[-1]
    assert re.search(r"ld\.global\.v4\.(b32|f32)", scores.ptx)
    if count == 2:
        assert ".maxntid 128, 1, 1" in kernels[1].ptx and "ex2.approx" in kernels[1].ptx
    if HAVE_PTXAS:
        reports = [r for k in kernels for r in gpu.ptxas(k.ptx, "sm_90")]
        assert reports[0].shared_bytes == 2048 + 2 * (256 * 4 + 32 * 4), reports[0]
        for report in reports:
            assert report.stack_bytes == 0 and report.spill_stores == 0, report


def test_rope_is_one_kernel():
    # Held-out shape: [2, 8, 128, 64] f16 as 2,048 rows of 32 pairs, 4 rows
    # a block. The decomposition is four kernels or more.
    args = [np.zeros((2, 8, 128, 64), np.float16), np.zeros((128, 64), np.float16),
            np.zeros((128, 64), np.float16)]
    text = fused_text("rope", args)
    (kernel,) = gpu.compile_nvvm(text, chip="sm_90")
    assert len(gpu.compile_nvvm(text, chip="sm_90", codegen=False)) >= 4
    assert ".maxntid 32, 4, 1" in kernel.ptx
    if HAVE_PTXAS:
        (report,) = gpu.ptxas(kernel.ptx, "sm_90")
        assert report.stack_bytes == 0 and report.spill_stores == 0, report


def test_reduce_max_backward_reduces_in_blocks():
    # Held-out shape: groups of rows of 3,000 (256 threads a block, shuffles
    # and shared memory), then dx elementwise; no kernel of one thread.
    args = [np.zeros((48, 3000), np.float32), np.zeros((48, 1), np.float32)]
    kernels = gpu.compile_nvvm(fused_text("reduce_max_to_backward", args), chip="sm_90")
    assert len(kernels) == 2, [k.module for k in kernels]
    (block,) = [k for k in kernels if "shfl.sync" in k.ptx]
    assert ".maxntid 256, 1, 1" in block.ptx
    assert all(".maxntid 1, 1, 1" not in k.ptx for k in kernels)
    if HAVE_PTXAS:
        for kernel in kernels:
            (report,) = gpu.ptxas(kernel.ptx, "sm_90")
            assert report.stack_bytes == 0 and report.spill_stores == 0, report


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
def test_attention_backward_q_stages_key_blocks_in_shared_memory(dtype):
    # Held-out shape: windowed, GQA, sequences off the blocks.
    q = np.zeros((1, 4, 200, 32), dtype)
    kv = np.zeros((1, 2, 200, 32), dtype)
    for chip in ("sm_80", "sm_90"):
        kernels = gpu.compile_nvvm(fused_text("flash_attn_backward_q", [q, kv, kv, q],
                                              {"softmax_scale": 0.125, "window_size_left": 50}),
                                   chip=chip)
        no_device_malloc(kernels)
        # One kernel computes dq (another cuts the padded rows off it): two
        # key loops, each a copy, a barrier, the rows' update, a barrier.
        (main,) = [k for k in kernels if "ex2.approx" in k.ptx]
        assert main.ptx.count("bar.sync") >= 5
        assert "ld.shared" in main.ptx and "st.shared" in main.ptx
        if HAVE_PTXAS:
            (report,) = gpu.ptxas(main.ptx, chip)
            # The keys and values [32, 16] (transposed, rows of 20 words),
            # whose buffers the two loops share (one after the other, a
            # barrier between), and the second loop's keys [16, 32], f32;
            # the block's 64 rows of q and of do, read at every key block of
            # both loops, copied once (rows of 36 words).
            assert report.shared_bytes == (2 * 32 * 20 + 16 * 32 + 2 * 64 * 36) * 4, report
            assert report.stack_bytes == 0 and report.spill_stores == 0, report


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
@pytest.mark.parametrize("which", ["k", "v"])
def test_attention_backward_kv_stages_query_blocks_in_shared_memory(which, dtype):
    # Held-out shape: windowed, GQA, sequences off the blocks. One kernel
    # writes every query row's lse and D over staged key blocks, one adds up
    # each key row's gradient over staged query blocks (another cuts the
    # padded rows off it).
    q = np.zeros((1, 4, 200, 32), dtype)
    kv = np.zeros((1, 2, 200, 32), dtype)
    for chip in ("sm_80", "sm_90"):
        kernels = gpu.compile_nvvm(fused_text(f"flash_attn_backward_{which}", [q, kv, kv, q],
                                              {"softmax_scale": 0.125, "window_size_left": 50}),
                                   chip=chip)
        no_device_malloc(kernels)
        stats, grads = [k for k in kernels if "ex2.approx" in k.ptx]
        for kernel in (stats, grads):
            assert kernel.ptx.count("bar.sync") >= 2
            assert "ld.shared" in kernel.ptx and "st.shared" in kernel.ptx
            assert ".local" not in kernel.ptx
        if HAVE_PTXAS:
            # lse and D: the keys and values [32, 16] (transposed, rows of
            # 20 words; dv needs no D, so no values); the gradient: the
            # queries and do [32, 16] (transposed) and q [16, 32] (dk), or
            # the queries [32, 16] (transposed) and do [16, 32] (dv), f32.
            # Each kernel's block of 64 rows that its threads read at every
            # step, copied once (rows of 36 words): q and do (dv: q; it
            # needs no dp), k and v (dv: k).
            # (Transposed tiles, others, own rows) a kernel.
            tiles = {"k": ((2, 0, 2), (2, 1, 2)), "v": ((1, 0, 1), (1, 1, 1))}[which]
            for kernel, (transposed, plain, own) in zip((stats, grads), tiles):
                (report,) = gpu.ptxas(kernel.ptx, chip)
                assert report.shared_bytes == (transposed * 32 * 20 + plain * 16 * 32
                                               + own * 64 * 36) * 4, report
                assert report.stack_bytes == 0 and report.spill_stores == 0, report


@pytest.mark.parametrize("which,computing", [("q", 1), ("k", 2)])
def test_attention_backward_is_a_thread_per_row(which, computing):
    # Held-out shape: causal, GQA, sequences off the blocks, a head dim of 64
    # (for sm_80 dq and dk stage up to 32). dq: one kernel computes each query
    # row's lse and D and then its dq; dk, dv: one kernel writes every query
    # row's lse and D, one adds up each key row's gradient (the others pad
    # and transpose the operands).
    q = np.zeros((1, 4, 200, 64), np.float32)
    kv = np.zeros((1, 2, 200, 64), np.float32)
    kernels = gpu.compile_nvvm(fused_text(f"flash_attn_backward_{which}", [q, kv, kv, q],
                                          {"softmax_scale": 0.125, "causal": True}), chip="sm_80")
    no_device_malloc(kernels)
    exps = [k for k in kernels if "ex2.approx" in k.ptx]
    assert len(exps) == computing, [k.module for k in exps]
    if HAVE_PTXAS:
        for kernel in exps:
            (report,) = gpu.ptxas(kernel.ptx, "sm_80")
            assert report.stack_bytes == 0 and report.spill_stores == 0, report


def test_scans_are_a_thread_per_channel():
    # Held-out shapes: 1,536 channels (6 blocks of 256), a state of 128.
    z = np.zeros
    selective = [z((2, 64, 1536), np.float32)] * 2 + [z((1536, 16), np.float32)] + [z((2, 64, 16), np.float32)] * 2
    ssd = [z((1, 32, 8, 64), np.float32), z((1, 32, 8), np.float32), z((8,), np.float32)] + \
        [z((1, 32, 8, 128), np.float32)] * 2
    for name, args, params, count, threads in [
            ("selective_scan", selective, {"delta_softplus": True}, 2, 256),  # a transposed, the scan
            ("ssd_chunk_scan", ssd, {"chunk_size": 32}, 1, 64)]:
        kernels = gpu.compile_nvvm(fused_text(name, args, params), chip="sm_90")
        no_device_malloc(kernels)
        assert len(kernels) == count, [k.module for k in kernels]
        scan = kernels[-1]
        # The whole sequence in one launch: the loop over it is in the kernel.
        assert f".maxntid {threads}, 1, 1" in scan.ptx and "ex2.approx" in scan.ptx
        if HAVE_PTXAS:
            (report,) = gpu.ptxas(scan.ptx, "sm_90")
            assert report.stack_bytes == 0 and report.spill_stores == 0, report


# Held-out shapes: a 3x3 convolution of 48 filters over 28 columns (7
# column tiles by 12 filter tiles by 2 rows a block), a depthwise f16 one
# with stride 2 (a filter a tile: 7 by 32), a transposed one of 8 filters
# (7 by 2 by 14 rows).
CONV_KERNELS = [
    ("conv2d", [((2, 32, 28, 28), np.float32), ((48, 32, 3, 3), np.float32), ((48,), np.float32)],
     {"padding": (1, 1)}, "7, 12, 2"),
    ("conv2d", [((2, 64, 56, 56), np.float16), ((64, 1, 3, 3), np.float16)],
     {"padding": (1, 1), "groups": 64, "stride": (2, 2)}, "7, 32, 1"),
    ("conv_transpose_2d", [((1, 16, 14, 14), np.float32), ((16, 8, 4, 4), np.float32)],
     {"padding": (1, 1), "stride": (2, 2)}, "7, 2, 14"),
]


@pytest.mark.parametrize("name,args,params,block", CONV_KERNELS, ids=lambda v: str(v))
def test_convolution_is_a_kernel_of_register_tiles(name, args, params, block):
    kernels = gpu.compile_nvvm(fused_text(name, [np.zeros(s, t) for s, t in args], params), chip="sm_90")
    no_device_malloc(kernels)
    # One kernel convolves (the others pad the input and transpose the
    # weight): each thread's tile accumulates with fused multiply-adds.
    (conv,) = [k for k in kernels if "fma.rn.f32" in k.ptx]
    assert f".maxntid {block}" in conv.ptx
    if HAVE_PTXAS:
        (report,) = gpu.ptxas(conv.ptx, "sm_90")
        assert report.stack_bytes == 0 and report.spill_stores == 0, report


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
def test_conv2d_staged_is_one_kernel(dtype):
    # Held-out shape: 96 filters, stride 2, 8 x 8 output pixels, C * kh * kw
    # = 288: one kernel (no padded copy of the input, no transposed weight),
    # 32 filters by 64 pixels a block, its tiles in shared memory (6 blocks,
    # for a GPU of 6 SMs: more would take 32 x 32 tiles).
    args = [np.zeros((2, 32, 16, 16), dtype), np.zeros((96, 32, 3, 3), dtype), np.zeros((96,), dtype)]
    (kernel,) = gpu.compile_nvvm(fused_text("conv2d", args, {"padding": (1, 1), "stride": (2, 2)}),
                                 chip="sm_90", compute_units=6)
    no_device_malloc([kernel])
    assert kernel.ptx.count("bar.sync") >= 3 and "ld.shared" in kernel.ptx
    assert ".maxntid 16, 8, 1" in kernel.ptx
    # A thread copies a chunk of 4 consecutive weights (one vector load)
    # and 8 pixels (gathered one by one, zero in the padding); the bias is
    # read 4 at once.
    loads = re.findall(r"^\s*ld\.global(\.v\d)?\.", kernel.ptx, re.M)
    assert sorted(loads) == [""] * 8 + [".v4"] * 2, loads
    if HAVE_PTXAS:
        (report,) = gpu.ptxas(kernel.ptx, "sm_90")
        assert report.shared_bytes == (32 * 16 + 16 * 64) * 4, report
        assert report.stack_bytes == 0 and report.spill_stores == 0, report


def test_conv_transpose_2d_staged_is_one_kernel():
    # Held-out shape: 2 groups of 32 filters, stride 2, dilation 2: one
    # kernel (no spread copy of the input), 32 filters by 64 pixels a block
    # (32 blocks, for a GPU of 32 SMs: more would take 32 x 32 tiles).
    args = [np.zeros((1, 32, 15, 15), np.float32), np.zeros((32, 32, 3, 3), np.float32)]
    params = {"padding": (1, 1), "stride": (2, 2), "dilation": (2, 2), "groups": 2, "output_padding": (1, 1)}
    (kernel,) = gpu.compile_nvvm(fused_text("conv_transpose_2d", args, params), chip="sm_80",
                                 compute_units=32)
    no_device_malloc([kernel])
    assert kernel.ptx.count("bar.sync") >= 3 and "ld.shared" in kernel.ptx
    if HAVE_PTXAS:
        (report,) = gpu.ptxas(kernel.ptx, "sm_80")
        assert report.shared_bytes == (32 * 16 + 16 * 64) * 4, report
        assert report.stack_bytes == 0 and report.spill_stores == 0, report


def test_causal_conv1d_is_one_kernel():
    # Held-out shape: 2,048 outputs a channel (two stretches of 1,024).
    args = [np.zeros((2, 96, 2051), np.float32), np.zeros((96, 1, 4), np.float32), np.zeros((96,), np.float32)]
    (kernel,) = gpu.compile_nvvm(fused_text("causal_conv1d", args, {"use_silu": True}), chip="sm_90")
    no_device_malloc([kernel])
    assert ".maxntid 256, 1, 1" in kernel.ptx and kernel.ptx.count("fma.rn.f32") >= 16
    if HAVE_PTXAS:
        (report,) = gpu.ptxas(kernel.ptx, "sm_90")
        assert report.stack_bytes == 0 and report.spill_stores == 0, report


def test_schedules_off_gives_a_kernel_per_loop_nest():
    text = fused_text("softmax_last_dim", [np.zeros((4, 256), np.float32)])
    scheduled = gpu.compile_nvvm(text)
    plain = gpu.compile_nvvm(text, codegen=False)
    assert len(scheduled) == 1 and len(plain) > 1
    assert all("shfl.sync" not in k.ptx for k in plain)


def test_max_threads_sets_the_block():
    # Rows of 2048 f32: 512 threads of one 16-byte chunk, or 64 of 8.
    text = fused_text("softmax_last_dim", [np.zeros((4, 2048), np.float32)])
    (k64,) = gpu.compile_nvvm(text, max_threads=64)
    (k512,) = gpu.compile_nvvm(text, max_threads=512)
    # The launch bounds say how many threads the kernel was built for.
    assert ".maxntid 64, 1, 1" in k64.ptx
    assert ".maxntid 512, 1, 1" in k512.ptx


@pytest.mark.parametrize("options,message", [
    (dict(chip="gfx942"), "chip must be an NVIDIA architecture"),
    (dict(chip="sm_90", features="+ptx70"), "sm_90 needs PTX 7.8 at least"),
    (dict(max_threads=48), "max-threads must be a power of two"),
    (dict(opt_level=7), "opt-level must be from 0 to 3"),
])
def test_bad_options_are_diagnosed(options, message):
    text = fused_text("softmax_last_dim", [np.zeros((4, 64), np.float32)])
    with pytest.raises(gpu.CompileError, match=message):
        gpu.compile_nvvm(text, **options)


def test_invalid_ir_is_diagnosed():
    with pytest.raises(gpu.CompileError, match="expected"):
        gpu.compile_nvvm("func.func @f( {")


@needs_ptxas
def test_ptxas_rejects_bad_ptx():
    with pytest.raises(gpu.PtxasError):
        gpu.ptxas(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() { bogus; }\n")


def test_ptxas_report_is_parsed():
    log = ("ptxas info    : 0 bytes gmem\n"
           "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
           "ptxas info    : Function properties for k\n"
           "    16 bytes stack frame, 4 bytes spill stores, 8 bytes spill loads\n"
           "ptxas info    : Used 40 registers, used 1 barriers, 256 bytes smem, 400 bytes cmem[0]\n")
    (r,) = gpu._parse_ptxas(log)
    assert (r.entry, r.registers, r.shared_bytes, r.stack_bytes, r.spill_stores, r.spill_loads, r.barriers) == \
        ("k", 40, 256, 16, 4, 8, 1)
