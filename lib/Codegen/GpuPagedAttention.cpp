//===- GpuPagedAttention.cpp - paged_attn on a GPU ------------------------===//
//
// paged_attn (one query token per sequence against its paged cache) on a
// GPU. A block per (sequence, query head) and, for a block table of more
// than kPartition tokens, per partition of kPartition tokens of it (flash
// decoding: a long context is spread over several blocks, and the scores a
// block keeps stay small), in two thread loops:
//
// 1. Scores: T threads (T: a power of two from a warp up to max-threads,
//    no more than the block's tokens need); thread i takes the block's
//    tokens i, i + T, ... before the context length, reads the token's key
//    row (block table[s, t / block_size], slot t % block_size) in vectors
//    of up to 8 elements against the query's, and writes the finished
//    score (scaled, soft-capped, ALiBi) into a row of scores in workgroup
//    memory. A warp reads the key rows of consecutive tokens and writes
//    consecutive slots.
// 2. Output: a thread per output column j (after a barrier): the row's
//    maximum from workgroup memory, then one pass over the block's live
//    tokens that adds up e = exp(score - max) and e * v[token, j]. Without
//    partitions o[j] is their ratio (0 when the sum is not positive, as the
//    decomposition's p); with them the block writes its max, its sum and
//    its unnormalized column sums (two more threads write the max and the
//    sum), and a second kernel, a block per (sequence, query head) and a
//    thread per column, rescales each partition's sums by
//    exp(max_p - max) and divides (FlashDecoding's combine).
//
// A warp reads consecutive elements of each value row. Each key and value
// element is read from global memory once per query head; the only
// intermediates are a block's row of scores in workgroup memory and, with
// partitions, Dv + 2 floats per partition. The decomposition gathers every
// cache element through a tensor.extract over all max_blocks * block_size
// tokens in a kernel per loop nest. f16 and bf16 compute in f32.
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
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fuel;

namespace {
/// Tokens of a block table a block takes at most; a longer table is split
/// into partitions of this many, a block each (2 KiB of scores).
constexpr int64_t kPartition = 512;
/// Elements per step of a score's dot product (at most).
constexpr int64_t kDotStep = 8;

/// How the table's tokens are spread over blocks and threads.
struct Split {
  /// Tokens per block (the table's, or kPartition) and blocks per
  /// (sequence, query head).
  int64_t tokens, partitions;
  /// The scores' threads and the tokens each takes.
  int64_t threads, each;

  static Split of(int64_t tokens, int64_t maxThreads) {
    Split split;
    split.tokens = std::min(tokens, kPartition);
    split.partitions = llvm::divideCeil(tokens, split.tokens);
    split.threads = threadsFor(split.tokens, maxThreads);
    split.each = llvm::divideCeil(split.tokens, split.threads);
    return split;
  }
  bool partitioned() const { return partitions > 1; }
  /// Threads of the output loop: a column each, and with partitions two
  /// more for the block's max and sum.
  int64_t columnThreads(int64_t dv) const {
    return dv + (partitioned() ? 2 : 0);
  }
};

/// Builds the loops of one paged_attn op.
class PagedBuilder {
public:
  PagedBuilder(RewriterBase &rewriter, FusedOp op,
               const GpuScheduleOptions &options)
      : b(rewriter), loc(op.getLoc()), paged(op),
        shape(paged::PagedShape::of(paged)),
        split(Split::of(shape.tokens, options.maxThreads)),
        f32(rewriter.getF32Type()) {}

  /// Replaces the op.
  void build();

private:
  Value index(OpBuilder &at, int64_t v) {
    return arith::ConstantIndexOp::create(at, loc, v);
  }
  Value constant(OpBuilder &at, double v) {
    return arith::ConstantOp::create(at, loc, f32,
                                     at.getF32FloatAttr(static_cast<float>(v)));
  }
  /// A forall over `sizes` on blocks writing `init`; sets the insertion
  /// point into its body.
  scf::ForallOp blockLoop(ArrayRef<int64_t> sizes, Value init);
  /// Inserts `row` into the block loop's output at `offsets` (a row of its
  /// last dim) and returns the loop's result.
  Value finishBlock(scf::ForallOp loop, Value row,
                    ArrayRef<OpFoldResult> offsets);
  /// A thread per element of the last dim of `out` (a slice at `offsets`),
  /// writing `column(j)`.
  Value columnLoop(Value out, ArrayRef<OpFoldResult> offsets, int64_t trips,
                   function_ref<Value(Value j)> column);
  /// The (sequence, head) block's values: its context length, live tokens,
  /// kv head and ALiBi slope.
  void enterHead(Value s, Value h);
  /// The scores of tokens [lo, hi) in a row of workgroup memory, token t at
  /// t - lo.
  Value scores(Value lo, Value hi);
  /// Over tokens [lo, hi) with their scores in `row`: the max, the sum of
  /// e = exp(score - max), and the sum of e * v[token, column].
  std::array<Value, 3> softmaxColumn(Value row, Value lo, Value hi,
                                     Value column);

