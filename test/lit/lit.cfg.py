# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "FUEL"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py", ".td"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.fuel_obj_root, "test", "lit")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%fuel_src", config.fuel_source_dir))
config.substitutions.append(("%fuel_obj", config.fuel_obj_root))
# What fuel-tblgen needs to read FusedOps.td and its includes.
config.substitutions.append(
    ("%fuel_td_includes",
     " ".join("-I" + d for d in
              [os.path.join(config.fuel_source_dir, "include")] +
              config.mlir_include_dirs.split(";") if d)))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.fuel_tools_dir, config.llvm_tools_dir, config.mlir_tools_dir]
tools = [
    "fuel-opt",
    "fuel-tblgen",
    "split-file",
    # Machine code of the CPU schedules (Codegen/*-machine-code.mlir).
    "mlir-translate",
    "opt",
    "llc",
    ToolSubst("%PYTHON", config.python_executable, unresolved="ignore"),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)

if config.enable_python:
    config.available_features.add("python")
    llvm_config.with_environment("PYTHONPATH", [config.fuel_python_root],
                                 append_path=True)
else:
    config.excludes.append("python")

# A CUDA toolkit (libdevice, ptxas) for the GPU pipelines: the environment's,
# else the nvidia-cuda-nvcc-cu12 wheel's, else /usr/local/cuda. Without one,
# %cuda_toolkit is empty (fuel-to-nvvm looks for it itself) and the checks
# that need ptxas are skipped.
import shutil
import subprocess


def _find_cuda_toolkit():
    def has_libdevice(root):
        return root and os.path.isdir(os.path.join(root, "nvvm", "libdevice"))

    for var in ("CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"):
        if has_libdevice(os.environ.get(var)):
            return os.environ[var]
    probe = subprocess.run(
        [config.python_executable, "-c",
         "import nvidia.cuda_nvcc as m; print(list(m.__path__)[0])"],
        capture_output=True, text=True)
    if probe.returncode == 0 and has_libdevice(probe.stdout.strip()):
        return probe.stdout.strip()
    return "/usr/local/cuda" if has_libdevice("/usr/local/cuda") else ""


cuda_toolkit = _find_cuda_toolkit()
config.substitutions.append(("%cuda_toolkit", cuda_toolkit))
ptxas = shutil.which("ptxas") or (
    os.path.join(cuda_toolkit, "bin", "ptxas")
    if cuda_toolkit and os.path.isfile(os.path.join(cuda_toolkit, "bin", "ptxas"))
    else None)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))

# LLVM's tools with an AMDGPU backend (Debian's llvm-22 and lld-22) finish
# fuel-to-rocdl's device IR into code objects.
if all(shutil.which(t) for t in ("opt-22", "llc-22", "ld.lld-22")):
    config.available_features.add("llc-amdgpu")
