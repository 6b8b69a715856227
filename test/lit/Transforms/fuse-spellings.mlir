// RUN: fuel-opt %s --fuel-fuse -split-input-file | FileCheck %s
// RUN: fuel-opt %s --fuel-fuse="report=near-misses" -split-input-file -verify-diagnostics -o /dev/null

// Spellings of the same formulas that frontends emit, each fused to the op
// whose recipe it computes, and near-misses that must stay as they are.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>

// torch-mlir's RMSNorm: x^2 as fpowi, mean as a division by the constant
// size, eps an f64 constant truncated in the body, 1/sqrt as rsqrt and a
// multiply, keepdim (size-1) intermediates.
// CHECK-LABEL: func @rms_torch
// CHECK-SAME: (%[[X:.+]]: tensor<4x64xf32>)
// CHECK-NEXT: %[[Y:.+]] = fuel.fused rms_norm_last_dim {eps = 9.9999999999999995E-7 : f64} (%[[X]])
// CHECK-NEXT: return %[[Y]]
func.func @rms_torch(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %c2 = arith.constant 2 : i64
  %zero = arith.constant 0.0 : f32
  %eps = arith.constant 9.9999999999999995E-7 : f64
  %n = arith.constant 64.0 : f32
  %e = tensor.empty() : tensor<4x64xf32>
  %e1 = tensor.empty() : tensor<4x1xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.fpowi %in, %c2 : f32, i64
    linalg.yield %0 : f32
  } -> tensor<4x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x1xf32>) -> tensor<4x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%sq : tensor<4x64xf32>) outs(%init : tensor<4x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<4x1xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%sum : tensor<4x1xf32>) outs(%e1 : tensor<4x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.divf %in, %n : f32
    %1 = arith.truncf %eps : f64 to f32
    %2 = arith.addf %0, %1 : f32
    %3 = math.rsqrt %2 : f32
    linalg.yield %3 : f32
  } -> tensor<4x1xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %r : tensor<4x64xf32>, tensor<4x1xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %0 = arith.mulf %in, %s : f32
    linalg.yield %0 : f32
  } -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#splat3 = affine_map<(d0, d1, d2) -> (0, 0, 0)>
#keep3 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>

// TOSA's: pow(x, 2.0) with the exponent a splat tensor, linalg.reduce and
// an expand_shape back to rank 3, the mean as a multiply by 1/n, eps a splat
// tensor, and the result divided by sqrt written as pow(v, -0.5).
// CHECK-LABEL: func @rms_tosa
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x8xf32>)
// CHECK-NEXT: %[[Y:.+]] = fuel.fused rms_norm_last_dim {eps = 9.9999999999999995E-7 : f64} (%[[X]])
// CHECK-NEXT: return %[[Y]]
func.func @rms_tosa(%x: tensor<2x3x8xf32>) -> tensor<2x3x8xf32> {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant dense<2.0> : tensor<1x1x1xf32>
  %inv = arith.constant dense<1.250000e-01> : tensor<1x1x1xf32>
  %eps = arith.constant dense<9.99999997E-7> : tensor<1x1x1xf32>
  %half = arith.constant dense<-5.000000e-01> : tensor<1x1x1xf32>
  %e = tensor.empty() : tensor<2x3x8xf32>
  %sq = linalg.generic {indexing_maps = [#id3, #splat3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %two : tensor<2x3x8xf32>, tensor<1x1x1xf32>) outs(%e : tensor<2x3x8xf32>) {
  ^bb0(%in: f32, %p: f32, %out: f32):
    %0 = math.powf %in, %p : f32
    linalg.yield %0 : f32
  } -> tensor<2x3x8xf32>
  %e2 = tensor.empty() : tensor<2x3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %sum = linalg.reduce ins(%sq : tensor<2x3x8xf32>) outs(%init : tensor<2x3xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %0 = arith.addf %in, %acc : f32
      linalg.yield %0 : f32
    }
  %sum3 = tensor.expand_shape %sum [[0], [1, 2]] output_shape [2, 3, 1] : tensor<2x3xf32> into tensor<2x3x1xf32>
  %e1 = tensor.empty() : tensor<2x3x1xf32>
  %r = linalg.generic {indexing_maps = [#id3, #splat3, #splat3, #splat3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sum3, %inv, %eps, %half : tensor<2x3x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>) outs(%e1 : tensor<2x3x1xf32>) {
  ^bb0(%in: f32, %i: f32, %ep: f32, %h: f32, %out: f32):
    %0 = arith.mulf %in, %i : f32
    %1 = arith.addf %0, %ep : f32
    %2 = math.powf %1, %h : f32
    linalg.yield %2 : f32
  } -> tensor<2x3x1xf32>
  %y = linalg.generic {indexing_maps = [#id3, #keep3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %r : tensor<2x3x8xf32>, tensor<2x3x1xf32>) outs(%e : tensor<2x3x8xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %0 = arith.mulf %s, %in : f32
    linalg.yield %0 : f32
  } -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// PyTorch's layer norm: the variance computed in f64 from an extf of x and
// truncated back; the output mean in f32. One op, computed in f32.
// CHECK-LABEL: func @layer_norm_f64_variance
// CHECK-SAME: (%[[X:.+]]: tensor<4x16xf32>)
// CHECK-NEXT: %[[Y:.+]] = fuel.fused layer_norm_last_dim {eps = 1.000000e-05 : f64} (%[[X]])
// CHECK-NEXT: return %[[Y]]
func.func @layer_norm_f64_variance(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %z64 = arith.constant 0.0 : f64
  %z32 = arith.constant 0.0 : f32
  %n64 = arith.constant 16.0 : f64
  %n32 = arith.constant 16.0 : f32
  %eps = arith.constant 1.0e-5 : f64
  %e64 = tensor.empty() : tensor<4x16xf64>
  %r64 = tensor.empty() : tensor<4xf64>
  %r32 = tensor.empty() : tensor<4xf32>
  %e32 = tensor.empty() : tensor<4x16xf32>
  %xw = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x16xf32>) outs(%e64 : tensor<4x16xf64>) {
  ^bb0(%in: f32, %out: f64):
    %0 = arith.extf %in : f32 to f64
    linalg.yield %0 : f64
  } -> tensor<4x16xf64>
  %i64 = linalg.fill ins(%z64 : f64) outs(%r64 : tensor<4xf64>) -> tensor<4xf64>
  %s64 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%xw : tensor<4x16xf64>) outs(%i64 : tensor<4xf64>) {
  ^bb0(%in: f64, %out: f64):
    %0 = arith.addf %in, %out : f64
    linalg.yield %0 : f64
  } -> tensor<4xf64>
  %c64 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%xw, %s64 : tensor<4x16xf64>, tensor<4xf64>) outs(%e64 : tensor<4x16xf64>) {
  ^bb0(%in: f64, %s: f64, %out: f64):
    %0 = arith.divf %s, %n64 : f64
    %1 = arith.subf %in, %0 : f64
    %2 = arith.mulf %1, %1 : f64
    linalg.yield %2 : f64
  } -> tensor<4x16xf64>
  %v64 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%c64 : tensor<4x16xf64>) outs(%i64 : tensor<4xf64>) {
  ^bb0(%in: f64, %out: f64):
    %0 = arith.addf %in, %out : f64
    linalg.yield %0 : f64
  } -> tensor<4xf64>
  %i32 = linalg.fill ins(%z32 : f32) outs(%r32 : tensor<4xf32>) -> tensor<4xf32>
  %s32 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x16xf32>) outs(%i32 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %s32, %v64 : tensor<4x16xf32>, tensor<4xf32>, tensor<4xf64>) outs(%e32 : tensor<4x16xf32>) {
  ^bb0(%in: f32, %s: f32, %v: f64, %out: f32):
    %0 = arith.divf %s, %n32 : f32
    %1 = arith.subf %in, %0 : f32
    %2 = arith.divf %v, %n64 : f64
    %3 = arith.truncf %2 : f64 to f32
    %4 = arith.truncf %eps : f64 to f32
    %5 = arith.addf %3, %4 : f32
    %6 = math.sqrt %5 : f32
    %7 = arith.divf %1, %6 : f32
    linalg.yield %7 : f32
  } -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Softmax with the max starting from the lowest finite float (TOSA), maxnumf