  RewriterBase &b;
  Location loc;
  PagedAttnView paged;
  paged::PagedShape shape;
  Split split;
  Type f32;
  // The current block's.
  Value s, h, len, live, kvHead, slope;
};
} // namespace

scf::ForallOp PagedBuilder::blockLoop(ArrayRef<int64_t> sizes, Value init) {
  auto loop = scf::ForallOp::create(b, loc, getAsIndexOpFoldResult(
                                                b.getContext(), sizes),
                                    ValueRange{init}, std::nullopt);
  mapForall(b, loop, /*threads=*/false);
  b.setInsertionPointToStart(loop.getBody());
  return loop;
}

Value PagedBuilder::finishBlock(scf::ForallOp loop, Value row,
                                ArrayRef<OpFoldResult> offsets) {
  auto type = cast<RankedTensorType>(loop.getResult(0).getType());
  SmallVector<OpFoldResult> sizes(type.getRank(), b.getIndexAttr(1));
  sizes.back() = b.getIndexAttr(type.getShape().back());
  b.setInsertionPointToStart(loop.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(
      b, loc, row, loop.getRegionIterArgs()[0], offsets, sizes,
      SmallVector<OpFoldResult>(type.getRank(), b.getIndexAttr(1)));
  b.setInsertionPointAfter(loop);
  return loop.getResult(0);
}

Value PagedBuilder::columnLoop(Value out, ArrayRef<OpFoldResult> offsets,
                               int64_t trips,
                               function_ref<Value(Value j)> column) {
  auto type = cast<RankedTensorType>(out.getType());
  int64_t width = type.getShape().back();
  SmallVector<OpFoldResult> sizes(type.getRank(), b.getIndexAttr(1));
  sizes.back() = b.getIndexAttr(width);
  Value row = tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({width}, type.getElementType()), out,
      offsets, sizes,
      SmallVector<OpFoldResult>(type.getRank(), b.getIndexAttr(1)));
  return threadSlices(
      b, loc, {trips}, row, {1}, {1},
      [](ValueRange ids) -> SmallVector<OpFoldResult> { return {ids[0]}; },
      [&](ValueRange ids, Value mine) -> Value {
        return tensor::InsertOp::create(b, loc, column(ids[0]), mine,
                                        ValueRange{index(b, 0)});
      });
}

void PagedBuilder::enterHead(Value seq, Value head) {
  s = seq;
  h = head;
  len = paged::contextLength(b, loc, paged.getContextLens(), s);
  live = paged::liveTokens(b, loc, len, shape.tokens);
  kvHead = arith::DivUIOp::create(b, loc, h, index(b, shape.group));
  slope = Value();
  if (std::optional<Value> alibi = paged.getAlibi())
    slope = tensor::ExtractOp::create(b, loc, *alibi, ValueRange{h});
}

Value PagedBuilder::scores(Value lo, Value hi) {
  int64_t step = std::gcd(shape.d, kDotStep);
  auto stepType = VectorType::get({step}, f32);
  Value q = paged.getQ(), kc = paged.getKCache(),
        table = paged.getBlockTable();
  Value init = workgroupTensor(b, loc, {split.threads * split.each});
  // Thread i's tokens lo + i, lo + i + T, ... at i, i + T, ... of the row.
  return threadSlices(
      b, loc, {split.threads}, init, {split.each}, {split.threads},
      [](ValueRange ids) -> SmallVector<OpFoldResult> { return {ids[0]}; },
      [&](ValueRange ids, Value mine) -> Value {
        Value i = ids[0];
        Value from = arith::AddIOp::create(b, loc, lo, i);
        auto loop = scf::ForOp::create(
            b, loc, from, hi, index(b, split.threads), ValueRange{mine},
            [&](OpBuilder &nb, Location, Value t, ValueRange acc) {
              auto [block, slot] = paged::locate(nb, loc, table, s, t,
                                                 shape.blockSize);
              Value zeros = arith::ConstantOp::create(
                  nb, loc, stepType, DenseElementsAttr::get(stepType, 0.0f));
              Value sums =
                  scf::ForOp::create(
                      nb, loc, index(nb, 0), index(nb, shape.d),
                      index(nb, step), ValueRange{zeros},
                      [&](OpBuilder &ib, Location, Value c, ValueRange sum) {
                        Value x = paged::readF32(ib, loc, q, {s, h, c}, step);
                        Value k = paged::readF32(
                            ib, loc, kc, {block, kvHead, slot, c}, step);
                        scf::YieldOp::create(
                            ib, loc,
                            ValueRange{vector::FMAOp::create(ib, loc, x, k,
                                                             sum[0])});
                      })
                      .getResult(0);
              Value dot = vector::ReductionOp::create(
                  nb, loc, vector::CombiningKind::ADD, sums);
              Value score =
                  paged::finishScore(nb, loc, paged, dot, slope, len, t);
              // Token t is the ((t - lo - i) / T)-th of this thread's.
              Value at = arith::DivUIOp::create(
                  nb, loc, arith::SubIOp::create(nb, loc, t, from),
                  index(nb, split.threads));
              scf::YieldOp::create(
                  nb, loc,
                  ValueRange{tensor::InsertOp::create(nb, loc, score, acc[0],
                                                      ValueRange{at})});
            });
        return loop.getResult(0);
      });
}

