//===- GpuSplitKeysAttention.cpp - Few queries, their keys split ----------===//
//
// flash_attn's GPU form for few query rows (decoding: a query or a few
// against a long cache): the other forms give each query row one thread
// (GpuAttention.cpp, GpuStagedAttention.cpp), so with fewer than 32 rows a
// block of a few threads walks every key alone, one step of 16 after the
// other. Here a block per (batch, head, query row) and partition of the
// row's keys spreads them over T threads (a power of two from a warp to
// 128), in two thread loops:
//
// 1. Partials: the threads form groups of G lanes (G a power of two from 4
//    to a warp: the widest whose pieces of 4 columns are at least 3 in 4
//    of D's and of Dv's; 32 for heads of 96 to 128, 16 for 64), and
//    group g takes the partition's key steps g, g + T / G, ... of 4 keys
//    (those the row sees: causal and windowed attention visit fewer).
//    Lane c of a group holds pieces c, c + G, ... of 4 columns of the
//    query and of each key (columns 4 c to 4 c + 3, then 4 G further
//    on), likewise of each value and of the accumulator: a warp reads
//    each key and value row whole, a lane 16 bytes of f32 a load, where a
//    thread per key step read its own rows, a lane a sector of its own per
//    load (13% of the bytes of each request). A lane's piece past the row
//    (where G does not divide D / 4: heads of 112 give 28 of 32 lanes a
//    piece, 80 give 8 lanes 3 pieces, 4 of them only 2) is read at the
//    row's last piece and left out of the dot product; its accumulator
//    piece is written past Dv and not read. A lane's dot products are
//    summed across its group by a clustered `gpu.subgroup_reduce` (log2 G
//    shuffles a key, every lane left with the same sum), and the group
//    runs the online softmax of Attention.cpp over its steps in
//    registers: its max m_g and sum l_g (the same on each lane) and its
//    accumulator row acc_g, its pieces a lane. A last step that would
//    run past Sk is read from Sk - 4 on, the keys before its start masked.
//    A warp's groups take as many steps (shfl.sync names every lane of the
//    warp): those past the partition's keys are masked.
// 2. Combine (after a barrier): a thread per column of the output row
//    (columns x, x + X, ... with X threads where Dv is wider than the
//    block) computes M = max_g m_g, the weights w_g = exp(m_g - M) (0 for
//    a group that saw no key), and o = sum_g w_g acc_g / sum_g w_g l_g
//    (0 when no key is visible): the combine of FlashDecoding. A warp
//    reads consecutive columns of a row of the partials, which the lanes
//    of step 1 wrote in consecutive 16-byte pieces: no bank conflicts on
//    either side.
//
// With fewer than 256 (batch, head, query) rows, too few blocks to fill a
// GPU, a row's keys are split into partitions of 512 keys or more, a block
// each, until there are 256 blocks: each block then writes its max M, its
// sum L and its unnormalized row instead of o, and a second kernel, a
// block per row, combines the partitions' as step 2 combines the groups'.
//
// A lane's state is small (heads of 128: four columns of the query, of
// the accumulator, of a step's keys and values). The partials take (T / G)
// * Dv' + 2 T floats of workgroup memory, Dv' the 4 G columns of each of a
// lane's pieces (Dv, and those past it). No [Sq, Sk] score tensor exists;
// no operand is copied or transposed first.
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
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fuel;
using namespace mlir::fuel::attention;

