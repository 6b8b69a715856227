"""Every op at random held-out shapes, dtypes and params (seeded: the same
cases every run), through both GPU pipelines: fuel-to-nvvm's PTX accepted
by ptxas for sm_80, fuel-to-rocdl's device IR by llc-22 and ld.lld-22 for
gfx90a, none of them calling the device's malloc. The fixed cases of
test_gpu_nvvm.py and test_gpu_rocdl.py check each schedule's structure;
these check that no shape between them breaks a schedule: odd and prime
lengths, one row, heads of 80, K off the steps, grids that take the large
tiles. (`python test/python/test_gpu_held_out.py N` compiles N more cases
per op from other seeds.)"""

import random
import sys

import numpy as np
import pytest

import references as ref
from numerics import BF16, fused_text
from test_qmatmul import GEOMETRY, as_words, random_blocks

from fuel_mlir import gpu

HAVE_PTXAS = gpu.ptxas_path() is not None
HAVE_LLC = all(gpu.llvm_tool(t) for t in ("opt", "llc", "ld.lld"))

LENGTHS = [1, 2, 3, 5, 7, 16, 31, 32, 33, 48, 64, 96, 100, 128, 255, 256, 257, 384, 513, 1000, 1024, 2048,
           4097]
ROW_OPS = ["softmax_last_dim", "rms_norm_last_dim", "layer_norm_last_dim", "inplace_affine"]
ROW_BACKWARDS = ["softmax_last_dim_backward", "rms_norm_last_dim_backward", "layer_norm_last_dim_backward"]
ATTENTION = ["flash_attn", "flash_attn_backward_q", "flash_attn_backward_k", "flash_attn_backward_v"]


