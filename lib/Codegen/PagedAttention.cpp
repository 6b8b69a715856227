//===- PagedAttention.cpp - The attention schedule of paged_attn ---------===//
//
// paged_attn: one query token per sequence against the first
// context_lens[s] tokens of its paged cache. One scf.forall iteration per
// (sequence, query head). The query is one vector of D lanes; for each live
// token, its key row (block table[s, t / block_size], slot t % block_size)
// is one vector too, and the score is their product reduced across lanes,
// scaled (softcap, ALiBi) and stored in a row of scores, -inf past the
// context. The softmax then runs over that row in vectors of `vectorWidth`
// (max; exponentials, 0 where the score is -inf; their sum; each divided by
// it, as the decomposition computes p), and the output is the sum over live
// tokens of p[t] times their value rows, accumulated as one vector of Dv
// lanes. f16 and bf16 compute in f32.
//
// The decomposition gathers every cache element it reads through a
// tensor.extract in a body, over all max_blocks * block_size tokens, in
// scalar loops.
//
//===----------------------------------------------------------------------===//

#include "Attention.h"

#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fuel;

paged::PagedShape paged::PagedShape::of(PagedAttnView paged) {
  ArrayRef<int64_t> q =
      cast<RankedTensorType>(paged.getQ().getType()).getShape();
  ArrayRef<int64_t> k =
      cast<RankedTensorType>(paged.getKCache().getType()).getShape();
  ArrayRef<int64_t> table =
      cast<RankedTensorType>(paged.getBlockTable().getType()).getShape();
  PagedShape shape;
  shape.heads = q[1];
  shape.d = q[2];
  shape.dv = cast<RankedTensorType>(
      paged.getOperation()->getResult(0).getType()).getShape()[2];
  shape.group = q[1] / k[1];
  shape.blockSize = paged.getBlockSize();
  shape.tokens = table[1] * shape.blockSize;
  return shape;
}

Value paged::readF32(OpBuilder &b, Location loc, Value from, ValueRange at,
                     int64_t n) {
  Type elt = cast<RankedTensorType>(from.getType()).getElementType();
  Value pad = arith::ConstantOp::create(b, loc, elt, b.getFloatAttr(elt, 0.0));
  Value v = vector::TransferReadOp::create(b, loc, VectorType::get({n}, elt),
                                           from, at, pad, ArrayRef<bool>{true});
  if (elt.isF32())
    return v;
  return arith::ExtFOp::create(b, loc, VectorType::get({n}, b.getF32Type()),
                               v);
}

std::pair<Value, Value> paged::locate(OpBuilder &b, Location loc, Value table,
                                      Value s, Value t, int64_t blockSize) {
  Value bs = arith::ConstantIndexOp::create(b, loc, blockSize);
  Value entry = tensor::ExtractOp::create(
      b, loc, table, ValueRange{s, arith::DivUIOp::create(b, loc, t, bs)});
  Value block = arith::IndexCastOp::create(b, loc, b.getIndexType(), entry);
  return {block, arith::RemUIOp::create(b, loc, t, bs)};
}

Value paged::contextLength(OpBuilder &b, Location loc, Value lens, Value s) {
  return arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      tensor::ExtractOp::create(b, loc, lens, ValueRange{s}));
}

Value paged::liveTokens(OpBuilder &b, Location loc, Value len,
                        int64_t tokens) {
  return arith::MinSIOp::create(
      b, loc, len, arith::ConstantIndexOp::create(b, loc, tokens));
}

Value paged::finishScore(OpBuilder &b, Location loc, PagedAttnView paged,
                         Value dot, Value slope, Value len, Value t) {
  Type f32 = b.getF32Type();
  auto constant = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, f32,
                                     b.getF32FloatAttr(static_cast<float>(v)));
  };
  Value score = arith::MulFOp::create(b, loc, dot,
                                      constant(paged.getSoftmaxScale()));
  if (std::optional<double> softcap = paged.getSoftcap()) {
    Value cap = constant(*softcap);
    score = arith::MulFOp::create(
        b, loc, cap,
        math::TanhOp::create(b, loc,
                             arith::DivFOp::create(b, loc, score, cap)));
  }
  if (slope) {
    // score -= slope * |len - 1 - t|.
    Value dist = arith::SubIOp::create(
        b, loc,
        arith::SubIOp::create(b, loc, len,
                              arith::ConstantIndexOp::create(b, loc, 1)),
        t);
    Value far = math::AbsFOp::create(
        b, loc,
        arith::SIToFPOp::create(
            b, loc, f32,
            arith::IndexCastOp::create(b, loc, b.getI64Type(), dist)));
    score = arith::SubFOp::create(b, loc, score,
                                  arith::MulFOp::create(b, loc, slope, far));
  }
  return score;
}

