//===- AttentionBlocks.cpp - What the attention schedules share -----------===//

#include "AttentionBlocks.h"
#include "ScheduleUtils.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Interfaces/TilingInterface.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fuel;
using namespace mlir::fuel::attention;

/// `v` with its elements widened to f32 (an f32 `v` as it is).
Value attention::toF32(BlockBuilder &bb, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getElementType().isF32())
    return v;
  unsigned rank = type.getRank();
  SmallVector<unsigned> all;
  for (unsigned i = 0; i < rank; ++i)
    all.push_back(i);
  Type f32 = bb.b.getF32Type();
  Value init = tensor::EmptyOp::create(
      bb.b, bb.loc, tensor::getMixedSizes(bb.b, bb.loc, v), f32);
  return bb.generic(rank, {{v, bb.map(rank, all)}}, init, bb.map(rank, all), {},
                    [&](OpBuilder &nb, Location nl, ValueRange x) -> Value {
                      return arith::ExtFOp::create(nb, nl, f32, x[0]);
                    });
}

/// k [B, H, Sk, D] as kT [B, H, D, Sk] in f32 (Sk may be dynamic).
Value attention::transposeKeys(BlockBuilder &bb, Value k) {
  SmallVector<OpFoldResult> s = tensor::getMixedSizes(bb.b, bb.loc, k);
  Type f32 = bb.b.getF32Type();
  return bb.generic(4, {{k, bb.map(4, {0, 1, 3, 2})}},
                    tensor::EmptyOp::create(bb.b, bb.loc,
                                            ArrayRef<OpFoldResult>{s[0], s[1],
                                                                   s[3], s[2]},
                                            f32),
                    bb.map(4, {0, 1, 2, 3}), {},
                    [&](OpBuilder &nb, Location nl, ValueRange x) -> Value {
                      if (x[0].getType() == f32)
                        return x[0];
                      return arith::ExtFOp::create(nb, nl, f32, x[0]);
                    });
}

Value attention::blockKeysT(BlockBuilder &bb, Value k, int64_t blockK) {
  auto type = cast<RankedTensorType>(k.getType());
  ArrayRef<int64_t> s = type.getShape();
  Type elt = type.getElementType();
  // [B, H, S / blockK, blockK, D], the number of blocks dynamic with S.
  SmallVector<OpFoldResult> split = {bb.b.getIndexAttr(s[0]),
                                     bb.b.getIndexAttr(s[1]), OpFoldResult(),
                                     bb.b.getIndexAttr(blockK),
                                     bb.b.getIndexAttr(s[3])};
  int64_t blocks = ShapedType::kDynamic;
  if (ShapedType::isDynamic(s[2])) {
    Value len = tensor::DimOp::create(bb.b, bb.loc, k, 2);
    split[2] = arith::DivUIOp::create(bb.b, bb.loc, len, bb.index(blockK))
                   .getResult();
  } else {
    blocks = s[2] / blockK;
    split[2] = bb.b.getIndexAttr(blocks);
  }
  Value blocked = tensor::ExpandShapeOp::create(
      bb.b, bb.loc,
      RankedTensorType::get({s[0], s[1], blocks, blockK, s[3]}, elt), k,
      SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}, {4}}, split);
  SmallVector<OpFoldResult> out = {split[0], split[1], split[2], split[4],
                                   split[3]};
  return bb.generic(5, {{blocked, bb.map(5, {0, 1, 2, 4, 3})}},
                    tensor::EmptyOp::create(bb.b, bb.loc, out, elt),
                    bb.map(5, {0, 1, 2, 3, 4}), {},
                    [](OpBuilder &, Location, ValueRange x) { return x[0]; });
}

/// `x` (f32) in the first corner of a zero tensor of `shape`; `x` itself
/// when it has that shape.
Value attention::padTo(BlockBuilder &bb, Value x, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(x.getType());
  if (type.getShape() == shape)
    return x;
  Value zeros = bb.full(shape, type.getElementType(), 0.0);
  SmallVector<OpFoldResult> offsets(shape.size(), bb.b.getIndexAttr(0)),
      strides(shape.size(), bb.b.getIndexAttr(1)), sizes;
  for (int64_t d : type.getShape())
    sizes.push_back(bb.b.getIndexAttr(d));
  return tensor::InsertSliceOp::create(bb.b, bb.loc, x, zeros, offsets, sizes,
                                       strides);
}

