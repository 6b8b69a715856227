"""The run API against stand-in GPU drivers (test/python/stand_in: a
libcuda.so.1 and a libamdhip64.so built here from C), so that what a real
GPU meets first runs on every machine: the device queries of
`gpu.cuda_devices()` and `gpu.rocm_devices()` (names, chips, multiprocessor
counts, and what is said without a GPU), and a compiled function's host
side on the CUDA driver through MLIR's CUDA runtime wrappers: its kernels'
modules loaded, its buffers allocated, copied and freed, its kernels
launched with sane sizes and device pointers (the stand-in runs no kernel;
the numerics need a GPU: test_gpu_run.py)."""

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from test_all_ops import CASES

CC = shutil.which("cc") or shutil.which("gcc")
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler to build the stand-in drivers")

STAND_IN = Path(__file__).resolve().parent / "stand_in"

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
    for library in ("libcuda.so.1", "libamdhip64.so"):
        source = STAND_IN / (library.split(".")[0] + ".c")
        subprocess.run([CC, "-shared", "-fPIC", "-o", str(root / library), str(source)],
                       check=True)
    # ROCm's enumerator lists the CPU agent (gfx000) first.
    tool = root / "bin" / "rocm_agent_enumerator"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\nprintf 'gfx000\\ngfx942\\ngfx90a\\n'\n")
    tool.chmod(0o755)
    return root


