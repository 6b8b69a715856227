// RUN: fuel-opt %s --fuel-decompose-aggregates | FileCheck %s

// linalg.softmax becomes upstream's decomposition: a max, the shifted
// exponentials, their sum and the division, all linalg.generic.
// CHECK-LABEL: func @softmax
// CHECK-NOT: linalg.softmax
// CHECK: arith.maxnumf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK-NOT: linalg.softmax
func.func @softmax(%x: tensor<2x16x64xf32>) -> tensor<2x16x64xf32> {
  %e = tensor.empty() : tensor<2x16x64xf32>
  %y = linalg.softmax dimension(2) ins(%x : tensor<2x16x64xf32>) outs(%e : tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}
