"""Canonicalization converges (test-convergence) on every lit input that
is valid IR, and leaves fused ops that no rule applies to unchanged."""

import subprocess
from pathlib import Path

import pytest

from conftest import REPO_ROOT

LIT = REPO_ROOT / "test" / "lit"
INPUTS = sorted(p for p in LIT.rglob("*.mlir") if "invalid" not in p.stem)


@pytest.mark.parametrize("path", INPUTS, ids=[str(p.relative_to(LIT)) for p in INPUTS])
def test_canonicalize_converges(fuel_opt, path):
    proc = subprocess.run(
        [fuel_opt, str(path), "-split-input-file", '-canonicalize=test-convergence', "-o", "/dev/null"],
        capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_no_rule_leaves_ops_unchanged(fuel_opt, tmp_path):
    src = tmp_path / "a.mlir"
    src.write_text("""
func.func @f(%x: tensor<2x16x64xf32>, %q: tensor<1x4x16x16xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>)
    -> (tensor<2x16x64xf32>, tensor<1x4x16x16xf32>, tensor<2x16x32xf32>) {
  %0 = fuel.fused layer_norm_last_dim {eps = 1.0e-05 : f64} (%x) : (tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  %1 = fuel.fused flash_attn {causal = true, softmax_scale = 2.500000e-01 : f32} (%q, %q, %q) : (tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %2 = fuel.fused fused_linear (%0, %w, %b) : (tensor<2x16x64xf32>, tensor<64x32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return %0, %1, %2 : tensor<2x16x64xf32>, tensor<1x4x16x16xf32>, tensor<2x16x32xf32>
}
""")
    before = subprocess.run([fuel_opt, str(src)], capture_output=True, text=True, check=True).stdout
    after = subprocess.run([fuel_opt, str(src), "--canonicalize", "--cse"], capture_output=True, text=True,
                           check=True).stdout
    fused = lambda text: [l.strip() for l in text.splitlines() if "fuel.fused" in l]
    assert fused(after) == fused(before)
