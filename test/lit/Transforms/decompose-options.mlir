// RUN: fuel-opt %s --fuel-decompose="ops=softmax_last_dim" | FileCheck %s --check-prefix=ONLY
// RUN: fuel-opt %s --fuel-decompose="keep=softmax_last_dim,rope" | FileCheck %s --check-prefix=KEEP
// RUN: not fuel-opt %s --fuel-decompose="ops=softmax" 2>&1 | FileCheck %s --check-prefix=BADOPS
// RUN: not fuel-opt %s --fuel-decompose="keep=rmsnorm" 2>&1 | FileCheck %s --check-prefix=BADKEEP
// RUN: fuel-opt %s --pass-pipeline="builtin.module(func.func(fuel-decompose{ops=rms_norm_last_dim}))" | FileCheck %s --check-prefix=NESTED

// ONLY-LABEL: func @f
// ONLY-NOT: fuel.fused softmax_last_dim
// ONLY: fuel.fused rms_norm_last_dim
// KEEP-LABEL: func @f
// KEEP: fuel.fused softmax_last_dim
// KEEP-NOT: fuel.fused rms_norm_last_dim
// BADOPS: error: fuel-decompose: unknown fused op 'softmax' in ops=
// BADKEEP: error: fuel-decompose: unknown fused op 'rmsnorm' in keep=
// NESTED: fuel.fused softmax_last_dim
// NESTED-NOT: fuel.fused rms_norm_last_dim
func.func @f(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = fuel.fused softmax_last_dim (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = fuel.fused rms_norm_last_dim {eps = 1.0e-05 : f64} (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}
