"""Running on an NVIDIA GPU: `runner.compile(..., target="cuda")` and
`fuel-run --target=cuda`. Without a GPU they say so; the compile half is
checked with a stand-in device; the numerics run where a GPU is attached,
against the float64 numpy references and tolerances of the CPU suite."""

import numpy as np
import pytest

from numerics import BF16, assert_close, fused_text, rand
from test_all_ops import CASES
from test_codegen_attention import inputs as attention_inputs, reference as attention_reference

from fuel_mlir import gpu, run, runner


def has_gpu():
    try:
        return bool(gpu.cuda_devices())
    except gpu.NoDeviceError:
        return False


HAVE_GPU = has_gpu()
SOFTMAX = fused_text("softmax_last_dim", [np.zeros((4, 64), np.float32)])


@pytest.mark.skipif(HAVE_GPU, reason="a GPU is attached")
def test_no_gpu_is_said():
    with pytest.raises(runner.RunnerError, match="target='cuda': no NVIDIA GPU to run on: "):
        runner.compile(SOFTMAX, "f", target="cuda")


@pytest.mark.skipif(HAVE_GPU, reason="a GPU is attached")
def test_fuel_run_says_no_gpu(tmp_path, capsys):
    path = tmp_path / "m.mlir"
    path.write_text(SOFTMAX)
    assert run.main([str(path), "--function=f", "--input=4x64xf32=" + ",".join(["1"] * 256),
                     "--target=cuda"]) == 1
    assert "no NVIDIA GPU to run on" in capsys.readouterr().err


def test_bad_target():
    with pytest.raises(runner.RunnerError, match="target must be 'cpu', 'cuda', 'rocm', 'cuda-emulator' or 'rocm-emulator'"):
        runner.compile(SOFTMAX, "f", target="tpu")


def has_rocm_gpu():
    try:
        return bool(gpu.rocm_devices())
    except gpu.NoDeviceError:
        return False


@pytest.mark.skipif(has_rocm_gpu(), reason="an AMD GPU is attached")
def test_no_amd_gpu_is_said():
    with pytest.raises(runner.RunnerError, match="target='rocm': no AMD GPU to run on: "):
        runner.compile(SOFTMAX, "f", target="rocm")


def stand_in_rocm(monkeypatch, runtime):
    """A gfx90a device, and MLIR's ROCm runtime wrappers at `runtime` (None:
    not installed)."""
    monkeypatch.setattr(gpu, "rocm_devices", lambda: [gpu.RocmDevice(0, "gfx90a")])
    real = runner._find_library
    monkeypatch.setattr(runner, "_find_library",
                        lambda name: runtime if name == "libmlir_rocm_runtime.so" else real(name))


def test_missing_rocm_runtime_is_said(monkeypatch):
    stand_in_rocm(monkeypatch, None)
    with pytest.raises(runner.RunnerError, match=r"libmlir_rocm_runtime.so\) are not installed"):
        runner.compile(SOFTMAX, "f", target="rocm")


@pytest.mark.skipif(any(gpu.llvm_tool(t) is None for t in ("opt", "llc", "ld.lld")),
                    reason="no LLVM with an AMDGPU backend (apt-get install llvm-22 lld-22)")
def test_rocm_compile_half(monkeypatch):
    """Everything but loading and running on an AMD GPU: fuel-to-rocdl for
    the device's chip, each kernel module a code object (an ELF) in its
    gpu.binary, LLVM host code with device buffers, and the engine gets
    MLIR's ROCm runtime wrappers."""
    stand_in_rocm(monkeypatch, "/stand-in/libmlir_rocm_runtime.so")
    monkeypatch.setattr(runner, "ExecutionEngine", _Engine)
    _Engine.made.clear()
    text = fused_text("rms_norm_last_dim", [np.zeros((8, 1024), np.float32)], {"eps": 1e-5})
    fn = runner.compile(text, "f", target="rocm")
    assert fn.target == "rocm"
    ((module, libs),) = _Engine.made
    assert "/stand-in/libmlir_rocm_runtime.so" in libs
    assert 'chip = "gfx90a"' in module and 'bin = "\\7FELF' in module and "offload" not in module
    assert "gpu.launch_func" in module and "mgpuMemAlloc" in module


class _Engine:
    """Stands in for the ExecutionEngine, which would load the CUDA runtime
    (and with it the driver)."""

    made = []

    def __init__(self, module, opt_level, shared_libs):
        _Engine.made.append((str(module), shared_libs))

    def initialize(self):
        """The module's constructors (which load the kernels) run here."""


