"""Ops registered from Python with a recipe (`registry.register(name,
recipe)`): traced from functions over scalars or given as MLIR text,
deduplicated by their canonical form, listed by the registry, built into
modules that carry their recipe, run against numpy; and every way of
getting a recipe wrong raises a clear error."""

import math
import subprocess

import numpy as np
import pytest

from fuel_mlir import ir, recipes, registry, runner
from fuel_mlir.dialects import func, fuel
from numerics import BF16, assert_close, rand

erf = np.vectorize(math.erf)


def gelu_erf(x):
    return 0.5 * x * (1.0 + recipes.erf(x * (1.0 / math.sqrt(2.0))))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + recipes.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def silu(x):
    return x * recipes.sigmoid(x)


def leaky(x, *, alpha):
    return recipes.maximum(x, alpha * x)


def softsign(x):
    return x / (1.0 + abs(x))


def hard_swish(x):
    return x * recipes.minimum(recipes.maximum(x + 3.0, 0.0), 6.0) / 6.0


def mish(x):
    return x * recipes.tanh(recipes.log1p(recipes.exp(x)))


def expm1_half(x):
    return recipes.expm1(0.5 * x)


def build(names_params, shape, dtype="f32"):
    """A module whose @f applies the ops in order to one tensor."""
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        elt = {"f32": ir.F32Type, "bf16": ir.BF16Type, "f16": ir.F16Type}[dtype].get()
        t = ir.RankedTensorType.get(list(shape), elt)
        with ir.InsertionPoint(module.body):
            @func.FuncOp.from_py_func(t)
            def f(x):
                for name, params in names_params:
                    x = fuel.fused(name, [x], **params)
                return x
        return str(module)


def test_traced_entry():
    e = registry.register("py_gelu_erf", gelu_erf)
    assert e.id >= registry.RUNTIME_ID_BASE and e.is_runtime
    assert e.num_operands == 1 and e.params == () and e.family == "Forward"
    assert e.has_recipe
    assert registry.lookup("py_gelu_erf") == e and registry.lookup(e.id) == e
    assert e in registry.entries()
    # Registering it again returns the same entry.
    assert registry.register("py_gelu_erf", gelu_erf) == e
    p = registry.register("py_leaky", leaky)
    assert [q.name for q in p.params] == ["alpha"] and p.params[0].kind == "F64"


def test_equal_recipes_are_one_op():
    a = registry.register("py_silu", silu)
    # Written differently (operands of a product swapped, the constant
    # written on the other side, other names): the same computation.
    b = registry.register("py_swish", lambda v: (1.0 / (recipes.exp(-v) + 1.0)) * v)
    assert a.id == b.id
    # Dividing by the denominator rounds differently: another op.
    assert registry.register("py_silu_div", lambda v: v / (1.0 + recipes.exp(-v))).id != a.id
    text = registry.recipe_text("py_silu")
    c = registry.register("py_silu_text", text.replace("@py_silu", "@py_silu_text"))
    assert c.id == a.id
    d = registry.register("py_not_silu", lambda v: v / (2.0 + recipes.exp(-v)))
    assert d.id != a.id


@pytest.mark.parametrize("dname,dtype", [("f32", np.float32)] + (
    [("bf16", BF16)] if BF16 is not None else []), ids=lambda d: str(d))
def test_traced_recipes_run(dname, dtype):
    registry.register("py_gelu_erf", gelu_erf)
    registry.register("py_gelu_tanh", gelu_tanh)
    registry.register("py_silu", silu)
    registry.register("py_leaky", leaky)
    registry.register("py_softsign", softsign)
    registry.register("py_hard_swish", hard_swish)
    registry.register("py_mish", mish)
    registry.register("py_expm1_half", expm1_half)
    x = (rand((4, 48), np.float32, seed=11) * 4.0).astype(dtype)
    x64 = np.asarray(x, np.float64)
    refs = {
        "py_gelu_erf": 0.5 * x64 * (1.0 + erf(x64 / math.sqrt(2.0))),
        "py_gelu_tanh": 0.5 * x64 * (1.0 + np.tanh(math.sqrt(2.0 / math.pi)
                                                   * (x64 + 0.044715 * x64 ** 3))),
        "py_silu": x64 / (1.0 + np.exp(-x64)),
        "py_leaky": np.where(x64 > 0, x64, 0.25 * x64),
        "py_softsign": x64 / (1.0 + np.abs(x64)),
        "py_hard_swish": x64 * np.clip(x64 + 3.0, 0.0, 6.0) / 6.0,
        "py_mish": x64 * np.tanh(np.log1p(np.exp(x64))),
        "py_expm1_half": np.expm1(0.5 * x64),
    }
    for name, want in refs.items():
        params = {"alpha": 0.25} if name == "py_leaky" else {}
        text = build([(name, params)], x.shape, dname)
        assert_close(runner.compile(text, "f")(x), want, dname)


