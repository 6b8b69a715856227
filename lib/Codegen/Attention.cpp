//===- Attention.cpp - The attention schedule -----------------------------===//
//
// flash_attn as FlashAttention-2 computes it: the queries in blocks of
// `Bq` rows (one scf.forall iteration per batch, head and query block), the
// keys in blocks of `Bk` (an scf.for), with an online softmax: per query
// row a running max `m`, a running sum `l` and an accumulator `acc` carried
// across key blocks,
//   s = mask(scale * q_blk @ k_blk^T)          [Bq, Bk]
//   m' = max(m, rowmax(s)); p = exp(s - m'); alpha = exp(m - m')
//   l' = alpha * l + rowsum(p); acc' = alpha * acc + p @ v_blk
// and o = acc / l after the last block (0 on rows no key is visible to).
// No [Sq, Sk] score tensor exists: memory is O(S * D) per head, the score
// block lives in L1. Causal and windowed attention visit only the key
// blocks some query of the block sees.
//
// This is a different algorithm from the op's decomposition (a softmax
// over whole rows of scores), which no tiling transform of that
// decomposition reaches (upstream 22.1.8 has no online-softmax rewrite of
// linalg), so the schedule builds the tiled form itself, as linalg on small
// static tensors, and then tiles and vectorizes it like the other
// schedules: the two contractions of a key block in register tiles, the
// row steps one row at a time in vectors. The keys are transposed once
// ([B, Hkv, D, Sk]) so that both contractions read rows of their second
// operand; f16 and bf16 operands are widened to f32 once, outside the loops.
//
//===----------------------------------------------------------------------===//

#include "Attention.h"
#include "AttentionBlocks.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fuel;
using namespace mlir::fuel::attention;

LogicalResult mlir::fuel::canScheduleAttention(FusedOp op,
                                               const ScheduleOptions &options,
                                               std::string &why) {
  FlashAttnView attn(op);
  Value q = attn.getQ(), k = attn.getK(), v = attn.getV();
  // The sequence lengths (dim 2 of q, k, v and the result) may be dynamic;
  // batch, heads, head dims and the other operands are static.
  if (failed(checkStaticButLengths(op, 3, why)))
    return failure();
  return checkAttention({q, k, v}, q, k, v, options.vectorWidth, why);
}

