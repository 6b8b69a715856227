"""Replays traced GPU work on an NVIDIA GPU with nothing but the CUDA
driver, numpy and this file: for a machine with a GPU but without the MLIR
toolchain that builds fuel-mlir (see prepare.py, which makes the bundle).

For each case of the bundle it loads the kernels' PTX (the driver compiles
it for the GPU), allocates, copies the inputs in, launches every kernel
with the grid, block and parameters the run API's host code gave them,
copies the results back and compares them with the float64 numpy
references; then it times the case's launches alone (CUDA events, the
median of --rounds). It writes a JSON report and prints a line per case.

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

    def __init__(self, driver, folder):
        self.driver, self.folder = driver, Path(folder)
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
                data = (self.folder / f"blob{f[3]}.bin").read_bytes()
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

    def time(self, rounds):
        """The median milliseconds of the case's launches, in order."""
        cu, check = self.driver.cu, self.driver.check
        start, stop = ctypes.c_void_p(), ctypes.c_void_p()
        check("cuEventCreate", ctypes.byref(start), 0)
        check("cuEventCreate", ctypes.byref(stop), 0)
        times = []
        for _ in range(rounds + 1):  # the first warms up
            check("cuEventRecord", start, None)
            for launch in self.launches:
                self.launch(launch)
            check("cuEventRecord", stop, None)
            check("cuEventSynchronize", stop)
            ms = ctypes.c_float()
            check("cuEventElapsedTime", ctypes.byref(ms), start, stop)
            times.append(ms.value)
        check("cuEventDestroy_v2", start)
        check("cuEventDestroy_v2", stop)
        return float(np.median(times[1:]))

    def close(self):
        for ptr in self.pointers.values():
            self.driver.cu.cuMemFree_v2(ctypes.c_uint64(ptr))
        for module in self.modules.values():
            self.driver.cu.cuModuleUnload(module)


def compare(got, result, folder):
    """The result's bytes as its dtype against its reference: (ok, the
    largest error over the tolerance's allowance)."""
    value = got.view(np.dtype(result["dtype"])).reshape(result["shape"]).astype(np.float64)
    want = np.load(folder / result["reference"])
    rtol, atol = result["rtol"], result["atol"]
    excess = np.abs(value - want) - (atol + rtol * np.abs(want))
    worst = float(np.nanmax(excess)) if excess.size else 0.0
    return bool(np.all(np.isfinite(value) == np.isfinite(want)) and worst <= 0), worst


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
