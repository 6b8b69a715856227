"""Python builders for fuel.fused: every op, defaults, and error cases."""

import pytest

from fuel_mlir import ir, registry
from fuel_mlir.dialects import fuel, func


def tensor(shape, dtype="f32"):
    """The text of a ranked tensor type; parsed in the test's context."""
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def build(module, arg_types, body):
    """Builds `func @f(args)` whose body calls `body(*args)`; returns the op(s)."""
    out = {}
    arg_types = [ir.Type.parse(t) if isinstance(t, str) else t for t in arg_types]
    with ir.InsertionPoint(module.body):
        fn = func.FuncOp("f", ir.FunctionType.get(arg_types, []))
        block = fn.add_entry_block()
        with ir.InsertionPoint(block):
            out["result"] = body(*block.arguments)
            func.ReturnOp([])
    return out["result"]


def fused_ops(module):
    return [op for op in module.body.operations[0].regions[0].blocks[0].operations
            if op.operation.name == "fuel.fused"]


# One example per op: operand types, params, expected result types.
EXAMPLES = {
    "softmax_last_dim": ([tensor([4, 64])], {}, ["tensor<4x64xf32>"]),
    "fused_linear": ([tensor([2, 8, 16], "f16"), tensor([16, 32], "f16"), tensor([32], "f16")], {},
                     ["tensor<2x8x32xf16>"]),
    "rms_norm_last_dim": ([tensor([4, "?"], "bf16")], {"eps": 1e-6}, ["tensor<4x?xbf16>"]),
    "layer_norm_last_dim": ([tensor([3, 5])], {"eps": 1e-5}, ["tensor<3x5xf32>"]),
    "rope": ([tensor([1, 4, 8, 16]), tensor([8, 16]), tensor([8, 16])], {}, ["tensor<1x4x8x16xf32>"]),
    "conv2d": ([tensor([2, 4, 10, 10]), tensor([8, 2, 3, 3]), tensor([8])],
               {"stride": 2, "padding": (1, 1), "groups": 2}, ["tensor<2x8x5x5xf32>"]),
    "softmax_last_dim_backward": ([tensor([4, 8]), tensor([4, 8])], {}, ["tensor<4x8xf32>"]),
    "layer_norm_last_dim_backward": ([tensor([4, 8]), tensor([4, 8])], {"eps": 1e-5}, ["tensor<4x8xf32>"]),
    "rms_norm_last_dim_backward": ([tensor([4, 8]), tensor([4, 8])], {"eps": 1e-5}, ["tensor<4x8xf32>"]),
    "reduce_max_to_backward": ([tensor([4, 6]), tensor([4, 1])], {}, ["tensor<4x6xf32>"]),
    "conv_transpose_2d": ([tensor([1, 4, 5, 5]), tensor([4, 3, 3, 3])], {"stride": (2, 2)},
                          ["tensor<1x3x11x11xf32>"]),
    "flash_attn": ([tensor([1, 8, 16, 64], "f16"), tensor([1, 2, 32, 64], "f16"),
                    tensor([1, 2, 32, 64], "f16"), tensor([8])],
                   {"softmax_scale": 0.125, "causal": True, "softcap": 30.0},
                   ["tensor<1x8x16x64xf16>"]),
    "paged_attn": ([tensor([3, 8, 64]), tensor([10, 2, 16, 64]), tensor([10, 2, 16, 64]),
                    tensor([3, 4], "i32"), tensor([3], "i32")],
                   {"softmax_scale": 0.125, "block_size": 16}, ["tensor<3x8x64xf32>"]),
    "qmatmul": ([tensor([4, 64]), tensor([72], "i32")], {"quant_type": "Q4_0", "k": 64, "n": 8},
                ["tensor<4x8xf32>"]),
    "powi_backward": ([tensor([4]), tensor([4])], {"exp": 3}, ["tensor<4xf32>"]),
    "inplace_affine": ([tensor([4, 4])], {"mul": 2.0, "add": 1.0}, ["tensor<4x4xf32>"]),
    "fused_softmax_cross_entropy": ([tensor([4, 10]), tensor([4], "i64")], {"reduction": "none"},
                                    ["tensor<4xf32>"]),
    "causal_conv1d": ([tensor([2, 6, 13]), tensor([6, 1, 4]), tensor([6])], {"use_silu": True},
                      ["tensor<2x6x10xf32>"]),
    "selective_scan": ([tensor([2, 8, 4]), tensor([2, 8, 4]), tensor([4, 3]), tensor([2, 8, 3]),
                        tensor([2, 8, 3])], {"delta_softplus": True},
                       ["tensor<2x8x4xf32>", "tensor<2x4x3xf32>"]),
    "ssd_chunk_scan": ([tensor([2, 8, 2, 4]), tensor([2, 8, 2]), tensor([2]), tensor([2, 8, 2, 3]),
                        tensor([2, 8, 2, 3])], {"chunk_size": 4}, ["tensor<2x8x2x4xf32>"]),
    "nf4_matmul": ([tensor([4, 128], "f16"), tensor([16, 64], "i8"), tensor([16, 2])], {},
                   ["tensor<4x16xf16>"]),
    "flash_attn_backward_q": ([tensor([1, 4, 8, 16]), tensor([1, 2, 8, 16]), tensor([1, 2, 8, 16]),
                               tensor([1, 4, 8, 16])], {"softmax_scale": 0.25}, ["tensor<1x4x8x16xf32>"]),
    "flash_attn_backward_k": ([tensor([1, 4, 8, 16]), tensor([1, 2, 8, 16]), tensor([1, 2, 8, 16]),
                               tensor([1, 4, 8, 16])], {"softmax_scale": 0.25}, ["tensor<1x2x8x16xf32>"]),
    "flash_attn_backward_v": ([tensor([1, 4, 8, 16]), tensor([1, 2, 8, 16]), tensor([1, 2, 8, 16]),
                               tensor([1, 4, 8, 16])], {"softmax_scale": 0.25, "window_size_left": 2},
                              ["tensor<1x2x8x16xf32>"]),
    "awq_matmul": ([tensor([4, 128], "f16"), tensor([128, 2], "i32"), tensor([2, 2], "i32"),
                    tensor([2, 16], "f16")], {"group_size": 64}, ["tensor<4x16xf16>"]),
}


