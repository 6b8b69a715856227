//===- DecomposeAttention.cpp - Decompositions: attention -----------------===//
//
// flash_attn, its three backwards and paged_attn. Scores are masked by
// position (linalg.index in the bodies), so these are written by hand; the
// math follows docs/FusedOps.md:
//   s = scale * q @ k^T; s = c * tanh(s / c) (softcap); s -= slope * |i +
//   off - j| (alibi); masked entries -> -inf, with off = k_len - Sq and
//   query i seeing key j iff j < k_len, j <= i + off (causal) and
//   i + off - wl <= j <= i + off + wr (windows);
//   p = softmax_j(s), a fully masked row giving p = 0; o = p @ v.
// Grouped-query heads read kv head h / (Hq / Hkv).
//
//===----------------------------------------------------------------------===//

#include "Decompositions.h"
#include "Emit.h"

#include "FuelFused/IR/FusedOpViews.h"

using namespace mlir;
using namespace mlir::fuel;

namespace {

struct AttnParams {
  double scale;
  bool causal = false;
  std::optional<int64_t> windowLeft, windowRight;
  std::optional<double> softcap;

  /// flash_attn and its backwards share one params schema.
  template <typename FlashView>
  static AttnParams ofFlash(FlashView view) {
    AttnParams ap;
    ap.scale = view.getSoftmaxScale();
    ap.causal = view.getCausal();
    ap.windowLeft = view.getWindowSizeLeft();
    ap.windowRight = view.getWindowSizeRight();
    ap.softcap = view.getSoftcap();
    return ap;
  }
  static AttnParams of(PagedAttnView view) {
    AttnParams ap;
    ap.scale = view.getSoftmaxScale();
    ap.softcap = view.getSoftcap();
    return ap;
  }
};

/// The scores and probabilities of one attention, on [B, Hq, Sq, Sk].
struct Probabilities {
  Value scaled;   ///< scale * q @ k^T (before softcap), for the backward.
  Value tanh;     ///< tanh(scaled / c) when softcap is set.
  Value p;        ///< softmax over keys, 0 on fully masked rows.
};

/// Applies the masks and the bias to raw scores on loops (b, h, i, j):
/// returns the masked scores (-inf where masked).
Value maskScores(Emitter &e, Value scaled, Value tanhV, const AttnParams &ap,
                 Value alibi, Value kLen, Value off, Type ct) {
  Value negInf = e.constF(ct, -INFINITY);
  Value cap = ap.softcap ? e.constF(ct, *ap.softcap) : Value();
  std::optional<Value> wl, wr;
  if (ap.windowLeft)
    wl = e.constIndex(*ap.windowLeft);
  if (ap.windowRight)
    wr = e.constIndex(*ap.windowRight);
  SmallVector<std::pair<Value, AffineMap>> ins = {
      {scaled, e.loops(4, {0, 1, 2, 3})}};
  if (tanhV)
    ins.push_back({tanhV, e.loops(4, {0, 1, 2, 3})});
  unsigned alibiRank = alibi ? cast<ShapedType>(alibi.getType()).getRank() : 0;
  return e.generic(
      4, ins, e.empty(tensor::getMixedSizes(e.b, e.loc, scaled), ct),
      e.loops(4, {0, 1, 2, 3}), {},
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value s = tanhV ? arith::MulFOp::create(nb, nl, cap, a[1]).getResult()
                        : a[0];
        Value i = loopIndex(nb, nl, 2), j = loopIndex(nb, nl, 3);
        Value diag = arith::AddIOp::create(nb, nl, i, off); // i + off
        if (alibi) {
          SmallVector<Value> idx;
          if (alibiRank == 2)
            idx.push_back(loopIndex(nb, nl, 0));
          idx.push_back(loopIndex(nb, nl, 1));
          Value slope = tensor::ExtractOp::create(nb, nl, alibi, idx);
          if (slope.getType() != ct)
            slope = arith::ExtFOp::create(nb, nl, ct, slope);
          Value dist = arith::SubIOp::create(nb, nl, diag, j);
          Value d64 = arith::IndexCastOp::create(nb, nl, nb.getI64Type(), dist);
          Value df = math::AbsFOp::create(
              nb, nl, arith::SIToFPOp::create(nb, nl, ct, d64));
          s = arith::SubFOp::create(nb, nl, s,
                                    arith::MulFOp::create(nb, nl, slope, df));
        }
        auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) {
          return arith::CmpIOp::create(nb, nl, p, x, y).getResult();
        };
        Value valid = cmp(arith::CmpIPredicate::slt, j, kLen);
        if (ap.causal)
          valid = arith::AndIOp::create(
              nb, nl, valid, cmp(arith::CmpIPredicate::sle, j, diag));
        if (wl) {
          Value lo = arith::SubIOp::create(nb, nl, diag, *wl);
          valid = arith::AndIOp::create(nb, nl, valid,
                                        cmp(arith::CmpIPredicate::sge, j, lo));
        }
        if (wr) {
          Value hi = arith::AddIOp::create(nb, nl, diag, *wr);
          valid = arith::AndIOp::create(nb, nl, valid,
                                        cmp(arith::CmpIPredicate::sle, j, hi));
        }
        return arith::SelectOp::create(nb, nl, valid, s, negInf);
      });
}

