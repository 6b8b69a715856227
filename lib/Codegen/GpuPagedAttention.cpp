//===- GpuPagedAttention.cpp - paged_attn on a GPU ------------------------===//
//
// paged_attn (one query token per sequence against its paged cache) on a
// GPU: a block per (sequence, query head), on (y, x), in two thread loops.
//
// 1. Scores: T threads (T: a power of two from a warp up to max-threads,
//    no more than the table's tokens need); thread i takes tokens i, i + T,
//    i + 2T, ... before the context length, reads the token's key row (block
//    table[s, t / block_size], slot t % block_size) in vectors of up to 8
//    elements against the query's, and writes the finished score (scaled,
//    soft-capped, ALiBi) into a row of scores in workgroup memory. A warp
//    reads the key rows of consecutive tokens and writes consecutive slots.
// 2. Output: a thread per output column j (Dv of them, after a barrier):
//    the row's maximum from workgroup memory, then one pass over the live
//    tokens that adds up e = exp(score - max) and e * v[token, j], and o[j]
//    is their ratio (0 when the sum is not positive, as the decomposition's
//    p). A warp reads consecutive elements of each value row.
//
// Each key and value element is read from global memory once per query
// head; the only intermediate is the row of scores in workgroup memory,
// 4 bytes a token of the table (so the table's tokens are bounded:
// canScheduleGpuPagedAttention). The decomposition gathers every cache
// element through a tensor.extract over all max_blocks * block_size tokens
// in a kernel per loop nest. f16 and bf16 compute in f32.
//
//===----------------------------------------------------------------------===//

#include "Attention.h"
#include "GpuBlockLoops.h"
#include "GpuSchedules.h"

#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fuel;

namespace {
/// Workgroup memory a block may take without opting in (NVIDIA's static
/// limit; AMD's LDS is 64 KiB).
constexpr int64_t kWorkgroupBytes = 48 * 1024;
/// Elements per step of a score's dot product (at most).
constexpr int64_t kDotStep = 8;

/// The scores' threads for a table of `tokens` and the tokens each takes.
std::pair<int64_t, int64_t> scoreThreads(int64_t tokens, int64_t maxThreads) {
  int64_t threads = threadsFor(tokens, maxThreads);
  return {threads, llvm::divideCeil(tokens, threads)};
}
} // namespace

LogicalResult mlir::fuel::canScheduleGpuPagedAttention(
    FusedOp op, const GpuScheduleOptions &options, std::string &why) {
  if (failed(canSchedulePagedAttention(op, ScheduleOptions{}, why)))
    return failure();
  PagedAttnView paged(op);
  paged::PagedShape shape = paged::PagedShape::of(paged);
  if (shape.dv > options.maxThreads) {
    why = "the value rows (" + std::to_string(shape.dv) +
          " columns, a thread each) are more than max-threads (" +
          std::to_string(options.maxThreads) + ")";
    return failure();
  }
  auto [threads, each] = scoreThreads(shape.tokens, options.maxThreads);
  int64_t bytes = threads * each * 4;
  if (bytes > kWorkgroupBytes) {
    why = "the block table's " + std::to_string(shape.tokens) +
          " tokens need " + std::to_string(bytes) +
          " bytes of scores in workgroup memory, more than " +
          std::to_string(kWorkgroupBytes);
    return failure();
  }
  int64_t seqs =
      cast<RankedTensorType>(paged.getQ().getType()).getDimSize(0);
  if (seqs > 65535) {
    why = "more than 65,535 sequences (the grid's y)";
    return failure();
  }
  return success();
}

