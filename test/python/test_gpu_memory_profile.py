"""The GPU emulator's memory-access profile (fuel_mlir.memory_profile,
fuel-gpu-emulated-kernels{memory-profile}): what a warp's requests need of
device memory (32-byte sectors) and of workgroup memory (wavefronts of 32
banks), on kernels written here whose counts follow from their indices,
then on the fused ops' kernels."""

import math

import numpy as np
import pytest

import references as ref
from numerics import fused_text
from test_gpu_emulator import run_kernel

from fuel_mlir import memory_profile, run, runner


def profiled(body, size, **kwargs):
    """Runs `body` (see run_kernel: one launch, %tx, %bx, %dev: a device
    buffer of `size` floats) with every block profiled; returns the
    profile's sites, by (op, space)."""
    with memory_profile.record(blocks=0) as profile:
        _, error = run_kernel(body, (size,), host_alloc=True,
                              profile=True, **kwargs)
    assert error is None
    sites = {}
    for s in profile.sites:
        assert (s.op, s.space) not in sites, "one site of each kind in these kernels"
        sites[s.op, s.space] = s
    return profile, sites


def counts(site):
    return site.requests, site.bytes, site.units, site.ideal


def read_write(index, size):
    """Each thread reads the float at %i (defined by the lines `index`, of
    %tx and %bx) and writes it back doubled. (Written back as read, it
    would be neither: the optimizer removes a store of the value loaded
    from the same address, and the load with it.)"""
    return f"""
      {index}
      %v = memref.load %out[%i] : memref<{size}xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %out[%i] : memref<{size}xf32>"""


def test_coalesced_device_accesses():
    """Two warps of 32 lanes, each reading and writing 32 consecutive
    floats: 128 bytes, 4 sectors a request."""
    profile, sites = profiled(read_write("%c0 = arith.constant 0 : index\n"
                                         "      %i = arith.addi %tx, %c0 : index", 128), 128)
    assert counts(sites["load", "device"]) == (2, 256, 8, 8)
    assert counts(sites["store", "device"]) == (2, 256, 8, 8)
    assert profile.efficiency() == 1.0
    assert profile.conflicts() is None
    (kernel,) = profile.kernels
    assert (kernel.launches, kernel.blocks) == (1, 1)
    assert sites["load", "device"].type == "f32"


@pytest.mark.parametrize("stride,sectors", [(2, 8), (8, 32), (32, 32), (0, 1)])
def test_strided_device_accesses(stride, sectors):
    """Lane i reads float i * stride: 32 lanes touch 32 * 4 * stride / 32
    sectors (at most one a lane); a stride of 0 is one float for all."""
    size = 64 * max(stride, 1)
    body = read_write(f"%stride = arith.constant {stride} : index\n"
                      "      %i = arith.muli %tx, %stride : index", size)
    profile, sites = profiled(body, size)
    load = sites["load", "device"]
    distinct = 128 if stride else 4
    assert counts(load) == (2, 2 * distinct, 2 * sectors, 2 * math.ceil(distinct / 32))
    assert profile.efficiency("load") == pytest.approx(distinct / (32 * sectors))


def workgroup_body(stride, size, threads=64):
    """Each thread writes float tx * stride of a workgroup buffer, then
    (after a barrier) reads float 0 of it (a broadcast) and writes that to
    device memory."""
    return f"""
      %stride = arith.constant {stride} : index
      %c0 = arith.constant 0 : index
      %i = arith.muli %tx, %stride : index
      %f = arith.constant 1.0 : f32
      memref.store %f, %sh[%i] : memref<{size}xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %v = memref.load %sh[%c0] : memref<{size}xf32, #gpu.address_space<workgroup>>
      memref.store %v, %out[%tx] : memref<{threads}xf32>"""


