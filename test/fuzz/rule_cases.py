"""Negative cases for every verifier rule of every fused op, found by
systematic mutation of the valid ops in test/lit/Dialect/Fuel/ops.mlir.

Each valid `fuel.fused` op there is mutated one thing at a time: every
static dim of every operand and result (+1, 1, 0), each operand's rank (a
dim dropped or added), element type (another float, an integer, a float
where an integer belongs) and kind (a memref), each operand dropped or one
added, each param dropped, of the wrong kind, or set to boundary values
(0, -1, 2^62, NaN, infinity, a pair of the wrong length or sign), and an
unknown param. `fuel-opt` verifies every mutant; the diagnostics are keyed
by the op, the rule (operand count, operand types, params schema, params
rule, shape rule, dtype rule, result types) and the message with its
values taken out, so that every check of every op that some mutant reaches
gives one key.

    python test/fuzz/rule_cases.py --fuel-opt build/bin/fuel-opt

writes one case per key, the first mutant that reached it, into
test/lit/Dialect/Fuel/invalid-rules.mlir (a lit test under
-verify-diagnostics). test/python/test_rule_coverage.py runs the
enumeration again and fails on a key that no negative lit case has, so a new
rule comes with its case.
"""

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VALID = ROOT / "test" / "lit" / "Dialect" / "Fuel" / "ops.mlir"
OUTPUT = ROOT / "test" / "lit" / "Dialect" / "Fuel" / "invalid-rules.mlir"

RULES = ("operand count", "operand types", "params schema", "params rule",
         "shape rule", "dtype rule", "result types")

_OP = re.compile(r"^\s*(?:(%\w+)(?::(\d+))? = )?fuel\.fused (\w+) (?:(\{.*?\}) )?\(([^)]*)\)"
                 r"(?: attributes \{[^}]*\})? : \((.*)\) -> (.*)$")


