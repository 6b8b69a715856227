// The GPU contraction schedule (fused_linear where its operands cannot be
// staged in workgroup memory, gpu-staged-linear.mlir: here K is not a
// multiple of 8, or N of 32): block tiles of the output on #gpu.block,
// 4 x 4 thread tiles on #gpu.thread (x along N), each thread's reduction
// over K in steps with the accumulator in registers, the bias add fused in.
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu %s | FileCheck %s
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu="max-threads=64" %s \
// RUN:   | FileCheck %s --check-prefix=T64
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu="report=true" %s \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// CHECK-LABEL: func.func @linear
// CHECK-NOT:     fuel.fused
// CHECK:         scf.forall (%[[I:.*]], %[[J:.*]]) = (0, 0) to (256, 512) step (64, 64)
// CHECK:           scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (64, 64) step (4, 4)
// The accumulator: a 4 x 4 tile, zeroed, carried over K in steps of 4.
// CHECK:             %[[ZERO:.*]] = vector.transfer_write %{{.*}} : vector<4x4xf32>, tensor<4x4xf32>
// CHECK:             scf.for %{{.*}} = %{{.*}} to %c1020{{.*}} step %c4{{.*}} iter_args(%{{.*}} = %[[ZERO]])
// CHECK:               vector.transfer_read %arg0{{.*}} : tensor<256x1020xf32>, vector<4x4xf32>
// CHECK:               vector.transfer_read %arg1{{.*}} : tensor<1020x512xf32>, vector<4x4xf32>
// CHECK:               vector.contract {{.*}} : vector<4x4xf32>, vector<4x4xf32> into vector<4x4xf32>
// The bias, once per tile.
// CHECK:             vector.transfer_read %arg2{{.*}} : tensor<512xf32>, vector<4xf32>
// CHECK:             arith.addf %{{.*}} : vector<4x4xf32>
// CHECK:           } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
// CHECK:         } {mapping = [#gpu.block<y>, #gpu.block<x>]}
// At most 64 threads: 32 x 32 block tiles.
// T64-LABEL:   func.func @linear
// T64:           scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (256, 512) step (32, 32)
// T64:             scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (32, 32) step (4, 4)
func.func @linear(%x: tensor<256x1020xf32>, %w: tensor<1020x512xf32>, %b: tensor<512xf32>) -> tensor<256x512xf32> {
  %y = fuel.fused fused_linear (%x, %w, %b) : (tensor<256x1020xf32>, tensor<1020x512xf32>, tensor<512xf32>) -> tensor<256x512xf32>
  return %y : tensor<256x512xf32>
}

// -----

// A leading dim on z; f16 widened to f32 per step; K = 96 in steps of 8;
// N = 48: block tiles of 16 columns.
// CHECK-LABEL: func.func @batched_f16
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0) to (2, 64, 48) step (1, 64, 16)
// CHECK:           scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0) to (1, 64, 16) step (1, 4, 4)
// CHECK:             scf.for %{{.*}} = %{{.*}} to %c96{{.*}} step %c8
// CHECK:               arith.extf %{{.*}} : vector<1x4x8xf16> to vector<1x4x8xf32>
// CHECK:               vector.contract
// CHECK:           } {mapping = [#gpu.thread<z>, #gpu.thread<y>, #gpu.thread<x>]}
// CHECK:         } {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
func.func @batched_f16(%x: tensor<2x64x96xf16>, %w: tensor<96x48xf16>, %b: tensor<48xf16>) -> tensor<2x64x48xf16> {
  %y = fuel.fused fused_linear (%x, %w, %b) : (tensor<2x64x96xf16>, tensor<96x48xf16>, tensor<48xf16>) -> tensor<2x64x48xf16>
  return %y : tensor<2x64x48xf16>
}

// -----

// CHECK-LABEL: func.func @f64
// CHECK:         fuel.fused fused_linear
// CHECK-NOT:     workgroup
// REPORT: remark: fuel-codegen-gpu: fused_linear not scheduled: the GPU contraction schedule handles f32, f16 and bf16
func.func @f64(%x: tensor<32x64xf64>, %w: tensor<64x48xf64>, %b: tensor<48xf64>) -> tensor<32x48xf64> {
  %y = fuel.fused fused_linear (%x, %w, %b) : (tensor<32x64xf64>, tensor<64x48xf64>, tensor<48xf64>) -> tensor<32x48xf64>
  return %y : tensor<32x48xf64>
}

// -----

// CHECK-LABEL: func.func @odd_rows
// CHECK:         fuel.fused fused_linear
// CHECK-NOT:     workgroup
// REPORT: remark: fuel-codegen-gpu: fused_linear not scheduled: the GPU contraction schedule needs M and N multiples of 4 (got 30, 48)
func.func @odd_rows(%x: tensor<30x64xf32>, %w: tensor<64x48xf32>, %b: tensor<48xf32>) -> tensor<30x48xf32> {
  %y = fuel.fused fused_linear (%x, %w, %b) : (tensor<30x64xf32>, tensor<64x48xf32>, tensor<48xf32>) -> tensor<30x48xf32>
  return %y : tensor<30x48xf32>
}

// -----

// CHECK-LABEL: func.func @two_leading_dims
// CHECK:         fuel.fused fused_linear
// CHECK-NOT:     workgroup
// REPORT: remark: fuel-codegen-gpu: fused_linear not scheduled: the GPU contraction schedule takes at most one leading dim (a grid dim), got 2
func.func @two_leading_dims(%x: tensor<2x2x32x64xf32>, %w: tensor<64x48xf32>, %b: tensor<48xf32>) -> tensor<2x2x32x48xf32> {
  %y = fuel.fused fused_linear (%x, %w, %b) : (tensor<2x2x32x64xf32>, tensor<64x48xf32>, tensor<48xf32>) -> tensor<2x2x32x48xf32>
  return %y : tensor<2x2x32x48xf32>
}
