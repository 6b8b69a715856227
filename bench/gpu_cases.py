"""Shapes the GPU benchmarks take besides bench/all_ops.py's (bench/gpu.py
times them, bench/gpu_static.py reports their kernels)."""

import references as ref

from all_ops import cases, rand
from torch_cuda import DECODE, LARGE_LINEAR, contenders


def gpu_only_cases(torch):
    """{label: (op, inputs, params, numpy f, PyTorch CUDA f or None)}: one
    query against 4,096 keys, 32 heads of 128 (flash_attn's split-keys
    form); without a causal mask, which for one query sees every key
    bottom-right and only the first top-left (SDPA's is_causal). And a
    2048 x 2048 x 2048 fused_linear, whose 256 tiles of 128 x 128 give
    every SM of an A100 or H100 a block: the 8 x 8 thread tiles, against
    cuBLAS."""
    q, k, v = rand((1, 32, 1, 128)), rand((1, 32, 4096, 128), 1), rand((1, 32, 4096, 128), 2)
    a, w, b = rand((2048, 2048)), rand((2048, 2048), 1, 0.02), rand((2048,), 2)
    sdpa = addmm = None
    if torch is not None:
        timed = contenders(torch)
        sdpa, addmm = timed[DECODE], timed[LARGE_LINEAR]
    return {DECODE: ("flash_attn", [q, k, v], {"softmax_scale": 0.125},
                     lambda q, k, v: ref.flash_attn(q, k, v, 0.125), sdpa),
            LARGE_LINEAR: ("fused_linear", [a, w, b], {}, lambda a, w, b: a @ w + b, addmm)}


def gpu_bench_cases(torch=None):
    """Every case the GPU benchmarks take: {label: (op, inputs, params,
    numpy f, PyTorch CUDA f or None)}, each op at bench/all_ops.py's shapes
    and gpu_only_cases' (in that order, each sorted); without `torch`, no
    PyTorch f."""
    timed = contenders(torch) if torch is not None else {}
    table = {name: (name, inputs, params, np_f, timed.get(name))
             for name, (inputs, params, np_f, _) in sorted(cases().items())}
    table.update(sorted(gpu_only_cases(torch).items()))
    return table
