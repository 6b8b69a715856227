"""decompose(fuse(f)) computes f for every frontend spelling that the lit
tests in FILES (test/lit/Transforms) fuse: each function of those files is
run before and after --fuel-fuse on the same random inputs (integer inputs:
class targets 0..3, which some cases ignore)."""

import subprocess

import numpy as np
import pytest

from conftest import REPO_ROOT
from fuel_mlir import runner

LIT = REPO_ROOT / "test" / "lit" / "Transforms"
FILES = ["fuse-spellings.mlir", "fuse-conv.mlir", "fuse-loss.mlir", "fuse-aggregate.mlir", "fuse-in-body.mlir"]
CASES = [c for name in FILES for c in (LIT / name).read_text().split("// -----") if "func.func @" in c]


def name_of(case):
    return case.split("func.func @")[1].split("(")[0]


@pytest.mark.parametrize("case", CASES, ids=[name_of(c) for c in CASES])
def test_fused_spelling_computes_the_original(fuel_opt, case):
    fn = name_of(case)
    p = subprocess.run([fuel_opt, "--fuel-fuse"], input=case, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    fused = p.stdout
    # The cases the lit test expects to be left alone must be: no fused op.
    expect_fused = any("fuel.fused" in line and "CHECK-NOT" not in line
                       for line in case.splitlines() if line.startswith("// CHECK"))
    assert ("fuel.fused" in fused) == expect_fused
    f0 = runner.compile(case, fn)
    f1 = runner.compile(fused, fn)
    rng = np.random.default_rng(1)
    shapes = [[d or 3 for d in p.shape] for p in f0.inputs]  # dynamic dims: 3
    args = [rng.integers(0, 4, s).astype(p.dtype) if p.dtype.kind in "iu"
            else rng.standard_normal(s).astype(p.dtype) for p, s in zip(f0.inputs, shapes)]
    want, got = f0(*args), f1(*args)
    # docs/FusedOps.md's f32 tolerances (attention and convolutions: looser, their
    # sums may run in another order).
    loose = any(op in fused for op in ("conv2d", "flash_attn"))
    tolerance = dict(rtol=1e-4, atol=1e-5) if loose else dict(rtol=1e-5, atol=1e-6)
    for w, g in zip(want if isinstance(want, tuple) else (want,), got if isinstance(got, tuple) else (got,)):
        np.testing.assert_allclose(g, w, **tolerance)