LogicalResult mlir::fuel::canSchedulePagedAttention(
    FusedOp op, const ScheduleOptions &options, std::string &why) {
  PagedAttnView paged(op);
  Type elt = cast<RankedTensorType>(paged.getQ().getType()).getElementType();
  if (!elt.isF32() && !elt.isF16() && !elt.isBF16()) {
    why = "the attention schedule handles f32, f16 and bf16";
    return failure();
  }
  // The number of sequences may be dynamic (dim 0 of q, the table, the
  // lengths and the output); nothing else.
  for (Type t : llvm::concat<Type>(op->getOperandTypes(),
                                   op->getResultTypes())) {
    auto shaped = cast<RankedTensorType>(t);
    bool bySequence = t == paged.getQ().getType() ||
                      t == paged.getBlockTable().getType() ||
                      t == paged.getContextLens().getType() ||
                      t == op->getResult(0).getType();
    for (auto [i, size] : llvm::enumerate(shaped.getShape()))
      if (ShapedType::isDynamic(size) && !(bySequence && i == 0)) {
        why = "the attention schedule needs static shapes but for the "
              "number of sequences";
        return failure();
      }
  }
  auto out = cast<RankedTensorType>(op->getResult(0).getType());
  auto table = cast<RankedTensorType>(paged.getBlockTable().getType());
  if (llvm::is_contained(out.getShape(), 0) ||
      llvm::is_contained(table.getShape(), 0)) {
    why = "the attention schedule needs non-empty sequences and head dims";
    return failure();
  }
  return success();
}