Value attention::padTo(BlockBuilder &bb, Value x,
                       ArrayRef<OpFoldResult> shape) {
  auto type = cast<RankedTensorType>(x.getType());
  if (std::optional<SmallVector<int64_t>> sizes = getConstantIntValues(shape))
    if (type.hasStaticShape())
      return padTo(bb, x, *sizes);
  Value zero = bb.constF(0.0);
  Value empty = tensor::EmptyOp::create(bb.b, bb.loc, shape,
                                        type.getElementType());
  Value zeros =
      linalg::FillOp::create(bb.b, bb.loc, zero, empty).getResult(0);
  SmallVector<OpFoldResult> offsets(shape.size(), bb.b.getIndexAttr(0)),
      strides(shape.size(), bb.b.getIndexAttr(1));
  return tensor::InsertSliceOp::create(
      bb.b, bb.loc, x, zeros, offsets,
      tensor::getMixedSizes(bb.b, bb.loc, x), strides);
}

/// Tiles and vectorizes the block code under `forall`: each contraction in
/// register tiles of target.m x regN (its init computed in the tile, the
/// reduction in steps of kRegK), each other op over a block's rows ([Bq,
/// Bk], [Bq, Dv], ...) one row at a time (a few whole vectors per row).
void attention::scheduleBlocks(RewriterBase &rewriter, scf::ForallOp forall,
                               int64_t regN, RegisterTile target) {
  regN = std::min(regN, target.n);
  auto attr = [&](int64_t x) { return rewriter.getIndexAttr(x); };
  SmallVector<linalg::LinalgOp> contractions;
  llvm::SmallPtrSet<Operation *, 8> inits;
  forall->walk([&](linalg::LinalgOp l) {
    if (linalg::isaContractionOpInterface(l)) {
      contractions.push_back(l);
      if (Operation *init = l.getDpsInitOperand(0)->get().getDefiningOp())
        inits.insert(init);
    }
  });
  // The row ops: not the contractions' inits, which are fused into the
  // register tiles (and then erased).
  SmallVector<linalg::LinalgOp> rowOps;
  forall->walk([&](linalg::LinalgOp l) {
    if (l.getNumLoops() == 2 && !isa<linalg::FillOp>(l) &&
        !linalg::isaContractionOpInterface(l) && !inits.contains(l))
      rowOps.push_back(l);
  });
  for (linalg::LinalgOp c : contractions) {
    SmallVector<int64_t> ranges = c.getStaticLoopRanges();
    int64_t n = ranges[1] % regN == 0 ? regN : 16;
    // Only the init (a zero fill, alpha * acc) is computed in the tile;
    // the operands are computed once per block, not once per tile.
    Operation *init = c.getDpsInitOperand(0)->get().getDefiningOp();
    FailureOr<TiledRoot> tiled = tileAndFuseRoot(
        rewriter, cast<TilingInterface>(c.getOperation()),
        {attr(target.m), attr(n), attr(0)},
        scf::SCFTilingOptions::LoopType::ForOp,
        [&](Operation *producer) { return producer == init; });
    if (succeeded(tiled))
      tileReduction(rewriter,
                    cast<linalg::LinalgOp>(tiled->tiled.getOperation()),
                    kRegK);
  }
  for (linalg::LinalgOp r : rowOps) {
    scf::SCFTilingOptions tiling;
    tiling.setTileSizes({attr(1), attr(0)});
    rewriter.setInsertionPoint(r);
    FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
        rewriter, cast<TilingInterface>(r.getOperation()), tiling);
    if (succeeded(tiled))
      rewriter.replaceOp(r, tiled->replacements);
  }
  vectorizeInside(rewriter, forall, /*contractions=*/true);
}

