"""How the run API finds GPUs: `gpu.cuda_devices()` and `gpu.rocm_devices()`
asked of stand-in driver libraries (libcuda.so.1, libamdhip64.so built here
from a few lines of C), so the ctypes calls a real GPU will meet first run
on every machine: the names, chips and multiprocessor counts read, and what
is said when a driver has no GPU."""

import json
import os
import shutil
import subprocess
import sys

import pytest

CC = shutil.which("cc") or shutil.which("gcc")
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler to build the stand-in drivers")

# Two GPUs: an H100 (sm_90, 132 SMs) and an A10 (sm_86, 72 SMs). The
# attributes are CUDA's CU_DEVICE_ATTRIBUTE_* numbers; any other is declined.
CUDA = r"""
#include <stdio.h>
#include <stdlib.h>
int cuInit(unsigned flags) {
  const char *s = getenv("STUB_CUINIT");
  return s ? atoi(s) : 0;
}
int cuDeviceGetCount(int *count) {
  const char *s = getenv("STUB_COUNT");
  *count = s ? atoi(s) : 2;
  return 0;
}
int cuDeviceGet(int *device, int ordinal) { *device = 100 + ordinal; return 0; }
int cuDeviceGetName(char *name, int len, int device) {
  snprintf(name, len, "%s", device == 100 ? "Stand-in H100" : "Stand-in A10");
  return 0;
}
int cuDeviceGetAttribute(int *value, int attribute, int device) {
  int first = device == 100;
  switch (attribute) {
  case 75: *value = first ? 9 : 8; return 0;    /* compute capability major */
  case 76: *value = first ? 0 : 6; return 0;    /* minor */
  case 16: *value = first ? 132 : 72; return 0; /* multiprocessor count */
  }
  return 1;
}
"""

# Two GPUs: the first has 304 compute units (hipDeviceAttribute_t's
# hipDeviceAttributeMultiprocessorCount, 63); the second declines the query.
HIP = r"""
#include <stdlib.h>
int hipGetDeviceCount(int *count) {
  const char *s = getenv("STUB_COUNT");
  *count = s ? atoi(s) : 2;
  return 0;
}
int hipDeviceGetAttribute(int *value, int attribute, int device) {
  if (attribute == 63 && device == 0) { *value = 304; return 0; }
  return 1;
}
"""

LIST = """
import json, sys
from fuel_mlir import gpu
try:
    devices = getattr(gpu, sys.argv[1])()
except gpu.NoDeviceError as e:
    print(json.dumps({"error": str(e)}))
else:
    print(json.dumps([d.__dict__ for d in devices]))
"""


@pytest.fixture(scope="module")
def drivers(tmp_path_factory):
    root = tmp_path_factory.mktemp("drivers")
    for source, library in [(CUDA, "libcuda.so.1"), (HIP, "libamdhip64.so")]:
        c = root / (library.split(".")[0] + ".c")
        c.write_text(source)
        subprocess.run([CC, "-shared", "-fPIC", "-o", str(root / library), str(c)], check=True)
    # ROCm's enumerator lists the CPU agent (gfx000) first.
    tool = root / "bin" / "rocm_agent_enumerator"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\nprintf 'gfx000\\ngfx942\\ngfx90a\\n'\n")
    tool.chmod(0o755)
    return root


def devices(drivers, function, **env):
    environ = dict(os.environ, LD_LIBRARY_PATH=str(drivers),
                   PATH=f"{drivers / 'bin'}:{os.environ.get('PATH', '')}")
    environ.pop("FUEL_ROCM_CHIP", None)
    environ.update(env)
    out = subprocess.run([sys.executable, "-c", LIST, function], env=environ,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_cuda_devices_read_from_the_driver(drivers):
    assert devices(drivers, "cuda_devices") == [
        dict(index=0, name="Stand-in H100", chip="sm_90", compute_units=132),
        dict(index=1, name="Stand-in A10", chip="sm_86", compute_units=72)]


def test_cuda_driver_that_does_not_initialize(drivers):
    said = devices(drivers, "cuda_devices", STUB_CUINIT="100")["error"]
    assert said.startswith("the CUDA driver does not initialize (cuInit returned 100")


def test_cuda_driver_without_gpus(drivers):
    assert devices(drivers, "cuda_devices", STUB_COUNT="0") == {
        "error": "the CUDA driver sees no GPU"}


def test_rocm_devices_read_from_hip_and_the_enumerator(drivers):
    # A compute-unit count HIP declines is 0: the pipeline takes the chip's.
    assert devices(drivers, "rocm_devices") == [
        dict(index=0, chip="gfx942", compute_units=304),
        dict(index=1, chip="gfx90a", compute_units=0)]


def test_rocm_chip_from_the_environment(drivers):
    assert devices(drivers, "rocm_devices", FUEL_ROCM_CHIP="gfx90a") == [
        dict(index=0, chip="gfx90a", compute_units=304),
        dict(index=1, chip="gfx90a", compute_units=0)]


def test_rocm_more_gpus_than_the_enumerator_names(drivers):
    said = devices(drivers, "rocm_devices", STUB_COUNT="3")["error"]
    assert said == "rocm_agent_enumerator names 2 GPUs, HIP sees 3; set FUEL_ROCM_CHIP"


def test_rocm_runtime_without_gpus(drivers):
    assert devices(drivers, "rocm_devices", STUB_COUNT="0") == {
        "error": "the HIP runtime sees no GPU"}
