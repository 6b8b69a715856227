// --fuel-fuse finds a recipe's product in any association and order of its
// factors (through multiplies, divisions and small integer powers, in one
// body or over several elementwise ops), constants computed by elementwise
// ops of constants, and inputs a frontend holds with dims merged.
// RUN: fuel-opt %s --split-input-file --fuel-fuse | FileCheck %s
// RUN: fuel-opt %s --split-input-file --fuel-fuse="report=near-misses" \
// RUN:   -verify-diagnostics -o /dev/null

// (0.5 * x) * (1 + erf(x * c)) written x * ((erf(x * c) + 1) * 0.5).
// CHECK-LABEL: func.func @gelu_other_association
// CHECK-NEXT:    %[[R:.*]] = fuel.fused @gelu (%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[R]]
fuel.recipe @gelu(%x: f32) -> f32 {
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %c = arith.constant 0.707106769 : f32
  %s = arith.mulf %x, %c : f32
  %e = math.erf %s : f32
  %p = arith.addf %one, %e : f32
  %h = arith.mulf %half, %x : f32
  %y = arith.mulf %h, %p : f32
  fuel.yield %y : f32
}
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @gelu_other_association(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = arith.constant 0.707106769 : f32
  %one = arith.constant 1.0 : f32
  %half = arith.constant 0.5 : f32
  %0 = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x8xf32>) outs(%0 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %2 = arith.mulf %in, %c : f32
    %3 = math.erf %2 : f32
    %4 = arith.addf %3, %one : f32
    %5 = arith.mulf %4, %half : f32
    %6 = arith.mulf %in, %5 : f32
    linalg.yield %6 : f32
  } -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// x * x * x * k as fpowi(x, 3) * k in one body, and as pow(x, 3.0) times a
// constant that an elementwise op computes (pow(4, 0.5) = 2), one op per
// step (TOSA's form): the product's factors come from several ops.
// CHECK-LABEL: func.func @cube_fpowi
// CHECK-NEXT:    %[[R:.*]] = fuel.fused @cube_scaled (%arg0) : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    return %[[R]]
// CHECK-LABEL: func.func @cube_pow_over_ops
// CHECK-NEXT:    %[[R:.*]] = fuel.fused @cube_scaled (%arg0) : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    return %[[R]]
fuel.recipe @cube_scaled(%x: f32) -> f32 {
  %k = arith.constant 2.0 : f32
  %x2 = arith.mulf %x, %x : f32
  %x3 = arith.mulf %x2, %x : f32
  %y = arith.mulf %x3, %k : f32
  fuel.yield %y : f32
}
#id = affine_map<(d0) -> (d0)>
func.func @cube_fpowi(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %three = arith.constant 3 : i64
  %k = arith.constant 2.0 : f32
  %0 = tensor.empty() : tensor<8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%arg0 : tensor<8xf32>) outs(%0 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %2 = math.fpowi %in, %three : f32, i64
    %3 = arith.mulf %k, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<8xf32>
  return %1 : tensor<8xf32>
}
func.func @cube_pow_over_ops(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %three = arith.constant dense<3.0> : tensor<8xf32>
  %four = arith.constant dense<4.0> : tensor<8xf32>
  %half = arith.constant dense<0.5> : tensor<8xf32>
  %0 = tensor.empty() : tensor<8xf32>
  %k = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%four, %half : tensor<8xf32>, tensor<8xf32>) outs(%0 : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %2 = math.powf %a, %b : f32
    linalg.yield %2 : f32
  } -> tensor<8xf32>
  %cube = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%arg0, %three : tensor<8xf32>, tensor<8xf32>) outs(%0 : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %2 = math.powf %a, %b : f32
    linalg.yield %2 : f32
  } -> tensor<8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%k, %cube : tensor<8xf32>, tensor<8xf32>) outs(%0 : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %2 = arith.mulf %a, %b : f32
    linalg.yield %2 : f32
  } -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// A quotient's factors: x / (2 * y) as (x / y) * 0.5.
// CHECK-LABEL: func.func @quotient
// CHECK-NEXT:    %[[R:.*]] = fuel.fused @half_ratio (%arg0, %arg1) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    return %[[R]]
fuel.recipe @half_ratio(%x: f32, %y: f32) -> f32 {
  %two = arith.constant 2.0 : f32
  %d = arith.mulf %two, %y : f32
  %r = arith.divf %x, %d : f32
  fuel.yield %r : f32
}
#id = affine_map<(d0) -> (d0)>
func.func @quotient(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>) -> tensor<8xf32> {
  %half = arith.constant 0.5 : f32
  %0 = tensor.empty() : tensor<8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%arg0, %arg1 : tensor<8xf32>, tensor<8xf32>) outs(%0 : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %2 = arith.divf %a, %b : f32
    %3 = arith.mulf %2, %half : f32
    linalg.yield %3 : f32
  } -> tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// An input held with dims merged: a [B * T, N] matmul result expanded to
