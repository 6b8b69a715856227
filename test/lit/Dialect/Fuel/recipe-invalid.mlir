// RUN: fuel-opt %s -split-input-file -verify-diagnostics

// Malformed recipes and bad uses of them: each gets a diagnostic that names
// the rule. (The chunks share one process, and so one registry: each uses
// its own names.)

// expected-error @+2 {{'math.sin' is not a recipe step}}
fuel.recipe @sine(%x: f32) -> f32 {
  %0 = math.sin %x : f32
  fuel.yield %0 : f32
}

// -----

// expected-error @+1 {{operands and params must all have one float type (f32), got f16}}
fuel.recipe @mixed(%x: f32, %y: f16) -> f32 {
  fuel.yield %x : f32
}

// -----

// expected-error @+1 {{operands and params must be float scalars, got i32}}
fuel.recipe @ints(%x: i32) -> f32 {
  %0 = arith.constant 1.0 : f32
  fuel.yield %0 : f32
}

// -----

// expected-error @+3 {{the result does not depend on any operand}}
fuel.recipe @constant_result(%x: f32) params(%p: f32) -> f32 {
  %0 = arith.constant 2.0 : f32
  fuel.yield %p : f32
}

// -----

// expected-error @+1 {{needs at least one operand}}
fuel.recipe @no_operand() params(%p: f32) -> f32 {
  fuel.yield %p : f32
}

// -----

// expected-error @+1 {{the recipe yields 'f32', not its declared result type 'f16'}}
fuel.recipe @wrong_result(%x: f32) -> f16 {
  fuel.yield %x : f32
}

// -----

// expected-error @+1 {{'softmax_last_dim' is a static fused op}}
fuel.recipe @softmax_last_dim(%x: f32) -> f32 {
  %0 = math.exp %x : f32
  fuel.yield %0 : f32
}

// -----

fuel.recipe @twice(%x: f32) -> f32 {
  %0 = arith.addf %x, %x : f32
  fuel.yield %0 : f32
}
// expected-error @+1 {{'twice' is already defined by a recipe that computes something else}}
fuel.recipe @twice(%x: f32) -> f32 {
  %0 = arith.mulf %x, %x : f32
  fuel.yield %0 : f32
}

// -----

func.func @use_before_definition(%t: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unknown fused op @later: no fuel.recipe @later comes before it}}
  %0 = fuel.fused @later (%t) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
fuel.recipe @later(%x: f32) -> f32 {
  %0 = math.exp %x : f32
  fuel.yield %0 : f32
}

// -----

fuel.recipe @scale(%x: f32) params(%s: f32) -> f32 {
  %0 = arith.mulf %x, %s : f32
  fuel.yield %0 : f32
}
func.func @missing_param(%t: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{missing required param 's'}}
  %0 = fuel.fused @scale (%t) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

fuel.recipe @mul2(%a: f32, %b: f32) -> f32 {
  %0 = arith.mulf %a, %b : f32
  fuel.yield %0 : f32
}
func.func @wrong_arity(%t: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expects 2 operands, got 1}}
  %0 = fuel.fused @mul2 (%t) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

fuel.recipe @mul3(%a: f32, %b: f32) -> f32 {
  %0 = arith.mulf %a, %b : f32
  fuel.yield %0 : f32
}
func.func @shapes_differ(%t: tensor<4xf32>, %u: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{shape}}
  %0 = fuel.fused @mul3 (%t, %u) : (tensor<4xf32>, tensor<8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

fuel.recipe @exp1(%x: f32) -> f32 {
  %0 = math.exp %x : f32
  fuel.yield %0 : f32
}
func.func @recipe_not_in_scope(%t: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{no fuel.recipe @elsewhere in scope}}
  %0 = "fuel.fused"(%t) {kind = #fuel.kind<exp1>, params = {}, recipe = @elsewhere} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

fuel.recipe @exp2(%x: f32) -> f32 {
  %0 = math.exp %x : f32
  %1 = math.exp %0 : f32
  fuel.yield %1 : f32
}
func.func @recipe_missing(%t: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{exp2 is defined by a recipe: the op must name it}}
  %0 = "fuel.fused"(%t) {kind = #fuel.kind<exp2>, params = {}} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

fuel.recipe @log1(%x: f32) -> f32 {
  %0 = math.log %x : f32
  fuel.yield %0 : f32
}
func.func @static_op_names_recipe(%t: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{softmax_last_dim is not defined by a recipe, but the op names the recipe @log1}}
  %0 = "fuel.fused"(%t) {kind = #fuel.kind<softmax_last_dim>, params = {}, recipe = @log1} : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

fuel.recipe @sq(%x: f32) -> f32 {
  %0 = arith.mulf %x, %x : f32
  fuel.yield %0 : f32
}
fuel.recipe @cube(%x: f32) -> f32 {
  %0 = arith.mulf %x, %x : f32
  %1 = arith.mulf %0, %x : f32
  fuel.yield %1 : f32
}
func.func @recipe_of_another_op(%t: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{the recipe @cube defines cube, not the op's sq}}
  %0 = "fuel.fused"(%t) {kind = #fuel.kind<sq>, params = {}, recipe = @cube} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{'fuel.recipe' op has no fuel.yield}}
fuel.recipe @empty(%x: f32) -> f32 {
}

// -----

// Ops after the yield: rejected when the recipe is read (while parsing,
// before the block's terminator is verified), whatever they are, even one
// that names a value of the enclosing scope defined later.
fuel.recipe @after_yield(%x: f32) -> f32 {
  %0 = arith.negf %x : f32
  fuel.yield %0 : f32
  // expected-error @+1 {{'fuel.recipe' op has an op after its fuel.yield, which ends the recipe}}
  %1 = arith.negf %0 : f32
}

// -----

fuel.recipe @yield_then_outside(%x: f32) -> f32 {
  %0 = arith.negf %x : f32
  fuel.yield %0 : f32
  // expected-error @+1 {{'fuel.recipe' op has an op after its fuel.yield}}
  linalg.yield %later : f32
}
%later = arith.constant 1.0 : f32

// -----

// expected-error @+1 {{'fuel.recipe' op needs at least one operand}}
"fuel.recipe"() ({
^bb0(%p: f32):
  fuel.yield %p : f32
}) {sym_name = "generic_only_params", param_names = ["p", "q"]} : () -> ()

// -----

// A name from the enclosing scope (whose producer is not parsed yet) is
// rejected when the recipe is read, before the isolation is verified.
%outside = math.exp %later : f32
fuel.recipe @escapes(%v: f32) -> f32 {
  %later = arith.negf %v : f32
  // expected-error @+1 {{uses a value from outside the recipe}}
  %d = arith.addf %later, %outside : f32
  fuel.yield %d : f32
}
