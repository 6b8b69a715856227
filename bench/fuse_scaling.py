"""How --fuel-fuse's cost grows with the size of a module.

Modules of growing size, timed under --fuel-fuse, with the time per
layer printed (a flat column means linear cost):

- the normal form: N "layers" (rms_norm, fused_linear, softmax, layer_norm,
  chained) decomposed with --fuel-decompose, one function;
- a real export: N copies of a torch-mlir Llama block (corpus, weights
  elided: 2 RMSNorms, 2 RoPEs and attention found), one function each;
- and the pass's time next to --canonicalize and
  --linalg-fuse-elementwise-ops on N functions of a torch-mlir RMS norm and
  softmax each (--mlir-timing, threads on and off).

    python bench/fuse_scaling.py [--fuel-opt PATH] [--layers 250 500 1000 2000]
                                 [--blocks 25 50 100 200] [--corpus DIR]
                                 [--functions 1250 2500 5000]
"""

import argparse
import re
import shutil
import statistics
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


def norm_softmax_module(corpus: Path, n: int) -> str:
    """n functions, each a torch-mlir RMS norm and softmax (the exports of
    test/corpus, their map aliases written out)."""
    funcs = []
    for name in ("rmsnorm", "softmax"):
        text = (corpus / "torch_mlir" / f"{name}.linalg.mlir").read_text().split("{-#")[0]
        text = re.sub(r"dense_resource<[^>]*>", "dense<1.0>", text)
        aliases = dict(re.findall(r"^(#map\d*) = (affine_map<.*>)$", text, re.M))
        body = text[text.index("  func.func"):text.rindex("}")]
        for alias in sorted(aliases, key=len, reverse=True):
            body = re.sub(re.escape(alias) + r"\b", aliases[alias], body)
        funcs.append(body)
    return "module {\n" + "".join(
        re.sub(r"func\.func @(\w+)", rf"func.func @\1_{i}", f)
        for i in range(n) for f in funcs) + "}\n"


def pass_time(fuel_opt: str, path: Path, flags: list[str], pass_name: str) -> float:
    """The pass's own time from --mlir-timing (parsing and printing left out)."""
    err = subprocess.run([fuel_opt, str(path), *flags, "--mlir-timing", "-o", "/dev/null"],
                         check=True, capture_output=True, text=True).stderr
    for line in err.splitlines():
        if line.rstrip().endswith(pass_name):
            return float(line.split()[0])
    raise RuntimeError(f"no {pass_name} in the timing report:\n{err}")


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
    parser.add_argument("--functions", type=int, nargs="+", default=[1250, 2500, 5000])
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
        # The pass next to upstream passes on the same module: medians of
        # --mlir-timing's pass times, threads on and off.
        print("pass time, torch-mlir RMS norm + softmax per function (median s)")
        print(f"{'funcs':>8} {'threads':>8} {'fuel-fuse':>10} {'canonicalize':>13} "
              f"{'elementwise':>12} {'ratio':>6}")
        repo_corpus = Path(__file__).resolve().parents[1] / "test" / "corpus"
        for n in args.functions:
            src = Path(tmp) / f"ns{n}.mlir"
            src.write_text(norm_softmax_module(repo_corpus, n))
            for threads in ([], ["--mlir-disable-threading"]):
                times = {name: statistics.median(
                    pass_time(args.fuel_opt, src, [flag, *threads], name)
                    for _ in range(args.repeat))
                    for name, flag in (("FuelFuse", "--fuel-fuse"),
                                       ("Canonicalizer", "--canonicalize"),
                                       ("LinalgElementwiseOpFusionPass",
                                        "--linalg-fuse-elementwise-ops"))}
                print(f"{n:>8} {'off' if threads else 'on':>8} {times['FuelFuse']:>10.3f} "
                      f"{times['Canonicalizer']:>13.3f} "
                      f"{times['LinalgElementwiseOpFusionPass']:>12.3f} "
                      f"{times['FuelFuse'] / times['Canonicalizer']:>6.2f}")
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
