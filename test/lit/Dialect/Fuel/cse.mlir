// RUN: fuel-opt %s -cse -split-input-file | FileCheck %s
// RUN: fuel-opt %s -loop-invariant-code-motion -split-input-file | FileCheck %s --check-prefix=LICM
// RUN: fuel-opt %s -canonicalize="test-convergence" -split-input-file -o /dev/null

// Identical fused ops with bit-identical params merge.
// CHECK-LABEL: func @same_params
func.func @same_params(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // CHECK: %[[A:.+]] = fuel.fused rms_norm_last_dim
  // CHECK-NOT: fuel.fused
  // CHECK: return %[[A]], %[[A]]
  %0 = fuel.fused rms_norm_last_dim {eps = 1.0e-05 : f64} (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = fuel.fused rms_norm_last_dim {eps = 1.0e-05 : f64} (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Different params never merge.
// CHECK-LABEL: func @different_eps
func.func @different_eps(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // CHECK-COUNT-2: fuel.fused rms_norm_last_dim
  %0 = fuel.fused rms_norm_last_dim {eps = 1.0e-05 : f64} (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = fuel.fused rms_norm_last_dim {eps = 1.0e-06 : f64} (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// -0.0 and 0.0 compare equal as numbers but are different params.
// CHECK-LABEL: func @negative_zero
func.func @negative_zero(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // CHECK: fuel.fused inplace_affine {add = -0.000000e+00 : f64
  // CHECK: fuel.fused inplace_affine {add = 0.000000e+00 : f64
  %0 = fuel.fused inplace_affine {mul = 1.0 : f64, add = -0.0 : f64} (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = fuel.fused inplace_affine {mul = 1.0 : f64, add = 0.0 : f64} (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// NaNs with different payloads are different params; the same NaN merges.
// CHECK-LABEL: func @nan_payloads
func.func @nan_payloads(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  // CHECK: %[[A:.+]] = fuel.fused inplace_affine {add = 0x7FF8000000000001 : f64
  // CHECK: %[[B:.+]] = fuel.fused inplace_affine {add = 0x7FF8000000000002 : f64
  // CHECK-NOT: fuel.fused
  // CHECK: return %[[A]], %[[B]], %[[A]]
  %0 = fuel.fused inplace_affine {mul = 1.0 : f64, add = 0x7FF8000000000001 : f64} (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = fuel.fused inplace_affine {mul = 1.0 : f64, add = 0x7FF8000000000002 : f64} (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = fuel.fused inplace_affine {mul = 1.0 : f64, add = 0x7FF8000000000001 : f64} (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A param spelled with its default value is the same op as one that omits
// it: both parse to the canonical form.
// CHECK-LABEL: func @explicit_default
func.func @explicit_default(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) {
  // CHECK: %[[A:.+]] = fuel.fused conv2d (%{{.*}}, %{{.*}})
  // CHECK-NOT: fuel.fused
  // CHECK: return %[[A]], %[[A]]
  %0 = fuel.fused conv2d (%x, %w) : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1 = fuel.fused conv2d {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, groups = 1 : i64} (%x, %w) : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0, %1 : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
}

// -----

// Different ops with the same operands never merge.
// CHECK-LABEL: func @different_ops
func.func @different_ops(%x: tensor<4x8xf32>, %g: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // CHECK: fuel.fused rms_norm_last_dim_backward
  // CHECK: fuel.fused layer_norm_last_dim_backward
  %0 = fuel.fused rms_norm_last_dim_backward {eps = 1.0e-05 : f64} (%x, %g) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = fuel.fused layer_norm_last_dim_backward {eps = 1.0e-05 : f64} (%x, %g) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A destructive op on a memref writes its operand: two of them are two
// writes, and neither is merged nor deleted.
// CHECK-LABEL: func @destructive_memref
func.func @destructive_memref(%m: memref<4x8xf32>) {
  // CHECK-COUNT-2: fuel.fused inplace_affine {add = 1.000000e+00 : f64, mul = 2.000000e+00 : f64} (%{{.*}}) : (memref<4x8xf32>) -> ()
  fuel.fused inplace_affine {mul = 2.0 : f64, add = 1.0 : f64} (%m) : (memref<4x8xf32>) -> ()
  fuel.fused inplace_affine {mul = 2.0 : f64, add = 1.0 : f64} (%m) : (memref<4x8xf32>) -> ()
  return
}

// -----

// A pure fused op is hoisted out of a loop; a destructive one on a memref is
// not.
// LICM-LABEL: func @hoisting
func.func @hoisting(%x: tensor<4x8xf32>, %m: memref<4x8xf32>, %n: index) -> tensor<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // LICM: fuel.fused softmax_last_dim
  // LICM: scf.for
  // LICM-NEXT: fuel.fused inplace_affine
  // LICM-NOT: fuel.fused softmax_last_dim
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> tensor<4x8xf32> {
    %s = fuel.fused softmax_last_dim (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    fuel.fused inplace_affine {mul = 2.0 : f64, add = 1.0 : f64} (%m) : (memref<4x8xf32>) -> ()
    scf.yield %s : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}