namespace {
/// Keys per step of a thread.
constexpr int64_t kStep = 4;
/// Columns of a lane's piece of a row (16 bytes of f32).
constexpr int64_t kPiece = 4;
/// Keys a row needs at least (16 steps).
constexpr int64_t kMinKeys = 64;
/// Threads per block at most.
constexpr int64_t kMaxThreads = 128;
/// The widest heads.
constexpr int64_t kMaxHeadDim = 256;
/// Workgroup memory the partials take at most (the static limit).
constexpr int64_t kMaxSharedBytes = 48 * 1024;
/// Blocks that fill a GPU (two per SM of the largest), which a row's keys
/// are partitioned over where there are fewer rows.
constexpr int64_t kFillBlocks = 256;
/// Keys per partition at least (as paged_attn's).
constexpr int64_t kMinPartitionKeys = 512;

/// The split form's shapes.
struct SplitShape {
  /// Query blocks of one row, key blocks of kStep.
  AttnShape s;
  /// Blocks per query row (each a partition of its keys), threads of the
  /// partials loop, and of the combine loops.
  int64_t partitions, threads, columns;
  /// Lanes a key (a group's), and the pieces of 4 columns of D and of Dv
  /// a lane takes (lane c: pieces c, c + G, ...; some lanes' last past D
  /// or Dv where G does not divide D / 4 or Dv / 4).
  int64_t lanes, piecesD, piecesDv;
  int64_t groups() const { return threads / lanes; }
  bool partitioned() const { return partitions > 1; }
  /// Columns of a group's accumulator row in workgroup memory: Dv, and
  /// the pieces past it that some lanes hold.
  int64_t accColumns() const { return lanes * piecesDv * kPiece; }
};

/// The lanes of a group: the widest (a power of two up to a warp) whose
/// pieces of 4 columns are at least 3 in 4 of D's and of Dv's (pieces past
/// them are idle lanes: heads of 112 take 32 lanes, 28 of them a piece; 80
/// take 8 lanes, 3 pieces each but 4 lanes 2), 4 where no other is.
static int64_t groupLanes(int64_t d, int64_t dv) {
  for (int64_t lanes = kWarpLanes; lanes > 4; lanes /= 2) {
    auto full = [&](int64_t cols) {
      int64_t pieces = cols / kPiece;
      return 3 * lanes * llvm::divideCeil(pieces, lanes) <= 4 * pieces;
    };
    if (full(d) && full(dv))
      return lanes;
  }
  return 4;
}
} // namespace

static std::optional<SplitShape>
splitShape(FusedOp op, const GpuScheduleOptions &options) {
  if (!FlashAttnView::match(op) || !hasStaticFloatShapes(op))
    return std::nullopt;
  FlashAttnView attn(op);
  SplitShape split{AttnShape::of(attn), 1, 0, 0, 0, 0, 0};
  AttnShape &s = split.s;
  if (s.sq >= kMinStagedRows || s.sk < kMinKeys || s.d % 16 || s.dv % 16 ||
      std::max(s.d, s.dv) > kMaxHeadDim || s.batch > 65535 ||
      s.heads > 65535)
    return std::nullopt;
  s.blockQ = 1;
  s.sqP = s.sq;
  s.blockK = kStep;
  s.skP = roundUp(s.sk, kStep);
  // D and Dv are multiples of 16: 4 lanes of whole pieces at least.
  split.lanes = groupLanes(s.d, s.dv);
  split.piecesD = llvm::divideCeil(s.d / kPiece, split.lanes);
  split.piecesDv = llvm::divideCeil(s.dv / kPiece, split.lanes);
  int64_t most = std::min(options.maxThreads, kMaxThreads);
  if (most < 32)
    return std::nullopt;
  int64_t steps = s.skP / kStep, rows = s.batch * s.heads * s.sq;
  split.partitions = std::max<int64_t>(
      1, std::min<int64_t>(llvm::divideCeil(kFillBlocks, rows),
                  s.skP / kMinPartitionKeys));
  // A group per step of the partition at most.
  split.threads = threadsFor(
      llvm::divideCeilSigned(steps, split.partitions) * split.lanes, most);
  // The partials fit: at most 32 groups (lanes >= 4, of no piece past Dv)
  // of Dv <= 256 floats; wider groups are fewer, their rows padded by at
  // most a third of Dv (their lanes' pieces are at least 3 in 4 of Dv's).
  assert((split.groups() * split.accColumns() + 2 * split.threads) * 4 <=
         kMaxSharedBytes);
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
  /// A block loop over (B, H, `rows`) writing `outs` ([B, H, rows, ...]),
  /// the builder left at the start of its body (sets bi and hi).
  scf::ForallOp blockLoop(int64_t rows, ValueRange outs);
  /// Writes `values` (a row of each block loop output, [1, ...] or [1])
  /// into the outputs at row `row` and returns the loop's results.
  ValueRange finishBlocks(scf::ForallOp blocks, ValueRange values, Value row);
  /// The keys of the block's partition of its row's, [lo, hiKey) (whole
  /// steps of 4).
  void keysOfBlock(Value partition);
  /// A lane's pieces of a row of `cols` columns: their first columns
  /// (`starts`: 4 (c + G p), past the row for some lanes' last), those
  /// read (clamped to the row's last piece), and whether each is the
  /// row's (null where every lane's is).
  struct Pieces {
    SmallVector<Value> starts, cols, live;
  };
  Pieces piecesOf(Value lane, int64_t pieces, int64_t cols);
  /// The online softmax's state of a group on one of its lanes: the
  /// group's max and sum ([1]), the lane's pieces of its accumulator row
  /// ([1, 4] each).
  struct LaneState {
    Value m, l;
    SmallVector<Value> acc;
  };
  /// The partial of lane `lane` of group `group`: the online softmax over
  /// the group's steps of keys, the lane's pieces of its accumulator.
  LaneState partial(Value group, Value lane, const Pieces &d,
                    const Pieces &dv);
  /// The thread loop of the partials; the groups' m [T / G], l [T / G] (a
  /// lane's of each: m and l [T] strided by G) and acc [T / G, Dv].
  SmallVector<Value> partials();
  /// max_t m[t], as [1].
  Value maxOf(Value m);
  /// sum_t w_t x[t, c] ([1, cols]; with cols 0, sum_t w_t x[t] as [1]),
  /// w_t = exp(m[t] - mMax), 0 where m[t] is -inf.
  Value weighted(Value m, Value mMax, Value x, int64_t cols);
  /// A thread loop over the combine's columns writing `out` ([1, Dv]):
  /// thread g's columns g, g + G, ... from the partials (m [N], l [N], acc
  /// [N, >= Dv]); normalized (o = sums / sum_t w_t l_t, narrowed to out's
  /// type) with `normalize`, the sums as they are without.
  Value combine(ArrayRef<Value> parts, Value out, bool normalize);

  RewriterBase &b;
  Location loc;
  FusedOp op;
  FlashAttnView attn;
  const SplitShape &split;
  const AttnShape &s;
  BlockBuilder bb;
  Type f32;
  /// In a block loop: its ids, the query row, its key range and params.
  Value bi, hi, qi, lo, hiKey;
  HeadParams hp;
};
} // namespace

