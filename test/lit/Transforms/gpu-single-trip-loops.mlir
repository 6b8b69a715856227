// fuel-gpu-single-trip-loops: a GPU thread's scf.for that its bounds'
// ranges let run at most once becomes its body (exactly once) or an scf.if
// (once or not at all); other loops stay.
// RUN: fuel-opt --split-input-file --fuel-gpu-single-trip-loops %s | FileCheck %s

// A thread's strided loop over fewer elements than threads (j = t,
// t + 64, ... below 64): exactly once, its body with j = t.
// CHECK-LABEL: func.func @strided_once
// CHECK:         scf.forall (%[[T:.*]]) in (64)
// CHECK-NOT:       scf.for
// CHECK-NOT:       scf.if
// CHECK:           %[[X:.*]] = memref.load %{{.*}}[%[[T]]]
// CHECK:           %[[S:.*]] = arith.addf %{{.*}}, %[[X]] : f32
// CHECK:           memref.store %[[S]], %{{.*}}[%[[T]]]
// CHECK:         } {mapping = [#gpu.thread<x>]}
func.func @strided_once(%a: memref<64xf32>, %out: memref<64xf32>) {
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.forall (%t) in (64) {
    %s = scf.for %j = %t to %c64 step %c64 iter_args(%acc = %zero) -> (f32) {
      %x = memref.load %a[%j] : memref<64xf32>
      %next = arith.addf %acc, %x : f32
      scf.yield %next : f32
    }
    memref.store %s, %out[%t] : memref<64xf32>
  } {mapping = [#gpu.thread<x>]}
  return
}

// -----

// 40 elements over 64 threads: once for threads below 40, not at all for
// the others. An scf.if whose else yields the initial value.
// CHECK-LABEL: func.func @strided_at_most_once
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         scf.forall (%[[T:.*]]) in (64)
// CHECK-NOT:       scf.for
// CHECK:           %[[RUNS:.*]] = arith.cmpi slt, %[[T]], %c40 : index
// CHECK:           %[[S:.*]] = scf.if %[[RUNS]] -> (f32) {
// CHECK:             %[[X:.*]] = memref.load %{{.*}}[%[[T]]]
// CHECK:             %[[NEXT:.*]] = arith.addf %[[ZERO]], %[[X]] : f32
// CHECK:             scf.yield %[[NEXT]] : f32
// CHECK:           } else {
// CHECK:             scf.yield %[[ZERO]] : f32
// CHECK:           }
// CHECK:           memref.store %[[S]], %{{.*}}[%[[T]]]
func.func @strided_at_most_once(%a: memref<40xf32>, %out: memref<64xf32>) {
  %c40 = arith.constant 40 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.forall (%t) in (64) {
    %s = scf.for %j = %t to %c40 step %c64 iter_args(%acc = %zero) -> (f32) {
      %x = memref.load %a[%j] : memref<40xf32>
      %next = arith.addf %acc, %x : f32
      scf.yield %next : f32
    }
    memref.store %s, %out[%t] : memref<64xf32>
  } {mapping = [#gpu.thread<x>]}
  return
}

// -----

// A step of 16 over 16 rows from a first row that a mask computes (clamped
// to [0, 16]): at most once. The reads of the step's rows stay inside it.
// CHECK-LABEL: func.func @masked_step
// CHECK:         scf.forall (%{{.*}}) in (32)
// CHECK:           %[[FIRST:.*]] = arith.minsi %{{.*}}, %c16 : index
// CHECK-NOT:       scf.for
// CHECK:           %[[RUNS:.*]] = arith.cmpi slt, %[[FIRST]], %c16 : index
// CHECK:           scf.if %[[RUNS]] -> (vector<16xf32>) {
// CHECK:             vector.transfer_read %{{.*}}[%[[FIRST]], %c0]
// CHECK:           } else {
func.func @masked_step(%q: memref<16x16xf32>, %out: memref<32x16xf32>, %shift: index) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0.0 : f32
  %init = arith.constant dense<0.0> : vector<16xf32>
  scf.forall (%t) in (32) {
    %d = arith.subi %t, %shift : index
    %lo = arith.maxsi %d, %c0 : index
    %first = arith.minsi %lo, %c16 : index
    %r = scf.for %i = %first to %c16 step %c16 iter_args(%acc = %init) -> (vector<16xf32>) {
      %row = vector.transfer_read %q[%i, %c0], %pad {in_bounds = [true]} : memref<16x16xf32>, vector<16xf32>
      %next = arith.addf %acc, %row : vector<16xf32>
      scf.yield %next : vector<16xf32>
    }
    vector.transfer_write %r, %out[%t, %c0] {in_bounds = [true]} : vector<16xf32>, memref<32x16xf32>
  } {mapping = [#gpu.thread<x>]}
  return
}

// -----

// Loops that may run more than once stay: 100 elements over 64 threads,
// and a first row that the ranges do not bound.
// CHECK-LABEL: func.func @more_than_once
// CHECK:         scf.forall
// CHECK:           scf.for %{{.*}} = %{{.*}} to %c100 step %c64
// CHECK:           scf.for %{{.*}} = %{{.*}} to %c16 step %c16
// CHECK-NOT:       scf.if
func.func @more_than_once(%a: memref<100xf32>, %out: memref<64xf32>, %first: index) {
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c100 = arith.constant 100 : index
  %zero = arith.constant 0.0 : f32
  scf.forall (%t) in (64) {
    %s = scf.for %j = %t to %c100 step %c64 iter_args(%acc = %zero) -> (f32) {
      %x = memref.load %a[%j] : memref<100xf32>
      %next = arith.addf %acc, %x : f32
      scf.yield %next : f32
    }
    %u = scf.for %i = %first to %c16 step %c16 iter_args(%acc = %s) -> (f32) {
      %x = memref.load %a[%i] : memref<100xf32>
      %next = arith.addf %acc, %x : f32
      scf.yield %next : f32
    }
    memref.store %u, %out[%t] : memref<64xf32>
  } {mapping = [#gpu.thread<x>]}
  return
}

// -----

// A loop of a block's body (not a thread's) stays: it holds the thread
// loops that fuel-gpu-map-forall maps, which it takes in scf.for loops
// alone. So does a loop outside any GPU loop.
// CHECK-LABEL: func.func @not_a_thread_loop
// CHECK:         scf.for %{{.*}} = %c0 to %c1 step %c1
// CHECK:         scf.forall
// CHECK:           scf.for %{{.*}} = %{{.*}} to %c16 step %c16
// CHECK:             scf.forall
// CHECK:             } {mapping = [#gpu.thread<x>]}
// CHECK:         } {mapping = [#gpu.block<x>]}
func.func @not_a_thread_loop(%a: memref<4x32xf32>, %first: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c1 step %c1 {
    memref.store %one, %a[%i, %i] : memref<4x32xf32>
  }
  scf.forall (%b) in (4) {
    %lo = arith.maxsi %first, %c0 : index
    %start = arith.minsi %lo, %c16 : index
    scf.for %s = %start to %c16 step %c16 {
      scf.forall (%t) in (32) {
        memref.store %one, %a[%b, %t] : memref<4x32xf32>
      } {mapping = [#gpu.thread<x>]}
    }
  } {mapping = [#gpu.block<x>]}
  return
}
