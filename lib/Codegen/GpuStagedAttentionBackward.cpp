//===- GpuStagedAttentionBackward.cpp - Staged attention backwards --------===//
//
// The backwards of flash_attn (AttentionBackward.cpp's FlashAttention-2
// backward) on a GPU with the blocks their threads share staged in
// workgroup memory, built of GpuStagedRows.h as the forward is
// (GpuStagedAttention.cpp).
//
// Every backward first needs each query row's lse and D = sum_j p_ij dp_ij
// (dp = do v^T): a block of query rows, a thread each, stages the keys and
// values (both transposed, [D, 16] and [Dv, 16]) at each block of 16 keys
// and carries each row's running max, sum and E = sum exp(s - m) dp; a
// thread loop turns them into lse = m + log l and D = E / l.
//
// dq (flash_attn_backward_q) then loops over the key blocks again in the
// same kernel: keys staged transposed (for the scores) and as they are
// (for ds k), values transposed (for dp); each row adds ds k to its dq.
//
// dk and dv (flash_attn_backward_k/v) write lse and D for every query row
// ([B, Hq, Sq]) from a kernel of their own, then a block per (batch, kv
// head, block of key rows), a thread per key row, loops over the query
// heads of its kv head and the blocks of 16 queries that see the block's
// keys. At each it stages the queries and do, transposed ([D, 16], [Dv,
// 16]: a key row's scores and dp are then sums of rows of the tile scaled
// by one element each, as the forward's), and as they are for the sums
// (dk: q, dv: do); each thread computes its key's 16 scores (a key's row of
// the transposed block, masked with `keysByRow`), p = exp(s - lse), and
// adds p do (dv) or ds q (dk) to its row. Queries past Sq are staged as
// zeros (q and do), so they add nothing to dk or dv.
//
//===----------------------------------------------------------------------===//

#include "GpuStaged.h"
#include "GpuStagedRows.h"

#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fuel;
using namespace mlir::fuel::attention;

namespace {
/// Which gradient a backward computes.
enum class Grad { Q, K, V };

/// A backward's operands and params.
struct Backward {
  Grad grad;
  Value q, k, v, dout;
  std::optional<Value> alibi;
  BlockParams bp;

  static std::optional<Backward> of(FusedOp op) {
    auto params = [](auto view) {
      return BlockParams{view.getSoftmaxScale(), view.getCausal(),
                         view.getWindowSizeLeft(), view.getWindowSizeRight(),
                         view.getSoftcap(), Value(), Value()};
    };
    Backward w;
    if (auto view = FlashAttnBackwardQView::match(op)) {
      w.grad = Grad::Q;
      w.bp = params(*view);
    } else if (auto view = FlashAttnBackwardKView::match(op)) {
      w.grad = Grad::K;
      w.bp = params(*view);
    } else if (auto view = FlashAttnBackwardVView::match(op)) {
      w.grad = Grad::V;
      w.bp = params(*view);
    } else {
      return std::nullopt;
    }
    w.q = op->getOperand(0);
    w.k = op->getOperand(1);
    w.v = op->getOperand(2);
    w.dout = op->getOperand(3);
    if (op->getNumOperands() > 4)
      w.alibi = op->getOperand(4);
    return w;
  }
};

/// The shapes of a staged backward: `rows` for the blocks of query rows
/// (the first pass over the keys; dq), `keys` for the blocks of key rows
/// of dk and dv (their query steps are `keys.blockQ` = 16).
struct StagedShapes {
  AttnShape rows, keys;
};
} // namespace