def test_built_module_is_self_contained(fuel_opt, tmp_path):
    registry.register("py_silu", silu)
    registry.register("py_leaky", leaky)
    text = build([("py_silu", {}), ("py_leaky", {"alpha": 0.5}), ("py_silu", {})], (2, 8))
    # One copy of each recipe, before the function.
    assert text.count("fuel.recipe @py_silu") == 1 and text.count("fuel.recipe @py_leaky") == 1
    assert text.index("fuel.recipe") < text.index("func.func")
    # Another process, with nothing registered, parses and decomposes it.
    src = tmp_path / "m.mlir"
    src.write_text(text)
    out = subprocess.run([fuel_opt, str(src), "--fuel-decompose"], capture_output=True,
                         text=True, check=True).stdout
    assert "fuel.fused" not in out and "math.exp" in out


def test_mlir_text_recipe():
    e = registry.register("py_cube", """
fuel.recipe @py_cube(%x: f32) -> f32 {
  %0 = arith.mulf %x, %x : f32
  %1 = arith.mulf %0, %x : f32
  fuel.yield %1 : f32
}""")
    x = rand((3, 5), np.float32, seed=12)
    got = runner.compile(build([("py_cube", {})], x.shape), "f")(x)
    assert e.num_operands == 1
    assert_close(got, x.astype(np.float64) ** 3, "f32")


def test_two_operands_and_params():
    def fma(a, b, *, s, t):
        return a * s + b * t
    e = registry.register("py_fma", fma)
    assert e.num_operands == 2 and [p.name for p in e.params] == ["s", "t"]


@pytest.mark.parametrize("fn,error,match", [
    (lambda x: x if x > 0 else -x, TypeError, "symbolic"),
    (lambda x: math.exp(x), TypeError, "symbolic"),
    (lambda x: np.exp(x), TypeError, "symbolic"),
    (lambda x: x ** 0.5, TypeError, "integer powers"),
    (lambda x: 2.0, TypeError, "must return a value computed from its operands"),
    (lambda x, *, p: p * 2.0, ValueError, "does not depend on any operand"),
    (lambda: 1.0, TypeError, "at least one operand"),
    (lambda *xs: xs[0], TypeError, r"\*args"),
    (lambda x: x + "a", TypeError, "Python numbers"),
], ids=["branch", "math", "numpy", "fractional-power", "constant", "params-only",
        "no-operand", "varargs", "string"])
def test_bad_traced_recipes(fn, error, match):
    with pytest.raises(error, match=match):
        registry.register("py_bad", fn)


def test_conflicts_and_malformed_text():
    registry.register("py_square", lambda x: x * x)
    with pytest.raises(ValueError, match="computes something else"):
        registry.register("py_square", lambda x: x * x * x)
    with pytest.raises(ValueError, match="static fused op"):
        registry.register("softmax_last_dim", lambda x: recipes.exp(x))
    registry.register("py_plain", 1, ["a"])
    with pytest.raises(ValueError, match="without a recipe"):
        registry.register("py_plain", lambda x: x * x)
    with pytest.raises(ValueError, match="'math.sin' is not a recipe step"):
        registry.register("py_sin", """
fuel.recipe @py_sin(%x: f32) -> f32 {
  %0 = math.sin %x : f32
  fuel.yield %0 : f32
}""")
    with pytest.raises(ValueError, match="the text defines @other"):
        registry.register("py_named", """
fuel.recipe @other(%x: f32) -> f32 {
  fuel.yield %x : f32
}""")
    with pytest.raises(ValueError, match="expected the text of one fuel.recipe"):
        registry.register("py_func", "func.func @f() { return }")
    with pytest.raises(ValueError, match="py_garbage"):
        registry.register("py_garbage", "fuel.recipe @py_garbage(")
    with pytest.raises(TypeError, match="params are read from the recipe"):
        registry.register("py_p", lambda x: x, ["a"])
