// The GPU row-wise schedule: one row per block, the row split over the
// block's threads (thread t on elements t, t + T, ...), each thread's part
// in vectors, reductions combined across the block by gpu.all_reduce.
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu %s | FileCheck %s
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu="max-threads=64" %s \
// RUN:   | FileCheck %s --check-prefix=T64
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu="report=true" %s \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: not fuel-opt --fuel-codegen-gpu="max-threads=48" %s -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADOPT
// BADOPT: fuel-codegen-gpu: max-threads must be a power of two of at least 32, got 48

// CHECK-LABEL: func.func @softmax
// CHECK-NOT:     fuel.fused
// CHECK:         scf.forall (%[[ROW:.*]]) in (64) shared_outs(%[[OUT:.*]] = %{{.*}})
// CHECK:           %[[MINE:.*]] = tensor.extract_slice %[[OUT]][%[[ROW]], 0] [1, 1024] [1, 1]
// CHECK:           scf.forall (%[[T:.*]]) in (256) shared_outs(%[[TOUT:.*]] = %[[MINE]])
// Coalesced: thread t reads elements t, t + 256, t + 512, t + 768.
// CHECK:             tensor.extract_slice %{{.*}}[%[[ROW]], %[[T]]] [1, 4] [1, 256] : tensor<64x1024xf32> to tensor<1x4xf32>
// CHECK:             vector.multi_reduction <maximumf>, %{{.*}} : vector<1x4xf32> to vector<1xf32>
// CHECK:             gpu.all_reduce maximumf %{{.*}} uniform
// CHECK:             math.exp %{{.*}} : vector<1x4xf32>
// CHECK:             gpu.all_reduce add %{{.*}} uniform
// CHECK:             arith.divf %{{.*}} : vector<1x4xf32>
// CHECK:             tensor.parallel_insert_slice %{{.*}} into %[[TOUT]][0, %[[T]]] [1, 4] [1, 256]
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:           tensor.parallel_insert_slice %{{.*}} into %[[OUT]][%[[ROW]], 0] [1, 1024] [1, 1]
// CHECK:         } {mapping = [#gpu.block<x>]}
// No row-sized temporary.
// CHECK-NOT:     tensor<1x1024xf32>
// CHECK:         return
// T64-LABEL:   func.func @softmax
// T64:           scf.forall (%{{.*}}) in (64) shared_outs
// T64:             tensor.extract_slice %{{.*}} [1, 16] [1, 64] : tensor<64x1024xf32> to tensor<1x16xf32>
func.func @softmax(%x: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
  %y = fuel.fused softmax_last_dim (%x) : (tensor<64x1024xf32>) -> tensor<64x1024xf32>
  return %y : tensor<64x1024xf32>
}

// -----

