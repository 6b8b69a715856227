//===- GpuPagedAttention.cpp - paged_attn on a GPU ------------------------===//
//
// paged_attn (one query token per sequence against its paged cache) on a
// GPU. A block per (sequence, query head) and, for a block table of more
// than kPartition tokens, per partition of kPartition tokens of it (flash
// decoding: a long context is spread over several blocks, and the scores a
// block keeps stay small), in thread loops:
//
// 1. Scores: T threads (T: a power of two from a warp up to max-threads,
//    no more than the block's tokens need, or its output's columns: the
//    block reductions below need all of its threads) in groups of G lanes
//    (G: the largest power of two up to a warp that divides D / 4; 1 where
//    D is not a multiple of 4); group g takes the block's tokens g, g + T / G,
//    ... before the context length and reads each token's key row (block
//    table[s, t / block_size], slot t % block_size) against the query's,
//    lane c 4 elements from 4 c on, then every 4 G (one 16-byte load of
//    f32 a step: a group reads 4 G consecutive elements at once, where a
//    thread per token read a lane's own row, a float a lane per request).
//    The lanes' dot products are summed over the group by a clustered
//    `gpu.subgroup_reduce` (log2 G shuffles), and the group's k-th score
//    (scaled, soft-capped, ALiBi) is written by its lane k mod G into a
//    row of scores in workgroup memory, at the token's slot. A warp's
//    groups take as many tokens (`shfl.sync` names every lane of the
//    warp): the loop runs over the warp's first group's tokens, each other
//    group the token g mod W after those, and writes no score past the
//    block's tokens. (G = 1: a thread per token, its key read in vectors
//    of up to 8 elements.)
// 2. Numerators (after a barrier): the row's max over the block's live
//    tokens, a block reduction of the T threads' maxima (slots t, t + T,
//    ...); each thread's slots' e = exp(score - max) in place (0 where
//    masked or past the live tokens); their sum, a block reduction. Each
//    exponential is computed once, where a thread per column computed the
//    max and every e of the row itself (Dv times each).
// 3. Output: a thread per output column j: one pass over the block's live
//    tokens that adds up e * v[token, j]. Without partitions o[j] is that
//    over the sum of e (0 when it is not positive, as the decomposition's
//    p); with them the block writes its max, its sum and its unnormalized
//    column sums (two more threads write the max and the sum), and a
//    second kernel, a block per (sequence, query head) and a thread per
//    column, rescales each partition's sums by exp(max_p - max) and
//    divides (FlashDecoding's combine).
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
  /// The scores' threads, the lanes a token (a group's: a power of two
  /// up to a warp), and the slots of the row of scores each thread writes.
  int64_t threads, lanes, each;

  static Split of(int64_t tokens, int64_t d, int64_t dv,
                  int64_t maxThreads) {
    Split split;
    split.tokens = std::min(tokens, kPartition);
    split.partitions = llvm::divideCeil(tokens, split.tokens);
    // Lanes of 4 elements of a key each: the largest power of two up to a
    // warp that divides D / 4 (1 where D is not a multiple of 4).
    split.lanes = d % 4 ? 1 : lanesFor(d / 4);
    // The block's threads: the reductions of the scores need every one of
    // them, so as many as the output's columns need where those need
    // more.
    split.threads =
        std::max(threadsFor(split.tokens * split.lanes, maxThreads),
                 threadsFor(split.columnThreads(dv), maxThreads));
    split.each = llvm::divideCeil(split.tokens, split.threads);
    return split;
  }
  int64_t groups() const { return threads / lanes; }
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
        split(Split::of(shape.tokens, shape.d, shape.dv,
                        options.maxThreads)),
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
  /// The softmax's numerators of the first `n` slots of the row of
  /// scores `row`, e = exp(score - max) (0 for a masked score, and in the
  /// slots from n on), in its place, with the max and the sum of e: each
  /// computed once for the block, by its T threads (block reductions).
  struct Numerators {
    Value row, max, sum;
  };
  Numerators numerators(Value row, Value n);
  /// Over tokens [lo, hi) with their numerators in `row` (token t at t -
  /// lo): the sum of e * v[token, column].
  Value weightedColumn(Value row, Value lo, Value hi, Value column);

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
  int64_t lanes = split.lanes, groups = split.groups();
  // A lane's dot product in steps of 4 elements (16-byte reads of f32)
  // where a key is split over lanes: lane c's are the 4 from 4 c, then
  // every 4 G, so that each step of a group reads 4 G consecutive ones;
  // in steps of up to 8 otherwise.
  int64_t step = lanes > 1 ? 4 : std::gcd(shape.d, kDotStep);
  auto stepType = VectorType::get({step}, f32);
  Value q = paged.getQ(), kc = paged.getKCache(),
        table = paged.getBlockTable();
  Value init = workgroupTensor(b, loc, {split.threads * split.each});
  // Group g (threads g G to g G + G - 1) takes tokens lo + g, lo + g + T /
  // G, ... (its k-th at slot g + k T / G of the row), lane c its columns
  // (above). Every lane has the group's score; lane c writes the k-th for
  // k mod G = c: thread (g, c)'s slots are g + c T / G, then every T.
  return threadSlices(
      b, loc, {split.threads}, init, {split.each}, {split.threads},
      [&](ValueRange ids) -> SmallVector<OpFoldResult> {
        Value g = arith::DivUIOp::create(b, loc, ids[0], index(b, lanes));
        Value c = arith::RemUIOp::create(b, loc, ids[0], index(b, lanes));
        return {arith::AddIOp::create(
                    b, loc, g,
                    arith::MulIOp::create(b, loc, c, index(b, groups)))
                    .getResult()};
      },
      [&](ValueRange ids, Value mine) -> Value {
        Value g = arith::DivUIOp::create(b, loc, ids[0], index(b, lanes));
        Value c = arith::RemUIOp::create(b, loc, ids[0], index(b, lanes));
        Value col = arith::MulIOp::create(b, loc, c, index(b, step));
        // The loop's trips are the same on every lane of a warp (see
        // WarpUniformGroup): group g takes the token (g mod W) after each
        // of its warp's first group's, and writes no score past hi (its
        // key read at hi - 1 instead).
        auto place = WarpUniformGroup::of(b, loc, g, lanes, /*unit=*/1);
        Value inWarp = place.shift;
        Value from = arith::AddIOp::create(b, loc, lo, place.warpStart);
        Value last = arith::SubIOp::create(b, loc, hi, index(b, 1));
        auto loop = scf::ForOp::create(
            b, loc, from, hi, index(b, groups), ValueRange{mine},
            [&](OpBuilder &nb, Location, Value first, ValueRange acc) {
              Value t = arith::AddIOp::create(nb, loc, first, inWarp);
              Value tRead = arith::MinUIOp::create(nb, loc, t, last);
              auto [block, slot] = paged::locate(nb, loc, table, s, tRead,
                                                 shape.blockSize);
              Value zeros = arith::ConstantOp::create(
                  nb, loc, stepType, DenseElementsAttr::get(stepType, 0.0f));
              Value sums =
                  scf::ForOp::create(
                      nb, loc, col, index(nb, shape.d),
                      index(nb, step * lanes), ValueRange{zeros},
                      [&](OpBuilder &ib, Location, Value x0, ValueRange sum) {
                        Value x = paged::readF32(ib, loc, q, {s, h, x0}, step);
                        Value k = paged::readF32(
                            ib, loc, kc, {block, kvHead, slot, x0}, step);
                        scf::YieldOp::create(
                            ib, loc,
                            ValueRange{vector::FMAOp::create(ib, loc, x, k,
                                                             sum[0])});
                      })
                      .getResult(0);
              Value dot = vector::ReductionOp::create(
                  nb, loc, vector::CombiningKind::ADD, sums);
              if (lanes > 1)
                dot = gpu::SubgroupReduceOp::create(
                    nb, loc, dot, gpu::AllReduceOperation::ADD,
                    /*uniform=*/true, static_cast<uint32_t>(lanes));
              Value score =
                  paged::finishScore(nb, loc, paged, dot, slope, len, t);
              // Token t is the group's k-th, k = (t - lo - g) / (T / G);
              // lane k mod G writes it, at k / G of its slots.
              Value k = arith::DivUIOp::create(
                  nb, loc,
                  arith::SubIOp::create(
                      nb, loc, t, arith::AddIOp::create(nb, loc, lo, g)),
                  index(nb, groups));
              Value mineToWrite = arith::AndIOp::create(
                  nb, loc,
                  arith::CmpIOp::create(
                      nb, loc, arith::CmpIPredicate::eq,
                      arith::RemUIOp::create(nb, loc, k, index(nb, lanes)), c),
                  arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ult, t,
                                        hi));
              auto write = scf::IfOp::create(
                  nb, loc, mineToWrite,
                  [&](OpBuilder &tb, Location) {
                    Value at =
                        arith::DivUIOp::create(tb, loc, k, index(tb, lanes));
                    scf::YieldOp::create(
                        tb, loc,
                        ValueRange{tensor::InsertOp::create(
                            tb, loc, score, acc[0], ValueRange{at})});
                  },
                  [&](OpBuilder &eb, Location) {
                    scf::YieldOp::create(eb, loc, acc[0]);
                  });
              scf::YieldOp::create(nb, loc, write.getResults());
            });
        return loop.getResult(0);
      });
}

