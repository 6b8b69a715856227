// --fuel-fuse finds ops defined by recipes: the module's own and those of a
// library (recipes=), whose recipes it copies into the module.
// RUN: fuel-opt %s --split-input-file --fuel-fuse="recipes=%S/Inputs/recipes.mlir" \
// RUN:   | FileCheck %s
// RUN: fuel-opt %s --split-input-file --fuel-fuse \
// RUN:   | FileCheck %s --check-prefix=NOLIB
// RUN: fuel-opt %s --split-input-file \
// RUN:   --fuel-fuse="recipes=%S/Inputs/recipes.mlir ops=leaky_relu,silu" \
// RUN:   | FileCheck %s --check-prefix=SELECT
// RUN: not fuel-opt %s --fuel-fuse="recipes=%S/Inputs/missing.mlir" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MISSING
// RUN: not fuel-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(fuel-fuse{recipes=%S/Inputs/recipes.mlir}))" \
// RUN:   2>&1 | FileCheck %s --check-prefix=NESTED

// SiLU and a leaky ReLU in the normal form (what --fuel-decompose makes of
// them), with no recipe in the module: found from the library, whose two
// recipes are copied in, before the function.
// CHECK:       fuel.recipe @leaky_relu
// CHECK:       fuel.recipe @silu
// CHECK-LABEL: func.func @silu_then_leaky
// CHECK-NEXT:    %[[S:.*]] = fuel.fused @silu (%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[L:.*]] = fuel.fused @leaky_relu {alpha = 2.500000e-01 : f64} (%[[S]])
// CHECK-NEXT:    return %[[L]]
// ops= selects ops by any of their names (the module's swish is the
// library's silu).
// SELECT-LABEL: func.func @silu_then_leaky
// SELECT-NEXT:    fuel.fused @silu
// SELECT-NEXT:    fuel.fused @leaky_relu
// Without the library, nothing is found.
// NOLIB-LABEL: func.func @silu_then_leaky
// NOLIB-NOT:     fuel.fused
// MISSING: fuel-fuse: cannot read the recipes in '{{.*}}missing.mlir'
// NESTED: fuel-fuse: the recipe of silu cannot be put into the IR (run the pass on a module)
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @silu_then_leaky(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %cst = arith.constant 1.000000e+00 : f32
  %0 = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x8xf32>) outs(%0 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %12 = arith.negf %in : f32
    linalg.yield %12 : f32
  } -> tensor<4x8xf32>
  %2 = tensor.empty() : tensor<4x8xf32>
  %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%1 : tensor<4x8xf32>) outs(%2 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %12 = math.exp %in : f32
    linalg.yield %12 : f32
  } -> tensor<4x8xf32>
  %4 = tensor.empty() : tensor<4x8xf32>
  %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%3 : tensor<4x8xf32>) outs(%4 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %12 = arith.addf %cst, %in : f32
    linalg.yield %12 : f32
  } -> tensor<4x8xf32>
  %6 = tensor.empty() : tensor<4x8xf32>
  %7 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %5 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%6 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %12 = arith.divf %in, %in_1 : f32
    linalg.yield %12 : f32
  } -> tensor<4x8xf32>
  %cst_0 = arith.constant 2.500000e-01 : f32
  %8 = tensor.empty() : tensor<4x8xf32>
  %9 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%7 : tensor<4x8xf32>) outs(%8 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %12 = arith.mulf %in, %cst_0 : f32
    linalg.yield %12 : f32
  } -> tensor<4x8xf32>
  %10 = tensor.empty() : tensor<4x8xf32>
  %11 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%9, %7 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%10 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %12 = arith.maximumf %in, %in_1 : f32
    linalg.yield %12 : f32
  } -> tensor<4x8xf32>
  return %11 : tensor<4x8xf32>
}

// -----

// A recipe of the module itself is searched for, under its own name (here a
// second name of the library's SiLU: the op it defines is the same).
// CHECK-LABEL: fuel.recipe @swish
// CHECK-NOT:   fuel.recipe
// CHECK-LABEL: func.func @own_recipe
// CHECK-NEXT:    fuel.fused @swish (%arg0) : (tensor<16xf32>) -> tensor<16xf32>
// SELECT-LABEL: func.func @own_recipe
// SELECT-NEXT:    fuel.fused @swish
// NOLIB-LABEL: func.func @own_recipe
// NOLIB-NEXT:    fuel.fused @swish
#id = affine_map<(d0) -> (d0)>
fuel.recipe @swish(%v: f32) -> f32 {
  %one = arith.constant 1.0 : f32
  %n = arith.negf %v : f32
  %e = math.exp %n : f32
  %d = arith.addf %one, %e : f32
  %y = arith.divf %v, %d : f32
  fuel.yield %y : f32
}
func.func @own_recipe(%x: tensor<16xf32>) -> tensor<16xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    %ex = math.exp %n : f32
    %d = arith.addf %ex, %one : f32
    %y = arith.divf %in, %d : f32
    linalg.yield %y : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// Both ops in one body (after elementwise fusion): SiLU is found inside
// it, and what is left of the body is then found as the leaky ReLU of it.
// CHECK-LABEL: func.func @one_body
// CHECK:         %[[S:.*]] = fuel.fused @silu (%arg0)
// CHECK-NEXT:    fuel.fused @leaky_relu {alpha = 2.500000e-01 : f64} (%[[S]])
// CHECK-NOT:     linalg.generic
#rows = affine_map<(d0, d1) -> (d0, d1)>
func.func @one_body(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %cst = arith.constant 2.500000e-01 : f32
  %cst_0 = arith.constant 1.000000e+00 : f32
  %0 = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x8xf32>) outs(%0 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %2 = arith.negf %in : f32
    %3 = math.exp %2 : f32
    %4 = arith.addf %3, %cst_0 : f32
    %5 = arith.divf %in, %4 : f32
    %6 = arith.mulf %5, %cst : f32
    %7 = arith.maximumf %6, %5 : f32
    linalg.yield %7 : f32
  } -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
