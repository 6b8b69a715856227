"""Ops defined by recipes found in the frontend exports of test/corpus by
--fuel-fuse, from a recipe library (recipes=) or from the module's own
recipe, and decompose(fuse(f)) checked against f.

Found in the torch-mlir and TOSA exports, as exported and after elementwise
fusion: GELU (erf) in either association of its product (the exports write
x * ((erf(x / sqrt 2) + 1) * 0.5), a user (0.5 * x) * (1 + erf(..))), GELU
(tanh) with x^3 written as fpowi, powf or x * x * x and TOSA's sqrt(2 / pi)
computed by a pow of constants, SiLU, and the SiLU gate of each Llama block
(its input a matmul's result expanded back to [B, T, N]).

torch-mlir's export of GELU (tanh) multiplies by 0.797724, not sqrt(2 / pi)
= 0.7978846: it computes another function, so a recipe with the exact
constant is not found there (the near miss says which constant it found);
a recipe that takes the coefficient as a param is found in both, and the
fused op carries the export's own value.
"""

import re
import subprocess

import numpy as np
import pytest

from conftest import REPO_ROOT
from test_fuse_corpus import check_same_numerics, count_fused, run_opt

CORPUS = REPO_ROOT / "test" / "corpus"

GELU_AS_EXPORTED = """
fuel.recipe @gelu_erf_exported(%x: f32) -> f32 {
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %sqrt2 = arith.constant 1.41421354 : f32
  %s = arith.divf %x, %sqrt2 : f32
  %e = math.erf %s : f32
  %p = arith.addf %e, %one : f32
  %h = arith.mulf %p, %half : f32
  %y = arith.mulf %x, %h : f32
  fuel.yield %y : f32
}
"""

GELU_OTHER_ASSOCIATION = """
fuel.recipe @gelu_erf_reassociated(%x: f32) -> f32 {
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %sqrt2 = arith.constant 1.41421354 : f32
  %s = arith.divf %x, %sqrt2 : f32
  %e = math.erf %s : f32
  %p = arith.addf %one, %e : f32
  %h = arith.mulf %half, %x : f32
  %y = arith.mulf %h, %p : f32
  fuel.yield %y : f32
}
"""

GELU_TANH = """
fuel.recipe @gelu_tanh_act(%x: f32) -> f32 {
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %c = arith.constant 0.797884583 : f32
  %k = arith.constant 0.044715 : f32
  %x2 = arith.mulf %x, %x : f32
  %x3 = arith.mulf %x2, %x : f32
  %t0 = arith.mulf %x3, %k : f32
  %t1 = arith.addf %x, %t0 : f32
  %t2 = arith.mulf %t1, %c : f32
  %t3 = math.tanh %t2 : f32
  %t4 = arith.addf %t3, %one : f32
  %t5 = arith.mulf %t4, %half : f32
  %y = arith.mulf %x, %t5 : f32
  fuel.yield %y : f32
}
"""

# The coefficient a param: the fused op carries the export's value.
GELU_TANH_COEFFICIENT = (
    GELU_TANH.replace("@gelu_tanh_act(%x: f32)", "@gelu_tanh_c(%x: f32) params(%c: f32)")
    .replace("  %c = arith.constant 0.797884583 : f32\n", ""))
assert "params(%c: f32)" in GELU_TANH_COEFFICIENT and "0.797884583" not in GELU_TANH_COEFFICIENT

SILU = """
fuel.recipe @silu_act(%x: f32) -> f32 {
  %one = arith.constant 1.0 : f32
  %n = arith.negf %x : f32
  %e = math.exp %n : f32
  %d = arith.addf %e, %one : f32
  %s = arith.divf %one, %d : f32
  %y = arith.mulf %x, %s : f32
  fuel.yield %y : f32
}
"""

def with_recipe(recipe, text):
    """`text` (a module) with `recipe` as its first op."""
    head, sep, tail = text.partition("module {\n")
    assert sep, "expected a module"
    return head + sep + recipe + tail


GELU_FILES = ["torch_mlir/gelu.linalg.mlir", "tosa_to_linalg/gelu.tosa2linalg.mlir"]
GELU_TANH_FILES = ["torch_mlir/gelu_tanh.linalg.mlir",
                   "tosa_to_linalg/gelu_tanh.tosa2linalg.mlir"]
SILU_FILES = ["torch_mlir/silu.linalg.mlir", "tosa_to_linalg/silu.tosa2linalg.mlir"]
LLAMA_FILES = ["torch_mlir/llama_block.linalg.elided.mlir",
               "tosa_to_linalg/llama_block.tosa2linalg.elided.mlir",
               "torch_mlir/llama_block_sdpa.linalg.elided.mlir",
               "tosa_to_linalg/llama_block_sdpa.tosa2linalg.elided.mlir"]

# (recipe, name, file, what else the pass finds there).
LLAMA = {"rms_norm_last_dim": 2, "rope": 2, "flash_attn": 1}
FOUND = ([(GELU_AS_EXPORTED, "gelu_erf_exported", p, {}) for p in GELU_FILES] +
         [(GELU_OTHER_ASSOCIATION, "gelu_erf_reassociated", p, {}) for p in GELU_FILES] +
         [(GELU_TANH_COEFFICIENT, "gelu_tanh_c", p, {}) for p in GELU_TANH_FILES] +
         [(GELU_TANH, "gelu_tanh_act", "tosa_to_linalg/gelu_tanh.tosa2linalg.mlir", {})] +
         [(SILU, "silu_act", p, {}) for p in SILU_FILES] +
         [(SILU, "silu_act", p, LLAMA) for p in LLAMA_FILES])