/// The masked, scaled (soft-capped, ALiBi-biased) scores of a [Bq, Bk]
/// block whose first query is `i0` and first key `j0`; `off` = k_len - Sq
/// (k_len = Sk without the operand) aligns the causal diagonal bottom-right.
LogicalResult attention::checkStaticButLengths(FusedOp op,
                                              unsigned sequenceOperands,
                                              std::string &why) {
  for (Value t : llvm::concat<Value>(op->getOperands(), op->getResults())) {
    auto type = dyn_cast<RankedTensorType>(t.getType());
    if (!type)
      continue;
    bool sequence = t == op->getResult(0) ||
                    llvm::is_contained(
                        op->getOperands().take_front(sequenceOperands), t);
    for (auto [dim, size] : llvm::enumerate(type.getShape()))
      if (ShapedType::isDynamic(size) && !(sequence && dim == 2)) {
        why = "the attention schedule needs static batch, heads and head "
              "dims (the sequence lengths may be dynamic)";
        return failure();
      }
  }
  return success();
}

LogicalResult attention::checkAttention(ValueRange floats, Value q, Value k,
                                        Value v, int64_t vectorWidth,
                                        std::string &why) {
  for (Value operand : floats) {
    Type elt = cast<RankedTensorType>(operand.getType()).getElementType();
    if (!elt.isF32() && !elt.isF16() && !elt.isBF16()) {
      why = "the attention schedule handles f32, f16 and bf16";
      return failure();
    }
  }
  AttnShape s = AttnShape::of(q, k, v);
  if (!s.blockQ) {
    why = "the attention schedule needs non-empty sequences and head dims";
    return failure();
  }
  if (s.blockK % vectorWidth != 0) {
    why = "the attention schedule needs key blocks (" +
          std::to_string(s.blockK) + ") that are a multiple of the vector "
          "width (" + std::to_string(vectorWidth) + ")";
    return failure();
  }
  return success();
}

Value attention::sliceToResult(OpBuilder &b, Location loc, Value padded,
                               RankedTensorType type,
                               ValueRange dynamicSizes) {
  // (A padded dynamic dim has the result's type but not its size.)
  if (padded.getType() == type && type.hasStaticShape())
    return padded;
  unsigned rank = type.getRank();
  SmallVector<OpFoldResult> sizes;
  unsigned next = 0;
  for (int64_t d : type.getShape())
    sizes.push_back(ShapedType::isDynamic(d)
                        ? OpFoldResult(dynamicSizes[next++])
                        : OpFoldResult(b.getIndexAttr(d)));
  return tensor::ExtractSliceOp::create(
      b, loc, type, padded, SmallVector<OpFoldResult>(rank, b.getIndexAttr(0)),
      sizes, SmallVector<OpFoldResult>(rank, b.getIndexAttr(1)));
}

scf::ForallOp
attention::rowForall(RewriterBase &rewriter, Location loc, int64_t rows,
                     ValueRange inits,
                     function_ref<SmallVector<Value>(Value r)> row) {
  auto loop = scf::ForallOp::create(
      rewriter, loc, ArrayRef<OpFoldResult>{rewriter.getIndexAttr(rows)},
      inits, std::nullopt);
  Block *body = loop.getBody();
  rewriter.setInsertionPointToStart(body);
  Value r = body->getArgument(0);
  SmallVector<Value> parts = row(r);
  rewriter.setInsertionPointToStart(loop.getTerminator().getBody());
  auto zero = rewriter.getIndexAttr(0), one = rewriter.getIndexAttr(1);
  for (auto [i, part] : llvm::enumerate(parts)) {
    auto type = cast<RankedTensorType>(part.getType());
    SmallVector<OpFoldResult> offsets(type.getRank(), zero), sizes;
    offsets[0] = r;
    for (int64_t size : type.getShape())
      sizes.push_back(rewriter.getIndexAttr(size));
    tensor::ParallelInsertSliceOp::create(
        rewriter, loc, part, body->getArgument(1 + i), offsets, sizes,
        SmallVector<OpFoldResult>(type.getRank(), one));
  }
  rewriter.setInsertionPointAfter(loop);
  return loop;
}

