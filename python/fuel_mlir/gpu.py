"""Compiling for GPUs: `fuel-to-nvvm` and each kernel's PTX, with what
`ptxas` says of it (registers, shared memory, spills); `fuel-to-rocdl` and
each kernel's device LLVM IR, made into an AMDGPU code object by LLVM's
`opt`, `llc` and `ld.lld` (Debian's llvm-22 and lld-22).

    from fuel_mlir import gpu
    for k in gpu.compile_nvvm(text, chip="sm_90"):
        print(k.module, gpu.ptxas(k.ptx, "sm_90"))
    for k in gpu.compile_rocdl(text, chip="gfx942"):
        obj = gpu.amdgpu_code_object(k.llvm_ir, "gfx942")
        print(k.module, obj.vgprs, obj.lds_bytes)

The PTX comes from the LLVM in the MLIR wheel; libdevice (for `exp`, `log`,
...) and `ptxas` come from a CUDA toolkit: the one `CUDA_ROOT`, `CUDA_HOME`
or `CUDA_PATH` names, else the `nvidia-cuda-nvcc-cu12` wheel's, else
/usr/local/cuda.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .tools import _tool_path


class CompileError(RuntimeError):
    """fuel-opt rejected the module or the pipeline's options."""


class PtxasError(RuntimeError):
    """ptxas rejected the PTX."""


@dataclass(frozen=True)
class Kernel:
    """One GPU module of a compiled function: its kernels' PTX."""

    module: str
    entries: tuple[str, ...]
    ptx: str


@dataclass(frozen=True)
class PtxasReport:
    """What ptxas says of one kernel (an entry function)."""

    entry: str
    registers: int
    shared_bytes: int
    stack_bytes: int
    spill_stores: int
    spill_loads: int
    barriers: int


@dataclass(frozen=True)
class RocdlKernel:
    """One GPU module compiled for an AMD GPU: its device LLVM IR."""

    module: str
    entries: tuple[str, ...]
    llvm_ir: str


@dataclass(frozen=True)
class CodeObject:
    """An AMDGPU code object (an ELF shared object, .hsaco) and what the
    backend says of its kernels (the largest over them)."""

    data: bytes
    vgprs: int
    sgprs: int
    lds_bytes: int
    scratch_bytes: int
    wavefront_size: int


class ToolError(RuntimeError):
    """opt, llc or ld.lld rejected the device code."""


class NoDeviceError(RuntimeError):
    """No GPU (NVIDIA or AMD) can run the code here; the message says why."""


@dataclass(frozen=True)
class CudaDevice:
    """An NVIDIA GPU the CUDA driver sees."""

    index: int
    name: str
    chip: str  # sm_XY, from the compute capability
    compute_units: int = 0  # its multiprocessors (SMs); 0: unknown


def cuda_devices() -> list[CudaDevice]:
    """The NVIDIA GPUs the CUDA driver (libcuda.so.1) sees. Raises
    NoDeviceError, saying why, when there is no driver or no device."""
    import ctypes

    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        raise NoDeviceError(f"no CUDA driver (libcuda.so.1 cannot be loaded: {e})") from None
    status = cuda.cuInit(0)
    if status != 0:
        raise NoDeviceError(f"the CUDA driver does not initialize (cuInit returned {status}: "
                            "no GPU, or a driver that does not match it)")
    count = ctypes.c_int(0)
    if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        raise NoDeviceError("the CUDA driver sees no GPU")
    devices = []
    for i in range(count.value):
        handle = ctypes.c_int(0)
        cuda.cuDeviceGet(ctypes.byref(handle), i)
        name = ctypes.create_string_buffer(256)
        cuda.cuDeviceGetName(name, 256, handle)
        major, minor = ctypes.c_int(0), ctypes.c_int(0)
        # CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR / _MINOR
        cuda.cuDeviceGetAttribute(ctypes.byref(major), 75, handle)
        cuda.cuDeviceGetAttribute(ctypes.byref(minor), 76, handle)
        # CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
        sms = ctypes.c_int(0)
        cuda.cuDeviceGetAttribute(ctypes.byref(sms), 16, handle)
        devices.append(CudaDevice(i, name.value.decode(errors="replace"),
                                  f"sm_{major.value}{minor.value}", sms.value))
    return devices


@dataclass(frozen=True)
class RocmDevice:
    """An AMD GPU the HIP runtime sees."""

    index: int
    chip: str  # gfxNNN
    compute_units: int = 0  # its compute units (CUs); 0: unknown (from the chip)


