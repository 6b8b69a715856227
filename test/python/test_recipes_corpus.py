"""Ops defined by recipes found in the frontend exports of test/corpus by
--fuel-fuse, from a recipe library (recipes=) or from the module's own
recipe, and decompose(fuse(f)) checked against f.

Found today, in the torch-mlir and TOSA exports, as exported and after
elementwise fusion: GELU (erf) written with the association the exports
use, x * ((erf(x / sqrt 2) + 1) * 0.5), and SiLU, x * (1 / (1 + exp(-x))).
Not found yet, and pinned so that a change shows: the same GELU written
(0.5 * x) * (1 + erf(x / sqrt 2)) (the matcher does not reassociate
products), GELU (tanh) (the exports write x^3 as a power, and TOSA
sqrt(2/pi) as one too) and the SiLU gate of the Llama blocks.
"""

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


FOUND = [(GELU_AS_EXPORTED, "gelu_erf_exported", p) for p in GELU_FILES] + [
    (SILU, "silu_act", p) for p in ["torch_mlir/silu.linalg.mlir",
                                    "tosa_to_linalg/silu.tosa2linalg.mlir"]]


@pytest.mark.parametrize("recipe,name,path", FOUND, ids=[f"{n}-{p}" for _, n, p in FOUND])
@pytest.mark.parametrize("variant", [[], ["--linalg-fuse-elementwise-ops"]],
                         ids=["as-exported", "elementwise-fused"])
def test_found_from_a_library(fuel_opt, tmp_path, recipe, name, path, variant):
    library = tmp_path / "lib.mlir"
    library.write_text(recipe)
    original = (CORPUS / path).read_text()
    prepared = run_opt(fuel_opt, original, *variant) if variant else original
    fused = run_opt(fuel_opt, prepared, f"--fuel-fuse=recipes={library}")
    assert count_fused(fused) == {f"@{name}": 1}
    # The module holds the recipe now: it runs anywhere.
    assert f"fuel.recipe @{name}" in fused
    check_same_numerics(prepared, fused)


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


@pytest.mark.parametrize("recipe,path", [
    (GELU_OTHER_ASSOCIATION, "torch_mlir/gelu.linalg.mlir"),
    (GELU_TANH, "torch_mlir/gelu_tanh.linalg.mlir"),
    (GELU_TANH, "tosa_to_linalg/gelu_tanh.tosa2linalg.mlir"),
    (SILU, "torch_mlir/llama_block.linalg.elided.mlir"),
    (SILU, "tosa_to_linalg/llama_block.tosa2linalg.elided.mlir"),
], ids=["gelu-reassociated", "gelu-tanh-torch", "gelu-tanh-tosa", "llama-silu-torch",
        "llama-silu-tosa"])
def test_not_found_yet(fuel_opt, recipe, path):
    original = (CORPUS / path).read_text()
    fused = run_opt(fuel_opt, with_recipe(recipe, original), "--fuel-fuse")
    assert not any(n.startswith("@") for n in count_fused(fused))