PagedBuilder::Numerators PagedBuilder::numerators(Value row, Value n) {
  int64_t threads = split.threads, slots = threads * split.each;
  BlockLoops loops(b, loc);
  Value negInf = constant(b, -INFINITY), zero = constant(b, 0.0);
  // The max over the live slots: every thread takes slots t, t + T, ...
  // and the block reduces theirs (a select, not a read, keeps the slots
  // from n on out).
  Value max = loops.onEveryThread(threads, [&](Value t) {
    return loops.blockReduce(
        t, threads, slots, -INFINITY, gpu::AllReduceOperation::MAXIMUMF,
        [&](OpBuilder &nb, Value j, Value acc) -> Value {
          Value live =
              arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ult, j, n);
          Value x = arith::SelectOp::create(
              nb, loc, live, tensor::ExtractOp::create(nb, loc, row, j),
              negInf);
          return arith::MaximumFOp::create(nb, loc, acc, x);
        });
  });
  // Each thread's slots' numerators, in place.
  Value probs = threadSlices(
      b, loc, {threads}, row, {split.each}, {threads},
      [](ValueRange ids) -> SmallVector<OpFoldResult> { return {ids[0]}; },
      [&](ValueRange ids, Value mine) -> Value {
        return scf::ForOp::create(
                   b, loc, index(b, 0), index(b, split.each), index(b, 1),
                   ValueRange{mine},
                   [&](OpBuilder &nb, Location, Value i, ValueRange acc) {
                     Value j = arith::AddIOp::create(
                         nb, loc, ids[0],
                         arith::MulIOp::create(nb, loc, i,
                                               index(nb, threads)));
                     Value x = tensor::ExtractOp::create(nb, loc, acc[0], i);
                     Value kept = arith::AndIOp::create(
                         nb, loc,
                         arith::CmpIOp::create(
                             nb, loc, arith::CmpIPredicate::ult, j, n),
                         // (UNE: a NaN, as the emulator's unwritten
                         // memory reads, is kept, so a read past the
                         // live slots would show.)
                         arith::CmpFOp::create(
                             nb, loc, arith::CmpFPredicate::UNE, x, negInf));
                     Value e = arith::SelectOp::create(
                         nb, loc, kept,
                         math::ExpOp::create(
                             nb, loc, arith::SubFOp::create(nb, loc, x, max)),
                         zero);
                     scf::YieldOp::create(
                         nb, loc,
                         ValueRange{tensor::InsertOp::create(nb, loc, e, acc[0],
                                                             ValueRange{i})});
                   })
            .getResult(0);
      });
  Value sum = loops.onEveryThread(threads, [&](Value t) {
    return loops.blockReduce(
        t, threads, slots, 0.0, gpu::AllReduceOperation::ADD,
        [&](OpBuilder &nb, Value j, Value acc) -> Value {
          return arith::AddFOp::create(
              nb, loc, acc, tensor::ExtractOp::create(nb, loc, probs, j));
        });
  });
  return {probs, max, sum};
}