def test_cuda_compile_half(monkeypatch):
    """Everything but loading and running: the module lowers in process
    through fuel-to-nvvm for the device's architecture, to LLVM host code
    with the kernels' PTX, and the engine gets the CUDA runtime."""
    monkeypatch.setattr(gpu, "cuda_devices", lambda: [gpu.CudaDevice(0, "stand-in", "sm_86")])
    monkeypatch.setattr(runner, "ExecutionEngine", _Engine)
    _Engine.made.clear()
    text = fused_text("rms_norm_last_dim", [np.zeros((8, 1024), np.float32)], {"eps": 1e-5})
    fn = runner.compile(text, "f", target="cuda")
    assert fn.target == "cuda"
    ((module, libs),) = _Engine.made
    assert any(lib.endswith("libmlir_cuda_runtime.so") for lib in libs)
    assert "gpu.launch_func" in module and ".target sm_86" in module
    assert "mgpuMemcpy" in module and "mgpuMemAlloc" in module


def test_cuda_compile_fits_the_tiles_to_the_devices_sms(monkeypatch):
    """The run API compiles for the SMs the driver reports: a 256 x 512
    output is 32 blocks of 64 x 64 (16 x 16 threads), enough for 8 SMs; for
    sm_90's 132 (what the chip alone gives) 128 blocks of 32 x 32 (8 x 8)."""
    monkeypatch.setattr(runner, "ExecutionEngine", _Engine)
    args = [np.zeros((256, 16), np.float32), np.zeros((16, 512), np.float32), np.zeros((512,), np.float32)]
    text = fused_text("fused_linear", args)
    for sms, threads in ((8, "16, 16"), (0, "8, 8")):
        device = gpu.CudaDevice(0, "stand-in", "sm_90", sms)
        monkeypatch.setattr(gpu, "cuda_devices", lambda: [device])
        _Engine.made.clear()
        runner.compile(text, "f", target="cuda")
        ((module, _),) = _Engine.made
        assert f".maxntid {threads}, 1" in module, sms


HAVE_AMDGPU_LLVM = all(gpu.llvm_tool(t) is not None for t in ("opt", "llc", "ld.lld"))


