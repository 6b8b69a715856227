//===- RecipesAttention.cpp - Recipes: attention --------------------------===//

#include "FuelFused/Recipes/Recipe.h"
#include "RecipeDecls.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::fuel;

/// o = softmax(causal_mask(scale * q @ k^T)) @ v over the keys, for the
/// basic form: as many kv heads as query heads, no window, softcap, alibi or
/// k_len (the hand-written decomposition covers those).
void recipes::flashAttn(RecipeBuilder &r) {
  for (StringRef p : {"window_size_left", "window_size_right", "softcap"})
    if (r.hasParam(p))
      r.unsupported("windows and softcap");
  if (r.hasOperand("alibi") || r.hasOperand("k_len"))
    r.unsupported("alibi and k_len");
  auto q = dyn_cast_or_null<ShapedType>(r.operandType("q"));
  auto k = dyn_cast_or_null<ShapedType>(r.operandType("k"));
  if (q && k &&
      (q.isDynamicDim(1) || k.isDynamicDim(1) ||
       q.getDimSize(1) != k.getDimSize(1)))
    r.unsupported("grouped-query heads");
  bool causal = r.intParam("causal");
  r.zeroMaskedRows();
  RecipeAxis sq = r.axis("sq"), sk = r.axis("sk"), d = r.axis("d"),
             dv = r.axis("dv");
  RecipeValue qv = r.input("q", {r.batch(), sq, d});
  RecipeValue kv = r.input("k", {r.batch(), sk, d});
  RecipeValue vv = r.input("v", {r.batch(), sk, dv});
  RecipeValue scores = r.contract(qv, kv, d);
  RecipeValue scale = r.param("softmax_scale");
  RecipeValue s = r.mul(scores, scale);
  if (causal)
    s = r.causalMask(s, sq, sk);
  RecipeValue max = r.reduceMax(s, sk);
  RecipeValue e = r.exp(r.sub(s, max));
  RecipeValue sum = r.reduceSum(e, sk);
  RecipeValue p = r.div(e, sum);
  r.output(r.contract(p, vv, sk));
}
