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
/// The widest head dims staged. With D = Dv = 128 the staged form needs
/// 204 registers and no stack on sm_90, but ptxas for sm_80 spills 3 to
/// 4.5 KiB of it (255 registers): such heads keep the unstaged form.
constexpr int64_t kMaxStagedHeadDim = 64;
} // namespace

/// The shapes of `op`'s staged form, when it has one: static shapes, head
/// dims multiples of 16 (no padding of them) up to 64, query blocks of 32
/// to max-threads rows, key and value blocks the rows copy in equal parts.
static std::optional<AttnShape>
stagedShape(FusedOp op, const GpuScheduleOptions &options) {
  auto attn = FlashAttnView::match(op);
  if (!attn || !hasF32OrHalfTensors(op))
    return std::nullopt;
  for (Value v : {attn->getQ(), attn->getK(), attn->getV(),
                  Value(op->getResult(0))})
    if (!cast<RankedTensorType>(v.getType()).hasStaticShape())
      return std::nullopt;
  AttnShape s = AttnShape::of(*attn);
  if (!s.sq || !s.sk || s.d % 16 || s.dv % 16 || !s.d || !s.dv)
    return std::nullopt;
  s.blockK = kStagedKeys;
  s.skP = roundUp(s.sk, s.blockK);
  if (s.blockQ < kMinStagedRows || s.blockQ > options.maxThreads ||
      s.d > kMaxStagedHeadDim || s.dv > kMaxStagedHeadDim)
    return std::nullopt;
  for (int64_t cols : {s.d, s.dv})
    if (!canStageTile(WorkgroupTile{cols, s.blockK, true, {}}, s.blockQ))
      return std::nullopt;
  return s;
}

bool mlir::fuel::canStageGpuAttention(FusedOp op,
                                      const GpuScheduleOptions &options) {
  return stagedShape(op, options).has_value();
}

/// An scf.forall on `#gpu.thread<x>`s, a thread per row of `inits` (each
/// [rows, ...]), at the builder's insertion point: `body` gets the thread's
/// row and its row of each init ([1, ...]) and returns them written.
static scf::ForallOp
rowThreads(RewriterBase &b, Location loc, int64_t rows, ValueRange inits,
           function_ref<SmallVector<Value>(Value r, ValueRange mine)> body) {
  auto loop = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(rows)}, inits,
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

