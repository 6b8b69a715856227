"""Replays traced GPU work on an NVIDIA GPU with nothing but the CUDA
driver, numpy and this file: for a machine with a GPU but without the MLIR
toolchain that builds fuel-mlir (see prepare.py, which makes the bundle).

For each case of a numerics bundle it loads the kernels' PTX (the driver
compiles it for the GPU), allocates, copies the inputs in, launches every
kernel with the grid, block and parameters the run API's host code gave
them, copies the results back and compares them with the float64 numpy
references; then it times the case's launches alone (CUDA events, the
median of --rounds). A bench bundle (prepare.py --bench) is timed only,
its inputs made here, interleaved with PyTorch CUDA on the same inputs
where PyTorch has the op (bench/torch_cuda.py): medians and PyTorch's time
over fuel-mlir's. It writes a JSON report and prints a line per case.

    python3 test/gpu/replay.py BUNDLE [--rounds 20] [--json report.json]

Exits 1 if a case fails (a driver error, or a result off its reference).
"""

import argparse
import ctypes
import json
import sys
import time
from pathlib import Path

import numpy as np


class DriverError(Exception):
    pass


class Driver:
    """The CUDA driver API through ctypes: the calls a replay makes."""

    def __init__(self, library="libcuda.so.1"):
        self.cu = ctypes.CDLL(library)
        self.check("cuInit", 0)
        device = ctypes.c_int(0)
        self.check("cuDeviceGet", ctypes.byref(device), 0)
        name = ctypes.create_string_buffer(256)
        self.check("cuDeviceGetName", name, 256, device)
        self.name = name.value.decode(errors="replace")
        self.context = ctypes.c_void_p()
        self.check("cuDevicePrimaryCtxRetain", ctypes.byref(self.context), device)
        self.check("cuCtxSetCurrent", self.context)

    def check(self, call, *args):
        status = getattr(self.cu, call)(*args)
        if status != 0:
            name = ctypes.c_char_p()
            self.cu.cuGetErrorName(status, ctypes.byref(name))
            raise DriverError(f"{call} failed: {(name.value or b'?').decode()} ({status})")


def parameter(field, pointers):
    """A kernel parameter's bytes: d:<allocation>:<offset> or x:<hex>."""
    kind, _, rest = field.partition(":")
    if kind == "d":
        allocation, offset = rest.split(":")
        return ctypes.c_uint64(pointers[int(allocation)] + int(offset))
    data = bytes.fromhex(rest)
    return (ctypes.c_char * len(data)).from_buffer_copy(data)