// [B, T, N] is the op's input as it is.
// CHECK-LABEL: func.func @merged_input
// CHECK:         %[[E:.*]] = tensor.expand_shape
// CHECK-NEXT:    %[[R:.*]] = fuel.fused @neg_exp (%[[E]]) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    return %[[R]]
fuel.recipe @neg_exp(%x: f32) -> f32 {
  %n = arith.negf %x : f32
  %e = math.exp %n : f32
  fuel.yield %e : f32
}
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @merged_input(%a: tensor<6x5xf32>, %b: tensor<5x4xf32>) -> tensor<2x3x4xf32> {
  %zero = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<6x4xf32>
  %1 = linalg.fill ins(%zero : f32) outs(%0 : tensor<6x4xf32>) -> tensor<6x4xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<6x5xf32>, tensor<5x4xf32>) outs(%1 : tensor<6x4xf32>) -> tensor<6x4xf32>
  %3 = tensor.expand_shape %2 [[0, 1], [2]] output_shape [2, 3, 4] : tensor<6x4xf32> into tensor<2x3x4xf32>
  %4 = tensor.empty() : tensor<2x3x4xf32>
  %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%3 : tensor<2x3x4xf32>) outs(%4 : tensor<2x3x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %6 = arith.negf %in : f32
    %7 = math.exp %6 : f32
    linalg.yield %7 : f32
  } -> tensor<2x3x4xf32>
  return %5 : tensor<2x3x4xf32>
}

// -----

// Near misses: a product with a factor more than the recipe's, and another
// constant (the report names both values). The IR is left as it was.
// CHECK-LABEL: func.func @extra_factor
// CHECK-NOT:     fuel.fused
// CHECK-LABEL: func.func @other_constant
// CHECK-NOT:     fuel.fused
fuel.recipe @cubic(%x: f32) -> f32 {
  %k = arith.constant 0.044715 : f32
  %x2 = arith.mulf %x, %x : f32
  %x3 = arith.mulf %x2, %x : f32
  %t = arith.mulf %k, %x3 : f32
  %y = arith.addf %x, %t : f32
  fuel.yield %y : f32
}
#id = affine_map<(d0) -> (d0)>
func.func @extra_factor(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %k = arith.constant 0.044715 : f32
  %0 = tensor.empty() : tensor<8xf32>
  // expected-remark @+1 {{fuel-fuse near miss: cubic: a product of 5 factors where the recipe has 4}}
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%arg0 : tensor<8xf32>) outs(%0 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %2 = arith.mulf %in, %in : f32
    %3 = arith.mulf %2, %in : f32
    %4 = arith.mulf %3, %in : f32
    %5 = arith.mulf %4, %k : f32
    %6 = arith.addf %in, %5 : f32
    linalg.yield %6 : f32
  } -> tensor<8xf32>
  return %1 : tensor<8xf32>
}
func.func @other_constant(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %k = arith.constant 0.0447 : f32
  %c3 = arith.constant 3 : i32
  %0 = tensor.empty() : tensor<8xf32>
  // expected-remark @+1 {{fuel-fuse near miss: cubic: expected the constant 0.044715, found 0.0447}}
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%arg0 : tensor<8xf32>) outs(%0 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %2 = math.fpowi %in, %c3 : f32, i32
    %3 = arith.mulf %2, %k : f32
    %4 = arith.addf %in, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// Two recipes overlap: the larger one (the gate times the up projection)
// is found, not the SiLU inside it; where only the SiLU is computed, the
// SiLU is.
// CHECK-LABEL: func.func @gated
// CHECK-NEXT:    %[[R:.*]] = fuel.fused @swiglu (%arg0, %arg1) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    return %[[R]]
// CHECK-LABEL: func.func @ungated
// CHECK-NEXT:    %[[R:.*]] = fuel.fused @silu (%arg0) : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    return %[[R]]
fuel.recipe @silu(%x: f32) -> f32 {
  %one = arith.constant 1.0 : f32
  %n = arith.negf %x : f32
  %e = math.exp %n : f32
  %d = arith.addf %one, %e : f32
  %y = arith.divf %x, %d : f32
  fuel.yield %y : f32
}
fuel.recipe @swiglu(%g: f32, %u: f32) -> f32 {
  %one = arith.constant 1.0 : f32
  %n = arith.negf %g : f32
  %e = math.exp %n : f32
  %d = arith.addf %one, %e : f32
  %s = arith.divf %one, %d : f32
  %a = arith.mulf %g, %s : f32
  %y = arith.mulf %a, %u : f32
  fuel.yield %y : f32
}
#id = affine_map<(d0) -> (d0)>
func.func @gated(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>) -> tensor<8xf32> {
  %one = arith.constant 1.0 : f32
  %0 = tensor.empty() : tensor<8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%arg0, %arg1 : tensor<8xf32>, tensor<8xf32>) outs(%0 : tensor<8xf32>) {
  ^bb0(%g: f32, %u: f32, %out: f32):
    %2 = arith.negf %g : f32
    %3 = math.exp %2 : f32
    %4 = arith.addf %3, %one : f32
    %5 = arith.divf %g, %4 : f32
    %6 = arith.mulf %u, %5 : f32
    linalg.yield %6 : f32
  } -> tensor<8xf32>
  return %1 : tensor<8xf32>
}
func.func @ungated(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %one = arith.constant 1.0 : f32
  %0 = tensor.empty() : tensor<8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%arg0 : tensor<8xf32>) outs(%0 : tensor<8xf32>) {
  ^bb0(%g: f32, %out: f32):
    %2 = arith.negf %g : f32
    %3 = math.exp %2 : f32
    %4 = arith.addf %3, %one : f32
    %5 = arith.divf %g, %4 : f32
    linalg.yield %5 : f32
  } -> tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// Recipes with absf, minimumf, log1p and expm1 (a softsign, a hard swish
