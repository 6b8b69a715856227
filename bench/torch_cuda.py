"""PyTorch CUDA, the contender of the GPU benchmarks, for each bench case
that PyTorch has (softmax, the norms, SDPA for attention, cuBLAS for
fused_linear). It needs only torch, so that test/gpu/replay.py can time it
on a GPU machine that has no fuel-mlir. The labels are bench/all_ops.py's
ops and bench/gpu_cases.py's labels; the params are theirs."""

DECODE = "flash_attn (decode)"
LARGE_LINEAR = "fused_linear (2048^3)"


def contenders(torch):
    """{case label: f(*CUDA tensors)}; `torch` is only used when an f is
    called (None gives the labels)."""

    def F():
        return torch.nn.functional

    return {
        "softmax_last_dim": lambda x: torch.softmax(x, -1),
        "rms_norm_last_dim": lambda x: F().rms_norm(x, (x.shape[-1],), eps=1e-5),
        "layer_norm_last_dim": lambda x: F().layer_norm(x, (x.shape[-1],), eps=1e-5),
        "fused_linear": lambda a, w, b: torch.addmm(b, a, w),
        "flash_attn": lambda q, k, v: F().scaled_dot_product_attention(q, k, v, is_causal=True,
                                                                       scale=0.125),
        DECODE: lambda q, k, v: F().scaled_dot_product_attention(q, k, v, scale=0.125),
        LARGE_LINEAR: lambda a, w, b: torch.addmm(b, a, w),
    }
