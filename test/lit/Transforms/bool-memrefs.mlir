// RUN: fuel-opt %s --fuel-bool-memrefs-to-i8 -split-input-file | FileCheck %s

// Masks after bufferization: memrefs of i1 become memrefs of i8 (0 or 1);
// loads truncate, stores extend, the rest only changes type.

// CHECK: memref.global "private" constant @mask : memref<2xi8> = dense<[1, 0]>
memref.global "private" constant @mask : memref<2xi1> = dense<[true, false]>

// CHECK-LABEL: func @masks
// CHECK-SAME: (%[[A:.+]]: memref<2xi8>, %[[I:.+]]: index) -> memref<2xi8>
// CHECK: %[[G:.+]] = memref.get_global @mask : memref<2xi8>
// CHECK: %[[B:.+]] = memref.alloc() : memref<2xi8>
// CHECK: %[[L:.+]] = memref.load %[[G]][%[[I]]] : memref<2xi8>
// CHECK: %[[T:.+]] = arith.trunci %[[L]] : i8 to i1
// CHECK: %[[N:.+]] = arith.xori %[[T]]
// CHECK: %[[E:.+]] = arith.extui %[[N]] : i1 to i8
// CHECK: memref.store %[[E]], %[[B]][%[[I]]] : memref<2xi8>
// CHECK: memref.copy %[[A]], %[[B]] : memref<2xi8> to memref<2xi8>
// CHECK: return %[[B]] : memref<2xi8>
func.func @masks(%a: memref<2xi1>, %i: index) -> memref<2xi1> {
  %true = arith.constant true
  %g = memref.get_global @mask : memref<2xi1>
  %b = memref.alloc() : memref<2xi1>
  %v = memref.load %g[%i] : memref<2xi1>
  %n = arith.xori %v, %true : i1
  memref.store %n, %b[%i] : memref<2xi1>
  memref.copy %a, %b : memref<2xi1> to memref<2xi1>
  return %b : memref<2xi1>
}

// -----

// Other memrefs are left as they are.
// CHECK-LABEL: func @floats
// CHECK-SAME: (%{{.+}}: memref<4xf32>) -> f32
// CHECK-NOT: i8
func.func @floats(%a: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0] : memref<4xf32>
  return %v : f32
}