// clamped by min and max, mish) are found like the others.
// CHECK-LABEL: func.func @steps
// CHECK-NEXT:    %[[S:.*]] = fuel.fused @softsign (%arg0)
// CHECK-NEXT:    %[[H:.*]] = fuel.fused @hard_swish (%[[S]])
// CHECK-NEXT:    %[[M:.*]] = fuel.fused @mish (%[[H]])
// CHECK-NEXT:    return %[[M]]
fuel.recipe @softsign(%x: f32) -> f32 {
  %one = arith.constant 1.0 : f32
  %a = math.absf %x : f32
  %d = arith.addf %one, %a : f32
  %y = arith.divf %x, %d : f32
  fuel.yield %y : f32
}
fuel.recipe @hard_swish(%x: f32) -> f32 {
  %zero = arith.constant 0.0 : f32
  %three = arith.constant 3.0 : f32
  %six = arith.constant 6.0 : f32
  %s = arith.addf %x, %three : f32
  %r = arith.maximumf %s, %zero : f32
  %c = arith.minimumf %r, %six : f32
  %p = arith.mulf %x, %c : f32
  %y = arith.divf %p, %six : f32
  fuel.yield %y : f32
}
fuel.recipe @mish(%x: f32) -> f32 {
  %e = math.exp %x : f32
  %sp = math.log1p %e : f32
  %t = math.tanh %sp : f32
  %y = arith.mulf %x, %t : f32
  fuel.yield %y : f32
}
#id = affine_map<(d0) -> (d0)>
func.func @steps(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %three = arith.constant 3.0 : f32
  %six = arith.constant 6.0 : f32
  %sixth = arith.constant 0.166666672 : f32
  %0 = tensor.empty() : tensor<8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%arg0 : tensor<8xf32>) outs(%0 : tensor<8xf32>) {
  ^bb0(%x: f32, %out: f32):
    %a = math.absf %x : f32
    %d = arith.addf %a, %one : f32
    %y = arith.divf %x, %d : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  %2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%1 : tensor<8xf32>) outs(%0 : tensor<8xf32>) {
  ^bb0(%x: f32, %out: f32):
    %s = arith.addf %x, %three : f32
    %r = arith.maximumf %zero, %s : f32
    %c = arith.minimumf %six, %r : f32
    %p = arith.mulf %c, %sixth : f32
    %y = arith.mulf %x, %p : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  %3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%2 : tensor<8xf32>) outs(%0 : tensor<8xf32>) {
  ^bb0(%x: f32, %out: f32):
    %e = math.exp %x : f32
    %sp = math.log1p %e : f32
    %t = math.tanh %sp : f32
    %y = arith.mulf %t, %x : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  return %3 : tensor<8xf32>
}
