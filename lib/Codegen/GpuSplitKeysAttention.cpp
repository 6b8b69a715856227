//===- GpuSplitKeysAttention.cpp - Few queries, their keys split ----------===//
//
// flash_attn's GPU form for few query rows (decoding: a query or a few
// against a long cache): the other forms give each query row one thread
// (GpuAttention.cpp, GpuStagedAttention.cpp), so with fewer than 32 rows a
// block of a few threads walks every key alone, one step of 16 after the
// other. Here a block per (batch, head, query row) spreads the row's keys
// over T threads (a power of two from a warp to 128, no more than the
// row's steps of 16 keys need), in two thread loops:
//
// 1. Partials: thread t takes the row's key blocks t, t + T, ... of 16 keys
//    (those the row sees: causal and windowed attention visit fewer) and
//    runs the online softmax of Attention.cpp over them in registers: its
//    max m_t, its sum l_t and its accumulator row acc_t (Dv). It reads its
//    keys and values, a row of D or Dv elements each, from global memory
//    (consecutive elements: vector loads), and writes m_t, l_t and acc_t
//    into workgroup memory. A last block that would run past Sk is read
//    from Sk - 16 on, the keys before its start masked.
// 2. Combine (after a barrier): a thread per column of the output row
//    (columns g, g + G, ... with G threads where Dv is wider than the
//    block) computes M = max_t m_t, the weights w_t = exp(m_t - M) (0 for
//    a thread that saw no key), and o = sum_t w_t acc_t / sum_t w_t l_t
//    (0 when no key is visible): the combine of FlashDecoding. A warp
//    reads consecutive columns of a row of the partials (rows padded by
//    one element, so that the writes of step 1, a row per thread, fall in
//    distinct banks too).
//
// Each thread's state is the thread-per-row form's (GpuAttention.cpp):
// the query row, 16 scores and an accumulator row; the partials take
// T * (Dv + 3) floats of workgroup memory. No [Sq, Sk] score tensor
// exists; no operand is copied or transposed first.
//
//===----------------------------------------------------------------------===//

#include "AttentionBlocks.h"
#include "Contraction.h"
#include "GpuBlockLoops.h"
#include "GpuSchedules.h"
#include "GpuStagedRows.h"
#include "ScheduleUtils.h"

#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fuel;
using namespace mlir::fuel::attention;

namespace {
/// Keys per step of a thread.
constexpr int64_t kStep = 16;
/// Keys a row needs at least: with fewer a thread per row takes as few
/// steps as a split would take.
constexpr int64_t kMinKeys = 64;
/// Threads per block at most.
constexpr int64_t kMaxThreads = 128;
/// The widest heads: a thread's state is the thread-per-row form's, which
/// takes all of sm_80's registers at 128.
constexpr int64_t kMaxHeadDim = 128;
/// Workgroup memory the partials take at most (the static limit).
constexpr int64_t kMaxSharedBytes = 48 * 1024;

/// The split form's shapes.
struct SplitShape {
  /// Query blocks of one row, key blocks of kStep.
  AttnShape s;
  /// Threads of the partials loop, and of the combine loop.
  int64_t threads, columns;
};
} // namespace

static std::optional<SplitShape>
splitShape(FusedOp op, const GpuScheduleOptions &options) {
  if (!FlashAttnView::match(op) || !hasStaticFloatShapes(op))
    return std::nullopt;
  FlashAttnView attn(op);
  SplitShape split{AttnShape::of(attn), 0, 0};
  AttnShape &s = split.s;
  if (s.sq >= kMinStagedRows || s.sk < kMinKeys || s.d % 16 || s.dv % 16 ||
      std::max(s.d, s.dv) > kMaxHeadDim || s.batch > 65535 ||
      s.heads > 65535)
    return std::nullopt;
  s.blockQ = 1;
  s.sqP = s.sq;
  s.blockK = kStep;
  s.skP = roundUp(s.sk, kStep);
  // A power of two, for the partials' memory too.
  int64_t most = std::min(options.maxThreads, kMaxThreads);
  while (most * (s.dv + 3) * 4 > kMaxSharedBytes)
    most /= 2;
  if (most < 32)
    return std::nullopt;
  split.threads = threadsFor(s.skP / kStep, most);
  split.columns = std::min(split.threads, s.dv);
  while (s.dv % split.columns)
    split.columns /= 2;
  return split;
}

