"""Compile work does not grow with tensor sizes: a causal flash_attn over
10^6 tokens, a conv2d on [1, 64, 4096, 4096], a softmax over 10^6 rows of
65536 and a 100000 x 8192 x 8192 fused_linear compile through
fuel-decompose and every fuel-to-llvm variant to as much IR as the same ops
on moderate shapes (nothing is unrolled per element), well within a minute
each (a guard against hangs, not a timing)."""

import subprocess

import pytest

OPS = """
func.func @attn(%q: tensor<1x8xSx64xf32>, %k: tensor<1x8xSx64xf32>, %v: tensor<1x8xSx64xf32>) -> tensor<1x8xSx64xf32> {
  %o = fuel.fused flash_attn {causal = true, softmax_scale = 0.125 : f32} (%q, %k, %v) : (tensor<1x8xSx64xf32>, tensor<1x8xSx64xf32>, tensor<1x8xSx64xf32>) -> tensor<1x8xSx64xf32>
  return %o : tensor<1x8xSx64xf32>
}
func.func @conv(%x: tensor<1x64xHxHxf32>, %w: tensor<64x64x3x3xf32>) -> tensor<1x64xOxOxf32> {
  %y = fuel.fused conv2d (%x, %w) : (tensor<1x64xHxHxf32>, tensor<64x64x3x3xf32>) -> tensor<1x64xOxOxf32>
  return %y : tensor<1x64xOxOxf32>
}
func.func @rows(%x: tensor<RxNxf32>, %a: tensor<MxKxf32>, %b: tensor<KxKxf32>, %c: tensor<Kxf32>) -> (tensor<RxNxf32>, tensor<MxKxf32>) {
  %y = fuel.fused softmax_last_dim (%x) : (tensor<RxNxf32>) -> tensor<RxNxf32>
  %l = fuel.fused fused_linear (%a, %b, %c) : (tensor<MxKxf32>, tensor<KxKxf32>, tensor<Kxf32>) -> tensor<MxKxf32>
  return %y, %l : tensor<RxNxf32>, tensor<MxKxf32>
}
"""


def module(s, h, r, n, m, k):
    text = OPS
    for key, value in [("xSx", f"x{s}x"), ("xHxH", f"x{h}x{h}"), ("xOxO", f"x{h - 2}x{h - 2}"),
                       ("RxN", f"{r}x{n}"), ("MxK", f"{m}x{k}"), ("KxK", f"{k}x{k}"),
                       ("<Kx", f"<{k}x")]:
        text = text.replace(key, value)
    return text


SMALL = module(4096, 256, 1024, 4096, 1024, 1024)
BIG = module(1_000_000, 4096, 1_000_000, 65536, 100_000, 8192)


@pytest.mark.parametrize("pipeline", [
    "--fuel-decompose", "--fuel-to-llvm", "--fuel-to-llvm=codegen=false",
    "--fuel-to-llvm=out-params=true threads=2"])
def test_compile_work_does_not_grow(fuel_opt, tmp_path, pipeline):
    sizes = []
    for name, text in [("small", SMALL), ("big", BIG)]:
        path = tmp_path / f"{name}.mlir"
        path.write_text(text)
        out = subprocess.run([fuel_opt, str(path), pipeline], capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        sizes.append(len(out.stdout))
    small, big = sizes
    assert big < 1.2 * small + 4096, (small, big)


def test_fuse_work_is_bounded_on_shared_products(fuel_opt, tmp_path):
    # A body that squares a value 40 times shares every subproduct: matched
    # against a recipe's product, the factors' walk is bounded, not one
    # visit per path (2^40); nothing is found and the module is left as it was.
    squares = ["    %v0 = arith.mulf %in, %in : f32"] + [
        f"    %v{i} = arith.mulf %v{i - 1}, %v{i - 1} : f32" for i in range(1, 40)]
    text = "\n".join([
        "fuel.recipe @cube(%x: f32) -> f32 {",
        "  %a = arith.mulf %x, %x : f32",
        "  %b = arith.mulf %a, %x : f32",
        "  fuel.yield %b : f32",
        "}",
        "#id = affine_map<(d0) -> (d0)>",
        "func.func @deep(%arg0: tensor<8xf32>) -> tensor<8xf32> {",
        "  %0 = tensor.empty() : tensor<8xf32>",
        '  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}'
        " ins(%arg0 : tensor<8xf32>) outs(%0 : tensor<8xf32>) {",
        "  ^bb0(%in: f32, %out: f32):", *squares,
        "    linalg.yield %v39 : f32",
        "  } -> tensor<8xf32>",
        "  return %1 : tensor<8xf32>",
        "}", ""])
    path = tmp_path / "deep.mlir"
    path.write_text(text)
    out = subprocess.run([fuel_opt, str(path), "--fuel-fuse"], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "fuel.fused" not in out.stdout
    assert out.stdout.count("arith.mulf") == 40 + 2