OnlineStep attention::onlineSoftmaxStep(BlockBuilder &bb, Value scores,
                                        Value m) {
  Type f32 = bb.b.getF32Type();
  ArrayRef<int64_t> shape = cast<RankedTensorType>(scores.getType()).getShape();
  AffineMap full = bb.map(2, {0, 1}), row = bb.map(2, {0}),
            vec = bb.map(1, {0});
  Value negInf = bb.constF(-INFINITY), zeroF = bb.constF(0.0);
  // exp(a - c), 0 where a is -inf.
  auto expDiff = [&](OpBuilder &nb, Location l, Value a, Value c) -> Value {
    Value masked =
        arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, a, negInf);
    Value e = math::ExpOp::create(nb, l, arith::SubFOp::create(nb, l, a, c));
    return arith::SelectOp::create(nb, l, masked, zeroF, e);
  };
  OnlineStep step;
  Value mBlock = bb.generic(
      2, {{scores, full}}, bb.full({shape[0]}, f32, -INFINITY), row, {1},
      [](OpBuilder &nb, Location l, ValueRange x) -> Value {
        return arith::MaximumFOp::create(nb, l, x[0], x[1]);
      });
  step.alpha = bb.generic(
      1, {{m, vec}, {mBlock, vec}}, bb.empty({shape[0]}, f32), vec, {},
      [&](OpBuilder &nb, Location l, ValueRange x) {
        Value mNew = arith::MaximumFOp::create(nb, l, x[0], x[1]);
        return expDiff(nb, l, x[0], mNew);
      });
  step.mNew = bb.generic(1, {{mBlock, vec}}, m, vec, {},
                         [](OpBuilder &nb, Location l, ValueRange x) -> Value {
                           return arith::MaximumFOp::create(nb, l, x[0], x[1]);
                         });
  step.p = bb.generic(2, {{scores, full}, {step.mNew, row}},
                      bb.empty(shape, f32), full, {},
                      [&](OpBuilder &nb, Location l, ValueRange x) {
                        return expDiff(nb, l, x[0], x[1]);
                      });
  return step;
}

Value attention::scaleRows(BlockBuilder &bb, Value acc, Value alpha) {
  unsigned rank = cast<RankedTensorType>(acc.getType()).getRank();
  AffineMap all = rank == 1 ? bb.map(1, {0}) : bb.map(2, {0, 1});
  return bb.generic(rank, {{alpha, bb.map(rank, {0})}}, acc, all, {},
                    [](OpBuilder &nb, Location l, ValueRange x) -> Value {
                      return arith::MulFOp::create(nb, l, x[0], x[1]);
                    });
}

RowState attention::onlineUpdate(BlockBuilder &bb, Value scores,
                                Value vBlock, RowState state) {
  OnlineStep step = onlineSoftmaxStep(bb, scores, state.m);
  Value lNew = bb.generic(
      2, {{step.p, bb.map(2, {0, 1})}}, scaleRows(bb, state.l, step.alpha),
      bb.map(2, {0}), {1},
      [](OpBuilder &nb, Location l, ValueRange x) -> Value {
        return arith::AddFOp::create(nb, l, x[0], x[1]);
      });
  Value accNew =
      bb.matmul(step.p, vBlock, scaleRows(bb, state.acc, step.alpha));
  return {step.mNew, lNew, accNew};
}

Value attention::normalizeRows(BlockBuilder &bb, Value acc, Value l,
                               Value init) {
  Type outElt = cast<RankedTensorType>(init.getType()).getElementType();
  Value zeroF = bb.constF(0.0);
  return bb.generic(
      2, {{acc, bb.map(2, {0, 1})}, {l, bb.map(2, {0})}}, init,
      bb.map(2, {0, 1}), {},
      [&](OpBuilder &nb, Location nl, ValueRange x) -> Value {
        Value seen = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGT,
                                           x[1], zeroF);
        Value o = arith::SelectOp::create(
            nb, nl, seen, arith::DivFOp::create(nb, nl, x[0], x[1]), zeroF);
        if (outElt != o.getType())
          o = arith::TruncFOp::create(nb, nl, outElt, o);
        return o;
      });
}

HeadParams attention::headParams(BlockBuilder &bb, BlockParams bp,
                                 std::optional<Value> kLen,
                                 std::optional<Value> alibi,
                                 const AttnShape &s, Value bi, Value hi) {
  OpBuilder &b = bb.b;
  Location loc = bb.loc;
  HeadParams hp{bp, Value(), Value()};
  hp.kvHead = arith::DivUIOp::create(b, loc, hi,
                                     bb.index(s.heads / s.kvHeads));
  // Keys from min(k_len, Sk) on are masked (padding keys, past Sk, too).
  Value sk = s.skLen ? s.skLen : bb.index(s.sk);
  Value sq = s.sqLen ? s.sqLen : bb.index(s.sq);
  if (kLen)
    hp.bp.kLen = s.padsKeys()
                     ? arith::MinSIOp::create(b, loc, *kLen, sk).getResult()
                     : *kLen;
  else if (s.padsKeys())
    hp.bp.kLen = sk;
  hp.off = arith::SubIOp::create(b, loc, kLen ? *kLen : sk, sq);
  if (alibi) {
    // Slopes [Hq] or [B, Hq].
    SmallVector<Value> at;
    if (cast<RankedTensorType>(alibi->getType()).getRank() == 2)
      at.push_back(bi);
    at.push_back(hi);
    hp.bp.slope = tensor::ExtractOp::create(b, loc, *alibi, at);
  }
  return hp;
}

