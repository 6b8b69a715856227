//===- GpuStagedAttention.cpp - Attention with shared-memory key blocks ---===//
//
// flash_attn's GPU form with its key and value blocks staged in workgroup
// memory: a block per (batch, head, query block) of Bq rows, a thread per
// query row, and the key loop in the block's body rather than in each
// thread. At each block of 16 keys
//   1. all the block's threads copy the keys, transposed ([D, 16]), and
//      the values ([16, Dv]) from global memory into workgroup memory
//      (widened to f32), consecutive threads on consecutive elements of a
//      key's or value's row (coalesced loads);
//   2. each thread computes its row's 16 scores from the staged keys, masks
//      them, and updates its running max, sum and accumulator row from the
//      staged values (the online softmax of Attention.cpp).
// Each key and value is then read from global memory once per query block,
// not once per query row, and every thread of a warp reads the same staged
// element at a time (a broadcast, no bank conflicts). The transposed keys
// make the scores, like p . v, a sum of rows of the tile scaled by one
// element each (fused multiply-adds on vector loads): read as [16, D], the
// same contraction took 178 registers for D = 64 on sm_90, 134 this way.
// The key loop covers the keys any row of the block sees (causal and
// windowed attention); each row masks the rest.
//
// In the tensor form the state (m [Bq], l [Bq], acc [Bq, Dv]) is carried
// by the key loop and each thread loop touches its thread's row of it;
// fuel-gpu-map-forall puts the barriers between the thread loops, and
// fuel-gpu-private-allocs makes its buffers the row each thread uses
// (registers once promoted), as for the staged contractions (GpuStaged.h).
// The queries are read from global memory, through the caches, as in the
// unstaged form.
//
// flash_attn_backward_q takes the same form with two key loops: the first
// stages the keys and values (both transposed) and carries each row's
// running max, sum and E = sum exp(s - m) dp (AttentionBackward.cpp's
// first pass); a thread loop turns them into each row's lse and D; the
// second stages the keys (transposed, and as they are) and values, and
// each row adds ds k to its dq.
//
//===----------------------------------------------------------------------===//

#include "AttentionBlocks.h"
#include "Contraction.h"
#include "GpuBlockLoops.h"
#include "GpuSchedules.h"
#include "GpuStaged.h"
#include "ScheduleUtils.h"

#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fuel;
using namespace mlir::fuel::attention;

namespace {
/// Keys per staged block.
constexpr int64_t kStagedKeys = 16;
/// Query rows (threads) per block, at least: fewer share too little.
constexpr int64_t kMinStagedRows = 32;
} // namespace

/// Whether the rows of query blocks of `s` stage its key blocks: head dims
/// multiples of 16 (no padding of them) up to `maxHeadDim`, query blocks
/// of 32 to max-threads rows, and keys and values ([D, 16] and [16, D]
/// tiles, the same for Dv) the rows copy in equal parts.
static bool canStageRows(const AttnShape &s, int64_t maxHeadDim,
                         const GpuScheduleOptions &options) {
  if (!s.sq || !s.sk || !s.d || !s.dv || s.d % 16 || s.dv % 16 ||
      s.d > maxHeadDim || s.dv > maxHeadDim)
    return false;
  if (s.blockQ < kMinStagedRows || s.blockQ > options.maxThreads)
    return false;
  for (int64_t cols : {s.d, s.dv})
    if (!canStageTile(WorkgroupTile{cols, kStagedKeys, true, {}}, s.blockQ) ||
        !canStageTile(WorkgroupTile{kStagedKeys, cols, false, {}}, s.blockQ))
      return false;
  return true;
}

