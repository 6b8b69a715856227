// fuel-strided-copies-to-loops: a copy from or into a non-contiguous memref
// (a subview) becomes linalg.copy (loops, which LLVM vectorizes) instead of
// the runtime's element-by-element memrefCopy; contiguous copies stay
// memref.copy (memcpy), except in a loop of a GPU's blocks or threads,
// where a memcpy would have no alignment.
// RUN: fuel-opt --pass-pipeline="builtin.module(func.func(fuel-strided-copies-to-loops))" %s | FileCheck %s
// RUN: fuel-opt --fuel-to-llvm %s | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @into_half
// CHECK:         %[[VIEW:.*]] = memref.subview
// CHECK-NEXT:    linalg.copy ins(%{{.*}} : memref<4x8xf32>) outs(%[[VIEW]] : memref<4x8xf32, strided<[16, 1], offset: 8>>)
// CHECK-NOT:     memref.copy
// LLVM-LABEL: llvm.func @into_half
// LLVM-NOT:     memrefCopy
func.func @into_half(%a: memref<4x8xf32>, %b: memref<4x16xf32>) {
  %v = memref.subview %b[0, 8] [4, 8] [1, 1] : memref<4x16xf32> to memref<4x8xf32, strided<[16, 1], offset: 8>>
  memref.copy %a, %v : memref<4x8xf32> to memref<4x8xf32, strided<[16, 1], offset: 8>>
  return
}

// CHECK-LABEL: func.func @contiguous
// CHECK:         memref.copy %{{.*}}, %{{.*}} : memref<4x8xf32> to memref<4x8xf32>
// CHECK-NOT:     linalg.copy
func.func @contiguous(%a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  memref.copy %a, %b : memref<4x8xf32> to memref<4x8xf32>
  return
}

// A buffer copied onto itself: nothing to do.
// CHECK-LABEL: func.func @onto_itself
// CHECK-NOT:     copy
// CHECK:         return
func.func @onto_itself(%b: memref<4x16xf32>) {
  %v = memref.subview %b[0, 8] [4, 8] [1, 1] : memref<4x16xf32> to memref<4x8xf32, strided<[16, 1], offset: 8>>
  memref.copy %v, %v : memref<4x8xf32, strided<[16, 1], offset: 8>> to memref<4x8xf32, strided<[16, 1], offset: 8>>
  return
}

// In a loop of a GPU's blocks (or threads) every copy is a linalg.copy; in
// another scf.forall a contiguous one stays.
// CHECK-LABEL: func.func @in_gpu_loops
// CHECK:         scf.forall
// CHECK:           linalg.copy ins(%{{.*}} : memref<1xf32>) outs(%{{.*}} : memref<1xf32>)
// CHECK:         } {mapping = [#gpu.block<x>]}
// CHECK:         scf.forall
// CHECK:           memref.copy %{{.*}}, %{{.*}} : memref<1xf32> to memref<1xf32>
// CHECK:         }
// CHECK-NOT:     mapping
func.func @in_gpu_loops(%a: memref<1xf32>, %b: memref<1xf32>) {
  scf.forall (%i) in (1) {
    scf.forall (%t) in (32) {
    } {mapping = [#gpu.thread<x>]}
    memref.copy %a, %b : memref<1xf32> to memref<1xf32>
  } {mapping = [#gpu.block<x>]}
  scf.forall (%i) in (4) {
    memref.copy %a, %b : memref<1xf32> to memref<1xf32>
  }
  return
}