def _split_top(text, sep=","):
    """Splits at `sep` outside <>, [], {}, ()."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "<[{(":
            depth += 1
        elif ch in ">]})":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


class Instance:
    """One fuel.fused op: name, params (key -> text), operand and result types."""

    def __init__(self, name, params, operands, results):
        self.name, self.params = name, dict(params)
        self.operands, self.results = list(operands), list(results)

    def text(self, fn):
        args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(self.operands))
        attrs = ""
        if self.params:
            attrs = "{" + ", ".join(f"{k} = {v}" for k, v in self.params.items()) + "} "
        uses = ", ".join(f"%a{i}" for i in range(len(self.operands)))
        if not self.results:
            lhs, res = "", "()"
        elif len(self.results) == 1:
            lhs, res = "%0 = ", self.results[0]
        else:
            lhs, res = f"%0:{len(self.results)} = ", "(" + ", ".join(self.results) + ")"
        op = (f"{lhs}fuel.fused {self.name} {attrs}({uses}) : "
              f"({', '.join(self.operands)}) -> {res}")
        return f"func.func @{fn}({args}) {{\n", op


def instances():
    """The valid ops of ops.mlir, the dynamic ones included."""
    found = []
    for line in VALID.read_text().splitlines():
        if line.lstrip().startswith("//"):
            continue
        m = _OP.match(line)
        if not m:
            continue
        _, _, name, attrs, _, operands, results = m.groups()
        params = {}
        if attrs:
            for entry in _split_top(attrs[1:-1]):
                key, value = entry.split(" = ", 1)
                params[key.strip()] = value.strip()
        results = results.strip()
        if results == "()":
            results = []
        elif results.startswith("("):
            results = _split_top(results[1:-1])
        else:
            results = [results]
        found.append(Instance(name, params, _split_top(operands), results))
    return found


_SHAPED = re.compile(r"^(tensor|memref)<(.*)>$")


def _shape(t):
    m = _SHAPED.match(t)
    if not m:
        return None
    *dims, elem = m.group(2).split("x") if "x" in m.group(2) else [m.group(2)]
    return m.group(1), dims, elem


def _shaped(kind, dims, elem):
    return f"{kind}<{'x'.join(list(dims) + [elem])}>"


def _type_mutants(t):
    parsed = _shape(t)
    if parsed is None:  # index
        yield "tensor<4xf32>"
        return
    kind, dims, elem = parsed
    for i, d in enumerate(dims):
        if d == "?":
            continue
        for nd in (int(d) + 1, 1, 0):
            if str(nd) != d:
                yield _shaped(kind, dims[:i] + [str(nd)] + dims[i + 1:], elem)
    if dims:
        yield _shaped(kind, dims[1:], elem)
        yield _shaped(kind, dims[:-1], elem)
    yield _shaped(kind, ["2"] + dims, elem)
    others = {"f32": ["f16", "i32"], "f16": ["f32", "i32"], "bf16": ["f32", "i32"],
              "f64": ["f32"], "i32": ["i64", "f32"], "i64": ["i32", "f32"], "i8": ["i32", "f32"]}
    for e in others.get(elem, ["f32"]):
        yield _shaped(kind, dims, e)
    yield _shaped("memref" if kind == "tensor" else "tensor", dims, elem)
    yield "index"


def _param_mutants(value):
    yield '"x"'
    if value.startswith("array<i64"):
        yield from ("array<i64: 0, 1>", "array<i64: 1, 1, 1>", "array<i64: -1, -1>",
                    "array<i64: 4611686018427387904, 4611686018427387904>", "array<i32: 1, 1>")
        return
    if value.startswith("#fuel.quant"):
        yield from (f"#fuel.quant<{q}>" for q in ("q8_0", "q4_k", "q6_k", "q2_k"))
        return
    if value.startswith("#fuel.reduction"):
        yield from (f"#fuel.reduction<{r}>" for r in ("mean", "sum", "none"))
        return
    if value in ("true", "false"):
        yield "1 : i64"
        return
    number, _, typ = value.partition(" : ")
    if typ.startswith("f"):
        yield from (f"0.0 : {typ}", f"-1.0 : {typ}", f"0x7FF8000000000000 : {typ}" if typ == "f64"
                    else f"0x7FC00000 : {typ}", f"0x7FF0000000000000 : {typ}" if typ == "f64"
                    else f"0x7F800000 : {typ}", f"{number} : {'f32' if typ == 'f64' else 'f64'}",
                    "1 : i64")
    else:
        n = int(number)
        yield from (f"{v} : {typ}" for v in (0, -1, n + 1, 4611686018427387904 if typ == "i64"
                                             else 1 << 30))
        yield "1.0 : f64"


def mutants(inst):
    """(description, Instance) for every single-thing mutation of `inst`."""
    def clone(**kw):
        m = Instance(inst.name, inst.params, inst.operands, inst.results)
        for k, v in kw.items():
            setattr(m, k, v)
        return m

    for i, t in enumerate(inst.operands):
        for nt in _type_mutants(t):
            ops = list(inst.operands)
            ops[i] = nt
            yield f"operand {i}: {nt}", clone(operands=ops)
        yield f"operand {i} dropped", clone(operands=inst.operands[:i] + inst.operands[i + 1:])
    yield "an operand added", clone(operands=inst.operands + [inst.operands[0]])
    for i, t in enumerate(inst.results):
        for nt in _type_mutants(t):
            res = list(inst.results)
            res[i] = nt
            yield f"result {i}: {nt}", clone(results=res)
    yield "a result added", clone(results=inst.results + ["tensor<4xf32>"])
    for key, value in inst.params.items():
        rest = {k: v for k, v in inst.params.items() if k != key}
        yield f"param {key} dropped", clone(params=rest)
        for nv in _param_mutants(value):
            yield f"param {key} = {nv}", clone(params={**inst.params, key: nv})
    yield "an unknown param", clone(params={**inst.params, "bogus": "1 : i64"})


_DIAG = re.compile(r"^.*?:(\d+):\d+: error: (.*)$")


def normalize(message):
    """The message with its values taken out: the key of one check."""
    message = message.replace("'fuel.fused' op ", "")
    message = re.sub(r"(tensor|memref)<[^>]*>", "T", message)
    message = re.sub(r"\((-?\d+|\?)\)", "(N)", message)
    message = re.sub(r", got .*$", ", got X", message)
    message = re.sub(r"\bgot -?\d+\b.*$", "got X", message)
    message = re.sub(r"#\d+", "#N", message)
    message = re.sub(r" of type \S+ ", " of type X ", message)
    message = re.sub(r"has element type \w+ but (\w+) has \w+", r"has element type E but \1 has E",
                     message)
    message = re.sub(r"\b(q\d_[01k])\b", "Q", message)
    return message


def collect(fuel_opt):
    """{key: (message, description, case text)} over every mutant of every op."""
    cases = []
    for inst in instances():
        for desc, m in mutants(inst):
            cases.append((inst.name, desc, m))
    chunks, line_of = [], {}
    line = 1
    for n, (name, desc, m) in enumerate(cases):
        head, op = m.text(f"{name}_{n}")
        chunk = head + "  " + op + "\n  return\n}\n"
        line_of[line + 1] = n
        chunks.append(chunk)
        line += chunk.count("\n") + 1
    text = "// -----\n".join(chunks)
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
    proc = subprocess.run([fuel_opt, "-split-input-file", f.name, "-o", "/dev/null"],
                          capture_output=True, text=True, timeout=600)
    Path(f.name).unlink()
    if proc.returncode < 0 or proc.returncode > 128 or "Sanitizer" in proc.stderr:
        raise RuntimeError("fuel-opt crashed on the mutants:\n" + proc.stderr[-4000:])
    found = {}
    for diag in proc.stderr.splitlines():
        m = _DIAG.match(diag)
        if not m or int(m.group(1)) not in line_of:
            continue
        message = m.group(2).replace("'fuel.fused' op ", "")
        n = line_of[int(m.group(1))]
        name, desc, mutant = cases[n]
        if not message.startswith(name + ": "):
            continue
        if message[len(name) + 2:].split(":")[0] not in RULES:
            continue
        key = normalize(message)
        if key not in found:
            found[key] = (message, desc, mutant)
    return found


def render(found):
    out = ["// RUN: fuel-opt %s -split-input-file -verify-diagnostics", "",
           "// Generated by test/fuzz/rule_cases.py: one case for every check of",
           "// every op that a one-thing mutation of a valid op (ops.mlir) reaches.",
           "// Do not edit; run the script again after changing a rule.", ""]
    for n, key in enumerate(sorted(found)):
        message, desc, mutant = found[key]
        head, op = mutant.text(f"{mutant.name}_{n}")
        out += ["// -----", "", f"// {desc}", head.rstrip("\n"),
                f"  // expected-error @+1 {{{{{message}}}}}", f"  {op}", "  return", "}", ""]
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fuel-opt", default="fuel-opt")
    parser.add_argument("--out", type=Path, default=OUTPUT)
    args = parser.parse_args()
    found = collect(args.fuel_opt)
    args.out.write_text(render(found))
    print(f"{len(found)} checks, written to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