Value attention::maskBlock(BlockBuilder &bb, Value raw, const BlockParams &bp,
                       Value i0, Value j0, Value off, bool keysByRow) {
  Type f32 = bb.b.getF32Type();
  auto type = cast<RankedTensorType>(raw.getType());
  Value scale = arith::ConstantOp::create(bb.b, bb.loc, f32,
                                          bb.b.getF32FloatAttr(bp.scale));
  Value negInf = arith::ConstantOp::create(
      bb.b, bb.loc, f32, bb.b.getF32FloatAttr(-INFINITY));
  Value cap = bp.softcap ? arith::ConstantOp::create(
                               bb.b, bb.loc, f32,
                               bb.b.getF32FloatAttr(*bp.softcap))
                               .getResult()
                         : Value();
  return bb.generic(
      2, {{raw, bb.map(2, {0, 1})}}, bb.empty(type.getShape(), f32),
      bb.map(2, {0, 1}), {},
      [&](OpBuilder &nb, Location nl, ValueRange x) -> Value {
        Value s = arith::MulFOp::create(nb, nl, x[0], scale);
        if (cap) {
          Value t = math::TanhOp::create(
              nb, nl, arith::DivFOp::create(nb, nl, s, cap));
          s = arith::MulFOp::create(nb, nl, cap, t);
        }
        if (!bp.masks() && !bp.slope)
          return s;
        auto [diag, j] = diagonalAndKey(nb, nl, i0, j0, off, keysByRow);
        if (bp.slope)
          s = arith::SubFOp::create(
              nb, nl, s, alibiDistance(nb, nl, bp.slope, diag, j));
        if (!bp.masks())
          return s;
        auto cmp = [&](arith::CmpIPredicate p, Value a, Value c) -> Value {
          return arith::CmpIOp::create(nb, nl, p, a, c);
        };
        Value valid;
        auto both = [&](Value c) {
          valid = valid ? arith::AndIOp::create(nb, nl, valid, c).getResult()
                        : c;
        };
        if (bp.kLen)
          both(cmp(arith::CmpIPredicate::slt, j, bp.kLen));
        if (bp.causal)
          both(cmp(arith::CmpIPredicate::sle, j, diag));
        if (bp.windowLeft)
          both(cmp(arith::CmpIPredicate::sge, j,
                   arith::SubIOp::create(nb, nl, diag,
                                         arith::ConstantIndexOp::create(
                                             nb, nl, *bp.windowLeft))));
        if (bp.windowRight)
          both(cmp(arith::CmpIPredicate::sle, j,
                   arith::AddIOp::create(nb, nl, diag,
                                         arith::ConstantIndexOp::create(
                                             nb, nl, *bp.windowRight))));
        return arith::SelectOp::create(nb, nl, valid, s, negInf);
      });
}

std::pair<Value, Value> attention::diagonalAndKey(OpBuilder &b, Location loc,
                                                  Value i0, Value j0,
                                                  Value off, bool keysByRow) {
  Value i = arith::AddIOp::create(
      b, loc, i0, linalg::IndexOp::create(b, loc, keysByRow ? 1 : 0));
  Value j = arith::AddIOp::create(
      b, loc, j0, linalg::IndexOp::create(b, loc, keysByRow ? 0 : 1));
  return {arith::AddIOp::create(b, loc, i, off), j};
}

Value attention::alibiDistance(OpBuilder &b, Location loc, Value slope,
                               Value diag, Value j) {
  Value dist = arith::IndexCastOp::create(
      b, loc, b.getI64Type(), arith::SubIOp::create(b, loc, diag, j));
  Value d = math::AbsFOp::create(
      b, loc, arith::SIToFPOp::create(b, loc, b.getF32Type(), dist));
  return arith::MulFOp::create(b, loc, slope, d);
}

