// RUN: fuel-opt %s --fuel-fuse -split-input-file | FileCheck %s
// RUN: fuel-opt %s --fuel-fuse="report=near-misses" -split-input-file -verify-diagnostics -o /dev/null

// Ops upstream defines by their decomposition (linalg.softmax, as IREE's
// input pipeline raises it): the recipes are matched against that
// decomposition, which is removed again whether or not they match.

// CHECK-LABEL: func @softmax_last
// CHECK-SAME: (%[[X:.+]]: tensor<2x16x64xf32>)
// CHECK-NEXT: %[[Y:.+]] = fuel.fused softmax_last_dim (%[[X]]) : (tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
// CHECK-NEXT: return %[[Y]]
func.func @softmax_last(%x: tensor<2x16x64xf32>) -> tensor<2x16x64xf32> {
  %e = tensor.empty() : tensor<2x16x64xf32>
  %y = linalg.softmax dimension(2) ins(%x : tensor<2x16x64xf32>) outs(%e : tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}

// -----

// CHECK-LABEL: func @softmax_dynamic
// CHECK-SAME: (%[[X:.+]]: tensor<?x?xf32>, %[[E:.+]]: tensor<?x?xf32>)
// CHECK-NEXT: %[[Y:.+]] = fuel.fused softmax_last_dim (%[[X]]) : (tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK-NEXT: return %[[Y]]
func.func @softmax_dynamic(%x: tensor<?x?xf32>, %e: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %y = linalg.softmax dimension(1) ins(%x : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

// Over another dim than the last: left exactly as it was.
// CHECK-LABEL: func @softmax_middle
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: linalg.softmax dimension(1)
// CHECK-NEXT: return
func.func @softmax_middle(%x: tensor<2x16x64xf32>) -> tensor<2x16x64xf32> {
  %e = tensor.empty() : tensor<2x16x64xf32>
  // expected-remark @+1 {{fuel-fuse near miss: softmax_last_dim: an operand is not on the recipe's axes}}
  %y = linalg.softmax dimension(1) ins(%x : tensor<2x16x64xf32>) outs(%e : tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}
