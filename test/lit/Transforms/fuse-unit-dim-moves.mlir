// Values whose size-1 dims move between the ops of a recipe, as StableHLO's
// dot_product_attention holds its scores ([1, 4, 16, 1, 16] and
// [1, 1, 4, 16, 16]): reshapes by way of a flat vector (a collapse_shape to
// rank 1 and an expand_shape) and copies that only move size-1 dims read as
// the value they reshape. The fused op computes in the layout of its input
// and its result is reshaped to the one the IR holds. A reshape pair that
// regroups dims of size > 1 is no such move.
// RUN: fuel-opt %s --split-input-file --fuel-fuse | FileCheck %s
// RUN: fuel-opt %fuel_src/test/corpus/jax_stablehlo/sdpa.stablehlo2linalg.mlir --fuel-fuse \
// RUN:   | FileCheck %s --check-prefix=SDPA

// jax.nn.dot_product_attention: [B, T, N, H] operands and result, its
// scores [B, N, T, 1, S] (the 1 a group of query heads per kv head) moved to
// [B, 1, N, T, S] for the softmax. The fused op reads the operands
// transposed to [B, N, T, H] and its result is transposed back.
// SDPA:      %[[Q:.*]] = linalg.transpose ins(%arg0 : tensor<1x16x4x16xf32>) outs(%{{.*}} : tensor<1x4x16x16xf32>) permutation = [0, 2, 1, 3]
// SDPA:      %[[K:.*]] = linalg.transpose ins(%arg1 : tensor<1x16x4x16xf32>) outs(%{{.*}} : tensor<1x4x16x16xf32>) permutation = [0, 2, 1, 3]
// SDPA:      %[[V:.*]] = linalg.transpose ins(%arg2 : tensor<1x16x4x16xf32>) outs(%{{.*}} : tensor<1x4x16x16xf32>) permutation = [0, 2, 1, 3]
// SDPA:      %[[O:.*]] = fuel.fused flash_attn {softmax_scale = 2.500000e-01 : f32} (%[[Q]], %[[K]], %[[V]])
// SDPA:      %[[R:.*]] = linalg.transpose ins(%[[O]] : tensor<1x4x16x16xf32>) outs(%{{.*}} : tensor<1x16x4x16xf32>) permutation = [0, 2, 1, 3]
// SDPA-NOT:  linalg.generic
// SDPA:      return %[[R]]

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1)>

// CHECK-LABEL: func.func @through_flat_vectors
// CHECK:         %[[S:.*]] = fuel.fused softmax_last_dim (%arg0) : (tensor<4x1x8xf32>) -> tensor<4x1x8xf32>
// CHECK-NEXT:    %[[C:.*]] = tensor.collapse_shape %[[S]] {{\[}}[0], [1, 2]] : tensor<4x1x8xf32> into tensor<4x8xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.expand_shape %[[C]] {{\[}}[0, 1], [2]] output_shape [1, 4, 8] : tensor<4x8xf32> into tensor<1x4x8xf32>
// CHECK-NEXT:    return %[[E]]
func.func @through_flat_vectors(%x: tensor<4x1x8xf32>) -> tensor<1x4x8xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x1xf32>
  %f0 = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<4x1xf32>) -> tensor<4x1xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x1x8xf32>) outs(%f0 : tensor<4x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %out, %in : f32
    linalg.yield %m : f32
  } -> tensor<4x1xf32>
  %mflat = tensor.collapse_shape %max [[0, 1]] : tensor<4x1xf32> into tensor<4xf32>
  %m2 = tensor.expand_shape %mflat [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
  %xflat = tensor.collapse_shape %x [[0, 1, 2]] : tensor<4x1x8xf32> into tensor<32xf32>
  %x2 = tensor.expand_shape %xflat [[0, 1, 2]] output_shape [1, 4, 8] : tensor<32xf32> into tensor<1x4x8xf32>
  %e1 = tensor.empty() : tensor<1x4x8xf32>
  %sub = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x2, %m2 : tensor<1x4x8xf32>, tensor<1x4xf32>) outs(%e1 : tensor<1x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sub : tensor<1x4x8xf32>) outs(%e1 : tensor<1x4x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<1x4x8xf32>
  %e2 = tensor.empty() : tensor<1x4xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x4xf32>) -> tensor<1x4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%exp : tensor<1x4x8xf32>) outs(%f2 : tensor<1x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<1x4xf32>
  %div = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%exp, %sum : tensor<1x4x8xf32>, tensor<1x4xf32>) outs(%e1 : tensor<1x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %q = arith.divf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<1x4x8xf32>
  return %div : tensor<1x4x8xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1)>
