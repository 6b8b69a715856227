"""The GPU emulator (runtime/GpuEmulator.c, fuel-gpu-emulated-kernels):
the kernels fuel-to-nvvm makes, run on the CPU.

The GPU numerics suite (test_gpu_run.NUMERICS: every op in f32, f16 and
bf16, the wide rows, the register and staged tiles, the split-keys
attention) runs here against the same float64 references and tolerances as
on a GPU, with each block's threads in forward and in reverse order. Then
the emulator itself, on kernels written here: PTX's shuffle rules against a
numpy model of them, barriers (a missing one changes the result with the
order), and what it reports that a GPU would not."""

import ctypes

import numpy as np
import pytest

import references as ref
from numerics import BF16, assert_close, fused_text
from test_gpu_run import NUMERICS, numerics_case

from fuel_mlir import ir, passmanager, run, runner
from fuel_mlir.execution_engine import ExecutionEngine
from fuel_mlir.runtime import np_to_memref



def test_the_emulator_is_part_of_the_package():
    assert runner._emulator_library() is not None


@pytest.mark.parametrize("target", ["cuda-emulator", "rocm-emulator"])
@pytest.mark.parametrize("name", NUMERICS)
def test_numerics_on_the_emulator(name, target):
    """The NVIDIA kernels (fuel-to-nvvm for an H100: warps of 32, shfl.sync)
    and the AMD ones (fuel-to-rocdl for an MI300X: waves of 64,
    ds_bpermute), each block's threads run forward, then in reverse."""
    op, inputs, params, want, tol = numerics_case(name)
    fn = runner.compile(fused_text(op, inputs, params), "f", target=target)
    for order in ("forward", "reverse"):
        runner.emulator_order(order)
        before = runner.emulator_counts()
        try:
            got = fn(*inputs)
        finally:
            runner.emulator_order("forward")
        after = runner.emulator_counts()
        assert after["launches"] > before["launches"]
        assert after["allocs"] - before["allocs"] == after["frees"] - before["frees"] > 0
        for g, w in zip(got if isinstance(got, tuple) else (got,), want):
            assert_close(g, w, tol, loose=True)


# The cases whose kernels change with the chip: attention (heads staged up
# to 64 before sm_90), the contractions' tiles (fit to the SMs), and a
# row op.
OTHER_CHIPS = [n for n in NUMERICS
               if n.split("/")[0] in ("flash_attn", "flash_attn_backward_q", "flash_attn_backward_k",
                                      "flash_attn_backward_v", "fused_linear", "conv2d",
                                      "qmatmul", "softmax_last_dim")]


@pytest.mark.parametrize("target,chip", [("cuda-emulator", "sm_80"), ("rocm-emulator", "gfx90a")])
@pytest.mark.parametrize("name", OTHER_CHIPS)
def test_numerics_for_other_chips(name, target, chip):
    op, inputs, params, want, tol = numerics_case(name)
    got = runner.compile(fused_text(op, inputs, params), "f", target=target, chip=chip)(*inputs)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want):
        assert_close(g, w, tol, loose=True)


def test_chip_is_for_the_emulators():
    text = fused_text("softmax_last_dim", [np.zeros((4, 64), np.float32)])
    with pytest.raises(runner.RunnerError, match="chip= is for the emulator targets; "
                                                 "target='cpu' compiles for the host"):
        runner.compile(text, "f", chip="sm_80")
    with pytest.raises(runner.RunnerError, match=r"target='rocm-emulator' takes a chip gfx\.\.\., "
                                                 r"got 'sm_80'"):
        runner.compile(text, "f", target="rocm-emulator", chip="sm_80")


def test_shuffled_order_and_errors_of_the_order():
    op, inputs, params, want, tol = numerics_case("fused_linear/staged")
    fn = runner.compile(fused_text(op, inputs, params), "f", target="cuda-emulator")
    runner.emulator_order(12345)
    try:
        assert_close(fn(*inputs), want[0], tol, loose=True)
    finally:
        runner.emulator_order("forward")
    for bad in ("backward", 0, -3, True, 1.5):
        with pytest.raises(runner.RunnerError, match="order must be 'forward', 'reverse' or a "
                                                     "positive int seed"):
            runner.emulator_order(bad)


