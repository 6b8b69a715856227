"""The package in the upstream-binding style, and fuel-opt."""

import importlib
import subprocess

import pytest

from fuel_mlir import ir, passmanager


@pytest.mark.parametrize("dialect", [
    "arith", "bufferization", "func", "linalg", "math", "memref", "scf", "tensor",
    "tosa", "vector", "gpu", "llvm", "nvvm", "rocdl", "transform", "fuel",
])
def test_dialect_modules_import(dialect):
    importlib.import_module(f"fuel_mlir.dialects.{dialect}")


def test_fuel_dialect_is_registered(ctx):
    m = ir.Module.parse("""
      func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
        %0 = fuel.fused softmax_last_dim (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
        %1 = fuel.fused softmax_last_dim (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
        %2 = arith.addf %0, %1 : tensor<4x8xf32>
        return %2 : tensor<4x8xf32>
      }""")
    passmanager.PassManager.parse("builtin.module(func.func(cse))").run(m.operation)
    assert str(m).count("fuel.fused") == 1


def test_verifier_errors_are_exceptions(ctx):
    with pytest.raises(ir.MLIRError, match="param 'eps' must be > 0"):
        ir.Module.parse("""
          func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
            %0 = fuel.fused rms_norm_last_dim {eps = 0.0 : f64} (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
            return %0 : tensor<4x8xf32>
          }""")


def test_own_package_prefix():
    import fuel_mlir._mlir_libs._mlir as native

    assert native.__name__ == "fuel_mlir._mlir_libs._mlir"
    assert ir.Context.__module__.startswith("fuel_mlir.")


def test_fuel_opt_version(fuel_opt):
    out = subprocess.run([fuel_opt, "--version"], capture_output=True, text=True, check=True).stdout
    assert "fuel-mlir 0.1.0" in out
    assert "22.1.8" in out


def test_fuel_opt_round_trip(fuel_opt, tmp_path):
    src = tmp_path / "a.mlir"
    src.write_text(
        "func.func @f(%x: tensor<2x4x10x10xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x8x8x8xf32> {\n"
        "  %0 = fuel.fused conv2d {groups = 1 : i64} (%x, %w) : (tensor<2x4x10x10xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x8x8xf32>\n"
        "  return %0 : tensor<2x8x8x8xf32>\n}\n")
    out = subprocess.run([fuel_opt, str(src)], capture_output=True, text=True, check=True).stdout
    assert "fuel.fused conv2d (%arg0, %arg1)" in out


def test_fuel_opt_reports_bad_ir(fuel_opt, tmp_path):
    src = tmp_path / "bad.mlir"
    src.write_text(
        "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %0 = fuel.fused rms_norm_last_dim (%x) : (tensor<4xf32>) -> tensor<4xf32>\n"
        "  return %0 : tensor<4xf32>\n}\n")
    proc = subprocess.run([fuel_opt, str(src)], capture_output=True, text=True)
    assert proc.returncode == 1
    assert "missing required param 'eps'" in proc.stderr
