"""Compiling for NVIDIA GPUs: `fuel-to-nvvm`, each kernel's PTX, and what
`ptxas` says of it (registers, shared memory, spills).

    from fuel_mlir import gpu
    kernels = gpu.compile_nvvm(text, chip="sm_90")
    for k in kernels:
        print(k.name, gpu.ptxas(k.ptx, "sm_90"))

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


def nvvm_pipeline(chip: str = "sm_80", features: str = "+ptx80", opt_level: int = 3,
                  max_threads: int = 256, codegen: bool = True,
                  toolkit: str | os.PathLike | None = None) -> str:
    """The `--fuel-to-nvvm=...` option of fuel-opt for these settings."""
    toolkit = toolkit if toolkit is not None else cuda_toolkit()
    options = [f"chip={chip}", f"features={features}", f"opt-level={opt_level}",
               f"max-threads={max_threads}", f"codegen={'true' if codegen else 'false'}",
               "format=isa"]
    if toolkit:
        options.append(f"toolkit={toolkit}")
    return "--fuel-to-nvvm=" + " ".join(options)


def compile_nvvm(text: str, chip: str = "sm_80", features: str = "+ptx80",
                 opt_level: int = 3, max_threads: int = 256, codegen: bool = True,
                 toolkit: str | os.PathLike | None = None) -> list[Kernel]:
    """Compiles a module (fuel and linalg on tensors) with fuel-to-nvvm;
    returns the PTX of each GPU module, in the order of the module."""
    result = subprocess.run(
        [_fuel_opt(), nvvm_pipeline(chip, features, opt_level, max_threads, codegen, toolkit)],
        input=text, capture_output=True, text=True)
    if result.returncode != 0:
        raise CompileError(result.stderr.strip())
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
