// fuel-gpu-map-parallel-loops: the loops no schedule took, tiled and mapped
// to blocks and threads; serial host code into kernels of one thread.
// RUN: fuel-opt --split-input-file --verify-diagnostics --fuel-gpu-map-parallel-loops="max-threads=128" %s | FileCheck %s --check-prefix=PAR

// The loops no schedule took: tiles of 128 along the innermost dim on
// threads, the rest on blocks (x innermost); loops nested deeper in a
// thread.
// PAR-LABEL: func.func @elementwise
// PAR:         scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c4, %c512) step (%{{.*}}, %{{.*}})
// PAR:           scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}}) step (%c1, %c1)
// PAR:             scf.parallel
// PAR:             } {mapping = [#gpu.loop_dim_map<processor = sequential, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
// PAR:           } {mapping = [#gpu.loop_dim_map<processor = sequential, map = (d0) -> (d0), bound = (d0) -> (d0)>, #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
// PAR:         } {mapping = [#gpu.loop_dim_map<processor = block_y, map = (d0) -> (d0), bound = (d0) -> (d0)>, #gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
func.func @elementwise(%a: memref<4x512x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c512 = arith.constant 512 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c512) step (%c1, %c1) {
    scf.parallel (%k) = (%c0) to (%c2) step (%c1) {
      memref.store %f, %a[%i, %j, %k] : memref<4x512x2xf32>
    }
  }
  return
}

// -----
// What touches memory outside any parallel loop runs on one thread, with
// everything that reads its results; a contiguous copy is a device copy.
// PAR-LABEL: func.func @serial
// PAR:         gpu.launch blocks({{.*}}) in ({{.*}} = %[[ONE:.*]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]]) threads({{.*}}) in ({{.*}} = %[[ONE]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]])
// PAR-NEXT:      %[[SUM:.*]] = scf.for
// PAR:           memref.store %[[SUM]]
// PAR-NEXT:      gpu.terminator
// PAR:         gpu.memcpy %arg2, %arg0
func.func @serial(%a: memref<8xf32>, %s: memref<f32>, %b: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> f32 {
    %v = memref.load %a[%i] : memref<8xf32>
    %n = arith.addf %acc, %v : f32
    scf.yield %n : f32
  }
  memref.store %sum, %s[] : memref<f32>
  memref.copy %a, %b : memref<8xf32> to memref<8xf32>
  return
}

// -----
func.func @returned(%a: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{fuel-gpu-map-parallel-loops: an op on the host accesses memory and its results are returned or read by a kernel}}
  %v = memref.load %a[%c0] : memref<8xf32>
  return %v : f32
}

// -----
func.func @strided_copy(%a: memref<8xf32, strided<[2]>>, %b: memref<8xf32>) {
  // expected-error @+1 {{fuel-gpu-map-parallel-loops: a copy between non-contiguous buffers on the host}}
  memref.copy %a, %b : memref<8xf32, strided<[2]>> to memref<8xf32>
  return
}