/// Builds flash_attn's FlashAttention-2 form with the block sizes of `s`
/// and replaces `op` by it; returns the scf.forall over (batch, head, query
/// block). With `threadPerRow`, the rows of a query block are the
/// iterations of an inner scf.forall, each row's key loop its own (the GPU
/// form: a thread per query row), returned second.
static std::pair<scf::ForallOp, scf::ForallOp>
buildAttentionLoops(RewriterBase &rewriter, FusedOp op, AttnShape s,
                    bool threadPerRow) {
  FlashAttnView attn(op);
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  BlockBuilder bb{rewriter, loc};
  Type f32 = rewriter.getF32Type();
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());

  // Outside the loops: q and v in f32, k transposed (and in f32), each
  // padded with zeros to whole blocks and head dims of 16 (to a length
  // computed here when it is dynamic).
  s.materialize(rewriter, loc, attn.getQ(), attn.getK());
  auto attr = [&](int64_t x) { return rewriter.getIndexAttr(x); };
  OpFoldResult sqP = s.qPadded(rewriter), skP = s.kPadded(rewriter);
  Value q = padTo(bb, toF32(bb, attn.getQ()),
                  {attr(s.batch), attr(s.heads), sqP, attr(s.dP)});
  Value v = padTo(bb, toF32(bb, attn.getV()),
                  {attr(s.batch), attr(s.kvHeads), skP, attr(s.dvP)});
  Value kT = blockKeysT(bb,
                        padTo(bb, toF32(bb, attn.getK()),
                              {attr(s.batch), attr(s.kvHeads), skP,
                               attr(s.dP)}),
                        s.blockK);

  Value out = tensor::EmptyOp::create(
      rewriter, loc,
      ArrayRef<OpFoldResult>{attr(s.batch), attr(s.heads), sqP, attr(s.dvP)},
      outType.getElementType());
  SmallVector<OpFoldResult> ubs = {attr(s.batch), attr(s.heads),
                                   s.qBlocks(rewriter, loc)};
  auto forall = scf::ForallOp::create(rewriter, loc, ubs, ValueRange{out},
                                      std::nullopt);
  Block *body = forall.getBody();
  rewriter.setInsertionPointToStart(body);
  Value bi = body->getArgument(0), hi = body->getArgument(1),
        qbi = body->getArgument(2), outArg = body->getArgument(3);
  auto one = rewriter.getIndexAttr(1), zero = rewriter.getIndexAttr(0);
  Value i0 = arith::MulIOp::create(rewriter, loc, qbi, bb.index(s.blockQ));
  HeadParams hp = headParams(bb, paramsOf(attn), attn.getKLen(),
                             attn.getAlibi(), s, bi, hi);
  const BlockParams &bp = hp.bp;
  Value kvHead = hp.kvHead, off = hp.off;

  SmallVector<OpFoldResult> ones(4, one);
  // The rows [iStart, iStart + sr.blockQ) of head (bi, hi): the key loop,
  // then o = acc / l.
  auto computeRows = [&](Value iStart, const AttnShape &sr) -> Value {
    Value qBlock = tensor::ExtractSliceOp::create(
        rewriter, loc, RankedTensorType::get({sr.blockQ, s.dP}, f32), q,
        SmallVector<OpFoldResult>{bi, hi, iStart, zero},
        SmallVector<OpFoldResult>{one, one, attr(sr.blockQ), attr(s.dP)}, ones);
    Value m0 = bb.full({sr.blockQ}, f32, -INFINITY);
    Value l0 = bb.full({sr.blockQ}, f32, 0.0);
    Value acc0 = bb.full({sr.blockQ, s.dvP}, f32, 0.0);
    auto [lo, hiKey] = keyRange(bb, sr, bp, iStart, off);

    auto keyLoop = scf::ForOp::create(
        rewriter, loc, lo, hiKey, bb.index(s.blockK),
        ValueRange{m0, l0, acc0},
        [&](OpBuilder &b, Location nl, Value j0, ValueRange carried) {
          BlockBuilder kb{b, nl};
          Value m = carried[0], l = carried[1], acc = carried[2];
          Value kBlock = tensor::ExtractSliceOp::create(
              b, nl, RankedTensorType::get({s.dP, s.blockK}, f32), kT,
              SmallVector<OpFoldResult>{
                  bi, kvHead,
                  arith::DivUIOp::create(b, nl, j0, kb.index(s.blockK))
                      .getResult(),
                  zero, zero},
              SmallVector<OpFoldResult>{one, one, one, attr(s.dP),
                                        attr(s.blockK)},
              SmallVector<OpFoldResult>(5, one));
          Value vBlock = tensor::ExtractSliceOp::create(
              b, nl, RankedTensorType::get({s.blockK, s.dvP}, f32), v,
              SmallVector<OpFoldResult>{bi, kvHead, j0, zero},
              SmallVector<OpFoldResult>{one, one, attr(s.blockK), attr(s.dvP)},
              ones);
          Value raw = kb.matmul(qBlock, kBlock,
                                kb.full({sr.blockQ, s.blockK}, f32, 0.0));
          Value scores = maskBlock(kb, raw, bp, iStart, j0, off);
          // The carried values are updated in place (an scf.for bufferizes
          // to one buffer for each).
          RowState next = onlineUpdate(kb, scores, vBlock, {m, l, acc});
          scf::YieldOp::create(b, nl, ValueRange{next.m, next.l, next.acc});
        });

    // o = acc / l, 0 on rows that saw no key.
    return normalizeRows(bb, keyLoop.getResult(2), keyLoop.getResult(1),
                         bb.empty({sr.blockQ, s.dvP},
                                  outType.getElementType()));
  };
  Value oBlock;
  scf::ForallOp rowLoop;
  if (!threadPerRow) {
    oBlock = computeRows(i0, s);
  } else {
    AttnShape oneRow = s;
    oneRow.blockQ = 1;
    Value rowsOut = bb.block(outArg, bi, hi, i0, zero, s.blockQ, s.dvP,
                             outType.getElementType());
    rowLoop = rowForall(rewriter, loc, s.blockQ, rowsOut,
                        [&](Value r) -> SmallVector<Value> {
                          Value iRow =
                              arith::AddIOp::create(rewriter, loc, i0, r);
                          return {computeRows(iRow, oneRow)};
                        });
    oBlock = rowLoop.getResult(0);
  }
  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(
      rewriter, loc, oBlock, outArg,
      SmallVector<OpFoldResult>{bi, hi, i0, zero},
      SmallVector<OpFoldResult>{one, one, attr(s.blockQ), attr(s.dvP)}, ones);
  // The result: the padded queries and value columns dropped.
  rewriter.setInsertionPointAfter(forall);
  Value result = forall.getResult(0);
  SmallVector<Value> dynamicSizes;
  if (outType.isDynamicDim(2))
    dynamicSizes.push_back(s.sqLen);
  result = sliceToResult(rewriter, loc, result, outType, dynamicSizes);
  rewriter.replaceOp(op, result);
  return {forall, rowLoop};
}

LogicalResult mlir::fuel::buildAttention(RewriterBase &rewriter, FusedOp op,
                                         const ScheduleOptions &options) {
  AttnShape s = AttnShape::of(FlashAttnView(op));
  auto [forall, rows] =
      buildAttentionLoops(rewriter, op, s, /*threadPerRow=*/false);
  scheduleBlocks(rewriter, forall, s.regN, registerTile(options));
  return success();
}

std::pair<scf::ForallOp, scf::ForallOp>
mlir::fuel::buildAttentionRows(RewriterBase &rewriter, FusedOp op,
                               int64_t blockK) {
  AttnShape s = AttnShape::of(FlashAttnView(op));
  s.blockK = attention::blockFor(s.sk, blockK, blockK);
  s.skP = attention::roundUp(s.sk, s.blockK);
  return buildAttentionLoops(rewriter, op, s, /*threadPerRow=*/true);
}
