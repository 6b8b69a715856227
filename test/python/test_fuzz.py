"""A short, deterministic campaign of the fuzzer (test/fuzz/fuzz.py):
random fuel.fused ops (wrong names, operand counts, element types, shapes
with 0, 1, dynamic and huge dims, params of the wrong kind, out of range,
NaN) and mutated lit and corpus inputs, through the fuse, decompose,
codegen passes and every pipeline variant. Nothing may crash: a bad input
gets a diagnostic. (A long run: `python test/fuzz/fuzz.py --cases 5000`.)"""

import pytest

from conftest import load_fuzz_tool


@pytest.mark.parametrize("seed", [0, 1])
def test_no_crash(fuel_opt, seed):
    fuzz = load_fuzz_tool("fuzz")
    outcome = fuzz.run(fuel_opt, cases=60, seed=seed)
    assert outcome.runs == 60 * len(fuzz.PIPELINES)
    report = "\n\n".join(f"[{kind}] fuel-opt {' '.join(p)}\n{text}\n{err[-2000:]}"
                         for kind, p, text, err in outcome.crashes)
    assert not outcome.crashes, report


def test_classifies_crashes():
    fuzz = load_fuzz_tool("fuzz")
    project = " #7 0x1 mlir::fuel::scheduleRowWise(...)\n"
    upstream = " #7 0x1 mlir::bufferization::promoteBufferResultsToOutParams(...)\n"
    assert fuzz._classify("PLEASE submit a bug report\n" + project, -11) == "project"
    assert fuzz._classify("Stack dump:\n" + upstream, -6) == "upstream"
    assert fuzz._classify("error: 'fuel.fused' op ...", 1) is None
    # Reports of a sanitizer build (scripts/sanitize.sh).
    asan = ("==1==ERROR: AddressSanitizer: heap-use-after-free on address 0x1\n"
            "    #0 0x1 in mlir::fuel::tileAndFuseRoot(...)\n")
    assert fuzz._classify(asan, -6) == "project"
    ubsan = (f"{fuzz.ROOT}/lib/IR/RulesQuant.cpp:12:5: runtime error: signed integer "
             "overflow: 4611686018427387904 * 4 cannot be represented in type 'long'\n")
    assert fuzz._classify(ubsan, 1) == "project"
    leak = ("==1==ERROR: LeakSanitizer: detected memory leaks\n"
            "    #0 0x1 in malloc\n    #1 0x2 in mlir::Parser::parse(...)\n")
    assert fuzz._classify(leak, 1) == "upstream"
