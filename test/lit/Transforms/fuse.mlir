// RUN: fuel-opt %s --fuel-decompose --fuel-fuse -split-input-file | FileCheck %s
// RUN: fuel-opt %s --fuel-decompose --fuel-fuse="ops=softmax_last_dim" -split-input-file | FileCheck %s --check-prefix=ONLY
// RUN: fuel-opt %s --fuel-fuse="report=near-misses" -split-input-file -verify-diagnostics -o /dev/null
// RUN: not fuel-opt %s --fuel-fuse="ops=softmax" -split-input-file 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not fuel-opt %s --fuel-fuse="ops=causal_conv1d" -split-input-file 2>&1 | FileCheck %s --check-prefix=NORECIPE
// RUN: not fuel-opt %s --fuel-fuse="ops=powi_backward" -split-input-file 2>&1 | FileCheck %s --check-prefix=NOTSEARCHED
// RUN: not fuel-opt %s --fuel-fuse="report=all" -split-input-file 2>&1 | FileCheck %s --check-prefix=BADREPORT
// RUN: fuel-opt %s --fuel-fuse="report=misses ops=softmax_last_dim,rms_norm_last_dim" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISSES

// fuse(decompose(op)) gives back op, with its params: the matcher reads the
// same recipes the decomposition instantiates. f16 goes through the f32
// extf/truncf generics; params materialized as f32 come back as the
// shortest decimal (1e-5, not 9.99999974E-6).