/// p = softmax over the last dim of masked scores, 0 on rows that are all
/// -inf (exp(-inf - -inf) would be NaN).
Value softmaxMasked(Emitter &e, Value s, Type ct) {
  OpBuilder &b = e.b;
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, e.loc, s);
  SmallVector<OpFoldResult> rowSizes(sizes.begin(), sizes.end() - 1);
  unsigned n = sizes.size();
  SmallVector<unsigned> all, row;
  for (unsigned i = 0; i < n; ++i) {
    all.push_back(i);
    if (i + 1 < n)
      row.push_back(i);
  }
  AffineMap full = e.loops(n, all), rowMap = e.loops(n, row);
  Value negInf = e.constF(ct, -INFINITY), zero = e.constF(ct, 0.0);
  Value max = e.generic(n, {{s, full}}, e.full(rowSizes, ct, -INFINITY),
                        rowMap, {n - 1},
                        [](OpBuilder &nb, Location nl, ValueRange a) {
                          return arith::MaximumFOp::create(nb, nl, a[0], a[1])
                              .getResult();
                        });
  Value ex = e.generic(
      n, {{s, full}, {max, rowMap}}, e.empty(sizes, ct), full, {},
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value masked = arith::CmpFOp::create(
            nb, nl, arith::CmpFPredicate::OEQ, a[0], negInf);
        Value x = math::ExpOp::create(
            nb, nl, arith::SubFOp::create(nb, nl, a[0], a[1]));
        return arith::SelectOp::create(nb, nl, masked, zero, x).getResult();
      });
  Value sum = e.generic(n, {{ex, full}}, e.full(rowSizes, ct, 0.0), rowMap,
                        {n - 1}, [](OpBuilder &nb, Location nl, ValueRange a) {
                          return arith::AddFOp::create(nb, nl, a[0], a[1])
                              .getResult();
                        });
  return e.generic(
      n, {{ex, full}, {sum, rowMap}}, e.empty(sizes, ct), full, {},
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value pos = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGT,
                                          a[1], zero);
        Value p = arith::DivFOp::create(nb, nl, a[0], a[1]);
        return arith::SelectOp::create(nb, nl, pos, p, zero).getResult();
      });
}

/// Checks what every flash decomposition needs: static head counts.
LogicalResult checkHeads(Value q, Value k, std::string &why) {
  auto hq = staticDim(q, 1), hkv = staticDim(k, 1);
  if (!hq || !hkv) {
    why = "grouped-query attention needs static head counts";
    return failure();
  }
  return success();
}

int64_t groupSize(Value q, Value k) {
  return *staticDim(q, 1) / *staticDim(k, 1);
}