@pytest.mark.parametrize("stride,ways", [(1, 1), (2, 2), (4, 4), (32, 32), (33, 1), (0, 1)])
def test_workgroup_bank_conflicts(stride, ways):
    """Lane i writes word i * stride: the banks (word % 32) repeat every
    32 / gcd(stride, 32) lanes, so a warp needs gcd(stride, 32) wavefronts
    (32 with stride 32, 1 with a padded stride of 33); one word for all
    (stride 0) is a broadcast."""
    size = 64 * max(stride, 1)
    profile, sites = profiled(workgroup_body(stride, size), 64,
                              workgroup=f"memref<{size}xf32, #gpu.address_space<workgroup>>")
    store = sites["store", "workgroup"]
    assert (store.requests, store.units, store.ideal) == (2, 2 * ways, 2)
    assert profile.conflicts("store") == ways
    assert counts(sites["load", "workgroup"]) == (2, 8, 2, 2)
    assert profile.conflicts("load") == 1.0


def test_wide_accesses_are_16_bytes_a_request():
    """No GPU thread moves more than 16 bytes at once: lane i's 32 bytes
    at 32 * i (vector<8xf32>, 32-byte aligned) are two requests, each 16
    bytes a lane 32 bytes apart (a sector a lane, half of it used; in
    workgroup memory, 8 lanes a wavefront at banks 8 words apart: 2-way
    conflicts)."""
    body = """
      %c8 = arith.constant 8 : index
      %al = memref.assume_alignment %out, 32 : memref<512xf32>
      %i = arith.muli %tx, %c8 : index
      %v = vector.load %al[%i] : memref<512xf32>, vector<8xf32>
      vector.store %v, %sh[%i] : memref<512xf32, #gpu.address_space<workgroup>>, vector<8xf32>"""
    profile, sites = profiled(body, 512, workgroup="memref<512xf32, #gpu.address_space<workgroup>>")
    load, store = sites["load", "device"], sites["store", "workgroup"]
    assert load.type == store.type == "vector<8xf32>"
    assert counts(load) == (4, 2048, 128, 64)
    assert profile.efficiency("load") == 0.5
    assert (store.requests, store.units, store.ideal) == (4, 32, 16)
    assert profile.conflicts("store") == 2.0


@pytest.mark.parametrize("target", ["cuda", "rocm"])
def test_misaligned_vectors_are_moved_in_pieces(target):
    """A vector is moved in the pieces its alignment allows: lane i's
    vector<4xf32> at float 4i + 1 is 4-byte aligned, so four requests of a
    float a lane, 16 bytes apart (32 lanes: 128 bytes in 16 sectors, 4 at
    best; 17 for the last, at float 4i + 4); aligned to 16 bytes (at 4i),
    one request of 512 bytes."""
    def load_at(offset):
        body = f"""
          %c4 = arith.constant 4 : index
          %off = arith.constant {offset} : index
          %al = memref.assume_alignment %out, 16 : memref<320xf32>
          %base = arith.muli %tx, %c4 : index
          %i = arith.addi %base, %off : index
          %v = vector.load %al[%i] : memref<320xf32>, vector<4xf32>
          %w = arith.addf %v, %v : vector<4xf32>
          vector.store %w, %al[%i] : memref<320xf32>, vector<4xf32>"""
        with memory_profile.record(blocks=0) as profile:
            _, error = run_kernel(body, (320,), threads=32, host_alloc=True, profile=True,
                                  target=target)
        assert error is None
        (load,) = [s for s in profile.sites if s.op == "load"]
        return load
    load = load_at(1)
    assert (load.type, load.alignment) == ("vector<4xf32>", 4)
    assert counts(load) == (4, 512, 3 * 16 + 17, 16)
    aligned = load_at(0)
    assert aligned.alignment == 16
    assert counts(aligned) == (1, 512, 16, 16)


def test_amd_waves_of_64():
    """On AMD a request is a wave's 64 lanes: 256 bytes, 8 sectors; in
    workgroup memory, two groups of 32 lanes (2 wavefronts at best)."""
    size = 128 * 32
    profile, sites = profiled(workgroup_body(32, size, 128), 128, threads=128, target="rocm",
                              workgroup=f"memref<{size}xf32, #gpu.address_space<workgroup>>")
    assert counts(sites["store", "device"]) == (2, 512, 16, 16)
    store = sites["store", "workgroup"]
    assert (store.requests, store.units, store.ideal) == (2, 128, 4)
    assert profile.conflicts("store") == 32