LogicalResult mlir::fuel::buildPagedAttention(RewriterBase &rewriter,
                                              FusedOp op,
                                              const ScheduleOptions &options) {
  PagedAttnView paged(op);
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value q = paged.getQ(), kc = paged.getKCache(), vc = paged.getVCache(),
        table = paged.getBlockTable(), lens = paged.getContextLens();
  std::optional<Value> alibi = paged.getAlibi();
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());
  paged::PagedShape shape = paged::PagedShape::of(paged);
  int64_t heads = shape.heads, d = shape.d, dv = shape.dv;
  int64_t group = shape.group, blockSize = shape.blockSize;
  int64_t tokens = shape.tokens;
  OpFoldResult seqs = tensor::getMixedSize(rewriter, loc, q, 0);
  int64_t width = options.vectorWidth;
  int64_t row = llvm::alignTo(tokens, width);
  Type elt = outType.getElementType(), f32 = rewriter.getF32Type();
  auto lanes = VectorType::get({width}, f32);
  auto index = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto f32Const = [&](OpBuilder &b, double v) -> Value {
    return arith::ConstantOp::create(b, loc, f32,
                                     b.getF32FloatAttr(static_cast<float>(v)));
  };
  auto splat = [&](OpBuilder &b, double v) -> Value {
    return arith::ConstantOp::create(
        b, loc, lanes, DenseElementsAttr::get(lanes, static_cast<float>(v)));
  };

  Value empty = tensor::EmptyOp::create(
      rewriter, loc,
      ArrayRef<OpFoldResult>{seqs, rewriter.getIndexAttr(heads),
                             rewriter.getIndexAttr(dv)},
      elt);
  auto forall = scf::ForallOp::create(
      rewriter, loc,
      ArrayRef<OpFoldResult>{seqs,
                             rewriter.getIndexAttr(heads)},
      ValueRange{empty}, std::nullopt);
  Block *body = forall.getBody();
  rewriter.setInsertionPointToStart(body);
  Value s = body->getArgument(0), h = body->getArgument(1);
  Value out = body->getArgument(2);
  Value len = paged::contextLength(rewriter, loc, lens, s);
  Value kvHead =
      arith::DivUIOp::create(rewriter, loc, h, index(rewriter, group));
  Value query = paged::readF32(rewriter, loc, q, {s, h, index(rewriter, 0)}, d);
  auto locate = [&](OpBuilder &b, Value t) {
    return paged::locate(b, loc, table, s, t, blockSize);
  };
  // The live tokens: those before the context length, at most the table's
  // (the decomposition reads no further either).
  Value live = paged::liveTokens(rewriter, loc, len, tokens);
  auto forLive = [&](Value init,
                     function_ref<Value(OpBuilder &, Value, Value)> step) {
    return scf::ForOp::create(
               rewriter, loc, index(rewriter, 0), live, index(rewriter, 1),
               ValueRange{init},
               [&](OpBuilder &b, Location, Value t, ValueRange acc) {
                 scf::YieldOp::create(b, loc, step(b, t, acc[0]));
               })
        .getResult(0);
  };
  auto overRow = [&](ValueRange init,
                     function_ref<SmallVector<Value>(OpBuilder &, Value,
                                                     ValueRange)>
                         step) {
    return scf::ForOp::create(
               rewriter, loc, index(rewriter, 0), index(rewriter, row),
               index(rewriter, width), init,
               [&](OpBuilder &b, Location, Value j, ValueRange acc) {
                 scf::YieldOp::create(b, loc, step(b, j, acc));
               })
        .getResults();
  };

  // The scores of the live tokens, -inf past them.
  auto rowType = RankedTensorType::get({row}, f32);
  Value rowEmpty =
      tensor::EmptyOp::create(rewriter, loc, rowType.getShape(), f32);
  Value scores = linalg::FillOp::create(rewriter, loc,
                                        f32Const(rewriter, -INFINITY), rowEmpty)
                     .getResult(0);
  Value slope;
  if (alibi)
    slope = tensor::ExtractOp::create(rewriter, loc, *alibi, ValueRange{h});
  scores = forLive(scores, [&](OpBuilder &b, Value t, Value row) {
    auto [block, slot] = locate(b, t);
    Value key =
        paged::readF32(b, loc, kc, {block, kvHead, slot, index(b, 0)}, d);
    Value score = vector::ReductionOp::create(
        b, loc, vector::CombiningKind::ADD,
        arith::MulFOp::create(b, loc, query, key));
    score = paged::finishScore(b, loc, paged, score, slope, len, t);
    return tensor::InsertOp::create(b, loc, score, row, ValueRange{t})
        .getResult();
  });

  // The softmax over the row, as the decomposition: p = e / sum with e = 0
  // where the score is -inf, and p = 0 when the sum is not positive.
  auto readScores = [&](OpBuilder &b, Value from, Value j) -> Value {
    return vector::TransferReadOp::create(b, loc, lanes, from, ValueRange{j},
                                          f32Const(b, 0.0),
                                          ArrayRef<bool>{true});
  };
  Value maxLanes = overRow({splat(rewriter, -INFINITY)},
                           [&](OpBuilder &b, Value j, ValueRange acc) {
                             return SmallVector<Value>{
                                 arith::MaximumFOp::create(
                                     b, loc, acc[0], readScores(b, scores, j))};
                           })[0];
  Value max = vector::BroadcastOp::create(
      rewriter, loc, lanes,
      vector::ReductionOp::create(rewriter, loc,
                                  vector::CombiningKind::MAXIMUMF, maxLanes));
  ValueRange exps = overRow(
      {scores, splat(rewriter, 0.0)},
      [&](OpBuilder &b, Value j, ValueRange acc) {
        Value x = readScores(b, acc[0], j);
        Value masked = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                             x, splat(b, -INFINITY));
        Value e = arith::SelectOp::create(
            b, loc, masked, splat(b, 0.0),
            math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, x, max)));
        Value into = vector::TransferWriteOp::create(
                         b, loc, e, acc[0], ValueRange{j}, ArrayRef<bool>{true})
                         .getResult();
        return SmallVector<Value>{into,
                                  arith::AddFOp::create(b, loc, acc[1], e)};
      });
  Value sum = vector::ReductionOp::create(rewriter, loc,
                                          vector::CombiningKind::ADD, exps[1]);
  Value sumLanes = vector::BroadcastOp::create(rewriter, loc, lanes, sum);
  Value positive = arith::CmpFOp::create(rewriter, loc,
                                         arith::CmpFPredicate::OGT, sum,
                                         f32Const(rewriter, 0.0));
  Value probs = overRow({exps[0]}, [&](OpBuilder &b, Value j, ValueRange acc) {
    Value p = arith::DivFOp::create(b, loc, readScores(b, acc[0], j), sumLanes);
    p = arith::SelectOp::create(b, loc, positive, p, splat(b, 0.0));
    return SmallVector<Value>{vector::TransferWriteOp::create(
                                  b, loc, p, acc[0], ValueRange{j},
                                  ArrayRef<bool>{true})
                                  .getResult()};
  })[0];

  // o = sum over live tokens of p[t] * v(t).
  auto outLanes = VectorType::get({dv}, f32);
  Value zeros = arith::ConstantOp::create(
      rewriter, loc, outLanes, DenseElementsAttr::get(outLanes, 0.0f));
  Value o = forLive(zeros, [&](OpBuilder &b, Value t, Value acc) {
    auto [block, slot] = locate(b, t);
    Value value =
        paged::readF32(b, loc, vc, {block, kvHead, slot, index(b, 0)}, dv);
    Value p = vector::BroadcastOp::create(
        b, loc, outLanes,
        tensor::ExtractOp::create(b, loc, probs, ValueRange{t}));
    return arith::AddFOp::create(b, loc, acc,
                                 arith::MulFOp::create(b, loc, p, value))
        .getResult();
  });
  if (elt != f32)
    o = arith::TruncFOp::create(rewriter, loc, VectorType::get({dv}, elt), o);
  auto oRowType = RankedTensorType::get({dv}, elt);
  Value oRow = vector::TransferWriteOp::create(
                   rewriter, loc, o,
                   tensor::EmptyOp::create(rewriter, loc, oRowType.getShape(),
                                           elt),
                   ValueRange{index(rewriter, 0)}, ArrayRef<bool>{true})
                   .getResult();
  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  auto one = rewriter.getIndexAttr(1);
  tensor::ParallelInsertSliceOp::create(
      rewriter, loc, oRow, out,
      ArrayRef<OpFoldResult>{s, h, rewriter.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{one, one, rewriter.getIndexAttr(dv)},
      ArrayRef<OpFoldResult>{one, one, one});
  rewriter.replaceOp(op, forall->getResults());
  return success();
}
