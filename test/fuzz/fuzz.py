"""A fuzzer for fuel-opt: structure-aware fuel.fused ops and mutated lit
inputs, through the fuse, decompose, canonicalize/CSE passes and every
pipeline. A crash (a signal, or LLVM's stack dump) is classified by whether
project code is on the stack; each is written out with a reproducer.

    python test/fuzz/fuzz.py --fuel-opt build/bin/fuel-opt [--cases 2000]
                             [--seed 0] [--out fuzz-crashes]

Exits 1 when project code crashed. The test suite runs a short
deterministic campaign (test/python/test_fuzz.py).
"""

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PIPELINES = [
    ["--fuel-fuse", "--fuel-decompose", "--canonicalize", "--cse"],
    ["--fuel-codegen-cpu=report=true", "--canonicalize"],
    ["--fuel-to-llvm"],
    ["--fuel-to-llvm=codegen=false out-params=true"],
    ["--fuel-to-llvm=threads=2 out-params=true"],
    ["--fuel-codegen-gpu=report=true", "--canonicalize"],
    ["--fuel-to-nvvm=format=llvm"],
    ["--fuel-to-rocdl"],
]

FLOATS = ["f32", "f16", "bf16", "f64"]
ELEMENTS = {"AnyFloat": FLOATS, "F32": ["f32"], "Int64": ["i64"], "Int32": ["i32"],
            "Int8": ["i8"], "Index": ["index"]}
DIMS = [0, 1, 1, 2, 3, 4, 8, 16, 16, 32, 64, "?", "?", 1 << 40]


@dataclass
class Outcome:
    crashes: list = field(default_factory=list)   # (kind, pipeline, text, stderr)
    runs: int = 0

    @property
    def project_crashes(self):
        return [c for c in self.crashes if c[0] == "project"]


def _registry():
    from fuel_mlir import registry  # the built or installed package
    return [e for e in registry.entries() if not e.is_runtime]


def _tensor(rng, element_kind, min_rank, max_rank):
    if rng.random() < 0.05:  # a wrong element type
        element = rng.choice(["i32", "f32", "i1", "f16"])
    else:
        element = rng.choice(ELEMENTS.get(element_kind, FLOATS))
    if element == "index":
        return "index"
    top = max_rank if max_rank is not None else min_rank + 2
    rank = rng.randint(max(0, min_rank - (rng.random() < 0.05)), max(min_rank, top))
    dims = [str(rng.choice(DIMS)) for _ in range(rank)]
    return "tensor<" + "".join(d + "x" for d in dims) + element + ">"


def _param(rng, p):
    kind = p.kind
    if rng.random() < 0.08:  # the wrong kind
        return rng.choice(['"x"', "true", "1.5 : f32", "7 : i64", "array<i64: 1, 2>", "unit"])
    if kind in ("F64", "F32"):
        width = kind.lower()
        v = rng.choice(["0.0", "1.0", "-1.0", "1.0e-05", "0x7FF8000000000000" if width == "f64"
                        else "0x7FC00000", "1.0e+300" if width == "f64" else "3.0e+38", "0.125"])
        return f"{v} : {width}"
    if kind in ("I64", "I32"):
        return f"{rng.choice([0, 1, -1, 2, 3, 16, 32, 64, 128, 1 << 31 - 1, 1 << 62])} : {kind.lower()}"
    if kind == "Bool":
        return rng.choice(["true", "false"])
    if kind == "Pair":
        a, b = rng.choice([0, 1, 2, -1, 1 << 62]), rng.choice([0, 1, 2, 3])
        return f"array<i64: {a}, {b}>"
    if kind == "Reduction":
        return f"#fuel.reduction<{rng.choice(['mean', 'sum', 'none'])}>"
    if kind == "QuantType":
        return f"#fuel.quant<{rng.choice(['q4_0', 'q8_0', 'q4_k', 'q6_k'])}>"
    return "0 : i64"


def fused_case(rng, entries):
    """A function applying one randomly built fuel.fused op."""
    e = rng.choice(entries)
    operands = []
    for o in e.operands:
        if o.optional and rng.random() < 0.5:
            continue
        operands.append(_tensor(rng, o.element, o.min_rank, o.max_rank))
    if rng.random() < 0.05 and operands:
        operands.append(operands[-1])  # one too many
    if rng.random() < 0.05 and operands:
        operands.pop()  # one too few
    params = []
    for p in e.params:
        if p.required and rng.random() < 0.05:
            continue  # missing
        if not p.required and rng.random() < 0.5:
            continue
        params.append(f"{p.name} = {_param(rng, p)}")
    if rng.random() < 0.03:
        params.append("bogus = 1 : i64")
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(operands))
    uses = ", ".join(f"%a{i}" for i in range(len(operands)))
    # The result: like the first operand (right for many ops), or another.
    result = operands[0] if operands and operands[0] != "index" else "tensor<4xf32>"
    if rng.random() < 0.2:
        result = _tensor(rng, "AnyFloat", 1, 4)
    results = [result] * len(e.results)
    attrs = " {" + ", ".join(params) + "}" if params else ""
    return (f"func.func @f({args}) -> ({', '.join(results)}) {{\n"
            f"  %r:{len(results)} = fuel.fused {e.name}{attrs} ({uses}) : "
            f"({', '.join(operands)}) -> ({', '.join(results)})\n"
            f"  return {', '.join(f'%r#{i}' for i in range(len(results)))} : {', '.join(results)}\n"
            f"}}\n")


