"""Ops defined by a recipe in IR (`fuel.recipe`): activations no static op
covers, decomposed through their recipe and run, against numpy in float64
(docs/FusedOps.md's tolerances), for f32/f16/bf16, static and dynamic
shapes, with and without the CPU schedules; recipes given params; and
structurally equal recipes under two names as one op."""

import math
import subprocess

import numpy as np
import pytest

from conftest import REPO_ROOT
from fuel_mlir import ir, runner
from numerics import BF16, MLIR_TYPES, assert_close, rand

GELU_ERF = """
fuel.recipe @gelu_erf(%x: f32) -> f32 {
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %inv_sqrt2 = arith.constant 0.70710678118654752 : f32
  %s = arith.mulf %x, %inv_sqrt2 : f32
  %e = math.erf %s : f32
  %p = arith.addf %one, %e : f32
  %h = arith.mulf %half, %x : f32
  %y = arith.mulf %h, %p : f32
  fuel.yield %y : f32
}
"""

GELU_TANH = """
fuel.recipe @gelu_tanh(%x: f32) -> f32 {
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %c = arith.constant 0.79788456080286536 : f32
  %k = arith.constant 0.044715 : f32
  %x2 = arith.mulf %x, %x : f32
  %x3 = arith.mulf %x2, %x : f32
  %t0 = arith.mulf %k, %x3 : f32
  %t1 = arith.addf %x, %t0 : f32
  %t2 = arith.mulf %c, %t1 : f32
  %t3 = math.tanh %t2 : f32
  %t4 = arith.addf %one, %t3 : f32
  %t5 = arith.mulf %half, %x : f32
  %y = arith.mulf %t5, %t4 : f32
  fuel.yield %y : f32
}
"""

SILU = """
fuel.recipe @{name}(%x: f32) -> f32 {{
  %one = arith.constant 1.0 : f32
  %n = arith.negf %x : f32
  %e = math.exp %n : f32
  %d = arith.addf %one, %e : f32
  %y = arith.divf %x, %d : f32
  fuel.yield %y : f32
}}
"""

LEAKY = """
fuel.recipe @leaky_relu(%x: f32) params(%alpha: f32) -> f32 {
  %0 = arith.mulf %x, %alpha : f32
  %1 = arith.maximumf %x, %0 : f32
  fuel.yield %1 : f32
}
"""

SWIGLU = """
fuel.recipe @swiglu(%g: f32, %u: f32) -> f32 {
  %one = arith.constant 1.0 : f32
  %n = arith.negf %g : f32
  %e = math.exp %n : f32
  %d = arith.addf %one, %e : f32
  %s = arith.divf %g, %d : f32
  %y = arith.mulf %s, %u : f32
  fuel.yield %y : f32
}
"""

# The other steps: absolute value, minimum, log1p and expm1.
SOFTSIGN = """
fuel.recipe @softsign(%x: f32) -> f32 {
  %one = arith.constant 1.0 : f32
  %a = math.absf %x : f32
  %d = arith.addf %one, %a : f32
  %y = arith.divf %x, %d : f32
  fuel.yield %y : f32
}
"""

HARD_SWISH = """
fuel.recipe @hard_swish(%x: f32) -> f32 {
  %zero = arith.constant 0.0 : f32
  %three = arith.constant 3.0 : f32
  %six = arith.constant 6.0 : f32
  %s = arith.addf %x, %three : f32
  %r = arith.maximumf %s, %zero : f32
  %c = arith.minimumf %r, %six : f32
  %p = arith.mulf %x, %c : f32
  %y = arith.divf %p, %six : f32
  fuel.yield %y : f32
}
"""

MISH = """
fuel.recipe @mish(%x: f32) -> f32 {
  %e = math.exp %x : f32
  %sp = math.log1p %e : f32
  %t = math.tanh %sp : f32
  %y = arith.mulf %x, %t : f32
  fuel.yield %y : f32
}
"""

