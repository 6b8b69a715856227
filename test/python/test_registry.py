"""The Python registry: every entry as docs/FusedOps.md lists it."""

import re

import pytest

from conftest import REPO_ROOT
from fuel_mlir import registry

# docs/FusedOps.md's table: id, name, family, operands, results, params,
# backward (kind, targets), destructive input.
CATALOG = [
    (1, "softmax_last_dim", "Forward", ["x"], ["y"], [], ("Fused", ["softmax_last_dim_backward"]), None),
    (2, "fused_linear", "Forward", ["a", "b", "bias"], ["y"], [], ("Decompose", []), None),
    (3, "rms_norm_last_dim", "Norm", ["x"], ["y"], ["eps"], ("Fused", ["rms_norm_last_dim_backward"]), None),
    (4, "layer_norm_last_dim", "Norm", ["x"], ["y"], ["eps"], ("Fused", ["layer_norm_last_dim_backward"]), None),
    (5, "rope", "Forward", ["x", "cos", "sin"], ["y"], [], ("Decompose", []), None),
    (6, "conv2d", "Forward", ["x", "w", "bias?"], ["y"], ["stride", "padding", "groups"], ("Decompose", []), None),
    (7, "softmax_last_dim_backward", "Backward", ["y", "g"], ["dx"], [], ("NotDifferentiable", []), None),
    (8, "layer_norm_last_dim_backward", "Backward", ["x", "g"], ["dx"], ["eps"], ("NotDifferentiable", []), None),
    (9, "rms_norm_last_dim_backward", "Backward", ["x", "g"], ["dx"], ["eps"], ("NotDifferentiable", []), None),
    (10, "reduce_max_to_backward", "Backward", ["x", "g"], ["dx"], [], ("NotDifferentiable", []), None),
    (11, "conv_transpose_2d", "Forward", ["x", "w"], ["y"],
     ["stride", "padding", "output_padding", "dilation", "groups"], ("Decompose", []), None),
    (12, "flash_attn", "Attention", ["q", "k", "v", "alibi?", "k_len?"], ["o"],
     ["softmax_scale", "causal", "window_size_left?", "window_size_right?", "softcap?"],
     ("Fused", ["flash_attn_backward_q", "flash_attn_backward_k", "flash_attn_backward_v"]), None),
    (13, "paged_attn", "Attention", ["q", "k_cache", "v_cache", "block_table", "context_lens", "alibi?"], ["o"],
     ["softmax_scale", "block_size", "softcap?"], ("NotDifferentiable", []), None),
    (14, "qmatmul", "Quantized", ["a", "w_q"], ["c"], ["quant_type", "k", "n"], ("NotDifferentiable", []), None),
    (15, "powi_backward", "Backward", ["x", "g"], ["dx"], ["exp"], ("NotDifferentiable", []), None),
    (16, "inplace_affine", "Forward", ["x"], ["y"], ["mul", "add"], ("NotDifferentiable", []), 0),
    (17, "fused_softmax_cross_entropy", "Forward", ["logits", "targets"], ["loss"],
     ["reduction", "ignore_index"], ("Decompose", []), None),
    (18, "causal_conv1d", "Forward", ["x", "w", "bias"], ["y"], ["use_silu"], ("NotDifferentiable", []), None),
    (19, "selective_scan", "Forward", ["u", "delta", "a", "b", "c"], ["y", "last_state"],
     ["delta_softplus"], ("NotDifferentiable", []), None),
    (20, "ssd_chunk_scan", "Forward", ["x", "dt", "a", "b", "c"], ["y"], ["chunk_size"], ("NotDifferentiable", []), None),
    (21, "nf4_matmul", "Quantized", ["act", "w_packed", "absmax"], ["c"], ["block_size"], ("NotDifferentiable", []), None),
    (22, "flash_attn_backward_q", "Backward", ["q", "k", "v", "do", "alibi?"], ["dq"],
     ["softmax_scale", "causal", "window_size_left?", "window_size_right?", "softcap?"], ("NotDifferentiable", []), None),
    (23, "flash_attn_backward_k", "Backward", ["q", "k", "v", "do", "alibi?"], ["dk"],
     ["softmax_scale", "causal", "window_size_left?", "window_size_right?", "softcap?"], ("NotDifferentiable", []), None),
    (24, "flash_attn_backward_v", "Backward", ["q", "k", "v", "do", "alibi?"], ["dv"],
     ["softmax_scale", "causal", "window_size_left?", "window_size_right?", "softcap?"], ("NotDifferentiable", []), None),
    (25, "awq_matmul", "Quantized", ["act", "qweight", "qzeros", "scales"], ["c"],
     ["group_size", "split_k_iters"], ("NotDifferentiable", []), None),
]


def _spell_operand(o):
    return o.name + ("?" if o.optional else "")


def _spell_param(p):
    return p.name + ("?" if p.optional else "")