def rocm_devices() -> list[RocmDevice]:
    """The AMD GPUs the HIP runtime (libamdhip64.so) sees, with their chips
    as ROCm's `rocm_agent_enumerator` names them (or, for every device,
    FUEL_ROCM_CHIP). Raises NoDeviceError, saying why, when there is no
    runtime, no device or no way to tell the chip."""
    import ctypes

    try:
        hip = ctypes.CDLL("libamdhip64.so")
    except OSError as e:
        raise NoDeviceError(f"no HIP runtime (libamdhip64.so cannot be loaded: {e})") from None
    count = ctypes.c_int(0)
    if hip.hipGetDeviceCount(ctypes.byref(count)) != 0 or count.value == 0:
        raise NoDeviceError("the HIP runtime sees no GPU")
    units = []
    for i in range(count.value):
        # hipDeviceAttributeMultiprocessorCount (63 since HIP 5.0's
        # hipDeviceAttribute_t); 0 when the runtime declines it.
        cus = ctypes.c_int(0)
        if hip.hipDeviceGetAttribute(ctypes.byref(cus), 63, i) != 0:
            cus.value = 0
        units.append(max(cus.value, 0))
    chip = os.environ.get("FUEL_ROCM_CHIP")
    if chip:
        return [RocmDevice(i, chip, units[i]) for i in range(count.value)]
    tool = shutil.which("rocm_agent_enumerator") or "/opt/rocm/bin/rocm_agent_enumerator"
    try:
        listed = subprocess.run([tool], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise NoDeviceError(f"cannot tell the GPUs' chips ({e}); set FUEL_ROCM_CHIP") from None
    chips = [c for c in listed.split() if c != "gfx000"]  # gfx000: the CPU agent
    if len(chips) < count.value:
        raise NoDeviceError(f"rocm_agent_enumerator names {len(chips)} GPUs, HIP sees "
                            f"{count.value}; set FUEL_ROCM_CHIP")
    return [RocmDevice(i, c, units[i]) for i, c in enumerate(chips[:count.value])]


def _has_libdevice(root: Path) -> bool:
    return (root / "nvvm" / "libdevice").is_dir()


def cuda_toolkit() -> Path | None:
    """The root of a CUDA toolkit with libdevice, or None."""
    for var in ("CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var) and _has_libdevice(Path(os.environ[var])):
            return Path(os.environ[var])
    try:
        import nvidia.cuda_nvcc as nvcc  # the nvidia-cuda-nvcc-cu12 wheel
        for root in map(Path, nvcc.__path__):
            if _has_libdevice(root):
                return root
    except ImportError:
        pass
    default = Path("/usr/local/cuda")
    return default if _has_libdevice(default) else None


def ptxas_path() -> str | None:
    """`ptxas` on PATH or in the toolkit, or None."""
    found = shutil.which("ptxas")
    if found:
        return found
    toolkit = cuda_toolkit()
    if toolkit and (toolkit / "bin" / "ptxas").is_file():
        return str(toolkit / "bin" / "ptxas")
    return None


def _fuel_opt() -> str:
    exe = os.environ.get("FUEL_OPT")
    if exe:
        return exe
    packaged = _tool_path("fuel-opt")
    if packaged.is_file():
        return str(packaged)
    found = shutil.which("fuel-opt")
    if not found:
        raise CompileError("fuel-opt is not installed (nor named by FUEL_OPT)")
    return found


_BINARY = re.compile(r'gpu\.binary @(\S+)\s.*?assembly = "((?:[^"\\]|\\.)*)"', re.S)
_ENTRY = re.compile(r"\.entry\s+(\w+)\(")


def _unescape(text: str) -> str:
    """An MLIR string attribute's text: bytes escaped as \\XX."""
    return re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), text)


def _check_compiled(result: subprocess.CompletedProcess) -> None:
    """Raises CompileError where fuel-opt failed or reported an error, even
    one its pipeline recovered from."""
    if result.returncode != 0 or "error:" in result.stderr:
        raise CompileError(result.stderr.strip())


def nvvm_pipeline(chip: str = "sm_80", features: str = "+ptx80", opt_level: int = 3,
                  max_threads: int = 256, codegen: bool = True,
                  toolkit: str | os.PathLike | None = None, compute_units: int = 0) -> str:
    """The `--fuel-to-nvvm=...` option of fuel-opt for these settings
    (`compute_units`: the GPU's SMs; 0: from the chip)."""
    toolkit = toolkit if toolkit is not None else cuda_toolkit()
    options = [f"chip={chip}", f"features={features}", f"opt-level={opt_level}",
               f"max-threads={max_threads}", f"codegen={'true' if codegen else 'false'}",
               f"compute-units={compute_units}", "format=isa"]
    if toolkit:
        options.append(f"toolkit={toolkit}")
    return "--fuel-to-nvvm=" + " ".join(options)