/// Scores and probabilities of flash attention (q, k, the alibi slopes if
/// any, and params).
Probabilities flashProbabilities(Emitter &e, const AttnParams &ap, Value q,
                                 Value k, Value alibi, Value kLenIndex,
                                 Type ct) {
  OpBuilder &b = e.b;
  int64_t r = groupSize(q, k);
  // raw[b, h, i, j] = sum_d q[b, h, i, d] * k[b, h / r, j, d]
  SmallVector<OpFoldResult> sSizes = {e.dim(q, 0), e.dim(q, 1), e.dim(q, 2),
                                      e.dim(k, 2)};
  AffineMap qMap = e.loops(5, {0, 1, 2, 4});
  AffineMap kMap = e.map(5, {e.d(0), e.d(1).floorDiv(r), e.d(3), e.d(4)});
  Value raw = e.generic(5, {{q, qMap}, {k, kMap}}, e.full(sSizes, ct, 0.0),
                        e.loops(5, {0, 1, 2, 3}), {4},
                        multiplyAccumulate);
  Value scale = e.constF(ct, ap.scale);
  Probabilities out;
  out.scaled = e.elementwise({raw}, raw, ct,
                             [&](OpBuilder &nb, Location nl, ValueRange a) {
                               return arith::MulFOp::create(nb, nl, a[0], scale)
                                   .getResult();
                             });
  if (ap.softcap) {
    Value cap = e.constF(ct, *ap.softcap);
    out.tanh = e.elementwise(
        {out.scaled}, raw, ct, [&](OpBuilder &nb, Location nl, ValueRange a) {
          Value x = arith::DivFOp::create(nb, nl, a[0], cap);
          return math::TanhOp::create(nb, nl, x).getResult();
        });
  }
  Value kLen = kLenIndex ? kLenIndex : e.dimValue(k, 2);
  Value off = arith::SubIOp::create(b, e.loc, kLen, e.dimValue(q, 2));
  Value masked = maskScores(e, out.scaled, out.tanh, ap, alibi, kLen, off, ct);
  out.p = softmaxMasked(e, masked, ct);
  return out;
}

/// A value [B, Hq, ...] viewed as [B, Hkv, r, ...].
Value splitHeads(Emitter &e, Value v, int64_t r) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape = {type.getDimSize(0),
                                type.getDimSize(1) / r, r};
  SmallVector<OpFoldResult> sizes = {
      e.dim(v, 0), e.index(type.getDimSize(1) / r), e.index(r)};
  for (int64_t i = 2; i < type.getRank(); ++i) {
    shape.push_back(type.getDimSize(i));
    sizes.push_back(e.dim(v, i));
  }
  SmallVector<ReassociationIndices> reassoc = {{0}, {1, 2}};
  for (int64_t i = 2; i < type.getRank(); ++i)
    reassoc.push_back({i + 1});
  return tensor::ExpandShapeOp::create(
      e.b, e.loc, RankedTensorType::get(shape, type.getElementType()), v,
      reassoc, sizes);
}

} // namespace

LogicalResult decompositions::checkFlashAttn(FusedOp op, std::string &why) {
  FlashAttnView attn(op);
  return checkHeads(attn.getQ(), attn.getK(), why);
}

SmallVector<Value> decompositions::buildFlashAttn(OpBuilder &builder,
                                                  FusedOp op) {
  FlashAttnView attn(op);
  Value q = attn.getQ(), k = attn.getK(), v = attn.getV();
  Emitter e(builder, op.getLoc());
  Type elt = cast<ShapedType>(q.getType()).getElementType();
  Type ct = e.computeType(elt);
  Value qf = e.castTo(q, ct), kf = e.castTo(k, ct), vf = e.castTo(v, ct);
  Probabilities pr = flashProbabilities(
      e, AttnParams::ofFlash(attn), qf, kf, attn.getAlibi().value_or(Value()),
      attn.getKLen().value_or(Value()), ct);
  int64_t r = groupSize(q, k);
  // o[b, h, i, e] = sum_j p[b, h, i, j] * v[b, h / r, j, e]
  SmallVector<OpFoldResult> oSizes = {e.dim(qf, 0), e.dim(qf, 1), e.dim(qf, 2),
                                      e.dim(vf, 3)};
  Value o = e.generic(
      5, {{pr.p, e.loops(5, {0, 1, 2, 4})},
          {vf, e.map(5, {e.d(0), e.d(1).floorDiv(r), e.d(4), e.d(3)})}},
      e.full(oSizes, ct, 0.0), e.loops(5, {0, 1, 2, 3}), {4},
      multiplyAccumulate);
  return SmallVector<Value>{e.castTo(o, elt)};
}