def test_fuel_run_on_the_emulator(tmp_path):
    x = np.random.default_rng(3).standard_normal((2, 96)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    path = tmp_path / "m.mlir"
    path.write_text(fused_text("rms_norm_last_dim", [x], {"eps": 1e-5}))
    assert run.main([str(path), "--function=f", f"--input=@{tmp_path / 'x.npy'}",
                     f"--output=@{tmp_path / 'y.npy'}", "--target=cuda-emulator"]) == 0
    want = x / np.sqrt((x.astype(np.float64) ** 2).mean(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", ["cuda-emulator", "rocm-emulator"])
def test_results_host_buffers_are_the_arrays(target):
    """On a GPU target each result comes back in a host buffer of its own
    (fuel-gpu-host-buffers: malloc'd by the host code): the arrays returned
    are those buffers (not copies), freed when the arrays go. 20 calls
    returning two results of 256 KiB would hold 10 MiB if they leaked."""
    import gc

    from test_runner import DYNAMIC, _malloc_bytes

    f = runner.compile(DYNAMIC, "scale", target=target)
    x = np.random.default_rng(4).standard_normal((64, 1024)).astype(np.float32)
    y, z = f(x, 1)
    assert not y.flags.owndata and not z.flags.owndata and not np.shares_memory(y, z)
    np.testing.assert_allclose(y, 2 * x + 1, rtol=1e-6)
    np.testing.assert_allclose(z, ref.ref_softmax(x.astype(np.float64)), rtol=1e-5, atol=1e-7)
    del y, z
    gc.collect()
    held = _malloc_bytes()
    if held is None:
        pytest.skip("mallinfo2 is not there")
    for _ in range(20):
        y, z = f(x, 1)
    del y, z
    gc.collect()
    assert _malloc_bytes() - held < 2 ** 20


# Kernels written here: one function @f that fills its memref argument
# from a gpu.launch, lowered as fuel-to-nvvm (fuel-to-rocdl) lowers its
# kernels, with the emulator in place of gpu-module-to-binary.
PIPELINE = ("builtin.module(gpu-kernel-outlining,func.func(gpu-async-region),"
            "convert-scf-to-cf,convert-func-to-llvm,expand-strided-metadata,{attach},lower-affine,"
            "gpu.module({convert},canonicalize,reconcile-unrealized-casts),"
            "convert-arith-to-llvm,convert-index-to-llvm,gpu-to-llvm,"
            "fuel-gpu-emulated-kernels,convert-math-to-llvm,"
            "reconcile-unrealized-casts)")
LOWERING = {"cuda": {"attach": "nvvm-attach-target{chip=sm_90}", "convert": "convert-gpu-to-nvvm"},
            "rocm": {"attach": "rocdl-attach-target{chip=gfx942}",
                     "convert": "convert-gpu-to-rocdl{chipset=gfx942}"}}


def run_kernel(body, out_shape, *, threads=64, blocks=1, workgroup="", host_alloc=False,
               target="cuda", profile=False, opt_level=None):
    """Runs @f(%out: memref<out_shape x f32>) whose one launch has `blocks` x
    `threads` and runs `body` (it sees %tx, %bx, %out, and %sh with
    `workgroup`'s memref type if given); with `host_alloc`, the kernel
    writes a gpu.alloc'd buffer, copied into %out after; with `profile`,
    its loads and stores call the memory-access profile; `opt_level`: the
    GPU target's (2 unless given). Returns the output and the emulator's
    error (None if none)."""
    shape = "x".join(map(str, out_shape)) + "xf32"
    written = "%dev" if host_alloc else "%out"
    alloc = f"%dev = gpu.alloc () : memref<{shape}>" if host_alloc else ""
    copy = (f"gpu.memcpy %out, %dev : memref<{shape}>, memref<{shape}>\n"
            f"    gpu.dealloc %dev : memref<{shape}>") if host_alloc else ""
    wg = f"workgroup(%sh : {workgroup})" if workgroup else ""
    text = f"""
module attributes {{gpu.container_module}} {{
  func.func @f(%out: memref<{shape}>) attributes {{llvm.emit_c_interface}} {{
    %launch_one = arith.constant 1 : index
    %launch_threads = arith.constant {threads} : index
    %launch_blocks = arith.constant {blocks} : index
    {alloc}
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %launch_blocks, %gy = %launch_one,
                                         %gz = %launch_one)
               threads(%tx, %ty, %tz) in (%sx = %launch_threads, %sy = %launch_one,
                                          %sz = %launch_one) {wg} {{
      {body.replace("%out", written)}
      gpu.terminator
    }}
    {copy}
    return
  }}
}}"""
    with ir.Context():
        module = ir.Module.parse(text)
        lowering = dict(LOWERING[target])
        if opt_level is not None:
            lowering["attach"] = lowering["attach"].replace("}", f" O={opt_level}}}")
        pipeline = PIPELINE.format(**lowering)
        if profile:
            pipeline = pipeline.replace("fuel-gpu-emulated-kernels",
                                        "fuel-gpu-emulated-kernels{memory-profile}")
        passmanager.PassManager.parse(pipeline).run(module.operation)
        engine = ExecutionEngine(module, opt_level=2, shared_libs=runner.runtime_libraries()
                                 + [runner._emulator_library()])
        engine.initialize()
        out = np.zeros(out_shape, np.float32)
        desc = ctypes.pointer(ctypes.pointer(np_to_memref.get_ranked_memref_descriptor(out)))
        emulator = runner._emulator_runtime()
        emulator.fuel_emu_clear_error()
        engine.invoke("f", desc)
        error = emulator.fuel_emu_last_error()
        emulator.fuel_emu_clear_error()
        return out, (error.decode() if error else None)


def ptx_shuffle(values, kind, offset, width):
    """shfl.sync as PTX specifies it, with the operands gpu.shuffle's NVVM
    lowering gives it (the first `width` lanes in the mask; no segments;
    clamp 32 - width going up, else width - 1): per lane, (value read,
    valid)."""
    out, valid = np.zeros(width), np.zeros(width)
    c = 32 - width if kind == "up" else width - 1
    for lane in range(width):
        j = {"xor": lane ^ offset, "up": lane - offset, "down": lane + offset,
             "idx": offset & 31}[kind]
        ok = j >= c if kind == "up" else j <= c
        out[lane], valid[lane] = values[j if ok else lane], ok
    return out, valid


@pytest.mark.parametrize("kind,offset,width", [
    ("xor", 1, 32), ("xor", 16, 32), ("xor", 4, 8), ("up", 1, 32), ("up", 3, 32), ("up", 2, 8),
    ("down", 2, 32), ("down", 5, 32), ("down", 3, 8), ("idx", 5, 32), ("idx", 0, 32),
    ("idx", 9, 8)])
def test_shuffles_follow_ptx(kind, offset, width):
    """Every lane of two warps (or of one of `width` lanes) shuffles its
    thread id; the value read and the valid bit against a numpy model of
    PTX's shfl.sync."""
    threads = 64 if width == 32 else width
    body = f"""
      %lane = arith.index_cast %tx : index to i32
      %v = arith.sitofp %lane : i32 to f32
      %off = arith.constant {offset} : i32
      %w = arith.constant {width} : i32
      %r, %ok = gpu.shuffle {kind} %v, %off, %w : f32
      %okf = arith.uitofp %ok : i1 to f32
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      memref.store %r, %out[%c0, %tx] : memref<2x{threads}xf32>
      memref.store %okf, %out[%c1, %tx] : memref<2x{threads}xf32>"""
    out, error = run_kernel(body, (2, threads), threads=threads)
    assert error is None
    for warp in range(threads // width):
        lanes = np.arange(width) + 32 * warp
        want, valid = ptx_shuffle(lanes.astype(float), kind, offset, width)
        np.testing.assert_array_equal(out[0, lanes], want)
        np.testing.assert_array_equal(out[1, lanes], valid)


@pytest.mark.parametrize("kind,offset", [("xor", 1), ("xor", 32), ("xor", 63), ("idx", 5),
                                          ("idx", 40)])
def test_amd_waves_of_64_shuffle(kind, offset):
    """On AMD (ds_bpermute), a wave is 64 lanes: two waves of 128 threads,
    each lane shuffling its thread id (every source lane in range), and
    each lane's id (gpu.lane_id: mbcnt.lo and mbcnt.hi)."""
    body = f"""
      %lane = arith.index_cast %tx : index to i32
      %v = arith.sitofp %lane : i32 to f32
      %off = arith.constant {offset} : i32
      %w = arith.constant 64 : i32
      %r, %ok = gpu.shuffle {kind} %v, %off, %w : f32
      %id = gpu.lane_id
      %idi = arith.index_cast %id : index to i32
      %idf = arith.sitofp %idi : i32 to f32
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      memref.store %r, %out[%c0, %tx] : memref<2x128xf32>
      memref.store %idf, %out[%c1, %tx] : memref<2x128xf32>"""
    out, error = run_kernel(body, (2, 128), threads=128, target="rocm")
    assert error is None
    lanes = np.arange(128) % 64
    source = lanes ^ offset if kind == "xor" else np.full(128, offset)
    np.testing.assert_array_equal(out[0], source + 64 * (np.arange(128) // 64))
    np.testing.assert_array_equal(out[1], lanes)


NEIGHBOUR = """
      %c1 = arith.constant 1 : index
      %c64 = arith.constant 64 : index
      %i = arith.index_cast %tx : index to i32
      %v = arith.sitofp %i : i32 to f32
      memref.store %v, %sh[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
      {barrier}
      %n = arith.addi %tx, %c1 : index
      %m = arith.remui %n, %c64 : index
      %r = memref.load %sh[%m] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %r, %out[%tx] : memref<64xf32>"""
SHARED = "memref<64xf32, #gpu.address_space<workgroup>>"


@pytest.mark.parametrize("target", ["cuda", "rocm"])
@pytest.mark.parametrize("order", ["forward", "reverse", 99])
def test_a_barrier_orders_shared_memory(order, target):
    runner.emulator_order(order)
    try:
        out, error = run_kernel(NEIGHBOUR.format(barrier="gpu.barrier"), (64,), workgroup=SHARED,
                                target=target)
    finally:
        runner.emulator_order("forward")
    assert error is None
    np.testing.assert_array_equal(out, (np.arange(64) + 1) % 64)


def test_a_missing_barrier_shows_with_the_order():
    """Each thread reads its neighbour's value with no barrier: run forward,
    each thread but the last reads before its neighbour wrote (the workgroup
    buffer starts as NaN); in reverse, only the last does."""
    outs = {}
    for order in ("forward", "reverse"):
        runner.emulator_order(order)
        try:
            outs[order], error = run_kernel(NEIGHBOUR.format(barrier=""), (64,), workgroup=SHARED)
        finally:
            runner.emulator_order("forward")
        assert error is None
    assert np.isnan(outs["forward"][:63]).all() and outs["forward"][63] == 0
    assert np.isnan(outs["reverse"][63])
    np.testing.assert_array_equal(outs["reverse"][:63], np.arange(1, 64))


def test_workgroup_memory_is_each_blocks_own():
    """Block 1 reads the workgroup buffer block 0 wrote: on a GPU it has its
    own, whose bytes nothing wrote."""
    body = """
      %c0 = arith.constant 0 : index
      %is0 = arith.cmpi eq, %bx, %c0 : index
      scf.if %is0 {
        %one = arith.constant 1.0 : f32
        memref.store %one, %sh[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %r = memref.load %sh[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %r, %out[%bx, %tx] : memref<2x64xf32>"""
    out, error = run_kernel(body, (2, 64), blocks=2, workgroup=SHARED)
    assert error is None
    assert (out[0] == 1).all() and np.isnan(out[1]).all()


def test_device_memory_starts_as_nan():
    body = """
      %two = arith.constant 2.0 : f32
      %c32 = arith.constant 32 : index
      %low = arith.cmpi ult, %tx, %c32 : index
      scf.if %low {
        memref.store %two, %out[%tx] : memref<64xf32>
      }"""
    out, error = run_kernel(body, (64,), host_alloc=True)
    assert error is None
    assert (out[:32] == 2).all() and np.isnan(out[32:]).all()


def test_a_barrier_some_threads_skip_is_reported():
    body = """
      %c32 = arith.constant 32 : index
      %low = arith.cmpi ult, %tx, %c32 : index
      scf.if %low {
        gpu.barrier
      }"""
    _, error = run_kernel(body, (64,))
    assert error == ("kernel f_kernel, block (0, 0, 0): 32 of its 64 threads wait at a barrier "
                     "that the other 32 never reach (they have returned)")


def test_a_shuffle_some_lanes_skip_is_reported():
    body = """
      %c16 = arith.constant 16 : index
      %low = arith.cmpi ult, %tx, %c16 : index
      scf.if %low {
        %v = arith.constant 1.0 : f32
        %off = arith.constant 1 : i32
        %w = arith.constant 32 : i32
        %r, %ok = gpu.shuffle xor %v, %off, %w : f32
        memref.store %r, %out[%tx] : memref<64xf32>
      }"""
    _, error = run_kernel(body, (64,), threads=32)
    assert error.startswith("kernel f_kernel, block (0, 0, 0): 16 threads wait at a warp shuffle "
                            "(thread 0 first) that lanes of its mask never reach")


def test_an_access_past_a_device_buffer_is_reported():
    """Thread 63 writes element 64 of 64: the bytes after a device buffer
    are a page no one may touch."""
    body = """
      %c1 = arith.constant 1 : index
      %i = arith.addi %tx, %c1 : index
      %v = arith.constant 1.0 : f32
      memref.store %v, %out[%i] : memref<64xf32>"""
    _, error = run_kernel(body, (64,), host_alloc=True)
    assert error == ("kernel f_kernel: thread (63, 0, 0) of block (0, 0, 0) accessed 0 bytes past "
                     "the end of a device buffer of 256 bytes")
    # The emulator goes on: the next launch runs.
    out, error = run_kernel("%v = arith.constant 3.0 : f32\n"
                            "memref.store %v, %out[%tx] : memref<64xf32>", (64,))
    assert error is None and (out == 3).all()


def test_a_block_over_cudas_limit_is_reported():
    _, error = run_kernel("", (64,), threads=2048)
    assert error == ("kernel f_kernel: grid (1, 1, 1) and block (2048, 1, 1) are outside "
                     "CUDA's limits")


def test_a_device_function_the_emulator_lacks_is_an_error(monkeypatch):
    # Resolved by the engine, it would abort the process.
    real = runner._emulator_runtime()

    class Without:
        def __getattr__(self, name):
            if name == "__nv_expf":
                raise AttributeError(name)
            return getattr(real, name)

    monkeypatch.setattr(runner, "_emulator_runtime", Without)
    text = fused_text("softmax_last_dim", [np.zeros((4, 64), np.float32)])
    with pytest.raises(runner.RunnerError, match=r"cannot compile 'f' for the GPU emulator: its kernels call "
                                                 r"__nv_expf, which the emulator does not provide"):
        runner.compile(text, "f", target="cuda-emulator")


def test_the_run_api_raises_what_the_emulator_reports(monkeypatch):
    fn = runner.compile(fused_text("softmax_last_dim", [np.zeros((4, 64), np.float32)]), "f",
                        target="cuda-emulator")
    emulator = runner._emulator_runtime()

    def failing(*args):
        emulator.mgpuMemFree(ctypes.c_void_p(16), None)  # not device memory
        return (np.zeros((4, 64), np.float32),)

    # The C++ call path, then the Python one (the entry point called).
    for patches in ({"_fast_call": lambda: failing}, {"_fast_results": False, "_entry": failing}):
        with monkeypatch.context() as patch:
            for name, value in patches.items():
                patch.setattr(fn, name, value)
            with pytest.raises(runner.RunnerError, match=r"f: the GPU emulator stopped: "
                                                         r"mgpuMemFree: 0x10 is not device memory"):
                fn(np.zeros((4, 64), np.float32))
    x = np.random.default_rng(0).standard_normal((4, 64)).astype(np.float32)
    e = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(fn(x), e / e.sum(-1, keepdims=True), rtol=1e-5)


# paged_attn with a table of few tokens and wide heads: its scores take 32
# threads (2 tokens, 16 lanes each) where its output takes one a column
# (64, 128): the block reductions of the scores must have every thread of
# the block (the others would never reach their barriers).
@pytest.mark.parametrize("target", ["cuda-emulator", "rocm-emulator"])
@pytest.mark.parametrize("d,block_size,width", [(64, 1, 2), (128, 2, 1), (128, 16, 3)])
def test_paged_attention_few_tokens_wide_heads(target, d, block_size, width):
    from test_codegen_paged_attn import make, reference
    args = make(2, 4, 2, d, block_size, width, [block_size * width, 1], np.float32)
    params = {"softmax_scale": 0.3, "block_size": block_size}
    got = runner.compile(fused_text("paged_attn", list(args), params), "f", target=target)(*args)
    assert_close(got, reference(args, params), "f32", loose=True)


@pytest.mark.parametrize("target", ["cuda-emulator", "rocm-emulator"])
@pytest.mark.parametrize("dtype", [np.float16] + ([BF16] if BF16 is not None else []),
                         ids=["f16", "bf16"][:1 + (BF16 is not None)])
@pytest.mark.parametrize("m,staged", [(64, True), (20, False)], ids=["staged", "register-tiles"])
def test_quantized_prefill_converts_where_it_writes(target, dtype, m, staged):
    """qmatmul prefill with f16 or bf16 activations (64 or 20 rows, 64 x
    128 q4_0 weights): the staged tiles (64 rows), or the register tiles of
    the contraction schedule (20: not a multiple of 32), convert each
    output to the activations' type as they write it, so the f32
    contraction's result never exists and one kernel computes the op (two
    when a kernel of its own converted it)."""
    from test_qmatmul import as_words, dequant, random_blocks
    from fuel_mlir import gpu
    k, n = 128, 64
    rows = random_blocks("q4_0", n, k, seed=4)
    a = np.random.default_rng(2).standard_normal((m, k)).astype(dtype)
    args, params = [a, as_words(rows)], {"quant_type": "q4_0", "k": k, "n": n}
    text = fused_text("qmatmul", args, params)
    kernels = gpu.compile_nvvm(text, chip="sm_90")
    assert len(kernels) == 1 and ("bar.sync" in kernels[0].ptx) == staged
    got = runner.compile(text, "f", target=target)(*args)
    assert got.dtype == a.dtype
    assert_close(got, np.asarray(a, np.float64) @ dequant("q4_0", rows, k).T,
                 "f16" if dtype == np.float16 else "bf16", loose=True)


@pytest.mark.parametrize("target", ["cuda-emulator", "rocm-emulator"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
def test_awq_prefill_register_tiles(target, dtype):
    """awq with 20 rows and N = 48 (not staged: the contraction schedule's
    register tiles), K of 8 groups of 128, the weight decoded per step of
    8 k from the words, zeros and scales (f16 scales widened per step)."""
    from test_codegen_quantized import awq_inputs
    a, qw, qz, s, w = awq_inputs((20, 1024), 48, 128, dtype)
    text = fused_text("awq_matmul", [a, qw, qz, s], {"group_size": 128})
    got = runner.compile(text, "f", target=target)(a, qw, qz, s)
    assert got.dtype == a.dtype
    assert_close(got, np.asarray(a, np.float64) @ w, "f32" if dtype == np.float32 else "f16",
                 loose=True)


# Heads of 48, 80 and 96 (48: not a multiple of the 64 threads of a block
# of rows, nor 96; 80 and 96 staged from sm_90 on, 48 on AMD too): their
# key, value, query and do blocks are copied by groups of gcd(D, 64)
# threads (and of gcd(D / 4, 64) for chunks of 4 columns), the groups over
# the rows. Causal, GQA, 100 rows (blocks of 64 padded).
@pytest.mark.parametrize("target,d", [("cuda-emulator", 48), ("cuda-emulator", 80),
                                      ("cuda-emulator", 96), ("rocm-emulator", 48)])
@pytest.mark.parametrize("name", ["flash_attn", "flash_attn_backward_q", "flash_attn_backward_k",
                                  "flash_attn_backward_v"])
def test_attention_heads_staged_by_thread_groups(target, d, name):
    from fuel_mlir import gpu
    rng = np.random.default_rng(d)
    q, do = (rng.standard_normal((1, 4, 100, d)).astype(np.float32) for _ in range(2))
    k, v = (rng.standard_normal((1, 2, 100, d)).astype(np.float32) for _ in range(2))
    params = {"softmax_scale": 0.125, "causal": True}
    args = [q, k, v] + ([do] if name != "flash_attn" else [])
    text = fused_text(name, args, params)
    if target == "cuda-emulator" and name in ("flash_attn", "flash_attn_backward_v"):
        computing = [kernel for kernel in gpu.compile_nvvm(text, chip="sm_90")
                     if "ex2.approx" in kernel.ptx]
        assert computing and all("st.shared" in kernel.ptx for kernel in computing)
    got = runner.compile(text, "f", target=target)(*args)
    f64 = [np.asarray(x, np.float64) for x in (q, k, v)]
    if name == "flash_attn":
        want = ref.flash_attn(*f64, 0.125, causal=True)
    else:
        want = ref.flash_attn_grads(*f64, np.asarray(do, np.float64), 0.125, causal=True)["qkv".index(name[-1])]
    assert_close(got, want, "f32", loose=True)
