"""How --fuel-fuse's cost grows with the size of a module.

Two modules of growing size, timed under --fuel-fuse, with the time per
layer printed (a flat column means linear cost):

- the normal form: N "layers" (rms_norm, fused_linear, softmax, layer_norm,
  chained) decomposed with --fuel-decompose, one function;
- a real export: N copies of a torch-mlir Llama block (corpus, weights
  elided: 2 RMSNorms, 2 RoPEs and attention found), one function each.

    python bench/fuse_scaling.py [--fuel-opt PATH] [--layers 250 500 1000 2000]
                                 [--blocks 25 50 100 200] [--corpus DIR]
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


def llama_module(corpus: Path, n: int) -> str:
    text = (corpus / "torch_mlir" / "llama_block.linalg.elided.mlir").read_text()
    if "{-#" in text:
        text = text[: text.index("{-#")]
    maps = text[: text.index("module {")]
    body = text[text.index("module {") + len("module {"): text.rindex("}")]
    # Each copy: the same function under its own name; the maps are shared.
    funcs = "".join(body.replace("@llama_block(", f"@llama_block_{i}(") for i in range(n))
    return maps + "module {" + funcs + "}\n"


def time_fuse(fuel_opt: str, path: Path, repeat: int) -> tuple[float, str]:
    best, out = float("inf"), ""
    for _ in range(repeat):
        start = time.perf_counter()
        out = subprocess.run([fuel_opt, str(path), "--fuel-fuse"], check=True,
                             capture_output=True, text=True).stdout
        best = min(best, time.perf_counter() - start)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fuel-opt", default=shutil.which("fuel-opt") or "build/bin/fuel-opt")
    parser.add_argument("--layers", type=int, nargs="+", default=[250, 500, 1000, 2000])
    parser.add_argument("--blocks", type=int, nargs="+", default=[25, 50, 100, 200])
    parser.add_argument("--corpus", type=Path,
                        default=Path(__file__).resolve().parents[2] / "shared" / "corpus")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print("normal form (decomposed layers, one function)")
    print(f"{'layers':>8} {'generics':>9} {'fuse s':>8} {'ms/layer':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.layers:
            src = Path(tmp) / f"m{n}.mlir"
            dec = Path(tmp) / f"d{n}.mlir"
            src.write_text(layers_module(n))
            subprocess.run([args.fuel_opt, str(src), "--fuel-decompose", "-o", str(dec)], check=True)
            generics = dec.read_text().count("linalg.generic")
            best, out = time_fuse(args.fuel_opt, dec, args.repeat)
            fused = out.count("fuel.fused")
            assert fused == 4 * n, f"expected {4 * n} fused ops, found {fused}"
            print(f"{n:>8} {generics:>9} {best:>8.2f} {1000 * best / n:>9.3f}")
        if not (args.corpus / "torch_mlir").is_dir():
            print(f"(no corpus at {args.corpus}: the Llama blocks are skipped)")
            return
        print("torch-mlir Llama blocks (one function each)")
        print(f"{'blocks':>8} {'linalg':>9} {'fuse s':>8} {'ms/block':>9}")
        for n in args.blocks:
            src = Path(tmp) / f"llama{n}.mlir"
            src.write_text(llama_module(args.corpus, n))
            ops = src.read_text().count("linalg.")
            best, out = time_fuse(args.fuel_opt, src, args.repeat)
            fused = out.count("fuel.fused")
            assert fused == 5 * n, f"expected {5 * n} fused ops, found {fused}"
            print(f"{n:>8} {ops:>9} {best:>8.2f} {1000 * best / n:>9.3f}")


if __name__ == "__main__":
    main()
