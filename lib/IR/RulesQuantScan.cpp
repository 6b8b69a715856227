//===- RulesQuantScan.cpp - Shape and dtype rules: quantized, scans -------===//

#include "RuleContext.h"

#include "FuelFused/IR/FusedOpViews.h"
#include "FuelFused/IR/FuelAttrs.h"

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
  using V = QmatmulView;
  auto params = ctx.params<QmatmulParams>();
  QuantType type = params.getQuantType();
  int64_t k = params.getK(), n = params.getN();
  auto [block, bytes] = getQuantBlockGeometry(type);
  if (k % block != 0)
    return ctx.fail("shape rule", "k (" + Twine(k) +
                                      ") must be a multiple of the " +
                                      stringifyQuantType(type) +
                                      " block size (" + Twine(block) + ")");
  if (failed(ctx.expectDimEquals(V::A, -1, k, "param k")))
    return failure();
  std::string what = ("the u32 words of N * K / " + Twine(block) +
                      " blocks of " + Twine(bytes) + " bytes")
                         .str();
  FailureOr<int64_t> blocks = ctx.mul(n, k / block, what);
  if (failed(blocks))
    return failure();
  FailureOr<int64_t> streamBytes = ctx.mul(*blocks, bytes, what);
  if (failed(streamBytes))
    return failure();
  FailureOr<int64_t> padded = ctx.add(*streamBytes, 3, what);
  if (failed(padded))
    return failure();
  int64_t words = *padded / 4;
  if (failed(ctx.expectDimEquals(V::WQ, 0, words, what)))
    return failure();
  addMatmulResult(ctx, n);
  return success();
}

/// act[..., M, K], w_packed[N, K/2], absmax[N, K/block_size] -> [..., M, N].
LogicalResult rules::nf4Matmul(RuleContext &ctx) {
  using V = Nf4MatmulView;
  auto params = ctx.params<Nf4MatmulParams>();
  int64_t block = params.getBlockSize();
  int64_t k = ctx.dim(V::Act, -1);
  if (!ShapedType::isDynamic(k)) {
    if (k % 2 != 0)
      return ctx.fail("shape rule", "K (" + Twine(k) + ") must be even");
    if (k % block != 0)
      return ctx.fail("shape rule", "block_size (" + Twine(block) +
                                        ") must divide K (" + Twine(k) + ")");
    if (failed(ctx.expectDimEquals(V::WPacked, 1, k / 2, "K / 2")) ||
        failed(ctx.expectDimEquals(V::Absmax, 1, k / block, "K / block_size")))
      return failure();
  }
  if (failed(ctx.expectDimsEqual(V::Absmax, 0, V::WPacked, 0)))
    return failure();
  int64_t n = ctx.dim(V::WPacked, 0);
  addMatmulResult(ctx, ShapedType::isDynamic(n) ? ctx.dim(V::Absmax, 0) : n);
  return success();
}

/// act[..., M, K], qweight[K, N/8], qzeros[K/group_size, N/8],
/// scales[K/group_size, N] -> [..., M, N].
LogicalResult rules::awqMatmul(RuleContext &ctx) {
  using V = AwqMatmulView;
  auto params = ctx.params<AwqMatmulParams>();
  if (failed(ctx.expectSameElementType({V::Act, V::Scales})))
    return failure();
  int64_t group = params.getGroupSize();
  int64_t k = ctx.dim(V::Act, -1);
  if (!ShapedType::isDynamic(k)) {
    if (k % group != 0)
      return ctx.fail("shape rule", "group_size (" + Twine(group) +
                                        ") must divide K (" + Twine(k) + ")");
    if (failed(ctx.expectDimEquals(V::Qweight, 0, k, "K")) ||
        failed(ctx.expectDimEquals(V::Qzeros, 0, k / group,
                                   "K / group_size")) ||
        failed(ctx.expectDimEquals(V::Scales, 0, k / group,
                                   "K / group_size")))
      return failure();
  }
  if (failed(ctx.expectDimsEqual(V::Qzeros, 1, V::Qweight, 1)))
    return failure();
  int64_t n = ctx.dim(V::Scales, 1);
  if (!ShapedType::isDynamic(n)) {
    if (n % 8 != 0)
      return ctx.fail("shape rule",
                      "N (" + Twine(n) + ") must be a multiple of 8");
    if (failed(ctx.expectDimEquals(V::Qweight, 1, n / 8, "N / 8")))
      return failure();
  } else if (!ShapedType::isDynamic(ctx.dim(V::Qweight, 1))) {
    FailureOr<int64_t> columns = ctx.mul(ctx.dim(V::Qweight, 1), 8, "N");
    if (failed(columns))
      return failure();
    n = *columns;
  }
  addMatmulResult(ctx, n);
  return success();
}

/// u, delta [B, L, D], a [D, N], b, c [B, L, N] -> y [B, L, D],
/// last_state [B, D, N].
LogicalResult rules::selectiveScan(RuleContext &ctx) {
  using V = SelectiveScanView;
  if (failed(ctx.expectSameElementType({V::U, V::Delta, V::A, V::B, V::C})) ||
      failed(ctx.expectSameShape(V::U, V::Delta)) ||
      failed(ctx.expectDimsEqual(V::A, 0, V::U, 2)) ||
      failed(ctx.expectSameShape(V::B, V::C)) ||
      failed(ctx.expectDimsEqual(V::B, 0, V::U, 0)) ||
      failed(ctx.expectDimsEqual(V::B, 1, V::U, 1)) ||
      failed(ctx.expectDimsEqual(V::B, 2, V::A, 1)))
    return failure();
  ctx.addResult(ctx.type(V::U));
  ctx.addTensorResult({ctx.dim(V::U, 0), ctx.dim(V::U, 2), ctx.dim(V::A, 1)},
                      ctx.elementType(V::U));
  return success();
}

/// x [B, L, H, P], dt [B, L, H], a [H], b, c [B, L, H, N] -> y [B, L, H, P];
/// chunk_size divides L.
LogicalResult rules::ssdChunkScan(RuleContext &ctx) {
  using V = SsdChunkScanView;
  auto params = ctx.params<SsdChunkScanParams>();
  if (failed(ctx.expectSameElementType({V::X, V::Dt, V::A, V::B, V::C})) ||
      failed(ctx.expectDimsEqual(V::Dt, 0, V::X, 0)) ||
      failed(ctx.expectDimsEqual(V::Dt, 1, V::X, 1)) ||
      failed(ctx.expectDimsEqual(V::Dt, 2, V::X, 2)) ||
      failed(ctx.expectDimsEqual(V::A, 0, V::X, 2)) ||
      failed(ctx.expectSameShape(V::B, V::C)) ||
      failed(ctx.expectDimsEqual(V::B, 0, V::X, 0)) ||
      failed(ctx.expectDimsEqual(V::B, 1, V::X, 1)) ||
      failed(ctx.expectDimsEqual(V::B, 2, V::X, 2)))
    return failure();
  int64_t chunk = params.getChunkSize(), len = ctx.dim(V::X, 1);
  if (!ShapedType::isDynamic(len) && len % chunk != 0)
    return ctx.fail("params rule", "chunk_size (" + Twine(chunk) +
                                       ") must divide the sequence length L (" +
                                       Twine(len) + ")");
  ctx.addResult(ctx.type(V::X));
  return success();
}
