//===- RulesQuantScan.cpp - Shape and dtype rules: quantized, scans -------===//

#include "RuleContext.h"
#include "FuelFused/FuelAttrs.h"

using namespace mlir;
using namespace mlir::fuel;

/// The result of act[..., M, K] @ W^T with N output columns: [..., M, N].
static void addMatmulResult(RuleContext &ctx, int64_t n) {
  SmallVector<int64_t> shape(ctx.type(0).getShape());
  shape.back() = n;
  ctx.addTensorResult(shape, ctx.elementType(0));
}

/// a[..., M, K] @ dequant(w_q)^T: K a multiple of the block size, w_q holding
/// ceil(N * K / block * bytes / 4) u32 words.
LogicalResult rules::qmatmul(RuleContext &ctx) {
  QuantType type = cast<QuantTypeAttr>(ctx.param("quant_type")).getValue();
  int64_t k = ctx.getInt("k"), n = ctx.getInt("n");
  auto [block, bytes] = getQuantBlockGeometry(type);
  if (k % block != 0)
    return ctx.fail("shape rule", "k (" + Twine(k) +
                                      ") must be a multiple of the " +
                                      stringifyQuantType(type) +
                                      " block size (" + Twine(block) + ")");
  if (failed(ctx.expectDimEquals(0, -1, k, "param k")))
    return failure();
  int64_t words = (n * (k / block) * bytes + 3) / 4;
  if (failed(ctx.expectDimEquals(1, 0, words,
                                 "the u32 words of N * K / " + Twine(block) +
                                     " blocks of " + Twine(bytes) + " bytes")))
    return failure();
  addMatmulResult(ctx, n);
  return success();
}

/// act[..., M, K], w_packed[N, K/2], absmax[N, K/block_size] -> [..., M, N].
LogicalResult rules::nf4Matmul(RuleContext &ctx) {
  int64_t block = ctx.getInt("block_size");
  int64_t k = ctx.dim(0, -1);
  if (!ShapedType::isDynamic(k)) {
    if (k % 2 != 0)
      return ctx.fail("shape rule", "K (" + Twine(k) + ") must be even");
    if (k % block != 0)
      return ctx.fail("shape rule", "block_size (" + Twine(block) +
                                        ") must divide K (" + Twine(k) + ")");
    if (failed(ctx.expectDimEquals(1, 1, k / 2, "K / 2")) ||
        failed(ctx.expectDimEquals(2, 1, k / block, "K / block_size")))
      return failure();
  }
  if (failed(ctx.expectDimsEqual(2, 0, 1, 0)))
    return failure();
  int64_t n = ctx.dim(1, 0);
  addMatmulResult(ctx, ShapedType::isDynamic(n) ? ctx.dim(2, 0) : n);
  return success();
}

/// act[..., M, K], qweight[K, N/8], qzeros[K/group_size, N/8],
/// scales[K/group_size, N] -> [..., M, N].
LogicalResult rules::awqMatmul(RuleContext &ctx) {
  if (failed(ctx.expectSameElementType({0, 3})))
    return failure();
  int64_t group = ctx.getInt("group_size");
  int64_t k = ctx.dim(0, -1);
  if (!ShapedType::isDynamic(k)) {
    if (k % group != 0)
      return ctx.fail("shape rule", "group_size (" + Twine(group) +
                                        ") must divide K (" + Twine(k) + ")");
    if (failed(ctx.expectDimEquals(1, 0, k, "K")) ||
        failed(ctx.expectDimEquals(2, 0, k / group, "K / group_size")) ||
        failed(ctx.expectDimEquals(3, 0, k / group, "K / group_size")))
      return failure();
  }
  if (failed(ctx.expectDimsEqual(2, 1, 1, 1)))
    return failure();
  int64_t n = ctx.dim(3, 1);
  if (!ShapedType::isDynamic(n)) {
    if (n % 8 != 0)
      return ctx.fail("shape rule",
                      "N (" + Twine(n) + ") must be a multiple of 8");
    if (failed(ctx.expectDimEquals(1, 1, n / 8, "N / 8")))
      return failure();
  } else if (!ShapedType::isDynamic(ctx.dim(1, 1))) {
    n = ctx.dim(1, 1) * 8;
  }
  addMatmulResult(ctx, n);
  return success();
}

/// u, delta [B, L, D], a [D, N], b, c [B, L, N] -> y [B, L, D],
/// last_state [B, D, N].
LogicalResult rules::selectiveScan(RuleContext &ctx) {
  if (failed(ctx.expectSameElementType({0, 1, 2, 3, 4})) ||
      failed(ctx.expectSameShape(0, 1)) ||
      failed(ctx.expectDimsEqual(2, 0, 0, 2)) ||
      failed(ctx.expectSameShape(3, 4)) ||
      failed(ctx.expectDimsEqual(3, 0, 0, 0)) ||
      failed(ctx.expectDimsEqual(3, 1, 0, 1)) ||
      failed(ctx.expectDimsEqual(3, 2, 2, 1)))
    return failure();
  ctx.addResult(ctx.type(0));
  ctx.addTensorResult({ctx.dim(0, 0), ctx.dim(0, 2), ctx.dim(2, 1)},
                      ctx.elementType(0));
  return success();
}

/// x [B, L, H, P], dt [B, L, H], a [H], b, c [B, L, H, N] -> y [B, L, H, P];
/// chunk_size divides L.
LogicalResult rules::ssdChunkScan(RuleContext &ctx) {
  if (failed(ctx.expectSameElementType({0, 1, 2, 3, 4})) ||
      failed(ctx.expectDimsEqual(1, 0, 0, 0)) ||
      failed(ctx.expectDimsEqual(1, 1, 0, 1)) ||
      failed(ctx.expectDimsEqual(1, 2, 0, 2)) ||
      failed(ctx.expectDimsEqual(2, 0, 0, 2)) ||
      failed(ctx.expectSameShape(3, 4)) ||
      failed(ctx.expectDimsEqual(3, 0, 0, 0)) ||
      failed(ctx.expectDimsEqual(3, 1, 0, 1)) ||
      failed(ctx.expectDimsEqual(3, 2, 0, 2)))
    return failure();
  int64_t chunk = ctx.getInt("chunk_size"), len = ctx.dim(0, 1);
  if (!ShapedType::isDynamic(len) && len % chunk != 0)
    return ctx.fail("params rule", "chunk_size (" + Twine(chunk) +
                                       ") must divide the sequence length L (" +
                                       Twine(len) + ")");
  ctx.addResult(ctx.type(0));
  return success();
}
