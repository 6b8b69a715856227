"""Math in GPU kernels: every math op a frontend or a recipe writes, in f32,
f16 and bf16, compiles for AMD GPUs without the ROCm device library (no
OCML call, and none of the libcalls the AMDGPU backend cannot make: code
objects by llc-22 and ld.lld-22 for gfx90a and gfx942) and for NVIDIA
GPUs with libdevice linked (PTX that ptxas takes), and computes what
numpy does on both emulators, NVIDIA's through libdevice and AMD's through
fuel-gpu-expand-math's approximations; so do ops registered at run time
(GELU with erf and with tanh, Mish, ...) and the fused ops whose softcap
is a tanh."""

import math

import numpy as np
import pytest

from conftest import REPO_ROOT
from numerics import BF16, assert_close, fused_text, rand
from test_gpu_rocdl import HAVE_LLC, external_calls
from test_recipes_python import build, gelu_erf, gelu_tanh, mish, silu, softsign

from fuel_mlir import gpu, registry, runner

erf, erfc = np.vectorize(math.erf), np.vectorize(math.erfc)


def positive(x):
    return np.abs(x) + 0.01


def inside_one(x):
    return np.tanh(x) * 0.99


# math op: (operands, the inputs' domain, the float64 numpy function).
MATH = {
    "absf": (1, None, np.abs), "acos": (1, inside_one, np.arccos), "acosh": (1, lambda x: np.abs(x) + 1, np.arccosh),
    "asin": (1, inside_one, np.arcsin), "asinh": (1, None, np.arcsinh), "atan": (1, None, np.arctan),
    "atanh": (1, inside_one, np.arctanh), "cbrt": (1, None, np.cbrt), "ceil": (1, None, np.ceil),
    "cos": (1, None, np.cos), "cosh": (1, None, np.cosh), "erf": (1, None, erf), "erfc": (1, None, erfc),
    "exp": (1, None, np.exp), "exp2": (1, None, np.exp2), "expm1": (1, None, np.expm1), "floor": (1, None, np.floor),
    "log": (1, positive, np.log), "log10": (1, positive, np.log10), "log1p": (1, positive, np.log1p),
    "log2": (1, positive, np.log2), "round": (1, None, lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5)),
    "roundeven": (1, None, np.round), "rsqrt": (1, positive, lambda x: 1 / np.sqrt(x)), "sin": (1, None, np.sin),
    "sinh": (1, None, np.sinh), "sqrt": (1, positive, np.sqrt), "tan": (1, inside_one, np.tan),
    "tanh": (1, None, np.tanh), "trunc": (1, None, np.trunc), "atan2": (2, None, np.arctan2),
    "copysign": (2, None, np.copysign), "powf": (2, positive, np.power),
}
DTYPES = {"f32": np.float32, "f16": np.float16}
if BF16 is not None:
    DTYPES["bf16"] = BF16


def math_module(dtype_name, names, n=256):
    """@f(x_0, ..., x_k) applying each math op of `names` to its own
    operands (the second of a binary op: its operand's reverse) in one
    elementwise loop nest, a result each."""
    t = dtype_name
    tensor = f"tensor<{n}x{t}>"
    ins = ", ".join(f"%x{i}: {tensor}" for i in range(len(names)))
    body, yields = [], []
    for i, name in enumerate(names):
        if MATH[name][0] == 2:
            body.append(f"    %y{i} = math.{name} %a{i}, %a{i} : {t}")
        else:
            body.append(f"    %y{i} = math.{name} %a{i} : {t}")
        yields.append(f"%y{i}")
    maps = ", ".join(["#map"] * (2 * len(names)))
    empties = "\n".join(f"  %e{i} = tensor.empty() : {tensor}" for i in range(len(names)))
    block = ", ".join([f"%a{i}: {t}" for i in range(len(names))] + [f"%o{i}: {t}" for i in range(len(names))])
    types = ", ".join([tensor] * len(names))
    return f"""#map = affine_map<(d0) -> (d0)>
func.func @f({ins}) -> ({types}) {{
{empties}
  %r:{len(names)} = linalg.generic {{indexing_maps = [{maps}], iterator_types = ["parallel"]}}
      ins({", ".join(f"%x{i}" for i in range(len(names)))} : {types})
      outs({", ".join(f"%e{i}" for i in range(len(names)))} : {types}) {{
  ^bb0({block}):
{chr(10).join(body)}
    linalg.yield {", ".join(yields)} : {", ".join([t] * len(names))}
  }} -> ({types})
  return {", ".join(f"%r#{i}" for i in range(len(names)))} : {types}
}}
"""


