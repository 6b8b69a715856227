// fuel-gpu-host-buffers: the host side's buffers on the device.
// RUN: fuel-opt --split-input-file --verify-diagnostics --fuel-gpu-host-buffers %s | FileCheck %s

// An input read by a kernel, a scratch buffer and a result: the input is
// copied in (and not back: nothing writes it), the scratch and the result
// live on the device, the result is copied into a new host buffer, and
// every device buffer is freed.
// CHECK-LABEL: func.func @kernel
// CHECK-SAME:      (%[[X:.*]]: memref<?x8xf32>)
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK:         %[[N:.*]] = memref.dim %[[X]], %[[C0]]
// CHECK-NEXT:    %[[DX:.*]] = gpu.alloc  (%[[N]]) : memref<?x8xf32>
// CHECK-NEXT:    gpu.memcpy  %[[DX]], %[[X]]
// CHECK:         %[[TMP:.*]] = gpu.alloc  () : memref<8xf32>
// CHECK:         %[[OUT:.*]] = gpu.alloc  (%{{.*}}) : memref<?x8xf32>
// CHECK:         gpu.launch
// CHECK:           memref.load %[[DX]]
// CHECK:           memref.store %{{.*}}, %[[TMP]]
// CHECK:           memref.store %{{.*}}, %[[OUT]]
// CHECK-NOT:     gpu.memcpy  %[[X]]
// CHECK:         %[[M:.*]] = memref.dim %[[OUT]]
// CHECK:         %[[HOST:.*]] = memref.alloc(%[[M]]) : memref<?x8xf32>
// CHECK-NEXT:    gpu.memcpy  %[[HOST]], %[[OUT]]
// CHECK-DAG:     gpu.dealloc  %[[DX]] :
// CHECK-DAG:     gpu.dealloc  %[[TMP]] :
// CHECK-DAG:     gpu.dealloc  %[[OUT]] :
// CHECK:         return %[[HOST]]
func.func @kernel(%x: memref<?x8xf32>) -> memref<?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?x8xf32>
  %tmp = memref.alloc() : memref<8xf32>
  %out = memref.alloc(%n) : memref<?x8xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%c0, %c0] : memref<?x8xf32>
    memref.store %v, %tmp[%c0] : memref<8xf32>
    memref.store %v, %out[%c0, %c0] : memref<?x8xf32>
    gpu.terminator
  }
  return %out : memref<?x8xf32>
}

// -----

// An argument written through a view (an out-param): copied back.
// CHECK-LABEL: func.func @out_param
// CHECK-SAME:      (%[[Y:.*]]: memref<4x8xf32>)
// CHECK:         %[[DY:.*]] = gpu.alloc  () : memref<4x8xf32>
// CHECK-NEXT:    gpu.memcpy  %[[DY]], %[[Y]]
// CHECK:         gpu.launch
// CHECK:         gpu.memcpy  %[[Y]], %[[DY]]
// CHECK-NEXT:    gpu.dealloc  %[[DY]] :
// CHECK-NEXT:    return
func.func @out_param(%y: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %row = memref.subview %y[1, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: 8>>
    memref.store %f, %row[%c0] : memref<8xf32, strided<[1], offset: 8>>
    gpu.terminator
  }
  return
}

// -----

// expected-error @+1 {{fuel-gpu-host-buffers: argument 0 is not contiguous (an identity layout is needed to copy it to the device)}}
func.func @strided(%x: memref<4xf32, strided<[2]>>) {
  return
}

// -----

func.func @nested(%c: i1) {
  scf.if %c {
    // expected-error @+1 {{fuel-gpu-host-buffers: an allocation inside host control flow}}
    %b = memref.alloc() : memref<4xf32>
  }
  return
}

// -----

// A table of constants the host side reads (a decoding table): a kernel
// reads the device copy, made where the global is read; nothing writes it,
// so nothing is copied back; freed at the return.
memref.global "private" constant @table : memref<16xf32> = dense<1.0>
// CHECK-LABEL: func.func @constant_table
// CHECK:         %[[T:.*]] = memref.get_global @table : memref<16xf32>
// CHECK-NEXT:    %[[DT:.*]] = gpu.alloc  () : memref<16xf32>
// CHECK-NEXT:    gpu.memcpy  %[[DT]], %[[T]]
// CHECK:         gpu.launch
// CHECK:           memref.load %[[DT]]
// CHECK-NOT:     gpu.memcpy  %[[T]]
// CHECK:         gpu.dealloc  %[[DT]] :
// CHECK:         return
func.func @constant_table(%y: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = memref.get_global @table : memref<16xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %t[%c0] : memref<16xf32>
    memref.store %v, %y[%c0] : memref<16xf32>
    gpu.terminator
  }
  return
}

// -----

// A global a kernel writes: copied back at the return.
memref.global "private" @state : memref<4xf32> = dense<0.0>
// CHECK-LABEL: func.func @written_global
// CHECK:         %[[S:.*]] = memref.get_global @state : memref<4xf32>
// CHECK-NEXT:    %[[DS:.*]] = gpu.alloc  () : memref<4xf32>
// CHECK-NEXT:    gpu.memcpy  %[[DS]], %[[S]]
// CHECK:         gpu.launch
// CHECK:           memref.store %{{.*}}, %[[DS]]
// CHECK:         gpu.memcpy  %[[S]], %[[DS]]
// CHECK-NEXT:    gpu.dealloc  %[[DS]] :
// CHECK-NEXT:    return
func.func @written_global() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  %s = memref.get_global @state : memref<4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %f, %s[%c0] : memref<4xf32>
    gpu.terminator
  }
  return
}

// -----

memref.global "private" constant @table2 : memref<4xf32> = dense<1.0>
func.func @global_in_control_flow(%c: i1) {
  scf.if %c {
    // expected-error @+1 {{fuel-gpu-host-buffers: a global read inside host control flow}}
    %t = memref.get_global @table2 : memref<4xf32>
  }
  return
}
