"""fuel-to-rocdl: every op compiles to device LLVM IR for AMD GPUs, which
Debian's opt-22, llc-22 and ld.lld-22 turn into code objects for gfx90a and
gfx942 where they are installed; no kernel calls a library the device does
not have."""

import re

import numpy as np
import pytest

from numerics import fused_text
from test_all_ops import CASES

from fuel_mlir import gpu

HAVE_LLC = all(gpu.llvm_tool(t) for t in ("opt", "llc", "ld.lld"))


@pytest.fixture(autouse=True)
def _fuel_opt(fuel_opt, monkeypatch):
    monkeypatch.setenv("FUEL_OPT", fuel_opt)


def external_calls(ir):
    """Functions the IR declares that are not LLVM intrinsics."""
    return [f for f in re.findall(r"^declare .*?@([\w.$]+)\(", ir, re.M) if not f.startswith("llvm.")]


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_every_op_compiles(name, dtype):
    make, params, _, _ = CASES[name]
    kernels = gpu.compile_rocdl(fused_text(name, make(dtype), params), chip="gfx942")
    assert kernels
    for k in kernels:
        assert 'target triple = "amdgcn-amd-amdhsa"' in k.llvm_ir
        assert k.entries, f"{k.module} has no amdgpu_kernel"
        assert external_calls(k.llvm_ir) == [], k.module
        assert "malloc" not in k.llvm_ir
    if HAVE_LLC:
        chips = ("gfx90a", "gfx942") if dtype is np.float32 else ("gfx942",)
        for chip in chips:
            for k in kernels:
                obj = gpu.amdgpu_code_object(k.llvm_ir, chip)
                assert obj.data[:4] == b"\x7fELF"
                assert obj.wavefront_size == 64


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_op_compiles_with_dynamic_dims(name):
    make, params, _, dynamic = CASES[name]
    kernels = gpu.compile_rocdl(fused_text(name, make(np.float32), params, dynamic=dynamic), chip="gfx942")
    assert kernels
    for k in kernels:
        assert external_calls(k.llvm_ir) == [], k.module
    if HAVE_LLC:
        for k in kernels:
            assert gpu.amdgpu_code_object(k.llvm_ir, "gfx942").data[:4] == b"\x7fELF"


@pytest.mark.skipif(not HAVE_LLC, reason="no llc-22 / ld.lld-22 (apt-get install llvm-22 lld-22)")
def test_row_op_is_one_kernel_with_lds():
    text = fused_text("layer_norm_last_dim", [np.zeros((6, 2, 640), np.float32)], {"eps": 1e-5})
    (kernel,) = gpu.compile_rocdl(text, chip="gfx942")
    # Cross-lane shuffles and the workgroup's partials in LDS.
    assert "llvm.amdgcn.ds.bpermute" in kernel.llvm_ir
    # The block size is the kernel's known one, not a call into the ROCm
    # device library (__ockl_get_local_size), which nothing here links.
    assert external_calls(kernel.llvm_ir) == []
    obj = gpu.amdgpu_code_object(kernel.llvm_ir, "gfx942")
    assert obj.lds_bytes > 0


@pytest.mark.skipif(not HAVE_LLC, reason="no llc-22 / ld.lld-22 (apt-get install llvm-22 lld-22)")
@pytest.mark.parametrize("name", ["softmax_last_dim", "reduce_max_to_backward"])
def test_row_statistics_are_not_in_scratch(name):
    # Held-out shape: rows of 1,536 over 256 threads. A thread's row
    # statistic between the block reduction and its use is a one-element
    # buffer in the `if` of the threads that have work; allocated at the
    # kernel's start, it is a register (in that block it was a stack slot:
    # 64 bytes of scratch).
    x = np.zeros((3, 1536), np.float32)
    args = [x] if name == "softmax_last_dim" else [x, np.zeros((3, 1), np.float32)]
    kernels = gpu.compile_rocdl(fused_text(name, args), chip="gfx942")
    for kernel in kernels:
        assert gpu.amdgpu_code_object(kernel.llvm_ir, "gfx942").scratch_bytes == 0


def test_row_op_reads_and_writes_16_byte_chunks():
    # Held-out shape: rows of 3072 f32 over 256 threads, 3 chunks of 4 each.
    text = fused_text("rms_norm_last_dim", [np.zeros((5, 3072), np.float32)], {"eps": 1e-6})
    (kernel,) = gpu.compile_rocdl(text, chip="gfx90a")
    ir = kernel.llvm_ir
    vectors = [v for v in re.findall(r"(load|store) <(\d+) x float>.*, align (\d+)", ir) if v[1] != "1"]
    # Each thread's 3 chunks read once (the second read for the output is
    # the first's values) and written once, 16 bytes each, aligned; the
    # other vectors are the reduction's one-element slots.
    assert sorted(vectors) == [("load", "4", "16")] * 3 + [("store", "4", "16")] * 3, vectors


