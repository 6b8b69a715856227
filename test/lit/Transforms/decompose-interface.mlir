// RUN: fuel-opt %s --transform-interpreter | FileCheck %s

// The op implements AggregatedOpInterface, so the upstream transform
// decomposes it like linalg.softmax.
// CHECK-LABEL: func @softmax
// CHECK-NOT: fuel.fused
// CHECK: math.exp
// CHECK: arith.divf
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = fuel.fused softmax_last_dim (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match ops{["fuel.fused"]} in %root : (!transform.any_op) -> !transform.any_op
    %decomposed = transform.structured.decompose_interface %ops : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
