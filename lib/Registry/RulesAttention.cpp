//===- RulesAttention.cpp - Shape and dtype rules: attention --------------===//

#include "RuleContext.h"

using namespace mlir;
using namespace mlir::fuel;

/// Grouped-query heads: hq must be a multiple of hkv (when both static).
static LogicalResult expectGqa(RuleContext &ctx, int64_t hq, int64_t hkv) {
  if (ShapedType::isDynamic(hq) || ShapedType::isDynamic(hkv))
    return success();
  if (hkv == 0 || hq % hkv != 0)
    return ctx.fail("shape rule", "the query heads (" + Twine(hq) +
                                      ") must be a multiple of the kv heads (" +
                                      Twine(hkv) + ")");
  return success();
}

/// alibi slopes: [Hq] or [B, Hq].
static LogicalResult expectAlibi(RuleContext &ctx, unsigned alibi, unsigned q,
                                 int64_t headDim, bool allowBatch) {
  if (!ctx.has(alibi))
    return success();
  if (ctx.rank(alibi) == 2) {
    if (!allowBatch)
      return ctx.fail("shape rule", "alibi must be [Hq]");
    if (failed(ctx.expectDimsEqual(alibi, 0, q, 0)))
      return failure();
  }
  return ctx.expectDimsEqual(alibi, -1, q, headDim);
}

/// q[B, Hq, Sq, D], k[B, Hkv, Sk, D], v[B, Hkv, Sk, Dv], alibi? [Hq] or
/// [B, Hq], k_len? index. Checks shared by the forward and the backwards.
static LogicalResult checkAttention(RuleContext &ctx, unsigned alibi) {
  if (failed(ctx.expectSameElementType({0, 1, 2})) ||
      failed(ctx.expectDimsEqual(1, 0, 0, 0)) ||
      failed(ctx.expectDimsEqual(2, 0, 0, 0)) ||
      failed(ctx.expectDimsEqual(1, 3, 0, 3)) ||
      failed(ctx.expectDimsEqual(2, 1, 1, 1)) ||
      failed(ctx.expectDimsEqual(2, 2, 1, 2)) ||
      failed(expectGqa(ctx, ctx.dim(0, 1), ctx.dim(1, 1))) ||
      failed(expectAlibi(ctx, alibi, 0, 1, /*allowBatch=*/true)))
    return failure();
  return success();
}

/// flash_attn -> o[B, Hq, Sq, Dv].
LogicalResult rules::flashAttn(RuleContext &ctx) {
  if (failed(checkAttention(ctx, /*alibi=*/3)))
    return failure();
  ctx.addTensorResult(
      {ctx.dim(0, 0), ctx.dim(0, 1), ctx.dim(0, 2), ctx.dim(2, 3)},
      ctx.elementType(0));
  return success();
}

/// flash_attn_backward_{q,k,v}(q, k, v, do, alibi?) -> the gradient shaped
/// like q, k or v; do is shaped like the forward output.
LogicalResult rules::flashAttnBackward(RuleContext &ctx) {
  if (failed(checkAttention(ctx, /*alibi=*/4)) ||
      failed(ctx.expectSameElementType({0, 3})) ||
      failed(ctx.expectDimsEqual(3, 0, 0, 0)) ||
      failed(ctx.expectDimsEqual(3, 1, 0, 1)) ||
      failed(ctx.expectDimsEqual(3, 2, 0, 2)) ||
      failed(ctx.expectDimsEqual(3, 3, 2, 3)))
    return failure();
  StringRef grad = ctx.info.results.front().name;
  unsigned like = grad == "dq" ? 0 : grad == "dk" ? 1 : 2;
  ctx.addResult(ctx.type(like));
  return success();
}

/// q[S, Hq, D], k_cache/v_cache[num_blocks, Hkv, block_size, D],
/// block_table[S, max_blocks], context_lens[S], alibi? [Hq] -> o[S, Hq, D].
LogicalResult rules::pagedAttn(RuleContext &ctx) {
  if (failed(ctx.expectSameElementType({0, 1, 2})) ||
      failed(ctx.expectSameShape(1, 2)) ||
      failed(ctx.expectDimsEqual(1, 3, 0, 2)) ||
      failed(ctx.expectDimEquals(1, 2, ctx.getInt("block_size"),
                                 "param block_size")) ||
      failed(ctx.expectDimsEqual(3, 0, 0, 0)) ||
      failed(ctx.expectDimsEqual(4, 0, 0, 0)) ||
      failed(expectGqa(ctx, ctx.dim(0, 1), ctx.dim(1, 1))) ||
      failed(expectAlibi(ctx, 5, 0, 1, /*allowBatch=*/false)))
    return failure();
  ctx.addResult(ctx.type(0));
  return success();
}