def test_divergent_lanes_make_one_request():
    """Only lanes 0-15 of warp 0 load: one request of 64 bytes."""
    body = """
      %c16 = arith.constant 16 : index
      %low = arith.cmpi ult, %tx, %c16 : index
      scf.if %low {
        %v = memref.load %out[%tx] : memref<64xf32>
        %w = arith.addf %v, %v : f32
        memref.store %w, %out[%tx] : memref<64xf32>
      }"""
    _, sites = profiled(body, 64)
    assert counts(sites["load", "device"]) == (1, 64, 2, 2)


MERGEABLE_LOADS = """
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %al = memref.assume_alignment %out, 16 : memref<256xf32>
      %i0 = arith.muli %tx, %c4 : index
      %i1 = arith.addi %i0, %c1 : index
      %i2 = arith.addi %i0, %c2 : index
      %i3 = arith.addi %i0, %c3 : index
      %a = memref.load %al[%i0] : memref<256xf32>
      %b = memref.load %al[%i1] : memref<256xf32>
      %c = memref.load %al[%i2] : memref<256xf32>
      %d = memref.load %al[%i3] : memref<256xf32>
      %again = memref.load %al[%i0] : memref<256xf32>
      %ab = arith.addf %a, %b : f32
      %cd = arith.addf %c, %d : f32
      %abcd = arith.addf %ab, %cd : f32
      %v = arith.mulf %abcd, %again : f32
      memref.store %v, %al[%i0] : memref<256xf32>"""