SplitBuilder::Pieces SplitBuilder::piecesOf(Value lane, int64_t pieces,
                                            int64_t cols) {
  Pieces out;
  for (int64_t p = 0; p < pieces; ++p) {
    // Piece c + G p, from column 4 (c + G p).
    Value start = arith::MulIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, lane, bb.index(split.lanes * p)),
        bb.index(kPiece));
    Value col = start, live;
    if ((p + 1) * split.lanes * kPiece > cols) {
      // The last piece, past the row on the lanes from (cols / 4) mod G
      // on: read at the row's last piece, its terms left out.
      live = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, col,
                                   bb.index(cols));
      col = arith::MinUIOp::create(b, loc, col, bb.index(cols - kPiece));
    }
    out.starts.push_back(start);
    out.cols.push_back(col);
    out.live.push_back(live);
  }
  return out;
}

SplitBuilder::LaneState SplitBuilder::partial(Value group, Value lane,
                                              const Pieces &d,
                                              const Pieces &dv) {
  Type qElt = getElementTypeOrSelf(attn.getQ());
  SmallVector<Value> q;
  for (Value col : d.cols)
    q.push_back(
        toF32(bb, bb.block(attn.getQ(), bi, hi, qi, col, 1, kPiece, qElt)));
  SmallVector<Value> inits = {bb.full({1}, f32, -INFINITY),
                              bb.full({1}, f32, 0.0)};
  for (int64_t p = 0; p < split.piecesDv; ++p)
    inits.push_back(bb.full({1, kPiece}, f32, 0.0));
  // The loop's trips are the same on every lane of a warp (see
  // WarpUniformGroup): group g takes the steps (g mod W) * 4 keys after
  // those of its warp's first group; keys from hiKey on are masked (and
  // read from Sk - 4 on where they would pass Sk).
  auto place = WarpUniformGroup::of(b, loc, group, split.lanes, kStep);
  Value start = arith::AddIOp::create(b, loc, lo, place.warpStart);
  Value shift = place.shift;
  bool overlaps = s.sk % kStep != 0 || split.lanes < kWarpLanes;
  auto loop = scf::ForOp::create(
      b, loc, start, hiKey, bb.index(kStep * split.groups()), inits,
      [&](OpBuilder &nb, Location, Value first, ValueRange carried) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        Value j0 = arith::AddIOp::create(b, loc, first, shift);
        // The step's keys: from j0, or for a last step past Sk from Sk - 4.
        Value jr = overlaps ? arith::MinSIOp::create(b, loc, j0,
                                                     bb.index(s.sk - kStep))
                                  .getResult()
                            : j0;
        auto rows = [&](Value from, Value col) {
          return toF32(bb, bb.block(from, bi, hp.kvHead, jr, col, kStep,
                                    kPiece, getElementTypeOrSelf(from)));
        };
        // The lane's part of scores[0, j] = sum_c q[0, c] * k[j, c] (over
        // its live pieces), then the group's sum of them, on each lane.
        Value part = bb.full({1, kStep}, f32, 0.0);
        for (auto [qp, col, live] : llvm::zip(q, d.cols, d.live)) {
          auto dot = [&](Value init) {
            return bb.generic(
                3,
                {{qp, bb.map(3, {0, 2})},
                 {rows(attn.getK(), col), bb.map(3, {1, 2})}},
                init, bb.map(3, {0, 1}), {2},
                [&](OpBuilder &ib, Location il, ValueRange x) -> Value {
                  Value prod = arith::MulFOp::create(ib, il, x[0], x[1]);
                  return arith::AddFOp::create(ib, il, x[2], prod);
                });
          };
          if (!live) {
            part = dot(part);
            continue;
          }
          // A piece that may be past D: its own sums (a contraction, as
          // the others), added where it is D's.
          part = bb.generic(
              2,
              {{dot(bb.full({1, kStep}, f32, 0.0)), bb.map(2, {0, 1})}},
              part, bb.map(2, {0, 1}), {},
              [&](OpBuilder &ib, Location il, ValueRange x) -> Value {
                Value sum = arith::AddFOp::create(ib, il, x[1], x[0]);
                return arith::SelectOp::create(ib, il, live, sum, x[1]);
              });
        }
        Value c0 = bb.index(0);
        auto vecType = VectorType::get({kStep}, f32);
        Value parts = vector::TransferReadOp::create(
            b, loc, vecType, part, ValueRange{c0, c0}, bb.constF(0.0),
            ArrayRef<bool>{true});
        SmallVector<Value> sums;
        for (int64_t j = 0; j < kStep; ++j)
          sums.push_back(gpu::SubgroupReduceOp::create(
              b, loc, vector::ExtractOp::create(b, loc, parts, j),
              gpu::AllReduceOperation::ADD, /*uniform=*/true,
              static_cast<uint32_t>(split.lanes)));
        Value summed = vector::FromElementsOp::create(b, loc, vecType, sums);
        Value raw = vector::TransferWriteOp::create(
                        b, loc, summed, bb.empty({1, kStep}, f32),
                        ValueRange{c0, c0}, ArrayRef<bool>{true})
                        .getResult();
        Value scores = maskBlock(bb, raw, hp.bp, qi, jr, hp.off);
        if (overlaps) {
          // Keys before j0 belong to another group's step; those from
          // hiKey on to no step of the block's.
          Value negInf = bb.constF(-INFINITY);
          scores = bb.generic(
              2, {{scores, bb.map(2, {0, 1})}}, bb.empty({1, kStep}, f32),
              bb.map(2, {0, 1}), {},
              [&](OpBuilder &ib, Location il, ValueRange x) -> Value {
                Value j = arith::AddIOp::create(
                    ib, il, jr, linalg::IndexOp::create(ib, il, 1));
                Value outside = arith::OrIOp::create(
                    ib, il,
                    arith::CmpIOp::create(ib, il, arith::CmpIPredicate::slt,
                                          j, j0),
                    arith::CmpIOp::create(ib, il, arith::CmpIPredicate::sge,
                                          j, hiKey));
                return arith::SelectOp::create(ib, il, outside, negInf, x[0]);
              });
        }
        // The online softmax's step (onlineUpdate's), a piece of the
        // accumulator at a time; a lane's pieces past Dv accumulate the
        // row's last columns again, and are not read.
        OnlineStep step = onlineSoftmaxStep(bb, scores, carried[0]);
        Value lNew = bb.generic(
            2, {{step.p, bb.map(2, {0, 1})}},
            scaleRows(bb, carried[1], step.alpha), bb.map(2, {0}), {1},
            [](OpBuilder &ib, Location il, ValueRange x) -> Value {
              return arith::AddFOp::create(ib, il, x[0], x[1]);
            });
        SmallVector<Value> next = {step.mNew, lNew};
        for (auto [acc, col] : llvm::zip(carried.drop_front(2), dv.cols))
          next.push_back(bb.matmul(step.p, rows(attn.getV(), col),
                                   scaleRows(bb, acc, step.alpha)));
        scf::YieldOp::create(b, loc, next);
      });
  ValueRange results = loop.getResults();
  return {results[0], results[1], llvm::to_vector(results.drop_front(2))};
}

