// The structure of the fuel-to-llvm pipeline: the shapes checked, ops with a
// schedule first, then decomposition (fused ops, then upstream aggregates),
// bufferization, loops and vectors, then every conversion to the LLVM
// dialect; with
// codegen=false, no schedule and no vector steps. And what it leaves behind.
// RUN: fuel-opt --fuel-to-llvm --dump-pass-pipeline %s -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PIPELINE
// RUN: fuel-opt --fuel-to-llvm="codegen=false" --dump-pass-pipeline %s \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=SCALAR
// RUN: fuel-opt --fuel-to-llvm="vector-width=8 approximate-math=false" \
// RUN:   --dump-pass-pipeline %s -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OPTIONS
// RUN: fuel-opt --fuel-to-llvm="threads=2" --dump-pass-pipeline %s \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=THREADS
// RUN: fuel-opt --fuel-to-llvm %s | FileCheck %s
// RUN: fuel-opt --fuel-to-llvm="threads=2 out-params=true" %s \
// RUN:   | FileCheck %s --check-prefix=ASYNC
// RUN: fuel-opt --fuel-to-llvm="codegen=false" %s | FileCheck %s
// RUN: fuel-opt --fuel-to-llvm %s | FileCheck %s --check-prefix=MALLOC
// RUN: fuel-opt --fuel-to-llvm="generic-allocation" %s \
// RUN:   | FileCheck %s --check-prefix=GENERIC

// PIPELINE:      builtin.module(
// PIPELINE-NEXT:   fuel-check-buffer-sizes,
// PIPELINE-NEXT:   fuel-codegen-cpu{{{.*}}vector-width=16}
// PIPELINE-NEXT:   fuel-decompose{{[{ ]}}
// PIPELINE-NEXT:   fuel-decompose-aggregates,
// PIPELINE-NEXT:   canonicalize{{[{ ]}}
// PIPELINE-NEXT:   cse,
// PIPELINE-NEXT:   loop-invariant-subset-hoisting,
// PIPELINE-NEXT:   canonicalize{{[{ ]}}
// PIPELINE-NEXT:   eliminate-empty-tensors,
// PIPELINE-NEXT:   one-shot-bufferize{{{.*}}bufferize-function-boundaries=true{{.*}}function-boundary-type-conversion=identity-layout-map
// PIPELINE:        convert-bufferization-to-memref,
// PIPELINE-NEXT:   func.func(
// PIPELINE-NEXT:     fuel-strided-copies-to-loops
// PIPELINE-NEXT:   ),
// PIPELINE-NEXT:   scf-forall-to-for,
// PIPELINE-NEXT:   func.func(
// PIPELINE-NEXT:     convert-linalg-to-loops
// PIPELINE-NEXT:   ),
// PIPELINE-NEXT:   fuel-approximate-math,
// PIPELINE-NEXT:   fuel-vector-reduction-trees,
// PIPELINE-NEXT:   func.func(
// PIPELINE-NEXT:     lower-vector-multi-reduction
// PIPELINE-NEXT:   ),
// PIPELINE-NEXT:   convert-vector-to-scf{{{.*}}full-unroll=true
// PIPELINE-NEXT:   convert-scf-to-cf
// PIPELINE-NEXT:   expand-strided-metadata,
// PIPELINE-NEXT:   lower-affine,
// PIPELINE-NEXT:   fuel-bool-memrefs-to-i8,
// PIPELINE-NEXT:   finalize-memref-to-llvm
// PIPELINE-NEXT:   convert-vector-to-llvm
// PIPELINE-NEXT:   convert-math-to-llvm
// PIPELINE-NEXT:   convert-math-to-libm,
// PIPELINE-NEXT:   convert-arith-to-llvm
// PIPELINE-NEXT:   convert-func-to-llvm
// PIPELINE-NEXT:   convert-cf-to-llvm
// PIPELINE-NEXT:   convert-index-to-llvm
// PIPELINE-NEXT:   convert-ub-to-llvm
// PIPELINE-NEXT:   reconcile-unrealized-casts
// PIPELINE-NEXT: )

// SCALAR:      builtin.module(
// SCALAR-NEXT:   fuel-check-buffer-sizes,
// SCALAR-NEXT:   fuel-decompose{{[{ ]}}
// SCALAR-NOT:    fuel-codegen-cpu
// SCALAR-NOT:    fuel-approximate-math
// SCALAR:        reconcile-unrealized-casts

// THREADS:       convert-bufferization-to-memref,
// THREADS-NEXT:  func.func(
// THREADS-NEXT:    fuel-strided-copies-to-loops
// THREADS-NEXT:  ),
// THREADS-NEXT:  scf-forall-to-parallel,
// THREADS-NEXT:  async-parallel-for{async-dispatch=true{{.*}}min-task-size=1 num-workers=2}
// THREADS-NEXT:  async-to-async-runtime,
// THREADS-NEXT:  async-runtime-ref-counting,
// THREADS-NEXT:  async-runtime-ref-counting-opt,
// THREADS-NEXT:  arith-expand
// THREADS-NEXT:  convert-async-to-llvm,
// THREADS-NOT:   scf-forall-to-for

// The rows run on the async runtime; the results are the last arguments.
// ASYNC-LABEL: llvm.func @softmaxes(
// ASYNC-SAME:    %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr,
// ASYNC-NOT:     -> !llvm.struct
// ASYNC:         llvm.call @mlirAsyncRuntimeCreateGroup
// ASYNC:         llvm.call @mlirAsyncRuntimeAwaitAllInGroup
// ASYNC-NOT:     async.

// Buffers come from malloc, or with generic-allocation from the functions
// whoever runs the code provides (the Python runner registers its own).
// MALLOC-LABEL: llvm.func @softmaxes
// MALLOC:       llvm.call @malloc
// MALLOC:       llvm.call @free
// GENERIC-NOT:   @malloc
// GENERIC-NOT:   @free
// GENERIC-LABEL: llvm.func @softmaxes
// GENERIC:       llvm.call @_mlir_memref_to_llvm_alloc
// GENERIC:       llvm.call @_mlir_memref_to_llvm_free
// GENERIC-NOT:   @malloc
// GENERIC-NOT:   @free(

// OPTIONS:       fuel-codegen-cpu{{{.*}}vector-width=8}
// OPTIONS-NOT:   fuel-approximate-math

// A fused op (here scheduled) and an upstream aggregate both end up as
// LLVM: no fuel, linalg, tensor, memref, vector, scf or cf op is left.
// CHECK-LABEL: llvm.func @softmaxes
// CHECK-NOT:   fuel.
// CHECK-NOT:   linalg.
// CHECK-NOT:   tensor.
// CHECK-NOT:   memref.
// CHECK-NOT:   vector.
// CHECK-NOT:   scf.
// CHECK-NOT:   {{ cf\.}}
// CHECK:       llvm.return
func.func @softmaxes(%x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %a = fuel.fused softmax_last_dim (%x) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %b = linalg.softmax dimension(1) ins(%x : tensor<4x16xf32>)
      outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %a, %b : tensor<4x16xf32>, tensor<4x16xf32>
}