def test_every_op_has_an_example():
    assert sorted(EXAMPLES) == sorted(e.name for e in registry.entries() if not e.is_runtime)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_builder(ctx, module, name):
    arg_types, params, want = EXAMPLES[name]
    builder = getattr(fuel, name)
    result = build(module, arg_types, lambda *args: builder(*args, **params))
    results = result if isinstance(result, tuple) else (result,)
    assert [str(r.type) for r in results] == want
    assert module.operation.verify()
    (op,) = fused_ops(module)
    assert str(op.attributes["kind"]) == f"#fuel.kind<{name}>"
    # The generic builder makes the same op.
    module2 = ir.Module.create()
    build(module2, arg_types, lambda *args: fuel.fused(name, list(args), **params))
    assert str(module2) == str(module)
    # The printed IR parses back to the same text.
    assert str(ir.Module.parse(str(module))) == str(module)


def test_defaults_are_dropped(ctx, module):
    build(module, [tensor([1, 4, 8, 8]), tensor([4, 4, 3, 3])],
          lambda x, w: fuel.conv2d(x, w, stride=(1, 1), padding=0, groups=1))
    (op,) = fused_ops(module)
    assert str(op.attributes["params"]) == "{}"


def test_optional_operands_are_matched_by_kind(ctx, module):
    q = tensor([1, 2, 4, 8])
    idx = "index"
    build(module, [q, q, q, idx], lambda q, k, v, n: fuel.flash_attn(q, k, v, k_len=n, softmax_scale=1.0))
    (op,) = fused_ops(module)
    assert len(op.operands) == 4 and str(op.operands[3].type) == "index"


def test_multiple_results(ctx, module):
    arg_types, params, _ = EXAMPLES["selective_scan"]
    y, state = build(module, arg_types, lambda *a: fuel.selective_scan(*a, **params))
    assert y.owner == state.owner


def test_memref_inplace_affine_returns_the_op(ctx, module):
    m = ir.MemRefType.get([4], ir.F32Type.get())
    op = build(module, [m], lambda x: fuel.inplace_affine(x, mul=2.0, add=0.5))
    assert len(op.results) == 0
    assert module.operation.verify()


def test_ops_as_operands(ctx, module):
    def body(x):
        s = fuel.softmax_last_dim(x)
        return fuel.softmax_last_dim(s.owner)
    build(module, [tensor([2, 3])], body)
    assert len(fused_ops(module)) == 2


