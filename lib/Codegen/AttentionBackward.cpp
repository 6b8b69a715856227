//===- AttentionBackward.cpp - The attention schedule, backwards ---------===//
//
// The backwards (flash_attn_backward_q/k/v), FlashAttention-2's backward:
// per query row, lse = log sum_j exp(s_ij) and D_i = sum_j p_ij dp_ij (dp
// = do v^T) are computed in a first pass over the key blocks (online, as
// the forward's max and sum); then p = exp(s - lse) is recomputed block by
// block, ds = p * (dp - D) (times 1 - tanh^2 through a softcap, and the
// scale), and dq += ds k (per query block, over its key blocks), dk += ds^T
// q and dv += p^T do (per key block, over the query blocks and the query
// heads of its kv head that see it, lse and D read from a [B, Hq, Sq]
// tensor the first pass writes). Memory O(S * D); padding as in the
// forward, and as there Sq and Sk may be dynamic (padded at run time).
//
//===----------------------------------------------------------------------===//

#include "Attention.h"
#include "AttentionBlocks.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fuel;
using namespace mlir::fuel::attention;

namespace {
/// The operands of a backward, in f32 and padded: q [B, Hq, SqP, DP], kT
/// [B, Hkv, DP, SkP], k [B, Hkv, SkP, DP], vT [B, Hkv, DvP, SkP], dout [B,
/// Hq, SqP, DvP].
struct BwdOperands {
  Value q, kT, k, vT, dout;
};
} // namespace

Value attention::blockProbs(BlockBuilder &bb, Value scores, Value lse,
                           bool keysByRow) {
  Type f32 = bb.b.getF32Type();
  auto shape = cast<RankedTensorType>(scores.getType()).getShape();
  Value negInf = bb.constF(-INFINITY), zero = bb.constF(0.0);
  return bb.generic(
      2,
      {{scores, bb.map(2, {0, 1})},
       {lse, bb.map(2, {keysByRow ? 1u : 0u})}},
      bb.empty(shape, f32), bb.map(2, {0, 1}), {},
      [&](OpBuilder &nb, Location nl, ValueRange x) -> Value {
        Value masked = arith::CmpFOp::create(
            nb, nl, arith::CmpFPredicate::OEQ, x[0], negInf);
        Value e = math::ExpOp::create(
            nb, nl, arith::SubFOp::create(nb, nl, x[0], x[1]));
        return arith::SelectOp::create(nb, nl, masked, zero, e);
      });
}

Value attention::blockDs(BlockBuilder &bb, const BlockParams &bp, Value p,
                        Value dp, Value delta, Value scores, Value i0,
                        Value j0, Value off, bool keysByRow) {
  Type f32 = bb.b.getF32Type();
  auto shape = cast<RankedTensorType>(p.getType()).getShape();
  Value negInf = bb.constF(-INFINITY), zero = bb.constF(0.0),
        one = bb.constF(1.0), scale = bb.constF(bp.scale);
  Value cap = bp.softcap ? bb.constF(*bp.softcap) : Value();
  return bb.generic(
      2,
      {{p, bb.map(2, {0, 1})},
       {dp, bb.map(2, {0, 1})},
       {delta, bb.map(2, {keysByRow ? 1u : 0u})},
       {scores, bb.map(2, {0, 1})}},
      bb.empty(shape, f32), bb.map(2, {0, 1}), {},
      [&](OpBuilder &nb, Location nl, ValueRange x) -> Value {
        Value g = arith::MulFOp::create(
            nb, nl, x[0], arith::SubFOp::create(nb, nl, x[1], x[2]));
        if (cap) {
          // The scores are cap * tanh(.) less any ALiBi bias (which does
          // not depend on q or k); s's derivative is 1 - tanh^2.
          Value capped = x[3];
          if (bp.slope) {
            auto [diag, j] = diagonalAndKey(nb, nl, i0, j0, off, keysByRow);
            capped = arith::AddFOp::create(
                nb, nl, capped, alibiDistance(nb, nl, bp.slope, diag, j));
          }
          Value t = arith::DivFOp::create(nb, nl, capped, cap);
          g = arith::MulFOp::create(
              nb, nl, g,
              arith::SubFOp::create(nb, nl, one,
                                    arith::MulFOp::create(nb, nl, t, t)));
        }
        g = arith::MulFOp::create(nb, nl, g, scale);
        Value masked = arith::CmpFOp::create(
            nb, nl, arith::CmpFPredicate::OEQ, x[3], negInf);
        return arith::SelectOp::create(nb, nl, masked, zero, g);
      });
}