def with_weights(text, seed=0):
    """`text` with each elided weight (a dense_resource without its blob) a
    dense constant of random values, so that the module runs."""
    rng = np.random.default_rng(seed)

    def literal(match):
        shape = [int(d) for d in match.group(2).split("x")[:-1]]
        values = rng.uniform(-0.5, 0.5, shape).astype(np.float32)
        body = np.array2string(values, separator=",", threshold=1 << 30,
                               max_line_width=1 << 30, floatmode="unique")
        return f"dense<{body}> : tensor<{match.group(2)}>"

    return re.sub(r"dense_resource<([\w.]+)> : tensor<([0-9x]+f32)>", literal, text)


def corpus_text(path):
    text = (CORPUS / path).read_text()
    return with_weights(text) if "elided" in path else text


@pytest.mark.parametrize("recipe,name,path,others", FOUND,
                         ids=[f"{n}-{p}" for _, n, p, _ in FOUND])
@pytest.mark.parametrize("variant", [[], ["--linalg-fuse-elementwise-ops"]],
                         ids=["as-exported", "elementwise-fused"])
def test_found_from_a_library(fuel_opt, tmp_path, recipe, name, path, others, variant):
    library = tmp_path / "lib.mlir"
    library.write_text(recipe)
    original = corpus_text(path)
    prepared = run_opt(fuel_opt, original, *variant) if variant else original
    fused = run_opt(fuel_opt, prepared, f"--fuel-fuse=recipes={library}")
    assert count_fused(fused) == {f"@{name}": 1, **others}
    # The module holds the recipe now: it runs anywhere.
    assert f"fuel.recipe @{name}" in fused
    check_same_numerics(prepared, fused)


@pytest.mark.parametrize("path,coefficient", [
    ("torch_mlir/gelu_tanh.linalg.mlir", 0.797724),
    ("tosa_to_linalg/gelu_tanh.tosa2linalg.mlir", 0.7978845608)])
def test_gelu_tanh_coefficient_is_the_exports(fuel_opt, path, coefficient):
    fused = run_opt(fuel_opt, with_recipe(GELU_TANH_COEFFICIENT, corpus_text(path)),
                    "--fuel-fuse")
    value = float(re.search(r"fuel.fused @gelu_tanh_c \{c = ([^ ]+) : f64\}", fused).group(1))
    assert value == pytest.approx(coefficient, rel=1e-6)


def test_gelu_tanh_other_constant_is_a_near_miss(fuel_opt):
    # torch-mlir's export multiplies by 0.797724: another function than the
    # recipe's; the module is left as it was and the report names the
    # constant.
    original = corpus_text("torch_mlir/gelu_tanh.linalg.mlir")
    p = subprocess.run([fuel_opt, "--fuel-fuse=report=near-misses"],
                       input=with_recipe(GELU_TANH, original), capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "fuel.fused" not in p.stdout
    assert ("near miss: gelu_tanh_act: expected the constant 0.7978846, found 0.797724"
            in p.stderr)


def test_library_recipe_renamed_on_a_clash(fuel_opt, tmp_path):
    # The export's function is @silu: the recipe @silu copied in is renamed,
    # and names the same op.
    library = tmp_path / "lib.mlir"
    library.write_text(SILU.replace("@silu_act", "@silu"))
    original = (CORPUS / "torch_mlir/silu.linalg.mlir").read_text()
    fused = run_opt(fuel_opt, original, f"--fuel-fuse=recipes={library}")
    assert count_fused(fused) == {"@silu_0": 1}
    assert "fuel.recipe @silu_0" in fused and "func.func @silu(" in fused
    check_same_numerics(original, fused)


@pytest.mark.parametrize("path", GELU_FILES)
def test_gelu_from_the_module(fuel_opt, path):
    original = (CORPUS / path).read_text()
    fused = run_opt(fuel_opt, with_recipe(GELU_AS_EXPORTED, original), "--fuel-fuse")
    assert count_fused(fused) == {"@gelu_erf_exported": 1}
    check_same_numerics(original, fused)


def fuse_in_process(text):
    """--fuel-fuse run in this process, through the Python bindings."""
    from fuel_mlir import ir, passmanager

    with ir.Context():
        module = ir.Module.parse(text)
        passmanager.PassManager.parse("builtin.module(fuel-fuse)").run(module.operation)
        return str(module)


@pytest.mark.parametrize("path", [
    "tosa_to_linalg/gelu_tanh.tosa2linalg.mlir",
    "torch_mlir/llama_block.linalg.elided.mlir",
    "tosa_to_linalg/llama_block_sdpa.tosa2linalg.elided.mlir"])
def test_registered_from_python_found_in_process(path):
    # Registered from Python, the ops are searched for by every fusion the
    # process runs after; the module they are found in gets their recipes.
    from fuel_mlir import recipes, registry

    gelu = registry.register("gelu_tanh_registered", lambda x: 0.5 * x * (
        1.0 + recipes.tanh(0.7978845608 * (x + 0.044715 * x ** 3))))
    silu = registry.register("silu_registered", lambda x: x * recipes.sigmoid(x))
    expected = ({f"@{gelu.name}": 1} if "gelu" in path
                else {f"@{silu.name}": 1, **LLAMA})
    original = corpus_text(path)
    fused = fuse_in_process(original)
    assert count_fused(fused) == expected
    assert f"fuel.recipe @{next(iter(expected))[1:]}" in fused
    check_same_numerics(original, fused)
