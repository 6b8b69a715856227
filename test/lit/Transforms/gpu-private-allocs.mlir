// fuel-gpu-private-allocs: buffers inside kernels.
// RUN: fuel-opt --split-input-file --verify-diagnostics --fuel-gpu-private-allocs %s | FileCheck %s --check-prefix=ALLOC
// RUN: fuel-opt --split-input-file --verify-diagnostics --fuel-gpu-private-allocs="private-address-space" %s | FileCheck %s --check-prefix=AMD

// Buffers inside a kernel: a thread's own (alloca), or the block's
// (workgroup attribution); never the device's malloc.
// ALLOC-LABEL: func.func @buffers
// ALLOC:         gpu.launch
// ALLOC-SAME:      workgroup(%[[SHARED:.*]] : memref<256xf32, #gpu.address_space<workgroup>>)
// ALLOC:           %[[MINE:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4xf32>
// ALLOC-NOT:       memref.alloc(
// ALLOC-NOT:       memref.dealloc
// ALLOC:           memref.store %{{.*}}, %[[MINE]]
// ALLOC:           memref.store %{{.*}}, %[[SHARED]]
// AMD-LABEL:   func.func @buffers
// AMD:           %[[P:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4xf32, #gpu.address_space<private>>
// AMD:           memref.memory_space_cast %[[P]] : memref<4xf32, #gpu.address_space<private>> to memref<4xf32>
func.func @buffers() {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %f = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c1, %v = %c1, %w = %c1) {
    %mine = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
    %shared = memref.alloc() : memref<256xf32, #gpu.address_space<workgroup>>
    memref.store %f, %mine[%c0] : memref<4xf32>
    memref.store %f, %shared[%c0] : memref<256xf32, #gpu.address_space<workgroup>>
    memref.dealloc %mine : memref<4xf32>
    gpu.terminator
  }
  return
}

// -----
func.func @dynamic_buffer(%n: index) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c1, %v = %c1, %w = %c1) {
    // expected-error @+1 {{fuel-gpu-private-allocs: a buffer of dynamic size inside a GPU kernel (it would be allocated by the device's malloc)}}
    %b = memref.alloc(%n) : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

// An alloca a lowering made in a kernel: in the private address space too
// (for AMD), its users unchanged behind a cast.
// ALLOC-LABEL: func.func @alloca
// ALLOC:         memref.alloca() : memref<4xi64>
// AMD-LABEL:   func.func @alloca
// AMD:           %[[P:.*]] = memref.alloca() : memref<4xi64, #gpu.address_space<private>>
// AMD-NEXT:      %[[C:.*]] = memref.memory_space_cast %[[P]] : memref<4xi64, #gpu.address_space<private>> to memref<4xi64>
// AMD:           memref.store %{{.*}}, %[[C]]
func.func @alloca() {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %i = arith.constant 7 : i64
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c1, %v = %c1, %w = %c1) {
    %a = memref.alloca() : memref<4xi64>
    memref.store %i, %a[%c0] : memref<4xi64>
    gpu.terminator
  }
  return
}

// -----
// A buffer whose leading dims every access indexes by the same thread ids
// (each thread's slice of per-thread accumulators) shrinks to one slice
// per thread: those dims become 1, indexed by 0.
// ALLOC-LABEL: func.func @thread_slices
// ALLOC:         gpu.launch
// ALLOC:           %[[MINE:.*]] = memref.alloca() {alignment = 64 : i64} : memref<1x1x4xf32>
// ALLOC:           %[[SLICE:.*]] = memref.subview %[[MINE]][0, 0, 0] [1, 1, 4] [1, 1, 1] : memref<1x1x4xf32> to memref<4xf32, strided<[1]>>
// ALLOC:           %[[CAST:.*]] = memref.cast %[[SLICE]] : memref<4xf32, strided<[1]>> to memref<4xf32, strided<[1], offset: ?>>
// ALLOC:           vector.transfer_write %{{.*}}, %[[CAST]][%{{.*}}]
// ALLOC:           vector.transfer_read %[[MINE]][%[[Z:.*]], %[[Z]], %{{.*}}]
// ALLOC:           memref.load %[[MINE]][%[[Z]], %[[Z]], %{{.*}}]
func.func @thread_slices(%out: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %p = ub.poison : f32
  %v = arith.constant dense<1.0> : vector<4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c8, %w = %c2, %q = %c1) {
    %acc = memref.alloc() {alignment = 64 : i64} : memref<2x8x4xf32>
    %mine = memref.subview %acc[%ty, %tx, 0] [1, 1, 4] [1, 1, 1] : memref<2x8x4xf32> to memref<4xf32, strided<[1], offset: ?>>
    vector.transfer_write %v, %mine[%c0] {in_bounds = [true]} : vector<4xf32>, memref<4xf32, strided<[1], offset: ?>>
    %r = vector.transfer_read %acc[%ty, %tx, %c0], %p {in_bounds = [true]} : memref<2x8x4xf32>, vector<4xf32>
    %e = memref.load %acc[%ty, %tx, %c3] : memref<2x8x4xf32>
    vector.transfer_write %r, %out[%c0] {in_bounds = [true]} : vector<4xf32>, memref<4xf32>
    memref.store %e, %out[%c0] : memref<4xf32>
    gpu.terminator
  }
  return
}