StatsState attention::statsUpdate(BlockBuilder &bb, Value scores, Value dp,
                                  StatsState state) {
  auto shape = cast<RankedTensorType>(scores.getType()).getShape();
  Type f32 = bb.b.getF32Type();
  AffineMap full = bb.map(2, {0, 1}), row = bb.map(2, {0});
  OnlineStep step = onlineSoftmaxStep(bb, scores, state.m);
  Value pdp = bb.generic(
      2, {{step.p, full}, {dp, full}}, bb.empty(shape, f32), full, {},
      [](OpBuilder &nb, Location l2, ValueRange x) -> Value {
        return arith::MulFOp::create(nb, l2, x[0], x[1]);
      });
  auto addRows = [&](Value x, Value init) {
    return bb.generic(2, {{x, full}}, init, row, {1},
                      [](OpBuilder &nb, Location l2, ValueRange a) -> Value {
                        return arith::AddFOp::create(nb, l2, a[0], a[1]);
                      });
  };
  Value lNew = addRows(step.p, scaleRows(bb, state.l, step.alpha));
  Value eNew = addRows(pdp, scaleRows(bb, state.e, step.alpha));
  return {step.mNew, lNew, eNew};
}

std::pair<Value, Value> attention::finishStats(BlockBuilder &bb,
                                               StatsState state) {
  Type f32 = bb.b.getF32Type();
  auto shape = cast<RankedTensorType>(state.m.getType()).getShape();
  AffineMap vec = bb.map(1, {0});
  Value zeroF = bb.constF(0.0), inf = bb.constF(INFINITY);
  // Rows that see no key: lse = +inf (p = 0), D = 0.
  Value lse = bb.generic(
      1, {{state.m, vec}, {state.l, vec}}, bb.empty(shape, f32), vec, {},
      [&](OpBuilder &nb, Location nl, ValueRange x) -> Value {
        Value seen = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGT,
                                           x[1], zeroF);
        Value v = arith::AddFOp::create(nb, nl, x[0],
                                        math::LogOp::create(nb, nl, x[1]));
        return arith::SelectOp::create(nb, nl, seen, v, inf);
      });
  Value delta = bb.generic(
      1, {{state.e, vec}, {state.l, vec}}, bb.empty(shape, f32), vec, {},
      [&](OpBuilder &nb, Location nl, ValueRange x) -> Value {
        Value seen = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGT,
                                           x[1], zeroF);
        return arith::SelectOp::create(
            nb, nl, seen, arith::DivFOp::create(nb, nl, x[0], x[1]), zeroF);
      });
  return {lse, delta};
}

/// lse and D ([Bq]) of the query block at i0 of head h: a pass over the
/// key blocks it sees with a running max m, sum l and E = sum exp(s - m) dp.
static std::pair<Value, Value>
rowStats(BlockBuilder &bb, const AttnShape &s, const BlockParams &bp,
         const BwdOperands &in, Value bi, Value h, Value kvHead, Value i0,
         Value off) {
  OpBuilder &rw = bb.b;
  Location loc = bb.loc;
  Type f32 = rw.getF32Type();
  auto zeroA = rw.getIndexAttr(0);
  Value qBlock = bb.block(in.q, bi, h, i0, zeroA, s.blockQ, s.dP);
  Value doBlock = bb.block(in.dout, bi, h, i0, zeroA, s.blockQ, s.dvP);
  auto [lo, hiKey] = keyRange(bb, s, bp, i0, off);
  Value m0 = bb.full({s.blockQ}, f32, -INFINITY);
  Value l0 = bb.full({s.blockQ}, f32, 0.0);
  Value e0 = bb.full({s.blockQ}, f32, 0.0);
  auto loop = scf::ForOp::create(
      rw, loc, lo, hiKey, bb.index(s.blockK), ValueRange{m0, l0, e0},
      [&](OpBuilder &b, Location nl, Value j0, ValueRange carried) {
        BlockBuilder kb{b, nl};
        Value m = carried[0], l = carried[1], e = carried[2];
        Value kBlock = kb.block(in.kT, bi, kvHead, b.getIndexAttr(0), j0,
                                s.dP, s.blockK);
        Value vTBlock = kb.block(in.vT, bi, kvHead, b.getIndexAttr(0), j0,
                                 s.dvP, s.blockK);
        Value scores = maskBlock(
            kb,
            kb.matmul(qBlock, kBlock, kb.full({s.blockQ, s.blockK}, f32, 0.0)),
            bp, i0, j0, off);
        Value dp = kb.matmul(doBlock, vTBlock,
                             kb.full({s.blockQ, s.blockK}, f32, 0.0));
        StatsState next = statsUpdate(kb, scores, dp, {m, l, e});
        scf::YieldOp::create(b, nl, ValueRange{next.m, next.l, next.e});
      });
  return finishStats(bb, {loop.getResult(0), loop.getResult(1),
                         loop.getResult(2)});
}

