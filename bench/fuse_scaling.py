"""How --fuel-fuse's cost grows with the size of a module.

Builds a module of N "layers" (each: rms_norm, fused_linear, softmax and
layer_norm, chained), decomposes it with --fuel-decompose, then times
--fuel-fuse on the decomposed module for several N, and prints the time per
layer: a flat column means linear cost.

    python bench/fuse_scaling.py [--fuel-opt PATH] [--layers 250 500 1000 2000]
"""

import argparse
import shutil
import subprocess
import tempfile
import time
from pathlib import Path


def layers_module(n: int) -> str:
    lines = ["func.func @f(%x0: tensor<4x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>) -> tensor<4x64xf32> {"]
    t = "tensor<4x64xf32>"
    for i in range(n):
        x = f"%x{i}"
        lines += [
            f"  %n{i} = fuel.fused rms_norm_last_dim {{eps = 1.0e-05 : f64}} ({x}) : ({t}) -> {t}",
            f"  %l{i} = fuel.fused fused_linear (%n{i}, %w, %b) : ({t}, tensor<64x64xf32>, tensor<64xf32>) -> {t}",
            f"  %s{i} = fuel.fused softmax_last_dim (%l{i}) : ({t}) -> {t}",
            f"  %x{i + 1} = fuel.fused layer_norm_last_dim {{eps = 1.0e-05 : f64}} (%s{i}) : ({t}) -> {t}",
        ]
    lines += [f"  return %x{n} : {t}", "}"]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fuel-opt", default=shutil.which("fuel-opt") or "build/bin/fuel-opt")
    parser.add_argument("--layers", type=int, nargs="+", default=[250, 500, 1000, 2000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'layers':>8} {'generics':>9} {'fuse s':>8} {'ms/layer':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.layers:
            src = Path(tmp) / f"m{n}.mlir"
            dec = Path(tmp) / f"d{n}.mlir"
            src.write_text(layers_module(n))
            subprocess.run([args.fuel_opt, str(src), "--fuel-decompose", "-o", str(dec)], check=True)
            generics = dec.read_text().count("linalg.generic")
            best = float("inf")
            for _ in range(args.repeat):
                start = time.perf_counter()
                out = subprocess.run([args.fuel_opt, str(dec), "--fuel-fuse"], check=True,
                                     capture_output=True, text=True).stdout
                best = min(best, time.perf_counter() - start)
            fused = out.count("fuel.fused")
            assert fused == 4 * n, f"expected {4 * n} fused ops, found {fused}"
            print(f"{n:>8} {generics:>9} {best:>8.2f} {1000 * best / n:>9.3f}")


if __name__ == "__main__":
    main()
