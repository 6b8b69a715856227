// The rotary schedule (rope) on the CPU: x as rows of D, a row per
// scf.forall iteration, the row's pairs (p, p + D/2) in vectors of up to
// 16: both halves of x and the four table vectors at the row's position
// read once, both results written once. No slices, negation or concat of
// x-sized tensors (the decomposition's).
// RUN: fuel-opt --split-input-file --fuel-codegen-cpu %s | FileCheck %s
// RUN: fuel-opt --split-input-file --fuel-codegen-cpu="report=true" %s \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// CHECK-LABEL: func.func @rope
// CHECK-NOT:     tensor.concat
// CHECK:         %[[X:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<2x128x64xf32> into tensor<256x64xf32>
// CHECK:         scf.forall (%[[ROW:.*]]) in (256)
// CHECK:           %[[S:.*]] = arith.remui %[[ROW]], %c128
// CHECK:           scf.for %[[P:.*]] = %c0 to %c32 step %c16
// CHECK:             %[[Q:.*]] = arith.addi %[[P]], %c32
// CHECK-DAG:         vector.transfer_read %[[X]][%[[ROW]], %[[P]]]{{.*}} vector<16xf32>
// CHECK-DAG:         vector.transfer_read %[[X]][%[[ROW]], %[[Q]]]{{.*}} vector<16xf32>
// CHECK-DAG:         vector.transfer_read %{{.*}}[%[[S]], %[[P]]]{{.*}} vector<16xf32>
// CHECK:             arith.subf {{.*}} : vector<16xf32>
// CHECK:             arith.addf {{.*}} : vector<16xf32>
// CHECK:             vector.transfer_write {{.*}}[%c0{{.*}}, %[[P]]]
// CHECK:             vector.transfer_write {{.*}}[%c0{{.*}}, %[[Q]]]
// CHECK:         tensor.expand_shape {{.*}} into tensor<2x128x64xf32>
func.func @rope(%x: tensor<2x128x64xf32>, %c: tensor<128x64xf32>, %s: tensor<128x64xf32>) -> tensor<2x128x64xf32> {
  %y = fuel.fused rope (%x, %c, %s) : (tensor<2x128x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<2x128x64xf32>
  return %y : tensor<2x128x64xf32>
}

// -----

// A half row of 10: vectors of 2; bf16 widened to f32.
// CHECK-LABEL: func.func @narrow
// CHECK:         scf.for %{{.*}} = %c0 to %c10 step %c2
// CHECK:           arith.extf {{.*}} : vector<2xbf16> to vector<2xf32>
// CHECK:           arith.truncf {{.*}} : vector<2xf32> to vector<2xbf16>
func.func @narrow(%x: tensor<13x20xbf16>, %c: tensor<13x20xbf16>, %s: tensor<13x20xbf16>) -> tensor<13x20xbf16> {
  %y = fuel.fused rope (%x, %c, %s) : (tensor<13x20xbf16>, tensor<13x20xbf16>, tensor<13x20xbf16>) -> tensor<13x20xbf16>
  return %y : tensor<13x20xbf16>
}

// -----

// REPORT: remark: fuel-codegen-cpu: rope not scheduled: the rotary schedule needs static shapes
// CHECK-LABEL: func.func @dynamic
// CHECK:         fuel.fused rope
func.func @dynamic(%x: tensor<?x8xf32>, %c: tensor<?x8xf32>, %s: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %y = fuel.fused rope (%x, %c, %s) : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