LogicalResult mlir::fuel::canScheduleAttentionBackward(
    FusedOp op, const ScheduleOptions &options, std::string &why) {
  // q, k, v, do; Sq (dim 2 of q, do and dq) and Sk (of k, v, dk and dv)
  // may be dynamic.
  ValueRange floats = op->getOperands().take_front(4);
  if (failed(checkStaticButLengths(op, 4, why)))
    return failure();
  return checkAttention(floats, floats[0], floats[1], floats[2],
                        options.vectorWidth, why);
}

/// The backward's params (one schema for the three) and operands.
template <typename View>
static BlockParams bwdParams(View view) {
  return BlockParams{view.getSoftmaxScale(), view.getCausal(),
                     view.getWindowSizeLeft(), view.getWindowSizeRight(),
                     view.getSoftcap()};
}

/// [n] of a [B, H, S] tensor at (bi, h, i0).
static Value rowsOf(OpBuilder &b, Location loc, Value t, Value bi, Value h,
                    Value i0, int64_t n) {
  auto one = b.getIndexAttr(1);
  Type elt = cast<RankedTensorType>(t.getType()).getElementType();
  return tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({n}, elt),
      t, SmallVector<OpFoldResult>{bi, h, i0},
      SmallVector<OpFoldResult>{one, one, b.getIndexAttr(n)},
      SmallVector<OpFoldResult>(3, one));
}

