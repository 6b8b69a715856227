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
  r.output(r.add(r.contract(a, b, k), bias));
}

/// y = x * cos + rotate_half(x) * sin, cos and sin [s, d] broadcast over the
/// leading dims of x.
void recipes::rope(RecipeBuilder &r) {
  RecipeAxis s = r.axis("s"), d = r.axis("d");
  RecipeValue x = r.input("x", {r.batch(), s, d});
  RecipeValue cos = r.input("cos", {s, d});
  RecipeValue sin = r.input("sin", {s, d});
  r.output(r.add(r.mul(x, cos), r.mul(r.rotateHalf(x, d), sin)));
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
  r.output(r.mul(r.mul(coeff, r.powi(x, exp - 1)), g));
}

/// y = mul * x + add.
void recipes::inplaceAffine(RecipeBuilder &r) {
  RecipeValue x = r.input("x", {r.batch()});
  r.output(r.add(r.mul(r.param("mul"), x), r.param("add")));
}