/// The shapes of `op`'s staged form (a flash_attn, or with `backward` a
/// flash_attn_backward_q), when it has one: static shapes of f32, f16 or
/// bf16 that canStageRows accepts.
static std::optional<AttnShape>
stagedShape(FusedOp op, const GpuScheduleOptions &options, bool backward) {
  if (!(backward ? FlashAttnBackwardQView::match(op).has_value()
                 : FlashAttnView::match(op).has_value()) ||
      !hasF32OrHalfTensors(op))
    return std::nullopt;
  for (Value v : op->getOperands().take_front(backward ? 4 : 3))
    if (!cast<RankedTensorType>(v.getType()).hasStaticShape())
      return std::nullopt;
  if (!cast<RankedTensorType>(op->getResult(0).getType()).hasStaticShape())
    return std::nullopt;
  AttnShape s = AttnShape::of(op->getOperand(0), op->getOperand(1),
                              op->getOperand(2));
  s.blockK = kStagedKeys;
  s.skP = roundUp(s.sk, s.blockK);
  // The widest heads staged (options.maxStagedHeadDim; dq: half as wide).
  // With D = Dv = 128 the staged forward needs 204 registers and no stack
  // on sm_90, but ptxas for sm_80 spills 3 to 4.5 KiB of it (255
  // registers); so does the staged dq with D = 64 (0.7 to 2.9 KiB; sm_90:
  // 139 to 167 registers, no stack). Wider heads keep the unstaged forms.
  int64_t widest = options.maxStagedHeadDim / (backward ? 2 : 1);
  if (!canStageRows(s, widest, options))
    return std::nullopt;
  return s;
}

bool mlir::fuel::canStageGpuAttention(FusedOp op,
                                      const GpuScheduleOptions &options) {
  return stagedShape(op, options, /*backward=*/false).has_value();
}

bool mlir::fuel::canStageGpuAttentionBackwardQ(
    FusedOp op, const GpuScheduleOptions &options) {
  return stagedShape(op, options, /*backward=*/true).has_value();
}

namespace {
/// Builds the staged form of one attention op: the block loop over (batch,
/// head, query block), and in its body thread loops over the block's rows
/// and key loops that stage the key blocks.
class StagedRows {
public:
  StagedRows(RewriterBase &b, Location loc, const AttnShape &s)
      : b(b), loc(loc), s(s), bb{b, loc}, f32(b.getF32Type()) {}

  /// Before `op`: the block loop writing a new [B, H, SqP, cols] tensor of
  /// the element type of op's result, the rewriter left at the start of its
  /// body (sets blocks, bi, hi, i0); returns what the block code of its
  /// head applies (headParams).
  HeadParams open(FusedOp op, BlockParams params, std::optional<Value> kLen,
                  std::optional<Value> alibi);

  /// The block's rows of the block loop's output, [Bq, cols].
  Value blockRows();

  /// Writes `rows` (blockRows() written) into the block loop's output,
  /// tiles the contractions' reductions by whole key blocks (a row of
  /// scores or ds is then read at static offsets and stays in registers)
  /// and vectorizes the loop; replaces `op` by the result without its
  /// padded rows.
  void close(FusedOp op, Value rows);

  /// An scf.forall on `#gpu.thread<x>`s, a thread per row of `inits` (each
  /// [Bq, ...]), at the builder's insertion point: `body` gets the thread's
  /// row and its row of each init ([1, ...]) and returns them written.
  scf::ForallOp
  rowThreads(ValueRange inits,
             function_ref<SmallVector<Value>(Value r, ValueRange mine)> body);

  /// New [Bq, ...] tensors of f32, each thread's row filled with `values`.
  SmallVector<Value> filledRows(ArrayRef<ArrayRef<int64_t>> shapes,
                                ArrayRef<double> values);

  /// The loop over the key blocks the block's rows see, carrying `inits`:
  /// `body(j0, carried)` builds a block's step (returns the carried values
  /// updated).
  scf::ForOp
  keyLoop(const HeadParams &hp, ValueRange inits,
          function_ref<SmallVector<Value>(Value j0, ValueRange)> body);

  /// The key block at j0 of each of `operands` ([B, Hkv, Sk, cols]) in
  /// workgroup memory as f32, copied by one thread loop: [cols, 16]
  /// (transposed) where `transposed` says so, [16, cols] otherwise; 0 past
  /// Sk.
  SmallVector<Value> stage(Value kvHead, Value j0,
                           ArrayRef<std::pair<Value, bool>> operands);

