// A tensor returned more than once is copied for each further occurrence,
// so every result has a buffer of its own (out-params need that).
// RUN: fuel-opt --fuel-distinct-results %s | FileCheck %s
// RUN: fuel-opt --fuel-to-llvm="out-params=true" %s | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @twice
// CHECK:         %[[Y:.*]] = fuel.fused softmax_last_dim
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<4x16xf32>
// CHECK:         %[[C:.*]] = linalg.copy ins(%[[Y]] : tensor<4x16xf32>) outs(%[[E]] : tensor<4x16xf32>)
// CHECK:         return %[[Y]], %[[C]], %{{.*}} :
// LLVM-LABEL:  llvm.func @twice(
// LLVM-NOT:      -> !llvm.struct
func.func @twice(%x: tensor<4x16xf32>, %s: f32) -> (tensor<4x16xf32>, tensor<4x16xf32>, f32) {
  %y = fuel.fused softmax_last_dim (%x) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y, %y, %s : tensor<4x16xf32>, tensor<4x16xf32>, f32
}

// Distinct results are left alone.
// CHECK-LABEL: func.func @once
// CHECK-NOT:     linalg.copy
func.func @once(%x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %y = fuel.fused softmax_last_dim (%x) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y, %x : tensor<4x16xf32>, tensor<4x16xf32>
}