def compile_nvvm(text: str, chip: str = "sm_80", features: str = "+ptx80",
                 opt_level: int = 3, max_threads: int = 256, codegen: bool = True,
                 toolkit: str | os.PathLike | None = None,
                 compute_units: int = 0) -> list[Kernel]:
    """Compiles a module (fuel and linalg on tensors) with fuel-to-nvvm;
    returns the PTX of each GPU module, in the order of the module."""
    result = subprocess.run(
        [_fuel_opt(), nvvm_pipeline(chip, features, opt_level, max_threads, codegen, toolkit,
                                    compute_units)],
        input=text, capture_output=True, text=True)
    _check_compiled(result)
    kernels = []
    for match in _BINARY.finditer(result.stdout):
        ptx = _unescape(match.group(2))
        kernels.append(Kernel(match.group(1), tuple(_ENTRY.findall(ptx)), ptx))
    return kernels


def ptxas(ptx: str, chip: str = "sm_80") -> list[PtxasReport]:
    """Assembles `ptx` for `chip` with ptxas; returns its report per entry.
    Raises PtxasError when ptxas rejects it, FileNotFoundError when there is
    no ptxas."""
    exe = ptxas_path()
    if not exe:
        raise FileNotFoundError("ptxas: no CUDA toolkit (install nvidia-cuda-nvcc-cu12 or set CUDA_HOME)")
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "kernel.ptx"
        source.write_text(ptx)
        result = subprocess.run([exe, f"-arch={chip}", "-v", str(source), "-o", str(Path(tmp) / "kernel.cubin")],
                                capture_output=True, text=True)
    if result.returncode != 0:
        raise PtxasError(result.stderr.strip())
    return _parse_ptxas(result.stderr)


_OFFLOAD = re.compile(r'gpu\.binary @(\S+)\s.*?offload = "((?:[^"\\]|\\.)*)"', re.S)


def rocdl_pipeline(chip: str = "gfx942", wave64: bool = True, opt_level: int = 3,
                   max_threads: int = 256, codegen: bool = True, compute_units: int = 0) -> str:
    """The `--fuel-to-rocdl=...` option of fuel-opt for these settings
    (`compute_units`: the GPU's compute units; 0: from the chip)."""
    return (f"--fuel-to-rocdl=chip={chip} wave64={'true' if wave64 else 'false'} "
            f"opt-level={opt_level} max-threads={max_threads} codegen={'true' if codegen else 'false'} "
            f"compute-units={compute_units}")


def compile_rocdl(text: str, chip: str = "gfx942", wave64: bool = True, opt_level: int = 3,
                  max_threads: int = 256, codegen: bool = True,
                  compute_units: int = 0) -> list[RocdlKernel]:
    """Compiles a module with fuel-to-rocdl; returns each GPU module's device
    LLVM IR (for `amdgpu_code_object`)."""
    result = subprocess.run(
        [_fuel_opt(), rocdl_pipeline(chip, wave64, opt_level, max_threads, codegen,
                                     compute_units)],
        input=text, capture_output=True, text=True)
    _check_compiled(result)
    kernels = []
    for match in _OFFLOAD.finditer(result.stdout):
        ir = _unescape(match.group(2))
        entries = tuple(re.findall(r"define amdgpu_kernel void @(\w+)\(", ir))
        kernels.append(RocdlKernel(match.group(1), entries, ir))
    return kernels


_ROCDL_OBJECT = re.compile(r'(#gpu\.object<#rocdl\.target<[^>]*>), offload = "((?:[^"\\]|\\.)*)">')


def _escape(data: bytes) -> str:
    """`data` as the text of an MLIR string attribute."""
    return "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:02X}" for b in data)


def embed_code_objects(text: str, chip: str = "gfx942", opt_level: int = 3) -> str:
    """`text` (a module after fuel-to-rocdl) with each GPU module's device
    LLVM IR replaced by its code object (`amdgpu_code_object`): gpu.binary
    objects in the `bin` format, which the host code's module load passes to
    MLIR's ROCm runtime wrappers (mgpuModuleLoad, hipModuleLoadData)."""
    def compiled(match):
        obj = amdgpu_code_object(_unescape(match.group(2)), chip, opt_level)
        return f'{match.group(1)}, bin = "{_escape(obj.data)}">'

    return _ROCDL_OBJECT.sub(compiled, text)