  /// Row i0 + r of `t` ([B, H, Sq, cols]) as [1, cols] of f32 (padded rows,
  /// past Sq, read the last row: their results are dropped).
  Value queryRow(Value t, Value r);

  /// Row r of `t` ([Bq, ...]) as [1, ...].
  Value rowOf(Value t, Value r);

  /// out[0, j] = sum_c row[0, c] * tile[c, j] (f32, [1, 16]).
  Value scoresRow(Value row, Value tileT);

  RewriterBase &b;
  Location loc;
  const AttnShape &s;
  BlockBuilder bb;
  Type f32;
  scf::ForallOp blocks;
  Value bi, hi, i0;
};
} // namespace

HeadParams StagedRows::open(FusedOp op, BlockParams params,
                            std::optional<Value> kLen,
                            std::optional<Value> alibi) {
  b.setInsertionPoint(op);
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  Value out = tensor::EmptyOp::create(
      b, loc,
      SmallVector<int64_t>{s.batch, s.heads, s.sqP, type.getDimSize(3)},
      type.getElementType());
  blocks = scf::ForallOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{b.getIndexAttr(s.batch), b.getIndexAttr(s.heads),
                             b.getIndexAttr(s.sqP / s.blockQ)},
      ValueRange{out}, std::nullopt);
  mapForall(b, blocks, /*threads=*/false);
  b.setInsertionPointToStart(blocks.getBody());
  bi = blocks.getInductionVar(0);
  hi = blocks.getInductionVar(1);
  i0 = arith::MulIOp::create(b, loc, blocks.getInductionVar(2),
                             bb.index(s.blockQ));
  return headParams(bb, params, kLen, alibi, s, bi, hi);
}

Value StagedRows::blockRows() {
  auto type =
      cast<RankedTensorType>(blocks.getRegionIterArgs()[0].getType());
  return bb.block(blocks.getRegionIterArgs()[0], bi, hi, i0,
                  b.getIndexAttr(0), s.blockQ, type.getDimSize(3),
                  type.getElementType());
}