def _chunks():
    files = sorted((ROOT / "test" / "lit").rglob("*.mlir")) + sorted((ROOT / "test" / "corpus").rglob("*.mlir"))
    chunks = []
    for f in files:
        chunks += [c for c in f.read_text().split("// -----") if "func.func" in c]
    return chunks


def mutated_case(rng, chunks):
    """A lit or corpus input with lines dropped, duplicated or swapped and
    numbers, types and names changed."""
    lines = rng.choice(chunks).split("\n")
    for _ in range(rng.randint(1, 3)):
        if len(lines) < 3:
            break
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        what = rng.randrange(5)
        if what == 0:
            del lines[i]
        elif what == 1:
            lines.insert(i, lines[j])
        elif what == 2:
            lines[i], lines[j] = lines[j], lines[i]
        elif what == 3:
            lines[i] = re.sub(r"\b\d+\b", lambda m: str(rng.choice([0, 1, 3, 7, 64, 1 << 40])),
                              lines[i], count=1)
        else:
            lines[i] = re.sub(r"\b(f32|f16|bf16|i64|i32)\b",
                              lambda m: rng.choice(["f32", "f16", "bf16", "i64", "i1"]), lines[i], count=1)
    return "\n".join(lines)


def _classify(stderr: str, returncode: int):
    # A crash, an assertion, or a report of a sanitizer build
    # (scripts/sanitize.sh): AddressSanitizer, LeakSanitizer, UBSan's
    # "runtime error:".
    sanitizer = "Sanitizer" in stderr or "runtime error:" in stderr
    crashed = (returncode < 0 or "Stack dump" in stderr
               or "PLEASE submit a bug report" in stderr or sanitizer)
    if not crashed:
        return None
    frames = [line for line in stderr.splitlines() if re.match(r"\s*#\d+ ", line)]
    # Frames of the driver and the pass manager are on every stack; project
    # code is a frame in mlir::fuel below them (or, for UBSan, the source
    # line it names).
    project = any("mlir::fuel::" in f or "FuelFuse" in f or "FuelCodegen" in f
                  or "FuelDecompose" in f for f in frames)
    project = project or any(str(ROOT / d) in line for line in stderr.splitlines()
                             if "runtime error:" in line for d in ("lib", "include", "tools"))
    return "project" if project else "upstream"


def run(fuel_opt, cases, seed, out_dir=None, log=None):
    rng = random.Random(seed)
    entries = _registry()
    chunks = _chunks()
    outcome = Outcome()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "case.mlir"
        for n in range(cases):
            text = fused_case(rng, entries) if n % 2 == 0 else mutated_case(rng, chunks)
            path.write_text(text)
            for pipeline in PIPELINES:
                proc = subprocess.run([fuel_opt, str(path), "--verify-each", *pipeline, "-o", os.devnull],
                                      capture_output=True, text=True, timeout=120)
                outcome.runs += 1
                kind = _classify(proc.stderr, proc.returncode)
                if kind:
                    outcome.crashes.append((kind, pipeline, text, proc.stderr))
                    if out_dir:
                        d = Path(out_dir)
                        d.mkdir(parents=True, exist_ok=True)
                        k = len(outcome.crashes)
                        (d / f"{k:04d}-{kind}.mlir").write_text(
                            f"// RUN: fuel-opt %s {' '.join(pipeline)}\n" + text)
                        (d / f"{k:04d}-{kind}.stderr").write_text(proc.stderr)
            if log and (n + 1) % 100 == 0:
                print(f"{n + 1}/{cases} cases, {outcome.runs} runs, "
                      f"{len(outcome.crashes)} crashes "
                      f"({len(outcome.project_crashes)} in project code)", file=log, flush=True)
    return outcome


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fuel-opt", default=str(ROOT / "build" / "bin" / "fuel-opt"))
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="fuzz-crashes")
    args = parser.parse_args()
    outcome = run(args.fuel_opt, args.cases, args.seed, args.out, log=sys.stdout)
    print(f"{args.cases} cases, {outcome.runs} runs: {len(outcome.crashes)} crashes, "
          f"{len(outcome.project_crashes)} in project code (reproducers in {args.out})")
    return 1 if outcome.project_crashes else 0


if __name__ == "__main__":
    sys.exit(main())