bool mlir::fuel::canSplitGpuAttentionKeys(FusedOp op,
                                          const GpuScheduleOptions &options) {
  return splitShape(op, options).has_value();
}

namespace {
/// Builds the split form of one flash_attn.
class SplitBuilder {
public:
  SplitBuilder(RewriterBase &b, FusedOp op, const SplitShape &split)
      : b(b), loc(op.getLoc()), op(op), attn(op), split(split), s(split.s),
        bb{b, loc}, f32(b.getF32Type()) {}

  Value build();

private:
  /// A new tensor of `shape` f32 in workgroup memory.
  Value workgroup(ArrayRef<int64_t> shape);
  /// Thread t's partial: the online softmax over its key blocks.
  RowState partial(Value t);
  /// The thread loop of the partials; its results m [T], l [T] and acc
  /// [T, Dv + 1].
  SmallVector<Value> partials();
  /// Thread g's columns of the output row (`mine`, [1, Dv / G]) from the
  /// partials.
  Value combine(Value g, ArrayRef<Value> parts, Value mine);

  RewriterBase &b;
  Location loc;
  FusedOp op;
  FlashAttnView attn;
  const SplitShape &split;
  const AttnShape &s;
  BlockBuilder bb;
  Type f32;
  /// In the block loop: its ids, the query row's key range and params.
  Value bi, hi, qi, lo, hiKey;
  HeadParams hp;
};
} // namespace

Value SplitBuilder::workgroup(ArrayRef<int64_t> shape) {
  return bufferization::AllocTensorOp::create(
      b, loc, RankedTensorType::get(shape, f32), ValueRange{},
      /*copy=*/Value(), /*size_hint=*/Value(),
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup));
}

RowState SplitBuilder::partial(Value t) {
  Value q = toF32(bb, bb.block(attn.getQ(), bi, hi, qi, b.getIndexAttr(0), 1,
                               s.d, getElementTypeOrSelf(attn.getQ())));
  Value m0 = bb.full({1}, f32, -INFINITY), l0 = bb.full({1}, f32, 0.0),
        acc0 = bb.full({1, s.dv}, f32, 0.0);
  Value start = arith::AddIOp::create(
      b, loc, lo, arith::MulIOp::create(b, loc, t, bb.index(kStep)));
  bool overlaps = s.sk % kStep != 0;
  auto loop = scf::ForOp::create(
      b, loc, start, hiKey, bb.index(kStep * split.threads),
      ValueRange{m0, l0, acc0},
      [&](OpBuilder &nb, Location, Value j0, ValueRange carried) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        // The block read: from j0, or for the last one from Sk - 16.
        Value jr = overlaps ? arith::MinSIOp::create(b, loc, j0,
                                                     bb.index(s.sk - kStep))
                                  .getResult()
                            : j0;
        auto rows = [&](Value from, int64_t cols) {
          return toF32(bb, bb.block(from, bi, hp.kvHead, jr, b.getIndexAttr(0),
                                    kStep, cols,
                                    getElementTypeOrSelf(from)));
        };
        Value k = rows(attn.getK(), s.d), v = rows(attn.getV(), s.dv);
        // scores[0, j] = sum_c q[0, c] * k[j, c]
        Value raw = bb.generic(
            3, {{q, bb.map(3, {0, 2})}, {k, bb.map(3, {1, 2})}},
            bb.full({1, kStep}, f32, 0.0), bb.map(3, {0, 1}), {2},
            [](OpBuilder &ib, Location il, ValueRange x) -> Value {
              Value prod = arith::MulFOp::create(ib, il, x[0], x[1]);
              return arith::AddFOp::create(ib, il, x[2], prod);
            });
        Value scores = maskBlock(bb, raw, hp.bp, qi, jr, hp.off);
        if (overlaps) {
          // Keys before j0 belong to another thread's block.
          Value negInf = bb.constF(-INFINITY);
          scores = bb.generic(
              2, {{scores, bb.map(2, {0, 1})}}, bb.empty({1, kStep}, f32),
              bb.map(2, {0, 1}), {},
              [&](OpBuilder &ib, Location il, ValueRange x) -> Value {
                Value j = arith::AddIOp::create(
                    ib, il, jr, linalg::IndexOp::create(ib, il, 1));
                Value before = arith::CmpIOp::create(
                    ib, il, arith::CmpIPredicate::slt, j, j0);
                return arith::SelectOp::create(ib, il, before, negInf, x[0]);
              });
        }
        RowState next =
            onlineUpdate(bb, scores, v, {carried[0], carried[1], carried[2]});
        scf::YieldOp::create(b, loc, ValueRange{next.m, next.l, next.acc});
      });
  return {loop.getResult(0), loop.getResult(1), loop.getResult(2)};
}