// -----
// A vector with one element along the thread dims reads the thread's own
// element (the per-row state of the staged attention: m [rows] read as
// vector<1xf32>, acc [rows, Dv] as vector<1xDv>): the buffer shrinks.
// ALLOC-LABEL: func.func @unit_vector_slices
// ALLOC:         gpu.launch
// ALLOC:           %[[M:.*]] = memref.alloca() {alignment = 64 : i64} : memref<1xf32>
// ALLOC:           %[[ACC:.*]] = memref.alloca() {alignment = 64 : i64} : memref<1x4xf32>
// ALLOC:           vector.transfer_write %{{.*}}, %[[M]][%{{.*}}] {{.*}} : vector<1xf32>, memref<1xf32>
// ALLOC:           vector.transfer_read %[[ACC]][%{{.*}}, %{{.*}}], {{.*}} : memref<1x4xf32>, vector<1x4xf32>
func.func @unit_vector_slices(%out: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c0 = arith.constant 0 : index
  %p = ub.poison : f32
  %one = arith.constant dense<1.0> : vector<1xf32>
  %row = arith.constant dense<2.0> : vector<1x4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c8, %w = %c1, %q = %c1) {
    %m = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
    %acc = memref.alloc() {alignment = 64 : i64} : memref<8x4xf32>
    vector.transfer_write %one, %m[%tx] {in_bounds = [true]} : vector<1xf32>, memref<8xf32>
    vector.transfer_write %row, %acc[%tx, %c0] {in_bounds = [true, true]} : vector<1x4xf32>, memref<8x4xf32>
    %r = vector.transfer_read %acc[%tx, %c0], %p {in_bounds = [true, true]} : memref<8x4xf32>, vector<1x4xf32>
    %e = vector.transfer_read %m[%tx], %p {in_bounds = [true]} : memref<8xf32>, vector<1xf32>
    %s = vector.extract %e[0] : f32 from vector<1xf32>
    %t = vector.extract %r[0] : vector<4xf32> from vector<1x4xf32>
    %u2 = vector.broadcast %s : f32 to vector<4xf32>
    %w2 = arith.addf %t, %u2 : vector<4xf32>
    vector.transfer_write %w2, %out[%c0] {in_bounds = [true]} : vector<4xf32>, memref<4xf32>
    gpu.terminator
  }
  return
}

// -----
// Not when the accesses disagree on the ids (a thread reads another's
// slice), or a vector spans a thread dim: the whole buffer stays.
// ALLOC-LABEL: func.func @shared_slices
// ALLOC:         memref.alloca() {alignment = 64 : i64} : memref<8x8xf32>
// ALLOC:         memref.alloca() {alignment = 64 : i64} : memref<8x8xf32>
func.func @shared_slices(%out: memref<8xf32>) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c0 = arith.constant 0 : index
  %p = ub.poison : f32
  %f = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c8, %w = %c8, %q = %c1) {
    %swapped = memref.alloc() {alignment = 64 : i64} : memref<8x8xf32>
    memref.store %f, %swapped[%ty, %tx] : memref<8x8xf32>
    %e = memref.load %swapped[%tx, %ty] : memref<8x8xf32>
    memref.store %e, %out[%c0] : memref<8xf32>
    %column = memref.alloc() {alignment = 64 : i64} : memref<8x8xf32>
    memref.store %f, %column[%tx, %ty] : memref<8x8xf32>
    %r = vector.transfer_read %column[%tx, %ty], %p {in_bounds = [true], permutation_map = affine_map<(d0, d1) -> (d0)>} : memref<8x8xf32>, vector<8xf32>
    vector.transfer_write %r, %out[%c0] {in_bounds = [true]} : vector<8xf32>, memref<8xf32>
    gpu.terminator
  }
  return
}

