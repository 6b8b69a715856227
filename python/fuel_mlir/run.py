"""fuel-run: compile an MLIR function for the CPU and run it on inputs.

    fuel-run module.mlir --function=f --input=@x.npy --input=@w.npy --output=@y.npy
    fuel-run module.mlir --function=f --input="2x3xf32=1,2,3,4,5,6" --input=index=4

Inputs are `@file.npy`, inline `SHAPExTYPE=v,v,...` values (`f32=1.5` for
rank 0; a single value fills the whole shape) or `index=N`. Without
`--output`, results are printed; `--output=@file.npy` (one per result)
saves them instead. With `--memory-profile` (the emulator targets), the
kernels' memory requests are counted while it runs, and tables of their
coalescing and bank conflicts follow the results, per kernel and per load
or store (fuel_mlir.memory_profile).
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys

import numpy as np

from . import ir, memory_profile
from .runner import RunnerError, compile, numpy_dtype

_INLINE = re.compile(r"^(?:(?P<shape>(?:\d+x)*)(?P<type>[a-z]+\d+))=(?P<values>.*)$")


def parse_input(text: str, context: ir.Context):
    """A numpy array (or int, for `index=N`) from an --input value."""
    if text.startswith("@"):
        try:
            return np.load(text[1:], allow_pickle=False)
        except (OSError, ValueError) as e:
            raise RunnerError(f"cannot read input {text[1:]}: {e}") from None
    if text.startswith("index="):
        try:
            return int(text[len("index="):])
        except ValueError:
            raise RunnerError(f"bad index input {text!r}: expected index=N") from None
    m = _INLINE.match(text)
    if not m:
        raise RunnerError(
            f"bad input {text!r}: expected @file.npy, index=N or SHAPExTYPE=v,v,... "
            "(for example 2x3xf32=1,2,3,4,5,6)")
    shape = [int(d) for d in m.group("shape").split("x") if d]
    with context:
        try:
            dtype = numpy_dtype(ir.Type.parse(m.group("type")))
        except ir.MLIRError:
            raise RunnerError(f"bad element type {m.group('type')!r} in {text!r}") from None
    raw = [v for v in m.group("values").replace("[", "").replace("]", "").split(",") if v.strip()]
    try:
        values = np.array([float(v) for v in raw], dtype=np.float64)
    except ValueError:
        raise RunnerError(f"bad values in {text!r}") from None
    count = int(np.prod(shape)) if shape else 1
    if values.size == 1:
        values = np.full(count, values[0])
    if values.size != count:
        raise RunnerError(
            f"input {text!r} has {values.size} values for shape {shape} ({count} elements)")
    return values.astype(dtype).reshape(shape)


def _format(array: np.ndarray) -> str:
    shape = "x".join(str(d) for d in array.shape)
    dtype = {"float32": "f32", "float16": "f16", "float64": "f64", "bfloat16": "bf16",
             "int64": "i64", "int32": "i32", "int8": "i8", "bool": "i1"}.get(str(array.dtype), str(array.dtype))
    body = np.array2string(np.asarray(array, dtype=np.float64) if dtype == "bf16" else array,
                           separator=",", threshold=10**6)
    return f"{shape + 'x' if shape else ''}{dtype}={body}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="fuel-run", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    parser.add_argument("module", help="the MLIR file ('-' for stdin)")
    parser.add_argument("--function", default="main", help="the function to run (default: main)")
    parser.add_argument("--input", action="append", default=[], help="an input, in order")
    parser.add_argument("--output", action="append", default=[],
                        help="@file.npy for each result, in order")
    parser.add_argument("--no-codegen", action="store_true",
                        help="lower every op as decomposed (scalar loops), not with its schedule")
    parser.add_argument("--exact-math", action="store_true",
                        help="call libm for f32 math on vectors instead of polynomial approximations")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads the scheduled loops run on (default: 1)")
    parser.add_argument("--target",
                        choices=("cpu", "cuda", "rocm", "cuda-emulator", "rocm-emulator"),
                        default="cpu",
                        help="where to run: the CPU, the first NVIDIA GPU (fuel-to-nvvm and the "
                             "MLIR CUDA runtime), the first AMD GPU (fuel-to-rocdl, llvm-22 and "
                             "MLIR's ROCm runtime wrappers), an error saying why when there is "
                             "none; or cuda-emulator (rocm-emulator): the kernels fuel-to-nvvm "
                             "(fuel-to-rocdl) makes for an H100 (an MI300X), run on the CPU by the "
                             "GPU emulator, to check them")
    parser.add_argument("--memory-profile", action="store_true",
                        help="with an emulator target: count the kernels' memory requests "
                             "(every block) and print how coalesced they are, and their bank "
                             "conflicts")
    args = parser.parse_args(argv)
    try:
        text = sys.stdin.read() if args.module == "-" else open(args.module).read()
    except OSError as e:
        print(f"fuel-run: cannot read {args.module}: {e.strerror}", file=sys.stderr)
        return 1
    if args.memory_profile and not args.target.endswith("-emulator"):
        print("fuel-run: --memory-profile needs --target=cuda-emulator or rocm-emulator",
              file=sys.stderr)
        return 1
    try:
        fn = compile(text, args.function, codegen=not args.no_codegen,
                     approximate_math=not args.exact_math, threads=args.threads,
                     target=args.target, memory_profile=args.memory_profile)
        inputs = [parse_input(t, fn._context) for t in args.input]
        with (memory_profile.record(blocks=0) if args.memory_profile
              else contextlib.nullcontext()) as profile:
            results = fn(*inputs)
        results = () if results is None else results if isinstance(results, tuple) else (results,)
        if args.output:
            if len(args.output) != len(results):
                raise RunnerError(
                    f"{len(args.output)} --output for {len(results)} results")
            for spec, array in zip(args.output, results):
                if not spec.startswith("@"):
                    raise RunnerError(f"bad output {spec!r}: expected @file.npy")
                np.save(spec[1:], array)
        else:
            for i, array in enumerate(results):
                print(f"result[{i}]: {_format(array)}")
        if profile is not None:
            print(profile.table())
            print()
            print(profile.site_table())
    except RunnerError as e:
        print(f"fuel-run: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
