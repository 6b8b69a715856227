// The GPU row-wise schedule: one row per block, the row split over the
// block's threads (thread t on chunks t, t + T, ... of V elements, 16 bytes
// where the row allows), each thread's part in vectors, reductions combined
// across the block by gpu.all_reduce.
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu %s | FileCheck %s
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu="max-threads=64" %s \
// RUN:   | FileCheck %s --check-prefix=T64
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu="report=true" %s \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: not fuel-opt --fuel-codegen-gpu="max-threads=48" %s -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADOPT
// BADOPT: fuel-codegen-gpu: max-threads must be a power of two of at least 32, got 48

// CHECK:       #[[$BY4:.*]] = affine_map<(d0) -> (d0 * 4)>
// CHECK-LABEL: func.func @softmax
// CHECK-NOT:     fuel.fused
// CHECK:         scf.forall (%[[ROW:.*]]) in (64) shared_outs(%[[OUT:.*]] = %{{.*}})
// CHECK:           %[[MINE:.*]] = tensor.extract_slice %[[OUT]][%[[ROW]], 0] [1, 1024] [1, 1]
// The row as [C, T * V] = [1, 256 * 4]: thread t's chunk is its columns.
// CHECK:           %[[CHUNKS:.*]] = tensor.expand_shape %[[MINE]] {{\[}}[0], [1, 2]] output_shape [1, 1, 1024]
// CHECK:           scf.forall (%[[T:.*]]) in (256) shared_outs(%[[TOUT:.*]] = %[[CHUNKS]])
// CHECK:             %[[X:.*]] = tensor.extract_slice %arg0[%[[ROW]], 0] [1, 1024] [1, 1]
// CHECK:             %[[XC:.*]] = tensor.expand_shape %[[X]] {{\[}}[0], [1, 2]] output_shape [1, 1, 1024]
// Coalesced, a vector of 4 a thread: thread t reads elements 4t to 4t + 3.
// CHECK:             %[[AT:.*]] = affine.apply #[[$BY4]](%[[T]])
// CHECK:             vector.transfer_read %[[XC]][%{{.*}}, %{{.*}}, %[[AT]]], %{{.*}} {in_bounds = [true, true, true]} : tensor<1x1x1024xf32>, vector<1x1x4xf32>
// CHECK:             vector.multi_reduction <maximumf>, %{{.*}} : vector<1x4xf32> to vector<1xf32>
// CHECK:             gpu.all_reduce maximumf %{{.*}} uniform
// CHECK:             math.exp %{{.*}} : vector<1x4xf32>
// CHECK:             gpu.all_reduce add %{{.*}} uniform
// CHECK:             arith.divf %{{.*}} : vector<1x4xf32>
// CHECK:             %[[AT2:.*]] = affine.apply #[[$BY4]](%[[T]])
// CHECK:             %[[Y:.*]] = vector.transfer_write %{{.*}} : vector<1x1x4xf32>, tensor<1x1x4xf32>
// CHECK:             tensor.parallel_insert_slice %[[Y]] into %[[TOUT]][0, 0, %[[AT2]]] [1, 1, 4] [1, 1, 1]
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:           %[[ROWOUT:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : tensor<1x1x1024xf32> into tensor<1x1024xf32>
// CHECK:           tensor.parallel_insert_slice %[[ROWOUT]] into %[[OUT]][%[[ROW]], 0] [1, 1024] [1, 1]
// CHECK:         } {mapping = [#gpu.block<x>]}
// No row-sized temporary.
// CHECK-NOT:     tensor<1x1024xf32>
// CHECK:         return
// 64 threads: 16 elements a thread, 4 chunks of 4 ([4, 64 * 4]).
// T64-LABEL:   func.func @softmax
// T64:           scf.forall (%{{.*}}) in (64) shared_outs
// T64:             vector.transfer_read {{.*}} : tensor<1x4x256xf32>, vector<1x4x4xf32>
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
// CHECK:             vector.transfer_read {{.*}} : tensor<1x1x4x1024xf32>, vector<1x1x4x4xf32>
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
// row sums (the mean, the variance, the mean of g, of g * x_hat). Rows of
// 512: 128 threads of one 16-byte chunk (4 f32), where 256 threads would
// take chunks of 2 (8 bytes).
// CHECK-LABEL: func.func @layer_norm_backward
// CHECK:         scf.forall (%[[ROW:.*]]) in (16)
// CHECK:           scf.forall (%[[T:.*]]) in (128)
// CHECK:             %[[X:.*]] = tensor.extract_slice %arg0[%[[ROW]], 0] [1, 512] [1, 1]
// CHECK:             %[[XC:.*]] = tensor.expand_shape %[[X]] {{\[}}[0], [1, 2]] output_shape [1, 1, 512]
// CHECK:             vector.transfer_read %[[XC]]{{.*}} : tensor<1x1x512xf32>, vector<1x1x4xf32>
// CHECK-COUNT-2:     gpu.all_reduce add
// CHECK:             %[[G:.*]] = tensor.extract_slice %arg1[%[[ROW]], 0] [1, 512] [1, 1]
// CHECK:             %[[GC:.*]] = tensor.expand_shape %[[G]] {{\[}}[0], [1, 2]] output_shape [1, 1, 512]
// CHECK:             vector.transfer_read %[[GC]]{{.*}} : tensor<1x1x512xf32>, vector<1x1x4xf32>
// CHECK-COUNT-2:     gpu.all_reduce add
// CHECK-NOT:         gpu.all_reduce
// CHECK:         } {mapping = [#gpu.block<x>]}
func.func @layer_norm_backward(%x: tensor<16x512xf32>, %g: tensor<16x512xf32>) -> tensor<16x512xf32> {
  %y = fuel.fused layer_norm_last_dim_backward {eps = 1.0e-05 : f64} (%x, %g) : (tensor<16x512xf32>, tensor<16x512xf32>) -> tensor<16x512xf32>
  return %y : tensor<16x512xf32>
}

// -----

// f16 rows: the statistics in f32 as the decomposition has them; chunks of
// 8 (16 bytes of f16, though the steps between are f32).
// CHECK-LABEL: func.func @softmax_f16
// CHECK:         scf.forall (%{{.*}}) in (256)
// CHECK:           vector.transfer_read {{.*}} : tensor<1x1x2048xf16>, vector<1x1x8xf16>
// CHECK:           gpu.all_reduce maximumf
func.func @softmax_f16(%x: tensor<4x2048xf16>) -> tensor<4x2048xf16> {
  %y = fuel.fused softmax_last_dim (%x) : (tensor<4x2048xf16>) -> tensor<4x2048xf16>
  return %y : tensor<4x2048xf16>
}

// -----

// Rows of 768 (a common hidden size): 64 threads of 3 16-byte chunks,
// where the 256 threads that divide the row would take 3 single elements.
// CHECK-LABEL: func.func @hidden_768
// CHECK:         scf.forall (%[[T:.*]]) in (64)
// CHECK:           tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [1, 3, 256]
// CHECK:           vector.transfer_read {{.*}} : tensor<1x3x256xf32>, vector<1x3x4xf32>
// CHECK:           gpu.all_reduce add
func.func @hidden_768(%x: tensor<5x768xf32>) -> tensor<5x768xf32> {
  %y = fuel.fused rms_norm_last_dim {eps = 1.0e-05 : f64} (%x) : (tensor<5x768xf32>) -> tensor<5x768xf32>
  return %y : tensor<5x768xf32>
}

// -----

// Rows of 96 over 32 threads: 3 elements a thread, no chunk of more than
// one divides it: thread t reads elements t, t + 32, t + 64.
// CHECK-LABEL: func.func @odd_part
// CHECK:         scf.forall (%[[T:.*]]) in (32)
// CHECK:           tensor.extract_slice %arg0[%{{.*}}, %[[T]]] [1, 3] [1, 32] : tensor<9x96xf32> to tensor<1x3xf32>
// CHECK-NOT:       tensor.expand_shape
// CHECK:         } {mapping = [#gpu.block<x>]}
func.func @odd_part(%x: tensor<9x96xf32>) -> tensor<9x96xf32> {
  %y = fuel.fused softmax_last_dim (%x) : (tensor<9x96xf32>) -> tensor<9x96xf32>
  return %y : tensor<9x96xf32>
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
