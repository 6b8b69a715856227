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

// -----
// Thread loops inside an scf.for of the block's body (a reduction whose
// steps the block's threads take together: stage a tile, then use it):
// each is followed by a barrier inside the loop, the last one too (the
// next step overwrites what it read), and the loop by one after the loop
// before it.
// FORALL-LABEL: func.func @steps
// FORALL:         gpu.launch
// FORALL:           memref.store %{{.*}} : memref<2x32xf32>
// FORALL-NEXT:      gpu.barrier
// FORALL-NEXT:      scf.for
// FORALL:             memref.store %{{.*}}, %[[TILE:.*]][%{{.*}}] : memref<32xf32, #gpu.address_space<workgroup>>
// FORALL-NEXT:        gpu.barrier
// FORALL-NEXT:        arith.subi
// FORALL-NEXT:        memref.load %[[TILE]]
// FORALL-NOT:         gpu.barrier
// FORALL:             memref.store
// FORALL-NEXT:        gpu.barrier
// FORALL-NEXT:      }
// FORALL-NEXT:      memref.load
// FORALL-NEXT:      memref.store
// FORALL-NEXT:      gpu.terminator
func.func @steps(%acc: memref<2x32xf32>, %in: memref<64xf32>, %out: memref<2x32xf32>,
                 %tile: memref<32xf32, #gpu.address_space<workgroup>>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c31 = arith.constant 31 : index
  %c64 = arith.constant 64 : index
  %c32 = arith.constant 32 : index
  scf.forall (%i) in (2) {
    scf.forall (%t) in (32) {
      memref.store %zero, %acc[%i, %t] : memref<2x32xf32>
    } {mapping = [#gpu.thread<x>]}
    scf.for %k = %c0 to %c64 step %c32 {
      scf.forall (%t) in (32) {
        %at = arith.addi %k, %t : index
        %v = memref.load %in[%at] : memref<64xf32>
        memref.store %v, %tile[%t] : memref<32xf32, #gpu.address_space<workgroup>>
      } {mapping = [#gpu.thread<x>]}
      scf.forall (%t) in (32) {
        %other = arith.subi %c31, %t : index
        %v = memref.load %tile[%other] : memref<32xf32, #gpu.address_space<workgroup>>
        %a = memref.load %acc[%i, %t] : memref<2x32xf32>
        %s = arith.addf %a, %v : f32
        memref.store %s, %acc[%i, %t] : memref<2x32xf32>
      } {mapping = [#gpu.thread<x>]}
    }
    scf.forall (%t) in (32) {
      %a = memref.load %acc[%i, %t] : memref<2x32xf32>
      memref.store %a, %out[%i, %t] : memref<2x32xf32>
    } {mapping = [#gpu.thread<x>]}
  } {mapping = [#gpu.block<x>]}
  return
}

// -----
func.func @under_if(%a: memref<4x32xf32>, %cond: i1) {
  %c = arith.constant 1.0 : f32
  // expected-error @+1 {{fuel-gpu-map-forall: a mapped loop nested deeper than the block's body and the scf.for loops in it}}
  scf.forall (%i) in (4) {
    scf.if %cond {
      scf.forall (%t) in (32) {
        memref.store %c, %a[%i, %t] : memref<4x32xf32>
      } {mapping = [#gpu.thread<x>]}
    }
  } {mapping = [#gpu.block<x>]}
  return
}

// -----
// A block-wide reduction in a loop of 32 threads where another loop takes
// 64: the guard would keep threads 32 to 63 from its barriers.
func.func @narrow_reduction(%a: memref<4x64xf32>, %s: memref<4xf32>) {
  scf.forall (%i) in (4) {
    // expected-error @+1 {{fuel-gpu-map-forall: a thread loop of 32 x 1 x 1 threads in a block of 64 x 1 x 1 synchronizes the block (gpu.barrier, gpu.all_reduce), which the threads past its trip count would never reach}}
    scf.forall (%t) in (32) {
      %v = memref.load %a[%i, %t] : memref<4x64xf32>
      %sum = gpu.all_reduce add %v uniform {} : (f32) -> f32
      memref.store %sum, %s[%i] : memref<4xf32>
    } {mapping = [#gpu.thread<x>]}
    scf.forall (%t) in (64) {
      %c = arith.constant 0.0 : f32
      memref.store %c, %a[%i, %t] : memref<4x64xf32>
    } {mapping = [#gpu.thread<x>]}
  } {mapping = [#gpu.block<x>]}
  return
}

// -----
// A barrier in a loop of 16 x 2 threads of a block of 16 x 4.
func.func @narrow_barrier(%a: memref<4x64xf32>) {
  scf.forall (%i) in (4) {
    // expected-error @+1 {{a thread loop of 16 x 2 x 1 threads in a block of 16 x 4 x 1}}
    scf.forall (%y, %x) in (2, 16) {
      gpu.barrier
    } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
    scf.forall (%y, %x) in (4, 16) {
      %c = arith.constant 0.0 : f32
      %at = arith.addi %x, %y : index
      memref.store %c, %a[%i, %at] : memref<4x64xf32>
    } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
  } {mapping = [#gpu.block<x>]}
  return
}
