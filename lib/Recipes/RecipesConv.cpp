//===- RecipesConv.cpp - Recipes: convolutions ----------------------------===//

#include "FuelFused/Recipes/Recipe.h"
#include "RecipeDecls.h"

using namespace mlir;
using namespace mlir::fuel;

/// y[n, f, oh, ow] = sum_{c, kh, kw} x[n, c, oh * sh + kh - ph,
///   ow * sw + kw - pw] * w[f, c, kh, kw] (+ bias[f]), x read as 0 outside,
/// for one group (the hand-written decomposition covers groups > 1).
void recipes::conv2d(RecipeBuilder &r) {
  if (r.intParamOrDefault("groups") > 1)
    r.unsupported("grouped convolution");
  RecipeAxis n = r.axis("n"), f = r.axis("f"), c = r.axis("c"),
             h = r.axis("h"), w = r.axis("w"), oh = r.axis("oh"),
             ow = r.axis("ow"), kh = r.axis("kh"), kw = r.axis("kw");
  RecipeValue x = r.input("x", {n, c, h, w});
  RecipeValue weight = r.input("w", {f, c, kh, kw});
  RecipeValue rows = r.window(x, h, oh, kh, "stride", "padding", 0);
  RecipeValue windows = r.window(rows, w, ow, kw, "stride", "padding", 1);
  RecipeValue y = r.contract(windows, weight, {c, kh, kw}, {n, f, oh, ow});
  if (r.hasOperand("bias"))
    y = r.add(y, r.input("bias", {f}));
  r.output(y);
}
