// fuel-gpu-unroll-private-loops: a GPU thread's short scf.for that indexes
// a private buffer at offsets that vary with the loop is unrolled, so that
// the offsets become constants; other loops stay.
// RUN: fuel-opt --split-input-file --fuel-gpu-unroll-private-loops \
// RUN:   --canonicalize %s | FileCheck %s
// RUN: fuel-opt --split-input-file \
// RUN:   --fuel-gpu-unroll-private-loops=max-trips=1 %s \
// RUN:   | FileCheck %s --check-prefix=ONE

// A thread's row of 16 scores read 8 at a time: two reads at offsets 0
// and 8, no loop. With max-trips=1 the loop stays.
// CHECK-LABEL: func.func @score_row
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK:         scf.forall
// CHECK-NOT:       scf.for %
// CHECK:           %[[ROW:.*]] = memref.alloc() : memref<16xf32>
// CHECK:           %[[A:.*]] = vector.transfer_read %[[ROW]][%[[C0]]]
// CHECK:           %[[S:.*]] = arith.addf %[[A]]
// CHECK:           %[[B:.*]] = vector.transfer_read %[[ROW]][%[[C8]]]
// CHECK:           arith.addf %[[S]], %[[B]] : vector<8xf32>
// CHECK:         } {mapping = [#gpu.thread<x>]}
// ONE-LABEL: func.func @score_row
// ONE:         scf.for %
func.func @score_row(%out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %init = arith.constant dense<0.0> : vector<8xf32>
  scf.forall (%t) in (64) {
    %row = memref.alloc() : memref<16xf32>
    %s = scf.for %j = %c0 to %c16 step %c8 iter_args(%acc = %init)
        -> (vector<8xf32>) {
      %x = vector.transfer_read %row[%j], %zero {in_bounds = [true]}
          : memref<16xf32>, vector<8xf32>
      %next = arith.addf %acc, %x : vector<8xf32>
      scf.yield %next : vector<8xf32>
    }
    %r = vector.reduction <add>, %s : vector<8xf32> into f32
    memref.store %r, %out[%t] : memref<64xf32>
  } {mapping = [#gpu.thread<x>]}
  return
}

// -----

// The offset computed from the induction variable (a view at 4 j), in a
// buffer of the block's body that fuel-gpu-private-allocs gives each
// thread: unrolled. The loop around it indexes global memory alone and
// stays.
// CHECK-LABEL: func.func @view_of_block_buffer
// CHECK:         scf.forall
// CHECK:           %[[ROW:.*]] = memref.alloc() : memref<64x8xf32>
// CHECK:           scf.forall (%[[T:.*]]) in (64)
// CHECK:             scf.for %[[I:.*]] = %c0 to %c2 step %c1
// CHECK-NOT:           scf.for %
// CHECK:               memref.subview %[[ROW]][%[[T]], 0] [1, 4]
// CHECK:               memref.subview %[[ROW]][%[[T]], 4] [1, 4]
// CHECK:             }
// CHECK:           } {mapping = [#gpu.thread<x>]}
func.func @view_of_block_buffer(%a: memref<2x64x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  scf.forall (%b) in (1) {
    %row = memref.alloc() : memref<64x8xf32>
    scf.forall (%t) in (64) {
      scf.for %i = %c0 to %c2 step %c1 {
        scf.for %j = %c0 to %c2 step %c1 {
          %o = arith.muli %j, %c4 : index
          %v = memref.subview %row[%t, %o] [1, 4] [1, 1]
              : memref<64x8xf32> to memref<4xf32, strided<[1], offset: ?>>
          %g = memref.subview %a[%i, %t, %o] [1, 1, 4] [1, 1, 1]
              : memref<2x64x8xf32>
                to memref<4xf32, strided<[1], offset: ?>>
          memref.copy %g, %v : memref<4xf32, strided<[1], offset: ?>>
              to memref<4xf32, strided<[1], offset: ?>>
        }
      }
    } {mapping = [#gpu.thread<x>]}
  } {mapping = [#gpu.block<x>]}
  return
}

// -----

// Loops that stay: one over global memory, one whose private offset does
// not vary with it, one over workgroup memory, one of more than max-trips
// (4) iterations, one outside the threads' loops.
// CHECK-LABEL: func.func @loops_that_stay
// CHECK-COUNT-4: scf.for %
// CHECK:         } {mapping = [#gpu.thread<x>]}
// CHECK:         scf.for %
// CHECK:       } {mapping = [#gpu.block<x>]}
func.func @loops_that_stay(%a: memref<16xf32>, %i: index) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c40 = arith.constant 40 : index
  %zero = arith.constant 0.0 : f32
  scf.forall (%b) in (1) {
    %shared = memref.alloc() : memref<16xf32, #gpu.address_space<workgroup>>
    scf.forall (%t) in (64) {
      %row = memref.alloc() : memref<40xf32>
      scf.for %j = %c0 to %c16 step %c8 {
        %x = vector.transfer_read %a[%j], %zero {in_bounds = [true]}
            : memref<16xf32>, vector<8xf32>
        vector.transfer_write %x, %a[%j] {in_bounds = [true]}
            : vector<8xf32>, memref<16xf32>
      }
      scf.for %j = %c0 to %c16 step %c8 {
        memref.store %zero, %row[%i] : memref<40xf32>
      }
      scf.for %j = %c0 to %c16 step %c8 {
        memref.store %zero, %shared[%j]
            : memref<16xf32, #gpu.address_space<workgroup>>
      }
      scf.for %j = %c0 to %c40 step %c8 {
        memref.store %zero, %row[%j] : memref<40xf32>
      }
      %x = memref.load %row[%c8] : memref<40xf32>
      %y = memref.load %shared[%c8]
          : memref<16xf32, #gpu.address_space<workgroup>>
      %s = arith.addf %x, %y : f32
      memref.store %s, %a[%c8] : memref<16xf32>
    } {mapping = [#gpu.thread<x>]}
    %row = memref.alloc() : memref<16xf32>
    scf.for %j = %c0 to %c16 step %c8 {
      memref.store %zero, %row[%j] : memref<16xf32>
    }
    %x = memref.load %row[%c8] : memref<16xf32>
    memref.store %x, %a[%c0] : memref<16xf32>
  } {mapping = [#gpu.block<x>]}
  return
}

// -----

// A row of probabilities read by a short loop and by one that streams
// [8, 128] blocks of values (2 x 1,024 elements, over
// max-streamed-elements): the second stays, so the first does too (the
// row stays in memory either way). The scores' row, read by a short loop
// alone, is unrolled.
// CHECK-LABEL: func.func @rows_of_a_step
// CHECK:         scf.forall
// CHECK:           %[[S:.*]] = memref.alloc() : memref<16xf32>
// CHECK:           %[[P:.*]] = memref.alloc() : memref<16xf32>
// CHECK-NOT:       scf.for %
// CHECK:           vector.transfer_read %[[S]][%c0]
// CHECK:           vector.transfer_read %[[S]][%c8]
// CHECK:           scf.for %
// CHECK:             vector.transfer_read %[[P]]
// CHECK:           scf.for %
// CHECK:             vector.transfer_read %[[P]]
// CHECK:             vector.transfer_read %{{.*}} : memref<16x128xf32>, vector<8x128xf32>
// CHECK:         } {mapping = [#gpu.thread<x>]}
func.func @rows_of_a_step(%v: memref<16x128xf32>, %out: memref<64x128xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %init = arith.constant dense<0.0> : vector<8xf32>
  %acc0 = arith.constant dense<0.0> : vector<128xf32>
  scf.forall (%t) in (64) {
    %s = memref.alloc() : memref<16xf32>
    %p = memref.alloc() : memref<16xf32>
    %m = scf.for %j = %c0 to %c16 step %c8 iter_args(%acc = %init)
        -> (vector<8xf32>) {
      %x = vector.transfer_read %s[%j], %zero {in_bounds = [true]}
          : memref<16xf32>, vector<8xf32>
      %next = arith.maximumf %acc, %x : vector<8xf32>
      scf.yield %next : vector<8xf32>
    }
    vector.transfer_write %m, %p[%c0] {in_bounds = [true]}
        : vector<8xf32>, memref<16xf32>
    %l = scf.for %j = %c0 to %c16 step %c8 iter_args(%acc = %init)
        -> (vector<8xf32>) {
      %x = vector.transfer_read %p[%j], %zero {in_bounds = [true]}
          : memref<16xf32>, vector<8xf32>
      %next = arith.addf %acc, %x : vector<8xf32>
      scf.yield %next : vector<8xf32>
    }
    %o = scf.for %j = %c0 to %c16 step %c8 iter_args(%acc = %acc0)
        -> (vector<128xf32>) {
      %x = vector.transfer_read %p[%j], %zero {in_bounds = [true]}
          : memref<16xf32>, vector<8xf32>
      %b = vector.transfer_read %v[%j, %c0], %zero {in_bounds = [true, true]}
          : memref<16x128xf32>, vector<8x128xf32>
      %next = vector.contract {
          indexing_maps = [affine_map<(k, n) -> (k)>,
                           affine_map<(k, n) -> (k, n)>,
                           affine_map<(k, n) -> (n)>],
          iterator_types = ["reduction", "parallel"],
          kind = #vector.kind<add>} %x, %b, %acc
          : vector<8xf32>, vector<8x128xf32> into vector<128xf32>
      scf.yield %next : vector<128xf32>
    }
    %sum = vector.reduction <add>, %l : vector<8xf32> into f32
    %scaled = vector.broadcast %sum : f32 to vector<128xf32>
    %r = arith.mulf %o, %scaled : vector<128xf32>
    vector.transfer_write %r, %out[%t, %c0] {in_bounds = [true]}
        : vector<128xf32>, memref<64x128xf32>
  } {mapping = [#gpu.thread<x>]}
  return
}