/// dS = P * (dP - rowsum(P * dP)) with dP = dO @ V^T, through the softcap
/// (times 1 - tanh^2) and the scale; then
///   dQ = dS @ K, dK = dS^T @ Q, dV = P^T @ dO,
/// the last two summed over the query heads of each kv head.
/// `grad` is the gradient the op computes (its one result).
template <typename View>
static SmallVector<Value> buildFlashBackward(OpBuilder &builder, View view,
                                             StringRef grad) {
  FusedOp op = view;
  Value q = view.getQ(), k = view.getK(), v = view.getV(),
        dout = view.getDo();
  Emitter e(builder, op.getLoc());
  Type elt = cast<ShapedType>(q.getType()).getElementType();
  Type ct = e.computeType(elt);
  AttnParams ap = AttnParams::ofFlash(view);
  Value qf = e.castTo(q, ct), kf = e.castTo(k, ct), vf = e.castTo(v, ct),
        df = e.castTo(dout, ct);
  int64_t r = groupSize(q, k);
  Probabilities pr = flashProbabilities(
      e, ap, qf, kf, view.getAlibi().value_or(Value()), Value(), ct);
  auto contract = multiplyAccumulate;

  if (grad == "dv") {
    // dV[b, hk, j, c] = sum_{g, i} P[b, hk, g, i, j] * dO[b, hk, g, i, c]
    Value p5 = splitHeads(e, pr.p, r), d5 = splitHeads(e, df, r);
    SmallVector<OpFoldResult> sizes = {e.dim(vf, 0), e.dim(vf, 1), e.dim(vf, 2),
                                       e.dim(vf, 3)};
    // Loops: b, hk, j, c, g, i.
    Value dv = e.generic(6, {{p5, e.loops(6, {0, 1, 4, 5, 2})},
                             {d5, e.loops(6, {0, 1, 4, 5, 3})}},
                         e.full(sizes, ct, 0.0), e.loops(6, {0, 1, 2, 3}),
                         {4, 5}, contract);
    return SmallVector<Value>{e.castTo(dv, elt)};
  }

  // dP[b, h, i, j] = sum_c dO[b, h, i, c] * v[b, h / r, j, c]
  SmallVector<OpFoldResult> sSizes =
      tensor::getMixedSizes(e.b, e.loc, pr.p);
  Value dp = e.generic(
      5, {{df, e.loops(5, {0, 1, 2, 4})},
          {vf, e.map(5, {e.d(0), e.d(1).floorDiv(r), e.d(3), e.d(4)})}},
      e.full(sSizes, ct, 0.0), e.loops(5, {0, 1, 2, 3}), {4}, contract);
  SmallVector<OpFoldResult> rowSizes(sSizes.begin(), sSizes.end() - 1);
  Value delta = e.generic(4, {{pr.p, e.loops(4, {0, 1, 2, 3})},
                              {dp, e.loops(4, {0, 1, 2, 3})}},
                          e.full(rowSizes, ct, 0.0), e.loops(4, {0, 1, 2}), {3},
                          contract);
  Value scale = e.constF(ct, ap.scale), one = e.constF(ct, 1.0);
  SmallVector<std::pair<Value, AffineMap>> ins = {
      {pr.p, e.loops(4, {0, 1, 2, 3})},
      {dp, e.loops(4, {0, 1, 2, 3})},
      {delta, e.loops(4, {0, 1, 2})}};
  if (pr.tanh)
    ins.push_back({pr.tanh, e.loops(4, {0, 1, 2, 3})});
  bool capped = bool(pr.tanh);
  Value ds = e.generic(
      4, ins, e.empty(sSizes, ct), e.loops(4, {0, 1, 2, 3}), {},
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value x = arith::MulFOp::create(
            nb, nl, a[0], arith::SubFOp::create(nb, nl, a[1], a[2]));
        if (capped) {
          Value t2 = arith::MulFOp::create(nb, nl, a[3], a[3]);
          x = arith::MulFOp::create(nb, nl, x,
                                    arith::SubFOp::create(nb, nl, one, t2));
        }
        return arith::MulFOp::create(nb, nl, x, scale).getResult();
      });

  if (grad == "dq") {
    // dQ[b, h, i, c] = sum_j dS[b, h, i, j] * k[b, h / r, j, c]
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(e.b, e.loc, qf);
    Value dq = e.generic(
        5, {{ds, e.loops(5, {0, 1, 2, 4})},
            {kf, e.map(5, {e.d(0), e.d(1).floorDiv(r), e.d(4), e.d(3)})}},
        e.full(sizes, ct, 0.0), e.loops(5, {0, 1, 2, 3}), {4}, contract);
    return SmallVector<Value>{e.castTo(dq, elt)};
  }
  // dK[b, hk, j, c] = sum_{g, i} dS[b, hk, g, i, j] * q[b, hk, g, i, c]
  Value ds5 = splitHeads(e, ds, r), q5 = splitHeads(e, qf, r);
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(e.b, e.loc, kf);
  Value dk = e.generic(6, {{ds5, e.loops(6, {0, 1, 4, 5, 2})},
                           {q5, e.loops(6, {0, 1, 4, 5, 3})}},
                       e.full(sizes, ct, 0.0), e.loops(6, {0, 1, 2, 3}), {4, 5},
                       contract);
  return SmallVector<Value>{e.castTo(dk, elt)};
}