SmallVector<Value> SplitBuilder::partials() {
  int64_t threads = split.threads;
  SmallVector<Value> inits = {workgroup({threads}), workgroup({threads}),
                              workgroup({threads, s.dv + 1})};
  auto loop = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(threads)}, inits,
      std::nullopt);
  mapForall(b, loop, /*threads=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value t = loop.getInductionVar(0);
  RowState mine = partial(t);
  b.setInsertionPointToStart(loop.getTerminator().getBody());
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  ValueRange shared = loop.getRegionIterArgs();
  tensor::ParallelInsertSliceOp::create(b, loc, mine.m, shared[0],
                                        ArrayRef<OpFoldResult>{t},
                                        ArrayRef<OpFoldResult>{one},
                                        ArrayRef<OpFoldResult>{one});
  tensor::ParallelInsertSliceOp::create(b, loc, mine.l, shared[1],
                                        ArrayRef<OpFoldResult>{t},
                                        ArrayRef<OpFoldResult>{one},
                                        ArrayRef<OpFoldResult>{one});
  tensor::ParallelInsertSliceOp::create(
      b, loc, mine.acc, shared[2], ArrayRef<OpFoldResult>{t, zero},
      ArrayRef<OpFoldResult>{one, b.getIndexAttr(s.dv)},
      ArrayRef<OpFoldResult>{one, one});
  return SmallVector<Value>(loop.getResults());
}

Value SplitBuilder::combine(Value g, ArrayRef<Value> parts, Value mine) {
  int64_t threads = split.threads, columns = split.columns;
  Value m = parts[0], l = parts[1], acc = parts[2];
  Value negInf = bb.constF(-INFINITY), zero = bb.constF(0.0);
  // M = max_t m_t, as [1].
  Value mMax = bb.generic(
      2, {{m, bb.map(2, {1})}}, bb.full({1}, f32, -INFINITY), bb.map(2, {0}),
      {1}, [](OpBuilder &ib, Location il, ValueRange x) -> Value {
        return arith::MaximumFOp::create(ib, il, x[0], x[1]);
      });
  // out[0, c] += w_t * x[t, c] over t, with w_t = exp(m_t - M) (0 where
  // thread t saw no key) computed where it is used: a tensor of the
  // weights would be a thread's array read at the steps of the sum, on
  // the stack.
  auto weighted = [&](Value x, int64_t cols) {
    bool row = cols == 0;
    unsigned loops = row ? 2 : 3, t = loops - 1;
    AffineMap out = row ? bb.map(2, {0}) : bb.map(3, {0, 1});
    AffineMap xMap = row ? bb.map(2, {t}) : bb.map(3, {t, 1});
    SmallVector<int64_t> shape = {1};
    if (!row)
      shape.push_back(cols);
    return bb.generic(
        loops,
        {{m, bb.map(loops, {t})}, {mMax, bb.map(loops, {0})}, {x, xMap}},
        bb.full(shape, f32, 0.0), out, {t},
        [&](OpBuilder &ib, Location il, ValueRange a) -> Value {
          Value none = arith::CmpFOp::create(
              ib, il, arith::CmpFPredicate::OEQ, a[0], negInf);
          Value e = math::ExpOp::create(
              ib, il, arith::SubFOp::create(ib, il, a[0], a[1]));
          Value w = arith::SelectOp::create(ib, il, none, zero, e);
          return arith::AddFOp::create(
              ib, il, a[3], arith::MulFOp::create(ib, il, w, a[2]));
        });
  };
  Value lSum = weighted(l, 0);
  // The thread's columns g, g + G, ... of the partials' rows.
  int64_t each = s.dv / columns;
  OpFoldResult one = b.getIndexAttr(1);
  Value accCols = tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({threads, each}, f32), acc,
      ArrayRef<OpFoldResult>{b.getIndexAttr(0), g},
      ArrayRef<OpFoldResult>{b.getIndexAttr(threads), b.getIndexAttr(each)},
      ArrayRef<OpFoldResult>{one, b.getIndexAttr(columns)});
  return normalizeRows(bb, weighted(accCols, each), lSum, mine);
}

Value SplitBuilder::build() {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  Type elt = type.getElementType();
  b.setInsertionPoint(op);
  Value out = bb.empty({s.batch, s.heads, s.sq, s.dv}, elt);
  auto blocks = scf::ForallOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{b.getIndexAttr(s.batch), b.getIndexAttr(s.heads),
                             b.getIndexAttr(s.sq)},
      ValueRange{out}, std::nullopt);
  mapForall(b, blocks, /*threads=*/false);
  b.setInsertionPointToStart(blocks.getBody());
  bi = blocks.getInductionVar(0);
  hi = blocks.getInductionVar(1);
  qi = blocks.getInductionVar(2);
  hp = headParams(bb, paramsOf(attn), attn.getKLen(), attn.getAlibi(), s, bi,
                  hi);
  std::tie(lo, hiKey) = keyRange(bb, s, hp.bp, qi, hp.off);

  SmallVector<Value> parts = partials();

  // The combine: thread g writes columns g, g + G, ... of the output row.
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  Value outArg = blocks.getRegionIterArgs()[0];
  Value rowOut = bb.block(outArg, bi, hi, qi, zero, 1, s.dv, elt);
  int64_t columns = split.columns, each = s.dv / columns;
  Value written = threadSlices(
      b, loc, {columns}, rowOut, {1, each}, {1, columns},
      [&](ValueRange ids) {
        return SmallVector<OpFoldResult>{zero, ids[0]};
      },
      [&](ValueRange ids, Value mine) { return combine(ids[0], parts, mine); });

  b.setInsertionPointToStart(blocks.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(
      b, loc, written, outArg, ArrayRef<OpFoldResult>{bi, hi, qi, zero},
      ArrayRef<OpFoldResult>{one, one, one, b.getIndexAttr(s.dv)},
      ArrayRef<OpFoldResult>{one, one, one, one});
  // As in the thread-per-row form: whole steps of the contractions with
  // value rows of up to 64, steps of 8 keys beyond (the value block then
  // fits in registers).
  tileContractionReductions(b, blocks, s.dv <= 64 ? kStep : 8);
  vectorizeInside(b, blocks, /*contractions=*/true);
  return blocks.getResult(0);
}

LogicalResult mlir::fuel::buildGpuSplitKeysAttention(
    RewriterBase &rewriter, FusedOp op, const GpuScheduleOptions &options) {
  std::optional<SplitShape> split = splitShape(op, options);
  assert(split && "not a flash_attn canSplitGpuAttentionKeys accepts");
  OpBuilder::InsertionGuard guard(rewriter);
  Value result = SplitBuilder(rewriter, op, *split).build();
  rewriter.replaceOp(op, result);
  return success();
}
