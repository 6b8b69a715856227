// Ops defined by a recipe in IR: the recipe round-trips, the ops that name
// it verify against it, structurally equal recipes are one op, and
// decomposition instantiates the recipe (and drops it once no op names it).
// RUN: fuel-opt %s | fuel-opt | FileCheck %s
// RUN: fuel-opt %s --fuel-decompose | FileCheck %s --check-prefix=DEC
// RUN: fuel-opt %s --fuel-decompose="keep=leaky_relu" | FileCheck %s --check-prefix=KEEP
// RUN: fuel-opt %s --cse | FileCheck %s --check-prefix=CSE
// RUN: fuel-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: fuel.recipe @gelu_tanh(%{{.*}}: f32) -> f32 {
// CHECK:         math.tanh
// CHECK:         fuel.yield %{{.*}} : f32
// CHECK-NEXT:  }
fuel.recipe @gelu_tanh(%x: f32) -> f32 {
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %c = arith.constant 0.797884583 : f32
  %k = arith.constant 0.044715 : f32
  %x2 = arith.mulf %x, %x : f32
  %x3 = arith.mulf %x2, %x : f32
  %t0 = arith.mulf %k, %x3 : f32
  %t1 = arith.addf %x, %t0 : f32
  %t2 = arith.mulf %c, %t1 : f32
  %t3 = math.tanh %t2 : f32
  %t4 = arith.addf %one, %t3 : f32
  %t5 = arith.mulf %half, %x : f32
  %y = arith.mulf %t5, %t4 : f32
  fuel.yield %y : f32
}

// Params are named block arguments.
// CHECK-LABEL: fuel.recipe @leaky_relu(%{{.*}}: f32) params(%alpha: f32) -> f32 {
// CHECK-NEXT:    arith.mulf %{{.*}}, %alpha : f32
fuel.recipe @leaky_relu(%x: f32) params(%alpha: f32) -> f32 {
  %0 = arith.mulf %x, %alpha : f32
  %1 = arith.maximumf %x, %0 : f32
  fuel.yield %1 : f32
}

// SiLU twice, under two names: one op.
fuel.recipe @silu(%x: f32) -> f32 {
  %one = arith.constant 1.0 : f32
  %n = arith.negf %x : f32
  %e = math.exp %n : f32
  %d = arith.addf %one, %e : f32
  %y = arith.divf %x, %d : f32
  fuel.yield %y : f32
}
fuel.recipe @swish(%v: f32) -> f32 {
  %one = arith.constant 1.0 : f32
  %n = arith.negf %v : f32
  %e = math.exp %n : f32
  %d = arith.addf %one, %e : f32
  %y = arith.divf %v, %d : f32
  fuel.yield %y : f32
}

// Two operands, any float type.
fuel.recipe @gate(%a: f16, %b: f16) -> f16 {
  %0 = math.erf %a : f16
  %1 = arith.mulf %0, %b : f16
  fuel.yield %1 : f16
}

// CHECK-LABEL: func.func @uses
// CHECK:         fuel.fused @gelu_tanh (%{{.*}}) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK:         fuel.fused @leaky_relu {alpha = 1.000000e-01 : f64} (%{{.*}}) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK:         fuel.fused @silu (%{{.*}}) : (tensor<?x8xbf16>) -> tensor<?x8xbf16>
// CHECK:         fuel.fused @swish (%{{.*}}) : (tensor<?x8xbf16>) -> tensor<?x8xbf16>
// CHECK:         fuel.fused @gate (%{{.*}}, %{{.*}}) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
// DEC-LABEL:   func.func @uses
// DEC-NOT:       fuel.fused
// DEC:           math.tanh
// DEC:           arith.maximumf
// DEC:           math.exp
// DEC:           math.erf
// DEC-NOT:     fuel.recipe
// KEEP-NOT:    fuel.recipe @gelu_tanh
// KEEP:        fuel.recipe @leaky_relu
// KEEP-NOT:    fuel.recipe @gelu_tanh
// KEEP:          fuel.fused @leaky_relu
func.func @uses(%t: tensor<4x8xf32>, %b: tensor<?x8xbf16>, %u: tensor<8xf32>)
    -> (tensor<4x8xf32>, tensor<?x8xbf16>, tensor<?x8xbf16>, tensor<8xf32>) {
  %y = fuel.fused @gelu_tanh (%t) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %z = fuel.fused @leaky_relu {alpha = 0.1 : f64} (%y) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = fuel.fused @silu (%b) : (tensor<?x8xbf16>) -> tensor<?x8xbf16>
  %w = fuel.fused @swish (%b) : (tensor<?x8xbf16>) -> tensor<?x8xbf16>
  %g = fuel.fused @gate (%u, %u) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %z, %s, %w, %g : tensor<4x8xf32>, tensor<?x8xbf16>, tensor<?x8xbf16>, tensor<8xf32>
}

// Equal ops with equal params are one value.
// CSE-LABEL: func.func @cse
// CSE-COUNT-1: fuel.fused @leaky_relu
// CSE-NOT:     fuel.fused
// CSE:         return
func.func @cse(%t: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %a = fuel.fused @leaky_relu {alpha = 0.1 : f64} (%t) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = fuel.fused @leaky_relu {alpha = 0.1 : f64} (%t) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

// A recipe's identity is its canonical form: constants folded, identities
// dropped, unused and repeated steps removed, whatever the order the ops
// are written in. These two are one op, and stay one after -canonicalize.
// GENERIC-LABEL: "func.func"() <{function_type = {{.*}}, sym_name = "canonical_forms"}>
// GENERIC:         kind = #fuel.kind<exp_times_4>, params = {}, recipe = @exp_times_4
// GENERIC:         kind = #fuel.kind<exp_times_4>, params = {}, recipe = @four_exp
fuel.recipe @exp_times_4(%x: f32) -> f32 {
  %four = arith.constant 4.0 : f32
  %e = math.exp %x : f32
  %y = arith.mulf %e, %four : f32
  fuel.yield %y : f32
}
fuel.recipe @four_exp(%v: f32) -> f32 {
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %unused = math.tanh %v : f32
  %c = arith.mulf %two, %two : f32
  %e = math.exp %v : f32
  %e1 = arith.mulf %one, %e : f32
  %y = arith.mulf %c, %e1 : f32
  fuel.yield %y : f32
}
func.func @canonical_forms(%t: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = fuel.fused @exp_times_4 (%t) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = fuel.fused @four_exp (%t) : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// The operands of a commutative step are ordered by what they compute:
// x * exp(x) and exp(x) * x are one op.
// GENERIC-LABEL: sym_name = "commuted"
// GENERIC:         kind = #fuel.kind<x_exp_x>, params = {}, recipe = @x_exp_x
// GENERIC:         kind = #fuel.kind<x_exp_x>, params = {}, recipe = @exp_x_x
fuel.recipe @x_exp_x(%x: f32) -> f32 {
  %e = math.exp %x : f32
  %y = arith.mulf %x, %e : f32
  fuel.yield %y : f32
}
fuel.recipe @exp_x_x(%x: f32) -> f32 {
  %e = math.exp %x : f32
  %y = arith.mulf %e, %x : f32
  fuel.yield %y : f32
}
func.func @commuted(%t: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = fuel.fused @x_exp_x (%t) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = fuel.fused @exp_x_x (%t) : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
