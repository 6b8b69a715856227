"""--fuel-fuse on the real frontend exports in test/corpus: what it finds,
and that the fused module computes what the original computed (for the
exports whose weights were elided, on the full exports in ../shared/corpus
when they are beside the checkout)."""

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO_ROOT
from fuel_mlir import runner

CORPUS = REPO_ROOT / "test" / "corpus"
FULL_CORPUS = REPO_ROOT.parent / "shared" / "corpus"
FILES = sorted(CORPUS.glob("*/*.mlir"))

# What the pass finds, per model, pinned so a regression shows: the corpus
# README's list.
LLAMA = {"rms_norm_last_dim": 2, "rope": 2, "flash_attn": 1}
BY_MODEL = {
    "softmax": {"softmax_last_dim": 1},
    "layernorm": {"layer_norm_last_dim": 1},
    "rmsnorm": {"rms_norm_last_dim": 1},
    "linear": {"fused_linear": 1},
    "conv2d": {"conv2d": 1},
    "cross_entropy": {"fused_softmax_cross_entropy": 1},
    "sdpa": {"flash_attn": 1},
    "sdpa_causal": {"flash_attn": 1},
    "llama_block": LLAMA,
    "llama_block_sdpa": LLAMA,
}

# The same exports after upstream elementwise fusion (the form IREE-style
# pipelines hand over: a norm's last steps and its weight in one body, the
# scale, mask and guard of attention in its bodies, a RoPE inside the matmul
# that reads it): the same ops are found.
BY_MODEL_AFTER_ELEMENTWISE_FUSION = BY_MODEL


def per_file(by_model):
    """The counts keyed by corpus file, both frontends."""
    return {f"{frontend}/{model}.{suffix}": counts
            for frontend, suffixes in (("torch_mlir", ("linalg.mlir", "linalg.elided.mlir")),
                                       ("tosa_to_linalg", ("tosa2linalg.mlir", "tosa2linalg.elided.mlir")))
            for suffix in suffixes
            for model, counts in by_model.items()}


# The JAX exports (test/corpus/make_jax.py), both routes: through torch-mlir's
# StableHLO lowering and IREE's input conversion. Not found yet, pinned so a
# change shows: Flax's layer norm and jax.nn.standardize (their variance is
# mean(x^2) - mean(x)^2, which rounds otherwise than the op's definition),
# jax.nn.dot_product_attention as flash_attn where causal through torch-mlir's
# route (jnp.tril and jnp.where stay private functions: found after --inline,
# test_jax_causal_attention; its softmax is found), the einsum
# attention through torch-mlir's route (its softmax is), and optax's
# cross-entropy (found under value-changing: test_value_changing_forms).
JAX_FOUND = {
    "conv2d": {"conv2d": 1},
    "linear": {"fused_linear": 1},
    "rmsnorm": {"rms_norm_last_dim": 1},
    "softmax": {"softmax_last_dim": 1},
    "sdpa": {"flash_attn": 1},
    "sdpa_causal": {"softmax_last_dim": 1},
}
JAX_FOUND_BY_ROUTE = {
    "jax_iree": {**JAX_FOUND, "einsum_attention": {"flash_attn": 1}, "rope": {"rope": 1},
                 "sdpa_causal": {"flash_attn": 1}},
    "jax_stablehlo": {**JAX_FOUND, "einsum_attention": {"softmax_last_dim": 1},
                      "rope": {"rope": 1}},
}
JAX_FILES = {f"{route}/{model}.{suffix}": counts
             for route, suffix in (("jax_iree", "iree-input.mlir"),
                                   ("jax_stablehlo", "stablehlo2linalg.mlir"))
             for model, counts in JAX_FOUND_BY_ROUTE[route].items()}

# ONNX's SoftmaxCrossEntropyLoss through torch-mlir and through IREE
# (test/corpus/make_onnx.py), each reduction and an ignore index.
ONNX_ROUTES = {"onnx_torch_mlir": "linalg.mlir", "onnx_iree": "iree-input.mlir"}
ONNX_FILES = {f"{route}/softmax_cross_entropy_{kind}.{suffix}": {"fused_softmax_cross_entropy": 1}
              for route, suffix in ONNX_ROUTES.items()
              for kind in ("mean", "sum", "none", "ignore")}

EXPECTED = {**per_file(BY_MODEL), **JAX_FILES, **ONNX_FILES}
EXPECTED_AFTER_ELEMENTWISE_FUSION = {
    **per_file(BY_MODEL_AFTER_ELEMENTWISE_FUSION), **ONNX_FILES,
    **JAX_FILES}