LogicalResult mlir::fuel::buildGpuStagedAttention(
    RewriterBase &rewriter, FusedOp op, const GpuScheduleOptions &options) {
  std::optional<AttnShape> shape = stagedShape(op, options);
  assert(shape && "not a flash_attn canStageGpuAttention accepts");
  const AttnShape &s = *shape;
  FlashAttnView attn(op);
  Location loc = op.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  RewriterBase &b = rewriter;
  BlockBuilder bb{b, loc};
  Type f32 = b.getF32Type();
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());
  Type outElt = outType.getElementType();
  int64_t bq = s.blockQ, bk = s.blockK;
  auto attr = [&](int64_t x) -> OpFoldResult { return b.getIndexAttr(x); };
  OpFoldResult zero = attr(0), one = attr(1);
  Value q = attn.getQ(), k = attn.getK(), v = attn.getV();

  // The block loop: (batch, head, query block) on (z, y, x).
  Value out = tensor::EmptyOp::create(
      b, loc, SmallVector<int64_t>{s.batch, s.heads, s.sqP, s.dv}, outElt);
  auto blocks = scf::ForallOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{attr(s.batch), attr(s.heads), attr(s.sqP / bq)},
      ValueRange{out}, std::nullopt);
  mapForall(b, blocks, /*threads=*/false);
  b.setInsertionPointToStart(blocks.getBody());
  Value bi = blocks.getInductionVar(0), hi = blocks.getInductionVar(1);
  Value i0 = arith::MulIOp::create(b, loc, blocks.getInductionVar(2),
                                   bb.index(bq));
  HeadParams hp = headParams(bb, attn, s, bi, hi);

  // The rows' state: m = -inf, l = 0, acc = 0.
  auto initLoop = rowThreads(
      b, loc, bq,
      {bb.empty({bq}, f32), bb.empty({bq}, f32), bb.empty({bq, s.dv}, f32)},
      [&](Value, ValueRange mine) -> SmallVector<Value> {
        SmallVector<Value> filled;
        for (auto [value, slice] :
             llvm::zip(ArrayRef<double>{-INFINITY, 0.0, 0.0}, mine))
          filled.push_back(
              linalg::FillOp::create(b, loc, bb.constF(value), slice)
                  .getResult(0));
        return filled;
      });

  // Element (j, c) of key row j0 + j of k or v, as f32; 0 past Sk.
  auto keyElement = [&](Value j0, Value from, Value j, Value c) -> Value {
    Value key = arith::AddIOp::create(b, loc, j0, j);
    Value row = s.skP == s.sk
                    ? key
                    : arith::MinSIOp::create(b, loc, key, bb.index(s.sk - 1))
                          .getResult();
    Value x = widenToF32(
        b, loc,
        tensor::ExtractOp::create(b, loc, from,
                                  ValueRange{bi, hp.kvHead, row, c}));
    if (s.skP == s.sk)
      return x;
    Value live = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, key,
                                       bb.index(s.sk));
    return arith::SelectOp::create(b, loc, live, x, bb.constF(0.0));
  };

  // The key loop over the blocks some row of the query block sees.
  auto [lo, hiKey] = keyRange(bb, s, hp.bp, i0, hp.off);
  auto keyLoop = scf::ForOp::create(
      b, loc, lo, hiKey, bb.index(bk), initLoop.getResults(),
      [&](OpBuilder &nb, Location, Value j0, ValueRange carried) {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        auto kElement = [&](Value c, Value j) {
          return keyElement(j0, k, j, c);
        };
        auto vElement = [&](Value j, Value c) {
          return keyElement(j0, v, j, c);
        };
        SmallVector<Value> staged =
            stageTiles(b, loc, {bq},
                       {WorkgroupTile{s.d, bk, /*alongRows=*/true, kElement},
                        WorkgroupTile{bk, s.dv, /*alongRows=*/false,
                                      vElement}});
        Value kTile = staged[0], vTile = staged[1];
        auto update = rowThreads(
            b, loc, bq, carried,
            [&](Value r, ValueRange mine) -> SmallVector<Value> {
              Value iRow = arith::AddIOp::create(b, loc, i0, r);
              // Padded query rows (past Sq) read the last row; their
              // results are dropped.
              Value qAt = s.sqP == s.sq
                              ? iRow
                              : arith::MinSIOp::create(b, loc, iRow,
                                                       bb.index(s.sq - 1))
                                    .getResult();
              Value qRow = toF32(
                  bb, bb.block(q, bi, hi, qAt, zero, 1, s.d,
                               getElementTypeOrSelf(q.getType())));
              Value raw = bb.matmul(qRow, kTile, bb.full({1, bk}, f32, 0.0));
              Value scores = maskBlock(bb, raw, hp.bp, iRow, j0, hp.off);
              RowState next =
                  onlineUpdate(bb, scores, vTile, {mine[0], mine[1], mine[2]});
              return {next.m, next.l, next.acc};
            });
        scf::YieldOp::create(b, loc, update.getResults());
      });

  // Each row's o = acc / l into the block's rows of the output.
  Value blockOut = bb.block(blocks.getRegionIterArgs()[0], bi, hi, i0, zero,
                            bq, s.dv, outElt);
  Value acc = keyLoop.getResult(2), l = keyLoop.getResult(1);
  auto finish = rowThreads(
      b, loc, bq, blockOut,
      [&](Value r, ValueRange mine) -> SmallVector<Value> {
        Value accRow = tensor::ExtractSliceOp::create(
            b, loc, acc, ArrayRef<OpFoldResult>{r, zero},
            ArrayRef<OpFoldResult>{one, attr(s.dv)},
            ArrayRef<OpFoldResult>{one, one});
        Value lRow = tensor::ExtractSliceOp::create(
            b, loc, l, ArrayRef<OpFoldResult>{r}, ArrayRef<OpFoldResult>{one},
            ArrayRef<OpFoldResult>{one});
        return {normalizeRows(bb, accRow, lRow, mine[0])};
      });
  b.setInsertionPointToStart(blocks.getTerminator().getBody());
  SmallVector<OpFoldResult> ones(4, one);
  tensor::ParallelInsertSliceOp::create(
      b, loc, finish.getResult(0), blocks.getRegionIterArgs()[0],
      SmallVector<OpFoldResult>{bi, hi, i0, zero},
      SmallVector<OpFoldResult>{one, one, attr(bq), attr(s.dv)}, ones);

  // As in the unstaged form: the contractions in steps (whole key blocks
  // up to value rows of 64, steps of 8 beyond), then everything in
  // registers.
  tileContractionReductions(b, blocks, kStagedKeys);
  vectorizeInside(b, blocks, /*contractions=*/true);
  b.setInsertionPointAfter(blocks);
  b.replaceOp(op, sliceToResult(b, loc, blocks.getResult(0), outType));
  return success();
}
