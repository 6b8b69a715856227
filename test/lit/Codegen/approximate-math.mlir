// f32 math on vectors becomes polynomial arithmetic; scalars and other
// element types stay calls to be lowered to libm or intrinsics.
// RUN: fuel-opt --fuel-approximate-math %s | FileCheck %s
// RUN: not fuel-opt --fuel-codegen-cpu="vector-width=0" %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=WIDTH

// CHECK-LABEL: func.func @math
// CHECK-NOT:     math.exp %{{.*}} : vector<16xf32>
// CHECK-NOT:     math.tanh %{{.*}} : vector<16xf32>
// CHECK:         arith.mulf %{{.*}} : vector<16xf32>
// CHECK:         math.exp %{{.*}} : f32
// CHECK:         math.exp %{{.*}} : vector<16xf64>
func.func @math(%v: vector<16xf32>, %s: f32, %d: vector<16xf64>)
    -> (vector<16xf32>, vector<16xf32>, f32, vector<16xf64>) {
  %0 = math.exp %v : vector<16xf32>
  %1 = math.tanh %v : vector<16xf32>
  %2 = math.exp %s : f32
  %3 = math.exp %d : vector<16xf64>
  return %0, %1, %2, %3 : vector<16xf32>, vector<16xf32>, f32, vector<16xf64>
}

// WIDTH: fuel-codegen-cpu: vector-width must be at least 1, got 0

// exp: one fma rounds x * log2(e) and builds 2^k's exponent field, two
// reduce the argument, seven evaluate the polynomial; 2^k from the bits.
// CHECK-LABEL: func.func @exp
// CHECK:         arith.cmpf ogt
// CHECK:         arith.select
// CHECK:         math.fma
// CHECK:         arith.cmpf olt
// CHECK:         arith.select
// CHECK:         arith.subf
// CHECK-COUNT-9: math.fma
// CHECK:         arith.bitcast %{{.*}} : vector<4x8xf32> to vector<4x8xi32>
// CHECK:         arith.shli
// CHECK:         arith.bitcast %{{.*}} : vector<4x8xi32> to vector<4x8xf32>
// CHECK:         arith.mulf
// CHECK-NOT:     math.exp
func.func @exp(%v: vector<4x8xf32>) -> vector<4x8xf32> {
  %0 = math.exp %v : vector<4x8xf32>
  return %0 : vector<4x8xf32>
}