class Replay:
    """One case's trace on the driver."""

    def __init__(self, driver, folder, blobs=None):
        self.driver, self.folder = driver, Path(folder)
        # Bytes to copy in for some blobs, in place of blob<N>.bin.
        self.blobs = blobs or {}
        self.lines = [line.split() for line in (self.folder / "trace.txt").read_text().splitlines()]
        self.modules, self.functions, self.pointers = {}, {}, {}
        self.launches = []  # (function, dims, parameter array, kept buffers)

    def run(self):
        """The trace in order, frees held back (for timing); returns the
        results copied back."""
        cu, check = self.driver.cu, self.driver.check
        results = []
        for op, *f in self.lines:
            if op == "module":
                module = ctypes.c_void_p()
                ptx = (self.folder / f"module{f[0]}.ptx").read_bytes() + b"\0"
                check("cuModuleLoadData", ctypes.byref(module), ptx)
                self.modules[f[0]] = module
            elif op == "alloc":
                ptr = ctypes.c_uint64()
                check("cuMemAlloc_v2", ctypes.byref(ptr), ctypes.c_size_t(int(f[1])))
                self.pointers[int(f[0])] = ptr.value
            elif op == "h2d":
                data = self.blobs.get(f[3]) or (self.folder / f"blob{f[3]}.bin").read_bytes()
                check("cuMemcpyHtoD_v2", ctypes.c_uint64(self.pointers[int(f[0])] + int(f[1])),
                      data, ctypes.c_size_t(int(f[2])))
            elif op == "d2h":
                out = np.empty(int(f[2]), np.uint8)
                check("cuMemcpyDtoH_v2", out.ctypes.data_as(ctypes.c_void_p),
                      ctypes.c_uint64(self.pointers[int(f[0])] + int(f[1])),
                      ctypes.c_size_t(int(f[2])))
                results.append(out)
            elif op == "d2d":
                check("cuMemcpyDtoD_v2", ctypes.c_uint64(self.pointers[int(f[0])] + int(f[1])),
                      ctypes.c_uint64(self.pointers[int(f[2])] + int(f[3])),
                      ctypes.c_size_t(int(f[4])))
            elif op in ("memset32", "memset16"):
                check("cuMemsetD32_v2" if op == "memset32" else "cuMemsetD16_v2",
                      ctypes.c_uint64(self.pointers[int(f[0])] + int(f[1])),
                      ctypes.c_uint(int(f[2])) if op == "memset32" else ctypes.c_ushort(int(f[2])),
                      ctypes.c_size_t(int(f[3])))
            elif op == "launch":
                key = (f[0], f[1])
                if key not in self.functions:
                    function = ctypes.c_void_p()
                    check("cuModuleGetFunction", ctypes.byref(function), self.modules[f[0]],
                          f[1].encode())
                    self.functions[key] = function
                kept = [parameter(p, self.pointers) for p in f[9:]]
                params = (ctypes.c_void_p * max(len(kept), 1))(
                    *[ctypes.cast(ctypes.byref(k), ctypes.c_void_p) for k in kept])
                dims = [ctypes.c_uint(int(v)) for v in f[2:9]]
                self.launches.append((self.functions[key], dims, params, kept))
                self.launch(self.launches[-1])
            elif op == "free":
                pass  # after timing (close)
            else:
                raise DriverError(f"unknown trace line: {op}")
        check("cuCtxSynchronize")
        return results

    def launch(self, launch):
        function, dims, params, _ = launch
        self.driver.check("cuLaunchKernel", function, *dims, None, params, None)

    def time_once(self):
        """Milliseconds of the case's launches, in order (CUDA events)."""
        check = self.driver.check
        if not hasattr(self, "events"):
            self.events = ctypes.c_void_p(), ctypes.c_void_p()
            for event in self.events:
                check("cuEventCreate", ctypes.byref(event), 0)
        start, stop = self.events
        check("cuEventRecord", start, None)
        for launch in self.launches:
            self.launch(launch)
        check("cuEventRecord", stop, None)
        check("cuEventSynchronize", stop)
        ms = ctypes.c_float()
        check("cuEventElapsedTime", ctypes.byref(ms), start, stop)
        return ms.value

    def time(self, rounds):
        """The median milliseconds of the case's launches (after one pass
        that warms up)."""
        return float(np.median([self.time_once() for _ in range(rounds + 1)][1:]))

    def close(self):
        for event in getattr(self, "events", ()):
            self.driver.cu.cuEventDestroy_v2(event)
        for ptr in self.pointers.values():
            self.driver.cu.cuMemFree_v2(ctypes.c_uint64(ptr))
        for module in self.modules.values():
            self.driver.cu.cuModuleUnload(module)