SmallVector<Value> SplitBuilder::partials() {
  int64_t threads = split.threads, groups = split.groups();
  SmallVector<Value> inits = {
      workgroupTensor(b, loc, {threads}), workgroupTensor(b, loc, {threads}),
      workgroupTensor(b, loc, {groups, split.accColumns()})};
  auto loop = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(threads)}, inits,
      std::nullopt);
  mapForall(b, loop, /*threads=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value t = loop.getInductionVar(0);
  Value group = arith::DivUIOp::create(b, loc, t, bb.index(split.lanes));
  Value lane = arith::RemUIOp::create(b, loc, t, bb.index(split.lanes));
  Pieces d = piecesOf(lane, split.piecesD, s.d),
         dv = piecesOf(lane, split.piecesDv, s.dv);
  LaneState mine = partial(group, lane, d, dv);
  b.setInsertionPointToStart(loop.getTerminator().getBody());
  OpFoldResult one = b.getIndexAttr(1);
  ValueRange shared = loop.getRegionIterArgs();
  tensor::ParallelInsertSliceOp::create(b, loc, mine.m, shared[0],
                                        ArrayRef<OpFoldResult>{t},
                                        ArrayRef<OpFoldResult>{one},
                                        ArrayRef<OpFoldResult>{one});
  tensor::ParallelInsertSliceOp::create(b, loc, mine.l, shared[1],
                                        ArrayRef<OpFoldResult>{t},
                                        ArrayRef<OpFoldResult>{one},
                                        ArrayRef<OpFoldResult>{one});
  // The lane's pieces of the accumulator row at their starts (those past
  // Dv too, into the padding).
  for (auto [acc, col] : llvm::zip(mine.acc, dv.starts))
    tensor::ParallelInsertSliceOp::create(
        b, loc, acc, shared[2], ArrayRef<OpFoldResult>{group, col},
        ArrayRef<OpFoldResult>{one, b.getIndexAttr(kPiece)},
        ArrayRef<OpFoldResult>{one, one});
  b.setInsertionPointAfter(loop);
  // Each group's m and l: its first lane's (every lane has the same).
  auto firstLanes = [&](Value all) -> Value {
    return tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get({groups}, f32), all,
        ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(groups)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(split.lanes)});
  };
  return {firstLanes(loop.getResult(0)), firstLanes(loop.getResult(1)),
          loop.getResult(2)};
}

Value SplitBuilder::maxOf(Value m) {
  return bb.generic(
      2, {{m, bb.map(2, {1})}}, bb.full({1}, f32, -INFINITY), bb.map(2, {0}),
      {1}, [](OpBuilder &ib, Location il, ValueRange x) -> Value {
        return arith::MaximumFOp::create(ib, il, x[0], x[1]);
      });
}

Value SplitBuilder::weighted(Value m, Value mMax, Value x, int64_t cols) {
  // The weights computed where they are used: a tensor of them would be a
  // thread's array read at the steps of the sum, on the stack.
  Value negInf = bb.constF(-INFINITY), zero = bb.constF(0.0);
  bool row = cols == 0;
  unsigned loops = row ? 2 : 3, t = loops - 1;
  AffineMap out = row ? bb.map(2, {0}) : bb.map(3, {0, 1});
  AffineMap xMap = row ? bb.map(2, {t}) : bb.map(3, {t, 1});
  SmallVector<int64_t> shape = {1};
  if (!row)
    shape.push_back(cols);
  return bb.generic(
      loops, {{m, bb.map(loops, {t})}, {mMax, bb.map(loops, {0})}, {x, xMap}},
      bb.full(shape, f32, 0.0), out, {t},
      [&](OpBuilder &ib, Location il, ValueRange a) -> Value {
        Value none = arith::CmpFOp::create(ib, il, arith::CmpFPredicate::OEQ,
                                           a[0], negInf);
        Value e = math::ExpOp::create(
            ib, il, arith::SubFOp::create(ib, il, a[0], a[1]));
        Value w = arith::SelectOp::create(ib, il, none, zero, e);
        return arith::AddFOp::create(ib, il, a[3],
                                     arith::MulFOp::create(ib, il, w, a[2]));
      });
}

Value SplitBuilder::combine(ArrayRef<Value> parts, Value out, bool normalize) {
  int64_t columns = split.columns, each = s.dv / columns;
  int64_t n = cast<RankedTensorType>(parts[0].getType()).getDimSize(0);
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  return threadSlices(
      b, loc, {columns}, out, {1, each}, {1, columns},
      [&](ValueRange ids) { return SmallVector<OpFoldResult>{zero, ids[0]}; },
      [&](ValueRange ids, Value mine) -> Value {
        Value m = parts[0], l = parts[1], acc = parts[2];
        Value mMax = maxOf(m);
        Value accCols = tensor::ExtractSliceOp::create(
            b, loc, RankedTensorType::get({n, each}, f32), acc,
            ArrayRef<OpFoldResult>{zero, ids[0]},
            ArrayRef<OpFoldResult>{b.getIndexAttr(n), b.getIndexAttr(each)},
            ArrayRef<OpFoldResult>{one, b.getIndexAttr(columns)});
        Value sums = weighted(m, mMax, accCols, each);
        if (!normalize)
          return sums;
        return normalizeRows(bb, sums, weighted(m, mMax, l, 0), mine);
      });
}

scf::ForallOp SplitBuilder::blockLoop(int64_t rows, ValueRange outs) {
  auto blocks = scf::ForallOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{b.getIndexAttr(s.batch), b.getIndexAttr(s.heads),
                             b.getIndexAttr(rows)},
      outs, std::nullopt);
  mapForall(b, blocks, /*threads=*/false);
  b.setInsertionPointToStart(blocks.getBody());
  bi = blocks.getInductionVar(0);
  hi = blocks.getInductionVar(1);
  return blocks;
}

