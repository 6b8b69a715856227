"""`--fuel-fuse` on mutated near matches: what it declines, it leaves as it was.

The inputs are the IR the matcher is meant to find: every op of
test/lit/Dialect/Fuel/ops.mlir decomposed, the frontend exports of
test/corpus and the inputs of the fuse lit tests. Each is mutated one thing
at a time where a recipe would notice: a scalar op for another (add/sub,
mul/div, max/min, exp/log, sqrt/rsqrt, a comparison's predicate), a
constant for another, an iterator kind flipped, a binary op's operands or a
linalg op's inputs swapped, an indexing map's results permuted or one
replaced by another dim or 0. Mutants that do not verify are dropped. Then
`fuel-fuse{report=misses}` runs on each, in this process, and

  * the pass succeeds, reports no error and the result verifies;
  * where it fused nothing, the module prints exactly as before;
  * every reason a recipe gave for stopping is collected (the report
    names one per recipe tried at each candidate).

test/python/test_fuse_misses.py runs a short deterministic campaign (in a
process of its own: the recipes of the fuse lit inputs are registered for
the process) and
checks that every reason lib/Match gives is reached by it or by a lit or
pytest case. A longer run:

    PYTHONPATH=build/python_packages python test/fuzz/fuse_misses.py --mutants 200
"""

import argparse
import json
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VALID = ROOT / "test" / "lit" / "Dialect" / "Fuel" / "ops.mlir"
CORPUS = ROOT / "test" / "corpus"
FUSE_TESTS = ROOT / "test" / "lit" / "Transforms"

SWAPS = [
    ("arith.addf", "arith.subf"), ("arith.mulf", "arith.divf"),
    ("arith.maximumf", "arith.minimumf"), ("arith.maxnumf", "arith.minnumf"),
    ("math.exp", "math.log"), ("math.sqrt", "math.rsqrt"), ("math.tanh", "math.erf"),
    ("arith.negf", "math.absf"), ("arith.addi", "arith.subi"), ("arith.muli", "arith.addi"),
    ("arith.select %", "arith.select %"),
    (" olt,", " ogt,"), (" oge,", " ole,"), (" ugt,", " ult,"), (" ne,", " eq,"),
    (" sge,", " sle,"), (" slt,", " sgt,"), (" ult,", " uge,"),
    ("linalg.matmul", "linalg.matmul_transpose_b"), ("\"parallel\"", "\"reduction\""),
]
FLOATS = ["0.000000e+00", "1.000000e+00", "2.000000e+00", "-1.000000e+00", "0xFF800000",
          "5.000000e-01", "9.99999974E-6"]


@dataclass
class Outcome:
    mutants: int = 0
    invalid: int = 0            # mutants that did not verify (dropped)
    fused: int = 0              # mutants in which a fused op was still found
    reasons: set = field(default_factory=set)
    problems: list = field(default_factory=list)   # (what, mutant text)


def _split(text):
    return [c for c in re.split(r"^// -----\s*$", text, flags=re.M) if "func.func" in c]


def sources():
    """(name, text) of every input to mutate."""
    from fuel_mlir import ir, passmanager

    found = []
    with ir.Context():
        for n, chunk in enumerate(_split(VALID.read_text())):
            module = ir.Module.parse(chunk)
            passmanager.PassManager.parse("builtin.module(fuel-decompose)").run(module.operation)
            found.append((f"ops.mlir#{n} decomposed", str(module)))
    for path in sorted(CORPUS.glob("*/*.mlir")):
        found.append((str(path.relative_to(ROOT)), path.read_text()))
    for path in sorted(FUSE_TESTS.glob("fuse*.mlir")):
        for n, chunk in enumerate(_split(path.read_text())):
            found.append((f"{path.relative_to(ROOT)}#{n}", chunk))
    return found


# Where each mutation applies (besides the SWAPS and reading the init).
_SITES = [
    ("constant", r"arith\.constant [-\w.+]+ : f\d+|dense<"),
    ("operands", r"= (arith|math)\.\w+ %[\w#]+, %[\w#]+"),
    ("ins", r"ins\(%[\w#]+, %[\w#]+ : "),
    ("map", r"affine_map<"),
    ("pow", r"= math\.(sqrt|rsqrt|exp) %[\w#]+ : "),
    ("indices", r"tensor\.extract %[\w#]+\[%[\w#]+, %[\w#]+\]"),
    ("index", r"linalg\.index \d"),
    ("pad", r"(low|high)\[[^\]]*\d"),
]