std::array<Value, 3> PagedBuilder::softmaxColumn(Value row, Value lo,
                                                 Value hi, Value column) {
  Value vc = paged.getVCache(), table = paged.getBlockTable();
  auto score = [&](OpBuilder &at, Value t) -> Value {
    return tensor::ExtractOp::create(
        at, loc, row, ValueRange{arith::SubIOp::create(at, loc, t, lo)});
  };
  Value max =
      scf::ForOp::create(
          b, loc, lo, hi, index(b, 1), ValueRange{constant(b, -INFINITY)},
          [&](OpBuilder &nb, Location, Value t, ValueRange acc) {
            scf::YieldOp::create(
                nb, loc,
                ValueRange{arith::MaximumFOp::create(nb, loc, acc[0],
                                                     score(nb, t))});
          })
          .getResult(0);
  ValueRange sums =
      scf::ForOp::create(
          b, loc, lo, hi, index(b, 1),
          ValueRange{constant(b, 0.0), constant(b, 0.0)},
          [&](OpBuilder &nb, Location, Value t, ValueRange acc) {
            Value x = score(nb, t);
            Value masked = arith::CmpFOp::create(
                nb, loc, arith::CmpFPredicate::OEQ, x, constant(nb, -INFINITY));
            Value e = arith::SelectOp::create(
                nb, loc, masked, constant(nb, 0.0),
                math::ExpOp::create(nb, loc,
                                    arith::SubFOp::create(nb, loc, x, max)));
            auto [block, slot] =
                paged::locate(nb, loc, table, s, t, shape.blockSize);
            Value v = tensor::ExtractOp::create(
                nb, loc, vc, ValueRange{block, kvHead, slot, column});
            if (!v.getType().isF32())
              v = arith::ExtFOp::create(nb, loc, f32, v);
            scf::YieldOp::create(
                nb, loc,
                ValueRange{arith::AddFOp::create(nb, loc, acc[0], e),
                           math::FmaOp::create(nb, loc, e, v, acc[1])});
          })
          .getResults();
  return {max, sums[0], sums[1]};
}

