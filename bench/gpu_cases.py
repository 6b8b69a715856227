"""Shapes the GPU benchmarks take besides bench/all_ops.py's (bench/gpu.py
times them, bench/gpu_static.py reports their kernels)."""

import references as ref

from all_ops import rand

DECODE = "flash_attn (decode)"


def gpu_only_cases(torch):
    """{label: (op, inputs, params, numpy f, PyTorch CUDA f or None)}: one
    query against 4,096 keys, 32 heads of 128 (flash_attn's split-keys
    form); without a causal mask, which for one query sees every key
    bottom-right and only the first top-left (SDPA's is_causal)."""
    q, k, v = rand((1, 32, 1, 128)), rand((1, 32, 4096, 128), 1), rand((1, 32, 4096, 128), 2)
    sdpa = None
    if torch is not None:
        sdpa = lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=0.125)  # noqa: E731
    return {DECODE: ("flash_attn", [q, k, v], {"softmax_scale": 0.125},
                     lambda q, k, v: ref.flash_attn(q, k, v, 0.125), sdpa)}