void StagedRows::close(FusedOp op, Value rows) {
  auto type = cast<RankedTensorType>(rows.getType());
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  b.setInsertionPointToStart(blocks.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(
      b, loc, rows, blocks.getRegionIterArgs()[0],
      SmallVector<OpFoldResult>{bi, hi, i0, zero},
      SmallVector<OpFoldResult>{one, one, b.getIndexAttr(type.getDimSize(0)),
                                b.getIndexAttr(type.getDimSize(1))},
      SmallVector<OpFoldResult>(4, one));
  // The contractions in steps, then everything in registers.
  tileContractionReductions(b, blocks, kStagedKeys);
  vectorizeInside(b, blocks, /*contractions=*/true);
  b.setInsertionPointAfter(blocks);
  b.replaceOp(op, sliceToResult(b, loc, blocks.getResult(0),
                                cast<RankedTensorType>(
                                    op->getResult(0).getType())));
}

scf::ForallOp StagedRows::rowThreads(
    ValueRange inits,
    function_ref<SmallVector<Value>(Value r, ValueRange mine)> body) {
  auto loop = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(s.blockQ)}, inits,
      std::nullopt);
  mapForall(b, loop, /*threads=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value r = loop.getInductionVar(0);
  SmallVector<std::array<SmallVector<OpFoldResult>, 3>> at;
  SmallVector<Value> mine;
  for (Value shared : loop.getRegionIterArgs()) {
    ArrayRef<int64_t> shape =
        cast<RankedTensorType>(shared.getType()).getShape();
    std::array<SmallVector<OpFoldResult>, 3> slice;
    slice[0].assign(shape.size(), b.getIndexAttr(0));
    slice[0][0] = r;
    slice[1] = getAsIndexOpFoldResult(b.getContext(), shape);
    slice[1][0] = b.getIndexAttr(1);
    slice[2].assign(shape.size(), b.getIndexAttr(1));
    mine.push_back(tensor::ExtractSliceOp::create(b, loc, shared, slice[0],
                                                  slice[1], slice[2]));
    at.push_back(slice);
  }
  SmallVector<Value> written = body(r, mine);
  b.setInsertionPointToStart(loop.getTerminator().getBody());
  for (auto [value, shared, slice] :
       llvm::zip(written, loop.getRegionIterArgs(), at))
    tensor::ParallelInsertSliceOp::create(b, loc, value, shared, slice[0],
                                          slice[1], slice[2]);
  return loop;
}

SmallVector<Value>
StagedRows::filledRows(ArrayRef<ArrayRef<int64_t>> shapes,
                       ArrayRef<double> values) {
  SmallVector<Value> inits;
  for (ArrayRef<int64_t> shape : shapes)
    inits.push_back(bb.empty(shape, f32));
  auto loop = rowThreads(inits, [&](Value, ValueRange mine) {
    SmallVector<Value> filled;
    for (auto [value, slice] : llvm::zip(values, mine))
      filled.push_back(
          linalg::FillOp::create(b, loc, bb.constF(value), slice).getResult(0));
    return filled;
  });
  return loop.getResults();
}

scf::ForOp StagedRows::keyLoop(
    const HeadParams &hp, ValueRange inits,
    function_ref<SmallVector<Value>(Value j0, ValueRange)> body) {
  auto [lo, hiKey] = keyRange(bb, s, hp.bp, i0, hp.off);
  return scf::ForOp::create(
      b, loc, lo, hiKey, bb.index(s.blockK), inits,
      [&](OpBuilder &nb, Location, Value j0, ValueRange carried) {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        scf::YieldOp::create(b, loc, body(j0, carried));
      });
}

SmallVector<Value>
StagedRows::stage(Value kvHead, Value j0,
                  ArrayRef<std::pair<Value, bool>> operands) {
  // Element (j, c) of key row j0 + j of `from`, as f32; 0 past Sk.
  auto keyElement = [&](Value from, Value j, Value c) -> Value {
    Value key = arith::AddIOp::create(b, loc, j0, j);
    Value row = s.skP == s.sk
                    ? key
                    : arith::MinSIOp::create(b, loc, key, bb.index(s.sk - 1))
                          .getResult();
    Value x = widenToF32(b, loc,
                         tensor::ExtractOp::create(
                             b, loc, from, ValueRange{bi, kvHead, row, c}));
    if (s.skP == s.sk)
      return x;
    Value live = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, key,
                                       bb.index(s.sk));
    return arith::SelectOp::create(b, loc, live, x, bb.constF(0.0));
  };
  // The element functions outlive the loop below (WorkgroupTile holds
  // references to them).
  SmallVector<std::function<Value(Value, Value)>> elements;
  for (auto [from, transposed] : operands) {
    Value t = from;
    if (transposed)
      elements.push_back(
          [&, t](Value c, Value j) { return keyElement(t, j, c); });
    else
      elements.push_back(
          [&, t](Value j, Value c) { return keyElement(t, j, c); });
  }
  SmallVector<WorkgroupTile> tiles;
  for (auto [operand, element] : llvm::zip(operands, elements)) {
    auto [from, transposed] = operand;
    int64_t cols = cast<RankedTensorType>(from.getType()).getDimSize(3);
    // Consecutive threads on consecutive columns of a key's row.
    tiles.push_back(transposed
                        ? WorkgroupTile{cols, s.blockK, true, element}
                        : WorkgroupTile{s.blockK, cols, false, element});
  }
  return stageTiles(b, loc, {s.blockQ}, tiles);
}

Value StagedRows::queryRow(Value t, Value r) {
  Value iRow = arith::AddIOp::create(b, loc, i0, r);
  Value at = s.sqP == s.sq
                 ? iRow
                 : arith::MinSIOp::create(b, loc, iRow, bb.index(s.sq - 1))
                       .getResult();
  auto type = cast<RankedTensorType>(t.getType());
  return toF32(bb, bb.block(t, bi, hi, at, b.getIndexAttr(0), 1,
                            type.getDimSize(3), type.getElementType()));
}

Value StagedRows::rowOf(Value t, Value r) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(t.getType()).getShape();
  SmallVector<OpFoldResult> offsets(shape.size(), b.getIndexAttr(0));
  offsets[0] = r;
  SmallVector<OpFoldResult> sizes = getAsIndexOpFoldResult(b.getContext(),
                                                           shape);
  sizes[0] = b.getIndexAttr(1);
  return tensor::ExtractSliceOp::create(
      b, loc, t, offsets, sizes,
      SmallVector<OpFoldResult>(shape.size(), b.getIndexAttr(1)));
}

Value StagedRows::scoresRow(Value row, Value tileT) {
  return bb.matmul(row, tileT, bb.full({1, s.blockK}, f32, 0.0));
}

LogicalResult mlir::fuel::buildGpuStagedAttention(
    RewriterBase &rewriter, FusedOp op, const GpuScheduleOptions &options) {
  std::optional<AttnShape> shape =
      stagedShape(op, options, /*backward=*/false);
  assert(shape && "not a flash_attn canStageGpuAttention accepts");
  const AttnShape &s = *shape;
  FlashAttnView attn(op);
  OpBuilder::InsertionGuard guard(rewriter);
  StagedRows g(rewriter, op.getLoc(), s);
  HeadParams hp =
      g.open(op, paramsOf(attn), attn.getKLen(), attn.getAlibi());
  RewriterBase &b = g.b;
  Location loc = g.loc;
  BlockBuilder &bb = g.bb;

  // The rows' state: m = -inf, l = 0, acc = 0; at each key block, the keys
  // (transposed) and values staged, then each row's online softmax step.
  SmallVector<Value> state =
      g.filledRows({{s.blockQ}, {s.blockQ}, {s.blockQ, s.dv}},
                   {-INFINITY, 0.0, 0.0});
  auto keys = g.keyLoop(hp, state, [&](Value j0, ValueRange carried) {
    SmallVector<Value> staged =
        g.stage(hp.kvHead, j0, {{attn.getK(), true}, {attn.getV(), false}});
    auto update = g.rowThreads(carried, [&](Value r, ValueRange mine) {
      Value raw = g.scoresRow(g.queryRow(attn.getQ(), r), staged[0]);
      Value scores = maskBlock(bb, raw, hp.bp,
                               arith::AddIOp::create(b, loc, g.i0, r), j0,
                               hp.off);
      RowState next =
          onlineUpdate(bb, scores, staged[1], {mine[0], mine[1], mine[2]});
      return SmallVector<Value>{next.m, next.l, next.acc};
    });
    return SmallVector<Value>(update.getResults());
  });

  // Each row's o = acc / l into the block's rows of the output.
  Value acc = keys.getResult(2), l = keys.getResult(1);
  auto finish = g.rowThreads(g.blockRows(), [&](Value r, ValueRange mine) {
    return SmallVector<Value>{
        normalizeRows(bb, g.rowOf(acc, r), g.rowOf(l, r), mine[0])};
  });
  g.close(op, finish.getResult(0));
  return success();
}