// -----
// A thread's buffer inside the `if` of the threads that have work is
// allocated at the start of the kernel, after those allocated there before
// (LLVM promotes only the entry block's allocas to registers), and so is
// one inside a loop that serves one iteration (allocated in the loop, it
// would be a new stack allocation each iteration), through views of it and
// a nested loop and branch.
// ALLOC-LABEL: func.func @entry_block
// ALLOC:         gpu.launch
// ALLOC-NEXT:      %[[FIRST:.*]] = memref.alloca() : memref<1xf32>
// ALLOC-NEXT:      %[[SECOND:.*]] = memref.alloca() : memref<2xf32>
// ALLOC-NEXT:      %[[LOOP:.*]] = memref.alloca() : memref<3x4xf32>
// ALLOC:           scf.if
// ALLOC:             memref.store %{{.*}}, %[[FIRST]]
// ALLOC:             memref.store %{{.*}}, %[[SECOND]]
// ALLOC:           scf.for
// ALLOC-NOT:         memref.alloca
// ALLOC:             memref.subview %[[LOOP]]
// ALLOC:             scf.for
// ALLOC:               memref.store %{{.*}}, %[[LOOP]]
// AMD-LABEL:   func.func @entry_block
// AMD:           gpu.launch
// AMD-NEXT:        memref.alloca() : memref<1xf32, #gpu.address_space<private>>
// AMD-NEXT:        memref.alloca() : memref<2xf32, #gpu.address_space<private>>
// AMD-NEXT:        memref.alloca() : memref<3x4xf32, #gpu.address_space<private>>
// AMD:             scf.for
// AMD-NOT:           memref.alloca
// AMD:             gpu.terminator
func.func @entry_block(%n: index, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c8, %v = %c1, %w = %c1) {
    %work = arith.cmpi ult, %tx, %n : index
    scf.if %work {
      %one = memref.alloc() : memref<1xf32>
      %two = memref.alloc() : memref<2xf32>
      memref.store %f, %one[%c0] : memref<1xf32>
      memref.store %f, %two[%c1] : memref<2xf32>
    }
    scf.for %i = %c0 to %n step %c1 {
      %three = memref.alloc() : memref<3x4xf32>
      %row = memref.subview %three[%c1, 0] [1, 4] [1, 1] : memref<3x4xf32> to memref<4xf32, strided<[1], offset: ?>>
      scf.for %j = %c0 to %n step %c1 {
        scf.if %work {
          memref.store %f, %three[%c0, %c0] : memref<3x4xf32>
        }
      }
      memref.copy %row, %out : memref<4xf32, strided<[1], offset: ?>> to memref<4xf32>
    }
    gpu.terminator
  }
  return
}

// -----
// A buffer that a loop passes from an iteration to the next (through
// iter_args, or out of an inner loop) stays where it is: hoisted, the
// iterations' buffers would be one.
// ALLOC-LABEL: func.func @live_across_iterations
// ALLOC:         gpu.launch
// ALLOC:           scf.for
// ALLOC-NEXT:        %[[NEXT:.*]] = memref.alloca() : memref<4xf32>
// ALLOC:             scf.yield %[[NEXT]]
// ALLOC:           scf.for
// ALLOC:             scf.for
// ALLOC-NEXT:          %[[INNER:.*]] = memref.alloca() : memref<2xf32>
// ALLOC:               memref.cast %[[INNER]]
// AMD-LABEL:   func.func @live_across_iterations
// AMD:           scf.for
// AMD-NEXT:        memref.alloca() : memref<4xf32, #gpu.address_space<private>>
func.func @live_across_iterations(%n: index, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c1, %v = %c1, %w = %c1) {
    %last = scf.for %i = %c0 to %n step %c1 iter_args(%prev = %out) -> (memref<4xf32>) {
      %next = memref.alloc() : memref<4xf32>
      %e = memref.load %prev[%c0] : memref<4xf32>
      memref.store %e, %next[%c1] : memref<4xf32>
      scf.yield %next : memref<4xf32>
    }
    scf.for %i = %c0 to %n step %c1 {
      %first = memref.subview %out[0] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1]>>
      %inner = scf.for %j = %c0 to %n step %c1 iter_args(%p = %first) -> (memref<2xf32, strided<[1]>>) {
        %b = memref.alloc() : memref<2xf32>
        %e = memref.load %p[%c0] : memref<2xf32, strided<[1]>>
        memref.store %e, %b[%c1] : memref<2xf32>
        %c = memref.cast %b : memref<2xf32> to memref<2xf32, strided<[1]>>
        scf.yield %c : memref<2xf32, strided<[1]>>
      }
    }
    gpu.terminator
  }
  return
}