def run_opt(fuel_opt, text, *flags):
    p = subprocess.run([fuel_opt, *flags], input=text, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return p.stdout


def count_fused(text):
    counts = {}
    for line in text.splitlines():
        if "fuel.fused " in line:
            name = line.split("fuel.fused ")[1].split()[0]
            counts[name] = counts.get(name, 0) + 1
    return counts


# Each export as it is, and as upstream passes leave it for a later fusion:
# named ops generalized (IREE-style), elementwise ops fused into one body.
VARIANTS = {
    "as-exported": ([], EXPECTED),
    "generalized": (["--linalg-generalize-named-ops"], EXPECTED),
    "elementwise-fused": (["--linalg-fuse-elementwise-ops"], EXPECTED_AFTER_ELEMENTWISE_FUSION),
}


def fuse_variant(fuel_opt, path, flags):
    original = path.read_text()
    prepared = run_opt(fuel_opt, original, *flags) if flags else original
    return prepared, run_opt(fuel_opt, prepared, "--fuel-fuse")


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.name}" for p in FILES])
def test_fuse_corpus(fuel_opt, path, variant):
    flags, expected = VARIANTS[variant]
    key = f"{path.parent.name}/{path.name}"
    prepared, fused = fuse_variant(fuel_opt, path, flags)
    assert count_fused(fused) == expected.get(key, {})
    if not expected.get(key):
        # Nothing found: the module is left exactly as it was.
        assert fused == run_opt(fuel_opt, prepared)
        return
    if "elided" in path.name:
        # The weights are elided: the numerics run on the full export.
        full = FULL_CORPUS / path.parent.name / path.name.replace(".elided", "")
        if not full.is_file():
            pytest.skip(f"the full export is not beside the checkout ({full})")
        prepared, fused = fuse_variant(fuel_opt, full, flags)
        assert count_fused(fused) == expected[key]
    check_same_numerics(prepared, fused)