@pytest.mark.parametrize("target", ["cuda", "rocm"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_every_op_compiles_in_process(monkeypatch, name, target):
    """The run API's compile half for every op, in process as a run does:
    no pass may report an error, even one the pipeline recovers from (a
    vector access to workgroup memory converted by the wrong pass did, and
    failed every staged op)."""
    if target == "rocm":
        if not HAVE_AMDGPU_LLVM:
            pytest.skip("no LLVM with an AMDGPU backend (apt-get install llvm-22 lld-22)")
        stand_in_rocm(monkeypatch, "/stand-in/libmlir_rocm_runtime.so")
    monkeypatch.setattr(gpu, "cuda_devices", lambda: [gpu.CudaDevice(0, "stand-in", "sm_90", 132)])
    monkeypatch.setattr(runner, "ExecutionEngine", _Engine)
    make, params, _, _ = CASES[name]
    _Engine.made.clear()
    runner.compile(fused_text(name, make(np.float32), params), "f", target=target)
    ((module, _),) = _Engine.made
    assert "gpu.launch_func" in module
    assert (".target sm_90" in module) if target == "cuda" else ('bin = "\\7FELF' in module)


@pytest.mark.parametrize("name,shapes", [
    ("fused_linear", [(2, 64, 96), (96, 64), (64,)]),
    ("flash_attn", [(1, 2, 64, 32), (1, 2, 80, 32), (1, 2, 80, 32)]),
])
def test_staged_forms_compile_in_process(monkeypatch, name, shapes):
    """The forms that stage tiles in shared memory (their vector reads of
    workgroup memory), through the run API."""
    monkeypatch.setattr(gpu, "cuda_devices", lambda: [gpu.CudaDevice(0, "stand-in", "sm_80", 108)])
    monkeypatch.setattr(runner, "ExecutionEngine", _Engine)
    _Engine.made.clear()
    params = {"softmax_scale": 0.2} if name == "flash_attn" else {}
    runner.compile(fused_text(name, [np.zeros(s, np.float32) for s in shapes], params), "f",
                   target="cuda")
    ((module, _),) = _Engine.made
    assert "bar.sync" in module and "ld.shared.v4" in module


@pytest.mark.skipif(any(gpu.llvm_tool(t) is None for t in ("opt", "llc", "ld.lld")),
                    reason="no LLVM with an AMDGPU backend (apt-get install llvm-22 lld-22)")
def test_staged_form_compiles_in_process_for_rocm(monkeypatch):
    stand_in_rocm(monkeypatch, "/stand-in/libmlir_rocm_runtime.so")
    monkeypatch.setattr(runner, "ExecutionEngine", _Engine)
    _Engine.made.clear()
    shapes = [(2, 64, 96), (96, 64), (64,)]
    runner.compile(fused_text("fused_linear", [np.zeros(s, np.float32) for s in shapes]), "f",
                   target="rocm")
    ((module, _),) = _Engine.made
    assert 'bin = "\\7FELF' in module and "gpu.launch_func" in module


# Ops checked on the GPU at shapes that take each path: the row-wise and
# contraction schedules here, every op at the CPU suite's shapes besides
# (most of them decomposed there).
GPU_CASES = {
    "softmax_last_dim/wide-rows": ([(6, 1024)], {}),
    "rms_norm_last_dim/wide-rows": ([(3, 5, 2048)], {"eps": 1e-5}),
    "layer_norm_last_dim/wide-rows": ([(7, 768)], {"eps": 1e-5}),
    "fused_linear/register-tiles": ([(2, 64, 96), (96, 80), (80,)], {}),
    # Its tiles staged in shared memory (32 x 32 a block).
    "fused_linear/staged": ([(2, 64, 96), (96, 64), (64,)], {}),
}


# flash_attn's forms at decoding shapes (GpuSplitKeysAttention.cpp): one
# query and three, causal, GQA, keys off the blocks of 16; the heads of 128
# in f16.
SPLIT_KEYS = {"flash_attn/split-keys-1x3000": ((2, 8, 2, 1, 3000, 64, 64), np.float32),
              "flash_attn/split-keys-3x777": ((1, 4, 4, 3, 777, 32, 32), np.float32),
              "flash_attn/split-keys-1x2048-f16": ((1, 8, 2, 1, 2048, 128, 128), np.float16)}

# Every op in the narrow float types too: <op>/f16, <op>/bf16.
NARROW = {"f16": np.float16, **({"bf16": BF16} if BF16 is not None else {})}

NUMERICS = (sorted(GPU_CASES) + sorted(CASES) + [f"{op}/{t}" for t in NARROW for op in sorted(CASES)]
            + sorted(SPLIT_KEYS))


def test_numerics_cases_are_distinct():
    assert len(set(NUMERICS)) == len(NUMERICS)


def numerics_case(name):
    """Case `name` of NUMERICS: (op, inputs, params, the float64 numpy
    references (a tuple), the tolerance's dtype name): the CPU suite's
    inputs (in f32, or the type the name ends in), references
    (test_all_ops.py) and loose tolerances. Also what
    test/gpu/prepare.py bundles for a replay on a GPU."""
    op = name.split("/")[0]
    make, params, reference, _ = CASES[op]
    tol = "f32"
    if name in SPLIT_KEYS:
        shape, dtype = SPLIT_KEYS[name]
        inputs = list(attention_inputs(*shape, dtype))
        params = dict(softmax_scale=0.125, causal=True)
        want = attention_reference(*inputs, params)
        tol = "f16" if dtype == np.float16 else "f32"
    else:
        if name in GPU_CASES:
            shapes, params = GPU_CASES[name]
            inputs = [rand(s, np.float32, i) for i, s in enumerate(shapes)]
        else:
            tol = name.split("/")[1] if "/" in name else "f32"
            inputs = make(NARROW.get(tol, np.float32))
        want = reference(*(np.asarray(x, np.float64)
                           if np.asarray(x).dtype.kind == "f" or np.asarray(x).dtype == BF16 else x
                           for x in inputs))
    return op, inputs, params, want if isinstance(want, tuple) else (want,), tol


@pytest.mark.skipif(not HAVE_GPU, reason="no NVIDIA GPU attached")
@pytest.mark.parametrize("name", NUMERICS)
def test_numerics_on_the_gpu(name):
    """Against the float64 numpy references of the CPU suite
    (test_all_ops.py), with its tolerances; flash_attn's split-keys forms
    against the attention reference."""
    op, inputs, params, want, tol = numerics_case(name)
    got = runner.compile(fused_text(op, inputs, params), "f", target="cuda")(*inputs)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want):
        assert_close(g, w, tol, loose=True)
