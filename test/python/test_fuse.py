"""fuse(decompose(op)) == op for every op with a recipe, over dtypes, dynamic
dims and params; and fusion leaves everything else as it was."""

import subprocess

import numpy as np
import pytest

from numerics import BF16, fused_text
from test_all_ops import CASES, rand

from fuel_mlir import registry

RECIPE_OPS = sorted(e.name for e in registry.entries() if e.has_recipe and e.name != "powi_backward")


def run_opt(exe, text, *args):
    p = subprocess.run([exe, "-", *args], input=text, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_recipe_ops_are_covered():
    assert set(RECIPE_OPS) <= set(CASES)


VARIANTS = [("f32", np.float32, False), ("f16", np.float16, False), ("dynamic", np.float32, True)]
if BF16 is not None:
    VARIANTS.append(("bf16", BF16, False))

EXTRA_PARAMS = {
    "rms_norm_last_dim": [{"eps": 1e-6}, {"eps": 0.25}],
    "layer_norm_last_dim": [{"eps": 3e-5}],
    "inplace_affine": [{"mul": -1.5, "add": 1e-3}],
    "rms_norm_last_dim_backward": [{"eps": 1e-3}],
    "layer_norm_last_dim_backward": [{"eps": 1e-6}],
    "flash_attn": [{"softmax_scale": 0.5, "causal": True}],
    "conv2d": [{}, {"stride": (1, 3), "padding": (2, 1)}],
    "fused_softmax_cross_entropy": [{"reduction": "sum"}, {"reduction": "none", "ignore_index": 3}],
}


# Ops whose recipe covers their basic form only: the round trip of that
# form (test_all_ops' case exercises the hand-written rest).
BASIC_FORM = {
    "flash_attn": (lambda dt: [rand((1, 2, 3, 8), dt, 1), rand((1, 2, 5, 8), dt, 2), rand((1, 2, 5, 4), dt, 3)],
                   {"softmax_scale": 0.35}, None, {0: (0, 2), 1: (0, 2), 2: (0, 2)}),
    "conv2d": (lambda dt: [rand((2, 3, 7, 9), dt, 1), rand((4, 3, 3, 2), dt, 2), rand((4,), dt, 3)],
               {"stride": (2, 1), "padding": (1, 0)}, None, {0: (0, 2, 3)}),
}


@pytest.mark.parametrize("variant,dtype,dynamic", VARIANTS, ids=[v[0] for v in VARIANTS])
@pytest.mark.parametrize("name", RECIPE_OPS)
def test_fuse_decompose_round_trip(fuel_opt, name, variant, dtype, dynamic):
    make, params, _, dyn = BASIC_FORM.get(name, CASES[name])
    for p in [params] + EXTRA_PARAMS.get(name, []):
        text = fused_text(name, make(dtype), p, dyn if dynamic else None)
        original = run_opt(fuel_opt, text)
        back = run_opt(fuel_opt, text, "--fuel-decompose", "--fuel-fuse")
        assert back == original


@pytest.mark.parametrize("variant,dtype,dynamic", VARIANTS, ids=[v[0] for v in VARIANTS])
def test_fuse_decompose_round_trip_conv2d_without_bias(fuel_opt, variant, dtype, dynamic):
    """The recipe's optional operand: absent, it is absent after fusion."""
    args = [rand((1, 2, 6, 5), dtype, 1), rand((3, 2, 2, 2), dtype, 2), None]
    text = fused_text("conv2d", args, {"stride": (2, 2)}, {0: (0, 2, 3)} if dynamic else None)
    original = run_opt(fuel_opt, text)
    assert "fuel.fused conv2d" in original and "tensor<3xf" not in original
    assert run_opt(fuel_opt, text, "--fuel-decompose", "--fuel-fuse") == original


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuse_keeps_what_every_decomposition_computes(fuel_opt, name):
    """--fuel-fuse on the decomposition of every op (hand-written ones
    included, dynamic dims): whatever it finds inside, the module computes
    the same values."""
    from fuel_mlir import runner
    make, params, _, dyn = CASES[name]
    args = make(np.float32)
    decomposed = run_opt(fuel_opt, fused_text(name, args, params, dyn), "--fuel-decompose")
    fused = run_opt(fuel_opt, decomposed, "--fuel-fuse")
    present = [a for a in args if a is not None]
    want, got = runner.compile(decomposed, "f")(*present), runner.compile(fused, "f")(*present)
    for w, g in zip(want if isinstance(want, tuple) else (want,), got if isinstance(got, tuple) else (got,)):
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64),
                                   rtol=1e-4, atol=1e-5, equal_nan=True)