@pytest.mark.parametrize("row", CATALOG, ids=[r[1] for r in CATALOG])
def test_entry_matches_catalog(row):
    op_id, name, family, operands, results, params, backward, destructive = row
    e = registry.lookup(name)
    assert e.id == op_id
    assert registry.lookup(op_id) is e
    assert e.family == family
    assert [_spell_operand(o) for o in e.operands] == operands
    assert e.num_operands == len(operands)
    assert e.num_required_operands == len([o for o in operands if not o.endswith("?")])
    assert [r.name for r in e.results] == results
    assert [_spell_param(p) for p in e.params] == params
    assert (e.backward.kind, list(e.backward.targets)) == backward
    assert e.destructive_input == destructive
    assert not e.is_runtime
    assert e.summary and e.description


def test_entries_are_the_catalog():
    assert [(e.id, e.name) for e in registry.entries()][:25] == [(r[0], r[1]) for r in CATALOG]


def test_backward_targets_exist():
    for e in registry.entries():
        for t in e.backward.targets:
            assert registry.lookup(t).family == "Backward"
        if e.backward.kind == "Fused":
            assert e.backward.target == e.backward.targets[0]
        else:
            assert e.backward.target is None


def test_param_kinds_and_defaults():
    conv = registry.lookup("conv2d")
    assert [(p.kind, p.default) for p in conv.params] == [("Pair", (1, 1)), ("Pair", (0, 0)), ("I64", 1)]
    ce = registry.lookup("fused_softmax_cross_entropy")
    assert ce.param("reduction").default == "mean" and ce.param("reduction").kind == "Reduction"
    assert ce.param("ignore_index").default == -100
    eps = registry.lookup("rms_norm_last_dim").param("eps")
    assert eps.kind == "F64" and eps.required and not eps.has_default
    assert "> 0" in eps.checks
    fa = registry.lookup("flash_attn")
    assert fa.param("softcap").optional and fa.param("softcap").kind == "F32"
    assert fa.param("causal").default is False
    assert registry.lookup("qmatmul").param("quant_type").kind == "QuantType"
    assert registry.lookup("awq_matmul").param("group_size").checks == ("64 or 128",)
    assert registry.lookup("powi_backward").param("exp").kind == "I32"


def test_lookup_errors():
    with pytest.raises(KeyError, match="no fused op named 'softmax'"):
        registry.lookup("softmax")
    with pytest.raises(KeyError, match="no fused op with id 0x63"):
        registry.lookup(99)
    with pytest.raises(KeyError, match="runtime-registered"):
        registry.lookup(0x9000)
    with pytest.raises(TypeError):
        registry.lookup(True)
    with pytest.raises(TypeError):
        registry.lookup(1.5j)


def test_runtime_ids():
    assert registry.RUNTIME_ID_BASE == 0x8000
    assert not registry.is_runtime_id(25)
    assert not registry.is_runtime_id(0x7FFF)
    assert registry.is_runtime_id(0x8000)
    assert registry.is_runtime_id(0xFFFF)


def test_register_runtime_op():
    e = registry.register("gelu_tanh_test", 1, ["alpha"])
    assert e.id >= registry.RUNTIME_ID_BASE and e.is_runtime
    assert registry.lookup("gelu_tanh_test") is e
    assert registry.lookup(e.id) is e
    assert [p.name for p in e.params] == ["alpha"]
    # Same name and signature: same op.
    assert registry.register("gelu_tanh_test", 1, ["alpha"]) is e
    assert e in registry.entries()
    other = registry.register("swish_test", 2)
    assert other.id == e.id + 1 or other.id > e.id
    with pytest.raises(ValueError, match="different signature"):
        registry.register("gelu_tanh_test", 2, ["alpha"])
    with pytest.raises(ValueError, match="is a static fused op"):
        registry.register("rope", 3)
    with pytest.raises(ValueError, match="invalid runtime op name"):
        registry.register("not a name", 1)
    with pytest.raises(ValueError, match="at least one operand"):
        registry.register("no_operands_test", 0)


def test_matches_seed_ids_and_names():
    """The generated ids and names are the original registry's."""
    seed = REPO_ROOT.parent / "shared" / "seed" / "registry.rs"
    if not seed.is_file():
        pytest.skip(f"the original registry is not beside the checkout ({seed})")
    text = seed.read_text()
    consts = dict(
        (int(i), name)
        for name, i in re.findall(r"pub const (\w+): FusedOpId = FusedOpId\((\d+)\);", text)
    )
    modules = set(re.findall(r"^pub mod (\w+);", text, re.M))
    consts.pop(0)  # FusedOpId::UNASSIGNED
    assert sorted(consts) == list(range(1, 26))
    norm = lambda s: s.lower().replace("_", "")
    for op_id, const in consts.items():
        e = registry.lookup(op_id)
        assert norm(e.name) == norm(const), (op_id, const, e.name)
        # The name is the seed's module name (the three flash backwards share one).
        assert e.name in modules or e.name.rsplit("_", 1)[0] in modules