def compare(got, result, folder):
    """The result's bytes as its dtype against its reference: (ok, the
    largest error over the tolerance's allowance)."""
    if result["dtype"] == "bfloat16":  # the high half of an f32 (no ml_dtypes needed)
        value = (got.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    else:
        value = got.view(np.dtype(result["dtype"]))
    value = value.reshape(result["shape"]).astype(np.float64)
    want = np.load(folder / result["reference"])
    rtol, atol = result["rtol"], result["atol"]
    excess = np.abs(value - want) - (atol + rtol * np.abs(want))
    worst = float(np.nanmax(excess)) if excess.size else 0.0
    return bool(np.all(np.isfinite(value) == np.isfinite(want)) and worst <= 0), worst


def bench_inputs(case, folder):
    """A bench case's inputs, made here (float ones drawn from a normal
    distribution, large integer ones as random bits; the few small integer
    ones, block tables and targets, came in the bundle), and the bytes each
    traced copy of one takes."""
    inputs = []
    for i, spec in enumerate(case["inputs"]):
        rng = np.random.default_rng(1000 + i)
        dtype, shape = np.dtype(spec["dtype"]), tuple(spec["shape"])
        if spec["make"] == "normal":
            x = rng.standard_normal(shape).astype(dtype)
        elif spec["make"] == "bits":
            x = rng.integers(0, 256, int(np.prod(shape)) * dtype.itemsize, np.uint8).view(dtype).reshape(shape)
        else:
            x = np.frombuffer((folder / f"blob{spec['blob']}.bin").read_bytes(), dtype).reshape(shape)
        inputs.append(x)
    return inputs, {n: inputs[i].tobytes() for n, i in case["copies"].items()}


def bench_case(driver, case, folder, rounds, torch):
    """fuel-mlir's launches and PyTorch's op (where it has it) on the same
    device-resident inputs, timed interleaved: medians and their ratio."""
    inputs, blobs = bench_inputs(case, folder)
    replay = Replay(driver, folder, blobs)
    row = {"case": case["name"], "device": driver.name}
    try:
        replay.run()
        row["kernels"] = len(replay.launches)
        torch_f = None
        if torch is not None and case.get("torch"):
            sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
            import torch_cuda
            f = torch_cuda.contenders(torch)[case["torch"]]
            tensors = [torch.from_numpy(np.ascontiguousarray(x)).cuda() for x in inputs]
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

            def torch_f():
                begin.record()
                f(*tensors)
                end.record()
                end.synchronize()
                return begin.elapsed_time(end)
        fuel, theirs = [], []
        for _ in range(rounds + 1):  # the first warms up
            fuel.append(replay.time_once())
            if torch_f is not None:
                theirs.append(torch_f())
        row["ok"] = True
        row["median_ms"] = {"fuel": float(np.median(fuel[1:]))}
        if theirs:
            row["median_ms"]["torch"] = float(np.median(theirs[1:]))
            row["torch_over_fuel"] = row["median_ms"]["torch"] / row["median_ms"]["fuel"]
    except DriverError as e:
        row["ok"], row["error"] = False, str(e)
    finally:
        replay.close()
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bundle")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--json", default=None)
    parser.add_argument("--driver", default="libcuda.so.1", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    bundle = Path(args.bundle)
    manifest = json.loads((bundle / "manifest.json").read_text())
    driver = Driver(args.driver)
    print(f"{driver.name}: {len(manifest['cases'])} cases", flush=True)
    report, failed = [], 0
    if manifest.get("kind") == "bench":
        try:
            import torch
            if not torch.cuda.is_available():
                torch = None
        except ImportError:
            torch = None
        for case in manifest["cases"]:
            row = bench_case(driver, case, bundle / case["folder"], args.rounds, torch)
            failed += not row["ok"]
            ms = row.get("median_ms", {})
            said = row.get("error") or "  ".join(
                [f"fuel {ms['fuel']:.4f} ms"] + ([f"torch {ms['torch']:.4f} ms "
                                                   f"({row['torch_over_fuel']:.2f}x)"] if "torch" in ms else []))
            print(f"{case['name']:32s} {said}", flush=True)
            report.append(row)
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=1))
        return 1 if failed else 0
    for case in manifest["cases"]:
        folder = bundle / case["folder"]
        row = {"case": case["name"], "device": driver.name}
        replay = Replay(driver, folder)
        began = time.perf_counter()
        try:
            got = replay.run()
            if len(got) != len(case["results"]):
                raise DriverError(f"{len(got)} results copied back, {len(case['results'])} expected")
            checks = [compare(g, r, folder) for g, r in zip(got, case["results"])]
            row["ok"] = all(ok for ok, _ in checks)
            row["excess"] = max(w for _, w in checks)
            row["kernels"] = len(replay.launches)
            if args.rounds and row["ok"]:
                row["median_ms"] = replay.time(args.rounds)
        except DriverError as e:
            row["ok"], row["error"] = False, str(e)
        finally:
            replay.close()
        row["seconds"] = round(time.perf_counter() - began, 2)
        failed += not row["ok"]
        if "error" in row:
            said = row["error"]
        elif not row["ok"]:
            said = f"off its reference by {row['excess']:.3g} past the tolerance"
        else:
            said = f"{row['kernels']} kernels" + (f", {row['median_ms']:.4f} ms"
                                                  if "median_ms" in row else "")
        print(f"{case['name']:48s} {'ok  ' if row['ok'] else 'FAIL'} {said}", flush=True)
        report.append(row)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    print(f"{len(report) - failed} of {len(report)} cases ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
