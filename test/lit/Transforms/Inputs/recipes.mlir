// A library of recipes for fuse-recipes.mlir (--fuel-fuse="recipes=...").
fuel.recipe @silu(%x: f32) -> f32 {
  %one = arith.constant 1.0 : f32
  %n = arith.negf %x : f32
  %e = math.exp %n : f32
  %d = arith.addf %one, %e : f32
  %y = arith.divf %x, %d : f32
  fuel.yield %y : f32
}
fuel.recipe @leaky_relu(%x: f32) params(%alpha: f32) -> f32 {
  %0 = arith.mulf %x, %alpha : f32
  %1 = arith.maximumf %x, %0 : f32
  fuel.yield %1 : f32
}