# Each bad call raises, leaves no op behind, and keeps the module valid.
BAD_CALLS = [
    ("eps <= 0", ValueError, "param 'eps' must be > 0",
     [tensor([4, 8])], lambda x: fuel.rms_norm_last_dim(x, eps=-1.0)),
    ("eps missing", TypeError, "missing required param",
     [tensor([4, 8])], lambda x: fuel.fused("rms_norm_last_dim", [x])),
    ("eps not a float", TypeError, "param 'eps' must be a float",
     [tensor([4, 8])], lambda x: fuel.rms_norm_last_dim(x, eps="small")),
    ("unknown param", TypeError, "unknown param 'epsilon'",
     [tensor([4, 8])], lambda x: fuel.fused("rms_norm_last_dim", [x], epsilon=1e-5)),
    ("unknown op", ValueError, "unknown fused op 'softmax'",
     [tensor([4, 8])], lambda x: fuel.fused("softmax", [x])),
    ("not a value", TypeError, "must be an MLIR Value",
     [tensor([4, 8])], lambda x: fuel.softmax_last_dim(3.0)),
    ("wrong rank", ValueError, "operand 'x' must be a ranked tensor of f16, bf16, f32 or f64 values of rank 4",
     [tensor([4, 8]), tensor([4, 4, 3, 3])], lambda x, w: fuel.conv2d(x, w)),
    ("int input", ValueError, "operand types",
     [tensor([4, 8], "i32")], lambda x: fuel.softmax_last_dim(x)),
    ("K mismatch", ValueError, "fused_linear: shape rule: a dim 1 (8) must equal b dim 0 (16)",
     [tensor([4, 8]), tensor([16, 4]), tensor([4])], lambda a, b, c: fuel.fused_linear(a, b, c)),
    ("too few operands", ValueError, "expects 3 operands, got 2",
     [tensor([4, 8]), tensor([8, 4])], lambda a, b: fuel.fused("fused_linear", [a, b])),
    ("groups do not divide", ValueError, "groups (3) must divide x dim 1 (4)",
     [tensor([1, 4, 8, 8]), tensor([6, 1, 3, 3])], lambda x, w: fuel.conv2d(x, w, groups=3)),
    ("groups zero", ValueError, "param 'groups' must be >= 1",
     [tensor([1, 4, 8, 8]), tensor([4, 4, 3, 3])], lambda x, w: fuel.conv2d(x, w, groups=0)),
    ("bad pair", TypeError, "param 'stride' must be an int or a pair of ints",
     [tensor([1, 4, 8, 8]), tensor([4, 4, 3, 3])], lambda x, w: fuel.conv2d(x, w, stride=(1, 2, 3))),
    ("i32 overflow", ValueError, "out of the i32 range",
     [tensor([4]), tensor([4])], lambda x, g: fuel.powi_backward(x, g, exp=2**40)),
    ("bool as int", TypeError, "param 'groups' must be an int",
     [tensor([1, 4, 8, 8]), tensor([4, 4, 3, 3])], lambda x, w: fuel.conv2d(x, w, groups=True)),
    ("bad quant type", ValueError, "must be a GGML quant type",
     [tensor([4, 64]), tensor([72], "i32")],
     lambda a, w: fuel.qmatmul(a, w, quant_type="q3_0", k=64, n=8)),
    ("bad reduction", ValueError, "must be one of mean, sum, none",
     [tensor([4, 10]), tensor([4], "i64")],
     lambda l, t: fuel.fused_softmax_cross_entropy(l, t, reduction="avg")),
    ("bad group size", ValueError, "param 'group_size' must be 64 or 128",
     [tensor([4, 128], "f16"), tensor([128, 2], "i32"), tensor([4, 2], "i32"), tensor([4, 16], "f16")],
     lambda a, q, z, s: fuel.awq_matmul(a, q, z, s, group_size=32)),
    ("chunk does not divide L", ValueError, "chunk_size (3) must divide the sequence length L (8)",
     EXAMPLES["ssd_chunk_scan"][0], lambda *a: fuel.ssd_chunk_scan(*a, chunk_size=3)),
    ("GQA", ValueError, "must be a multiple of the kv heads",
     [tensor([1, 3, 4, 8]), tensor([1, 2, 4, 8])],
     lambda q, k: fuel.flash_attn(q, k, k, softmax_scale=1.0)),
    ("mixed dtypes", ValueError, "dtype rule: b has element type f16 but a has f32",
     [tensor([4, 8]), tensor([8, 4], "f16"), tensor([4])], lambda a, b, c: fuel.fused_linear(a, b, c)),
    # The generic builder infers the result types from the attributes it is given.
    ("generic: no kind", ir.MLIRError, "fuel.fused: missing 'kind' attribute",
     [tensor([4])], lambda x: fuel.FusedOp.build_generic(
         results=None, operands=[x], attributes={"params": ir.DictAttr.get({})})),
    ("generic: params not a dictionary", ir.MLIRError, "fuel.fused: 'params' must be a dictionary",
     [tensor([4])], lambda x: fuel.FusedOp.build_generic(
         results=None, operands=[x],
         attributes={"kind": ir.Attribute.parse("#fuel.kind<softmax_last_dim>"),
                     "params": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 1)})),
]


@pytest.mark.parametrize("case", BAD_CALLS, ids=[c[0] for c in BAD_CALLS])
def test_bad_calls_raise(ctx, module, case):
    _, exc, message, arg_types, call = case
    with pytest.raises(exc, match=message.replace("(", r"\(").replace(")", r"\)")):
        build(module, arg_types, call)
    assert fused_ops(module) == []


def test_quant_type_alias(ctx, module):
    # The original registry's spelling Q4_K_M is Q4_K.
    build(module, [tensor([4, 256]), tensor([72 * 4], "i32")],
          lambda a, w: fuel.qmatmul(a, w, quant_type="Q4_K_M", k=256, n=8))
    (op,) = fused_ops(module)
    assert "#fuel.quant<q4_k>" in str(op)


def test_builders_have_signatures():
    import inspect

    sig = inspect.signature(fuel.flash_attn)
    assert list(sig.parameters)[:5] == ["q", "k", "v", "alibi", "k_len"]
    assert sig.parameters["softmax_scale"].kind is inspect.Parameter.KEYWORD_ONLY
    assert sig.parameters["softmax_scale"].default is inspect.Parameter.empty
    assert sig.parameters["causal"].default is None
    assert list(inspect.signature(fuel.flash_attn_backward_q).parameters)[:5] == [
        "q", "k", "v", "do", "alibi"]
    assert fuel.rms_norm_last_dim.__doc__.startswith("RMS norm over the last dim")