@pytest.mark.parametrize("target,warps", [("cuda", 2), ("rocm", 1)])
def test_counts_the_loads_the_optimizer_leaves(target, warps):
    """The profile counts a kernel's accesses as LLVM's optimizer leaves
    them for the GPU, at the target's opt level: lane i's floats 4i to
    4i + 3 (16-byte aligned) and 4i again are one 16-byte load (the
    load-store vectorizer, and the repeated load merged), 512 bytes a
    request of 32 lanes; at O0, five loads of a float each."""
    def sites(opt_level):
        with memory_profile.record(blocks=0) as profile:
            _, error = run_kernel(MERGEABLE_LOADS, (256,), host_alloc=True, profile=True,
                                  target=target, opt_level=opt_level)
        assert error is None
        return [(s.op, s.type, counts(s)) for s in profile.sites]
    lanes = 64 // warps
    store = ("store", "f32", (warps, 256, warps * lanes // 2, 8))
    assert sites(None) == [("load", "vector<4xf32>", (warps, 1024, 32, 32)), store]
    assert sites(0) == [("load", "f32", (warps, 256, warps * lanes // 2, 8))] * 5 + [store]


@pytest.mark.parametrize("sample", [0, 1, 8, 100, 200])
def test_blocks_sampled(sample):
    """Of a grid of 100 blocks, `sample` profiled: the first of each of
    `sample` equal runs of blocks, and the last; every one with 0."""
    body = read_write("%c64 = arith.constant 64 : index\n"
                      "      %off = arith.muli %bx, %c64 : index\n"
                      "      %i = arith.addi %tx, %off : index", 64 * 100)
    with memory_profile.record(blocks=sample) as profile:
        _, error = run_kernel(body, (6400,), blocks=100, host_alloc=True, profile=True)
    assert error is None
    want = 100 if sample in (0, 100, 200) else len(
        {math.ceil(i * 100 / sample) for i in range(sample)} | {99})
    (kernel,) = profile.kernels
    assert kernel.blocks == want
    assert {s.requests for s in kernel.sites} == {2 * want}


def test_nothing_recorded_without_the_profile():
    with memory_profile.record() as profile:
        _, error = run_kernel(read_write("%i = arith.addi %tx, %tx : index", 128), (128,),
                              host_alloc=True)
    assert error is None
    assert profile.kernels == []
    assert profile.efficiency() is None


# The fused ops' kernels: their results unchanged with the profile (each
# access lets the warp's other lanes run), and what their requests need.
# The row ops' schedules read and write each row with consecutive lanes on
# consecutive 16-byte vectors, and reduce through workgroup memory without
# bank conflicts.
def row_op_case(op, rows, cols):
    """The inputs, params and float64 reference (the formulas of
    docs/FusedOps.md) of a row op."""
    x = np.random.default_rng(11).standard_normal((rows, cols)).astype(np.float32)
    x64 = x.astype(np.float64)
    if op == "softmax_last_dim":
        e = np.exp(x64 - x64.max(-1, keepdims=True))
        return [x], {}, e / e.sum(-1, keepdims=True)
    if op == "rms_norm_last_dim":
        return [x], {"eps": 1e-5}, x64 / np.sqrt((x64 ** 2).mean(-1, keepdims=True) + 1e-5)
    centered = x64 - x64.mean(-1, keepdims=True)
    return [x], {"eps": 1e-5}, centered / np.sqrt((centered ** 2).mean(-1, keepdims=True) + 1e-5)


@pytest.mark.parametrize("target", ["cuda-emulator", "rocm-emulator"])
@pytest.mark.parametrize("op", ["softmax_last_dim", "rms_norm_last_dim", "layer_norm_last_dim"])
def test_row_ops_are_coalesced(op, target):
    inputs, params, want = row_op_case(op, 24, 1024)
    fn = runner.compile(fused_text(op, inputs, params), "f", target=target, memory_profile=True)
    with memory_profile.record(blocks=4) as profile:
        got = fn(*inputs)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)
    (kernel,) = profile.kernels
    assert kernel.blocks == 5
    assert profile.efficiency("load") == profile.efficiency("store") == 1.0
    assert profile.conflicts() == 1.0
    assert {s.type for s in profile.sites if s.space == "device"} == {"vector<4xf32>"}


@pytest.mark.parametrize("target", ["cuda-emulator", "rocm-emulator"])
def test_nf4_decode_reads_its_codes_whole(target):
    """nf4_matmul decoding (one row): a thread's chunk of 8 k has 4 bytes
    of codes (two a byte along k), one 4-byte load a lane, consecutive
    lanes on consecutive words: every code request coalesced."""
    rng = np.random.default_rng(3)
    n, k = 8, 1024
    codes = rng.integers(0, 16, (n, k))
    absmax = np.abs(rng.standard_normal((n, k // 64))).astype(np.float32) + 0.1
    a = rng.standard_normal((1, k)).astype(np.float32)
    inputs = [a, ref.nf4_pack(codes).view(np.int8), absmax]
    fn = runner.compile(fused_text("nf4_matmul", inputs, {}), "f", target=target,
                        memory_profile=True)
    with memory_profile.record(blocks=0) as profile:
        got = fn(*inputs)
    want = a.astype(np.float64) @ ref.nf4_dequant(codes, absmax, 64).T
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    (codes_site,) = [s for s in profile.sites if s.type.endswith("xi8>") or s.type == "i8"]
    assert (codes_site.type, codes_site.alignment) == ("vector<4xi8>", 4)
    assert codes_site.bytes == 32 * codes_site.units == n * k // 2


@pytest.mark.parametrize("target", ["cuda-emulator", "rocm-emulator"])
def test_awq_decode_reads_each_word_once_coalesced(target):
    """awq_matmul decoding (one row): its [K, N] weight packs 8 codes a
    word along n, so lanes go along n, a word (8 columns) each: a warp
    reads 8 consecutive words of 4 rows, every request whole, and each word
    once (the block per output column read each 8 times, a word of rows
    8 k apart a request: 12%). The partial sums go through workgroup memory
    without bank conflicts, and the columns are written whole."""
    rng = np.random.default_rng(5)
    k, n, group = 1024, 128, 128
    q, z = rng.integers(0, 16, (k, n)), rng.integers(0, 16, (k // group, n))
    scales = (rng.random((k // group, n)) * 0.05 + 0.01).astype(np.float32)
    a = rng.standard_normal((1, k)).astype(np.float32)
    inputs = [a, ref.awq_pack(q).view(np.int32), ref.awq_pack(z).view(np.int32), scales]
    fn = runner.compile(fused_text("awq_matmul", inputs, {"group_size": group}), "f",
                        target=target, memory_profile=True)
    with memory_profile.record(blocks=0) as profile:
        got = fn(*inputs)
    w = (q - np.repeat(z, group, 0)) * np.repeat(scales.astype(np.float64), group, 0)
    np.testing.assert_allclose(got, a.astype(np.float64) @ w, rtol=1e-5, atol=1e-4)
    words = [s for s in profile.sites if s.space == "device" and s.type == "i32"]
    # A chunk of 8 k: a word of each of its 8 rows, and the group's zeros.
    assert len(words) == 9 and all(s.units == s.ideal for s in words)
    # The weight's K * N / 8 words read once, 4 bytes each; a zeros' word
    # once per chunk and thread, a request's threads (a warp of 32 lanes, 4
    # chunks; a wave of 64 on AMD, 8 chunks) in one group: once a request.
    chunks_a_request = (64 if target == "rocm-emulator" else 32) // 8
    assert sum(s.bytes for s in words) == k * n // 2 + (k // 8) * (n // 8) * 4 // chunks_a_request
    assert profile.conflicts() == 1.0
    assert profile.efficiency("store") == 1.0


@pytest.mark.parametrize("target", ["cuda-emulator", "rocm-emulator"])
def test_cross_entropy_moves_whole_words(target):
    """fused_softmax_cross_entropy's labels (i64) are read 8 bytes at a
    time, and each block's loss (an f32) is written as one word: as a
    memcpy it had no alignment (four byte stores), and an i64 load without
    one took the default data layout's 4 bytes (two 32-bit loads)."""
    rng = np.random.default_rng(6)
    logits = rng.standard_normal((8, 256)).astype(np.float32)
    targets = rng.integers(0, 256, 8).astype(np.int64)
    targets[3] = -100
    fn = runner.compile(fused_text("fused_softmax_cross_entropy", [logits, targets],
                                   {"reduction": "mean"}),
                        "f", target=target, memory_profile=True)
    with memory_profile.record(blocks=0) as profile:
        got = fn(logits, targets)
    np.testing.assert_allclose(got, ref.cross_entropy(logits.astype(np.float64), targets, "mean"),
                               rtol=1e-5)
    labels = [s for s in profile.sites if s.space == "device" and s.type == "i64"]
    assert labels and {(s.op, s.alignment) for s in labels} == {("load", 8)}
    stores = [s for s in profile.sites if s.space == "device" and s.op == "store"]
    assert stores and {(s.type, s.alignment) for s in stores} == {("f32", 4)}


@pytest.mark.parametrize("target", ["cuda-emulator", "rocm-emulator"])
def test_staged_attention_without_bank_conflicts(target):
    """flash_attn's staged form copies each block of 16 keys transposed
    into a [D, 16] tile with rows 20 words apart: each thread writes 4
    keys of a row at once (16 bytes; 8 consecutive rows cover the 32
    banks), where one word a thread down a column was 4-way conflicted.
    For NVIDIA GPUs the block's query rows, which each thread reads at
    every key block, are copied once into a tile with rows 68 words
    apart: a thread's 16-byte reads of its row are free of bank
    conflicts, where its reads of global memory (a float a lane, lanes a
    row apart) were 12% of their sectors and most of the kernel's
    requests (18% over all). The rows of the output then go through that
    tile (each thread writes its row there, and the block copies the tile
    out, consecutive threads on consecutive 16 bytes of a row): whole
    stores, where a thread writing its own row moved a float a lane.
    fuel-to-rocdl's own-rows-bytes is 0: the AMD kernels read and write
    those rows in global memory. In f16, the copies move 16 bytes of the
    f32 tiles a thread (8 bytes of global memory) rather than 16 bytes of
    global memory: 32 bytes of a tile put threads 0 and 4 of a quarter
    of a warp on the same banks."""
    check_staged_attention_profile(target, np.float32)
    check_staged_attention_profile(target, np.float16)


def check_staged_attention_profile(target, dtype):
    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal((1, 2, 128, 64)).astype(dtype) for _ in range(3))
    params = {"softmax_scale": 0.125, "causal": True}
    fn = runner.compile(fused_text("flash_attn", [q, k, v], params), "f", target=target,
                        memory_profile=True)
    with memory_profile.record(blocks=2) as profile:
        got = fn(q, k, v)
    s = np.einsum("bhqd,bhkd->bhqk", q.astype(np.float64), k.astype(np.float64)) * 0.125
    s = np.where(np.tril(np.ones((128, 128), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    want = (p / p.sum(-1, keepdims=True)) @ v.astype(np.float64)
    if dtype == np.float32:
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    else:
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-3, atol=2e-3)
    chunk = "vector<4xf32>" if dtype == np.float32 else "vector<4xf16>"
    # The keys' and values' copies, and on NVIDIA GPUs the queries' and
    # the output's, in 16-byte pieces of the tiles.
    stores = [s for s in profile.sites if s.space == "workgroup" and s.op == "store"]
    assert stores and "vector<4xf32>" in {s.type for s in stores}
    assert "vector<8xf32>" not in {s.type for s in profile.sites if s.space == "workgroup"}
    assert profile.conflicts("store") == profile.conflicts("load") == 1.0
    # The copies of the keys and values are coalesced; for NVIDIA GPUs, so
    # is every device load and store: the queries and the output rows go
    # through a tile, once a block.
    loads = [s for s in profile.sites if s.space == "device" and s.op == "load"]
    copies = [s for s in loads if s.type in (str(np.dtype(dtype)).replace("float", "f"), chunk)]
    assert copies and all(s.units == s.ideal for s in copies)
    if target == "cuda-emulator":
        assert loads == copies and profile.efficiency("load") == 1.0
        outs = [s for s in profile.sites if s.space == "device" and s.op == "store"]
        assert {s.type for s in outs} == {chunk}
        assert profile.efficiency("store") == 1.0
    else:
        assert profile.efficiency("load") < 0.5
        assert profile.efficiency("store") < 0.5


@pytest.mark.parametrize("target", ["cuda-emulator", "rocm-emulator"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
def test_staged_conv2d_without_bank_conflicts(dtype, target):
    """conv2d's staged tiles (the implicit matrix product's 32 x 16 pixel
    and 16 x 32 filter tiles): the filters' chunks, 16 bytes of f16 read at
    once and 32 bytes of the f32 tile, are written as two 16-byte pieces in
    an order that depends on the thread (1.5x the wavefronts written in
    order)."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((1, 64, 32, 32)).astype(dtype)
    w = (rng.standard_normal((64, 64, 3, 3)) * 0.1).astype(dtype)
    bias = rng.standard_normal(64).astype(dtype)
    fn = runner.compile(fused_text("conv2d", [x, w, bias], {"stride": 1, "padding": 1}), "f",
                        target=target, memory_profile=True)
    with memory_profile.record(blocks=2) as profile:
        got = fn(x, w, bias)
    want = ref.conv2d(*(np.asarray(a, np.float64) for a in (x, w, bias)), (1, 1), (1, 1), 1)
    tol = 1e-5 if dtype == np.float32 else 2e-3
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol * np.abs(want).max())
    workgroup = [s for s in profile.sites if s.space == "workgroup"]
    assert workgroup and "vector<8xf32>" not in {s.type for s in workgroup}
    if dtype == np.float16:
        assert "vector<8xf16>" in {s.type for s in profile.sites if s.space == "device"}
    assert profile.conflicts("store") == profile.conflicts("load") == 1.0


@pytest.mark.parametrize("target", ["cuda-emulator", "rocm-emulator"])
@pytest.mark.parametrize("m,k,n,dtype", [(64, 64, 64, np.float32), (1536, 64, 1536, np.float32),
                                         (64, 64, 64, np.float16), (256, 512, 256, np.float16),
                                         (1536, 64, 1536, np.float16)],
                         ids=["64-f32", "1536-f32", "64-f16", "256-f16", "1536-f16"])
def test_staged_linear_without_bank_conflicts(m, k, n, dtype, target):
    """fused_linear's staged tiles (64 x 64 tiles of 4 x 4; 128 x 128 of
    8 x 8 where they still fill the GPU): the A and B tiles are written as
    16-byte chunks of consecutive columns, and read by each thread as
    rows of its tile; the 8 x 8 tiles' B layout (its two groups of 4
    columns in the tile's two halves) keeps the 8 threads of a 16-byte
    wavefront on 8 different 16-byte groups of banks. In f16 a thread
    reads 16 bytes (8 elements, 32 bytes of the f32 tile) at once and
    writes them as two 16-byte pieces, the threads of a wavefront's two
    halves in opposite orders (2 wavefronts a piece when written in
    order)."""
    rng = np.random.default_rng(6)
    a = rng.standard_normal((m, k)).astype(dtype)
    w = rng.standard_normal((k, n)).astype(dtype)
    bias = rng.standard_normal(n).astype(dtype)
    fn = runner.compile(fused_text("fused_linear", [a, w, bias], {}), "f", target=target,
                        memory_profile=True)
    with memory_profile.record(blocks=2) as profile:
        got = fn(a, w, bias)
    want = a.astype(np.float64) @ w.astype(np.float64) + bias
    if dtype == np.float32:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    else:
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-3, atol=2e-3 * np.abs(want).max())
        # The tiles' chunks: 16 bytes of f16 read at once, whole sectors
        # (but for gfx942's 64 x 64 tiles of 256 threads at 1536, whose
        # [64, 16] A tile has 128 chunks of 8: chunks of 4, in order).
        copies = [s for s in profile.sites if s.space == "device" and s.op == "load"
                  and s.type in ("vector<8xf16>", "vector<4xf16>")]
        assert copies and all(s.units == s.ideal for s in copies)
        if (m, target) != (1536, "rocm-emulator"):
            assert "vector<8xf16>" in {s.type for s in copies}
    workgroup = {s.type for s in profile.sites if s.space == "workgroup"}
    assert "vector<4xf32>" in workgroup and "vector<8xf32>" not in workgroup
    assert profile.conflicts("load") == profile.conflicts("store") == 1.0
    assert profile.efficiency("load") >= 0.9


def test_profile_errors():
    text = fused_text("softmax_last_dim", [np.zeros((4, 64), np.float32)])
    with pytest.raises(runner.RunnerError, match="memory_profile= is for the emulator targets"):
        runner.compile(text, "f", memory_profile=True)
    for bad in (-1, 1.5, True, "8"):
        with pytest.raises(runner.RunnerError, match=r"blocks must be an int >= 0"):
            with memory_profile.record(blocks=bad):
                pass


def test_fuel_run_memory_profile(tmp_path, capsys):
    x = np.random.default_rng(5).standard_normal((4, 256)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    path = tmp_path / "m.mlir"
    path.write_text(fused_text("softmax_last_dim", [x]))
    assert run.main([str(path), "--function=f", f"--input=@{tmp_path / 'x.npy'}",
                     f"--output=@{tmp_path / 'y.npy'}", "--target=cuda-emulator",
                     "--memory-profile"]) == 0
    out = capsys.readouterr().out
    assert "ld eff" in out and "100%" in out
    # A line a site: softmax's rows, read and written 16 bytes a lane.
    sites = [line.split() for line in out.splitlines() if "device" in line.split()]
    assert sites and all(s[3:5] == ["vector<4xf32>", "16"] and s[6] == "100%"
                         for s in sites), out
    assert run.main([str(path), "--function=f", f"--input=@{tmp_path / 'x.npy'}",
                     "--memory-profile"]) == 1
    assert "--memory-profile needs --target=cuda-emulator or rocm-emulator" in \
        capsys.readouterr().err