EXPM1_RATIO = """
fuel.recipe @expm1_half(%x: f32) -> f32 {
  %half = arith.constant 0.5 : f32
  %h = arith.mulf %x, %half : f32
  %y = math.expm1 %h : f32
  fuel.yield %y : f32
}
"""

erf = np.vectorize(math.erf)


def ref_silu(x):
    return x / (1.0 + np.exp(-x))


RECIPES = {
    "gelu_erf": (GELU_ERF, {}, lambda x: 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))),
    "gelu_tanh": (GELU_TANH, {}, lambda x: 0.5 * x * (1.0 + np.tanh(
        math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))),
    "silu": (SILU.format(name="silu"), {}, ref_silu),
    "leaky_relu": (LEAKY, {"alpha": 0.125}, lambda x: np.where(x > 0, x, 0.125 * x)),
    "softsign": (SOFTSIGN, {}, lambda x: x / (1.0 + np.abs(x))),
    "hard_swish": (HARD_SWISH, {}, lambda x: x * np.clip(x + 3.0, 0.0, 6.0) / 6.0),
    "mish": (MISH, {}, lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    "expm1_half": (EXPM1_RATIO, {}, lambda x: np.expm1(0.5 * x)),
}

DTYPES = [("f32", np.float32), ("f16", np.float16)]
if BF16 is not None:
    DTYPES.append(("bf16", BF16))


def module(recipes, name, shapes, params, dtype, dynamic=False):
    """A module holding `recipes` and @f applying @name to arguments of
    `shapes`."""
    elt = MLIR_TYPES[np.dtype(dtype)]
    types = ["tensor<" + "".join(("?" if dynamic and i == 0 else str(d)) + "x"
                                 for i, d in enumerate(s)) + elt + ">" for s in shapes]
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    operands = ", ".join(f"%a{i}" for i in range(len(types)))
    attrs = ("{" + ", ".join(f"{k} = {v!r} : f64" for k, v in params.items()) + "} "
             if params else "")
    return (recipes + f"""
func.func @f({args}) -> {types[0]} {{
  %y = fuel.fused @{name} {attrs}({operands}) : ({', '.join(types)}) -> {types[0]}
  return %y : {types[0]}
}}
""")


@pytest.mark.parametrize("name", list(RECIPES))
@pytest.mark.parametrize("dname,dtype", DTYPES, ids=[d[0] for d in DTYPES])
@pytest.mark.parametrize("shape,dynamic", [((4, 64), False), ((3, 5, 7), False),
                                           ((6, 16), True)],
                         ids=["4x64", "3x5x7", "?x16"])
def test_recipe_numerics(name, dname, dtype, shape, dynamic):
    text, params, ref = RECIPES[name]
    x = (rand(shape, np.float32, seed=3) * 4.0).astype(dtype)
    f = runner.compile(module(text, name, [shape], params, dtype, dynamic), "f")
    assert_close(f(x), ref(np.asarray(x, np.float64)), dname)


@pytest.mark.parametrize("options", [dict(codegen=False), dict(approximate_math=False)],
                         ids=["no-codegen", "exact-math"])
def test_recipe_pipeline_options(options):
    text, params, ref = RECIPES["gelu_erf"]
    x = rand((8, 32), np.float32, seed=4) * 4.0
    f = runner.compile(module(text, "gelu_erf", [x.shape], params, np.float32), "f", **options)
    assert_close(f(x), ref(x.astype(np.float64)), "f32")


def test_two_operands():
    g = rand((4, 32), np.float32, seed=5)
    u = rand((4, 32), np.float32, seed=6)
    f = runner.compile(module(SWIGLU, "swiglu", [g.shape, u.shape], {}, np.float32), "f")
    want = ref_silu(g.astype(np.float64)) * u
    assert_close(f(g, u), want, "f32")


def test_params_reach_the_computation():
    text, _, _ = RECIPES["leaky_relu"]
    x = rand((4, 16), np.float32, seed=7)
    for alpha in (0.0, 0.5, -2.0):
        f = runner.compile(module(text, "leaky_relu", [x.shape], {"alpha": alpha},
                                  np.float32), "f")
        assert_close(f(x), np.where(x > 0, x, alpha * x.astype(np.float64)), "f32")


