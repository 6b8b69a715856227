// The structure of the fuel-to-llvm pipeline: decompose first (fused ops,
// then upstream aggregates), bufferize, loops, then every conversion to the
// LLVM dialect; and what it leaves behind.
// RUN: fuel-opt --fuel-to-llvm --dump-pass-pipeline %s -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PIPELINE
// RUN: fuel-opt --fuel-to-llvm %s | FileCheck %s

// PIPELINE:      builtin.module(
// PIPELINE-NEXT:   fuel-decompose{{[{ ]}}
// PIPELINE-NEXT:   fuel-decompose-aggregates,
// PIPELINE-NEXT:   canonicalize{{[{ ]}}
// PIPELINE-NEXT:   one-shot-bufferize{{{.*}}bufferize-function-boundaries=true{{.*}}function-boundary-type-conversion=identity-layout-map
// PIPELINE:        convert-bufferization-to-memref,
// PIPELINE-NEXT:   func.func(
// PIPELINE-NEXT:     convert-linalg-to-loops
// PIPELINE-NEXT:   ),
// PIPELINE-NEXT:   convert-scf-to-cf
// PIPELINE-NEXT:   expand-strided-metadata,
// PIPELINE-NEXT:   lower-affine,
// PIPELINE-NEXT:   fuel-bool-memrefs-to-i8,
// PIPELINE-NEXT:   finalize-memref-to-llvm
// PIPELINE-NEXT:   convert-math-to-llvm
// PIPELINE-NEXT:   convert-math-to-libm,
// PIPELINE-NEXT:   convert-arith-to-llvm
// PIPELINE-NEXT:   convert-func-to-llvm
// PIPELINE-NEXT:   convert-cf-to-llvm
// PIPELINE-NEXT:   convert-index-to-llvm
// PIPELINE-NEXT:   reconcile-unrealized-casts
// PIPELINE-NEXT: )

// A fused op and an upstream aggregate both end up as LLVM: no fuel,
// linalg, tensor, memref, scf or cf op is left.
// CHECK-LABEL: llvm.func @softmaxes
// CHECK-NOT:   fuel.
// CHECK-NOT:   linalg.
// CHECK-NOT:   tensor.
// CHECK-NOT:   memref.
// CHECK-NOT:   scf.
// CHECK-NOT:   {{ cf\.}}
// CHECK:       llvm.return
func.func @softmaxes(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %a = fuel.fused softmax_last_dim (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %b = linalg.softmax dimension(1) ins(%x : tensor<4x8xf32>)
      outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}
