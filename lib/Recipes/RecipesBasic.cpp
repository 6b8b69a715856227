//===- RecipesBasic.cpp - Recipes: linear, RoPE, elementwise --------------===//

#include "FuelFused/Recipes/Recipe.h"
#include "RecipeDecls.h"

#include "FuelFused/IR/FuelAttrs.h"

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

/// A classification loss's output: the per-row `loss` summed, averaged
/// over the targets not ignored, or left per row (param `reduction`).
static void outputReduced(RecipeBuilder &r, RecipeValue loss,
                          RecipeValue targets) {
  auto reduction = static_cast<Reduction>(r.intParam("reduction"));
  if (reduction == Reduction::None) {
    r.output(loss);
    return;
  }
  RecipeValue total = r.reduceSum(loss, r.batch());
  if (reduction == Reduction::Mean)
    total = r.div(total, r.countKept(targets, "ignore_index"));
  r.output(total);
}

/// PyTorch's cross-entropy over the last dim: the log-softmax picked at each
/// row's target and negated, 0 for ignored targets; summed, or averaged
/// over the targets not ignored, or left per row.
void recipes::softmaxCrossEntropy(RecipeBuilder &r) {
  RecipeAxis v = r.axis("v");
  RecipeValue logits = r.input("logits", {r.batch(), v});
  RecipeValue targets = r.input("targets", {r.batch()});
  RecipeValue shifted = r.sub(logits, r.reduceMax(logits, v));
  RecipeValue logp =
      r.sub(shifted, r.log(r.reduceSum(r.exp(shifted), v)));
  RecipeValue picked = r.gather(logp, targets, v, "ignore_index");
  RecipeValue loss = r.maskIgnored(r.neg(picked), targets, "ignore_index");
  outputReduced(r, loss, targets);
}

/// optax's integer-label cross-entropy: logsumexp(x) - x[t] per row (the
/// log-softmax is not formed, so the loss rounds otherwise), with no target
/// ignored; JAX's logsumexp shifts by the row max only where it is finite.
void recipes::softmaxCrossEntropyLogSumExp(RecipeBuilder &r) {
  r.noIgnoredTargets();
  r.finiteMaxGuard();
  RecipeAxis v = r.axis("v");
  RecipeValue logits = r.input("logits", {r.batch(), v});
  RecipeValue targets = r.input("targets", {r.batch()});
  RecipeValue max = r.reduceMax(logits, v);
  RecipeValue sum = r.reduceSum(r.exp(r.sub(logits, max)), v);
  RecipeValue lse = r.add(r.log(sum), max);
  RecipeValue loss = r.sub(lse, r.gather(logits, targets, v, "ignore_index"));
  outputReduced(r, loss, targets);
}