// CHECK-LABEL: func @round_trip
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[H:.+]]: tensor<2x?x8xf16>, %[[A:.+]]: tensor<2x3x4xf32>, %[[B:.+]]: tensor<4x5xf32>, %[[C:.+]]: tensor<5xf32>, %[[R:.+]]: tensor<1x2x4x8xf32>, %[[COS:.+]]: tensor<4x8xf32>, %[[G:.+]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[S:.+]] = fuel.fused softmax_last_dim (%[[X]])
// CHECK-NEXT: %[[N:.+]] = fuel.fused rms_norm_last_dim {eps = 1.000000e-05 : f64} (%[[H]]) : (tensor<2x?x8xf16>) -> tensor<2x?x8xf16>
// CHECK-NEXT: %[[L:.+]] = fuel.fused fused_linear (%[[A]], %[[B]], %[[C]])
// CHECK-NEXT: %[[P:.+]] = fuel.fused rope (%[[R]], %[[COS]], %[[COS]])
// CHECK-NEXT: %[[LN:.+]] = fuel.fused layer_norm_last_dim {eps = 9.9999999999999995E-7 : f64} (%[[X]])
// CHECK-NEXT: %[[SB:.+]] = fuel.fused softmax_last_dim_backward (%[[X]], %[[G]])
// CHECK-NEXT: %[[LB:.+]] = fuel.fused layer_norm_last_dim_backward {eps = 1.000000e-05 : f64} (%[[X]], %[[G]])
// CHECK-NEXT: %[[RB:.+]] = fuel.fused rms_norm_last_dim_backward {eps = 1.000000e-05 : f64} (%[[X]], %[[G]])
// CHECK-NEXT: %[[AF:.+]] = fuel.fused inplace_affine {add = 5.000000e-01 : f64, mul = 2.000000e+00 : f64} (%[[X]])
// CHECK-NEXT: return %[[S]], %[[N]], %[[L]], %[[P]], %[[LN]], %[[SB]], %[[LB]], %[[RB]], %[[AF]]
// ONLY-LABEL: func @round_trip
// ONLY: fuel.fused softmax_last_dim
// ONLY-NOT: fuel.fused
// UNKNOWN: error: fuel-fuse: unknown fused op 'softmax' in ops=
// NORECIPE: error: fuel-fuse: causal_conv1d has no recipe, so it cannot be fused (decompose-only
// MISSES-DAG: remark: fuel-fuse miss: softmax_last_dim (100%): an intermediate value has another user
// MISSES-DAG: remark: fuel-fuse miss: rms_norm_last_dim (66%): an input is bound to two values (at arith.mulf
// BADREPORT: error: fuel-fuse: unknown report 'all' (expected 'near-misses' or 'misses')
// NOTSEARCHED: error: fuel-fuse: powi_backward is not searched for (fuel-fuse does not search for it: its structure depends on the integer exp
func.func @round_trip(%x: tensor<4x8xf32>, %h: tensor<2x?x8xf16>, %a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>, %c: tensor<5xf32>, %r: tensor<1x2x4x8xf32>, %cos: tensor<4x8xf32>, %g: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<2x?x8xf16>, tensor<2x3x5xf32>, tensor<1x2x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = fuel.fused softmax_last_dim (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = fuel.fused rms_norm_last_dim {eps = 1.0e-5 : f64} (%h) : (tensor<2x?x8xf16>) -> tensor<2x?x8xf16>
  %2 = fuel.fused fused_linear (%a, %b, %c) : (tensor<2x3x4xf32>, tensor<4x5xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
  %3 = fuel.fused rope (%r, %cos, %cos) : (tensor<1x2x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<1x2x4x8xf32>
  %4 = fuel.fused layer_norm_last_dim {eps = 1.0e-6 : f64} (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = fuel.fused softmax_last_dim_backward (%x, %g) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %6 = fuel.fused layer_norm_last_dim_backward {eps = 1.0e-5 : f64} (%x, %g) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %7 = fuel.fused rms_norm_last_dim_backward {eps = 1.0e-5 : f64} (%x, %g) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %8 = fuel.fused inplace_affine {mul = 2.0 : f64, add = 0.5 : f64} (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<4x8xf32>, tensor<2x?x8xf16>, tensor<2x3x5xf32>, tensor<1x2x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// The normal form of softmax whose exp is also returned: fusing would lose
// the value another user reads, so nothing is fused and nothing changes.
// CHECK-LABEL: func @extra_use
// CHECK-NOT: fuel.fused
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: return
func.func @extra_use(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %r0 = tensor.empty() : tensor<4xf32>
  %t0 = tensor.empty() : tensor<4x8xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%minit : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.maximumf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %sub = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %max : tensor<4x8xf32>, tensor<4xf32>) outs(%t0 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %v = arith.subf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%sub : tensor<4x8xf32>) outs(%t0 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%r0 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%exp : tensor<4x8xf32>) outs(%sinit : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  // expected-remark @+1 {{fuel-fuse near miss: softmax_last_dim: an intermediate value has another user}}
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%exp, %sum : tensor<4x8xf32>, tensor<4xf32>) outs(%t0 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %v = arith.divf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %y, %exp : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Not softmax: the max reduction starts from 0, not -inf (different math
// for all-negative rows).
// CHECK-LABEL: func @wrong_identity
// CHECK-NOT: fuel.fused
// CHECK: arith.maximumf
func.func @wrong_identity(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %r0 = tensor.empty() : tensor<4xf32>
  %t0 = tensor.empty() : tensor<4x8xf32>
  %minit = linalg.fill ins(%zero : f32) outs(%r0 : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%minit : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.maximumf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %sub = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %max : tensor<4x8xf32>, tensor<4xf32>) outs(%t0 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %v = arith.subf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%sub : tensor<4x8xf32>) outs(%t0 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%r0 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%exp : tensor<4x8xf32>) outs(%sinit : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  // expected-remark @+1 {{fuel-fuse near miss: softmax_last_dim: a reduction does not start from its identity}}
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%exp, %sum : tensor<4x8xf32>, tensor<4xf32>) outs(%t0 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %v = arith.divf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Ops that are not a recipe stay exactly as they were.
// CHECK-LABEL: func @untouched
// CHECK: linalg.matmul
// CHECK-NOT: fuel.fused
func.func @untouched(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