def rocm_module(text: str, chip: str = "gfx942", wave64: bool = True, opt_level: int = 3,
                max_threads: int = 256, codegen: bool = True, compute_units: int = 0) -> str:
    """Compiles a module with fuel-to-rocdl and embeds each GPU module's
    code object (`embed_code_objects`): host code in the LLVM dialect that
    launches the kernels through MLIR's ROCm runtime wrappers
    (libmlir_rocm_runtime.so), for an ExecutionEngine or mlir-translate."""
    result = subprocess.run(
        [_fuel_opt(), rocdl_pipeline(chip, wave64, opt_level, max_threads, codegen,
                                     compute_units)],
        input=text, capture_output=True, text=True)
    _check_compiled(result)
    return embed_code_objects(result.stdout, chip, opt_level)


def llvm_tool(name: str) -> str | None:
    """LLVM's `name` (opt, llc, ld.lld) with an AMDGPU backend: Debian's
    name-22, or a plain one on PATH that lists amdgcn among its targets."""
    versioned = shutil.which(f"{name}-22")
    if versioned:
        return versioned
    plain = shutil.which(name)
    if plain and name != "ld.lld":
        probe = subprocess.run([plain, "--version"], capture_output=True, text=True)
        if "amdgcn" not in probe.stdout:
            return None
    return plain


def amdgpu_code_object(llvm_ir: str, chip: str = "gfx942", opt_level: int = 3) -> CodeObject:
    """Optimizes the device LLVM IR (`opt`), compiles it for `chip` (`llc`,
    amdgcn-amd-amdhsa) and links it into a code object (`ld.lld -shared`).
    Raises ToolError when one of them rejects it or the IR calls the ROCm
    device library (OCML: f64 math), FileNotFoundError when one is missing
    (apt-get install llvm-22 lld-22)."""
    library = sorted(set(re.findall(r"^declare .*?@(__oc[km]l_\w+)\(", llvm_ir, re.M)))
    if library:
        raise ToolError(f"the kernels call {', '.join(library)} of the ROCm device library, which "
                        "this code object would not link (its loading would fail): compute in f32")
    tools = {name: llvm_tool(name) for name in ("opt", "llc", "ld.lld")}
    missing = [name for name, path in tools.items() if not path]
    if missing:
        raise FileNotFoundError(f"{', '.join(missing)} with an AMDGPU backend not found "
                                "(apt-get install llvm-22 lld-22)")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "k.ll").write_text(llvm_ir)
        steps = [
            [tools["opt"], f"-O{opt_level}", str(tmp / "k.ll"), "-o", str(tmp / "k.bc")],
            [tools["llc"], f"-O{opt_level}", "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={chip}",
             str(tmp / "k.bc"), "-o", str(tmp / "k.s")],
            [tools["llc"], f"-O{opt_level}", "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={chip}",
             "-filetype=obj", str(tmp / "k.bc"), "-o", str(tmp / "k.o")],
            [tools["ld.lld"], "-shared", str(tmp / "k.o"), "-o", str(tmp / "k.hsaco")],
        ]
        for step in steps:
            result = subprocess.run(step, capture_output=True, text=True)
            if result.returncode != 0:
                raise ToolError(f"{Path(step[0]).name}: {result.stderr.strip()}")
        asm = (tmp / "k.s").read_text()
        data = (tmp / "k.hsaco").read_bytes()

    def largest(key: str) -> int:
        return max((int(v) for v in re.findall(rf"^\s+\.{key}:\s+(\d+)", asm, re.M)), default=0)

    return CodeObject(data, largest("vgpr_count"), largest("sgpr_count"),
                      largest("group_segment_fixed_size"), largest("private_segment_fixed_size"),
                      largest("wavefront_size"))


def _parse_ptxas(log: str) -> list[PtxasReport]:
    reports = []
    for block in re.split(r"(?=ptxas info\s+: Compiling entry function)", log):
        name = re.search(r"Compiling entry function '(\w+)'", block)
        if not name:
            continue

        def number(pattern: str) -> int:
            m = re.search(pattern, block)
            return int(m.group(1)) if m else 0

        reports.append(PtxasReport(
            entry=name.group(1),
            registers=number(r"Used (\d+) registers"),
            shared_bytes=number(r"(\d+) bytes smem"),
            stack_bytes=number(r"(\d+) bytes stack frame"),
            spill_stores=number(r"(\d+) bytes spill stores"),
            spill_loads=number(r"(\d+) bytes spill loads"),
            barriers=number(r"used (\d+) barriers")))
    return reports