/// Builds FlashAttention-2's backward of `op` on the blocks of `s` and
/// replaces `op` by it. Each scf.forall over blocks is passed to `schedule`
/// as soon as it is built, with, when `rowStep` is not 0, the scf.forall
/// over the rows of its block inside (null otherwise): a row is a query for
/// dq and the row statistics, a key for dk and dv. A row of statistics
/// then takes steps of `rowStep` keys (the key blocks of dk and dv are the
/// threads of a block).
static void buildBackwardLoops(
    RewriterBase &rewriter, FusedOp op, AttnShape s, int64_t rowStep,
    function_ref<void(scf::ForallOp, scf::ForallOp)> schedule) {
  bool threadPerRow = rowStep != 0;
  enum class Grad { Q, K, V } grad = FlashAttnBackwardQView::match(op)
                                         ? Grad::Q
                                         : FlashAttnBackwardKView::match(op)
                                               ? Grad::K
                                               : Grad::V;
  Value qIn = op->getOperand(0), kIn = op->getOperand(1),
        vIn = op->getOperand(2), doIn = op->getOperand(3);
  std::optional<Value> alibi;
  if (op->getNumOperands() > 4)
    alibi = op->getOperand(4);
  BlockParams bp = grad == Grad::Q   ? bwdParams(FlashAttnBackwardQView(op))
                   : grad == Grad::K ? bwdParams(FlashAttnBackwardKView(op))
                                     : bwdParams(FlashAttnBackwardVView(op));
  int64_t group = s.heads / s.kvHeads;
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  BlockBuilder bb{rewriter, loc};
  Type f32 = rewriter.getF32Type();
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  Type resElt = resultType.getElementType();

  // The operands in f32, padded with zeros to whole blocks (to lengths
  // computed here when they are dynamic). Padded queries add nothing to dk
  // and dv: their rows of do, so of dp and ds, are zeros.
  s.materialize(rewriter, loc, qIn, kIn);
  auto attr = [&](int64_t x) { return rewriter.getIndexAttr(x); };
  OpFoldResult sqP = s.qPadded(rewriter), skP = s.kPadded(rewriter);
  OpFoldResult batch = attr(s.batch), heads = attr(s.heads),
               kvHeads = attr(s.kvHeads);
  BwdOperands in;
  in.q = padTo(bb, toF32(bb, qIn), {batch, heads, sqP, attr(s.dP)});
  in.dout = padTo(bb, toF32(bb, doIn), {batch, heads, sqP, attr(s.dvP)});
  in.kT = padTo(bb, transposeKeys(bb, kIn), {batch, kvHeads, attr(s.dP), skP});
  in.vT = padTo(bb, transposeKeys(bb, vIn), {batch, kvHeads, attr(s.dvP), skP});
  if (grad == Grad::Q)
    in.k = padTo(bb, toF32(bb, kIn), {batch, kvHeads, skP, attr(s.dP)});
  // Keys past Sk are padding, masked; off = Sk - Sq aligns the causal
  // diagonal bottom-right.
  Value sk = s.skLen ? s.skLen : bb.index(s.sk);
  Value sq = s.sqLen ? s.sqLen : bb.index(s.sq);
  if (s.padsKeys())
    bp.kLen = sk;
  Value off = arith::SubIOp::create(rewriter, loc, sk, sq);
  OpFoldResult qBlocks = s.qBlocks(rewriter, loc);
  OpFoldResult kBlocks = s.kBlocks(rewriter, loc);
  // The result without its padding.
  auto unpadded = [&](Value padded) {
    SmallVector<Value> dynamicSizes;
    if (resultType.isDynamicDim(2))
      dynamicSizes.push_back(grad == Grad::Q ? s.sqLen : s.skLen);
    return sliceToResult(rewriter, loc, padded, resultType, dynamicSizes);
  };
  auto slopeOf = [&](OpBuilder &b, Value bi, Value h) -> Value {
    if (!alibi)
      return Value();
    SmallVector<Value> at;
    if (cast<RankedTensorType>(alibi->getType()).getRank() == 2)
      at.push_back(bi);
    at.push_back(h);
    return tensor::ExtractOp::create(b, loc, *alibi, at);
  };
  // `x` ([n, cols], f32) in the result's element type.
  auto toResult = [&](Value x) -> Value {
    if (resElt == f32)
      return x;
    auto shape = cast<RankedTensorType>(x.getType()).getShape();
    return bb.generic(2, {{x, bb.map(2, {0, 1})}}, bb.empty(shape, resElt),
                      bb.map(2, {0, 1}), {},
                      [&](OpBuilder &nb, Location nl, ValueRange v) -> Value {
                        return arith::TruncFOp::create(nb, nl, resElt, v[0]);
                      });
  };
  auto add = [&](Value a, Value b) -> Value {
    return arith::AddIOp::create(rewriter, loc, a, b);
  };
  auto one = rewriter.getIndexAttr(1), zeroA = rewriter.getIndexAttr(0);
  SmallVector<OpFoldResult> ones(4, one);
  // Per row, `sr` is `s` with blocks of one query (one key).
  AttnShape oneQuery = s, oneKey = s;
  oneQuery.blockQ = 1;
  oneKey.blockK = 1;
  if (threadPerRow)
    oneQuery.blockK = std::min(s.blockK, rowStep);

  // The gradient of the block of `rows` rows from `start` of head (bi, h),
  // [rows, cols]: `compute(start, s)` on a CPU; with a thread per row,
  // `compute(start + r, oneRow)` in an scf.forall over the rows that writes
  // `out`'s (the block loop's output's) part.
  auto blockOrRows =
      [&](Value out, Value bi, Value h, Value start, int64_t rows, int64_t cols,
          const AttnShape &oneRow,
          function_ref<Value(Value, const AttnShape &)> compute)
      -> std::pair<Value, scf::ForallOp> {
    if (!threadPerRow)
      return {compute(start, s), scf::ForallOp()};
    Value init = bb.block(out, bi, h, start, zeroA, rows, cols, resElt);
    scf::ForallOp loop = rowForall(rewriter, loc, rows, init,
                                   [&](Value r) -> SmallVector<Value> {
                                     return {compute(add(start, r), oneRow)};
                                   });
    return {loop.getResult(0), loop};
  };

  if (grad == Grad::Q) {
    Value out = tensor::EmptyOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{batch, heads, sqP, attr(s.dP)}, resElt);
    auto forall = scf::ForallOp::create(
        rewriter, loc, SmallVector<OpFoldResult>{batch, heads, qBlocks},
        ValueRange{out}, std::nullopt);
    Block *body = forall.getBody();
    rewriter.setInsertionPointToStart(body);
    Value bi = body->getArgument(0), hi = body->getArgument(1);
    Value i0 = arith::MulIOp::create(rewriter, loc, body->getArgument(2),
                                     bb.index(s.blockQ));
    Value kvHead = arith::DivUIOp::create(rewriter, loc, hi, bb.index(group));
    BlockParams hp = bp;
    hp.slope = slopeOf(rewriter, bi, hi);
    // dq of the queries [iStart, iStart + sr.blockQ): their lse and D,
    // then dq += ds k over the key blocks they see.
    auto computeDq = [&](Value iStart, const AttnShape &sr) -> Value {
      auto [lse, delta] = rowStats(bb, sr, hp, in, bi, hi, kvHead, iStart, off);
      Value qBlock = bb.block(in.q, bi, hi, iStart, zeroA, sr.blockQ, s.dP);
      Value doBlock =
          bb.block(in.dout, bi, hi, iStart, zeroA, sr.blockQ, s.dvP);
      auto [lo, hiKey] = keyRange(bb, sr, hp, iStart, off);
      auto loop = scf::ForOp::create(
          rewriter, loc, lo, hiKey, bb.index(s.blockK),
          ValueRange{bb.full({sr.blockQ, s.dP}, f32, 0.0)},
          [&](OpBuilder &b, Location nl, Value j0, ValueRange acc) {
            BlockBuilder kb{b, nl};
            Value kBlock = kb.block(in.kT, bi, kvHead, b.getIndexAttr(0), j0,
                                    s.dP, s.blockK);
            Value vTBlock = kb.block(in.vT, bi, kvHead, b.getIndexAttr(0),
                                     j0, s.dvP, s.blockK);
            Value kNat = kb.block(in.k, bi, kvHead, j0, b.getIndexAttr(0),
                                  s.blockK, s.dP);
            Value scores = maskBlock(
                kb,
                kb.matmul(qBlock, kBlock,
                          kb.full({sr.blockQ, s.blockK}, f32, 0.0)),
                hp, iStart, j0, off);
            Value p = blockProbs(kb, scores, lse);
            Value dp = kb.matmul(doBlock, vTBlock,
                                 kb.full({sr.blockQ, s.blockK}, f32, 0.0));
            Value ds = blockDs(kb, hp, p, dp, delta, scores, iStart, j0, off);
            scf::YieldOp::create(b, nl, kb.matmul(ds, kNat, acc[0]));
          });
      return toResult(loop.getResult(0));
    };
    auto [dq, rows] = blockOrRows(body->getArgument(3), bi, hi, i0, s.blockQ,
                                  s.dP, oneQuery, computeDq);
    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(
        rewriter, loc, dq, body->getArgument(3),
        SmallVector<OpFoldResult>{bi, hi, i0, zeroA},
        SmallVector<OpFoldResult>{one, one, attr(s.blockQ), attr(s.dP)}, ones);
    rewriter.setInsertionPointAfter(forall);
    schedule(forall, rows);
    rewriter.setInsertionPointAfter(forall);
    rewriter.replaceOp(op, unpadded(forall.getResult(0)));
    return;
  }

  // dk, dv: the rows' lse and D for every query first; with a thread per
  // row, in blocks of up to a warp of rows (the fewest threads a block can
  // have), not of the query steps of dk and dv. Sq is then static.
  int64_t statsRows =
      threadPerRow ? attention::tileOf(s.sqP, 32, s.blockQ) : s.blockQ;
  OpFoldResult statsBlocks =
      threadPerRow ? OpFoldResult(attr(s.sqP / statsRows)) : qBlocks;
  Value lseAll = tensor::EmptyOp::create(
      rewriter, loc, ArrayRef<OpFoldResult>{batch, heads, sqP}, f32);
  Value deltaAll = tensor::EmptyOp::create(
      rewriter, loc, ArrayRef<OpFoldResult>{batch, heads, sqP}, f32);
  auto statsLoop = scf::ForallOp::create(
      rewriter, loc, SmallVector<OpFoldResult>{batch, heads, statsBlocks},
      ValueRange{lseAll, deltaAll}, std::nullopt);
  {
    Block *body = statsLoop.getBody();
    rewriter.setInsertionPointToStart(body);
    Value bi = body->getArgument(0), hi = body->getArgument(1);
    Value i0 = arith::MulIOp::create(rewriter, loc, body->getArgument(2),
                                     bb.index(statsRows));
    Value kvHead = arith::DivUIOp::create(rewriter, loc, hi, bb.index(group));
    BlockParams hp = bp;
    hp.slope = slopeOf(rewriter, bi, hi);
    Value lse, delta;
    scf::ForallOp rows;
    if (!threadPerRow) {
      std::tie(lse, delta) = rowStats(bb, s, hp, in, bi, hi, kvHead, i0, off);
    } else {
      Value inits[] = {
          rowsOf(rewriter, loc, body->getArgument(3), bi, hi, i0, statsRows),
          rowsOf(rewriter, loc, body->getArgument(4), bi, hi, i0, statsRows)};
      rows = rowForall(rewriter, loc, statsRows, inits,
                       [&](Value r) -> SmallVector<Value> {
                         auto [l, d] = rowStats(bb, oneQuery, hp, in, bi, hi,
                                                kvHead, add(i0, r), off);
                         return {l, d};
                       });
      lse = rows.getResult(0);
      delta = rows.getResult(1);
    }
    rewriter.setInsertionPointToStart(statsLoop.getTerminator().getBody());
    SmallVector<OpFoldResult> at = {bi, hi, i0},
                              sizes = {one, one, attr(statsRows)};
    tensor::ParallelInsertSliceOp::create(rewriter, loc, lse,
                                          body->getArgument(3), at, sizes,
                                          SmallVector<OpFoldResult>(3, one));
    tensor::ParallelInsertSliceOp::create(rewriter, loc, delta,
                                          body->getArgument(4), at, sizes,
                                          SmallVector<OpFoldResult>(3, one));
    rewriter.setInsertionPointAfter(statsLoop);
    schedule(statsLoop, rows);
  }
  rewriter.setInsertionPointAfter(statsLoop);
  Value lseT = statsLoop.getResult(0), deltaT = statsLoop.getResult(1);

  int64_t width = grad == Grad::K ? s.dP : s.dvP;
  Value out = tensor::EmptyOp::create(
      rewriter, loc, ArrayRef<OpFoldResult>{batch, kvHeads, skP, attr(width)},
      resElt);
  auto forall = scf::ForallOp::create(
      rewriter, loc, SmallVector<OpFoldResult>{batch, kvHeads, kBlocks},
      ValueRange{out}, std::nullopt);
  Block *body = forall.getBody();
  rewriter.setInsertionPointToStart(body);
  Value bi = body->getArgument(0), hk = body->getArgument(1);
  Value j0 = arith::MulIOp::create(rewriter, loc, body->getArgument(2),
                                   bb.index(s.blockK));
  Value zero = bb.index(0);
  // dk or dv of the keys [jStart, jStart + sr.blockK): over the query
  // blocks that see them, of every query head of their kv head.
  auto computeGrads = [&](Value jStart, const AttnShape &sr) -> Value {
    Value kBlock = bb.block(in.kT, bi, hk, zeroA, jStart, s.dP, sr.blockK);
    Value vTBlock = bb.block(in.vT, bi, hk, zeroA, jStart, s.dvP, sr.blockK);
    // The query blocks that see these keys.
    AttnShape keys = s;
    keys.blockK = sr.blockK;
    auto [qlo, qhi] = queryRange(bb, keys, bp, jStart, off);
    Value bq = bb.index(s.blockQ);
    auto groupHeads = scf::ForOp::create(
        rewriter, loc, zero, bb.index(group), bb.index(1),
        ValueRange{bb.full({sr.blockK, width}, f32, 0.0)},
        [&](OpBuilder &b, Location nl, Value g, ValueRange acc) {
          Value h = arith::AddIOp::create(
              b, nl, arith::MulIOp::create(b, nl, hk, bb.index(group)), g);
          BlockParams hp = bp;
          hp.slope = slopeOf(b, bi, h);
          auto queries = scf::ForOp::create(
              b, nl, qlo, qhi, bq, acc,
              [&](OpBuilder &b2, Location l2, Value i0, ValueRange acc2) {
                BlockBuilder qb{b2, l2};
                auto zA = b2.getIndexAttr(0);
                Value qBlock = qb.block(in.q, bi, h, i0, zA, s.blockQ, s.dP);
                Value doBlock =
                    qb.block(in.dout, bi, h, i0, zA, s.blockQ, s.dvP);
                Value scores = maskBlock(
                    qb,
                    qb.matmul(qBlock, kBlock,
                              qb.full({s.blockQ, sr.blockK}, f32, 0.0)),
                    hp, i0, jStart, off);
                Value p = blockProbs(
                    qb, scores, rowsOf(b2, l2, lseT, bi, h, i0, s.blockQ));
                Value next;
                if (grad == Grad::V) {
                  next = qb.matmulT(p, doBlock, acc2[0]);
                } else {
                  Value dp = qb.matmul(
                      doBlock, vTBlock,
                      qb.full({s.blockQ, sr.blockK}, f32, 0.0));
                  Value ds = blockDs(
                      qb, hp, p, dp,
                      rowsOf(b2, l2, deltaT, bi, h, i0, s.blockQ), scores,
                      i0, jStart, off);
                  next = qb.matmulT(ds, qBlock, acc2[0]);
                }
                scf::YieldOp::create(b2, l2, next);
              });
          scf::YieldOp::create(b, nl, queries.getResults());
        });
    return toResult(groupHeads.getResult(0));
  };
  auto [grads, rows] = blockOrRows(body->getArgument(3), bi, hk, j0, s.blockK,
                                   width, oneKey, computeGrads);
  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(
      rewriter, loc, grads, body->getArgument(3),
      SmallVector<OpFoldResult>{bi, hk, j0, zeroA},
      SmallVector<OpFoldResult>{one, one, attr(s.blockK), attr(width)}, ones);
  rewriter.setInsertionPointAfter(forall);
  schedule(forall, rows);
  rewriter.setInsertionPointAfter(forall);
  rewriter.replaceOp(op, unpadded(forall.getResult(0)));
}