@pytest.fixture(autouse=True)
def _fuel_opt(fuel_opt, monkeypatch):
    monkeypatch.setenv("FUEL_OPT", fuel_opt)


@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_math_needs_no_device_library(dtype):
    kernels = gpu.compile_rocdl(math_module(dtype, sorted(MATH)), chip="gfx942")
    assert kernels
    for k in kernels:
        assert external_calls(k.llvm_ir) == [], k.module
        assert "__ocml" not in k.llvm_ir
        if HAVE_LLC:
            for chip in ("gfx90a", "gfx942"):
                assert gpu.amdgpu_code_object(k.llvm_ir, chip).data[:4] == b"\x7fELF"


@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_math_through_libdevice(dtype):
    # NVIDIA's kernels link libdevice: no call is left for ptxas.
    for k in gpu.compile_nvvm(math_module(dtype, sorted(MATH)), chip="sm_80"):
        assert "call" not in k.ptx and ".extern" not in k.ptx
        if gpu.ptxas_path():
            for chip in ("sm_80", "sm_90"):
                assert [r.entry for r in gpu.ptxas(k.ptx, chip)] == list(k.entries)


def test_f64_math_needing_the_device_library_is_reported(fuel_opt):
    # f64 erf: OCML's, which no code object here links.
    text = math_module("f64", ["erf"])
    (kernel,) = gpu.compile_rocdl(text, chip="gfx942")
    assert "__ocml_erf_f64" in external_calls(kernel.llvm_ir)
    with pytest.raises(gpu.ToolError, match="the kernels call __ocml_erf_f64 of the ROCm device library"):
        gpu.amdgpu_code_object(kernel.llvm_ir, "gfx942")


def math_inputs(dtype, names):
    rng = np.random.default_rng(7)
    inputs = []
    for name in names:
        x = rng.uniform(-6, 6, 256)
        domain = MATH[name][1]
        inputs.append((domain(x) if domain else x).astype(dtype))
    return inputs


@pytest.mark.parametrize("target", ["cuda-emulator", "rocm-emulator"])
@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_math_on_the_emulators(dtype, target):
    names = sorted(MATH)
    inputs = math_inputs(DTYPES[dtype], names)
    got = runner.compile(math_module(dtype, names), "f", target=target)(*inputs)
    # The approximations (erf, atan, cbrt, ...) are within a few ulp of
    # f32; the narrow types round the inputs and results.
    tol = {"f32": 5e-6, "f16": 1e-2, "bf16": 1e-2}[dtype]
    for name, x, g in zip(names, inputs, got):
        x = np.asarray(x, np.float64)
        want = MATH[name][2](*([x, x] if MATH[name][0] == 2 else [x]))
        err = np.max(np.abs(np.asarray(g, np.float64) - want) / np.maximum(1, np.abs(want)))
        assert err <= tol, f"{name}: {err:.1e}"


@pytest.mark.parametrize("target", ["cuda-emulator", "rocm-emulator"])
def test_small_values_keep_their_precision(target):
    # Near 0 (the softcap of small scores, GELU of small activations): the
    # conversion's own expm1 and log1p (exp(x) - 1, log(1 + x)) and
    # upstream's sinh (a difference of exponentials) lost it on AMD.
    names = ["tanh", "erf", "sinh", "expm1", "log1p"]
    x = np.geomspace(1e-6, 1e-1, 256).astype(np.float32)
    x64 = x.astype(np.float64)
    got = runner.compile(math_module("f32", names), "f", target=target)(*[x] * len(names))
    for name, g in zip(names, got):
        want = MATH[name][2](x64)
        np.testing.assert_allclose(g, want, rtol=1e-6, err_msg=name)