/// The staged shapes of `op`, when it has them: static shapes; query
/// blocks of stagedRows, in key steps of 16; for dk and dv, key blocks of
/// stagedRows, in query steps of 16; blocks canStageRows accepts with
/// heads up to options.maxStagedHeadDim (dv) or half of it (dq, dk).
static std::optional<StagedShapes>
stagedShapes(FusedOp op, const GpuScheduleOptions &options) {
  std::optional<Backward> w = Backward::of(op);
  if (!w || !hasStaticFloatShapes(op))
    return std::nullopt;
  StagedShapes shapes;
  AttnShape &s = shapes.rows;
  s = stagedRowsShape(w->q, w->k, w->v, /*keyRows=*/false);
  // dq and dk carry a row of D sums and read a row of k (dq) or v (dk)
  // besides the rows the scores need: heads half as wide as the forward's.
  // With D = 64 the staged dq needs 139 to 167 registers and no stack on
  // sm_90, but ptxas for sm_80 spills 0.7 to 2.9 KiB of it; so it does of
  // dk's second kernel (2.2 to 3 KiB, 128 registers). dv's state is the
  // forward's (a row of Dv sums): at the forward's widths it needs 142 to
  // 184 registers (D = 64, sm_80) and 199 to 227 (D = 128, sm_90), no
  // stack. The first pass alone (lse and D) needs 44 to 123.
  int64_t widest =
      options.maxStagedHeadDim / (w->grad == Grad::V ? 1 : 2);
  if (!canStageRows(s.blockQ, {s.d, s.dv}, widest, options))
    return std::nullopt;
  if (w->grad == Grad::Q)
    return shapes;
  AttnShape &keys = shapes.keys;
  keys = stagedRowsShape(w->q, w->k, w->v, /*keyRows=*/true);
  if (!canStageRows(keys.blockK, {keys.d, keys.dv}, widest, options))
    return std::nullopt;
  return shapes;
}

bool mlir::fuel::canStageGpuAttentionBackward(
    FusedOp op, const GpuScheduleOptions &options) {
  return stagedShapes(op, options).has_value();
}

/// What the first pass stages at each key block: the keys and the values,
/// both transposed.
static SmallVector<std::pair<Value, bool>> statsSteps(const Backward &w) {
  return {{w.k, true}, {w.v, true}};
}

/// The first pass of a backward in the block of query rows `g` opened (of
/// head g.hi): each row's lse and D over the key blocks it sees, written
/// into `lseInit` and `deltaInit` ([rows] each).
static std::pair<Value, Value> stagedStats(StagedRows &g, const Backward &w,
                                           const HeadParams &hp,
                                           Value lseInit, Value deltaInit) {
  const AttnShape &s = g.s;
  BlockBuilder &bb = g.bb;
  // Each row's running max, sum and E = sum exp(s - m) dp over the staged
  // keys and values (both transposed).
  SmallVector<Value> state =
      g.filledRows({{g.rows}, {g.rows}, {g.rows}}, {-INFINITY, 0.0, 0.0});
  auto [lo, hiKey] = keyRange(bb, s, hp.bp, g.row0, hp.off);
  auto stats = g.stepLoop(lo, hiKey, state, [&](Value j0, ValueRange carried) {
    SmallVector<Value> staged = g.stage(hp.kvHead, j0, s.sk, statsSteps(w));
    auto update = g.rowThreads(carried, [&](Value r, ValueRange mine) {
      Value i = arith::AddIOp::create(g.b, g.loc, g.row0, r);
      Value scores =
          maskBlock(bb, g.scoresRow(g.ownRow(w.q, g.hi, r, s.sq), staged[0]),
                    hp.bp, i, j0, hp.off);
      Value dp = g.scoresRow(g.ownRow(w.dout, g.hi, r, s.sq), staged[1]);
      StatsState next =
          statsUpdate(bb, scores, dp, {mine[0], mine[1], mine[2]});
      return SmallVector<Value>{next.m, next.l, next.e};
    });
    return SmallVector<Value>(update.getResults());
  });
  auto finish = g.rowThreads(
      {lseInit, deltaInit}, [&](Value r, ValueRange mine) {
        auto [lse, delta] = finishStats(bb, {g.rowOf(stats.getResult(0), r),
                                             g.rowOf(stats.getResult(1), r),
                                             g.rowOf(stats.getResult(2), r)});
        return SmallVector<Value>{lse, delta};
      });
  return {finish.getResult(0), finish.getResult(1)};
}

