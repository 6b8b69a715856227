// reduce_max_to_backward on a GPU: where g reduces x's last dim alone the
// row-wise schedule; where it reduces more dims with the last (or the rows
// do not suit the row-wise schedule) a block per group of x, the group's
// max and the count of its elements equal to it each a block reduction
// (gpu.all_reduce) of the threads' partials, then dx elementwise. The
// decomposition reduces each group in one thread.
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu %s | FileCheck %s
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu="report=true" %s \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// Groups over dims 0 and 2 of [5, 3, 8] (3 groups of 40): element j of
// group h is x[j / 8, h, j % 8], 64 threads a block.
// CHECK-LABEL: func.func @strided_groups
// CHECK-NOT:     fuel.fused
// CHECK:         scf.forall (%[[G:.*]]) in (3) shared_outs({{.*}}) -> (tensor<3xf32>, tensor<3xf32>)
// CHECK:           scf.forall (%[[T:.*]]) in (64)
// CHECK:             scf.for %[[J:.*]] = %[[T]] to %c40 step %c64
// CHECK:               %[[IN:.*]] = arith.remui %[[J]], %c8
// CHECK:               %[[OUT:.*]] = arith.divui %[[J]], %c8
// CHECK:               tensor.extract %{{.*}}[%[[OUT]], %[[G]], %[[IN]]] : tensor<5x3x8xf32>
// CHECK:             %[[MAX:.*]] = gpu.all_reduce maximumf
// CHECK:             scf.for
// CHECK:               arith.cmpf oeq, %{{.*}}, %[[MAX]]
// CHECK:             gpu.all_reduce add
// CHECK:             arith.divf
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:         } {mapping = [#gpu.block<x>]}
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<5x3x8xf32>, tensor<1x3x1xf32>, tensor<1x3x1xf32>)
func.func @strided_groups(%x: tensor<5x3x8xf32>, %g: tensor<1x3x1xf32>) -> tensor<5x3x8xf32> {
  %dx = fuel.fused reduce_max_to_backward (%x, %g) : (tensor<5x3x8xf32>, tensor<1x3x1xf32>) -> tensor<5x3x8xf32>
  return %dx : tensor<5x3x8xf32>
}

// -----

// g reducing x's last dim alone, rows a multiple of a warp: the row-wise
// schedule (a block per row, the row in the threads' registers, one
// kernel), here rows of 4,096 f16.
// CHECK-LABEL: func.func @rows
// CHECK:         scf.forall (%{{.*}}) in (32) shared_outs({{.*}}) -> (tensor<32x4096xf16>)
// CHECK:           scf.forall (%{{.*}}) in (256)
// CHECK:             gpu.all_reduce maximumf
// CHECK:             gpu.all_reduce add
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:         } {mapping = [#gpu.block<x>]}
// CHECK-NOT:     linalg.generic
func.func @rows(%x: tensor<32x4096xf16>, %g: tensor<32x1xf16>) -> tensor<32x4096xf16> {
  %dx = fuel.fused reduce_max_to_backward (%x, %g) : (tensor<32x4096xf16>, tensor<32x1xf16>) -> tensor<32x4096xf16>
  return %dx : tensor<32x4096xf16>
}

// -----

// Rows of 3,000 (not a multiple of a warp) take the block per group: 256
// threads, f16 read as f32.
// CHECK-LABEL: func.func @odd_rows
// CHECK:         scf.forall (%{{.*}}) in (48) shared_outs({{.*}}) -> (tensor<48xf32>, tensor<48xf32>)
// CHECK:           scf.forall (%{{.*}}) in (256)
// CHECK:             arith.extf {{.*}} : f16 to f32
// CHECK:         linalg.generic
// CHECK:           arith.truncf {{.*}} : f32 to f16
func.func @odd_rows(%x: tensor<48x3000xf16>, %g: tensor<48x1xf16>) -> tensor<48x3000xf16> {
  %dx = fuel.fused reduce_max_to_backward (%x, %g) : (tensor<48x3000xf16>, tensor<48x1xf16>) -> tensor<48x3000xf16>
  return %dx : tensor<48x3000xf16>
}

// -----

// The last dim kept: the decomposition's thread per group reads
// consecutive groups, so it is kept.
// REPORT: remark: fuel-codegen-gpu: reduce_max_to_backward not scheduled: x's last dim is not reduced (the decomposition's thread per group reads consecutive groups)
// CHECK-LABEL: func.func @columns
// CHECK-NOT:     gpu.all_reduce
func.func @columns(%x: tensor<64x32xf32>, %g: tensor<1x32xf32>) -> tensor<64x32xf32> {
  %dx = fuel.fused reduce_max_to_backward (%x, %g) : (tensor<64x32xf32>, tensor<1x32xf32>) -> tensor<64x32xf32>
  return %dx : tensor<64x32xf32>
}

// -----

// REPORT: remark: fuel-codegen-gpu: reduce_max_to_backward not scheduled: the GPU schedule of reduce_max_to_backward handles f32, f16 and bf16
func.func @double(%x: tensor<4x8xf64>, %g: tensor<4x1xf64>) -> tensor<4x8xf64> {
  %dx = fuel.fused reduce_max_to_backward (%x, %g) : (tensor<4x8xf64>, tensor<4x1xf64>) -> tensor<4x8xf64>
  return %dx : tensor<4x8xf64>
}

// -----

// REPORT: remark: fuel-codegen-gpu: reduce_max_to_backward not scheduled: more groups than the grid's x holds
func.func @huge(%x: tensor<4294967311x2xf32>, %g: tensor<4294967311x1xf32>) -> tensor<4294967311x2xf32> {
  %dx = fuel.fused reduce_max_to_backward (%x, %g) : (tensor<4294967311x2xf32>, tensor<4294967311x1xf32>) -> tensor<4294967311x2xf32>
  return %dx : tensor<4294967311x2xf32>
}
