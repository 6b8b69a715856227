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
