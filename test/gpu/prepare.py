"""Prepares the GPU numerics for a machine that has an NVIDIA GPU but not
the MLIR toolchain fuel-mlir is built with: each case of the GPU numerics
suite (test_gpu_run.NUMERICS) compiled and called here through the run API
(`target="cuda"`, for an sm_90 with 132 SMs) on the stand-in CUDA driver
(test/python/stand_in/libcuda.c), which writes down every device call: the
kernels' PTX, the allocations, the bytes copied in, each launch's grid,
block and parameters, the copies back. With the float64 numpy references
and tolerances beside each trace, the folder (about 14 MiB) is all that
test/gpu/replay.py needs on the GPU machine, with numpy and its driver.
With --bench, bench/gpu.py's cases instead, for timing there against
PyTorch CUDA (about 1.3 MiB: their inputs are made there).

    python test/gpu/prepare.py BUNDLE [--bench] [--cases NAME ...]
    # there: python3 test/gpu/replay.py BUNDLE --json report.json

Needs a C compiler (for the stand-in), fuel_mlir and the test suite's
modules (test/python).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent / "python"


def traced_call(folder, run):
    """`run()` with the stand-in writing its trace into `folder`; raises
    if the stand-in refused a call (its log's `error` lines)."""
    os.environ["STUB_CUDA_TRACE"] = str(folder)
    os.environ["STUB_CUDA_LOG"] = str(folder / "calls.log")
    try:
        return run()
    finally:
        os.environ["STUB_CUDA_TRACE"] = os.environ["STUB_CUDA_LOG"] = ""
        log = folder / "calls.log"
        refused = ([line for line in log.read_text().splitlines() if line.startswith("error")]
                   if log.exists() else [])
        log.unlink(missing_ok=True)
        if refused:
            raise SystemExit(f"{folder.name}: the stand-in driver refused: {'; '.join(refused)}")


def trace(bundle, names):
    """In the process that loads the stand-in: each case into its folder."""
    sys.path.insert(0, str(TESTS))
    import numpy as np
    from numerics import TOL_LOOSE, fused_text
    from test_gpu_run import numerics_case

    from fuel_mlir import runner

    cases = []
    for name in names:
        folder = name.replace("/", "-")
        (bundle / folder).mkdir(parents=True)
        op, inputs, params, want, tol = numerics_case(name)
        got = traced_call(bundle / folder, lambda: runner.compile(
            fused_text(op, inputs, params), "f", target="cuda")(*inputs))
        got = got if isinstance(got, tuple) else (got,)
        copies = [line.split() for line in (bundle / folder / "trace.txt").read_text().splitlines()
                  if line.startswith("d2h ")]
        if [int(c[3]) for c in copies] != [g.nbytes for g in got]:
            raise SystemExit(f"{name}: the copies back ({[c[3] for c in copies]} bytes) are not "
                             f"the results ({[g.nbytes for g in got]} bytes), in order")
        results = []
        for i, (g, w) in enumerate(zip(got, want)):
            np.save(bundle / folder / f"reference{i}.npy", np.asarray(w, np.float64))
            results.append(dict(shape=list(g.shape), dtype=str(g.dtype), reference=f"reference{i}.npy",
                                **TOL_LOOSE[tol]))
        cases.append(dict(name=name, folder=folder, results=results))
        print(f"{name}: {sum(1 for _ in (bundle / folder).glob('module*.ptx'))} modules", flush=True)
    (bundle / "manifest.json").write_text(json.dumps(dict(chip="sm_90", cases=cases), indent=1))


BENCH = HERE.parents[1] / "bench"
# Integer inputs up to this size travel (block tables, targets); larger
# ones (quantized weights) are drawn as random bits there, like the floats.
CARRIED = 1 << 20


def trace_bench(bundle, names):
    """bench/gpu.py's cases (bench/all_ops.py's shapes and
    bench/gpu_cases.py's), traced for timing: the float inputs (and the
    large integer ones) are not carried but made on the GPU machine, so
    each traced copy of one names the input it copies."""
    sys.path.insert(0, str(TESTS))
    sys.path.insert(0, str(BENCH))
    import numpy as np
    from gpu_cases import gpu_bench_cases
    from numerics import fused_text
    from torch_cuda import contenders

    from fuel_mlir import runner

    table = {label: case[:3] for label, case in gpu_bench_cases().items()}
    names = names or list(table)
    unknown = sorted(set(names) - set(table))
    if unknown:
        raise SystemExit(f"no such case: {', '.join(unknown)}")
    timed_by_torch = set(contenders(None))
    listed = []
    for name in names:
        op, inputs, params = table[name]
        folder = "bench-" + "".join(c if c.isalnum() else "-" for c in name)
        (bundle / folder).mkdir(parents=True)
        traced_call(bundle / folder, lambda: runner.compile(
            fused_text(op, inputs, params), "f", target="cuda")(*inputs))
        arrays = [np.ascontiguousarray(x) for x in inputs]
        specs = [dict(shape=list(x.shape), dtype=str(x.dtype),
                      make="normal" if x.dtype.kind == "f" else "bits" if x.nbytes > CARRIED else "blob")
                 for x in arrays]
        copies = {}
        for line in (bundle / folder / "trace.txt").read_text().splitlines():
            if not line.startswith("h2d "):
                continue
            blob = line.split()[4]
            path = bundle / folder / f"blob{blob}.bin"
            data = path.read_bytes()
            match = [i for i, x in enumerate(arrays) if x.nbytes == len(data) and x.tobytes() == data]
            if not match and len(data) > CARRIED:
                raise SystemExit(f"{name}: a copy of {len(data)} bytes that is no input")
            if match:
                copies[blob] = match[0]
                if specs[match[0]]["make"] == "blob":
                    specs[match[0]]["blob"] = blob
                else:
                    path.unlink()
        listed.append(dict(name=name, folder=folder, inputs=specs, copies=copies,
                           torch=name if name in timed_by_torch else None))
        print(f"{name}: traced", flush=True)
    (bundle / "manifest.json").write_text(json.dumps(dict(kind="bench", chip="sm_90", cases=listed),
                                                     indent=1))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bundle")
    parser.add_argument("--cases", nargs="+", default=None,
                        help="names of test_gpu_run.NUMERICS, or with --bench of bench/gpu.py's "
                             "cases (default: all)")
    parser.add_argument("--bench", action="store_true",
                        help="bench/gpu.py's cases, for timing against PyTorch there")
    parser.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    bundle = Path(args.bundle)
    if args.traced:
        (trace_bench if args.bench else trace)(bundle, args.cases)
        return 0
    sys.path.insert(0, str(TESTS))
    from test_gpu_run import NUMERICS

    # (The bench's cases are checked where they are made.)
    names = args.cases or ([] if args.bench else NUMERICS)
    unknown = [] if args.bench else sorted(set(names) - set(NUMERICS))
    if unknown:
        parser.error(f"no such case: {', '.join(unknown)}")
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        parser.error("needs a C compiler (cc) for the stand-in driver")
    if bundle.exists():
        shutil.rmtree(bundle)
    bundle.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as driver:
        subprocess.run([cc, "-shared", "-fPIC", "-o", f"{driver}/libcuda.so.1",
                        str(TESTS / "stand_in" / "libcuda.c")], check=True)
        env = dict(os.environ, LD_LIBRARY_PATH=driver)
        return subprocess.run([sys.executable, __file__, str(bundle), "--traced"]
                              + (["--cases", *names] if names else [])
                              + (["--bench"] if args.bench else []), env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
