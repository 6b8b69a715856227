// The GPU form of the rotary schedule (rope): one kernel, x as rows of D, a
// thread per pair of elements (p, p + D/2) of a row that reads both and
// writes both; blocks of rows on the grid. The decomposition is four loop
// nests or more.
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu %s | FileCheck %s
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu="report=true" %s \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// [2, 8, 128, 64] as 2,048 rows of 64: 32 pairs a row, so 4 rows a block
// of 128 threads; thread (r, t) writes elements t and t + 32 of its row
// (a slice of 2 with stride 32), the table row of position row % 128.
// CHECK-LABEL: func.func @rope
// CHECK-NOT:     fuel.fused
// CHECK:         %[[X:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2], [3]] : tensor<2x8x128x64xf32> into tensor<2048x64xf32>
// CHECK:         scf.forall (%[[B:.*]]) in (512) shared_outs
// CHECK:           %[[FIRST:.*]] = arith.muli %[[B]], %c4
// CHECK:           scf.forall (%[[R:.*]], %[[T:.*]]) in (4, 32) shared_outs(%[[ROWS:.*]] = %{{.*}})
// CHECK:             %[[MINE:.*]] = tensor.extract_slice %[[ROWS]][%[[R]], %[[T]]] [1, 2] [1, 32]
// CHECK:             %[[ROW:.*]] = arith.addi %[[FIRST]], %[[R]]
// CHECK:             %[[POS:.*]] = arith.remui %[[ROW]], %c128
// CHECK:             tensor.extract %[[X]][%[[ROW]], %{{.*}}] : tensor<2048x64xf32>
// CHECK:             arith.subf
// CHECK:             arith.addf
// CHECK:             tensor.parallel_insert_slice %{{.*}} into %[[ROWS]][%[[R]], %[[T]]] [1, 2] [1, 32]
// CHECK:           } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
// CHECK:         } {mapping = [#gpu.block<x>]}
// CHECK:         tensor.expand_shape {{.*}} into tensor<2x8x128x64xf32>
func.func @rope(%x: tensor<2x8x128x64xf32>, %c: tensor<128x64xf32>, %s: tensor<128x64xf32>) -> tensor<2x8x128x64xf32> {
  %y = fuel.fused rope (%x, %c, %s) : (tensor<2x8x128x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<2x8x128x64xf32>
  return %y : tensor<2x8x128x64xf32>
}

// -----

// Half rows of 600 pairs: 200 threads (the largest divisor of 600 up to
// 256) of 3 pairs each; 7 rows (prime): a row a block. bf16 in f32.
// CHECK-LABEL: func.func @wide
// CHECK:         scf.forall (%{{.*}}) in (7)
// CHECK:           scf.forall (%{{.*}}, %{{.*}}) in (1, 200)
// CHECK:             tensor.extract_slice {{.*}} [1, 6] [1, 200]
// CHECK:             arith.extf {{.*}} : bf16 to f32
// CHECK:             arith.truncf {{.*}} : f32 to bf16
func.func @wide(%x: tensor<7x1200xbf16>, %c: tensor<7x1200xbf16>, %s: tensor<7x1200xbf16>) -> tensor<7x1200xbf16> {
  %y = fuel.fused rope (%x, %c, %s) : (tensor<7x1200xbf16>, tensor<7x1200xbf16>, tensor<7x1200xbf16>) -> tensor<7x1200xbf16>
  return %y : tensor<7x1200xbf16>
}

// -----

// f64 is left to the decomposition.
// REPORT: remark: fuel-codegen-gpu: rope not scheduled: the rotary schedule handles f32, f16 and bf16
// CHECK-LABEL: func.func @double
// CHECK-NOT:     #gpu.thread
func.func @double(%x: tensor<4x8xf64>, %c: tensor<4x8xf64>, %s: tensor<4x8xf64>) -> tensor<4x8xf64> {
  %y = fuel.fused rope (%x, %c, %s) : (tensor<4x8xf64>, tensor<4x8xf64>, tensor<4x8xf64>) -> tensor<4x8xf64>
  return %y : tensor<4x8xf64>
}

// -----

// More blocks of rows than the grid's x (2^31 - 1) holds.
// REPORT: remark: fuel-codegen-gpu: rope not scheduled: more blocks of rows than the grid's x holds
func.func @huge(%x: tensor<4294967311x2xf32>, %c: tensor<4294967311x2xf32>, %s: tensor<4294967311x2xf32>) -> tensor<4294967311x2xf32> {
  %y = fuel.fused rope (%x, %c, %s) : (tensor<4294967311x2xf32>, tensor<4294967311x2xf32>, tensor<4294967311x2xf32>) -> tensor<4294967311x2xf32>
  return %y : tensor<4294967311x2xf32>
}
