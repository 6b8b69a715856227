"""Every op at seeded random shapes, params and dtypes, with random values,
through the CPU code (fuel-to-llvm) and the GPU kernels on the emulators
(fuel-to-nvvm's for an H100, fuel-to-rocdl's for an MI300X) against
float64 numpy references: odd and prime lengths, one row, heads of 80,
grouped-query heads, masks, windows, softcap with ALiBi, k_len, tables of
few tokens, every GGML type. The fixed cases of the op's own tests check
each schedule's forms; these check the shapes and params between them.

`python test/python/test_random_cases.py TARGET FIRST LAST [OPS]` runs the
seeds FIRST to LAST - 1 of every op (or of OPS, comma-separated) on TARGET
(cpu, cuda-emulator, rocm-emulator; cuda-emulator/sm_80 for another
chip) and prints a line a case. On the emulators odd seeds run each
block's threads in reverse order (a missing barrier shows in one order or
the other)."""

import random
import re
import sys
import time

import numpy as np
import pytest

import references as ref
from numerics import BF16, fused_text
from test_all_ops import layer_bwd, rms_bwd, rope
from test_qmatmul import GEOMETRY, as_words, dequant, random_blocks

from fuel_mlir import registry, runner

LENGTHS = [1, 2, 3, 5, 7, 16, 31, 32, 33, 48, 64, 96, 100, 128, 255, 256, 257, 384, 513, 1000]
DTYPES = [np.float32, np.float16] + ([BF16] if BF16 is not None else [])
# The largest error a case allows, over the largest magnitude of its
# reference (at least 1): the narrow types round every input and result.
TOLERANCE = {np.dtype(np.float32): 1e-4, np.dtype(np.float16): 1e-2}
if BF16 is not None:
    TOLERANCE[np.dtype(BF16)] = 1e-2


def f64(a):
    return np.asarray(a, np.float64)