// -----
// A buffer made into a tensor may be carried out of its iteration as a
// value: it stays in its loop too.
// ALLOC-LABEL: func.func @as_tensor
// ALLOC:         scf.for
// ALLOC-NEXT:      %[[B:.*]] = memref.alloca() : memref<4xf32>
// ALLOC:           bufferization.to_tensor %[[B]]
func.func @as_tensor(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  %init = tensor.empty() : tensor<4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c1, %v = %c1, %w = %c1) {
    %last = scf.for %i = %c0 to %n step %c1 iter_args(%t = %init) -> (tensor<4xf32>) {
      %b = memref.alloc() : memref<4xf32>
      memref.store %f, %b[%c0] : memref<4xf32>
      %as = bufferization.to_tensor %b : memref<4xf32> to tensor<4xf32>
      scf.yield %as : tensor<4xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// Workgroup buffers of one type in two loops of the kernel's body, a
// barrier between the loops (dq's two key loops): one attribution, which
// the second loop's buffer reuses, as does a later loop's. Not shared: two
// buffers in one loop, buffers of another type, a buffer in a loop with no
// barrier between it and the loop before, the kernel body's own buffer
// and one that a loop passes on (yielded).
// ALLOC-LABEL: func.func @shared_between_loops
// ALLOC:         gpu.launch
// ALLOC-SAME:      workgroup(%[[A:[a-z0-9]+]] : memref<64x20xf32, #gpu.address_space<workgroup>>, %[[B:[a-z0-9]+]] : memref<64x20xf32, #gpu.address_space<workgroup>>, %[[C:[a-z0-9]+]] : memref<16x64xf32, #gpu.address_space<workgroup>>, %[[D:[a-z0-9]+]] : memref<64x20xf32, #gpu.address_space<workgroup>>, %[[E:[a-z0-9]+]] : memref<64x20xf32, #gpu.address_space<workgroup>>, %[[F:[a-z0-9]+]] : memref<64x20xf32, #gpu.address_space<workgroup>>)
// ALLOC-NOT:       memref.alloc(
// ALLOC:           scf.for
// ALLOC:             memref.store %{{.*}}, %[[A]]
// ALLOC:             memref.store %{{.*}}, %[[B]]
// ALLOC:           gpu.barrier
// ALLOC:           scf.for
// ALLOC:             memref.store %{{.*}}, %[[A]]
// ALLOC:             memref.store %{{.*}}, %[[B]]
// ALLOC:             memref.store %{{.*}}, %[[C]]
// ALLOC:           scf.for
// ALLOC:             memref.store %{{.*}}, %[[D]]
// ALLOC:           gpu.barrier
// ALLOC:           scf.for {{.*}} iter_args(%{{.*}} = %[[E]])
// ALLOC:             memref.store %{{.*}}, %[[F]]
// ALLOC:             scf.yield %[[F]]
// ALLOC:           gpu.barrier
// ALLOC:           scf.for
// ALLOC:             memref.store %{{.*}}, %[[A]]
func.func @shared_between_loops() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %f = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c1, %v = %c1, %w = %c1) {
    scf.for %i = %c0 to %c4 step %c1 {
      %a = memref.alloc() : memref<64x20xf32, #gpu.address_space<workgroup>>
      %b = memref.alloc() : memref<64x20xf32, #gpu.address_space<workgroup>>
      memref.store %f, %a[%i, %c0] : memref<64x20xf32, #gpu.address_space<workgroup>>
      memref.store %f, %b[%i, %c0] : memref<64x20xf32, #gpu.address_space<workgroup>>
      gpu.barrier
    }
    gpu.barrier
    scf.for %i = %c0 to %c4 step %c1 {
      %a = memref.alloc() : memref<64x20xf32, #gpu.address_space<workgroup>>
      %b = memref.alloc() : memref<64x20xf32, #gpu.address_space<workgroup>>
      %c = memref.alloc() : memref<16x64xf32, #gpu.address_space<workgroup>>
      memref.store %f, %a[%i, %c0] : memref<64x20xf32, #gpu.address_space<workgroup>>
      memref.store %f, %b[%i, %c0] : memref<64x20xf32, #gpu.address_space<workgroup>>
      memref.store %f, %c[%i, %c0] : memref<16x64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
    }
    scf.for %i = %c0 to %c4 step %c1 {
      %d = memref.alloc() : memref<64x20xf32, #gpu.address_space<workgroup>>
      memref.store %f, %d[%i, %c0] : memref<64x20xf32, #gpu.address_space<workgroup>>
    }
    gpu.barrier
    %init = memref.alloc() : memref<64x20xf32, #gpu.address_space<workgroup>>
    %last = scf.for %i = %c0 to %c4 step %c1 iter_args(%prev = %init) -> (memref<64x20xf32, #gpu.address_space<workgroup>>) {
      %e = memref.alloc() : memref<64x20xf32, #gpu.address_space<workgroup>>
      memref.store %f, %e[%i, %c0] : memref<64x20xf32, #gpu.address_space<workgroup>>
      scf.yield %e : memref<64x20xf32, #gpu.address_space<workgroup>>
    }
    gpu.barrier
    scf.for %i = %c0 to %c4 step %c1 {
      %g = memref.alloc() : memref<64x20xf32, #gpu.address_space<workgroup>>
      memref.store %f, %g[%i, %c0] : memref<64x20xf32, #gpu.address_space<workgroup>>
    }
    gpu.terminator
  }
  return
}
