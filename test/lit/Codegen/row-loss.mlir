// The row-loss schedule: fused_softmax_cross_entropy one row per scf.forall
// iteration, the row read twice in 16-lane vectors (max, then the sum of
// exponentials), the target's logit read once; the mean over the rows not
// ignored after the loop. No [R, V] log-softmax.
// RUN: fuel-opt --split-input-file --fuel-codegen-cpu %s | FileCheck %s
// RUN: fuel-opt --split-input-file --fuel-codegen-cpu="report=true" %s \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// CHECK-LABEL: func.func @mean
// CHECK-NOT:     tensor.empty() : tensor<64x128xf32>
// CHECK:         scf.forall (%[[R:.*]]) in (64)
// CHECK:           scf.for {{.*}} step %c16{{.*}} -> (vector<16xf32>)
// CHECK:             arith.maximumf {{.*}} : vector<16xf32>
// CHECK:           vector.reduction <maximumf>
// CHECK:           scf.for {{.*}} step %c16{{.*}} -> (vector<16xf32>)
// CHECK:             math.exp {{.*}} : vector<16xf32>
// CHECK:           vector.reduction <add>
// CHECK:           math.log
// CHECK:           %[[T:.*]] = tensor.extract %{{.*}}[%[[R]]] : tensor<64xi64>
// CHECK:           arith.cmpi eq, %[[T]], %c-100_i64
// CHECK:         scf.forall.in_parallel
// The sum over rows, the count of targets kept, their quotient.
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction"]
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction"]
// CHECK:           arith.cmpi ne
// CHECK:         arith.divf
func.func @mean(%l: tensor<64x128xf32>, %t: tensor<64xi64>) -> tensor<f32> {
  %y = fuel.fused fused_softmax_cross_entropy (%l, %t) : (tensor<64x128xf32>, tensor<64xi64>) -> tensor<f32>
  return %y : tensor<f32>
}

// -----

// reduction = none: the per-row losses in the targets' shape.
// CHECK-LABEL: func.func @none
// CHECK:         tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x3x32xf16> into tensor<6x32xf16>
// CHECK:         scf.forall (%{{.*}}) in (6)
// CHECK:           arith.extf %{{.*}} : vector<16xf16> to vector<16xf32>
// CHECK:         tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xf32>
func.func @none(%l: tensor<2x3x32xf16>, %t: tensor<2x3xi64>) -> tensor<2x3xf32> {
  %y = fuel.fused fused_softmax_cross_entropy {reduction = #fuel.reduction<none>} (%l, %t) : (tensor<2x3x32xf16>, tensor<2x3xi64>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// A class count that is not a multiple of the vector width: the whole
// vectors in the loop, the last 5 classes in one vector read under a mask
// (out of bounds, -inf past the row) after it, in both passes.
// CHECK-LABEL: func.func @ragged
// CHECK:         scf.forall
// CHECK:           scf.for %{{.*}} = %c0{{.*}} to %c48{{.*}} step %c16
// CHECK:           %[[M:.*]] = vector.transfer_read %{{.*}}[%{{.*}}, %c48{{.*}}], %[[NEGINF:.*]] : tensor<4x53xf32>, vector<16xf32>
// CHECK:           arith.maximumf %{{.*}}, %[[M]]
// CHECK:           scf.for %{{.*}} = %c0{{.*}} to %c48{{.*}} step %c16
// CHECK:           vector.transfer_read %{{.*}}[%{{.*}}, %c48{{.*}}], %[[NEGINF]] : tensor<4x53xf32>, vector<16xf32>
// CHECK:           math.exp
func.func @ragged(%l: tensor<4x53xf32>, %t: tensor<4xi64>) -> tensor<f32> {
  %y = fuel.fused fused_softmax_cross_entropy (%l, %t) : (tensor<4x53xf32>, tensor<4xi64>) -> tensor<f32>
  return %y : tensor<f32>
}

// -----

// Dynamic rows: the loop runs to the row count read from the logits.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK:         tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<?x?x40xf32> into tensor<?x40xf32>
// CHECK:         %[[R:.*]] = tensor.dim %{{.*}}, %c0{{.*}} : tensor<?x40xf32>
// CHECK:         scf.forall (%{{.*}}) in (%[[R]])
func.func @dynamic_rows(%l: tensor<?x?x40xf32>, %t: tensor<?x?xi64>) -> tensor<f32> {
  %y = fuel.fused fused_softmax_cross_entropy (%l, %t) : (tensor<?x?x40xf32>, tensor<?x?xi64>) -> tensor<f32>
  return %y : tensor<f32>
}

// -----

// REPORT: not scheduled: the row-loss schedule needs a static class count
// REPORT: not scheduled: the row-loss schedule returns per-row losses of dynamic rows only for one dim of targets
func.func @dynamic_unscheduled(%l: tensor<4x?xf32>, %t: tensor<4xi64>, %l3: tensor<?x?x40xf32>, %t2: tensor<?x?xi64>) -> (tensor<f32>, tensor<?x?xf32>) {
  %y = fuel.fused fused_softmax_cross_entropy (%l, %t) : (tensor<4x?xf32>, tensor<4xi64>) -> tensor<f32>
  %z = fuel.fused fused_softmax_cross_entropy {reduction = #fuel.reduction<none>} (%l3, %t2) : (tensor<?x?x40xf32>, tensor<?x?xi64>) -> tensor<?x?xf32>
  return %y, %z : tensor<f32>, tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func.func @unscheduled
// CHECK: fuel.fused fused_softmax_cross_entropy
// REPORT: not scheduled: the row-loss schedule needs at least a vector of classes (16; got 10)
// REPORT: not scheduled: the row-loss schedule handles f32, f16 and bf16 logits
func.func @unscheduled(%l: tensor<4x10xf32>, %t: tensor<4xi64>, %l64: tensor<4x16xf64>) -> (tensor<f32>, tensor<f32>) {
  %y = fuel.fused fused_softmax_cross_entropy (%l, %t) : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  %z = fuel.fused fused_softmax_cross_entropy (%l64, %t) : (tensor<4x16xf64>, tensor<4xi64>) -> tensor<f32>
  return %y, %z : tensor<f32>, tensor<f32>
}
