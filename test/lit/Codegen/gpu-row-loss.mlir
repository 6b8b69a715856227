// The GPU row-loss schedule: fused_softmax_cross_entropy one block per row
// of logits, the classes split over the block's threads (thread t on
// classes t, t + T, ...), the row maximum and the sum of exponentials each
// combined across the block by gpu.all_reduce, thread 0's loss leaving the
// thread loop through workgroup memory. The sum or the mean over the rows
// is a block of its own. No [R, V] log-softmax.
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu %s | FileCheck %s
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu="report=true" %s \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// CHECK-LABEL: func.func @mean
// CHECK-NOT:     fuel.fused
// CHECK:         %[[LOSSES:.*]] = scf.forall (%[[R:.*]]) in (64) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<64xf32>)
// CHECK:           %[[SLOTS:.*]] = bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<256xf32>
// CHECK:           %[[PER:.*]] = scf.forall (%[[T:.*]]) in (256) shared_outs(%{{.*}} = %[[SLOTS]])
// Coalesced: thread t reads classes t, t + 256, ...
// CHECK:             scf.for %[[J:.*]] = %[[T]] to %c1000 step %c256
// CHECK:               tensor.extract %arg0[%[[R]], %[[J]]] : tensor<64x1000xf32>
// CHECK:               arith.maximumf
// CHECK:             %[[M:.*]] = gpu.all_reduce maximumf %{{.*}} uniform
// CHECK:             scf.for %{{.*}} = %[[T]] to %c1000{{.*}} step %c256
// CHECK:               arith.subf %{{.*}}, %[[M]]
// CHECK:               math.exp
// CHECK:             %[[L:.*]] = gpu.all_reduce add %{{.*}} uniform
// CHECK:             math.log %[[L]]
// CHECK:             %[[TGT:.*]] = tensor.extract %arg1[%[[R]]] : tensor<64xi64>
// CHECK:             arith.cmpi eq, %[[TGT]], %c-100_i64
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:           tensor.extract %[[PER]][%c0] : tensor<256xf32>
// CHECK:         } {mapping = [#gpu.block<x>]}
// The mean: one block, the sum of the losses over the count of kept targets.
// CHECK:         scf.forall (%{{.*}}) in (1)
// CHECK:           scf.forall (%[[T2:.*]]) in (64)
// CHECK:             tensor.extract %[[LOSSES]][%{{.*}}] : tensor<64xf32>
// CHECK:             %[[SUM:.*]] = gpu.all_reduce add
// CHECK:             arith.cmpi ne
// CHECK:             %[[COUNT:.*]] = gpu.all_reduce add
// CHECK:             arith.divf %[[SUM]], %[[COUNT]]
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:         } {mapping = [#gpu.block<x>]}
// CHECK-NOT:     tensor<64x1000xf32> =
// CHECK:         tensor.collapse_shape %{{.*}} [] : tensor<1xf32> into tensor<f32>
func.func @mean(%l: tensor<64x1000xf32>, %t: tensor<64xi64>) -> tensor<f32> {
  %y = fuel.fused fused_softmax_cross_entropy (%l, %t) : (tensor<64x1000xf32>, tensor<64xi64>) -> tensor<f32>
  return %y : tensor<f32>
}

// -----

// reduction = none over [2, 3] targets, f16 logits: the losses of the six
// rows in the targets' shape, in f32; 32 threads for 20 classes; no second
// block.
// CHECK-LABEL: func.func @none
// CHECK:         tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x3x20xf16> into tensor<6x20xf16>
// CHECK:         scf.forall (%{{.*}}) in (6)
// CHECK:           scf.forall (%{{.*}}) in (32)
// CHECK:             arith.extf %{{.*}} : f16 to f32
// CHECK:         } {mapping = [#gpu.block<x>]}
// CHECK-NOT:     scf.forall
// CHECK:         tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xf32>
func.func @none(%l: tensor<2x3x20xf16>, %t: tensor<2x3xi64>) -> tensor<2x3xf32> {
  %y = fuel.fused fused_softmax_cross_entropy {reduction = #fuel.reduction<none>} (%l, %t) : (tensor<2x3x20xf16>, tensor<2x3xi64>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// reduction = sum with another ignore_index: no count of kept targets.
// CHECK-LABEL: func.func @sum
// CHECK:         arith.cmpi eq, %{{.*}}, %c3_i64
// CHECK:         scf.forall (%{{.*}}) in (1)
// CHECK:           scf.forall (%{{.*}}) in (32)
// CHECK-COUNT-1:     gpu.all_reduce add
// CHECK-NOT:         arith.divf
// CHECK:         } {mapping = [#gpu.block<x>]}
func.func @sum(%l: tensor<5x300xbf16>, %t: tensor<5xi64>) -> tensor<f32> {
  %y = fuel.fused fused_softmax_cross_entropy {reduction = #fuel.reduction<sum>, ignore_index = 3 : i64} (%l, %t) : (tensor<5x300xbf16>, tensor<5xi64>) -> tensor<f32>
  return %y : tensor<f32>
}

// -----

// f64 logits and dynamic shapes are left fused, for the decomposition.
// CHECK-LABEL: func.func @unscheduled
// CHECK-NOT:     gpu.all_reduce
// CHECK-COUNT-2: fuel.fused fused_softmax_cross_entropy
// REPORT: not scheduled: the GPU row-loss schedule handles f32, f16 and bf16 logits
// REPORT: not scheduled: the schedule needs static tensor shapes
func.func @unscheduled(%l: tensor<4x100xf64>, %t: tensor<4xi64>, %ld: tensor<?x100xf32>, %td: tensor<?xi64>) -> (tensor<f32>, tensor<f32>) {
  %y = fuel.fused fused_softmax_cross_entropy (%l, %t) : (tensor<4x100xf64>, tensor<4xi64>) -> tensor<f32>
  %z = fuel.fused fused_softmax_cross_entropy (%ld, %td) : (tensor<?x100xf32>, tensor<?xi64>) -> tensor<f32>
  return %y, %z : tensor<f32>, tensor<f32>
}