void PagedBuilder::build() {
  FusedOp op = paged.getOperation();
  b.setInsertionPoint(op);
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());
  Type elt = outType.getElementType();
  int64_t seqs = outType.getDimSize(0), dv = shape.dv;
  OpFoldResult zero = b.getIndexAttr(0);
  // o = sum / l where l is positive, 0 otherwise, in the result's type.
  auto divide = [&](Value sum, Value l) -> Value {
    Value positive = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                           l, constant(b, 0.0));
    Value o = arith::SelectOp::create(
        b, loc, positive, arith::DivFOp::create(b, loc, sum, l),
        constant(b, 0.0));
    return elt == f32 ? o : arith::TruncFOp::create(b, loc, elt, o);
  };
  Value empty = tensor::EmptyOp::create(b, loc, outType.getShape(), elt);

  if (!split.partitioned()) {
    scf::ForallOp blocks = blockLoop({seqs, shape.heads}, empty);
    enterHead(blocks.getInductionVar(0), blocks.getInductionVar(1));
    Value lo = index(b, 0), row = scores(lo, live);
    SmallVector<OpFoldResult> at = {s, h, zero};
    Value o = columnLoop(blocks.getRegionIterArgs()[0], at, dv,
                         [&](Value j) {
                           auto [max, l, sum] =
                               softmaxColumn(row, lo, live, j);
                           return divide(sum, l);
                         });
    b.replaceOp(op, finishBlock(blocks, o, at));
    return;
  }

  // Each partition's column sums, then its max and its sum of e.
  int64_t parts = split.partitions;
  Value partialsInit = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{seqs, shape.heads, parts, dv + 2}, f32);
  scf::ForallOp blocks = blockLoop({seqs, shape.heads, parts}, partialsInit);
  enterHead(blocks.getInductionVar(0), blocks.getInductionVar(1));
  Value p = blocks.getInductionVar(2);
  Value lo = arith::MulIOp::create(b, loc, p, index(b, split.tokens));
  Value hi = arith::MinSIOp::create(
      b, loc, live, arith::AddIOp::create(b, loc, lo, index(b, split.tokens)));
  Value row = scores(lo, hi);
  SmallVector<OpFoldResult> at = {s, h, p, zero};
  Value lastColumn = index(b, dv - 1);
  Value partial = columnLoop(
      blocks.getRegionIterArgs()[0], at, dv + 2, [&](Value j) -> Value {
        // Threads dv and dv + 1 read the last column too, and write the
        // max and the sum.
        Value column = arith::MinUIOp::create(b, loc, j, lastColumn);
        auto [max, l, sum] = softmaxColumn(row, lo, hi, column);
        Value isSum = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            j, index(b, dv));
        Value isMax = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            j, index(b, dv));
        return arith::SelectOp::create(
            b, loc, isSum, sum, arith::SelectOp::create(b, loc, isMax, max, l));
      });
  Value partials = finishBlock(blocks, partial, at);

  // The combine: o = sum_p w_p sum_p[j] / sum_p w_p l_p, with
  // w_p = exp(max_p - max), 0 for a partition without tokens.
  scf::ForallOp heads = blockLoop({seqs, shape.heads}, empty);
  Value seq = heads.getInductionVar(0), head = heads.getInductionVar(1);
  SmallVector<OpFoldResult> outAt = {seq, head, zero};
  Value o = columnLoop(
      heads.getRegionIterArgs()[0], outAt, dv, [&](Value j) -> Value {
        auto read = [&](OpBuilder &at, Value part, Value column) -> Value {
          return tensor::ExtractOp::create(at, loc, partials,
                                           ValueRange{seq, head, part, column});
        };
        Value maxAt = index(b, dv), sumAt = index(b, dv + 1);
        Value max =
            scf::ForOp::create(
                b, loc, index(b, 0), index(b, parts), index(b, 1),
                ValueRange{constant(b, -INFINITY)},
                [&](OpBuilder &nb, Location, Value q, ValueRange acc) {
                  scf::YieldOp::create(
                      nb, loc,
                      ValueRange{arith::MaximumFOp::create(
                          nb, loc, acc[0], read(nb, q, maxAt))});
                })
                .getResult(0);
        ValueRange sums =
            scf::ForOp::create(
                b, loc, index(b, 0), index(b, parts), index(b, 1),
                ValueRange{constant(b, 0.0), constant(b, 0.0)},
                [&](OpBuilder &nb, Location, Value q, ValueRange acc) {
                  Value m = read(nb, q, maxAt);
                  Value none = arith::CmpFOp::create(
                      nb, loc, arith::CmpFPredicate::OEQ, m,
                      constant(nb, -INFINITY));
                  Value w = arith::SelectOp::create(
                      nb, loc, none, constant(nb, 0.0),
                      math::ExpOp::create(
                          nb, loc, arith::SubFOp::create(nb, loc, m, max)));
                  scf::YieldOp::create(
                      nb, loc,
                      ValueRange{math::FmaOp::create(nb, loc, w,
                                                     read(nb, q, sumAt),
                                                     acc[0]),
                                 math::FmaOp::create(nb, loc, w,
                                                     read(nb, q, j),
                                                     acc[1])});
                })
                .getResults();
        return divide(sums[1], sums[0]);
      });
  b.replaceOp(op, finishBlock(heads, o, outAt));
}

LogicalResult mlir::fuel::canScheduleGpuPagedAttention(
    FusedOp op, const GpuScheduleOptions &options, std::string &why) {
  if (failed(canSchedulePagedAttention(op, ScheduleOptions{}, why)))
    return failure();
  PagedAttnView paged(op);
  paged::PagedShape shape = paged::PagedShape::of(paged);
  Split split = Split::of(shape.tokens, options.maxThreads);
  int64_t columns = split.columnThreads(shape.dv);
  if (columns > options.maxThreads) {
    why = "the output needs " + std::to_string(columns) +
          " threads (a column each" +
          (split.partitioned() ? ", and two for a partition's max and sum"
                               : "") +
          "), more than max-threads (" + std::to_string(options.maxThreads) +
          ")";
    return failure();
  }
  int64_t seqs =
      cast<RankedTensorType>(paged.getQ().getType()).getDimSize(0);
  if (seqs > 65535 || shape.heads > 65535) {
    why = "more than 65,535 sequences or query heads (the grid's z and y)";
    return failure();
  }
  return success();
}

LogicalResult
mlir::fuel::buildGpuPagedAttention(RewriterBase &rewriter, FusedOp op,
                                   const GpuScheduleOptions &options) {
  PagedBuilder(rewriter, op, options).build();
  return success();
}