def python(drivers, script, *args, timeout=60, **env):
    """The JSON that `script` prints, run with the stand-in drivers."""
    environ = dict(os.environ, LD_LIBRARY_PATH=str(drivers),
                   PATH=f"{drivers / 'bin'}:{os.environ.get('PATH', '')}")
    environ.pop("FUEL_ROCM_CHIP", None)
    environ.update(env)
    out = subprocess.run([sys.executable, "-c", script, *args], env=environ,
                         capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr[-4000:]
    return json.loads(out.stdout.splitlines()[-1])


def devices(drivers, function, **env):
    return python(drivers, LIST, function, **env)


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


# Compiles and calls each op of test_all_ops.CASES named on the command line
# (f32) for target="cuda", the stand-in's log per op in <dir>/<op>.log;
# prints per op the results' shapes and dtypes, and softmax's values.
RUN = """
import json, os, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from numerics import fused_text
from test_all_ops import CASES
from fuel_mlir import runner
out = {}
for name in sys.argv[3:]:
    make, params, _, _ = CASES[name]
    args = make(np.float32)
    os.environ["STUB_CUDA_LOG"] = os.path.join(sys.argv[2], name + ".log")
    fn = runner.compile(fused_text(name, args, params), "f", target="cuda")
    results = fn(*args)
    results = list(results) if isinstance(results, tuple) else [results]
    out[name] = dict(results=[[list(r.shape), str(r.dtype)] for r in results],
                     values=sorted(set(float(v) for v in results[0].ravel()))[:4])
print(json.dumps(out))
"""

CASE_NAMES = sorted(CASES)


def stand_in_log(path):
    """The stand-in's log as (call, fields) pairs."""
    return [(line.split()[0], line.split()[1:]) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def every_op_run(drivers, tmp_path_factory):
    logs = tmp_path_factory.mktemp("logs")
    ran = python(drivers, RUN, str(Path(__file__).resolve().parent), str(logs), *CASE_NAMES,
                 timeout=600)
    return ran, logs


@pytest.mark.parametrize("name", CASE_NAMES)
def test_every_op_runs_its_host_side_on_the_cuda_driver(every_op_run, name):
    """Each op's host code, called through the run API on the stand-in
    CUDA driver: the kernels' PTX modules (for the device's sm_90) loaded
    before any launch, every kernel asked for by a name its module has,
    every launch's grid and block within CUDA's limits and given pointers
    into device memory (and no pointer parameter, .ptr in the PTX, into
    host memory: nf4_matmul's table of codes was), every result copied back
    from device memory, and every buffer freed."""
    ran, logs = every_op_run
    calls = stand_in_log(logs / f"{name}.log")
    assert [c for c in calls if c[0] == "error"] == []
    modules = [i for i, c in enumerate(calls) if c[0] == "module"]
    launches = [c[1] for c in calls if c[0] == "launch"]
    assert modules and launches
    assert all(calls[i][1][1] == "sm_90" for i in modules)
    assert modules[-1] < [i for i, c in enumerate(calls) if c[0] == "launch"][0]
    for fields in launches:
        at = dict(zip(fields[1::2], fields[2::2]))
        assert int(at["params"]) >= 2 and int(at["device"]) >= 1, fields
    allocated = sorted(int(c[1][0]) for c in calls if c[0] == "alloc")
    assert sorted(int(c[1][0]) for c in calls if c[0] == "free") == allocated
    back = [int(c[1][1]) for c in calls if c[0] == "copy" and c[1][0] == "d2h"]
    for shape, dtype in ran[name]["results"]:
        nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
        assert nbytes in back, (shape, dtype, back)


def test_a_result_comes_back_from_its_device_buffer(every_op_run):
    """The stand-in runs no kernel and fills new device memory with 1.0:
    softmax's result reads as ones, in the input's shape and dtype, so it
    is the copy of the device buffer the kernel writes."""
    ran, logs = every_op_run
    assert ran["softmax_last_dim"] == dict(results=[[[3, 4, 8], "float32"]], values=[1.0])
    calls = stand_in_log(logs / "softmax_last_dim.log")
    assert [c for c in calls if c[0] == "copy"] == [("copy", ["h2d", "384"]),
                                                   ("copy", ["d2h", "384"])]



REPO = Path(__file__).resolve().parents[2]
REPLAYED = ["softmax_last_dim/wide-rows", "fused_linear/staged", "flash_attn", "qmatmul",
            "softmax_last_dim/bf16"]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """test/gpu/prepare.py's bundle of a few cases: a row kernel, a staged
    contraction, attention's kernels, a quantized matmul."""
    folder = tmp_path_factory.mktemp("bundle") / "b"
    out = subprocess.run([sys.executable, str(REPO / "test" / "gpu" / "prepare.py"), str(folder),
                          "--cases", *REPLAYED], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-4000:]
    return folder


def replay(drivers, bundle, tmp_path, *args, **env):
    environ = dict(os.environ, LD_LIBRARY_PATH=str(drivers), **env)
    report = tmp_path / "report.json"
    out = subprocess.run([sys.executable, str(REPO / "test" / "gpu" / "replay.py"), str(bundle),
                          "--json", str(report), *args],
                         env=environ, capture_output=True, text=True, timeout=300)
    return out, json.loads(report.read_text()) if report.exists() else None


def test_prepared_bundle(bundle):
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert [c["name"] for c in manifest["cases"]] == REPLAYED
    assert manifest["cases"][4]["results"][0]["dtype"] == "bfloat16"
    staged = bundle / "fused_linear-staged"
    (ptx,) = staged.glob("module*.ptx")
    assert ".target sm_90" in ptx.read_text() and "bar.sync" in ptx.read_text()
    assert (staged / "reference0.npy").exists()
    assert manifest["cases"][1]["results"] == [dict(shape=[2, 64, 64], dtype="float32",
                                                    reference="reference0.npy", rtol=1e-4, atol=1e-5)]


def test_replay_makes_the_device_calls_of_the_run_api(drivers, bundle, tmp_path):
    """replay.py, on the stand-in, makes the calls the run API's host code
    made while the bundle was traced, in order, with the same sizes,
    grids, blocks and parameters (its frees come at the end); the results
    (the stand-in ran no kernel: ones) are off their references, and it
    says so."""
    again = tmp_path / "again"
    again.mkdir()
    out, report = replay(drivers, bundle, tmp_path, "--rounds", "0", STUB_CUDA_TRACE=str(again))
    assert out.returncode == 1
    assert [r["case"] for r in report] == REPLAYED
    assert all(not r["ok"] and "error" not in r and r["excess"] > 0 for r in report)
    traced = []
    for name in REPLAYED:
        traced += (bundle / name.replace("/", "-") / "trace.txt").read_text().splitlines()

    def calls(lines):
        return [line for line in lines if not line.startswith("free ")]

    replayed = (again / "trace.txt").read_text().splitlines()
    assert calls(replayed) == calls(traced)
    assert sum(line.startswith("launch ") for line in traced) == sum(r["kernels"] for r in report)
    assert sorted(line for line in replayed if line.startswith("free ")) == \
        sorted(line for line in traced if line.startswith("free "))


def test_replay_checks_and_times_a_result_that_matches(drivers, bundle, tmp_path):
    """A case whose reference is what the stand-in gives back (ones) is ok
    and timed: its launches made once more per round, and one to warm up.
    A bf16 result is read as such: the stand-in's f32 ones are the bf16
    pairs 0, 1."""
    cases = [bundle / "softmax_last_dim-wide-rows", bundle / "softmax_last_dim-bf16"]
    saved = [np.load(case / "reference0.npy") for case in cases]
    np.save(cases[0] / "reference0.npy", np.ones_like(saved[0]))
    np.save(cases[1] / "reference0.npy", np.resize([0.0, 1.0], saved[1].shape))
    try:
        log = tmp_path / "calls.log"
        out, report = replay(drivers, bundle, tmp_path, "--rounds", "3", STUB_CUDA_LOG=str(log))
    finally:
        for case, reference in zip(cases, saved):
            np.save(case / "reference0.npy", reference)
    assert report[0]["ok"] and report[0]["median_ms"] == 0.0, report[0]
    assert report[4]["ok"] and report[4]["case"] == "softmax_last_dim/bf16", report[4]
    assert "softmax_last_dim/wide-rows" in out.stdout and "2 of 5 cases ok" in out.stdout
    launches = [line for line in log.read_text().splitlines() if line.startswith("launch ")]
    kernels = report[0]["kernels"]
    assert kernels >= 1 and launches[:kernels] * 5 == launches[:5 * kernels]


def test_replay_says_a_driver_error(drivers, bundle, tmp_path):
    """A driver call that fails ends the case with the call and the
    driver's error named."""
    broken = tmp_path / "broken"
    shutil.copytree(bundle, broken)
    trace = broken / "fused_linear-staged" / "trace.txt"
    # A kernel its module does not have.
    trace.write_text(re.sub(r"^(launch \d+ )f_kernel", r"\1no_such_kernel", trace.read_text(),
                            count=1, flags=re.M))
    out, report = replay(drivers, broken, tmp_path, "--rounds", "0")
    staged = report[1]
    assert out.returncode == 1 and not staged["ok"]
    assert staged["error"] == "cuModuleGetFunction failed: CUDA_ERROR_STAND_IN (500)"
    assert "fused_linear/staged" in out.stdout and "cuModuleGetFunction failed" in out.stdout


@pytest.fixture(scope="module")
def bench_bundle(tmp_path_factory):
    """prepare.py --bench for a row op PyTorch has and paged attention
    (whose block tables must travel)."""
    folder = tmp_path_factory.mktemp("bench") / "b"
    out = subprocess.run([sys.executable, str(REPO / "test" / "gpu" / "prepare.py"), str(folder),
                          "--bench", "--cases", "softmax_last_dim", "paged_attn"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-4000:]
    return folder


def test_bench_bundle_carries_only_what_it_cannot_make(bench_bundle):
    manifest = json.loads((bench_bundle / "manifest.json").read_text())
    assert manifest["kind"] == "bench"
    softmax, paged = manifest["cases"]
    assert softmax["torch"] == "softmax_last_dim" and paged["torch"] is None
    assert softmax["inputs"] == [dict(shape=[4096, 1024], dtype="float32", make="normal")]
    assert [i["make"] for i in paged["inputs"]] == ["normal", "normal", "normal", "blob", "blob"]
    # The 16 MiB of softmax's input is not in the bundle; the tables are.
    assert not list((bench_bundle / softmax["folder"]).glob("blob*"))
    assert sum(f.stat().st_size for f in bench_bundle.rglob("*")) < 1 << 20
    for spec in paged["inputs"][3:]:
        assert (bench_bundle / paged["folder"] / f"blob{spec['blob']}.bin").exists()


def test_bench_replay_times_the_traced_launches(drivers, bench_bundle, tmp_path):
    again = tmp_path / "again"
    again.mkdir()
    out, report = replay(drivers, bench_bundle, tmp_path, "--rounds", "2",
                         STUB_CUDA_TRACE=str(again))
    assert out.returncode == 0, out.stderr[-4000:]
    assert [(r["case"], r["ok"]) for r in report] == [("softmax_last_dim", True), ("paged_attn", True)]
    assert all(r["median_ms"]["fuel"] == 0.0 and r["kernels"] >= 1 for r in report)
    traced = []
    for case in json.loads((bench_bundle / "manifest.json").read_text())["cases"]:
        traced += (bench_bundle / case["folder"] / "trace.txt").read_text().splitlines()
    replayed = (again / "trace.txt").read_text().splitlines()

    def calls(lines):
        return [line for line in lines if not line.startswith(("free ", "launch "))]

    def launches(lines):
        return Counter(line for line in lines if line.startswith("launch "))

    # The same copies (of inputs made there), and each launch once more
    # for each timing round and the one that warms up.
    assert calls(replayed) == calls(traced)
    assert launches(replayed) == Counter({k: 4 * n for k, n in launches(traced).items()})


def test_prepare_stops_at_a_call_the_stand_in_refuses(drivers, tmp_path):
    """What the stand-in refuses (a GPU would too) fails the bundle rather
    than leaving a trace that cannot replay."""
    said = python(drivers, f"""
import ctypes, json, sys
from pathlib import Path
sys.path.insert(0, {str(REPO / "test" / "gpu")!r})
import prepare
try:
    prepare.traced_call(Path(sys.argv[1]),
                        lambda: ctypes.CDLL("libcuda.so.1").cuMemFree_v2(ctypes.c_uint64(4096)))
except SystemExit as e:
    print(json.dumps(str(e)))
""", str(tmp_path))
    assert said == f"{tmp_path.name}: the stand-in driver refused: error free of memory not allocated"
    assert not (tmp_path / "calls.log").exists()