LogicalResult mlir::fuel::buildGpuStagedAttentionBackwardQ(
    RewriterBase &rewriter, FusedOp op, const GpuScheduleOptions &options) {
  std::optional<AttnShape> shape =
      stagedShape(op, options, /*backward=*/true);
  assert(shape && "not a flash_attn_backward_q canStageGpuAttentionBackwardQ "
                  "accepts");
  const AttnShape &s = *shape;
  FlashAttnBackwardQView view(op);
  Value q = op->getOperand(0), k = op->getOperand(1), v = op->getOperand(2),
        dout = op->getOperand(3);
  std::optional<Value> alibi;
  if (op->getNumOperands() > 4)
    alibi = op->getOperand(4);
  OpBuilder::InsertionGuard guard(rewriter);
  StagedRows g(rewriter, op.getLoc(), s);
  HeadParams hp = g.open(op,
                         BlockParams{view.getSoftmaxScale(), view.getCausal(),
                                     view.getWindowSizeLeft(),
                                     view.getWindowSizeRight(),
                                     view.getSoftcap(), Value(), Value()},
                         std::nullopt, alibi);
  RewriterBase &b = g.b;
  Location loc = g.loc;
  BlockBuilder &bb = g.bb;
  auto iRow = [&](Value r) -> Value {
    return arith::AddIOp::create(b, loc, g.i0, r);
  };

  // The first pass: each row's running max, sum and E = sum exp(s - m) dp
  // over the staged keys and values (both transposed).
  SmallVector<Value> state = g.filledRows(
      {{s.blockQ}, {s.blockQ}, {s.blockQ}}, {-INFINITY, 0.0, 0.0});
  auto stats = g.keyLoop(hp, state, [&](Value j0, ValueRange carried) {
    SmallVector<Value> staged = g.stage(hp.kvHead, j0, {{k, true}, {v, true}});
    auto update = g.rowThreads(carried, [&](Value r, ValueRange mine) {
      Value scores =
          maskBlock(bb, g.scoresRow(g.queryRow(q, r), staged[0]), hp.bp,
                    iRow(r), j0, hp.off);
      Value dp = g.scoresRow(g.queryRow(dout, r), staged[1]);
      StatsState next =
          statsUpdate(bb, scores, dp, {mine[0], mine[1], mine[2]});
      return SmallVector<Value>{next.m, next.l, next.e};
    });
    return SmallVector<Value>(update.getResults());
  });

  // Each row's lse and D, and dq = 0.
  auto prepared = g.rowThreads(
      {bb.empty({s.blockQ}, g.f32), bb.empty({s.blockQ}, g.f32),
       bb.empty({s.blockQ, s.d}, g.f32)},
      [&](Value r, ValueRange mine) {
        auto [lse, delta] =
            finishStats(bb, {g.rowOf(stats.getResult(0), r),
                             g.rowOf(stats.getResult(1), r),
                             g.rowOf(stats.getResult(2), r)});
        Value zero =
            linalg::FillOp::create(b, loc, bb.constF(0.0), mine[2])
                .getResult(0);
        return SmallVector<Value>{lse, delta, zero};
      });
  Value lse = prepared.getResult(0), delta = prepared.getResult(1);

  // The second pass: dq += ds k over the staged keys (transposed for the
  // scores, as they are for ds k) and values (transposed).
  auto grads = g.keyLoop(
      hp, prepared.getResult(2), [&](Value j0, ValueRange carried) {
        SmallVector<Value> staged =
            g.stage(hp.kvHead, j0, {{k, true}, {v, true}, {k, false}});
        auto update = g.rowThreads(carried, [&](Value r, ValueRange mine) {
          Value scores =
              maskBlock(bb, g.scoresRow(g.queryRow(q, r), staged[0]), hp.bp,
                        iRow(r), j0, hp.off);
          Value p = blockProbs(bb, scores, g.rowOf(lse, r));
          Value dp = g.scoresRow(g.queryRow(dout, r), staged[1]);
          Value ds = blockDs(bb, hp.bp, p, dp, g.rowOf(delta, r), scores);
          return SmallVector<Value>{bb.matmul(ds, staged[2], mine[0])};
        });
        return SmallVector<Value>(update.getResults());
      });

  // Each row's dq, in the result's type, into the block's rows.
  Value dq = grads.getResult(0);
  auto finish = g.rowThreads(g.blockRows(), [&](Value r, ValueRange mine) {
    return SmallVector<Value>{finishTile(b, loc, g.rowOf(dq, r), mine[0])};
  });
  g.close(op, finish.getResult(0));
  return success();
}