Value PagedBuilder::weightedColumn(Value row, Value lo, Value hi,
                                   Value column) {
  Value vc = paged.getVCache(), table = paged.getBlockTable();
  return scf::ForOp::create(
             b, loc, lo, hi, index(b, 1), ValueRange{constant(b, 0.0)},
             [&](OpBuilder &nb, Location, Value t, ValueRange acc) {
               Value e = tensor::ExtractOp::create(
                   nb, loc, row,
                   ValueRange{arith::SubIOp::create(nb, loc, t, lo)});
               auto [block, slot] =
                   paged::locate(nb, loc, table, s, t, shape.blockSize);
               Value v = tensor::ExtractOp::create(
                   nb, loc, vc, ValueRange{block, kvHead, slot, column});
               if (!v.getType().isF32())
                 v = arith::ExtFOp::create(nb, loc, f32, v);
               scf::YieldOp::create(
                   nb, loc, ValueRange{math::FmaOp::create(nb, loc, e, v,
                                                           acc[0])});
             })
      .getResult(0);
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
    Value lo = index(b, 0);
    Numerators e = numerators(scores(lo, live), live);
    SmallVector<OpFoldResult> at = {s, h, zero};
    Value o = columnLoop(blocks.getRegionIterArgs()[0], at, dv,
                         [&](Value j) {
                           return divide(weightedColumn(e.row, lo, live, j),
                                         e.sum);
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
  // The partition's live tokens (none where it starts past the context).
  Value n = arith::SubIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, hi, lo), lo);
  Numerators e = numerators(scores(lo, hi), n);
  SmallVector<OpFoldResult> at = {s, h, p, zero};
  Value lastColumn = index(b, dv - 1);
  Value partial = columnLoop(
      blocks.getRegionIterArgs()[0], at, dv + 2, [&](Value j) -> Value {
        // Threads dv and dv + 1 read the last column too, and write the
        // max and the sum.
        Value column = arith::MinUIOp::create(b, loc, j, lastColumn);
        Value sum = weightedColumn(e.row, lo, hi, column);
        Value isSum = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            j, index(b, dv));
        Value isMax = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            j, index(b, dv));
        return arith::SelectOp::create(
            b, loc, isSum, sum,
            arith::SelectOp::create(b, loc, isMax, e.max, e.sum));
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
  Split split =
      Split::of(shape.tokens, shape.d, shape.dv, options.maxThreads);
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
