//===- RecipesBasic.cpp - Recipes: linear, RoPE, elementwise --------------===//

#include "FuelFused/Recipe.h"
#include "RecipeDecls.h"

using namespace mlir;
using namespace mlir::fuel;

/// y[..., m, n] = sum_k a[..., m, k] * b[k, n] + bias[n].
void recipes::fusedLinear(RecipeBuilder &r) {
  RecipeAxis m = r.axis("m"), n = r.axis("n"), k = r.axis("k");
  RecipeValue a = r.input("a", {r.batch(), m, k});
  RecipeValue b = r.input("b", {k, n});
  RecipeValue bias = r.input("bias", {n});
  RecipeValue ab = r.contract(a, b, k);
  r.output(r.add(ab, bias));
}

/// y = x * cos + rotate_half(x) * sin, cos and sin [s, d] broadcast over the
/// leading dims of x.
void recipes::rope(RecipeBuilder &r) {
  RecipeAxis s = r.axis("s"), d = r.axis("d");
  RecipeValue x = r.input("x", {r.batch(), s, d});
  RecipeValue cos = r.input("cos", {s, d});
  RecipeValue sin = r.input("sin", {s, d});
  RecipeValue xCos = r.mul(x, cos);
  RecipeValue rotSin = r.mul(r.rotateHalf(x, d), sin);
  r.output(r.add(xCos, rotSin));
}

/// dx = exp * x^(exp - 1) * g; 0 for exp = 0.
void recipes::powiBackward(RecipeBuilder &r) {
  RecipeValue x = r.input("x", {r.batch()});
  RecipeValue g = r.input("g", {r.batch()});
  int64_t exp = r.intParam("exp");
  if (exp == 0) {
    r.output(r.splat(0.0, x));
    return;
  }
  RecipeValue coeff = r.constant(static_cast<double>(exp));
  RecipeValue pow = r.powi(x, exp - 1);
  r.output(r.mul(r.mul(coeff, pow), g));
}

/// y = mul * x + add.
void recipes::inplaceAffine(RecipeBuilder &r) {
  RecipeValue x = r.input("x", {r.batch()});
  RecipeValue mul = r.param("mul");
  RecipeValue scaled = r.mul(mul, x);
  RecipeValue add = r.param("add");
  r.output(r.add(scaled, add));
}