class Case:
    """Random inputs and params of one op from `rng` (shapes only matter:
    the inputs are zeros where their values do not)."""

    def __init__(self, seed):
        self.r = random.Random(seed)
        self.dtype = self.r.choice([np.float32, np.float16] + ([BF16] if BF16 else []))

    def pick(self, xs):
        return self.r.choice(xs)

    def length(self, most=4097):
        return self.pick([n for n in LENGTHS if n <= most])

    def x(self, *shape, dtype=None):
        return np.zeros(shape, dtype or self.dtype)

    def of(self, name):
        """(inputs, params) of `name`."""
        x, pick = self.x, self.pick
        rows, n = self.length(300), self.length()
        if name in ROW_OPS:
            params = {"eps": 1e-5} if "norm" in name else {"mul": 2.0, "add": 1.0} if name == "inplace_affine" else {}
            return [x(rows, n)], params
        if name in ROW_BACKWARDS:
            return [x(rows, n), x(rows, n)], {"eps": 1e-5} if "norm" in name else {}
        if name == "reduce_max_to_backward":
            return [x(rows, n), x(rows, 1)], {}
        if name == "powi_backward":
            return [x(rows, n), x(rows, n)], {"exp": pick([2, 3, -1])}
        if name == "fused_linear":
            m, k, cols = pick([1, 7, 64, 96, 256, 1024, 2048]), self.length(1024), pick([5, 32, 100, 128, 2048])
            lead = pick([(), (), (3,)])
            return [x(*lead, m, k), x(k, cols), x(cols)], {}
        if name in ATTENTION:
            b, hkv = pick([1, 2]), pick([1, 2])
            hq, sq, sk, d = hkv * pick([1, 2]), self.length(600), self.length(600), pick([8, 16, 32, 64, 80, 96, 128])
            q, k, v = x(b, hq, sq, d), x(b, hkv, sk, d), x(b, hkv, sk, d)
            params = {"softmax_scale": 0.3}
            if name != "flash_attn":
                return [q, k, v, x(b, hq, sq, d)], params
            mask = pick(["", "causal", "window"])
            if mask == "causal":
                params["causal"] = True
            elif mask == "window":
                params["window_size_left"] = pick([3, 17, 100])
            return [q, k, v], params
        if name == "conv2d":
            g = pick([1, 1, 2, 4])
            c, f, kh, h = g * pick([1, 2, 3, 8]), g * pick([1, 4, 8, 16, 64]), pick([1, 3, 5]), pick([5, 7, 14, 33])
            return [x(pick([1, 2]), c, h, h), x(f, c // g, kh, kh), x(f)], \
                {"padding": (kh // 2, kh // 2), "stride": (pick([1, 2]),) * 2, "groups": g}
        if name == "conv_transpose_2d":
            c, f, h = pick([2, 8, 16, 32]), pick([3, 8, 32]), pick([4, 7, 16])
            return [x(1, c, h, h), x(c, f, 3, 3)], {"stride": (2, 2), "padding": (1, 1), "output_padding": (1, 1)}
        if name == "causal_conv1d":
            c, width = self.length(64), pick([2, 3, 4])
            return [x(pick([1, 2]), c, max(self.length(2048), width)), x(c, 1, width), x(c)], \
                {"use_silu": pick([True, False])}
        if name == "qmatmul":
            qtype, k, cols = pick(sorted(GEOMETRY)), 256 * pick([1, 2, 4, 16]), pick([1, 3, 64, 100, 256])
            weights = as_words(random_blocks(qtype, cols, k, seed=self.r.randrange(1000)))
            return [x(pick([1, 2, 7, 16, 32, 64, 96]), k), weights], {"quant_type": qtype, "k": k, "n": cols}
        if name == "nf4_matmul":
            k, cols = 64 * pick([2, 4, 64]), pick([1, 6, 64, 128])
            codes = np.zeros((cols, k), np.int64)
            return [x(pick([1, 3, 16, 32, 64]), k), ref.nf4_pack(codes).view(np.int8),
                    x(cols, k // 64, dtype=np.float32)], {}
        if name == "awq_matmul":
            group = pick([64, 128])
            k, cols = group * pick([1, 2, 8]), 8 * pick([1, 2, 16, 64])
            q, z = np.zeros((k, cols), np.int64), np.zeros((k // group, cols), np.int64)
            return [x(pick([1, 2, 16, 32, 64]), k), ref.awq_pack(q).view(np.int32), ref.awq_pack(z).view(np.int32),
                    x(k // group, cols)], {"group_size": group}
        if name == "rope":
            s, d = self.length(300), 2 * pick([4, 8, 32, 64])
            return [x(pick([1, 2]), s, d), x(s, d), x(s, d)], {}
        if name == "fused_softmax_cross_entropy":
            return [x(rows, n), np.zeros(rows, np.int64)], {"reduction": pick(["mean", "sum", "none"])}
        if name == "selective_scan":
            length, d, state = self.length(300), self.length(300), pick([2, 4, 16])
            return [x(1, length, d), x(1, length, d), x(d, state), x(1, length, state), x(1, length, state)], \
                {"delta_softplus": True}
        if name == "ssd_chunk_scan":
            chunk = pick([2, 4, 16, 64])
            length, heads, p, state = chunk * pick([1, 3, 8]), pick([1, 2, 3]), pick([3, 16, 64]), pick([2, 16, 64])
            return [x(1, length, heads, p), x(1, length, heads), x(heads), x(1, length, heads, state),
                    x(1, length, heads, state)], {"chunk_size": chunk}
        if name == "paged_attn":
            bs, hkv, d, blocks, seqs = pick([1, 4, 16]), pick([1, 2]), pick([8, 64, 128]), pick([3, 40]), pick([1, 3])
            hq, width = hkv * pick([1, 4]), pick([2, 8, 40])
            table = np.zeros((seqs, width), np.int32)
            return [x(seqs, hq, d), x(blocks, hkv, bs, d), x(blocks, hkv, bs, d), table,
                    np.ones(seqs, np.int32)], {"softmax_scale": 0.3, "block_size": bs}
        raise KeyError(name)


OPS = sorted(ROW_OPS + ROW_BACKWARDS + ATTENTION + [
    "reduce_max_to_backward", "powi_backward", "fused_linear", "conv2d", "conv_transpose_2d", "causal_conv1d",
    "qmatmul", "nf4_matmul", "awq_matmul", "rope", "fused_softmax_cross_entropy", "selective_scan",
    "ssd_chunk_scan", "paged_attn"])


def compile_both(name, seed):
    """Compiles the op's case of `seed` for sm_80 and gfx90a; returns its
    description."""
    inputs, params = Case(seed * 1000 + OPS.index(name)).of(name)
    text = fused_text(name, inputs, params)
    described = f"{name} {[np.shape(i) for i in inputs]} {np.asarray(inputs[0]).dtype} {params}"
    kernels = gpu.compile_nvvm(text, chip="sm_80")
    assert kernels, described
    for k in kernels:
        assert "malloc" not in k.ptx, described
        if HAVE_PTXAS:
            assert [r.entry for r in gpu.ptxas(k.ptx, "sm_80")] == list(k.entries), described
    for k in gpu.compile_rocdl(text, chip="gfx90a"):
        if HAVE_LLC:
            gpu.amdgpu_code_object(k.llvm_ir, "gfx90a")
    return described


def test_every_op_is_covered():
    from fuel_mlir import registry
    assert OPS == sorted(e.name for e in registry.entries() if not e.is_runtime)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("name", OPS)
def test_held_out_case_compiles(fuel_opt, monkeypatch, name, seed):
    monkeypatch.setenv("FUEL_OPT", fuel_opt)
    compile_both(name, seed)


# The staged contraction's 128 x 128 tiles (8 x 8 a thread) through the
# whole pipeline for each op that shares it, at grids of at least sm_80's
# 108 blocks: 16 KiB of shared memory, no spills.
LARGE_TILES = {
    "fused_linear": ([np.zeros((1536, 40), np.float16), np.zeros((40, 1280), np.float16),
                      np.zeros((1280,), np.float16)], {}),
    "conv2d": ([np.zeros((8, 64, 32, 32), np.float32), np.zeros((256, 64, 3, 3), np.float32),
                np.zeros((256,), np.float32)], {"padding": (1, 1)}),
    "qmatmul": ([np.zeros((1024, 256), np.float32), as_words(random_blocks("q8_0", 2048, 256, seed=1))],
                {"quant_type": "q8_0", "k": 256, "n": 2048}),
}


@pytest.mark.parametrize("name", sorted(LARGE_TILES))
def test_large_tiles_compile(fuel_opt, monkeypatch, name):
    monkeypatch.setenv("FUEL_OPT", fuel_opt)
    inputs, params = LARGE_TILES[name]
    (kernel,) = [k for k in gpu.compile_nvvm(fused_text(name, inputs, params), chip="sm_80") if "bar.sync" in k.ptx]
    assert ".maxntid 16, 16, 1" in kernel.ptx and kernel.ptx.count("fma.rn.f32") >= 64 * 8
    if HAVE_PTXAS:
        (report,) = gpu.ptxas(kernel.ptx, "sm_80")
        # A [128, K step] and B [K step, 128]; qmatmul's B, decoded along
        # K (down the columns), in rows of 132 words.
        step = 16 if name != "fused_linear" else 8
        b_row = 132 if name == "qmatmul" else 128
        assert report.shared_bytes == (128 * step + step * b_row) * 4, report
        assert report.spill_stores == 0 and report.stack_bytes == 0, report


if __name__ == "__main__":
    more = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    for seed in range(2, 2 + more):
        for op in OPS:
            print(compile_both(op, seed), flush=True)
