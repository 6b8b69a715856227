"""Every reason decomposition or codegen gives for leaving an op as it is
(a `why = "..."` in lib/Decompose and lib/Codegen) is exercised by a test:
its text appears in a lit or pytest file, which checks that the op is left
fused (decomposition: a warning and the op still there; codegen: the
`report` remark and the op lowered as decomposed). The exceptions are
guards that a verified op cannot reach, each listed with the rule that
keeps it out."""


from conftest import REPO_ROOT, is_listed, source_strings

# Guards no verified fuel.fused op reaches: (file, start of the reason) ->
# what makes it unreachable.
UNREACHABLE = {
    ("Instantiate.cpp", "operand rank does not match the recipe"):
        "the op's operand specs (ranks) are checked by its verifier",
    ("Instantiate.cpp", "the inputs disagree on the number of leading dims"):
        "the shape rules check the leading dims",
    ("Instantiate.cpp", "an axis of the recipe has no input that carries it"):
        "every recipe axis is carried by an operand the verifier requires",
    ("Instantiate.cpp", "the op has no float operand"):
        "every op with a recipe has a float operand (FuelAnyFloat)",
    ("Instantiate.cpp", "the recipe does not cover "):
        "not a decline: the hand-written decomposition takes over",
    ("Instantiate.cpp", "the recipe's outputs do not match the op's results"):
        "recipes and result specs come from one record",
    ("Quantized.cpp", "w_q is shorter than N rows of K weights"):
        "the qmatmul shape rule requires exactly the words of the blocks",
    ("GpuRowWise.cpp", "the op's last step does not write whole rows"):
        "every result of a row-wise op is a row written by an elementwise last step",
    ("GpuRowWise.cpp", "tiling the op's rows failed"):
        "a parallel linalg op with static shapes tiles",
    ("GpuSchedules.cpp", "it is not computed by a linalg op"):
        "every result of a row-wise op's or fused_linear's decomposition is a linalg op's",
    ("GpuRowWise.cpp", "the row length is not a multiple of a warp"):
        "canScheduleGpuRowWise checks the row length first",
    ("GpuContraction.cpp", "the op's last step is not elementwise over the output"):
        "fused_linear's bias is required: its last step is the bias add",
    ("GpuContraction.cpp", "the output has no block tile of whole thread tiles"):
        "canScheduleGpuContraction requires M and N multiples of the thread tile",
    ("GpuContraction.cpp", "tiling the output into blocks failed"):
        "a parallel linalg op with static shapes tiles",
    ("GpuContraction.cpp", "tiling a block tile into thread tiles failed"):
        "a parallel linalg op with static shapes tiles",
    ("GpuQuantized.cpp", "the op's last step is not a sum of products into an f32 output"):
        "every quantized matmul's decomposition ends with the contraction of the activations "
        "with the dequantized weight, and canScheduleGpuQuantized requires an f32 result",
    ("Schedules.cpp", "the op has no schedule"):
        "fuel-codegen-cpu only tries ops with a schedule",
}


def reasons():
    paths = [p for folder in ("Decompose", "Codegen")
             for p in sorted((REPO_ROOT / "lib" / folder).glob("*.cpp"))]
    return source_strings(paths, r'why = "([^"]+)"')


def test_every_decline_reason_is_tested():
    tests = "\n".join(p.read_text(errors="ignore") for p in (REPO_ROOT / "test").rglob("*")
                      if p.is_file() and p.suffix in (".mlir", ".py", ".td")
                      and p.name != "test_decline_coverage.py")
    found = list(reasons())
    assert len(found) > 30
    untested = []
    for name, reason in found:
        if is_listed(name, reason, UNREACHABLE):
            continue
        if reason[:30] not in tests:
            untested.append(f"{name}: {reason}")
    assert not untested, "decline reasons no test exercises:\n" + "\n".join(untested)