// Two leading dims: a 2-D grid, the innermost dim on x. The mean square is
// one all_reduce.
// CHECK-LABEL: func.func @rms
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (2, 8)
// CHECK:           scf.forall (%{{.*}}) in (256)
// CHECK:             tensor.extract_slice %{{.*}} [1, 1, 16] [1, 1, 256] : tensor<2x8x4096xf32> to tensor<1x1x16xf32>
// CHECK-COUNT-1:     gpu.all_reduce add
// CHECK-NOT:         gpu.all_reduce
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:         } {mapping = [#gpu.block<y>, #gpu.block<x>]}
func.func @rms(%x: tensor<2x8x4096xf32>) -> tensor<2x8x4096xf32> {
  %y = fuel.fused rms_norm_last_dim {eps = 1.0e-05 : f64} (%x) : (tensor<2x8x4096xf32>) -> tensor<2x8x4096xf32>
  return %y : tensor<2x8x4096xf32>
}

// -----

// A backward with two inputs: both read with the same thread slice; four
// row sums (the mean, the variance, the mean of g, of g * x_hat).
// CHECK-LABEL: func.func @layer_norm_backward
// CHECK:         scf.forall (%[[ROW:.*]]) in (16)
// CHECK:           scf.forall (%[[T:.*]]) in (256)
// CHECK:             tensor.extract_slice %arg0[%[[ROW]], %[[T]]] [1, 2] [1, 256]
// CHECK-COUNT-2:     gpu.all_reduce add
// CHECK:             tensor.extract_slice %arg1[%[[ROW]], %[[T]]] [1, 2] [1, 256]
// CHECK-COUNT-2:     gpu.all_reduce add
// CHECK-NOT:         gpu.all_reduce
// CHECK:         } {mapping = [#gpu.block<x>]}
func.func @layer_norm_backward(%x: tensor<16x512xf32>, %g: tensor<16x512xf32>) -> tensor<16x512xf32> {
  %y = fuel.fused layer_norm_last_dim_backward {eps = 1.0e-05 : f64} (%x, %g) : (tensor<16x512xf32>, tensor<16x512xf32>) -> tensor<16x512xf32>
  return %y : tensor<16x512xf32>
}

// -----

// f16 rows: the statistics in f32 as the decomposition has them.
// CHECK-LABEL: func.func @softmax_f16
// CHECK:         scf.forall (%{{.*}}) in (256)
// CHECK:           tensor.extract_slice %{{.*}} [1, 8] [1, 256] : tensor<4x2048xf16> to tensor<1x8xf16>
// CHECK:           gpu.all_reduce maximumf
func.func @softmax_f16(%x: tensor<4x2048xf16>) -> tensor<4x2048xf16> {
  %y = fuel.fused softmax_last_dim (%x) : (tensor<4x2048xf16>) -> tensor<4x2048xf16>
  return %y : tensor<4x2048xf16>
}

// -----

// Declined, left for fuel-decompose (one kernel per loop nest later).
// CHECK-LABEL: func.func @not_a_warp
// CHECK:         fuel.fused softmax_last_dim
// REPORT: remark: fuel-codegen-gpu: softmax_last_dim not scheduled: the row length (48) is not a multiple of a warp (32)
func.func @not_a_warp(%x: tensor<4x48xf32>) -> tensor<4x48xf32> {
  %y = fuel.fused softmax_last_dim (%x) : (tensor<4x48xf32>) -> tensor<4x48xf32>
  return %y : tensor<4x48xf32>
}

// -----

// Rows too long for the block's threads to hold in registers (here 2^40
// elements: 2^32 per thread) lower as decomposed.
// CHECK-LABEL: func.func @row_too_long
// CHECK:         fuel.fused softmax_last_dim
// REPORT: remark: fuel-codegen-gpu: softmax_last_dim not scheduled: the row length (1099511627776) is more than 256 elements for each of 256 threads to hold in registers
// T64-LABEL: func.func @row_too_long
// T64:         fuel.fused softmax_last_dim
func.func @row_too_long(%x: tensor<2x1099511627776xf16>) -> tensor<2x1099511627776xf16> {
  %y = fuel.fused softmax_last_dim (%x) : (tensor<2x1099511627776xf16>) -> tensor<2x1099511627776xf16>
  return %y : tensor<2x1099511627776xf16>
}

// -----

// CHECK-LABEL: func.func @too_many_leading_dims
// CHECK:         fuel.fused softmax_last_dim
// REPORT: remark: fuel-codegen-gpu: softmax_last_dim not scheduled: the GPU row-wise schedule needs rows in one to three leading dims (one grid dim each): a rank from 2 to 4, got 5
func.func @too_many_leading_dims(%x: tensor<2x2x2x2x64xf32>) -> tensor<2x2x2x2x64xf32> {
  %y = fuel.fused softmax_last_dim (%x) : (tensor<2x2x2x2x64xf32>) -> tensor<2x2x2x2x64xf32>
  return %y : tensor<2x2x2x2x64xf32>
}

// -----

// CHECK-LABEL: func.func @dynamic
// CHECK:         fuel.fused softmax_last_dim
// REPORT: remark: fuel-codegen-gpu: softmax_last_dim not scheduled: the schedule needs static tensor shapes
func.func @dynamic(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %y = fuel.fused softmax_last_dim (%x) : (tensor<?x64xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// No schedule at all.
// CHECK-LABEL: func.func @powi
// CHECK:         fuel.fused powi_backward
// REPORT: remark: fuel-codegen-gpu: powi_backward not scheduled: the op has no GPU schedule
func.func @powi(%x: tensor<64xf32>, %g: tensor<64xf32>) -> tensor<64xf32> {
  %y = fuel.fused powi_backward {exp = 3 : i32} (%x, %g) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

// CHECK-LABEL: func.func @empty_rows
// CHECK:         fuel.fused layer_norm_last_dim
// REPORT: remark: fuel-codegen-gpu: layer_norm_last_dim not scheduled: the GPU schedules need non-empty tensors
func.func @empty_rows(%x: tensor<2x0xf64>) -> tensor<2x0xf64> {
  %y = fuel.fused layer_norm_last_dim {eps = 1.0 : f64} (%x) : (tensor<2x0xf64>) -> tensor<2x0xf64>
  return %y : tensor<2x0xf64>
}
