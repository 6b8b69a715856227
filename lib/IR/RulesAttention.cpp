//===- RulesAttention.cpp - Shape and dtype rules: attention --------------===//

#include "RuleContext.h"

#include "FuelFused/IR/FusedOpViews.h"

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
  // flash_attn and its backwards put q, k and v first.
  using V = FlashAttnView;
  static_assert(V::Q == FlashAttnBackwardQView::Q &&
                V::K == FlashAttnBackwardQView::K &&
                V::V == FlashAttnBackwardQView::V);
  if (failed(ctx.expectSameElementType({V::Q, V::K, V::V})) ||
      failed(ctx.expectDimsEqual(V::K, 0, V::Q, 0)) ||
      failed(ctx.expectDimsEqual(V::V, 0, V::Q, 0)) ||
      failed(ctx.expectDimsEqual(V::K, 3, V::Q, 3)) ||
      failed(ctx.expectDimsEqual(V::V, 1, V::K, 1)) ||
      failed(ctx.expectDimsEqual(V::V, 2, V::K, 2)) ||
      failed(expectGqa(ctx, ctx.dim(V::Q, 1), ctx.dim(V::K, 1))) ||
      failed(expectAlibi(ctx, alibi, V::Q, 1, /*allowBatch=*/true)))
    return failure();
  return success();
}

/// flash_attn -> o[B, Hq, Sq, Dv].
LogicalResult rules::flashAttn(RuleContext &ctx) {
  using V = FlashAttnView;
  if (failed(checkAttention(ctx, V::Alibi)))
    return failure();
  ctx.addTensorResult({ctx.dim(V::Q, 0), ctx.dim(V::Q, 1), ctx.dim(V::Q, 2),
                       ctx.dim(V::V, 3)},
                      ctx.elementType(V::Q));
  return success();
}

/// flash_attn_backward_{q,k,v}(q, k, v, do, alibi?) -> the gradient shaped
/// like q, k or v; do is shaped like the forward output.
LogicalResult rules::flashAttnBackward(RuleContext &ctx) {
  // The three backwards share one record class, so one layout.
  using V = FlashAttnBackwardQView;
  if (failed(checkAttention(ctx, V::Alibi)) ||
      failed(ctx.expectSameElementType({V::Q, V::Do})) ||
      failed(ctx.expectDimsEqual(V::Do, 0, V::Q, 0)) ||
      failed(ctx.expectDimsEqual(V::Do, 1, V::Q, 1)) ||
      failed(ctx.expectDimsEqual(V::Do, 2, V::Q, 2)) ||
      failed(ctx.expectDimsEqual(V::Do, 3, V::V, 3)))
    return failure();
  // The gradient is shaped like the operand it is taken for.
  auto kind = static_cast<FusedOpKind>(ctx.info.id);
  unsigned like = kind == FusedOpKind::FlashAttnBackwardQ   ? V::Q
                  : kind == FusedOpKind::FlashAttnBackwardK ? V::K
                                                            : V::V;
  ctx.addResult(ctx.type(like));
  return success();
}

/// q[S, Hq, D], k_cache/v_cache[num_blocks, Hkv, block_size, D],
/// block_table[S, max_blocks], context_lens[S], alibi? [Hq] -> o[S, Hq, D].
LogicalResult rules::pagedAttn(RuleContext &ctx) {
  using V = PagedAttnView;
  auto params = ctx.params<PagedAttnParams>();
  if (failed(ctx.expectSameElementType({V::Q, V::KCache, V::VCache})) ||
      failed(ctx.expectSameShape(V::KCache, V::VCache)) ||
      failed(ctx.expectDimsEqual(V::KCache, 3, V::Q, 2)) ||
      failed(ctx.expectDimEquals(V::KCache, 2, params.getBlockSize(),
                                 "param block_size")) ||
      failed(ctx.expectDimsEqual(V::BlockTable, 0, V::Q, 0)) ||
      failed(ctx.expectDimsEqual(V::ContextLens, 0, V::Q, 0)) ||
      failed(expectGqa(ctx, ctx.dim(V::Q, 1), ctx.dim(V::KCache, 1))) ||
      failed(expectAlibi(ctx, 5, 0, 1, /*allowBatch=*/false)))
    return failure();
  ctx.addResult(ctx.type(V::Q));
  return success();
}