/// dq: the first pass, then dq += ds k over the key blocks again.
static Value buildStagedDq(RewriterBase &rewriter, FusedOp op,
                           const Backward &w, const AttnShape &s,
                           const GpuScheduleOptions &options) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  StagedRows g(rewriter, loc, s, s.blockQ);
  BlockBuilder &bb = g.bb;
  rewriter.setInsertionPoint(op);
  Value out = bb.empty({s.batch, s.heads, s.sqP, s.d}, type.getElementType());
  g.open(op, s.heads, s.sqP / s.blockQ, out);
  HeadParams hp =
      headParams(bb, w.bp, std::nullopt, w.alibi, s, g.bi, g.hi);
  // The block's rows of q and do, read at every step of both passes. The
  // first pass's key and value tiles share the second's buffers (tiles of
  // the same types in loops one after the other; fuel-gpu-private-allocs).
  SmallVector<std::pair<Value, bool>> steps = {
      {w.k, true}, {w.v, true}, {w.k, false}};
  g.stageOwnRows(
      {w.q, w.dout}, g.hi, s.sq,
      std::max(g.stageBytes(statsSteps(w)), g.stageBytes(steps)),
      options.maxOwnRowsBlockBytes);
  auto [lse, delta] = stagedStats(g, w, hp, bb.empty({s.blockQ}, g.f32),
                                  bb.empty({s.blockQ}, g.f32));

  // dq += ds k over the staged keys (transposed for the scores, as they are
  // for ds k) and values (transposed).
  Value zero = g.filledRows({{s.blockQ, s.d}}, {0.0})[0];
  auto [lo, hiKey] = keyRange(bb, s, hp.bp, g.row0, hp.off);
  auto grads = g.stepLoop(lo, hiKey, zero, [&](Value j0, ValueRange carried) {
    SmallVector<Value> staged = g.stage(hp.kvHead, j0, s.sk, steps);
    auto update = g.rowThreads(carried, [&](Value r, ValueRange mine) {
      Value i = arith::AddIOp::create(g.b, loc, g.row0, r);
      Value scores =
          maskBlock(bb, g.scoresRow(g.ownRow(w.q, g.hi, r, s.sq), staged[0]),
                    hp.bp, i, j0, hp.off);
      Value p = blockProbs(bb, scores, g.rowOf(lse, r));
      Value dp = g.scoresRow(g.ownRow(w.dout, g.hi, r, s.sq), staged[1]);
      Value ds = blockDs(bb, hp.bp, p, dp, g.rowOf(delta, r), scores, i, j0,
                         hp.off);
      return SmallVector<Value>{bb.matmul(ds, staged[2], mine[0])};
    });
    return SmallVector<Value>(update.getResults());
  });

  // Each row's dq, in the result's type, into the block's rows.
  Value dq = grads.getResult(0);
  Value finish = g.writeRows(0, [&](Value r, Value mine) {
    return finishTile(g.b, loc, g.rowOf(dq, r), mine);
  });
  return g.close(finish)[0];
}

