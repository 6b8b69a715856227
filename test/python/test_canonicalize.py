"""Canonicalization through the Python API, and the numerics of the one
rewrite that changes values (composing two affine maps)."""

import numpy as np
import pytest

from fuel_mlir import ir, passmanager
from fuel_mlir.dialects import fuel, func


def canonicalize(module):
    passmanager.PassManager.parse("builtin.module(canonicalize)").run(module.operation)


def fused(module):
    return [op for op in module.body.operations[0].regions[0].blocks[0].operations
            if op.operation.name == "fuel.fused"]


@pytest.mark.parametrize("m1,a1,m2,a2", [
    (2.0, 1.0, 3.0, 4.0),
    (0.1, -0.3, 7.5, 1e-3),
    (-1.25, 1e6, 3e-4, -2.0),
])
def test_composed_affine_matches_the_chain(ctx, module, m1, a1, m2, a2):
    t = ir.RankedTensorType.get([64], ir.F32Type.get())
    with ir.InsertionPoint(module.body):
        @func.FuncOp.from_py_func(t)
        def f(x):
            y = fuel.inplace_affine(x, mul=m1, add=a1)
            return fuel.inplace_affine(y, mul=m2, add=a2)
    canonicalize(module)
    (op,) = fused(module)
    mul = ir.FloatAttr(op.attributes["params"]["mul"]).value
    add = ir.FloatAttr(op.attributes["params"]["add"]).value

    # The chain evaluated step by step in f32, as the two ops compute it,
    # against the composed op, also in f32.
    x = np.random.default_rng(0).standard_normal(64).astype(np.float32) * 10
    f32 = np.float32
    chain = f32(m2) * (f32(m1) * x + f32(a1)) + f32(a2)
    composed = f32(mul) * x + f32(add)
    scale = np.abs(f32(m2) * f32(a1)) + np.abs(chain)
    np.testing.assert_allclose(composed, chain, rtol=1e-5, atol=1e-6 * float(scale.max()))


def test_identity_affine_folds_away(ctx, module):
    t = ir.RankedTensorType.get([4], ir.F32Type.get())
    with ir.InsertionPoint(module.body):
        @func.FuncOp.from_py_func(t)
        def f(x):
            return fuel.inplace_affine(x, mul=1.0, add=0.0)
    canonicalize(module)
    assert fused(module) == []