/// How far past the diagonal (i + off) a query sees keys, where that is
/// bounded: 0 when causal, the right window (the smaller of the two).
static std::optional<int64_t> keysAhead(const BlockParams &bp) {
  std::optional<int64_t> ahead;
  if (bp.causal)
    ahead = 0;
  if (bp.windowRight)
    ahead = ahead ? std::min(*ahead, *bp.windowRight) : *bp.windowRight;
  return ahead;
}

/// The key blocks the query block starting at `i0` visits: [lo, hi) in
/// steps of Bk, clamped to [0, Sk] (and to the live keys with k_len).
std::pair<Value, Value> attention::keyRange(BlockBuilder &bb,
                                            const AttnShape &s,
                                            const BlockParams &bp, Value i0,
                                            Value off) {
  OpBuilder &b = bb.b;
  Location loc = bb.loc;
  Value zero = bb.index(0), bk = bb.index(s.blockK);
  Value sk = s.skPad ? s.skPad : bb.index(s.skP);
  auto blockEnd = [&](Value end) -> Value {
    Value rounded = arith::MulIOp::create(
        b, loc, arith::CeilDivSIOp::create(b, loc, end, bk), bk);
    return arith::MaxSIOp::create(b, loc, zero,
                                  arith::MinSIOp::create(b, loc, sk, rounded));
  };
  Value lo = zero, hi = bp.kLen ? blockEnd(bp.kLen) : sk;
  // The last query of the block sees keys up to i0 + Bq - 1 + off + ahead.
  std::optional<int64_t> ahead = keysAhead(bp);
  if (ahead) {
    Value last = arith::AddIOp::create(
        b, loc, arith::AddIOp::create(b, loc, i0, off),
        bb.index(s.blockQ + *ahead));
    hi = arith::MinSIOp::create(b, loc, hi, blockEnd(last));
  }
  // The first query sees keys from i0 + off - wl.
  if (bp.windowLeft) {
    Value first = arith::SubIOp::create(
        b, loc, arith::AddIOp::create(b, loc, i0, off),
        bb.index(*bp.windowLeft));
    Value start = arith::MulIOp::create(
        b, loc, arith::FloorDivSIOp::create(b, loc, first, bk), bk);
    lo = arith::MinSIOp::create(
        b, loc, hi, arith::MaxSIOp::create(b, loc, zero, start));
  }
  return {lo, hi};
}

std::pair<Value, Value> attention::queryRange(BlockBuilder &bb,
                                              const AttnShape &s,
                                              const BlockParams &bp, Value j0,
                                              Value off) {
  OpBuilder &b = bb.b;
  Location loc = bb.loc;
  Value zero = bb.index(0), bq = bb.index(s.blockQ);
  Value end = s.sqPad ? s.sqPad : bb.index(s.sqP);
  Value lo = zero, hi = end;
  std::optional<int64_t> ahead = keysAhead(bp);
  // Query i sees key j from j >= i + off - wl to j <= i + off + ahead: the
  // keys from j0 on are seen from i >= j0 - off - ahead (causal, right
  // window) ...
  if (ahead) {
    Value first = arith::SubIOp::create(
        b, loc, j0,
        arith::AddIOp::create(b, loc, off, bb.index(*ahead)));
    Value start = arith::MulIOp::create(
        b, loc, arith::FloorDivSIOp::create(b, loc, first, bq), bq);
    lo = arith::MinSIOp::create(
        b, loc, end, arith::MaxSIOp::create(b, loc, zero, start));
  }
  // ... up to i <= j0 + Bk - 1 - off + wl (left window).
  if (bp.windowLeft) {
    Value last = arith::SubIOp::create(
        b, loc, arith::AddIOp::create(b, loc, j0,
                                      bb.index(s.blockK + *bp.windowLeft)),
        off);
    Value stop = arith::MulIOp::create(
        b, loc, arith::CeilDivSIOp::create(b, loc, last, bq), bq);
    hi = arith::MaxSIOp::create(b, loc, lo,
                                arith::MinSIOp::create(b, loc, end, stop));
  }
  return {lo, hi};
}