ValueRange SplitBuilder::finishBlocks(scf::ForallOp blocks, ValueRange values,
                                      Value row) {
  b.setInsertionPointToStart(blocks.getTerminator().getBody());
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  for (auto [value, out] : llvm::zip(values, blocks.getRegionIterArgs())) {
    auto type = cast<RankedTensorType>(out.getType());
    SmallVector<OpFoldResult> offsets = {bi, hi, row}, sizes(3, one),
                              strides(type.getRank(), one);
    if (type.getRank() == 4) {
      offsets.push_back(zero);
      sizes.push_back(b.getIndexAttr(type.getDimSize(3)));
    }
    tensor::ParallelInsertSliceOp::create(b, loc, value, out, offsets, sizes,
                                          strides);
  }
  // The combines' reductions (over the groups or partitions) in steps of
  // 8 that divide them (a partial last step would not be vectorized: 176
  // bytes of stack on sm_80 when a lane's 12 columns of a head of 96 were
  // one contraction); a lane's pieces of 4 columns are one step each.
  tileContractionReductions(b, blocks, 8, /*dividingSteps=*/true);
  vectorizeInside(b, blocks, /*contractions=*/true);
  b.setInsertionPointAfter(blocks);
  return blocks.getResults();
}

void SplitBuilder::keysOfBlock(Value partition) {
  std::tie(lo, hiKey) = keyRange(bb, s, hp.bp, qi, hp.off);
  if (!partition)
    return;
  // Partition p of P: ceil(n / P) of the row's n steps of 4 keys, from
  // step p * ceil(n / P) on (none for the last ones where n < P).
  Value step = bb.index(kStep);
  Value n = arith::DivUIOp::create(
      b, loc, arith::SubIOp::create(b, loc, hiKey, lo), step);
  Value per = arith::MulIOp::create(
      b, loc,
      arith::CeilDivUIOp::create(b, loc, n, bb.index(split.partitions)),
      step);
  Value start = arith::MinSIOp::create(
      b, loc, hiKey,
      arith::AddIOp::create(b, loc, lo,
                            arith::MulIOp::create(b, loc, partition, per)));
  hiKey = arith::MinSIOp::create(b, loc, hiKey,
                                 arith::AddIOp::create(b, loc, start, per));
  lo = start;
}

