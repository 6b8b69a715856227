//===- RecipesNorm.cpp - Recipes: softmax, norms and their backwards ------===//
//
// Each recipe spells its formula (docs/FusedOps.md) with the primitives of
// Recipe.h. n is the last dim; "..." the leading dims.
//
// Each step is its own statement: the order of evaluation of a call's
// arguments is unspecified in C++, and the recipe's node order must not
// depend on the compiler.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Recipes/Recipe.h"
#include "RecipeDecls.h"

using namespace mlir;
using namespace mlir::fuel;

/// y = exp(x - max(x)) / sum(exp(x - max(x))) over n.
void recipes::softmaxLastDim(RecipeBuilder &r) {
  RecipeAxis n = r.axis("n");
  RecipeValue x = r.input("x", {r.batch(), n});
  RecipeValue max = r.reduceMax(x, n);
  RecipeValue e = r.exp(r.sub(x, max));
  RecipeValue sum = r.reduceSum(e, n);
  r.output(r.div(e, sum));
}

/// y = x / sqrt(mean(x^2) + eps) over n.
void recipes::rmsNormLastDim(RecipeBuilder &r) {
  RecipeAxis n = r.axis("n");
  RecipeValue x = r.input("x", {r.batch(), n});
  RecipeValue ms = r.mean(r.mul(x, x), n);
  RecipeValue eps = r.param("eps");
  r.output(r.div(x, r.sqrt(r.add(ms, eps))));
}

/// c = x - mean(x); y = c / sqrt(mean(c^2) + eps) over n (biased variance).
void recipes::layerNormLastDim(RecipeBuilder &r) {
  RecipeAxis n = r.axis("n");
  RecipeValue x = r.input("x", {r.batch(), n});
  RecipeValue mean = r.mean(x, n);
  RecipeValue c = r.sub(x, mean);
  RecipeValue var = r.mean(r.mul(c, c), n);
  RecipeValue eps = r.param("eps");
  r.output(r.div(c, r.sqrt(r.add(var, eps))));
}

/// layer_norm_last_dim with the variance as mean(x^2) - mean(x)^2, clamped
/// at 0 (Flax's LayerNorm) or not (jax.nn.standardize): equal to the
/// recipe's mean((x - mean(x))^2) in exact arithmetic, rounded otherwise
/// (it cancels where the mean is large against the spread).
static void layerNormOneSweep(RecipeBuilder &r, bool clamped) {
  RecipeAxis n = r.axis("n");
  RecipeValue x = r.input("x", {r.batch(), n});
  RecipeValue mean = r.mean(x, n);
  RecipeValue meanOfSquares = r.mean(r.mul(x, x), n);
  RecipeValue var = r.sub(meanOfSquares, r.mul(mean, mean));
  if (clamped)
    var = r.max(r.constant(0.0), var);
  RecipeValue c = r.sub(x, mean);
  RecipeValue eps = r.param("eps");
  r.output(r.div(c, r.sqrt(r.add(var, eps))));
}

void recipes::layerNormLastDimOneSweep(RecipeBuilder &r) {
  layerNormOneSweep(r, /*clamped=*/false);
}

void recipes::layerNormLastDimOneSweepClamped(RecipeBuilder &r) {
  layerNormOneSweep(r, /*clamped=*/true);
}

/// dx = y * (g - sum(g * y)) over n.
void recipes::softmaxLastDimBackward(RecipeBuilder &r) {
  RecipeAxis n = r.axis("n");
  RecipeValue y = r.input("y", {r.batch(), n});
  RecipeValue g = r.input("g", {r.batch(), n});
  RecipeValue dot = r.reduceSum(r.mul(g, y), n);
  r.output(r.mul(y, r.sub(g, dot)));
}

/// r = 1 / sqrt(var + eps), xh = (x - mean) * r,
/// dx = r * (g - mean(g) - xh * mean(g * xh)) over n.
void recipes::layerNormLastDimBackward(RecipeBuilder &r) {
  RecipeAxis n = r.axis("n");
  RecipeValue x = r.input("x", {r.batch(), n});
  RecipeValue g = r.input("g", {r.batch(), n});
  RecipeValue mean = r.mean(x, n);
  RecipeValue c = r.sub(x, mean);
  RecipeValue var = r.mean(r.mul(c, c), n);
  RecipeValue eps = r.param("eps");
  RecipeValue one = r.constant(1.0);
  RecipeValue rs = r.div(one, r.sqrt(r.add(var, eps)));
  RecipeValue xh = r.mul(c, rs);
  RecipeValue meanG = r.mean(g, n);
  RecipeValue meanGXh = r.mean(r.mul(g, xh), n);
  RecipeValue centered = r.sub(g, meanG);
  RecipeValue inner = r.sub(centered, r.mul(xh, meanGXh));
  r.output(r.mul(rs, inner));
}

/// ms = mean(x^2), r = 1 / sqrt(ms + eps),
/// dx = r * (g - x * sum(g * x) / (n * (ms + eps))) over n.
void recipes::rmsNormLastDimBackward(RecipeBuilder &r) {
  RecipeAxis n = r.axis("n");
  RecipeValue x = r.input("x", {r.batch(), n});
  RecipeValue g = r.input("g", {r.batch(), n});
  RecipeValue ms = r.mean(r.mul(x, x), n);
  RecipeValue eps = r.param("eps");
  RecipeValue d = r.add(ms, eps);
  RecipeValue one = r.constant(1.0);
  RecipeValue rs = r.div(one, r.sqrt(d));
  RecipeValue dot = r.reduceSum(r.mul(g, x), n);
  RecipeValue size = r.dimSize(n);
  RecipeValue proj = r.div(dot, r.mul(size, d));
  RecipeValue xProj = r.mul(x, proj);
  r.output(r.mul(rs, r.sub(g, xProj)));
}