def _mutate_line(rng, line, body_args=""):
    """One mutation of `line`, or None when none applies; `body_args` is the
    block header of the body the line is in."""
    choices = []
    for a, b in SWAPS:
        for x, y in ((a, b), (b, a)):
            if x in line and x != y:
                choices.append(("swap", x, y))
    for kind, pattern in _SITES:
        if re.search(pattern, line):
            choices.append((kind,))
    if re.search(r"= (arith|math)\.\w+ .*%in\w*", line) and "%out" in body_args:
        choices.append(("init",))
    if not choices:
        return None
    kind = rng.choice(choices)
    if kind[0] == "swap":
        _, x, y = kind
        starts = [m.start() for m in re.finditer(re.escape(x), line)]
        at = rng.choice(starts)
        if x == "arith.select %":   # swap the two values a select chooses between
            m = re.search(r"arith\.select (%[\w#]+), (%[\w#]+), (%[\w#]+)", line)
            return line[:m.start()] + f"arith.select {m[1]}, {m[3]}, {m[2]}" + line[m.end():]
        return line[:at] + y + line[at + len(x):]
    if kind[0] == "constant":
        m = re.search(r"(arith\.constant |dense<)([-\w.+]+)", line)
        value = m[2]
        if re.fullmatch(r"-?\d+", value):
            new = str(int(value) + rng.choice([1, -1]))
        else:
            new = rng.choice([f for f in FLOATS if f != value])
        return line[:m.start(2)] + new + line[m.end(2):]
    if kind[0] == "operands":
        m = re.search(r"= ((?:arith|math)\.\w+) (%[\w#]+), (%[\w#]+)", line)
        return line[:m.start()] + f"= {m[1]} {m[3]}, {m[2]}" + line[m.end():]
    if kind[0] == "ins":
        m = re.search(r"ins\((%[\w#]+), (%[\w#]+) : ([^,]+), ([^)]+)\)", line)
        if not m:
            return None
        return line[:m.start()] + f"ins({m[2]}, {m[1]} : {m[4]}, {m[3]})" + line[m.end():]
    if kind[0] == "init":   # a body reads its init instead of an input
        uses = list(re.finditer(r"%in\w*", line))
        m = rng.choice(uses)
        return line[:m.start()] + "%out" + line[m.end():]
    if kind[0] == "pow":    # a root or exp as a power by a non-constant
        m = re.search(r"= math\.(sqrt|rsqrt|exp) (%[\w#]+) : ", line)
        return line[:m.start()] + f"= math.powf {m[2]}, {m[2]} : " + line[m.end():]
    if kind[0] == "indices":
        m = re.search(r"tensor\.extract (%[\w#]+)\[(%[\w#]+), (%[\w#]+)\]", line)
        return line[:m.start()] + f"tensor.extract {m[1]}[{m[3]}, {m[2]}]" + line[m.end():]
    if kind[0] == "pad":    # padding moved to another dim or side
        m = rng.choice(list(re.finditer(r"(low|high)\[([^\]]*)\]", line)))
        items = [x.strip() for x in m[2].split(",")]
        i = rng.randrange(len(items))
        items[i] = rng.choice(["0", "1", "2"]) if items[i] != "%c1" else "0"
        return line[:m.start(2)] + ", ".join(items) + line[m.end(2):]
    if kind[0] == "index":
        m = re.search(r"linalg\.index (\d)", line)
        return line[:m.start(1)] + str(rng.choice([i for i in range(4) if str(i) != m[1]])) + \
            line[m.end(1):]
    m = re.search(r"affine_map<\(([^)]*)\)( \[[^\]]*\])? -> \(([^)]*)\)>", line)
    if not m:
        return None
    dims = [d.strip() for d in m[1].split(",") if d.strip()]
    results = [r.strip() for r in m[3].split(",") if r.strip()]
    if not dims or not results:
        return None
    op = rng.choice(["permute", "replace", "zero", "copy", "negate"])
    if op in ("permute", "copy") and len(results) > 1:
        i, j = rng.sample(range(len(results)), 2)
        if op == "copy":   # a result read twice
            results[i] = results[j]
        else:
            results[i], results[j] = results[j], results[i]
    elif op == "negate":
        i = rng.randrange(len(results))
        results[i] = re.sub(r"^(d\d+)(?: \* (\d+))?", lambda m: f"{m[1]} * -{m[2] or 1}", results[i])
    elif op == "replace":
        results[rng.randrange(len(results))] = rng.choice(dims)
    else:
        results[rng.randrange(len(results))] = "0"
    return line[:m.start(3)] + ", ".join(results) + line[m.end(3):]