Value SplitBuilder::build() {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  Type elt = type.getElementType();
  int64_t np = split.partitions;
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  b.setInsertionPoint(op);
  Value out = bb.empty({s.batch, s.heads, s.sq, s.dv}, elt);
  // Without partitions the blocks write the output; with them, each
  // block's max and sum ([B, H, Sq * P, 2]: two tensors of one shape would
  // be merged into one by CSE) and unnormalized row ([B, H, Sq * P, Dv]).
  SmallVector<Value> outs = {out};
  if (split.partitioned())
    outs = {bb.empty({s.batch, s.heads, s.sq * np, 2}, f32),
            bb.empty({s.batch, s.heads, s.sq * np, s.dv}, f32)};
  scf::ForallOp blocks = blockLoop(s.sq * np, outs);
  Value x = blocks.getInductionVar(2), partition;
  qi = x;
  if (split.partitioned()) {
    qi = arith::DivUIOp::create(b, loc, x, bb.index(np));
    partition = arith::RemUIOp::create(b, loc, x, bb.index(np));
  }
  hp = headParams(bb, paramsOf(attn), attn.getKLen(), attn.getAlibi(), s, bi,
                  hi);
  keysOfBlock(partition);
  SmallVector<Value> parts = partials();

  ValueRange args = blocks.getRegionIterArgs();
  if (!split.partitioned()) {
    Value row = bb.block(args[0], bi, hi, qi, zero, 1, s.dv, elt);
    return finishBlocks(blocks, combine(parts, row, /*normalize=*/true), x)[0];
  }
  // The block's unnormalized row, a thread per column; its max and sum,
  // one thread.
  Value row = bb.block(args[1], bi, hi, x, zero, 1, s.dv, f32);
  Value sums = combine(parts, row, /*normalize=*/false);
  Value statsOut = tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({2}, f32), args[0],
      ArrayRef<OpFoldResult>{bi, hi, x, zero},
      ArrayRef<OpFoldResult>{one, one, one, b.getIndexAttr(2)},
      ArrayRef<OpFoldResult>{one, one, one, one});
  auto stats = scf::ForallOp::create(b, loc, ArrayRef<OpFoldResult>{one},
                                     ValueRange{statsOut}, std::nullopt);
  mapForall(b, stats, /*threads=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(stats.getBody());
    Value mMax = maxOf(parts[0]);
    Value lSum = weighted(parts[0], mMax, parts[1], 0);
    b.setInsertionPointToStart(stats.getTerminator().getBody());
    for (auto [i, value] : llvm::enumerate(ValueRange{mMax, lSum}))
      tensor::ParallelInsertSliceOp::create(
          b, loc, value, stats.getRegionIterArgs()[0],
          ArrayRef<OpFoldResult>{b.getIndexAttr(i)},
          ArrayRef<OpFoldResult>{one}, ArrayRef<OpFoldResult>{one});
  }
  ValueRange partitions =
      finishBlocks(blocks, {stats.getResult(0), sums}, x);

  // The second kernel: a block per (batch, head, query row) combines its
  // partitions' rows as the first combined its threads'.
  scf::ForallOp rows = blockLoop(s.sq, out);
  qi = rows.getInductionVar(2);
  Value first = arith::MulIOp::create(b, loc, qi, bb.index(np));
  // Columns [c0, c0 + cols) of the row's P partitions' rows of `from`.
  auto ofRow = [&](Value from, int64_t c0, int64_t cols) -> Value {
    SmallVector<int64_t> shape = {np};
    if (cols > 1)
      shape.push_back(cols);
    return tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get(shape, f32), from,
        ArrayRef<OpFoldResult>{bi, hi, first, b.getIndexAttr(c0)},
        ArrayRef<OpFoldResult>{one, one, b.getIndexAttr(np),
                               b.getIndexAttr(cols)},
        ArrayRef<OpFoldResult>{one, one, one, one});
  };
  SmallVector<Value> byPartition = {ofRow(partitions[0], 0, 1),
                                    ofRow(partitions[0], 1, 1),
                                    ofRow(partitions[1], 0, s.dv)};
  Value rowOut = bb.block(rows.getRegionIterArgs()[0], bi, hi, qi, zero, 1,
                          s.dv, elt);
  return finishBlocks(rows, combine(byPartition, rowOut, /*normalize=*/true),
                      qi)[0];
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