LogicalResult decompositions::checkFlashAttnBackward(FusedOp op,
                                                     std::string &why) {
  // The three backwards share one layout: q and k first.
  FlashAttnBackwardQView::Operand q = FlashAttnBackwardQView::Q,
                                  k = FlashAttnBackwardQView::K;
  return checkHeads(op->getOperand(q), op->getOperand(k), why);
}

SmallVector<Value> decompositions::buildFlashAttnBackward(OpBuilder &builder,
                                                          FusedOp op) {
  if (auto dq = FlashAttnBackwardQView::match(op))
    return buildFlashBackward(builder, *dq, "dq");
  if (auto dk = FlashAttnBackwardKView::match(op))
    return buildFlashBackward(builder, *dk, "dk");
  return buildFlashBackward(builder, FlashAttnBackwardVView(op), "dv");
}

/// Decode attention over a paged cache: token t of sequence s lives in
/// block block_table[s, t / bs] at slot t % bs; keys t < context_lens[s]
/// are attended; the query sits at position context_lens[s] - 1 (for alibi).
LogicalResult decompositions::checkPagedAttn(FusedOp op, std::string &why) {
  PagedAttnView paged(op);
  return checkHeads(paged.getQ(), paged.getKCache(), why);
}

SmallVector<Value> decompositions::buildPagedAttn(OpBuilder &builder,
                                                  FusedOp op) {
  PagedAttnView paged(op);
  Value q = paged.getQ(), kc = paged.getKCache(), vc = paged.getVCache(),
        table = paged.getBlockTable(), lens = paged.getContextLens(),
        alibi = paged.getAlibi().value_or(Value());
  Emitter e(builder, op.getLoc());
  OpBuilder &b = e.b;
  Location loc = e.loc;
  Type elt = cast<ShapedType>(q.getType()).getElementType();
  Type ct = e.computeType(elt);
  AttnParams ap = AttnParams::of(paged);
  int64_t r = *staticDim(q, 1) / *staticDim(kc, 1);
  int64_t bs = paged.getBlockSize();
  Value qf = e.castTo(q, ct), kf = e.castTo(kc, ct), vf = e.castTo(vc, ct);
  Value bsV = e.constIndex(bs), rV = e.constIndex(r);
  // The cache element of token t (loop tDim) for head h (loop 1) of
  // sequence s (loop 0), channel c (loop cDim).
  // Table entries past a sequence's length may be anything: read block 0
  // there (its probability is 0).
  auto gather = [&](OpBuilder &nb, Location nl, Value cache, unsigned tDim,
                    unsigned cDim) {
    Value s = loopIndex(nb, nl, 0), h = loopIndex(nb, nl, 1),
          t = loopIndex(nb, nl, tDim), c = loopIndex(nb, nl, cDim);
    Value slot = arith::DivUIOp::create(nb, nl, t, bsV);
    Value blk32 = tensor::ExtractOp::create(nb, nl, table, ValueRange{s, slot});
    Value len32 = tensor::ExtractOp::create(nb, nl, lens, ValueRange{s});
    Value len = arith::IndexCastOp::create(nb, nl, nb.getIndexType(), len32);
    Value live =
        arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, t, len);
    Value blkRaw = arith::IndexCastOp::create(nb, nl, nb.getIndexType(), blk32);
    Value blk = arith::SelectOp::create(
        nb, nl, live, blkRaw, arith::ConstantIndexOp::create(nb, nl, 0));
    Value kvh = arith::DivUIOp::create(nb, nl, h, rV);
    Value off = arith::RemUIOp::create(nb, nl, t, bsV);
    return tensor::ExtractOp::create(nb, nl, cache,
                                     ValueRange{blk, kvh, off, c})
        .getResult();
  };
  // Scores on (s, h, t), t < max_blocks * bs; loops (s, h, t, c).
  OpFoldResult tokens = e.mul(e.dim(table, 1), bs);
  SmallVector<OpFoldResult> sSizes = {e.dim(qf, 0), e.dim(qf, 1), tokens};
  Value raw = e.generic(4, {{qf, e.loops(4, {0, 1, 3})}},
                        e.full(sSizes, ct, 0.0), e.loops(4, {0, 1, 2}), {3},
                        [&](OpBuilder &nb, Location nl, ValueRange a) {
                          Value kv = gather(nb, nl, kf, 2, 3);
                          Value p = arith::MulFOp::create(nb, nl, a[0], kv);
                          return arith::AddFOp::create(nb, nl, a[1], p)
                              .getResult();
                        });
  Value scale = e.constF(ct, ap.scale), negInf = e.constF(ct, -INFINITY);
  Value cap = ap.softcap ? e.constF(ct, *ap.softcap) : Value();
  Value masked = e.generic(
      3, {{raw, e.loops(3, {0, 1, 2})}, {lens, e.loops(3, {0})}},
      e.empty(sSizes, ct), e.loops(3, {0, 1, 2}), {},
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value s = arith::MulFOp::create(nb, nl, a[0], scale);
        if (cap)
          s = arith::MulFOp::create(
              nb, nl, cap,
              math::TanhOp::create(nb, nl,
                                   arith::DivFOp::create(nb, nl, s, cap)));
        Value t = loopIndex(nb, nl, 2);
        Value len = arith::IndexCastOp::create(nb, nl, nb.getIndexType(), a[1]);
        if (alibi) {
          Value slope = tensor::ExtractOp::create(
              nb, nl, alibi, ValueRange{loopIndex(nb, nl, 1)});
          if (slope.getType() != ct)
            slope = arith::ExtFOp::create(nb, nl, ct, slope);
          Value one = arith::ConstantIndexOp::create(nb, nl, 1);
          Value pos = arith::SubIOp::create(nb, nl, len, one);
          Value dist = arith::SubIOp::create(nb, nl, pos, t);
          Value d64 = arith::IndexCastOp::create(nb, nl, nb.getI64Type(), dist);
          Value df = math::AbsFOp::create(
              nb, nl, arith::SIToFPOp::create(nb, nl, ct, d64));
          s = arith::SubFOp::create(nb, nl, s,
                                    arith::MulFOp::create(nb, nl, slope, df));
        }
        Value valid =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, t, len);
        return arith::SelectOp::create(nb, nl, valid, s, negInf);
      });
  Value p = softmaxMasked(e, masked, ct);
  // o[s, h, c] = sum_t p[s, h, t] * v(t); loops (s, h, c, t).
  SmallVector<OpFoldResult> oSizes = tensor::getMixedSizes(b, loc, qf);
  Value o = e.generic(4, {{p, e.loops(4, {0, 1, 3})}}, e.full(oSizes, ct, 0.0),
                      e.loops(4, {0, 1, 2}), {3},
                      [&](OpBuilder &nb, Location nl, ValueRange a) {
                        Value vv = gather(nb, nl, vf, 3, 2);
                        Value pr = arith::MulFOp::create(nb, nl, a[0], vv);
                        return arith::AddFOp::create(nb, nl, a[1], pr)
                            .getResult();
                      });
  return SmallVector<Value>{e.castTo(o, elt)};
}
