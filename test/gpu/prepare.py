"""Prepares the GPU numerics for a machine that has an NVIDIA GPU but not
the MLIR toolchain fuel-mlir is built with: each case of the GPU numerics
suite (test_gpu_run.NUMERICS) compiled and called here through the run API
(`target="cuda"`, for an sm_90 with 132 SMs) on the stand-in CUDA driver
(test/python/stand_in/libcuda.c), which writes down every device call: the
kernels' PTX, the allocations, the bytes copied in, each launch's grid,
block and parameters, the copies back. With the float64 numpy references
and tolerances beside each trace, the folder (a few MiB) is all that
test/gpu/replay.py needs on the GPU machine, with numpy and its driver.

    python test/gpu/prepare.py BUNDLE [--cases NAME ...]
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
        os.environ["STUB_CUDA_TRACE"] = str(bundle / folder)
        op, inputs, params, want, tol = numerics_case(name)
        got = runner.compile(fused_text(op, inputs, params), "f", target="cuda")(*inputs)
        os.environ["STUB_CUDA_TRACE"] = ""
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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bundle")
    parser.add_argument("--cases", nargs="+", default=None,
                        help="names of test_gpu_run.NUMERICS (default: all)")
    parser.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    bundle = Path(args.bundle)
    if args.traced:
        trace(bundle, args.cases)
        return 0
    sys.path.insert(0, str(TESTS))
    from test_gpu_run import NUMERICS

    names = args.cases or NUMERICS
    unknown = sorted(set(names) - set(NUMERICS))
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
        return subprocess.run([sys.executable, __file__, str(bundle), "--traced", "--cases", *names],
                              env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