LogicalResult
mlir::fuel::buildGpuPagedAttention(RewriterBase &rewriter, FusedOp op,
                                   const GpuScheduleOptions &options) {
  PagedAttnView paged(op);
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value q = paged.getQ(), kc = paged.getKCache(), vc = paged.getVCache(),
        table = paged.getBlockTable(), lens = paged.getContextLens();
  std::optional<Value> alibi = paged.getAlibi();
  paged::PagedShape shape = paged::PagedShape::of(paged);
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());
  Type elt = outType.getElementType(), f32 = rewriter.getF32Type();
  auto [threads, each] = scoreThreads(shape.tokens, options.maxThreads);
  int64_t step = std::gcd(shape.d, kDotStep);
  auto stepType = VectorType::get({step}, f32);
  auto index = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto f32Const = [&](OpBuilder &b, double v) -> Value {
    return arith::ConstantOp::create(b, loc, f32,
                                     b.getF32FloatAttr(static_cast<float>(v)));
  };

  Value empty =
      tensor::EmptyOp::create(rewriter, loc, outType.getShape(), elt);
  auto blocks = scf::ForallOp::create(
      rewriter, loc,
      ArrayRef<OpFoldResult>{rewriter.getIndexAttr(outType.getDimSize(0)),
                             rewriter.getIndexAttr(shape.heads)},
      ValueRange{empty}, std::nullopt);
  mapForall(rewriter, blocks, /*threads=*/false);
  rewriter.setInsertionPointToStart(blocks.getBody());
  Value s = blocks.getInductionVar(0), h = blocks.getInductionVar(1);
  Value out = blocks.getRegionIterArgs()[0];
  Value len = paged::contextLength(rewriter, loc, lens, s);
  Value live = paged::liveTokens(rewriter, loc, len, shape.tokens);
  Value kvHead =
      arith::DivUIOp::create(rewriter, loc, h, index(rewriter, shape.group));
  Value slope;
  if (alibi)
    slope = tensor::ExtractOp::create(rewriter, loc, *alibi, ValueRange{h});

  // 1. The scores, thread i's tokens i, i + T, ... at the same places of a
  // row in workgroup memory.
  auto scoresType = RankedTensorType::get({threads * each}, f32);
  Value scoresInit = bufferization::AllocTensorOp::create(
      rewriter, loc, scoresType, ValueRange{}, /*copy=*/Value(),
      /*size_hint=*/Value(),
      gpu::AddressSpaceAttr::get(rewriter.getContext(),
                                 gpu::AddressSpace::Workgroup));
  auto first = [](ValueRange ids) -> SmallVector<OpFoldResult> {
    return {ids[0]};
  };
  Value scores = threadSlices(
      rewriter, loc, {threads}, scoresInit, {each}, {threads}, first,
      [&](ValueRange ids, Value mine) -> Value {
        Value i = ids[0];
        return scf::ForOp::create(
                   rewriter, loc, i, live, index(rewriter, threads),
                   ValueRange{mine},
                   [&](OpBuilder &b, Location, Value t, ValueRange acc) {
                     auto [block, slot] =
                         paged::locate(b, loc, table, s, t, shape.blockSize);
                     Value zeros = arith::ConstantOp::create(
                         b, loc, stepType,
                         DenseElementsAttr::get(stepType, 0.0f));
                     Value sums =
                         scf::ForOp::create(
                             b, loc, index(b, 0), index(b, shape.d),
                             index(b, step), ValueRange{zeros},
                             [&](OpBuilder &b, Location, Value c,
                                 ValueRange acc) {
                               Value x = paged::readF32(b, loc, q, {s, h, c},
                                                        step);
                               Value k = paged::readF32(
                                   b, loc, kc, {block, kvHead, slot, c}, step);
                               scf::YieldOp::create(
                                   b, loc,
                                   ValueRange{vector::FMAOp::create(
                                       b, loc, x, k, acc[0])});
                             })
                             .getResult(0);
                     Value dot = vector::ReductionOp::create(
                         b, loc, vector::CombiningKind::ADD, sums);
                     Value score =
                         paged::finishScore(b, loc, paged, dot, slope, len, t);
                     // Token t is the ((t - i) / T)-th of this thread's.
                     Value at = arith::DivUIOp::create(
                         b, loc, arith::SubIOp::create(b, loc, t, i),
                         index(b, threads));
                     scf::YieldOp::create(
                         b, loc,
                         ValueRange{tensor::InsertOp::create(
                             b, loc, score, acc[0], ValueRange{at})});
                   })
            .getResult(0);
      });

  // 2. The output row, a thread per column.
  auto one = rewriter.getIndexAttr(1), zero = rewriter.getIndexAttr(0);
  auto rowType = RankedTensorType::get({shape.dv}, elt);
  SmallVector<OpFoldResult> rowOffsets = {s, h, zero},
                            rowSizes = {one, one,
                                        rewriter.getIndexAttr(shape.dv)},
                            rowStrides = {one, one, one};
  Value rowInit = tensor::ExtractSliceOp::create(
      rewriter, loc, rowType, out, rowOffsets, rowSizes, rowStrides);
  Value row = threadSlices(
      rewriter, loc, {shape.dv}, rowInit, {1}, {1}, first,
      [&](ValueRange ids, Value mine) -> Value {
        Value j = ids[0];
        auto score = [&](OpBuilder &b, Value t) -> Value {
          return tensor::ExtractOp::create(b, loc, scores, ValueRange{t});
        };
        Value max =
            scf::ForOp::create(
                rewriter, loc, index(rewriter, 0), live, index(rewriter, 1),
                ValueRange{f32Const(rewriter, -INFINITY)},
                [&](OpBuilder &b, Location, Value t, ValueRange acc) {
                  scf::YieldOp::create(
                      b, loc,
                      ValueRange{arith::MaximumFOp::create(b, loc, acc[0],
                                                           score(b, t))});
                })
                .getResult(0);
        ValueRange sums =
            scf::ForOp::create(
                rewriter, loc, index(rewriter, 0), live, index(rewriter, 1),
                ValueRange{f32Const(rewriter, 0.0), f32Const(rewriter, 0.0)},
                [&](OpBuilder &b, Location, Value t, ValueRange acc) {
                  Value x = score(b, t);
                  Value masked = arith::CmpFOp::create(
                      b, loc, arith::CmpFPredicate::OEQ, x,
                      f32Const(b, -INFINITY));
                  Value e = arith::SelectOp::create(
                      b, loc, masked, f32Const(b, 0.0),
                      math::ExpOp::create(
                          b, loc, arith::SubFOp::create(b, loc, x, max)));
                  auto [block, slot] =
                      paged::locate(b, loc, table, s, t, shape.blockSize);
                  Value v = tensor::ExtractOp::create(
                      b, loc, vc, ValueRange{block, kvHead, slot, j});
                  if (!v.getType().isF32())
                    v = arith::ExtFOp::create(b, loc, f32, v);
                  scf::YieldOp::create(
                      b, loc,
                      ValueRange{arith::AddFOp::create(b, loc, acc[0], e),
                                 math::FmaOp::create(b, loc, e, v, acc[1])});
                })
                .getResults();
        Value positive = arith::CmpFOp::create(
            rewriter, loc, arith::CmpFPredicate::OGT, sums[0],
            f32Const(rewriter, 0.0));
        Value o = arith::SelectOp::create(
            rewriter, loc, positive,
            arith::DivFOp::create(rewriter, loc, sums[1], sums[0]),
            f32Const(rewriter, 0.0));
        if (elt != f32)
          o = arith::TruncFOp::create(rewriter, loc, elt, o);
        return tensor::InsertOp::create(rewriter, loc, o, mine,
                                        ValueRange{index(rewriter, 0)});
      });

  rewriter.setInsertionPointToStart(blocks.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(rewriter, loc, row, out, rowOffsets,
                                        rowSizes, rowStrides);
  rewriter.replaceOp(op, blocks->getResults());
  return success();
}
