// fuel-gpu-map-forall: scf.forall loops mapped to blocks and threads become
// gpu.launch.
// RUN: fuel-opt --split-input-file --verify-diagnostics --fuel-gpu-map-forall %s | FileCheck %s --check-prefix=FORALL

// A block loop and two thread loops: the grid is the block loop's trip
// count, the block the larger thread loop's; the smaller is guarded, and a
// barrier separates the two.
// FORALL-LABEL: func.func @rows
// FORALL:         gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c3, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c64, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}})
// FORALL-NEXT:      memref.store %{{.*}}, %{{.*}}[%[[BX]], %[[TX]]]
// FORALL-NEXT:      gpu.barrier
// FORALL-NEXT:      %[[C32:.*]] = arith.constant 32 : index
// FORALL-NEXT:      %[[IN:.*]] = arith.cmpi ult, %[[TX]], %[[C32]] : index
// FORALL-NEXT:      scf.if %[[IN]] {
// FORALL-NEXT:        memref.store %{{.*}}, %{{.*}}[%[[BX]], %[[TX]]]
// FORALL-NEXT:      }
// FORALL-NEXT:      gpu.terminator
// FORALL-NOT:     scf.forall
func.func @rows(%a: memref<3x64xf32>, %b: memref<3x32xf32>) {
  %c = arith.constant 1.0 : f32
  scf.forall (%i) in (3) {
    scf.forall (%t) in (64) {
      memref.store %c, %a[%i, %t] : memref<3x64xf32>
    } {mapping = [#gpu.thread<x>]}
    scf.forall (%t) in (32) {
      memref.store %c, %b[%i, %t] : memref<3x32xf32>
    } {mapping = [#gpu.thread<x>]}
  } {mapping = [#gpu.block<x>]}
  return
}

// -----
// Two grid dims: the loop's second dim on x.
// FORALL-LABEL: func.func @grid_2d
// FORALL:         gpu.launch blocks(%[[BX:.*]], %[[BY:.*]], %{{.*}}) in (%{{.*}} = %c8, %{{.*}} = %c2, %{{.*}} = %c1{{.*}})
// FORALL:           memref.store %{{.*}}, %{{.*}}[%[[BY]], %[[BX]]]
func.func @grid_2d(%a: memref<2x8xf32>) {
  %c = arith.constant 1.0 : f32
  scf.forall (%i, %j) in (2, 8) {
    memref.store %c, %a[%i, %j] : memref<2x8xf32>
  } {mapping = [#gpu.block<y>, #gpu.block<x>]}
  return
}

// -----

// Tiles: a loop from lb by step runs its trip count; the induction
// variable is lb + id * step.
// FORALL-LABEL: func.func @tiles
// FORALL:         gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c3, %{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c4, %{{.*}})
// FORALL:           %[[I:.*]] = arith.muli %[[BX]], %c64{{.*}} : index
// FORALL:           %[[T:.*]] = arith.muli %[[TX]], %c16{{.*}} : index
// FORALL:           %[[J:.*]] = arith.addi %[[T]], %c8{{.*}} : index
// FORALL-NEXT:      memref.store %{{.*}}, %{{.*}}[%[[I]], %[[J]]]
func.func @tiles(%a: memref<192x72xf32>) {
  %c = arith.constant 1.0 : f32
  scf.forall (%i) = (0) to (192) step (64) {
    scf.forall (%j) = (8) to (72) step (16) {
      memref.store %c, %a[%i, %j] : memref<192x72xf32>
    } {mapping = [#gpu.thread<x>]}
  } {mapping = [#gpu.block<x>]}
  return
}

// -----
func.func @on_tensors(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{fuel-gpu-map-forall: the loop is on tensors: bufferize first}}
  %r = scf.forall (%i) in (4) shared_outs(%o = %a) -> tensor<4xf32> {
  } {mapping = [#gpu.block<x>]}
  return %r : tensor<4xf32>
}

// -----
func.func @dynamic(%a: memref<?xf32>, %n: index) {
  %c = arith.constant 1.0 : f32
  // expected-error @+1 {{fuel-gpu-map-forall: a mapped loop needs static bounds and a positive static step}}
  scf.forall (%i) in (%n) {
    memref.store %c, %a[%i] : memref<?xf32>
  } {mapping = [#gpu.block<x>]}
  return
}

// -----
func.func @twice(%a: memref<2x2xf32>) {
  %c = arith.constant 1.0 : f32
  // expected-error @+1 {{fuel-gpu-map-forall: each of x, y and z can be mapped once}}
  scf.forall (%i, %j) in (2, 2) {
    memref.store %c, %a[%i, %j] : memref<2x2xf32>
  } {mapping = [#gpu.block<x>, #gpu.block<x>]}
  return
}