def mutants(rng, text, count):
    lines = text.splitlines()
    sites = [i for i, line in enumerate(lines) if not line.lstrip().startswith("//")]
    made, tries = [], 0
    while len(made) < count and tries < count * 20:
        tries += 1
        i = rng.choice(sites)
        header = next((lines[j] for j in range(i, -1, -1) if lines[j].lstrip().startswith("^bb")), "")
        new = _mutate_line(rng, lines[i], header)
        if new is None or new == lines[i]:
            continue
        made.append("\n".join(lines[:i] + [new] + lines[i + 1:]))
    return made


def source_rng(seed, name):
    """The mutations of one input depend on the seed and its name alone, so
    adding an input leaves the others' mutants as they were."""
    return random.Random(f"{seed}/{name}")


_MISS = re.compile(r"fuel-fuse (?:near )?miss: \w+(?: \(\d+%\))?: (.*?)(?: \(at [^()]*\))?$")


def run(per_source=10, seed=0, log=None, last=None):
    """Mutates every source `per_source` times; `last` (a path) is written
    with each input before the pass runs on it, so that a crash leaves its
    reproducer."""
    from fuel_mlir import ir, passmanager

    outcome = Outcome()
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = False
        remarks, errors = [], []

        def handler(d):
            (errors if d.severity == ir.DiagnosticSeverity.ERROR else remarks).append(
                str(d.message))
            return True

        ctx.attach_diagnostic_handler(handler)
        pipeline = "builtin.module(fuel-fuse{report=misses})"
        for name, text in sources():
            for text in [text] + mutants(source_rng(seed, name), text, per_source):
                outcome.mutants += 1
                remarks.clear()
                try:
                    module = ir.Module.parse(text)
                except ir.MLIRError:
                    outcome.invalid += 1
                    continue
                before = str(module)
                fused_before = before.count("fuel.fused ")
                remarks.clear()
                errors.clear()
                if last:
                    Path(last).write_text(text)
                try:
                    passmanager.PassManager.parse(pipeline).run(module.operation)
                except ir.MLIRError as e:
                    outcome.problems.append((f"{name}: the pass failed: {e}", text))
                    continue
                after = str(module)
                if errors:
                    outcome.problems.append((f"{name}: a decline reported an error: {errors[0]}",
                                             text))
                if not module.operation.verify():
                    outcome.problems.append((f"{name}: the result does not verify", text))
                if after.count("fuel.fused ") > fused_before:
                    outcome.fused += 1
                elif after != before:
                    outcome.problems.append((f"{name}: nothing fused, but the IR changed", text))
                for r in remarks:
                    m = _MISS.match(r)
                    if m:
                        outcome.reasons.add(m[1])
            if log:
                print(f"{name}: {outcome.mutants} mutants, {len(outcome.reasons)} reasons",
                      file=log)
    return outcome


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mutants", type=int, default=50, help="mutants per input")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--last", type=Path,
                        help="write each input here before running it (a crash's reproducer)")
    parser.add_argument("--write", type=Path,
                        help="only write the inputs, as one -split-input-file file (for a "
                             "fuel-opt built with sanitizers)")
    parser.add_argument("--json", type=Path,
                        help="also write the outcome here: counts, reasons and problems")
    args = parser.parse_args()
    if args.write:
        texts = []
        for name, text in sources():
            texts += [text] + mutants(source_rng(args.seed, name), text, args.mutants)
        args.write.write_text("\n// -----\n".join(texts))
        print(f"{len(texts)} inputs written to {args.write}")
        return
    outcome = run(args.mutants, args.seed, log=None if args.json else sys.stderr, last=args.last)
    if args.json:
        args.json.write_text(json.dumps({
            "mutants": outcome.mutants, "invalid": outcome.invalid, "fused": outcome.fused,
            "reasons": sorted(outcome.reasons), "problems": outcome.problems}))
    print(f"{outcome.mutants} inputs ({outcome.invalid} did not verify, {outcome.fused} fused), "
          f"{len(outcome.reasons)} distinct reasons, {len(outcome.problems)} problems")
    for what, text in outcome.problems:
        print(f"--- {what}\n{text}")
    sys.exit(1 if outcome.problems else 0)


if __name__ == "__main__":
    main()