// as the combiner, and the division as a multiply by a reciprocal computed
// in its own generic.
// CHECK-LABEL: func @softmax_reciprocal
// CHECK-SAME: (%[[X:.+]]: tensor<4x16xf32>)
// CHECK-NEXT: %[[Y:.+]] = fuel.fused softmax_last_dim (%[[X]])
// CHECK-NEXT: return %[[Y]]
func.func @softmax_reciprocal(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %lowest = arith.constant -3.40282347E+38 : f32
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %er = tensor.empty() : tensor<4xf32>
  %im = linalg.fill ins(%lowest : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x16xf32>) outs(%im : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maxnumf %out, %in : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %m : tensor<4x16xf32>, tensor<4xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %0 = arith.subf %in, %mx : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x16xf32>
  %is = linalg.fill ins(%zero : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%ex : tensor<4x16xf32>) outs(%is : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %rs = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%s : tensor<4xf32>) outs(%er : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.divf %one, %in : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%ex, %rs : tensor<4x16xf32>, tensor<4xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%in: f32, %r: f32, %out: f32):
    %0 = arith.mulf %in, %r : f32
    linalg.yield %0 : f32
  } -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// nn.Linear: the weight transposed by linalg.transpose, linalg.matmul, the
// bias added in a generic. The transposed weight is the op's [K, N] operand.
// CHECK-LABEL: func @linear_named
// CHECK-SAME: (%[[A:.+]]: tensor<8x16xf32>, %[[W:.+]]: tensor<4x16xf32>, %[[B:.+]]: tensor<4xf32>)
// CHECK-NEXT: %[[E:.+]] = tensor.empty() : tensor<16x4xf32>
// CHECK-NEXT: %[[T:.+]] = linalg.transpose ins(%[[W]]
// CHECK-NEXT: %[[Y:.+]] = fuel.fused fused_linear (%[[A]], %[[T]], %[[B]])
// CHECK-NEXT: return %[[Y]]
func.func @linear_named(%a: tensor<8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<16x4xf32>
  %wt = linalg.transpose ins(%w : tensor<4x16xf32>) outs(%et : tensor<16x4xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<8x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %mm = linalg.matmul ins(%a, %wt : tensor<8x16xf32>, tensor<16x4xf32>) outs(%init : tensor<8x4xf32>) -> tensor<8x4xf32>
  %y = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%mm, %b : tensor<8x4xf32>, tensor<4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %0 = arith.addf %in, %bias : f32
    linalg.yield %0 : f32
  } -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (0, d1)>

// TOSA's linear: batch_matmul with a unit batch, weights and bias carried
// with extra size-1 dims (collapsed for the op), reshapes around.
// CHECK-LABEL: func @linear_tosa
// CHECK-SAME: (%[[A:.+]]: tensor<8x16xf32>, %[[W:.+]]: tensor<1x16x4xf32>, %[[B:.+]]: tensor<1x4xf32>)
// CHECK-DAG: %[[W2:.+]] = tensor.collapse_shape %[[W]] {{\[}}[0, 1], [2]] : tensor<1x16x4xf32> into tensor<16x4xf32>
// CHECK-DAG: %[[B2:.+]] = tensor.collapse_shape %[[B]] {{\[}}[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
// CHECK: %[[Y:.+]] = fuel.fused fused_linear (%[[A]], %[[W2]], %[[B2]])
// CHECK-NEXT: return %[[Y]]
func.func @linear_tosa(%a: tensor<8x16xf32>, %w: tensor<1x16x4xf32>, %b: tensor<1x4xf32>) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %a3 = tensor.expand_shape %a [[0, 1], [2]] output_shape [1, 8, 16] : tensor<8x16xf32> into tensor<1x8x16xf32>
  %e3 = tensor.empty() : tensor<1x8x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  %mm = linalg.batch_matmul ins(%a3, %w : tensor<1x8x16xf32>, tensor<1x16x4xf32>) outs(%init : tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  %mm2 = tensor.collapse_shape %mm [[0, 1], [2]] : tensor<1x8x4xf32> into tensor<8x4xf32>
  %e = tensor.empty() : tensor<8x4xf32>
  %y = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]} ins(%mm2, %b : tensor<8x4xf32>, tensor<1x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %0 = arith.addf %in, %bias : f32
    linalg.yield %0 : f32
  } -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#tab = affine_map<(d0, d1, d2) -> (d1, d2)>

// Rotate-half RoPE with rotate_half built by two insert_slices (TOSA) and
// the negation as a multiply by -1.
// CHECK-LABEL: func @rope_insert_slices
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x8xf32>, %[[C:.+]]: tensor<4x8xf32>, %[[S:.+]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[Y:.+]] = fuel.fused rope (%[[X]], %[[C]], %[[S]])
// CHECK-NEXT: return %[[Y]]
func.func @rope_insert_slices(%x: tensor<2x4x8xf32>, %cos: tensor<4x8xf32>, %sin: tensor<4x8xf32>) -> tensor<2x4x8xf32> {
  %m1 = arith.constant -1.0 : f32
  %lo = tensor.extract_slice %x[0, 0, 0] [2, 4, 4] [1, 1, 1] : tensor<2x4x8xf32> to tensor<2x4x4xf32>
  %hi = tensor.extract_slice %x[0, 0, 4] [2, 4, 4] [1, 1, 1] : tensor<2x4x8xf32> to tensor<2x4x4xf32>
  %eh = tensor.empty() : tensor<2x4x4xf32>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%hi : tensor<2x4x4xf32>) outs(%eh : tensor<2x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %m1 : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x4xf32>
  %e = tensor.empty() : tensor<2x4x8xf32>
  %r0 = tensor.insert_slice %neg into %e[0, 0, 0] [2, 4, 4] [1, 1, 1] : tensor<2x4x4xf32> into tensor<2x4x8xf32>
  %rot = tensor.insert_slice %lo into %r0[0, 0, 4] [2, 4, 4] [1, 1, 1] : tensor<2x4x4xf32> into tensor<2x4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #tab, #id, #tab, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %cos, %rot, %sin : tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<2x4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %r: f32, %s: f32, %out: f32):
    %0 = arith.mulf %a, %c : f32
    %1 = arith.mulf %r, %s : f32
    %2 = arith.addf %0, %1 : f32
    linalg.yield %2 : f32
  } -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#tab = affine_map<(d0, d1, d2) -> (d1, d2)>

// The halves swapped the wrong way (x1 negated): not rotate_half.
// CHECK-LABEL: func @rope_wrong_half
// CHECK-NOT: fuel.fused
func.func @rope_wrong_half(%x: tensor<2x4x8xf32>, %cos: tensor<4x8xf32>, %sin: tensor<4x8xf32>) -> tensor<2x4x8xf32> {
  %lo = tensor.extract_slice %x[0, 0, 0] [2, 4, 4] [1, 1, 1] : tensor<2x4x8xf32> to tensor<2x4x4xf32>
  %hi = tensor.extract_slice %x[0, 0, 4] [2, 4, 4] [1, 1, 1] : tensor<2x4x8xf32> to tensor<2x4x4xf32>
  %eh = tensor.empty() : tensor<2x4x4xf32>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%lo : tensor<2x4x4xf32>) outs(%eh : tensor<2x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x4xf32>
  %rot = tensor.concat dim(2) %neg, %hi : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x8xf32>
  %e = tensor.empty() : tensor<2x4x8xf32>
  // expected-remark @+1 {{fuel-fuse near miss: rope: expected rotate_half's halves}}
  %y = linalg.generic {indexing_maps = [#id, #tab, #id, #tab, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %cos, %rot, %sin : tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<2x4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %r: f32, %s: f32, %out: f32):
    %0 = arith.mulf %a, %c : f32
    %1 = arith.mulf %r, %s : f32
    %2 = arith.addf %0, %1 : f32
    linalg.yield %2 : f32
  } -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// A norm fused with its weight in one body (upstream elementwise fusion):
// the norm becomes an op that the generic reads; the weight stays.
// CHECK-LABEL: func @rms_in_body
// CHECK-SAME: (%[[X:.+]]: tensor<4x64xf32>, %[[W:.+]]: tensor<64xf32>)
// CHECK: %[[N:.+]] = fuel.fused rms_norm_last_dim {eps = 1.000000e-05 : f64} (%[[X]])
// CHECK-NEXT: %[[Y:.+]] = linalg.generic
// CHECK-SAME: ins(%[[W]], %[[N]] : tensor<64xf32>, tensor<4x64xf32>)
// CHECK-NEXT: ^bb0(%[[WI:.+]]: f32, %[[NI:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[M:.+]] = arith.mulf %[[NI]], %[[WI]] : f32
// CHECK-NEXT: linalg.yield %[[M]]
// CHECK: return %[[Y]]
func.func @rms_in_body(%x: tensor<4x64xf32>, %w: tensor<64xf32>) -> tensor<4x64xf32> {
  %zero = arith.constant 0.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %n = arith.constant 1.562500e-02 : f32
  %e = tensor.empty() : tensor<4x64xf32>
  %er = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x64xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %in : f32
    %1 = arith.addf %0, %out : f32
    linalg.yield %1 : f32
  } -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#col, #id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%w, %x, %sum : tensor<64xf32>, tensor<4x64xf32>, tensor<4xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%wi: f32, %in: f32, %s: f32, %out: f32):
    %0 = arith.mulf %s, %n : f32
    %1 = arith.addf %0, %eps : f32
    %2 = math.rsqrt %1 : f32
    %3 = arith.mulf %in, %2 : f32
    %4 = arith.mulf %3, %wi : f32
    linalg.yield %4 : f32
  } -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// The mean multiplies by 1/63 over 64 elements: not a mean, not fused.
// CHECK-LABEL: func @rms_wrong_mean
// CHECK-NOT: fuel.fused
func.func @rms_wrong_mean(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %zero = arith.constant 0.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %n = arith.constant 0.0158730168 : f32
  %e = tensor.empty() : tensor<4x64xf32>
  %er = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x64xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %in : f32
    %1 = arith.addf %0, %out : f32
    linalg.yield %1 : f32
  } -> tensor<4xf32>
  // expected-remark @+1 {{fuel-fuse near miss: rms_norm_last_dim: an axis size does not match the inputs}}
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %sum : tensor<4x64xf32>, tensor<4xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %0 = arith.mulf %s, %n : f32
    %1 = arith.addf %0, %eps : f32
    %2 = math.rsqrt %1 : f32
    %3 = arith.mulf %in, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// The mean of squares is also returned: the norm would take a value another
// user reads, so the IR stays as it is.
// CHECK-LABEL: func @rms_in_body_extra_use
// CHECK-NOT: fuel.fused
func.func @rms_in_body_extra_use(%x: tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %n = arith.constant 1.562500e-02 : f32
  %e = tensor.empty() : tensor<4x64xf32>
  %er = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x64xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %in : f32
    %1 = arith.addf %0, %out : f32
    linalg.yield %1 : f32
  } -> tensor<4xf32>
  // expected-remark @+1 {{fuel-fuse near miss: rms_norm_last_dim: an intermediate value has another user}}
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %sum : tensor<4x64xf32>, tensor<4xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %0 = arith.mulf %s, %n : f32
    %1 = arith.addf %0, %eps : f32
    %2 = math.rsqrt %1 : f32
    %3 = arith.mulf %in, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<4x64xf32>
  return %y, %sum : tensor<4x64xf32>, tensor<4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// An f32 norm whose intermediate dips to f16: less precise than the op, so
// it is not the op.
// CHECK-LABEL: func @rms_narrowed
// CHECK-NOT: fuel.fused
func.func @rms_narrowed(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %zero = arith.constant 0.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %n = arith.constant 1.562500e-02 : f32
  %e = tensor.empty() : tensor<4x64xf32>
  %er = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x64xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %in : f32
    %1 = arith.addf %0, %out : f32
    linalg.yield %1 : f32
  } -> tensor<4xf32>
  // expected-remark @+1 {{fuel-fuse near miss: rms_norm_last_dim: expected div, found arith.extf}}
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %sum : tensor<4x64xf32>, tensor<4xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %0 = arith.mulf %s, %n : f32
    %h = arith.truncf %0 : f32 to f16
    %w = arith.extf %h : f16 to f32
    %1 = arith.addf %w, %eps : f32
    %2 = math.rsqrt %1 : f32
    %3 = arith.mulf %in, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// StableHLO's softmax (JAX): broadcasts as ops of their own, one a
// linalg.broadcast and one a generic that yields its input.
// CHECK-LABEL: func @softmax_explicit_broadcasts
// CHECK-SAME: (%[[X:.+]]: tensor<4x16xf32>)
// CHECK-NEXT: %[[Y:.+]] = fuel.fused softmax_last_dim (%[[X]])
// CHECK-NEXT: return %[[Y]]
func.func @softmax_explicit_broadcasts(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %er = tensor.empty() : tensor<4xf32>
  %im = linalg.fill ins(%ninf : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.reduce ins(%x : tensor<4x16xf32>) outs(%im : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %0 = arith.maximumf %in, %acc : f32
      linalg.yield %0 : f32
    }
  %bm = linalg.broadcast ins(%m : tensor<4xf32>) outs(%e : tensor<4x16xf32>) dimensions = [1]
  %ex = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %bm : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %0 = arith.subf %in, %mx : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x16xf32>
  %is = linalg.fill ins(%zero : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.reduce ins(%ex : tensor<4x16xf32>) outs(%is : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %0 = arith.addf %in, %acc : f32
      linalg.yield %0 : f32
    }
  %bs = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<4xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x16xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%ex, %bs : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %0 = arith.divf %a, %b : f32
    linalg.yield %0 : f32
  } -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// The max is taken over the rows and broadcast back along them: a softmax
// over the other dim, which is not softmax_last_dim.
// CHECK-LABEL: func @softmax_other_dim
// CHECK-NOT: fuel.fused
func.func @softmax_other_dim(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %er = tensor.empty() : tensor<16xf32>
  %im = linalg.fill ins(%ninf : f32) outs(%er : tensor<16xf32>) -> tensor<16xf32>
  %m = linalg.reduce ins(%x : tensor<16x16xf32>) outs(%im : tensor<16xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %0 = arith.maximumf %in, %acc : f32
      linalg.yield %0 : f32
    }
  %bm = linalg.broadcast ins(%m : tensor<16xf32>) outs(%e : tensor<16x16xf32>) dimensions = [0]
  %ex = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %bm : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %0 = arith.subf %in, %mx : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<16x16xf32>
  %is = linalg.fill ins(%zero : f32) outs(%er : tensor<16xf32>) -> tensor<16xf32>
  %s = linalg.reduce ins(%ex : tensor<16x16xf32>) outs(%is : tensor<16xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %0 = arith.addf %in, %acc : f32
      linalg.yield %0 : f32
    }
  %bs = linalg.broadcast ins(%s : tensor<16xf32>) outs(%e : tensor<16x16xf32>) dimensions = [0]
  // expected-remark @+1 {{fuel-fuse near miss: softmax_last_dim: an operand is not on the recipe's axes}}
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%ex, %bs : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %0 = arith.divf %a, %b : f32
    linalg.yield %0 : f32
  } -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}

// -----

// The bias broadcast into the matmul's init: the product accumulates onto
// it (a + sum written as a reduction that starts from a).
// CHECK-LABEL: func @linear_bias_in_init
// CHECK-SAME: (%[[A:.+]]: tensor<8x16xf32>, %[[W:.+]]: tensor<16x4xf32>, %[[B:.+]]: tensor<4xf32>)
// CHECK-NEXT: %[[Y:.+]] = fuel.fused fused_linear (%[[A]], %[[W]], %[[B]])
// CHECK-NEXT: return %[[Y]]
func.func @linear_bias_in_init(%a: tensor<8x16xf32>, %w: tensor<16x4xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<8x4xf32>
  %init = linalg.broadcast ins(%b : tensor<4xf32>) outs(%e : tensor<8x4xf32>) dimensions = [0]
  %y = linalg.matmul ins(%a, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%init : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// A matmul that accumulates onto a value computed from its own input is not
// a linear layer's bias: left alone.
// CHECK-LABEL: func @matmul_onto_other
// CHECK-NOT: fuel.fused
func.func @matmul_onto_other(%a: tensor<8x16xf32>, %w: tensor<16x4xf32>, %c: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %y = linalg.matmul ins(%a, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%c : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>

// torch-mlir's scaled_dot_product_attention (unedited export): the scale
// split as sqrt(scale) on q and on k^T, batch matmuls on [B*H, S, D] between
// reshapes, a softmax whose max also computes an argmax, and a guard that
// writes 0 where a row of scores is all -inf. One flash_attn.
// CHECK-LABEL: func @sdpa_torch
// CHECK-SAME: (%[[Q:.+]]: tensor<1x4x16x16xf32>, %[[K:.+]]: tensor<1x4x16x16xf32>, %[[V:.+]]: tensor<1x4x16x16xf32>)
// CHECK-NEXT: %[[O:.+]] = fuel.fused flash_attn {softmax_scale = 2.500000e-01 : f32} (%[[Q]], %[[K]], %[[V]])
// CHECK-NEXT: return %[[O]]
func.func @sdpa_torch(%arg0: tensor<1x4x16x16xf32>, %arg1: tensor<1x4x16x16xf32>, %arg2: tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %c0_i64 = arith.constant 0 : i64
    %cst_0 = arith.constant 0xFF800000 : f32
    %true = arith.constant true
    %cst_1 = arith.constant dense<0.000000e+00> : tensor<1x4x16x16xf32>
    %cst_2 = arith.constant 0xFFF0000000000000 : f64
    %cst_3 = arith.constant 5.000000e-01 : f32
    %0 = tensor.empty() : tensor<1x4x16x16xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x4x16x16xf32>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %24 = arith.mulf %in, %cst_3 : f32
      linalg.yield %24 : f32
    } -> tensor<1x4x16x16xf32>
    %transposed = linalg.transpose ins(%arg1 : tensor<1x4x16x16xf32>) outs(%0 : tensor<1x4x16x16xf32>) permutation = [0, 1, 3, 2] 
    %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed : tensor<1x4x16x16xf32>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %24 = arith.mulf %in, %cst_3 : f32
      linalg.yield %24 : f32
    } -> tensor<1x4x16x16xf32>
    %collapsed = tensor.collapse_shape %1 [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
    %collapsed_4 = tensor.collapse_shape %2 [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
    %3 = tensor.empty() : tensor<4x16x16xf32>
    %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %5 = linalg.batch_matmul ins(%collapsed, %collapsed_4 : tensor<4x16x16xf32>, tensor<4x16x16xf32>) outs(%4 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %expanded = tensor.expand_shape %5 [[0, 1], [2], [3]] output_shape [1, 4, 16, 16] : tensor<4x16x16xf32> into tensor<1x4x16x16xf32>
    %6 = tensor.empty() : tensor<1x4x16xi64>
    %7 = linalg.fill ins(%c0_i64 : i64) outs(%6 : tensor<1x4x16xi64>) -> tensor<1x4x16xi64>
    %8 = tensor.empty() : tensor<1x4x16xf32>
    %9 = linalg.fill ins(%cst_0 : f32) outs(%8 : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
    %10:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%expanded : tensor<1x4x16x16xf32>) outs(%9, %7 : tensor<1x4x16xf32>, tensor<1x4x16xi64>) {
    ^bb0(%in: f32, %out: f32, %out_9: i64):
      %24 = linalg.index 3 : index
      %25 = arith.index_cast %24 : index to i64
      %26 = arith.maximumf %in, %out : f32
      %27 = arith.cmpf ogt, %in, %out : f32
      %28 = arith.select %27, %25, %out_9 : i64
      linalg.yield %26, %28 : f32, i64
    } -> (tensor<1x4x16xf32>, tensor<1x4x16xi64>)
    %expanded_5 = tensor.expand_shape %10#0 [[0], [1], [2, 3]] output_shape [1, 4, 16, 1] : tensor<1x4x16xf32> into tensor<1x4x16x1xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded, %expanded_5 : tensor<1x4x16x16xf32>, tensor<1x4x16x1xf32>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %24 = arith.subf %in, %in_9 : f32
      linalg.yield %24 : f32
    } -> tensor<1x4x16x16xf32>
    %12 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%11 : tensor<1x4x16x16xf32>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %24 = math.exp %in : f32
      linalg.yield %24 : f32
    } -> tensor<1x4x16x16xf32>
    %13 = tensor.empty() : tensor<1x4x16x1xf32>
    %14 = linalg.fill ins(%cst : f32) outs(%13 : tensor<1x4x16x1xf32>) -> tensor<1x4x16x1xf32>
    %15 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%12 : tensor<1x4x16x16xf32>) outs(%14 : tensor<1x4x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %24 = arith.addf %in, %out : f32
      linalg.yield %24 : f32
    } -> tensor<1x4x16x1xf32>
    %16 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%12, %15 : tensor<1x4x16x16xf32>, tensor<1x4x16x1xf32>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %24 = arith.divf %in, %in_9 : f32
      linalg.yield %24 : f32
    } -> tensor<1x4x16x16xf32>
    %17 = tensor.empty() : tensor<1x4x16x16xi1>
    %18 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<1x4x16x16xf32>) outs(%17 : tensor<1x4x16x16xi1>) {
    ^bb0(%in: f32, %out: i1):
      %24 = arith.extf %in : f32 to f64
      %25 = arith.cmpf oeq, %24, %cst_2 : f64
      linalg.yield %25 : i1
    } -> tensor<1x4x16x16xi1>
    %19 = tensor.empty() : tensor<1x4x16x1xi1>
    %20 = linalg.fill ins(%true : i1) outs(%19 : tensor<1x4x16x1xi1>) -> tensor<1x4x16x1xi1>
    %21 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%18 : tensor<1x4x16x16xi1>) outs(%20 : tensor<1x4x16x1xi1>) {
    ^bb0(%in: i1, %out: i1):
      %24 = arith.andi %in, %out : i1
      linalg.yield %24 : i1
    } -> tensor<1x4x16x1xi1>
    %22 = linalg.generic {indexing_maps = [#map2, #map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%21, %cst_1, %16 : tensor<1x4x16x1xi1>, tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: i1, %in_9: f32, %in_10: f32, %out: f32):
      %24 = arith.select %in, %in_9, %in_10 : f32
      linalg.yield %24 : f32
    } -> tensor<1x4x16x16xf32>
    %collapsed_6 = tensor.collapse_shape %22 [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
    %collapsed_7 = tensor.collapse_shape %arg2 [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
    %23 = linalg.batch_matmul ins(%collapsed_6, %collapsed_7 : tensor<4x16x16xf32>, tensor<4x16x16xf32>) outs(%4 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %expanded_8 = tensor.expand_shape %23 [[0, 1], [2], [3]] output_shape [1, 4, 16, 16] : tensor<4x16x16xf32> into tensor<1x4x16x16xf32>
    return %expanded_8 : tensor<1x4x16x16xf32>
  }

// -----

#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>

// The same with the guard testing q instead of the scores: not attention's
// guard, so no flash_attn (the softmax inside is still found).
// CHECK-LABEL: func @sdpa_guard_elsewhere
// CHECK-NOT: fuel.fused flash_attn
// CHECK: fuel.fused softmax_last_dim
// CHECK-NOT: fuel.fused flash_attn
func.func @sdpa_guard_elsewhere(%arg0: tensor<1x4x16x16xf32>, %arg1: tensor<1x4x16x16xf32>, %arg2: tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %c0_i64 = arith.constant 0 : i64
    %cst_0 = arith.constant 0xFF800000 : f32
    %true = arith.constant true
    %cst_1 = arith.constant dense<0.000000e+00> : tensor<1x4x16x16xf32>
    %cst_2 = arith.constant 0xFFF0000000000000 : f64
    %cst_3 = arith.constant 5.000000e-01 : f32
    %0 = tensor.empty() : tensor<1x4x16x16xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x4x16x16xf32>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %24 = arith.mulf %in, %cst_3 : f32
      linalg.yield %24 : f32
    } -> tensor<1x4x16x16xf32>
    %transposed = linalg.transpose ins(%arg1 : tensor<1x4x16x16xf32>) outs(%0 : tensor<1x4x16x16xf32>) permutation = [0, 1, 3, 2] 
    %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed : tensor<1x4x16x16xf32>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %24 = arith.mulf %in, %cst_3 : f32
      linalg.yield %24 : f32
    } -> tensor<1x4x16x16xf32>
    %collapsed = tensor.collapse_shape %1 [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
    %collapsed_4 = tensor.collapse_shape %2 [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
    %3 = tensor.empty() : tensor<4x16x16xf32>
    %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %5 = linalg.batch_matmul ins(%collapsed, %collapsed_4 : tensor<4x16x16xf32>, tensor<4x16x16xf32>) outs(%4 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %expanded = tensor.expand_shape %5 [[0, 1], [2], [3]] output_shape [1, 4, 16, 16] : tensor<4x16x16xf32> into tensor<1x4x16x16xf32>
    %6 = tensor.empty() : tensor<1x4x16xi64>
    %7 = linalg.fill ins(%c0_i64 : i64) outs(%6 : tensor<1x4x16xi64>) -> tensor<1x4x16xi64>
    %8 = tensor.empty() : tensor<1x4x16xf32>
    %9 = linalg.fill ins(%cst_0 : f32) outs(%8 : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
    %10:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%expanded : tensor<1x4x16x16xf32>) outs(%9, %7 : tensor<1x4x16xf32>, tensor<1x4x16xi64>) {
    ^bb0(%in: f32, %out: f32, %out_9: i64):
      %24 = linalg.index 3 : index
      %25 = arith.index_cast %24 : index to i64
      %26 = arith.maximumf %in, %out : f32
      %27 = arith.cmpf ogt, %in, %out : f32
      %28 = arith.select %27, %25, %out_9 : i64
      linalg.yield %26, %28 : f32, i64
    } -> (tensor<1x4x16xf32>, tensor<1x4x16xi64>)
    %expanded_5 = tensor.expand_shape %10#0 [[0], [1], [2, 3]] output_shape [1, 4, 16, 1] : tensor<1x4x16xf32> into tensor<1x4x16x1xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded, %expanded_5 : tensor<1x4x16x16xf32>, tensor<1x4x16x1xf32>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %24 = arith.subf %in, %in_9 : f32
      linalg.yield %24 : f32
    } -> tensor<1x4x16x16xf32>
    %12 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%11 : tensor<1x4x16x16xf32>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %24 = math.exp %in : f32
      linalg.yield %24 : f32
    } -> tensor<1x4x16x16xf32>
    %13 = tensor.empty() : tensor<1x4x16x1xf32>
    %14 = linalg.fill ins(%cst : f32) outs(%13 : tensor<1x4x16x1xf32>) -> tensor<1x4x16x1xf32>
    %15 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%12 : tensor<1x4x16x16xf32>) outs(%14 : tensor<1x4x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %24 = arith.addf %in, %out : f32
      linalg.yield %24 : f32
    } -> tensor<1x4x16x1xf32>
    %16 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%12, %15 : tensor<1x4x16x16xf32>, tensor<1x4x16x1xf32>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %24 = arith.divf %in, %in_9 : f32
      linalg.yield %24 : f32
    } -> tensor<1x4x16x16xf32>
    %17 = tensor.empty() : tensor<1x4x16x16xi1>
    %18 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%1 : tensor<1x4x16x16xf32>) outs(%17 : tensor<1x4x16x16xi1>) {
    ^bb0(%in: f32, %out: i1):
      %24 = arith.extf %in : f32 to f64
      %25 = arith.cmpf oeq, %24, %cst_2 : f64
      linalg.yield %25 : i1
    } -> tensor<1x4x16x16xi1>
    %19 = tensor.empty() : tensor<1x4x16x1xi1>
    %20 = linalg.fill ins(%true : i1) outs(%19 : tensor<1x4x16x1xi1>) -> tensor<1x4x16x1xi1>
    %21 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%18 : tensor<1x4x16x16xi1>) outs(%20 : tensor<1x4x16x1xi1>) {
    ^bb0(%in: i1, %out: i1):
      %24 = arith.andi %in, %out : i1
      linalg.yield %24 : i1
    } -> tensor<1x4x16x1xi1>
    %22 = linalg.generic {indexing_maps = [#map2, #map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%21, %cst_1, %16 : tensor<1x4x16x1xi1>, tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: i1, %in_9: f32, %in_10: f32, %out: f32):
      %24 = arith.select %in, %in_9, %in_10 : f32
      linalg.yield %24 : f32
    } -> tensor<1x4x16x16xf32>
    %collapsed_6 = tensor.collapse_shape %22 [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
    %collapsed_7 = tensor.collapse_shape %arg2 [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
    // expected-remark @+1 {{fuel-fuse near miss: flash_attn: a guard tests a value other than the scores}}
    %23 = linalg.batch_matmul ins(%collapsed_6, %collapsed_7 : tensor<4x16x16xf32>, tensor<4x16x16xf32>) outs(%4 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    // expected-remark @+1 {{fuel-fuse near miss: flash_attn: a guard tests a value other than the scores}}
    %expanded_8 = tensor.expand_shape %23 [[0, 1], [2], [3]] output_shape [1, 4, 16, 16] : tensor<4x16x16xf32> into tensor<1x4x16x16xf32>
    return %expanded_8 : tensor<1x4x16x16xf32>
  }

// -----

#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0) -> (d0)>
#map2 = affine_map<(d0, d1) -> (0, d1)>
#map3 = affine_map<(d0, d1) -> (d0, 0)>
#map4 = affine_map<(d0, d1) -> (d0, d1)>
#map5 = affine_map<(d0, d1) -> ()>
#map6 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#map7 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map8 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>

// torch-mlir's causal attention: the mask built from iotas (j - i <= 0),
// and-ed with an all-true mask, turned into a 0/-inf bias and added to the
// scores. Sq == Sk, so the top-left mask is FlashAttention's bottom-right one.
// CHECK-LABEL: func @sdpa_causal_torch
// CHECK-SAME: (%[[Q:.+]]: tensor<1x4x16x16xf32>, %[[K:.+]]: tensor<1x4x16x16xf32>, %[[V:.+]]: tensor<1x4x16x16xf32>)
// CHECK-NEXT: %[[O:.+]] = fuel.fused flash_attn {causal = true, softmax_scale = 2.500000e-01 : f32} (%[[Q]], %[[K]], %[[V]])
// CHECK-NEXT: return %[[O]]
func.func @sdpa_causal_torch(%arg0: tensor<1x4x16x16xf32>, %arg1: tensor<1x4x16x16xf32>, %arg2: tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32> {
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %true = arith.constant true
    %cst_1 = arith.constant dense<0.000000e+00> : tensor<1x4x16x16xf32>
    %cst_2 = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_3 = arith.constant dense<0xFF800000> : tensor<f32>
    %cst_4 = arith.constant dense<true> : tensor<16x16xi1>
    %cst_5 = arith.constant 0xFFF0000000000000 : f64
    %cst_6 = arith.constant 5.000000e-01 : f32
    %0 = tensor.empty() : tensor<1x4x16x16xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x4x16x16xf32>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %34 = arith.mulf %in, %cst_6 : f32
      linalg.yield %34 : f32
    } -> tensor<1x4x16x16xf32>
    %2 = tensor.empty() : tensor<16xi64>
    %3 = linalg.generic {indexing_maps = [#map1], iterator_types = ["parallel"]} outs(%2 : tensor<16xi64>) {
    ^bb0(%out: i64):
      %34 = linalg.index 0 : index
      %35 = arith.index_cast %34 : index to i64
      linalg.yield %35 : i64
    } -> tensor<16xi64>
    %expanded = tensor.expand_shape %3 [[0, 1]] output_shape [1, 16] : tensor<16xi64> into tensor<1x16xi64>
    %expanded_7 = tensor.expand_shape %3 [[0, 1]] output_shape [16, 1] : tensor<16xi64> into tensor<16x1xi64>
    %4 = tensor.empty() : tensor<16x16xi64>
    %5 = linalg.generic {indexing_maps = [#map2, #map3, #map4], iterator_types = ["parallel", "parallel"]} ins(%expanded, %expanded_7 : tensor<1x16xi64>, tensor<16x1xi64>) outs(%4 : tensor<16x16xi64>) {
    ^bb0(%in: i64, %in_14: i64, %out: i64):
      %34 = arith.subi %in, %in_14 : i64
      linalg.yield %34 : i64
    } -> tensor<16x16xi64>
    %6 = tensor.empty() : tensor<16x16xi1>
    %7 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%5 : tensor<16x16xi64>) outs(%6 : tensor<16x16xi1>) {
    ^bb0(%in: i64, %out: i1):
      %34 = arith.cmpi sle, %in, %c0_i64 : i64
      linalg.yield %34 : i1
    } -> tensor<16x16xi1>
    %8 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%7, %cst_4 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%6 : tensor<16x16xi1>) {
    ^bb0(%in: i1, %in_14: i1, %out: i1):
      %34 = arith.andi %in, %in_14 : i1
      linalg.yield %34 : i1
    } -> tensor<16x16xi1>
    %9 = tensor.empty() : tensor<16x16xf32>
    %10 = linalg.generic {indexing_maps = [#map4, #map5, #map5, #map4], iterator_types = ["parallel", "parallel"]} ins(%8, %cst_2, %cst_3 : tensor<16x16xi1>, tensor<f32>, tensor<f32>) outs(%9 : tensor<16x16xf32>) {
    ^bb0(%in: i1, %in_14: f32, %in_15: f32, %out: f32):
      %34 = arith.select %in, %in_14, %in_15 : f32
      linalg.yield %34 : f32
    } -> tensor<16x16xf32>
    %transposed = linalg.transpose ins(%arg1 : tensor<1x4x16x16xf32>) outs(%0 : tensor<1x4x16x16xf32>) permutation = [0, 1, 3, 2] 
    %11 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed : tensor<1x4x16x16xf32>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %34 = arith.mulf %in, %cst_6 : f32
      linalg.yield %34 : f32
    } -> tensor<1x4x16x16xf32>
    %collapsed = tensor.collapse_shape %1 [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
    %collapsed_8 = tensor.collapse_shape %11 [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
    %12 = tensor.empty() : tensor<4x16x16xf32>
    %13 = linalg.fill ins(%cst : f32) outs(%12 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %14 = linalg.batch_matmul ins(%collapsed, %collapsed_8 : tensor<4x16x16xf32>, tensor<4x16x16xf32>) outs(%13 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %expanded_9 = tensor.expand_shape %14 [[0, 1], [2], [3]] output_shape [1, 4, 16, 16] : tensor<4x16x16xf32> into tensor<1x4x16x16xf32>
    %15 = linalg.generic {indexing_maps = [#map, #map6, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_9, %10 : tensor<1x4x16x16xf32>, tensor<16x16xf32>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_14: f32, %out: f32):
      %34 = arith.addf %in, %in_14 : f32
      linalg.yield %34 : f32
    } -> tensor<1x4x16x16xf32>
    %16 = tensor.empty() : tensor<1x4x16xi64>
    %17 = linalg.fill ins(%c0_i64 : i64) outs(%16 : tensor<1x4x16xi64>) -> tensor<1x4x16xi64>
    %18 = tensor.empty() : tensor<1x4x16xf32>
    %19 = linalg.fill ins(%cst_0 : f32) outs(%18 : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
    %20:2 = linalg.generic {indexing_maps = [#map, #map7, #map7], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%15 : tensor<1x4x16x16xf32>) outs(%19, %17 : tensor<1x4x16xf32>, tensor<1x4x16xi64>) {
    ^bb0(%in: f32, %out: f32, %out_14: i64):
      %34 = linalg.index 3 : index
      %35 = arith.index_cast %34 : index to i64
      %36 = arith.maximumf %in, %out : f32
      %37 = arith.cmpf ogt, %in, %out : f32
      %38 = arith.select %37, %35, %out_14 : i64
      linalg.yield %36, %38 : f32, i64
    } -> (tensor<1x4x16xf32>, tensor<1x4x16xi64>)
    %expanded_10 = tensor.expand_shape %20#0 [[0], [1], [2, 3]] output_shape [1, 4, 16, 1] : tensor<1x4x16xf32> into tensor<1x4x16x1xf32>
    %21 = linalg.generic {indexing_maps = [#map, #map8, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%15, %expanded_10 : tensor<1x4x16x16xf32>, tensor<1x4x16x1xf32>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_14: f32, %out: f32):
      %34 = arith.subf %in, %in_14 : f32
      linalg.yield %34 : f32
    } -> tensor<1x4x16x16xf32>
    %22 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%21 : tensor<1x4x16x16xf32>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %34 = math.exp %in : f32
      linalg.yield %34 : f32
    } -> tensor<1x4x16x16xf32>
    %23 = tensor.empty() : tensor<1x4x16x1xf32>
    %24 = linalg.fill ins(%cst : f32) outs(%23 : tensor<1x4x16x1xf32>) -> tensor<1x4x16x1xf32>
    %25 = linalg.generic {indexing_maps = [#map, #map8], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%22 : tensor<1x4x16x16xf32>) outs(%24 : tensor<1x4x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %34 = arith.addf %in, %out : f32
      linalg.yield %34 : f32
    } -> tensor<1x4x16x1xf32>
    %26 = linalg.generic {indexing_maps = [#map, #map8, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%22, %25 : tensor<1x4x16x16xf32>, tensor<1x4x16x1xf32>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_14: f32, %out: f32):
      %34 = arith.divf %in, %in_14 : f32
      linalg.yield %34 : f32
    } -> tensor<1x4x16x16xf32>
    %27 = tensor.empty() : tensor<1x4x16x16xi1>
    %28 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%15 : tensor<1x4x16x16xf32>) outs(%27 : tensor<1x4x16x16xi1>) {
    ^bb0(%in: f32, %out: i1):
      %34 = arith.extf %in : f32 to f64
      %35 = arith.cmpf oeq, %34, %cst_5 : f64
      linalg.yield %35 : i1
    } -> tensor<1x4x16x16xi1>
    %29 = tensor.empty() : tensor<1x4x16x1xi1>
    %30 = linalg.fill ins(%true : i1) outs(%29 : tensor<1x4x16x1xi1>) -> tensor<1x4x16x1xi1>
    %31 = linalg.generic {indexing_maps = [#map, #map8], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%28 : tensor<1x4x16x16xi1>) outs(%30 : tensor<1x4x16x1xi1>) {
    ^bb0(%in: i1, %out: i1):
      %34 = arith.andi %in, %out : i1
      linalg.yield %34 : i1
    } -> tensor<1x4x16x1xi1>
    %32 = linalg.generic {indexing_maps = [#map8, #map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%31, %cst_1, %26 : tensor<1x4x16x1xi1>, tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: i1, %in_14: f32, %in_15: f32, %out: f32):
      %34 = arith.select %in, %in_14, %in_15 : f32
      linalg.yield %34 : f32
    } -> tensor<1x4x16x16xf32>
    %collapsed_11 = tensor.collapse_shape %32 [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
    %collapsed_12 = tensor.collapse_shape %arg2 [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
    %33 = linalg.batch_matmul ins(%collapsed_11, %collapsed_12 : tensor<4x16x16xf32>, tensor<4x16x16xf32>) outs(%13 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %expanded_13 = tensor.expand_shape %33 [[0, 1], [2], [3]] output_shape [1, 4, 16, 16] : tensor<4x16x16xf32> into tensor<1x4x16x16xf32>
    return %expanded_13 : tensor<1x4x16x16xf32>
  }

// -----

#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0) -> (d0)>
#map2 = affine_map<(d0, d1) -> (0, d1)>
#map3 = affine_map<(d0, d1) -> (d0, 0)>
#map4 = affine_map<(d0, d1) -> (d0, d1)>
#map5 = affine_map<(d0, d1) -> ()>
#map6 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#map7 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map8 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>

// The mask hides the diagonal too (j - i < 0): not the causal mask, so no
// flash_attn; the softmax inside is still found.
// CHECK-LABEL: func @sdpa_mask_shifted
// CHECK-NOT: fuel.fused flash_attn
// CHECK: fuel.fused softmax_last_dim
// CHECK-NOT: fuel.fused flash_attn
func.func @sdpa_mask_shifted(%arg0: tensor<1x4x16x16xf32>, %arg1: tensor<1x4x16x16xf32>, %arg2: tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32> {
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %true = arith.constant true
    %cst_1 = arith.constant dense<0.000000e+00> : tensor<1x4x16x16xf32>
    %cst_2 = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_3 = arith.constant dense<0xFF800000> : tensor<f32>
    %cst_4 = arith.constant dense<true> : tensor<16x16xi1>
    %cst_5 = arith.constant 0xFFF0000000000000 : f64
    %cst_6 = arith.constant 5.000000e-01 : f32
    %0 = tensor.empty() : tensor<1x4x16x16xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x4x16x16xf32>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %34 = arith.mulf %in, %cst_6 : f32
      linalg.yield %34 : f32
    } -> tensor<1x4x16x16xf32>
    %2 = tensor.empty() : tensor<16xi64>
    %3 = linalg.generic {indexing_maps = [#map1], iterator_types = ["parallel"]} outs(%2 : tensor<16xi64>) {
    ^bb0(%out: i64):
      %34 = linalg.index 0 : index
      %35 = arith.index_cast %34 : index to i64
      linalg.yield %35 : i64
    } -> tensor<16xi64>
    %expanded = tensor.expand_shape %3 [[0, 1]] output_shape [1, 16] : tensor<16xi64> into tensor<1x16xi64>
    %expanded_7 = tensor.expand_shape %3 [[0, 1]] output_shape [16, 1] : tensor<16xi64> into tensor<16x1xi64>
    %4 = tensor.empty() : tensor<16x16xi64>
    %5 = linalg.generic {indexing_maps = [#map2, #map3, #map4], iterator_types = ["parallel", "parallel"]} ins(%expanded, %expanded_7 : tensor<1x16xi64>, tensor<16x1xi64>) outs(%4 : tensor<16x16xi64>) {
    ^bb0(%in: i64, %in_14: i64, %out: i64):
      %34 = arith.subi %in, %in_14 : i64
      linalg.yield %34 : i64
    } -> tensor<16x16xi64>
    %6 = tensor.empty() : tensor<16x16xi1>
    %7 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%5 : tensor<16x16xi64>) outs(%6 : tensor<16x16xi1>) {
    ^bb0(%in: i64, %out: i1):
      %34 = arith.cmpi slt, %in, %c0_i64 : i64
      linalg.yield %34 : i1
    } -> tensor<16x16xi1>
    %8 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%7, %cst_4 : tensor<16x16xi1>, tensor<16x16xi1>) outs(%6 : tensor<16x16xi1>) {
    ^bb0(%in: i1, %in_14: i1, %out: i1):
      %34 = arith.andi %in, %in_14 : i1
      linalg.yield %34 : i1
    } -> tensor<16x16xi1>
    %9 = tensor.empty() : tensor<16x16xf32>
    %10 = linalg.generic {indexing_maps = [#map4, #map5, #map5, #map4], iterator_types = ["parallel", "parallel"]} ins(%8, %cst_2, %cst_3 : tensor<16x16xi1>, tensor<f32>, tensor<f32>) outs(%9 : tensor<16x16xf32>) {
    ^bb0(%in: i1, %in_14: f32, %in_15: f32, %out: f32):
      %34 = arith.select %in, %in_14, %in_15 : f32
      linalg.yield %34 : f32
    } -> tensor<16x16xf32>
    %transposed = linalg.transpose ins(%arg1 : tensor<1x4x16x16xf32>) outs(%0 : tensor<1x4x16x16xf32>) permutation = [0, 1, 3, 2] 
    %11 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed : tensor<1x4x16x16xf32>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %34 = arith.mulf %in, %cst_6 : f32
      linalg.yield %34 : f32
    } -> tensor<1x4x16x16xf32>
    %collapsed = tensor.collapse_shape %1 [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
    %collapsed_8 = tensor.collapse_shape %11 [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
    %12 = tensor.empty() : tensor<4x16x16xf32>
    %13 = linalg.fill ins(%cst : f32) outs(%12 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %14 = linalg.batch_matmul ins(%collapsed, %collapsed_8 : tensor<4x16x16xf32>, tensor<4x16x16xf32>) outs(%13 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %expanded_9 = tensor.expand_shape %14 [[0, 1], [2], [3]] output_shape [1, 4, 16, 16] : tensor<4x16x16xf32> into tensor<1x4x16x16xf32>
    // expected-remark @+1 {{fuel-fuse near miss: fused_linear: an operand is not on the recipe's axes}}
    %15 = linalg.generic {indexing_maps = [#map, #map6, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_9, %10 : tensor<1x4x16x16xf32>, tensor<16x16xf32>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_14: f32, %out: f32):
      %34 = arith.addf %in, %in_14 : f32
      linalg.yield %34 : f32
    } -> tensor<1x4x16x16xf32>
    %16 = tensor.empty() : tensor<1x4x16xi64>
    %17 = linalg.fill ins(%c0_i64 : i64) outs(%16 : tensor<1x4x16xi64>) -> tensor<1x4x16xi64>
    %18 = tensor.empty() : tensor<1x4x16xf32>
    %19 = linalg.fill ins(%cst_0 : f32) outs(%18 : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
    %20:2 = linalg.generic {indexing_maps = [#map, #map7, #map7], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%15 : tensor<1x4x16x16xf32>) outs(%19, %17 : tensor<1x4x16xf32>, tensor<1x4x16xi64>) {
    ^bb0(%in: f32, %out: f32, %out_14: i64):
      %34 = linalg.index 3 : index
      %35 = arith.index_cast %34 : index to i64
      %36 = arith.maximumf %in, %out : f32
      %37 = arith.cmpf ogt, %in, %out : f32
      %38 = arith.select %37, %35, %out_14 : i64
      linalg.yield %36, %38 : f32, i64
    } -> (tensor<1x4x16xf32>, tensor<1x4x16xi64>)
    %expanded_10 = tensor.expand_shape %20#0 [[0], [1], [2, 3]] output_shape [1, 4, 16, 1] : tensor<1x4x16xf32> into tensor<1x4x16x1xf32>
    %21 = linalg.generic {indexing_maps = [#map, #map8, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%15, %expanded_10 : tensor<1x4x16x16xf32>, tensor<1x4x16x1xf32>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_14: f32, %out: f32):
      %34 = arith.subf %in, %in_14 : f32
      linalg.yield %34 : f32
    } -> tensor<1x4x16x16xf32>
    %22 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%21 : tensor<1x4x16x16xf32>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %34 = math.exp %in : f32
      linalg.yield %34 : f32
    } -> tensor<1x4x16x16xf32>
    %23 = tensor.empty() : tensor<1x4x16x1xf32>
    %24 = linalg.fill ins(%cst : f32) outs(%23 : tensor<1x4x16x1xf32>) -> tensor<1x4x16x1xf32>
    %25 = linalg.generic {indexing_maps = [#map, #map8], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%22 : tensor<1x4x16x16xf32>) outs(%24 : tensor<1x4x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %34 = arith.addf %in, %out : f32
      linalg.yield %34 : f32
    } -> tensor<1x4x16x1xf32>
    %26 = linalg.generic {indexing_maps = [#map, #map8, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%22, %25 : tensor<1x4x16x16xf32>, tensor<1x4x16x1xf32>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_14: f32, %out: f32):
      %34 = arith.divf %in, %in_14 : f32
      linalg.yield %34 : f32
    } -> tensor<1x4x16x16xf32>
    %27 = tensor.empty() : tensor<1x4x16x16xi1>
    %28 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%15 : tensor<1x4x16x16xf32>) outs(%27 : tensor<1x4x16x16xi1>) {
    ^bb0(%in: f32, %out: i1):
      %34 = arith.extf %in : f32 to f64
      %35 = arith.cmpf oeq, %34, %cst_5 : f64
      linalg.yield %35 : i1
    } -> tensor<1x4x16x16xi1>
    %29 = tensor.empty() : tensor<1x4x16x1xi1>
    %30 = linalg.fill ins(%true : i1) outs(%29 : tensor<1x4x16x1xi1>) -> tensor<1x4x16x1xi1>
    %31 = linalg.generic {indexing_maps = [#map, #map8], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%28 : tensor<1x4x16x16xi1>) outs(%30 : tensor<1x4x16x1xi1>) {
    ^bb0(%in: i1, %out: i1):
      %34 = arith.andi %in, %out : i1
      linalg.yield %34 : i1
    } -> tensor<1x4x16x1xi1>
    %32 = linalg.generic {indexing_maps = [#map8, #map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%31, %cst_1, %26 : tensor<1x4x16x1xi1>, tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: i1, %in_14: f32, %in_15: f32, %out: f32):
      %34 = arith.select %in, %in_14, %in_15 : f32
      linalg.yield %34 : f32
    } -> tensor<1x4x16x16xf32>
    %collapsed_11 = tensor.collapse_shape %32 [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
    %collapsed_12 = tensor.collapse_shape %arg2 [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
    // expected-remark @+1 {{fuel-fuse near miss: flash_attn: the causal mask is not aligned to the bottom right}}
    %33 = linalg.batch_matmul ins(%collapsed_11, %collapsed_12 : tensor<4x16x16xf32>, tensor<4x16x16xf32>) outs(%13 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    // expected-remark @+1 {{fuel-fuse near miss: flash_attn: the causal mask is not aligned to the bottom right}}
    %expanded_13 = tensor.expand_shape %33 [[0, 1], [2], [3]] output_shape [1, 4, 16, 16] : tensor<4x16x16xf32> into tensor<1x4x16x16xf32>
    return %expanded_13 : tensor<1x4x16x16xf32>
  }

// -----

#map = affine_map<(d0) -> (d0)>
#map1 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#map2 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
#map3 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map5 = affine_map<(d0, d1, d2, d3) -> (0, d3)>
#map6 = affine_map<(d0, d1, d2, d3) -> (d2, 0)>
#map7 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#map8 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#map9 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, 0)>

// The same causal attention after upstream elementwise fusion: the scale
// inside the first matmul's body, the mask, the softmax's division and the
// guard fused into the bodies that read them. Still one flash_attn.
// CHECK-LABEL: func @sdpa_causal_elementwise_fused
// CHECK-SAME: (%[[Q:.+]]: tensor<1x4x16x16xf32>, %[[K:.+]]: tensor<1x4x16x16xf32>, %[[V:.+]]: tensor<1x4x16x16xf32>)
// CHECK-NEXT: %[[O:.+]] = fuel.fused flash_attn {causal = true, softmax_scale = 2.500000e-01 : f32} (%[[Q]], %[[K]], %[[V]])
// CHECK-NEXT: return %[[O]]
func.func @sdpa_causal_elementwise_fused(%arg0: tensor<1x4x16x16xf32>, %arg1: tensor<1x4x16x16xf32>, %arg2: tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32> {
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %true = arith.constant true
    %cst_1 = arith.constant 0xFFF0000000000000 : f64
    %cst_2 = arith.constant 5.000000e-01 : f32
    %0 = tensor.empty() : tensor<1x4x16x16xf32>
    %1 = tensor.empty() : tensor<16xi64>
    %2 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]} outs(%1 : tensor<16xi64>) {
    ^bb0(%out: i64):
      %18 = linalg.index 0 : index
      %19 = arith.index_cast %18 : index to i64
      linalg.yield %19 : i64
    } -> tensor<16xi64>
    %expanded = tensor.expand_shape %2 [[0, 1]] output_shape [1, 16] : tensor<16xi64> into tensor<1x16xi64>
    %expanded_3 = tensor.expand_shape %2 [[0, 1]] output_shape [16, 1] : tensor<16xi64> into tensor<16x1xi64>
    %transposed = linalg.transpose ins(%arg1 : tensor<1x4x16x16xf32>) outs(%0 : tensor<1x4x16x16xf32>) permutation = [0, 1, 3, 2] 
    %3 = tensor.empty() : tensor<4x16x16xf32>
    %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %expanded_4 = tensor.expand_shape %4 [[0, 1], [2], [3]] output_shape [1, 4, 16, 16] : tensor<4x16x16xf32> into tensor<1x4x16x16xf32>
    %5 = linalg.generic {indexing_maps = [#map1, #map2, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %transposed : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) outs(%expanded_4 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %18 = arith.mulf %in_8, %cst_2 : f32
      %19 = arith.mulf %in, %cst_2 : f32
      %20 = arith.mulf %19, %18 : f32
      %21 = arith.addf %out, %20 : f32
      linalg.yield %21 : f32
    } -> tensor<1x4x16x16xf32>
    %6 = linalg.generic {indexing_maps = [#map4, #map5, #map6, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%5, %expanded, %expanded_3 : tensor<1x4x16x16xf32>, tensor<1x16xi64>, tensor<16x1xi64>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_8: i64, %in_9: i64, %out: f32):
      %18 = arith.subi %in_8, %in_9 : i64
      %19 = arith.cmpi sle, %18, %c0_i64 : i64
      %20 = arith.select %19, %cst, %cst_0 : f32
      %21 = arith.addf %in, %20 : f32
      linalg.yield %21 : f32
    } -> tensor<1x4x16x16xf32>
    %7 = tensor.empty() : tensor<1x4x16xf32>
    %expanded_5 = tensor.expand_shape %7 [[0], [1], [2, 3]] output_shape [1, 4, 16, 1] : tensor<1x4x16xf32> into tensor<1x4x16x1xf32>
    %8 = linalg.fill ins(%cst_0 : f32) outs(%expanded_5 : tensor<1x4x16x1xf32>) -> tensor<1x4x16x1xf32>
    %expanded_6 = tensor.expand_shape %6 [[0], [1], [2, 3], [4]] output_shape [1, 4, 16, 1, 16] : tensor<1x4x16x16xf32> into tensor<1x4x16x1x16xf32>
    %9 = linalg.generic {indexing_maps = [#map7, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%expanded_6 : tensor<1x4x16x1x16xf32>) outs(%8 : tensor<1x4x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %18 = arith.maximumf %in, %out : f32
      linalg.yield %18 : f32
    } -> tensor<1x4x16x1xf32>
    %10 = linalg.generic {indexing_maps = [#map4, #map8, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%6, %9 : tensor<1x4x16x16xf32>, tensor<1x4x16x1xf32>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %18 = arith.subf %in, %in_8 : f32
      %19 = math.exp %18 : f32
      linalg.yield %19 : f32
    } -> tensor<1x4x16x16xf32>
    %11 = tensor.empty() : tensor<1x4x16x1xf32>
    %12 = linalg.fill ins(%cst : f32) outs(%11 : tensor<1x4x16x1xf32>) -> tensor<1x4x16x1xf32>
    %13 = linalg.generic {indexing_maps = [#map4, #map8], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%10 : tensor<1x4x16x16xf32>) outs(%12 : tensor<1x4x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %18 = arith.addf %in, %out : f32
      linalg.yield %18 : f32
    } -> tensor<1x4x16x1xf32>
    %14 = tensor.empty() : tensor<1x4x16x1xi1>
    %15 = linalg.fill ins(%true : i1) outs(%14 : tensor<1x4x16x1xi1>) -> tensor<1x4x16x1xi1>
    %16 = linalg.generic {indexing_maps = [#map4, #map8], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%6 : tensor<1x4x16x16xf32>) outs(%15 : tensor<1x4x16x1xi1>) {
    ^bb0(%in: f32, %out: i1):
      %18 = arith.extf %in : f32 to f64
      %19 = arith.cmpf oeq, %18, %cst_1 : f64
      %20 = arith.andi %19, %out : i1
      linalg.yield %20 : i1
    } -> tensor<1x4x16x1xi1>
    %expanded_7 = tensor.expand_shape %4 [[0, 1], [2], [3]] output_shape [1, 4, 16, 16] : tensor<4x16x16xf32> into tensor<1x4x16x16xf32>
    %17 = linalg.generic {indexing_maps = [#map9, #map1, #map9, #map2, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%16, %10, %13, %arg2 : tensor<1x4x16x1xi1>, tensor<1x4x16x16xf32>, tensor<1x4x16x1xf32>, tensor<1x4x16x16xf32>) outs(%expanded_7 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: i1, %in_8: f32, %in_9: f32, %in_10: f32, %out: f32):
      %18 = arith.divf %in_8, %in_9 : f32
      %19 = arith.select %in, %cst, %18 : f32
      %20 = arith.mulf %19, %in_10 : f32
      %21 = arith.addf %out, %20 : f32
      linalg.yield %21 : f32
    } -> tensor<1x4x16x16xf32>
    return %17 : tensor<1x4x16x16xf32>
  }

// -----

// linalg.matmul reading its weight transposed through its indexing maps
// (x @ W^T with W [N, K], as IREE and ONNX's Gemm write a linear layer):
// the fused op reads W transposed.
#a = affine_map<(m, n, k) -> (m, k)>
#bt = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func @linear_weight_nk
// CHECK-SAME: (%[[X:.+]]: tensor<8x16xf32>, %[[W:.+]]: tensor<4x16xf32>, %[[B:.+]]: tensor<4xf32>)
// CHECK: %[[WT:.+]] = linalg.transpose ins(%[[W]] : tensor<4x16xf32>) {{.*}} permutation = [1, 0]
// CHECK-NEXT: %[[Y:.+]] = fuel.fused fused_linear (%[[X]], %[[WT]], %[[B]])
// CHECK-NEXT: return %[[Y]]
func.func @linear_weight_nk(%x: tensor<8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<8x4xf32>
  %init = linalg.broadcast ins(%b : tensor<4xf32>) outs(%e : tensor<8x4xf32>) dimensions = [0]
  %y = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%x, %w : tensor<8x16xf32>, tensor<4x16xf32>) outs(%init : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// Grouped-query attention as HuggingFace writes it (repeat_kv: k and v
// broadcast along a new head dim and merged into the query heads): found as
// attention over the repeated k and v.
// CHECK-LABEL: func @gqa_repeat_kv
// CHECK-SAME: (%[[Q:.+]]: tensor<1x4x16x8xf32>, %[[K:.+]]: tensor<1x2x16x8xf32>, %[[V:.+]]: tensor<1x2x16x8xf32>)
// CHECK: %[[KR:.+]] = tensor.collapse_shape
// CHECK: %[[VR:.+]] = tensor.collapse_shape
// CHECK-NEXT: %[[O:.+]] = fuel.fused flash_attn {softmax_scale = 0.353553385 : f32} (%[[Q]], %[[KR]], %[[VR]])
// CHECK-NEXT: return %[[O]]
#qk_q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#qk_k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#qk_o = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#pv_p = affine_map<(b, h, i, e, j) -> (b, h, i, j)>
#pv_v = affine_map<(b, h, i, e, j) -> (b, h, j, e)>
#pv_o = affine_map<(b, h, i, e, j) -> (b, h, i, e)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
func.func @gqa_repeat_kv(%q: tensor<1x4x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 0.353553385 : f32
  %e5 = tensor.empty() : tensor<1x2x2x16x8xf32>
  %kb = linalg.broadcast ins(%k : tensor<1x2x16x8xf32>) outs(%e5 : tensor<1x2x2x16x8xf32>) dimensions = [2]
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x2x2x16x8xf32> into tensor<1x4x16x8xf32>
  %vb = linalg.broadcast ins(%v : tensor<1x2x16x8xf32>) outs(%e5 : tensor<1x2x2x16x8xf32>) dimensions = [2]
  %vr = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<1x2x2x16x8xf32> into tensor<1x4x16x8xf32>
  %es = tensor.empty() : tensor<1x4x16x16xf32>
  %is = linalg.fill ins(%zero : f32) outs(%es : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %kr : tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>) outs(%is : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x4x16x16xf32>
  %ss = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x4x16x16xf32>) outs(%es : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = arith.mulf %a, %scale : f32
    linalg.yield %0 : f32
  } -> tensor<1x4x16x16xf32>
  %er = tensor.empty() : tensor<1x4x16xf32>
  %im = linalg.fill ins(%ninf : f32) outs(%er : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %m = linalg.reduce ins(%ss : tensor<1x4x16x16xf32>) outs(%im : tensor<1x4x16xf32>) dimensions = [3]
    (%in: f32, %acc: f32) {
      %0 = arith.maximumf %in, %acc : f32
      linalg.yield %0 : f32
    }
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ss, %m : tensor<1x4x16x16xf32>, tensor<1x4x16xf32>) outs(%es : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %0 = arith.subf %a, %b : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x4x16x16xf32>
  %iz = linalg.fill ins(%zero : f32) outs(%er : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %sum = linalg.reduce ins(%ex : tensor<1x4x16x16xf32>) outs(%iz : tensor<1x4x16xf32>) dimensions = [3]
    (%in: f32, %acc: f32) {
      %0 = arith.addf %in, %acc : f32
      linalg.yield %0 : f32
    }
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ex, %sum : tensor<1x4x16x16xf32>, tensor<1x4x16xf32>) outs(%es : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %0 = arith.divf %a, %b : f32
    linalg.yield %0 : f32
  } -> tensor<1x4x16x16xf32>
  %eo = tensor.empty() : tensor<1x4x16x8xf32>
  %io = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32>
  %o = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %vr : tensor<1x4x16x16xf32>, tensor<1x4x16x8xf32>) outs(%io : tensor<1x4x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x4x16x8xf32>
  return %o : tensor<1x4x16x8xf32>
}
