// RUN: fuel-opt %s -canonicalize="test-convergence" -split-input-file | FileCheck %s

// inplace_affine(x) {mul = 1, add = 0} = 1 * x + 0 = x.
// CHECK-LABEL: func @affine_identity
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-NOT: fuel.fused
// CHECK: return %[[X]]
func.func @affine_identity(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = fuel.fused inplace_affine {mul = 1.0 : f64, add = 0.0 : f64} (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// The same op on a memref writes in place: it is never folded away.
// CHECK-LABEL: func @affine_identity_memref
// CHECK: fuel.fused inplace_affine {add = 0.000000e+00 : f64, mul = 1.000000e+00 : f64} (%{{.*}}) : (memref<4x8xf32>) -> ()
func.func @affine_identity_memref(%x: memref<4x8xf32>) {
  fuel.fused inplace_affine {mul = 1.0 : f64, add = 0.0 : f64} (%x) : (memref<4x8xf32>) -> ()
  return
}

// -----

// Not an identity: mul = 1, add = 1.
// CHECK-LABEL: func @affine_not_identity
// CHECK: fuel.fused inplace_affine {add = 1.000000e+00 : f64, mul = 1.000000e+00 : f64}
func.func @affine_not_identity(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = fuel.fused inplace_affine {mul = 1.0 : f64, add = 1.0 : f64} (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// 3 * (2 * x + 1) + 4 = 6 * x + 7.
// CHECK-LABEL: func @affine_chain
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK: %[[Y:.+]] = fuel.fused inplace_affine {add = 7.000000e+00 : f64, mul = 6.000000e+00 : f64} (%[[X]])
// CHECK-NOT: fuel.fused
// CHECK: return %[[Y]]
func.func @affine_chain(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = fuel.fused inplace_affine {mul = 2.0 : f64, add = 1.0 : f64} (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = fuel.fused inplace_affine {mul = 3.0 : f64, add = 4.0 : f64} (%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// 0.5 * (2 * x - 2) + 1 = x: composed, then folded away.
// CHECK-LABEL: func @affine_chain_to_identity
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-NOT: fuel.fused
// CHECK: return %[[X]]
func.func @affine_chain_to_identity(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = fuel.fused inplace_affine {mul = 2.0 : f64, add = -2.0 : f64} (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = fuel.fused inplace_affine {mul = 0.5 : f64, add = 1.0 : f64} (%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// The inner op has another use: composing would not remove it, so the chain
// stays.
// CHECK-LABEL: func @affine_chain_shared
// CHECK-COUNT-2: fuel.fused inplace_affine
func.func @affine_chain_shared(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = fuel.fused inplace_affine {mul = 2.0 : f64, add = 1.0 : f64} (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = fuel.fused inplace_affine {mul = 3.0 : f64, add = 4.0 : f64} (%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Chains of destructive ops on memrefs are writes: they stay.
// CHECK-LABEL: func @affine_chain_memref
// CHECK-COUNT-2: fuel.fused inplace_affine
func.func @affine_chain_memref(%x: memref<4x8xf32>) {
  fuel.fused inplace_affine {mul = 2.0 : f64, add = 1.0 : f64} (%x) : (memref<4x8xf32>) -> ()
  fuel.fused inplace_affine {mul = 3.0 : f64, add = 4.0 : f64} (%x) : (memref<4x8xf32>) -> ()
  return
}

// -----

// softmax over a last dim of size 1: exp(x - x) / exp(x - x) = 1.
// CHECK-LABEL: func @softmax_size_one
// CHECK: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<4x1xf16>
// CHECK-NOT: fuel.fused
// CHECK: return %[[ONE]]
func.func @softmax_size_one(%x: tensor<4x1xf16>) -> tensor<4x1xf16> {
  %0 = fuel.fused softmax_last_dim (%x) : (tensor<4x1xf16>) -> tensor<4x1xf16>
  return %0 : tensor<4x1xf16>
}

// -----

// A last dim that is not 1 (or not known) keeps the op.
// CHECK-LABEL: func @softmax_not_size_one
// CHECK-COUNT-2: fuel.fused softmax_last_dim
func.func @softmax_not_size_one(%x: tensor<4x2xf32>, %y: tensor<1x?xf32>) -> (tensor<4x2xf32>, tensor<1x?xf32>) {
  %0 = fuel.fused softmax_last_dim (%x) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %1 = fuel.fused softmax_last_dim (%y) : (tensor<1x?xf32>) -> tensor<1x?xf32>
  return %0, %1 : tensor<4x2xf32>, tensor<1x?xf32>
}

// -----

// powi_backward: exp * x^(exp - 1) * g is g for exp = 1 and 0 for exp = 0.
// CHECK-LABEL: func @powi_backward
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>, %[[G:.+]]: tensor<4xf32>)
// CHECK: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: %[[TWO:.+]] = fuel.fused powi_backward {exp = 2 : i32} (%[[X]], %[[G]])
// CHECK: return %[[G]], %[[ZERO]], %[[TWO]]
func.func @powi_backward(%x: tensor<4xf32>, %g: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = fuel.fused powi_backward {exp = 1 : i32} (%x, %g) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = fuel.fused powi_backward {exp = 0 : i32} (%x, %g) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = fuel.fused powi_backward {exp = 2 : i32} (%x, %g) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// fused_linear with a zero bias: a @ b + 0 = a @ b, accumulating in f32.
// CHECK-LABEL: func @linear_zero_bias
// CHECK-SAME: (%[[A:.+]]: tensor<2x4x8xf16>, %[[B:.+]]: tensor<8x16xf16>)
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[A2:.+]] = tensor.collapse_shape %[[A]] {{\[}}[0, 1], [2]] : tensor<2x4x8xf16> into tensor<8x8xf16>
// CHECK: %[[FILL:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<8x16xf32>)
// CHECK: %[[MM:.+]] = linalg.matmul ins(%[[A2]], %[[B]] : tensor<8x8xf16>, tensor<8x16xf16>) outs(%[[FILL]] : tensor<8x16xf32>)
// CHECK: %[[T:.+]] = arith.truncf %[[MM]] : tensor<8x16xf32> to tensor<8x16xf16>
// CHECK: %[[Y:.+]] = tensor.expand_shape %[[T]] {{\[}}[0, 1], [2]] output_shape [2, 4, 16]
// CHECK-NOT: fuel.fused
// CHECK: return %[[Y]]
func.func @linear_zero_bias(%a: tensor<2x4x8xf16>, %b: tensor<8x16xf16>) -> tensor<2x4x16xf16> {
  %bias = arith.constant dense<0.0> : tensor<16xf16>
  %0 = fuel.fused fused_linear (%a, %b, %bias) : (tensor<2x4x8xf16>, tensor<8x16xf16>, tensor<16xf16>) -> tensor<2x4x16xf16>
  return %0 : tensor<2x4x16xf16>
}

// -----

// CHECK-LABEL: func @linear_zero_bias_2d_dynamic
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x8xf32>, tensor<8x16xf32>) outs(%{{.*}} : tensor<?x16xf32>)
// CHECK-NOT: fuel.fused
func.func @linear_zero_bias_2d_dynamic(%a: tensor<?x8xf32>, %b: tensor<8x16xf32>) -> tensor<?x16xf32> {
  %bias = arith.constant dense<0.0> : tensor<16xf32>
  %0 = fuel.fused fused_linear (%a, %b, %bias) : (tensor<?x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

// A non-zero or non-constant bias keeps the op.
// CHECK-LABEL: func @linear_bias_kept
// CHECK-COUNT-2: fuel.fused fused_linear
func.func @linear_bias_kept(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %one = arith.constant dense<1.0> : tensor<16xf32>
  %0 = fuel.fused fused_linear (%a, %b, %one) : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %1 = fuel.fused fused_linear (%a, %b, %c) : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  return %0, %1 : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// Every backward is linear in its upstream gradient: g = 0 gives 0.
// CHECK-LABEL: func @zero_upstream_gradient
// CHECK-DAG: %[[Z1:.+]] = arith.constant dense<0.000000e+00> : tensor<4x8xf32>
// CHECK-DAG: %[[Z2:.+]] = arith.constant dense<0.000000e+00> : tensor<1x2x8x16xf32>
// CHECK-NOT: fuel.fused
// CHECK: return %[[Z1]], %[[Z1]], %[[Z1]], %[[Z2]]
func.func @zero_upstream_gradient(%x: tensor<4x8xf32>, %q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<1x2x8x16xf32>) {
  %g = arith.constant dense<0.0> : tensor<4x8xf32>
  %do = arith.constant dense<0.0> : tensor<1x4x8x16xf32>
  %0 = fuel.fused softmax_last_dim_backward (%x, %g) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = fuel.fused rms_norm_last_dim_backward {eps = 1.0e-05 : f64} (%x, %g) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = fuel.fused layer_norm_last_dim_backward {eps = 1.0e-05 : f64} (%x, %g) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = fuel.fused flash_attn_backward_k {softmax_scale = 0.25 : f32} (%q, %k, %k, %do) : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %0, %1, %2, %3 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<1x2x8x16xf32>
}

// -----

// A zero forward input is not a zero gradient.
// CHECK-LABEL: func @zero_forward_input
// CHECK: fuel.fused softmax_last_dim_backward
func.func @zero_forward_input(%g: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = arith.constant dense<0.0> : tensor<4x8xf32>
  %0 = fuel.fused softmax_last_dim_backward (%y, %g) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// rope with cos = 1 and sin = 0: x * 1 + rotate_half(x) * 0 = x.
// CHECK-LABEL: func @rope_identity
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x8x16xf32>
// CHECK: %[[R:.+]] = fuel.fused rope
// CHECK: return %[[X]], %[[R]]
func.func @rope_identity(%x: tensor<1x4x8x16xf32>, %cos: tensor<8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) {
  %one = arith.constant dense<1.0> : tensor<8x16xf32>
  %zero = arith.constant dense<0.0> : tensor<8x16xf32>
  %0 = fuel.fused rope (%x, %one, %zero) : (tensor<1x4x8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<1x4x8x16xf32>
  // cos is not known: kept.
  %1 = fuel.fused rope (%x, %cos, %zero) : (tensor<1x4x8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<1x4x8x16xf32>
  return %0, %1 : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
}

// -----

// Params spelled with their default values, or an optional param spelled
// explicitly unset, take the canonical form (the generic form keeps what it
// is given until canonicalized).
// CHECK-LABEL: func @canonical_params
// CHECK: fuel.fused conv2d (%{{.*}}, %{{.*}}) :
// CHECK: fuel.fused conv_transpose_2d (%{{.*}}, %{{.*}}) :
// CHECK: fuel.fused flash_attn {softmax_scale = 1.000000e+00 : f32} (%{{.*}}, %{{.*}}, %{{.*}}) :
func.func @canonical_params(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>, %q: tensor<1x2x4x8xf32>)
    -> (tensor<1x4x6x6xf32>, tensor<1x4x10x10xf32>, tensor<1x2x4x8xf32>) {
  %0 = "fuel.fused"(%x, %w) {kind = #fuel.kind<conv2d>, params = {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, groups = 1 : i64}} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1 = "fuel.fused"(%x, %w) {kind = #fuel.kind<conv_transpose_2d>, params = {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, output_padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64}} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x10x10xf32>
  %2 = "fuel.fused"(%q, %q, %q) {kind = #fuel.kind<flash_attn>, params = {softmax_scale = 1.0 : f32, causal = false, window_size_left, softcap}} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %0, %1, %2 : tensor<1x4x6x6xf32>, tensor<1x4x10x10xf32>, tensor<1x2x4x8xf32>
}

// -----

// Ops no rule applies to are left exactly as they were.
// CHECK-LABEL: func @unchanged
// CHECK: fuel.fused rms_norm_last_dim {eps = 1.000000e-05 : f64}
// CHECK: fuel.fused flash_attn {causal = true, softmax_scale = 1.250000e-01 : f32, window_size_left = 0 : i64}
// CHECK: fuel.fused inplace_affine {add = -0.000000e+00 : f64, mul = 2.000000e+00 : f64}
func.func @unchanged(%x: tensor<4x8xf32>, %q: tensor<1x2x4x8xf32>) -> (tensor<4x8xf32>, tensor<1x2x4x8xf32>, tensor<4x8xf32>) {
  %0 = fuel.fused rms_norm_last_dim {eps = 1.0e-05 : f64} (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = fuel.fused flash_attn {causal = true, softmax_scale = 0.125 : f32, window_size_left = 0 : i64} (%q, %q, %q) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %2 = fuel.fused inplace_affine {mul = 2.0 : f64, add = -0.0 : f64} (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1, %2 : tensor<4x8xf32>, tensor<1x2x4x8xf32>, tensor<4x8xf32>
}