@pytest.mark.skipif(not HAVE_LLC, reason="no llc-22 / ld.lld-22 (apt-get install llvm-22 lld-22)")
def test_linear_stages_tiles_in_lds():
    # Held-out shape: 32 x 64 block tiles, K in steps of 16 (6 blocks, for a
    # GPU of 6 compute units: more would take 32 x 32 tiles).
    args = [np.zeros((96, 80), np.float32), np.zeros((80, 128), np.float32), np.zeros((128,), np.float32)]
    (kernel,) = gpu.compile_rocdl(fused_text("fused_linear", args), chip="gfx942", compute_units=6)
    assert external_calls(kernel.llvm_ir) == []
    assert "llvm.amdgcn.s.barrier" in kernel.llvm_ir
    for chip in ("gfx90a", "gfx942"):
        obj = gpu.amdgpu_code_object(kernel.llvm_ir, chip)
        # The A tile [32, 16] and the B tile [16, 64], f32; the
        # accumulators in registers, not scratch.
        assert obj.lds_bytes == (32 * 16 + 16 * 64) * 4, obj
        assert obj.scratch_bytes == 0, obj


@pytest.mark.skipif(not HAVE_LLC, reason="no llc-22 / ld.lld-22 (apt-get install llvm-22 lld-22)")
def test_linear_takes_large_tiles_where_they_fill_the_gpu():
    # Held-out shape: 2048 x 2048 is 256 tiles of 128 x 128: a block for
    # each of gfx90a's 110 compute units (MI250X's GCD), not for gfx942's
    # 304 (MI300X), which keeps 64 x 64 tiles.
    args = [np.zeros((2048, 256), np.float32), np.zeros((256, 2048), np.float32), np.zeros((2048,), np.float32)]
    for chip, tile in (("gfx90a", 128), ("gfx942", 64)):
        (kernel,) = gpu.compile_rocdl(fused_text("fused_linear", args), chip=chip)
        # The output's rows written 16 bytes at a time, aligned: an 8 x 8
        # tile's in 16 halves, a 4 x 4 tile's in 4 rows.
        stores = re.findall(r"store <4 x float> %\w+, ptr %\w+, align 16", kernel.llvm_ir)
        assert len(stores) == (16 if tile == 128 else 4), stores
        obj = gpu.amdgpu_code_object(kernel.llvm_ir, chip)
        assert obj.lds_bytes == 2 * tile * 16 * 4 and obj.scratch_bytes == 0, obj


@pytest.mark.skipif(not HAVE_LLC, reason="no llc-22 / ld.lld-22 (apt-get install llvm-22 lld-22)")
def test_attention_stages_key_blocks_in_lds():
    # Held-out shape: windowed, GQA, 96 queries (blocks of 32 rows), 72 keys.
    q = np.zeros((1, 4, 96, 64), np.float16)
    kv = np.zeros((1, 2, 72, 64), np.float16)
    kernels = gpu.compile_rocdl(fused_text("flash_attn", [q, kv, kv], {"softmax_scale": 0.125,
                                                                       "window_size_left": 30}),
                                chip="gfx942")
    (main,) = [k for k in kernels if "llvm.amdgcn.s.barrier" in k.llvm_ir]
    assert external_calls(main.llvm_ir) == []
    for chip in ("gfx90a", "gfx942"):
        obj = gpu.amdgpu_code_object(main.llvm_ir, chip)
        # The keys [64, 16] (rows of 20 words) and the values [16, 64], f32;
        # the rows' state in registers, not scratch.
        assert obj.lds_bytes == (64 * 20 + 16 * 64) * 4, obj
        assert obj.scratch_bytes == 0, obj


@pytest.mark.skipif(not HAVE_LLC, reason="no llc-22 / ld.lld-22 (apt-get install llvm-22 lld-22)")
def test_attention_backward_q_stages_key_blocks_in_lds():
    q = np.zeros((1, 2, 64, 32), np.float32)
    kv = np.zeros((1, 2, 80, 32), np.float32)
    kernels = gpu.compile_rocdl(fused_text("flash_attn_backward_q", [q, kv, kv, q], {"softmax_scale": 0.125,
                                                                                      "causal": True}),
                                chip="gfx942")
    (main,) = [k for k in kernels if "llvm.amdgcn.s.barrier" in k.llvm_ir]
    assert external_calls(main.llvm_ir) == []
    obj = gpu.amdgpu_code_object(main.llvm_ir, "gfx90a")
    # Two key loops: [32, 16] keys and values (transposed, rows of 20
    # words), then those and [16, 32] keys; the second loop's keys and
    # values take the first's buffers (one loop after the other, a barrier
    # between them), and the rows stay in global memory (fuel-to-rocdl's
    # own-rows-bytes is 0).
    assert obj.lds_bytes == (2 * 32 * 20 + 16 * 32) * 4, obj