LogicalResult mlir::fuel::buildAttentionBackward(
    RewriterBase &rewriter, FusedOp op, const ScheduleOptions &options) {
  AttnShape s = AttnShape::of(op->getOperand(0), op->getOperand(1),
                              op->getOperand(2));
  buildBackwardLoops(rewriter, op, s, /*rowStep=*/0,
                     [&](scf::ForallOp blocks, scf::ForallOp) {
                       scheduleBlocks(rewriter, blocks, s.regN,
                                      registerTile(options));
                     });
  return success();
}

AttnShape attention::backwardRowsShape(FusedOp op, int64_t step) {
  AttnShape s = AttnShape::of(op->getOperand(0), op->getOperand(1),
                              op->getOperand(2));
  if (FlashAttnBackwardQView::match(op)) {
    s.blockK = blockFor(s.sk, step, step);
    s.skP = roundUp(s.sk, s.blockK);
  } else {
    s.blockQ = blockFor(s.sq, step, kRegM);
    s.sqP = roundUp(s.sq, s.blockQ);
  }
  return s;
}

void mlir::fuel::buildAttentionBackwardRows(
    RewriterBase &rewriter, FusedOp op, int64_t step,
    function_ref<void(scf::ForallOp, scf::ForallOp)> schedule) {
  buildBackwardLoops(rewriter, op, backwardRowsShape(op, step), step,
                     schedule);
}