#swap = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#swap2 = affine_map<(d0, d1) -> (d1, d0)>

// The max and the input copied from [4, 1] and [4, 1, 8] into [1, 4] and
// [1, 4, 8] by transposes that only move the size-1 dim.
// CHECK-LABEL: func.func @through_unit_dim_copies
// CHECK:         %[[S:.*]] = fuel.fused softmax_last_dim (%arg0) : (tensor<4x1x8xf32>) -> tensor<4x1x8xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         tensor.expand_shape
// CHECK-NEXT:    return
func.func @through_unit_dim_copies(%x: tensor<4x1x8xf32>) -> tensor<1x4x8xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x1xf32>
  %f0 = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<4x1xf32>) -> tensor<4x1xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x1x8xf32>) outs(%f0 : tensor<4x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %out, %in : f32
    linalg.yield %m : f32
  } -> tensor<4x1xf32>
  %em = tensor.empty() : tensor<1x4xf32>
  %m2 = linalg.generic {indexing_maps = [#swap2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%max : tensor<4x1xf32>) outs(%em : tensor<1x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x4xf32>
  %e1 = tensor.empty() : tensor<1x4x8xf32>
  %x2 = linalg.generic {indexing_maps = [#swap, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<4x1x8xf32>) outs(%e1 : tensor<1x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x4x8xf32>
  %sub = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x2, %m2 : tensor<1x4x8xf32>, tensor<1x4xf32>) outs(%e1 : tensor<1x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sub : tensor<1x4x8xf32>) outs(%e1 : tensor<1x4x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<1x4x8xf32>
  %e2 = tensor.empty() : tensor<1x4xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x4xf32>) -> tensor<1x4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%exp : tensor<1x4x8xf32>) outs(%f2 : tensor<1x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<1x4xf32>
  %div = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%exp, %sum : tensor<1x4x8xf32>, tensor<1x4xf32>) outs(%e1 : tensor<1x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %q = arith.divf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<1x4x8xf32>
  return %div : tensor<1x4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Rows of x transposed ([2, 4] rows into [4, 2]) and their maxima reshaped
// from [2, 4] to [4, 2] through a flat vector: row (a, b) is x's row (b, a)
// and its max is that of row 2a + b in x's order, not its own. Nothing is
// fused.
// CHECK-LABEL: func.func @flat_vector_reorders
// CHECK-NOT:     fuel.fused
func.func @flat_vector_reorders(%x: tensor<2x4x8xf32>) -> tensor<4x2x8xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<2x4xf32>
  %f0 = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<2x4x8xf32>) outs(%f0 : tensor<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %out, %in : f32
    linalg.yield %m : f32
  } -> tensor<2x4xf32>
  %mflat = tensor.collapse_shape %max [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  %m2 = tensor.expand_shape %mflat [[0, 1]] output_shape [4, 2] : tensor<8xf32> into tensor<4x2xf32>
  %e1 = tensor.empty() : tensor<4x2x8xf32>
  %x2 = linalg.transpose ins(%x : tensor<2x4x8xf32>) outs(%e1 : tensor<4x2x8xf32>) permutation = [1, 0, 2]
  %sub = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x2, %m2 : tensor<4x2x8xf32>, tensor<4x2xf32>) outs(%e1 : tensor<4x2x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<4x2x8xf32>
  %exp = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sub : tensor<4x2x8xf32>) outs(%e1 : tensor<4x2x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<4x2x8xf32>
  %e2 = tensor.empty() : tensor<4x2xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%exp : tensor<4x2x8xf32>) outs(%f2 : tensor<4x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<4x2xf32>
  %div = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%exp, %sum : tensor<4x2x8xf32>, tensor<4x2xf32>) outs(%e1 : tensor<4x2x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %q = arith.divf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<4x2x8xf32>
  return %div : tensor<4x2x8xf32>
}
