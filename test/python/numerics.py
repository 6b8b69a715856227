"""Helpers for the numerics suites: build one fused op in a function, run it
through fuel-to-llvm with the runner, and compare with a reference."""

import numpy as np

from fuel_mlir import ir, runner
from fuel_mlir.dialects import fuel, func

try:
    import ml_dtypes

    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover
    BF16 = None

MLIR_TYPES = {
    np.dtype(np.float32): "f32",
    np.dtype(np.float16): "f16",
    np.dtype(np.float64): "f64",
    np.dtype(np.int64): "i64",
    np.dtype(np.int32): "i32",
    np.dtype(np.uint32): "i32",
    np.dtype(np.uint8): "i8",
    np.dtype(np.int8): "i8",
}
if BF16 is not None:
    MLIR_TYPES[BF16] = "bf16"

# The tolerances of docs/FusedOps.md (Conventions).
TOL = {"f32": dict(rtol=1e-5, atol=1e-6), "f16": dict(rtol=2e-2, atol=2e-3),
       "bf16": dict(rtol=2e-2, atol=2e-2), "f64": dict(rtol=1e-10, atol=1e-12)}
TOL_LOOSE = {"f32": dict(rtol=1e-4, atol=1e-5), "f16": dict(rtol=2e-2, atol=2e-3),
             "bf16": dict(rtol=2e-2, atol=2e-2), "f64": dict(rtol=1e-10, atol=1e-12)}


def arg_type(a, dynamic=()):
    if isinstance(a, int):
        return "index"
    dims = ["?" if i in dynamic else str(d) for i, d in enumerate(a.shape)]
    return "tensor<" + "".join(d + "x" for d in dims) + MLIR_TYPES[a.dtype] + ">"


def fused_text(name, args, params=None, dynamic=None):
    """The text of a module whose function @f applies `name` to `args`."""
    params = params or {}
    dynamic = dynamic or {}
    present = [a for a in args if a is not None]
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        types = [ir.Type.parse(arg_type(a, dynamic.get(i, ()))) for i, a in enumerate(present)]
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp("f", ir.FunctionType.get(types, []))
            block = fn.add_entry_block()
            with ir.InsertionPoint(block):
                out = fuel.fused(name, list(block.arguments), **params)
                outs = list(out) if isinstance(out, tuple) else [out]
                func.ReturnOp(outs)
            fn.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get(types, [o.type for o in outs]))
        return str(module)


def run_fused(name, args, params=None, dynamic=None):
    """Builds `name(args, **params)` in a function and runs it.

    `dynamic` maps argument positions to the dims made dynamic (`?`).
    `args` may hold None for an absent optional operand (dropped).
    """
    text = fused_text(name, args, params, dynamic)
    compiled = runner.compile(text, "f")
    return compiled(*[a for a in args if a is not None])


def rand(shape, dtype=np.float32, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * scale).astype(dtype)


def assert_close(got, want, dtype_name, loose=False):
    tol = (TOL_LOOSE if loose else TOL)[dtype_name]
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), want, **tol)
