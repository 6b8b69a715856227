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