def check_same_numerics(original, fused):
    """decompose(fuse(f)) computes f: run both on the same random inputs.
    Both as decomposed (codegen=False): the fused ops' schedules sum in
    orders of their own (tested against the references elsewhere), and the
    tolerance here is the decomposition's, nearly exact."""
    fn = re.search(r"func\.func (?:public )?@([\w.$-]+)\(", original).group(1)
    f0 = runner.compile(original, fn, codegen=False)
    f1 = runner.compile(fused, fn, codegen=False)
    rng = np.random.default_rng(0)
    args = []
    for p in f0.inputs:
        if p.kind == "index":
            args.append(1)
        elif p.dtype.kind == "f":
            args.append(rng.standard_normal([d or 3 for d in p.shape]).astype(p.dtype))
        else:
            args.append(rng.integers(0, 2, [d or 3 for d in p.shape]).astype(p.dtype))
    want, got = f0(*args), f1(*args)
    for w, g in zip(want if isinstance(want, tuple) else (want,), got if isinstance(got, tuple) else (got,)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


# The forms that equal an op's formula in exact arithmetic but round
# otherwise, fused only under --fuel-fuse=value-changing. (torch-mlir's
# route keeps jax.nn.standardize, jnp.clip and jnp.take_along_axis as
# private functions, eps an argument of one: inlined first.)
LAYER_NORM = {"layer_norm_last_dim": 1}
CROSS_ENTROPY = {"fused_softmax_cross_entropy": 1}
VALUE_CHANGING = [("jax_iree/layernorm.iree-input.mlir", [], LAYER_NORM),
                  ("jax_stablehlo/layernorm.stablehlo2linalg.mlir", [], LAYER_NORM),
                  ("jax_iree/standardize.iree-input.mlir", [], LAYER_NORM),
                  ("jax_stablehlo/standardize.stablehlo2linalg.mlir", ["--inline"], LAYER_NORM),
                  ("jax_iree/cross_entropy.iree-input.mlir", [], CROSS_ENTROPY),
                  ("jax_stablehlo/cross_entropy.stablehlo2linalg.mlir", ["--inline"],
                   CROSS_ENTROPY)]


@pytest.mark.parametrize("variant", ["as-exported", "elementwise-fused"])
@pytest.mark.parametrize("path,flags,expected", VALUE_CHANGING,
                         ids=[p for p, _, _ in VALUE_CHANGING])
def test_value_changing_forms(fuel_opt, path, flags, expected, variant):
    original = (CORPUS / path).read_text()
    if variant == "elementwise-fused":
        flags = [*flags, "--linalg-fuse-elementwise-ops"]
    prepared = run_opt(fuel_opt, original, *flags) if flags else original
    p = subprocess.run([fuel_opt, "--fuel-fuse=report=near-misses"], input=prepared,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert count_fused(p.stdout) == {}
    assert "(fused under --fuel-fuse=value-changing)" in p.stderr
    fused = run_opt(fuel_opt, prepared, "--fuel-fuse=value-changing")
    assert count_fused(fused) == expected
    check_same_numerics(prepared, fused)


# jax.nn.dot_product_attention's causal mask hides scores with -0.7 *
# FLT_MAX, not -inf: on finite scores that computes what -inf does, and the
# attention is flash_attn (torch-mlir's route after --inline). A mask value
# of -1e20 is no such mask (exp of it less a score of -1e20 is not 0): only
# the softmax is fused.
CAUSAL_SDPA = [("jax_stablehlo/sdpa_causal.stablehlo2linalg.mlir", ["--inline"]),
               ("jax_stablehlo/sdpa_causal.stablehlo2linalg.mlir",
                ["--inline", "--linalg-fuse-elementwise-ops"]),
               ("jax_iree/sdpa_causal.iree-input.mlir", []),
               ("jax_iree/sdpa_causal.iree-input.mlir", ["--linalg-fuse-elementwise-ops"])]


@pytest.mark.parametrize("path,flags", CAUSAL_SDPA,
                         ids=[f"{p} {' '.join(f)}" for p, f in CAUSAL_SDPA])
def test_jax_causal_attention(fuel_opt, path, flags):
    original = (CORPUS / path).read_text()
    prepared = run_opt(fuel_opt, original, *flags) if flags else original
    fused = run_opt(fuel_opt, prepared, "--fuel-fuse")
    assert count_fused(fused) == {"flash_attn": 1}
    assert "causal = true" in fused
    check_same_numerics(prepared, fused)


def test_jax_causal_attention_small_mask_value(fuel_opt):
    original = (CORPUS / "jax_iree/sdpa_causal.iree-input.mlir").read_text()
    assert original.count("-2.38197633E+38") == 1
    changed = original.replace("-2.38197633E+38", "-1.000000e+20")
    p = subprocess.run([fuel_opt, "--fuel-fuse=report=near-misses"], input=changed,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert count_fused(p.stdout) == {"softmax_last_dim": 1}
    # (The non-causal variant gets as far, and is the one reported: it
    # expected the scores scaled where the mask selects.)
    assert "near miss: flash_attn: expected mul, found arith.select" in p.stderr, p.stderr


def test_value_changing_form_rounds_otherwise(fuel_opt):
    # Rows whose mean is large against their spread: mean(x^2) - mean(x)^2
    # cancels in f32, the op's definition does not. The fused op is nearer
    # a float64 reference than the export it replaced.
    original = (CORPUS / "jax_iree/standardize.iree-input.mlir").read_text()
    fused = run_opt(fuel_opt, original, "--fuel-fuse=value-changing")
    rng = np.random.default_rng(3)
    x = (300.0 + rng.standard_normal((2, 16, 64))).astype(np.float32)
    x64 = x.astype(np.float64)
    c = x64 - x64.mean(-1, keepdims=True)
    want = c / np.sqrt((c * c).mean(-1, keepdims=True) + 1e-6)
    export = runner.compile(original, "main")(x)
    ours = runner.compile(fused, "main")(x)
    export_error = np.abs(export - want).max()
    our_error = np.abs(ours - want).max()
    assert our_error < 1e-3 < export_error


@pytest.mark.parametrize("path,flags", [(p, f) for p, f, e in VALUE_CHANGING
                                          if e == CROSS_ENTROPY])
def test_jax_cross_entropy_on_every_class(fuel_opt, path, flags):
    # optax's loss reads x[t] through a wrap of negative targets, a clamp and
    # a guard that holds on every class: on targets over all 10 classes the
    # fused op (no index ignored, the i32 targets widened) computes what the
    # export computed, and both match a float64 logsumexp(x) - x[t].
    prepared = run_opt(fuel_opt, (CORPUS / path).read_text(), *flags)
    fused = run_opt(fuel_opt, prepared, "--fuel-fuse=value-changing")
    assert "ignore_index = -2147483649" in fused
    rng = np.random.default_rng(7)
    logits = (4 * rng.standard_normal((8, 10))).astype(np.float32)
    labels = np.array([0, 9, 3, 5, 1, 7, 2, 8], dtype=np.int32)
    x = logits.astype(np.float64)
    m = x.max(-1)
    want = np.mean(np.log(np.exp(x - m[:, None]).sum(-1)) + m - x[np.arange(8), labels])
    export = runner.compile(prepared, "main")(logits, labels)
    ours = runner.compile(fused, "main")(logits, labels)
    np.testing.assert_allclose(export, want, rtol=1e-5)
    np.testing.assert_allclose(ours, want, rtol=1e-5)


# optax's loss changed where fusing it would change what it computes: the
# reason the candidate stopped, in the near-miss report, and nothing fused.
JAX_CROSS_ENTROPY_CHANGED = {
    "clamp-too-low": ([("%51 = arith.minsi %50, %c9", "%51 = arith.minsi %50, %c0")],
                      "the class read is not the target on every class"),
    "guard-drops-a-class": ([("arith.cmpi sle, %in, %c9_i32", "arith.cmpi slt, %in, %c9_i32")],
                            "a guard of the class read fails on a valid class"),
    "64-bit-targets": ([("i32", "i64")], "no target is ignored, but the targets are 64-bit"),
    # Each class is checked on its own, up to 2^20 of them.
    "too-many-classes": ([("8x10x", "8x1048577x")],
                         "too many classes to check the class read on each"),
    "classes-not-static": (
        [("tensor.extract %arg0[%48, %51] : tensor<8x10xf32>",
          "tensor.extract %dyn[%48, %51] : tensor<8x?xf32>"),
         ("    %cst = arith.constant 8.000000e+00 : f32\n",
          "    %cst = arith.constant 8.000000e+00 : f32\n"
          "    %dyn = tensor.cast %arg0 : tensor<8x10xf32> to tensor<8x?xf32>\n")],
        "the number of classes is not static"),
}


@pytest.mark.parametrize("case", list(JAX_CROSS_ENTROPY_CHANGED))
def test_jax_cross_entropy_changed_is_not_fused(fuel_opt, case):
    edits, why = JAX_CROSS_ENTROPY_CHANGED[case]
    changed = (CORPUS / "jax_iree/cross_entropy.iree-input.mlir").read_text()
    for old, new in edits:
        assert old in changed
        changed = changed.replace(old, new)
    p = subprocess.run([fuel_opt, "--fuel-fuse=value-changing report=near-misses"],
                       input=changed, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert count_fused(p.stdout) == {}
    assert p.stdout == run_opt(fuel_opt, changed)
    assert "near miss: fused_softmax_cross_entropy: " + why in p.stderr, p.stderr


def test_jax_cross_entropy_mean_by_a_value(fuel_opt):
    # The loss divided by a value that is not a constant (here the sum
    # itself) is no mean: the report says so and only the sum is fused.
    original = (CORPUS / "jax_iree/cross_entropy.iree-input.mlir").read_text()
    old = ("ins(%45 : tensor<f32>) outs(%46 : tensor<f32>) {\n"
           "    ^bb0(%in: f32, %out: f32):\n      %48 = arith.divf %in, %cst : f32")
    new = ("ins(%45, %45 : tensor<f32>, tensor<f32>) outs(%46 : tensor<f32>) {\n"
           "    ^bb0(%in: f32, %in_9: f32, %out: f32):\n      %48 = arith.divf %in, %in_9 : f32")
    assert old in original
    changed = original.replace(old, new).replace(
        "[affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%45, %45",
        "[affine_map<() -> ()>, affine_map<() -> ()>, affine_map<() -> ()>], "
        "iterator_types = []} ins(%45, %45")
    p = subprocess.run([fuel_opt, "--fuel-fuse=value-changing report=near-misses"],
                       input=changed, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert ("near miss: fused_softmax_cross_entropy: expected the number of targets as a "
            "constant") in p.stderr, p.stderr
    assert count_fused(p.stdout) == CROSS_ENTROPY
    assert "reduction = #fuel.reduction<sum>" in p.stdout


def test_jax_cross_entropy_mean_by_another_count(fuel_opt):
    # A "mean" over 8 targets that divides by 7 is not the op's mean: the
    # near-miss report says so, the sum is fused and the division by 7 stays,
    # and the result is still the export's.
    original = (CORPUS / "jax_iree/cross_entropy.iree-input.mlir").read_text()
    old = "%cst = arith.constant 8.000000e+00"
    assert old in original
    changed = original.replace(old, "%cst = arith.constant 7.000000e+00")
    p = subprocess.run([fuel_opt, "--fuel-fuse=value-changing report=near-misses"],
                       input=changed, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert ("near miss: fused_softmax_cross_entropy: the mean divides by another "
            "number than that of the targets") in p.stderr, p.stderr
    assert count_fused(p.stdout) == CROSS_ENTROPY
    assert "reduction = #fuel.reduction<sum>" in p.stdout
    assert "arith.divf %in, %cst" in p.stdout
    rng = np.random.default_rng(3)
    logits = (4 * rng.standard_normal((8, 10))).astype(np.float32)
    labels = rng.integers(0, 10, 8).astype(np.int32)
    x = logits.astype(np.float64)
    m = x.max(-1)
    want = np.sum(np.log(np.exp(x - m[:, None]).sum(-1)) + m - x[np.arange(8), labels]) / 7
    np.testing.assert_allclose(runner.compile(p.stdout, "main")(logits, labels), want,
                               rtol=1e-5)


@pytest.mark.parametrize("route", list(ONNX_ROUTES))
@pytest.mark.parametrize("kind", ["mean", "sum", "none", "ignore"])
def test_onnx_cross_entropy_on_every_class(fuel_opt, kind, route):
    # Targets over all 10 classes (3 is the ignored one in "ignore"): the
    # fused op computes what the export computed, ignored rows included.
    path = CORPUS / route / f"softmax_cross_entropy_{kind}.{ONNX_ROUTES[route]}"
    original = path.read_text()
    fused = run_opt(fuel_opt, original, "--fuel-fuse")
    rng = np.random.default_rng(5)
    logits = rng.standard_normal((8, 10)).astype(np.float32)
    labels = np.array([3, 0, 9, 3, 5, 1, 7, 2], dtype=np.int64)
    want = runner.compile(original, "loss")(logits, labels)
    got = runner.compile(fused, "loss")(logits, labels)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_jax_einsum_attention_after_inlining(fuel_opt):
    # torch-mlir's route keeps jnp.tril and jnp.where as private functions:
    # inlined, the mask (a select of a tril of ones) is the causal mask and
    # the whole attention is found.
    original = (CORPUS / "jax_stablehlo/einsum_attention.stablehlo2linalg.mlir").read_text()
    prepared = run_opt(fuel_opt, original, "--inline")
    fused = run_opt(fuel_opt, prepared, "--fuel-fuse")
    assert count_fused(fused) == {"flash_attn": 1}
    assert "causal = true" in fused and "softmax_scale = 2.500000e-01" in fused
    check_same_numerics(prepared, fused)


def one_module(paths):
    """The functions of several exports in one module (each export's
    affine map aliases written out, functions renamed apart)."""
    funcs = []
    for i, path in enumerate(paths):
        text = (CORPUS / path).read_text().split("{-#")[0]
        aliases = dict(re.findall(r"^(#map\d*) = (affine_map<.*>)$", text, re.M))
        body = text[text.index("  func.func"):text.rindex("}")]
        for alias in sorted(aliases, key=len, reverse=True):
            body = re.sub(re.escape(alias) + r"\b", aliases[alias], body)
        funcs.append(re.sub(r"func\.func (public |private )?@(\w+)", rf"func.func \1@\2_{i}", body))
    return "module {\n" + "\n".join(funcs) + "}\n"


def test_same_result_with_and_without_threads(fuel_opt):
    # Functions are fused on the context's threads: the result and the
    # near-miss report are the same as on one thread, in the IR's order.
    text = one_module(["torch_mlir/softmax.linalg.mlir", "jax_iree/sdpa.iree-input.mlir",
                       "tosa_to_linalg/rmsnorm.tosa2linalg.mlir",
                       "jax_iree/layernorm.iree-input.mlir", "torch_mlir/linear.linalg.mlir"] * 3)
    runs = []
    for threads in ([], ["--mlir-disable-threading"]):
        p = subprocess.run([fuel_opt, "--fuel-fuse=report=near-misses", *threads],
                           input=text, capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        runs.append((p.stdout, p.stderr))
    assert runs[0] == runs[1]
    assert count_fused(runs[0][0]) == {"softmax_last_dim": 3, "flash_attn": 3,
                                       "rms_norm_last_dim": 3,
                                       "fused_linear": 3}
    assert runs[0][1].count("near miss: layer_norm_last_dim") == 3