/// dk or dv: lse and D of every query row from a kernel of their own, then
/// a thread per key row over the query blocks that see its block.
static Value buildStagedDkDv(RewriterBase &rewriter, FusedOp op,
                             const Backward &w, const StagedShapes &shapes,
                             const GpuScheduleOptions &options) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op->getResult(0).getType());

  // lse and D of every query row, [B, Hq, SqP] each.
  const AttnShape &sr = shapes.rows;
  StagedRows st(rewriter, loc, sr, sr.blockQ);
  rewriter.setInsertionPoint(op);
  Value lseAll = st.bb.empty({sr.batch, sr.heads, sr.sqP}, st.f32);
  Value deltaAll = st.bb.empty({sr.batch, sr.heads, sr.sqP}, st.f32);
  st.open(op, sr.heads, sr.sqP / sr.blockQ, {lseAll, deltaAll});
  HeadParams statsHead =
      headParams(st.bb, w.bp, std::nullopt, w.alibi, sr, st.bi, st.hi);
  st.stageOwnRows({w.q, w.dout}, st.hi, sr.sq, st.stageBytes(statsSteps(w)),
                  options.maxOwnRowsBlockBytes);
  auto [lse, delta] =
      stagedStats(st, w, statsHead, st.blockRows(0), st.blockRows(1));
  ValueRange stats = st.close({lse, delta});
  Value lseT = stats[0], deltaT = stats[1];

  // A thread per key row of the block, over the query heads of its kv head
  // and their query blocks that see the block's keys.
  const AttnShape &s = shapes.keys;
  int64_t group = s.heads / s.kvHeads;
  int64_t width = w.grad == Grad::K ? s.d : s.dv;
  StagedRows g(rewriter, loc, s, s.blockK);
  BlockBuilder &bb = g.bb;
  RewriterBase &b = g.b;
  Value out = bb.empty({s.batch, s.kvHeads, s.skP, width},
                       type.getElementType());
  g.open(op, s.kvHeads, s.skP / s.blockK, out);
  Value zero = g.filledRows({{s.blockK, width}}, {0.0})[0];
  // Queries and do transposed (the scores, dp) and as they are (the sums:
  // dk += ds q, dv += p do), at each query block; the block's rows of k
  // (and v, for dk's dp), read at every step, staged once.
  SmallVector<std::pair<Value, bool>> operands = {{w.q, true}};
  SmallVector<Value> own = {w.k};
  if (w.grad == Grad::K) {
    operands.append({{w.dout, true}, {w.q, false}});
    own.push_back(w.v);
  } else {
    operands.push_back({w.dout, false});
  }
  g.stageOwnRows(own, g.hi, s.sk, g.stageBytes(operands),
                 options.maxOwnRowsBlockBytes);
  Value firstHead = arith::MulIOp::create(b, loc, g.hi, bb.index(group));
  auto heads = g.stepLoop(
      bb.index(0), bb.index(group), zero,
      [&](Value hg, ValueRange acc) {
        Value h = arith::AddIOp::create(b, loc, firstHead, hg);
        HeadParams hp = headParams(bb, w.bp, std::nullopt, w.alibi, s, g.bi, h);
        auto [qlo, qhi] = queryRange(bb, s, hp.bp, g.row0, hp.off);
        // The block's rows of lse and D ([16] each) at query i0.
        auto rowsAt = [&](Value t, Value i0) -> Value {
          OpFoldResult one = b.getIndexAttr(1);
          return tensor::ExtractSliceOp::create(
              b, loc, RankedTensorType::get({kStagedKeys}, g.f32), t,
              SmallVector<OpFoldResult>{g.bi, h, i0},
              SmallVector<OpFoldResult>{one, one,
                                        b.getIndexAttr(kStagedKeys)},
              SmallVector<OpFoldResult>(3, one));
        };
        auto queries = g.stepLoop(qlo, qhi, acc, [&](Value i0,
                                                     ValueRange carried) {
          SmallVector<Value> staged = g.stage(h, i0, s.sq, operands);
          Value lseRows = rowsAt(lseT, i0);
          Value deltaRows = w.grad == Grad::K ? rowsAt(deltaT, i0) : Value();
          auto update = g.rowThreads(carried, [&](Value r, ValueRange mine) {
            Value j = arith::AddIOp::create(b, loc, g.row0, r);
            Value kRow = g.ownRow(w.k, g.hi, r, s.sk);
            Value scores = maskBlock(bb, g.scoresRow(kRow, staged[0]), hp.bp,
                                     i0, j, hp.off, /*keysByRow=*/true);
            Value p = blockProbs(bb, scores, lseRows, /*keysByRow=*/true);
            if (w.grad == Grad::V)
              return SmallVector<Value>{bb.matmul(p, staged[1], mine[0])};
            Value dp =
                g.scoresRow(g.ownRow(w.v, g.hi, r, s.sk), staged[1]);
            Value ds = blockDs(bb, hp.bp, p, dp, deltaRows, scores, i0, j,
                               hp.off, /*keysByRow=*/true);
            return SmallVector<Value>{bb.matmul(ds, staged[2], mine[0])};
          });
          return SmallVector<Value>(update.getResults());
        });
        return SmallVector<Value>(queries.getResults());
      },
      /*step=*/1);

  // Each row's dk or dv, in the result's type, into the block's rows.
  Value grads = heads.getResult(0);
  Value finish = g.writeRows(0, [&](Value r, Value mine) {
    return finishTile(b, loc, g.rowOf(grads, r), mine);
  });
  return g.close(finish)[0];
}

LogicalResult mlir::fuel::buildGpuStagedAttentionBackward(
    RewriterBase &rewriter, FusedOp op, const GpuScheduleOptions &options) {
  std::optional<StagedShapes> shapes = stagedShapes(op, options);
  assert(shapes && "not a backward canStageGpuAttentionBackward accepts");
  Backward w = *Backward::of(op);
  OpBuilder::InsertionGuard guard(rewriter);
  Value padded = w.grad == Grad::Q
                     ? buildStagedDq(rewriter, op, w, shapes->rows, options)
                     : buildStagedDkDv(rewriter, op, w, *shapes, options);
  rewriter.replaceOp(
      op, sliceToResult(rewriter, op.getLoc(), padded,
                        cast<RankedTensorType>(op->getResult(0).getType())));
  return success();
}