@pytest.mark.skipif(not HAVE_LLC, reason="no llc-22 / ld.lld-22 (apt-get install llvm-22 lld-22)")
def test_attention_backward_k_stages_query_blocks_in_lds():
    q = np.zeros((1, 2, 64, 32), np.float32)
    kv = np.zeros((1, 1, 96, 32), np.float32)
    kernels = gpu.compile_rocdl(fused_text("flash_attn_backward_k", [q, kv, kv, q],
                                           {"softmax_scale": 0.125, "causal": True}), chip="gfx942")
    stats, grads = [k for k in kernels if "llvm.amdgcn.s.barrier" in k.llvm_ir]
    for kernel, (transposed, plain) in ((stats, (2, 0)), (grads, (2, 1))):
        assert external_calls(kernel.llvm_ir) == []
        obj = gpu.amdgpu_code_object(kernel.llvm_ir, "gfx90a")
        # lse and D: keys and values [32, 16] (transposed, rows of 20
        # words); dk: queries and do [32, 16] (likewise) and queries [16,
        # 32]; f32, the rows' state not in scratch.
        assert obj.lds_bytes == (transposed * 32 * 20 + plain * 16 * 32) * 4, obj
        assert obj.scratch_bytes == 0, obj


@pytest.mark.skipif(not HAVE_LLC, reason="no llc-22 / ld.lld-22 (apt-get install llvm-22 lld-22)")
def test_attention_with_few_queries_splits_the_keys():
    # Decoding, GQA, 2,500 keys: four partitions of the keys, each a block
    # of 128 threads in groups of 16 lanes (4 columns each of a head of
    # 64), whose dot products ds_bpermute sums within the group (4
    # butterfly steps a key, 4 keys a step); their partials (a row of 64 a
    # group, a max and a sum a thread) in LDS; then a kernel that combines
    # the partitions.
    q = np.zeros((1, 8, 1, 64), np.float16)
    kv = np.zeros((1, 2, 2500, 64), np.float16)
    kernels = gpu.compile_rocdl(fused_text("flash_attn", [q, kv, kv], {"softmax_scale": 0.125}),
                                chip="gfx942")
    (split,) = [k for k in kernels if "llvm.amdgcn.s.barrier" in k.llvm_ir]
    assert len(kernels) == 2
    assert split.llvm_ir.count("call i32 @llvm.amdgcn.ds.bpermute") == 16
    for kernel in kernels:
        assert external_calls(kernel.llvm_ir) == []
        for chip in ("gfx90a", "gfx942"):
            obj = gpu.amdgpu_code_object(kernel.llvm_ir, chip)
            assert obj.lds_bytes == ((8 * 64 + 2 * 128) * 4 if kernel is split else 0), obj
            assert obj.scratch_bytes == 0, obj


@pytest.mark.skipif(not HAVE_LLC, reason="no llc-22 / ld.lld-22 (apt-get install llvm-22 lld-22)")
def test_conv2d_stages_tiles_in_lds():
    args = [np.zeros((1, 8, 8, 8), np.float32), np.zeros((32, 8, 3, 3), np.float32)]
    (kernel,) = gpu.compile_rocdl(fused_text("conv2d", args, {"padding": (1, 1)}), chip="gfx942")
    assert external_calls(kernel.llvm_ir) == []
    obj = gpu.amdgpu_code_object(kernel.llvm_ir, "gfx90a")
    # 32 filters by 32 pixels (one block of 32 by 64 would leave the other
    # compute units idle), steps of 8: [32, 8] and [8, 32] f32.
    assert obj.lds_bytes == (32 * 8 + 8 * 32) * 4, obj
    assert obj.scratch_bytes == 0, obj


def test_wave32_is_recorded():
    text = fused_text("softmax_last_dim", [np.zeros((4, 64), np.float32)])
    (k64,) = gpu.compile_rocdl(text, chip="gfx942")
    (k32,) = gpu.compile_rocdl(text, chip="gfx1100", wave64=False)
    # The chip and the wave size are on the kernel: the IR says what it is for.
    assert '"target-cpu"="gfx1100"' in k32.llvm_ir and "+wavefrontsize32" in k32.llvm_ir
    assert '"target-cpu"="gfx942"' in k64.llvm_ir and "+wavefrontsize64" in k64.llvm_ir
    if HAVE_LLC:
        assert gpu.amdgpu_code_object(k32.llvm_ir, "gfx1100").wavefront_size == 32


@pytest.mark.parametrize("options,message", [
    (dict(chip="sm_90"), "chip must be an AMD GPU architecture"),
    (dict(max_threads=16), "max-threads must be a power of two"),
    (dict(compute_units=-1), "compute-units must be 0"),
])
def test_bad_options_are_diagnosed(options, message):
    text = fused_text("softmax_last_dim", [np.zeros((4, 64), np.float32)])
    with pytest.raises(gpu.CompileError, match=message):
        gpu.compile_rocdl(text, **options)


@pytest.mark.skipif(not HAVE_LLC, reason="no llc-22 / ld.lld-22")
def test_llc_errors_are_reported():
    with pytest.raises(gpu.ToolError, match="opt"):
        gpu.amdgpu_code_object("this is not LLVM IR", "gfx942")