RUNTIME = {
    "py_gelu_erf": (gelu_erf, lambda x: 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))),
    "py_gelu_tanh": (gelu_tanh, lambda x: 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi)
                                                                   * (x + 0.044715 * x ** 3)))),
    "py_silu": (silu, lambda x: x / (1.0 + np.exp(-x))),
    "py_mish": (mish, lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    "py_softsign": (softsign, lambda x: x / (1.0 + np.abs(x))),
}


@pytest.mark.parametrize("target", ["cuda-emulator", "rocm-emulator"])
@pytest.mark.parametrize("name", sorted(RUNTIME))
def test_runtime_ops_on_the_emulators(name, target):
    fn, reference = RUNTIME[name]
    registry.register(name, fn)
    x = rand((33, 1000), np.float32, seed=5) * 3
    got = runner.compile(build([(name, {})], x.shape), "f", target=target)(x)
    assert_close(got, reference(x.astype(np.float64)), "f32", loose=True)


def gelu(x, path):
    if "tanh" not in path:
        return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))
    # The tanh form's sqrt(2 / pi): TOSA's pow(2 / pi, 0.5), torch-mlir's
    # constant 0.797724 (as its export writes it).
    c = 0.797724 if path.startswith("torch_mlir") else math.sqrt(0.636619746)
    return 0.5 * x * (1.0 + np.tanh(c * (x + 0.044715 * x ** 3)))


@pytest.mark.parametrize("target", ["cuda-emulator", "rocm-emulator"])
@pytest.mark.parametrize("path", ["torch_mlir/gelu.linalg.mlir", "torch_mlir/gelu_tanh.linalg.mlir",
                                  "tosa_to_linalg/gelu.tosa2linalg.mlir",
                                  "tosa_to_linalg/gelu_tanh.tosa2linalg.mlir"])
def test_frontend_gelu_on_the_emulators(path, target):
    # The exports' elementwise GELU (no fused op: an erf, or a tanh and a
    # cube, TOSA's a powf of a negative base, in linalg.generics), through
    # the GPU pipelines as they are.
    name = path.split("/")[1].split(".")[0]
    x = rand((2, 16, 64), np.float32, seed=3) * 3
    got = runner.compile((REPO_ROOT / "test" / "corpus" / path).read_text(), name, target=target)(x)
    assert_close(got, gelu(x.astype(np.float64), path), "f32", loose=True)


def test_runtime_op_code_objects():
    registry.register("py_gelu_erf", gelu_erf)
    registry.register("py_gelu_tanh", gelu_tanh)
    text = build([("py_gelu_erf", {}), ("py_gelu_tanh", {})], (4, 256))
    for k in gpu.compile_rocdl(text, chip="gfx942"):
        assert external_calls(k.llvm_ir) == []
        if HAVE_LLC:
            gpu.amdgpu_code_object(k.llvm_ir, "gfx942")


@pytest.mark.parametrize("name", ["flash_attn", "paged_attn", "flash_attn_backward_q"])
def test_softcap_kernels_make_code_objects(name):
    # softcap's tanh: llc-22 has no libcall for llvm.tanh on AMDGPU.
    params = {"softmax_scale": 0.3, "softcap": 5.0}
    if name == "paged_attn":
        params["block_size"] = 16
        inputs = [rand((2, 2, 64), np.float32), rand((8, 2, 16, 64), np.float32, 1),
                  rand((8, 2, 16, 64), np.float32, 2), np.arange(8, dtype=np.int32).reshape(2, 4),
                  np.array([64, 40], np.int32)]
    else:
        q, k, v = (rand((1, 2, 64, 64), np.float32, i) for i in range(3))
        inputs = [q, k, v] + ([q] if name != "flash_attn" else [])
    for kernel in gpu.compile_rocdl(fused_text(name, inputs, params), chip="gfx942"):
        assert external_calls(kernel.llvm_ir) == []
        if HAVE_LLC:
            gpu.amdgpu_code_object(kernel.llvm_ir, "gfx942")