class Case:
    """One op's random operands, params and float64 reference (a tuple)
    for `seed`: the seed picks the shapes, the params and the dtype."""

    def __init__(self, name, seed):
        self.r = random.Random(seed)
        self.rng = np.random.default_rng(seed)
        self.dtype = self.r.choice(DTYPES)
        self.inputs, self.params, want = getattr(self, name)()
        self.want = want if isinstance(want, tuple) else (want,)
        self.described = f"{name} {[np.shape(i) for i in self.inputs]} {np.dtype(self.dtype).name} {self.params}"

    def pick(self, xs):
        return self.r.choice(xs)

    def length(self, most=1000):
        return self.pick([n for n in LENGTHS if n <= most])

    def x(self, *shape, scale=1.0):
        return (self.rng.standard_normal(shape) * scale).astype(self.dtype)

    def rows(self):
        return self.x(self.length(40), self.length())

    def eps(self):
        return {"eps": 1e-5}

    # Row ops and their backwards.
    def softmax_last_dim(self):
        a = self.rows()
        return [a], {}, ref.ref_softmax(f64(a))

    def rms_norm_last_dim(self):
        a = self.rows()
        return [a], self.eps(), ref.ref_rms(f64(a), 1e-5)

    def layer_norm_last_dim(self):
        a = self.rows()
        return [a], self.eps(), ref.ref_layer(f64(a), 1e-5)

    def inplace_affine(self):
        a = self.rows()
        return [a], {"mul": 2.0, "add": 1.0}, 2 * f64(a) + 1

    def softmax_last_dim_backward(self):
        g = self.rows()
        y = ref.ref_softmax(f64(self.x(*g.shape))).astype(self.dtype)
        return [y, g], {}, ref.ref_softmax_bwd(f64(y), f64(g))

    def rms_norm_last_dim_backward(self):
        a = self.rows()
        g = self.x(*a.shape)
        return [a, g], self.eps(), rms_bwd(f64(a), f64(g), 1e-5)

    def layer_norm_last_dim_backward(self):
        a = self.rows()
        g = self.x(*a.shape)
        return [a, g], self.eps(), layer_bwd(f64(a), f64(g), 1e-5)

    def reduce_max_to_backward(self):
        a = np.round(f64(self.rows()) * 2).astype(self.dtype)   # ties
        g = self.x(a.shape[0], 1)
        return [a, g], {}, ref.reduce_max_backward(f64(a), f64(g))

    def powi_backward(self):
        e = self.pick([2, 3, -1])
        a = (np.abs(f64(self.rows())) + 0.5).astype(self.dtype)
        g = self.x(*a.shape)
        return [a, g], {"exp": e}, e * f64(a) ** (e - 1) * f64(g)

    def fused_softmax_cross_entropy(self):
        logits = self.rows()
        rows, n = logits.shape
        t = self.rng.integers(0, n, rows)
        t[self.rng.random(rows) < 0.2] = -100
        reduction = self.pick(["mean", "sum", "none"])
        return [logits, t], {"reduction": reduction}, ref.cross_entropy(f64(logits), t, reduction)

    # Contractions and convolutions.
    def fused_linear(self):
        m, k, n = self.pick([1, 7, 33, 64, 96, 128]), self.length(600), self.pick([5, 32, 100, 128, 256])
        a, b, bias = self.x(*self.pick([(), (), (3,)]), m, k), self.x(k, n), self.x(n)
        return [a, b, bias], {}, f64(a) @ f64(b) + f64(bias)

    def conv2d(self):
        g = self.pick([1, 1, 2, 4])
        c, f = g * self.pick([1, 2, 3, 8]), g * self.pick([1, 4, 8, 16, 64])
        kh, h, s = self.pick([1, 3, 5]), self.pick([5, 7, 14, 33]), self.pick([1, 2])
        x, w, b = self.x(self.pick([1, 2]), c, h, h), self.x(f, c // g, kh, kh), self.x(f)
        params = {"padding": (kh // 2, kh // 2), "stride": (s, s), "groups": g}
        return [x, w, b], params, ref.conv2d(f64(x), f64(w), f64(b), (s, s), (kh // 2, kh // 2), g)

    def conv_transpose_2d(self):
        c, f, h = self.pick([2, 8, 16, 32]), self.pick([3, 8, 32]), self.pick([4, 7, 16])
        x, w = self.x(1, c, h, h), self.x(c, f, 3, 3)
        params = {"stride": (2, 2), "padding": (1, 1), "output_padding": (1, 1)}
        return [x, w], params, ref.conv_transpose2d(f64(x), f64(w), (2, 2), (1, 1), (1, 1), (1, 1), 1)

    def causal_conv1d(self):
        c, width, silu = self.length(64), self.pick([2, 3, 4]), self.pick([True, False])
        x, w, b = self.x(self.pick([1, 2]), c, max(self.length(600), width)), self.x(c, 1, width), self.x(c)
        return [x, w, b], {"use_silu": silu}, ref.causal_conv1d(f64(x), f64(w), f64(b), silu)

    # Quantized matmuls.
    def qmatmul(self):
        qtype, k, n = self.pick(sorted(GEOMETRY)), 256 * self.pick([1, 2, 4]), self.pick([1, 3, 64, 100])
        blocks = random_blocks(qtype, n, k, seed=self.r.randrange(1000))
        a = self.x(self.pick([1, 2, 7, 16, 32, 64]), k)
        return [a, as_words(blocks)], {"quant_type": qtype, "k": k, "n": n}, f64(a) @ dequant(qtype, blocks, k).T

    def nf4_matmul(self):
        k, n = 64 * self.pick([2, 4, 16]), self.pick([1, 6, 64, 128])
        codes = self.rng.integers(0, 16, (n, k))
        absmax = (np.abs(self.rng.standard_normal((n, k // 64))) + 0.1).astype(np.float32)
        a = self.x(self.pick([1, 3, 16, 32, 64]), k)
        return [a, ref.nf4_pack(codes).view(np.int8), absmax], {}, \
            f64(a) @ ref.nf4_dequant(codes, f64(absmax), 64).T

    def awq_matmul(self):
        group = self.pick([64, 128])
        k, n = group * self.pick([1, 2, 8]), 8 * self.pick([1, 2, 16])
        q, z = self.rng.integers(0, 16, (k, n)), self.rng.integers(0, 16, (k // group, n))
        s = np.abs(self.x(k // group, n, scale=0.05))
        a = self.x(self.pick([1, 2, 16, 32, 64]), k)
        return [a, ref.awq_pack(q).view(np.int32), ref.awq_pack(z).view(np.int32), s], {"group_size": group}, \
            f64(a) @ ((q - np.repeat(z, group, 0)) * np.repeat(f64(s), group, 0))

    # Attention.
    def masks(self, params, kw, windows=(3, 17, 100)):
        """Random causal, window and softcap params, in the op's names
        (`params`) and the reference's (`kw`)."""
        if self.pick([0, 1]):
            params["causal"] = kw["causal"] = True
        if self.pick([0, 1, 2]) == 0:
            params["window_size_left"] = kw["window_left"] = self.pick(windows)
        if self.pick([0, 1, 2]) == 0:
            params["window_size_right"] = kw["window_right"] = self.pick([0, 2, 30])
        if self.pick([0, 1]):
            params["softcap"] = kw["softcap"] = self.pick([2.0, 5.0])

    def slopes(self, *shape):
        return (0.05 * (1 + np.arange(np.prod(shape)))).reshape(shape).astype(np.float32)

    def flash_attn(self):
        b, hkv = self.pick([1, 2]), self.pick([1, 2])
        hq, sq, sk = hkv * self.pick([1, 2, 4]), self.length(130), self.length(260)
        d, dv = self.pick([8, 16, 32, 64, 80, 96, 128]), self.pick([8, 16, 64, 128])
        q, k, v = self.x(b, hq, sq, d), self.x(b, hkv, sk, d), self.x(b, hkv, sk, dv)
        params, kw, operands = {"softmax_scale": 0.3}, {}, [q, k, v]
        self.masks(params, kw, windows=(0, 3, 17, 100))
        alibi = self.pick([None, (hq,), (b, hq)])
        if alibi:
            operands.append(self.slopes(*alibi))
            kw["alibi"] = f64(operands[-1])
        if self.pick([0, 1]):
            kw["k_len"] = self.r.randrange(0, sk + 2)
            operands.append(kw["k_len"])
        return operands, params, ref.flash_attn(f64(q), f64(k), f64(v), 0.3, **kw)

    def attention_backward(self, which):
        b, hkv = self.pick([1, 2]), self.pick([1, 2])
        hq, sq, sk, d = hkv * self.pick([1, 2]), self.length(130), self.length(260), self.pick([8, 16, 32, 64, 80, 128])
        q, k, v, do = self.x(b, hq, sq, d), self.x(b, hkv, sk, d), self.x(b, hkv, sk, d), self.x(b, hq, sq, d)
        params, kw, operands = {"softmax_scale": 0.3}, {}, [q, k, v, do]
        self.masks(params, kw)
        if self.pick([0, 1]):
            operands.append(self.slopes(hq))
            kw["alibi"] = f64(operands[-1])
        grads = ref.flash_attn_grads(f64(q), f64(k), f64(v), f64(do), 0.3, **kw)
        return operands, params, grads["qkv".index(which)]

    def flash_attn_backward_q(self):
        return self.attention_backward("q")

    def flash_attn_backward_k(self):
        return self.attention_backward("k")

    def flash_attn_backward_v(self):
        return self.attention_backward("v")

    def paged_attn(self):
        bs, hkv, d = self.pick([1, 4, 16]), self.pick([1, 2]), self.pick([8, 64, 80, 128])
        blocks, seqs, hq, width = self.pick([3, 40]), self.pick([1, 3]), hkv * self.pick([1, 4]), self.pick([2, 8, 40])
        table = self.rng.integers(0, blocks, (seqs, width)).astype(np.int32)
        lens = self.rng.integers(0, width * bs + 1, seqs).astype(np.int32)
        q, kc, vc = self.x(seqs, hq, d), self.x(blocks, hkv, bs, d), self.x(blocks, hkv, bs, d)
        params, operands, alibi = {"softmax_scale": 0.3, "block_size": bs}, [q, kc, vc, table, lens], None
        softcap = self.pick([None, 3.0])
        if softcap:
            params["softcap"] = softcap
        if self.pick([0, 1]):
            alibi = self.slopes(hq)
            operands.append(alibi)
        return operands, params, ref.paged_attn(f64(q), f64(kc), f64(vc), table, lens, 0.3, bs, softcap=softcap,
                                                alibi=None if alibi is None else f64(alibi))

    def rope(self):
        s, d = self.length(300), 2 * self.pick([4, 8, 32, 64])
        x, cos, sin = self.x(self.pick([1, 2]), s, d), self.x(s, d), self.x(s, d)
        return [x, cos, sin], {}, rope(f64(x), f64(cos), f64(sin))

    # Scans.
    def selective_scan(self):
        length, d, n = self.length(300), self.length(300), self.pick([2, 4, 16])
        u, delta = self.x(1, length, d), np.abs(self.x(1, length, d))
        a, b, c = -np.abs(self.x(d, n)), self.x(1, length, n), self.x(1, length, n)
        return [u, delta, a, b, c], {"delta_softplus": True}, \
            ref.selective_scan(f64(u), f64(delta), f64(a), f64(b), f64(c), True)

    def ssd_chunk_scan(self):
        chunk = self.pick([2, 4, 16, 64])
        length, heads, p, n = chunk * self.pick([1, 3, 8]), self.pick([1, 2, 3]), self.pick([3, 16, 64]), \
            self.pick([2, 16, 64])
        x, dt, a = self.x(1, length, heads, p), np.abs(self.x(1, length, heads, scale=0.1)), -np.abs(self.x(heads))
        b, c = self.x(1, length, heads, n), self.x(1, length, heads, n)
        return [x, dt, a, b, c], {"chunk_size": chunk}, ref.ssd_scan(f64(x), f64(dt), f64(a), f64(b), f64(c))


OPS = sorted(e.name for e in registry.entries() if not e.is_runtime)


def run_case(name, seed, target):
    """Runs the case on `target` (an emulator's blocks' threads in reverse
    order for odd seeds; `emulator/chip` compiles for that chip); returns
    (its description, the largest error over the largest magnitude of the
    reference, the tolerance)."""
    case = Case(name, seed * 100 + OPS.index(name))
    target, _, chip = target.partition("/")
    fn = runner.compile(fused_text(name, case.inputs, case.params), "f", target=target,
                        chip=chip or None)
    emulated = target.endswith("-emulator")
    if emulated:
        runner.emulator_order("reverse" if seed % 2 else "forward")
    try:
        got = fn(*case.inputs)
    finally:
        if emulated:
            runner.emulator_order("forward")
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(case.want), case.described
    worst = 0.0
    for g, w in zip(got, case.want):
        assert np.shape(g) == np.shape(w), case.described
        if w.size:
            worst = max(worst, np.max(np.abs(f64(g) - w)) / max(1.0, np.max(np.abs(w))))
    return case.described, worst, TOLERANCE[np.dtype(case.dtype)]


def test_every_op_has_cases():
    assert all(hasattr(Case, name) for name in OPS) and len(OPS) == 25


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("target", ["cpu", "cuda-emulator", "rocm-emulator"])
@pytest.mark.parametrize("name", OPS)
def test_random_case(name, target, seed):
    described, worst, tolerance = run_case(name, seed, target)
    assert worst <= tolerance, f"{described}: error {worst:.2e} of the largest value"


# The same cases compiled for a dynamic first dim of the first operand
# (the batch, or the rows), as exports with a dynamic batch or sequence
# have it: the schedules' dynamic forms (rows split by count at run time,
# padded tiles) and the runner's results of dynamic shape, on the CPU.
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name", OPS)
def test_random_case_dynamic_first_dim(name, seed):
    case = Case(name, seed * 100 + OPS.index(name))
    text = fused_text(name, case.inputs, case.params, dynamic={0: (0,)})
    fn = runner.compile(text, "f")
    got = fn(*[a for a in case.inputs if a is not None])
    got = got if isinstance(got, tuple) else (got,)
    for g, w in zip(got, case.want):
        assert np.shape(g) == np.shape(w), case.described
        if w.size:
            worst = np.max(np.abs(f64(g) - w)) / max(1.0, np.max(np.abs(w)))
            assert worst <= TOLERANCE[np.dtype(case.dtype)], (case.described, worst)


# The kernels of the previous generations (attention staged only up to
# heads of 64 before sm_90, tiles fit to fewer multiprocessors), at other
# seeds.
@pytest.mark.parametrize("seed", [4, 5])
@pytest.mark.parametrize("target", ["cuda-emulator/sm_80", "rocm-emulator/gfx90a"])
@pytest.mark.parametrize("name", OPS)
def test_random_case_for_other_chips(name, target, seed):
    described, worst, tolerance = run_case(name, seed, target)
    assert worst <= tolerance, f"{described}: error {worst:.2e} of the largest value"


def allocas_past_entry(llvm_ir):
    """The allocas of `llvm_ir`'s functions outside their entry blocks: a
    new stack allocation each time the block runs (each loop iteration)."""
    count = 0
    for body in re.findall(r"^define .*?\{\n(.*?)^\}", llvm_ir, re.M | re.S):
        blocks = re.split(r"\n(?=\S+:)", body)
        count += sum(len(re.findall(r"= alloca ", b)) for b in blocks[1:])
    return count


# The kernels' private buffers at the random cases of seeds whose kernels
# have none to speak of (the attention backwards' unstaged key rows spill
# at some others; see docs/GPU.md): none of a size that grows with the
# shape (awq's register tiles kept a thread's [K, 4] decoded columns, 2 to
# 4 KiB here, 64 KiB at K = 4096), none of a thread's step over query
# blocks that LLVM hoisted whole out of a loop that runs at most once (dk
# and dv at seeds 1, 12 and 19 spilled 1.5 to 3.6 KiB before
# fuel-gpu-single-trip-loops), none of the backwards' [16, 16] steps at
# heads of 8 and 16 (dk spilled 300 to 600 bytes at seeds 3 and 18, dq
# and dk took 420 to 800 bytes of gfx942 scratch at seeds 1, 6, 7 and 14,
# before their steps of 8), and, for AMD, none allocated past a kernel's
# entry block (a buffer allocated in a loop, a new stack allocation each
# iteration on gfx942).
@pytest.mark.parametrize("name", OPS)
def test_random_case_kernels_keep_buffers_small(name):
    from fuel_mlir import gpu
    has_ptxas = gpu.ptxas_path() is not None
    has_llc = all(gpu.llvm_tool(tool) for tool in ("opt", "llc", "ld.lld"))
    for seed in (0, 1, 2, 3, 6, 7, 12, 14, 18, 19):
        case = Case(name, seed * 100 + OPS.index(name))
        text = fused_text(name, case.inputs, case.params)
        for kernel in gpu.compile_rocdl(text, chip="gfx942"):
            assert allocas_past_entry(kernel.llvm_ir) == 0, (kernel.module, case.described)
            if has_llc:
                code = gpu.amdgpu_code_object(kernel.llvm_ir, "gfx942")
                assert code.scratch_bytes == 0, (kernel.module, code.scratch_bytes, case.described)
        for kernel in gpu.compile_nvvm(text, chip="sm_90"):
            depots = [int(n) for n in re.findall(r"__local_depot\d+\[(\d+)\]", kernel.ptx)]
            assert max(depots, default=0) < 256, (kernel.module, depots, case.described)
            if has_ptxas:
                for report in gpu.ptxas(kernel.ptx, "sm_90"):
                    assert report.stack_bytes < 256, (report, case.described)


# The attention kernels at random cases whose thread takes its step's row
# of 16 scores (or its column of probabilities) 8 at a time, heads wider
# than 64: fuel-gpu-unroll-private-loops unrolls the loops over the row,
# so that none keeps it in local memory (a `__local_depot` in its PTX, 64
# bytes and a 112-byte stack for ptxas, in one kernel of each before the
# pass).
@pytest.mark.parametrize("name,seed", [
    ("flash_attn", 14), ("flash_attn_backward_q", 5),
    ("flash_attn_backward_q", 10), ("flash_attn_backward_k", 11),
    ("flash_attn_backward_k", 16), ("flash_attn_backward_k", 19),
    ("flash_attn_backward_v", 33)])
def test_random_case_score_rows_stay_in_registers(name, seed):
    from fuel_mlir import gpu
    case = Case(name, seed * 100 + OPS.index(name))
    text = fused_text(name, case.inputs, case.params)
    for kernel in gpu.compile_nvvm(text, chip="sm_80"):
        assert "__local_depot" not in kernel.ptx, (kernel.module, case.described)


if __name__ == "__main__":
    target, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    ops = sys.argv[4].split(",") if len(sys.argv) > 4 else OPS
    for seed in range(first, last):
        for op in ops:
            start = time.time()
            try:
                described, worst, tolerance = run_case(op, seed, target)
                verdict = "ok " if worst <= tolerance else "BAD"
                print(f"{verdict} {worst:.1e} {time.time() - start:4.1f}s seed {seed}: {described}", flush=True)
            except Exception as e:  # noqa: BLE001 - a line per case, go on
                print(f"ERR seed {seed}: {op}: {str(e)[-600:]}", flush=True)