def test_equal_recipes_are_one_op():
    # SiLU under two names: one registry entry, and ops of either name are
    # the same op (CSE merges them).
    text = SILU.format(name="silu_a") + SILU.format(name="silu_b") + """
func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = fuel.fused @silu_a (%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = fuel.fused @silu_b (%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}
"""
    with ir.Context():
        m = ir.Module.parse(text)
        kinds = {str(op.attributes["kind"]) for op in m.body.operations[2].regions[0].blocks[0].operations
                 if op.operation.name == "fuel.fused"}
        assert len(kinds) == 1
    x = rand((4,), np.float32, seed=8)
    a, b = runner.compile(text, "f")(x)
    assert_close(a, ref_silu(x.astype(np.float64)), "f32")
    np.testing.assert_array_equal(a, b)


def test_malformed_recipe_is_a_clear_error():
    text = """
fuel.recipe @sine(%x: f32) -> f32 {
  %0 = math.sin %x : f32
  fuel.yield %0 : f32
}
"""
    with pytest.raises(runner.RunnerError, match="'math.sin' is not a recipe step"):
        runner.compile(text + """
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
""", "f")


def test_pass_manager_reused_across_modules():
    # A module's recipes are searched for in that module only: run again on
    # a module without the recipe, the pass leaves its SiLU spelling alone
    # (and still finds the static ops).
    from fuel_mlir import passmanager

    # (x / (1.75 + exp(-x)): no other test registers it, so the first
    # module's SiLU spelling can only be found as @pm_silu.)
    silu = SILU.format(name="pm_silu").replace("constant 1.0", "constant 1.75")
    normal_form = """
func.func @g(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %y = fuel.fused @pm_silu (%x) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
"""
    with ir.Context():
        decompose = passmanager.PassManager.parse("builtin.module(fuel-decompose)")
        with_recipe = ir.Module.parse(silu + normal_form)
        decompose.run(with_recipe.operation)
        spelled = str(with_recipe)
        assert "fuel.recipe" not in spelled and "math.exp" in spelled

        def inside(module_text, ops):
            head, sep, tail = module_text.partition("module {\n")
            return head + sep + ops + tail

        fuse = passmanager.PassManager.parse("builtin.module(fuel-fuse)")
        first = ir.Module.parse(inside(spelled, silu))
        fuse.run(first.operation)
        assert "fuel.fused @pm_silu" in str(first)
        second = ir.Module.parse(inside(spelled, """
func.func @s(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %y = fuel.fused softmax_last_dim (%x) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
"""))
        decompose_softmax = passmanager.PassManager.parse(
            "builtin.module(fuel-decompose{ops=softmax_last_dim})")
        decompose_softmax.run(second.operation)
        fuse.run(second.operation)
        text = str(second)
        # (Recipes registered from Python earlier in the process are
        # searched for in every module: the SiLU spelling may be found as
        # one of those, never as the first module's @pm_silu.)
        assert "@pm_silu" not in text
        assert "fuel.fused softmax_last_dim" in text


def test_same_output_in_every_process(fuel_opt):
    # A recipe's canonical form orders a commutative op's operands by a hash
    # of their structure: one that is the same in every process, so that
    # fusion, its near misses and the decomposition do not vary between
    # runs (addresses do).
    source = REPO_ROOT / "test" / "lit" / "Transforms" / "fuse-recipe-products.mlir"
    outputs = set()
    for _ in range(6):
        fused = subprocess.run(
            [fuel_opt, str(source), "--split-input-file",
             "--fuel-fuse=report=near-misses"], capture_output=True, text=True)
        assert fused.returncode == 0, fused.stderr
        decomposed = subprocess.run(
            [fuel_opt, str(source), "--split-input-file", "--fuel-fuse",
             "--fuel-decompose"], capture_output=True, text=True)
        assert decomposed.returncode == 0, decomposed.stderr
        outputs.add((fused.stdout, fused.stderr, decomposed.stdout))
    assert len(outputs) == 1
