//===- RecipesNorm.cpp - Recipes: softmax, norms and their backwards ------===//
//
// Each recipe spells its FUSED_OPS.md formula with the primitives of
// Recipe.h. n is the last dim; "..." the leading dims.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Recipe.h"
#include "RecipeDecls.h"

using namespace mlir;
using namespace mlir::fuel;

/// y = exp(x - max(x)) / sum(exp(x - max(x))) over n.
void recipes::softmaxLastDim(RecipeBuilder &r) {
  RecipeAxis n = r.axis("n");
  RecipeValue x = r.input("x", {r.batch(), n});
  RecipeValue e = r.exp(r.sub(x, r.reduceMax(x, n)));
  r.output(r.div(e, r.reduceSum(e, n)));
}

/// y = x / sqrt(mean(x^2) + eps) over n.
void recipes::rmsNormLastDim(RecipeBuilder &r) {
  RecipeAxis n = r.axis("n");
  RecipeValue x = r.input("x", {r.batch(), n});
  RecipeValue ms = r.mean(r.mul(x, x), n);
  r.output(r.div(x, r.sqrt(r.add(ms, r.param("eps")))));
}

/// c = x - mean(x); y = c / sqrt(mean(c^2) + eps) over n (biased variance).
void recipes::layerNormLastDim(RecipeBuilder &r) {
  RecipeAxis n = r.axis("n");
  RecipeValue x = r.input("x", {r.batch(), n});
  RecipeValue c = r.sub(x, r.mean(x, n));
  RecipeValue var = r.mean(r.mul(c, c), n);
  r.output(r.div(c, r.sqrt(r.add(var, r.param("eps")))));
}

/// dx = y * (g - sum(g * y)) over n.
void recipes::softmaxLastDimBackward(RecipeBuilder &r) {
  RecipeAxis n = r.axis("n");
  RecipeValue y = r.input("y", {r.batch(), n});
  RecipeValue g = r.input("g", {r.batch(), n});
  r.output(r.mul(y, r.sub(g, r.reduceSum(r.mul(g, y), n))));
}

/// r = 1 / sqrt(var + eps), xh = (x - mean) * r,
/// dx = r * (g - mean(g) - xh * mean(g * xh)) over n.
void recipes::layerNormLastDimBackward(RecipeBuilder &r) {
  RecipeAxis n = r.axis("n");
  RecipeValue x = r.input("x", {r.batch(), n});
  RecipeValue g = r.input("g", {r.batch(), n});
  RecipeValue c = r.sub(x, r.mean(x, n));
  RecipeValue var = r.mean(r.mul(c, c), n);
  RecipeValue rs = r.div(r.constant(1.0), r.sqrt(r.add(var, r.param("eps"))));
  RecipeValue xh = r.mul(c, rs);
  RecipeValue inner =
      r.sub(r.sub(g, r.mean(g, n)), r.mul(xh, r.mean(r.mul(g, xh), n)));
  r.output(r.mul(rs, inner));
}

/// ms = mean(x^2), r = 1 / sqrt(ms + eps),
/// dx = r * (g - x * sum(g * x) / (n * (ms + eps))) over n.
void recipes::rmsNormLastDimBackward(RecipeBuilder &r) {
  RecipeAxis n = r.axis("n");
  RecipeValue x = r.input("x", {r.batch(), n});
  RecipeValue g = r.input("g", {r.batch(), n});
  RecipeValue d = r.add(r.mean(r.mul(x, x), n), r.param("eps"));
  RecipeValue rs = r.div(r.constant(1.0), r.sqrt(d));
  RecipeValue proj = r.div(r.reduceSum(r.mul(g, x), n), r.mul(r.dimSize(n), d));
  r.output(r.mul(rs, r.sub(g, r.mul(x, proj))));
}
