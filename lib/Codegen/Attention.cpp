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
#include "ScheduleUtils.h"

#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/TilingInterface.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fuel;

namespace {
/// Register tiles of the block contractions: rows by columns, reduction
/// steps (as in the contraction schedule).
constexpr int64_t kRegM = 8, kRegK = 16;
/// Query and key block sizes, at most.
constexpr int64_t kBlockQ = 64, kBlockK = 64;

/// The largest tile of at most `most` that divides `size` and is a
/// multiple of `unit`; 0 when there is none.
int64_t tileOf(int64_t size, int64_t most, int64_t unit) {
  for (int64_t t = most; t >= unit; t /= 2)
    if (size % t == 0 && t % unit == 0)
      return t;
  return 0;
}

int64_t roundUp(int64_t x, int64_t unit) { return (x + unit - 1) / unit * unit; }

/// A block for `size` rows (a multiple of `unit`, at most `most`): the
/// largest that divides `size`, unless that is small next to `size`; then
/// `size` is padded to a multiple of the block.
int64_t blockFor(int64_t size, int64_t most, int64_t unit) {
  int64_t t = tileOf(size, most, unit);
  if (t && (t >= 32 || size <= most))
    return t;
  return std::min(most, roundUp(size, unit));
}

/// The shapes of one flash_attn the schedule handles, and the padded
/// shapes it computes on: sequence lengths padded to whole blocks, head
/// dims to 16 (zeros; padded keys are masked, padded queries and value
/// columns dropped from the result).
struct AttnShape {
  int64_t batch, heads, kvHeads, sq, sk, d, dv;
  int64_t blockQ, blockK, regN;
  int64_t sqP, skP, dP, dvP;

  static AttnShape of(FlashAttnView attn) {
    return of(attn.getQ(), attn.getK(), attn.getV());
  }
  static AttnShape of(Value qv, Value kv, Value vv) {
    ArrayRef<int64_t> q = cast<RankedTensorType>(qv.getType()).getShape();
    ArrayRef<int64_t> k = cast<RankedTensorType>(kv.getType()).getShape();
    ArrayRef<int64_t> v = cast<RankedTensorType>(vv.getType()).getShape();
    AttnShape s{q[0], q[1], k[1], q[2], k[2], q[3], v[3], 0, 0, 0, 0, 0, 0, 0};
    if (!s.sq || !s.sk || !s.d || !s.dv)
      return s;
    s.blockQ = blockFor(s.sq, kBlockQ, kRegM);
    s.blockK = blockFor(s.sk, kBlockK, kRegK);
    s.sqP = roundUp(s.sq, s.blockQ);
    s.skP = roundUp(s.sk, s.blockK);
    s.dP = roundUp(s.d, kRegK);
    s.dvP = roundUp(s.dv, 16);
    s.regN = s.dvP % 32 == 0 ? 32 : 16;
    return s;
  }
  bool padsKeys() const { return skP != sk; }
  bool padsResult() const { return sqP != sq || dvP != dv; }
};

/// Builds linalg.generic ops on the block tensors.
struct BlockBuilder {
  OpBuilder &b;
  Location loc;

  AffineMap map(unsigned loops, ArrayRef<unsigned> dims) const {
    SmallVector<AffineExpr> exprs;
    for (unsigned d : dims)
      exprs.push_back(b.getAffineDimExpr(d));
    return AffineMap::get(loops, 0, exprs, b.getContext());
  }

  Value empty(ArrayRef<int64_t> shape, Type elt) const {
    return tensor::EmptyOp::create(b, loc, shape, elt);
  }

  Value full(ArrayRef<int64_t> shape, Type elt, double value) const {
    Value c = arith::ConstantOp::create(b, loc, elt, b.getFloatAttr(elt, value));
    return linalg::FillOp::create(b, loc, c, empty(shape, elt)).getResult(0);
  }

  /// A generic over `loops` loops (`reductions` among them) with inputs
  /// `ins` on their maps, writing `init` through `outMap`.
  Value generic(unsigned loops, ArrayRef<std::pair<Value, AffineMap>> ins,
                Value init, AffineMap outMap, ArrayRef<unsigned> reductions,
                function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (auto [v, m] : ins) {
      inputs.push_back(v);
      maps.push_back(m);
    }
    maps.push_back(outMap);
    SmallVector<utils::IteratorType> iterators(loops,
                                               utils::IteratorType::parallel);
    for (unsigned r : reductions)
      iterators[r] = utils::IteratorType::reduction;
    return linalg::GenericOp::create(
               b, loc, init.getType(), inputs, init, maps, iterators,
               [&](OpBuilder &nb, Location nl, ValueRange args) {
                 linalg::YieldOp::create(nb, nl, body(nb, nl, args));
               })
        .getResult(0);
  }

  /// out[i, j] += sum_k a[i, k] * b[k, j].
  Value matmul(Value a, Value bm, Value init) {
    return generic(3, {{a, map(3, {0, 2})}, {bm, map(3, {2, 1})}}, init,
                   map(3, {0, 1}), {2},
                   [](OpBuilder &nb, Location nl, ValueRange x) -> Value {
                     Value prod = arith::MulFOp::create(nb, nl, x[0], x[1]);
                     return arith::AddFOp::create(nb, nl, x[2], prod);
                   });
  }

  /// out[i, j] += sum_k a[k, i] * b[k, j].
  Value matmulT(Value a, Value bm, Value init) {
    return generic(3, {{a, map(3, {2, 0})}, {bm, map(3, {2, 1})}}, init,
                   map(3, {0, 1}), {2},
                   [](OpBuilder &nb, Location nl, ValueRange x) -> Value {
                     Value prod = arith::MulFOp::create(nb, nl, x[0], x[1]);
                     return arith::AddFOp::create(nb, nl, x[2], prod);
                   });
  }

  Value index(int64_t v) const {
    return arith::ConstantIndexOp::create(b, loc, v);
  }

  Value constF(double v) const {
    return arith::ConstantOp::create(b, loc, b.getF32Type(),
                                     b.getF32FloatAttr(v));
  }

  /// A [rows, cols] f32 slice of a [B, H, rows', cols'] tensor at (bi, h,
  /// r0, c0).
  Value block(Value t, Value bi, Value h, OpFoldResult r0, OpFoldResult c0,
              int64_t rows, int64_t cols) const {
    auto one = b.getIndexAttr(1);
    return tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get({rows, cols}, b.getF32Type()), t,
        SmallVector<OpFoldResult>{bi, h, r0, c0},
        SmallVector<OpFoldResult>{one, one, b.getIndexAttr(rows),
                                  b.getIndexAttr(cols)},
        SmallVector<OpFoldResult>(4, one));
  }
};

/// `v` with its elements widened to f32 (an f32 `v` as it is).
Value toF32(BlockBuilder &bb, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getElementType().isF32())
    return v;
  unsigned rank = type.getRank();
  SmallVector<unsigned> all;
  for (unsigned i = 0; i < rank; ++i)
    all.push_back(i);
  Type f32 = bb.b.getF32Type();
  return bb.generic(rank, {{v, bb.map(rank, all)}},
                    bb.empty(type.getShape(), f32), bb.map(rank, all), {},
                    [&](OpBuilder &nb, Location nl, ValueRange x) -> Value {
                      return arith::ExtFOp::create(nb, nl, f32, x[0]);
                    });
}

/// k [B, H, Sk, D] as kT [B, H, D, Sk] in f32.
Value transposeKeys(BlockBuilder &bb, Value k) {
  auto type = cast<RankedTensorType>(k.getType());
  ArrayRef<int64_t> s = type.getShape();
  Type f32 = bb.b.getF32Type();
  return bb.generic(4, {{k, bb.map(4, {0, 1, 3, 2})}},
                    bb.empty({s[0], s[1], s[3], s[2]}, f32),
                    bb.map(4, {0, 1, 2, 3}), {},
                    [&](OpBuilder &nb, Location nl, ValueRange x) -> Value {
                      if (x[0].getType() == f32)
                        return x[0];
                      return arith::ExtFOp::create(nb, nl, f32, x[0]);
                    });
}

/// `x` (f32) in the first corner of a zero tensor of `shape`; `x` itself
/// when it has that shape.
Value padTo(BlockBuilder &bb, Value x, ArrayRef<int64_t> shape) {
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

/// The attention params the schedule applies inside a block.
struct BlockParams {
  double scale;
  bool causal;
  std::optional<int64_t> windowLeft, windowRight;
  std::optional<double> softcap;
  /// Inside the query-block loop: the live keys (k_len, an index) and the
  /// ALiBi slope of the block's head (f32), when the op has them.
  Value kLen, slope;

  bool masks() const { return causal || windowLeft || windowRight || kLen; }
};

} // namespace

/// Tiles and vectorizes the block code under `forall`: each contraction in
/// register tiles of kRegM x regN (its init computed in the tile, the
/// reduction in steps of kRegK), each other op over a block's rows ([Bq,
/// Bk], [Bq, Dv], ...) one row at a time (a few whole vectors per row).
static void scheduleBlocks(RewriterBase &rewriter, scf::ForallOp forall,
                           int64_t regN) {
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
        {attr(kRegM), attr(n), attr(0)},
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

LogicalResult mlir::fuel::canScheduleAttention(FusedOp op,
                                               const ScheduleOptions &options,
                                               std::string &why) {
  FlashAttnView attn(op);
  for (Value operand : {attn.getQ(), attn.getK(), attn.getV()}) {
    Type elt = cast<RankedTensorType>(operand.getType()).getElementType();
    if (!elt.isF32() && !elt.isF16() && !elt.isBF16()) {
      why = "the attention schedule handles f32, f16 and bf16";
      return failure();
    }
  }
  AttnShape s = AttnShape::of(attn);
  if (!s.blockQ) {
    why = "the attention schedule needs non-empty sequences and head dims";
    return failure();
  }
  if (s.blockK % options.vectorWidth != 0) {
    why = "the attention schedule needs key blocks (" +
          std::to_string(s.blockK) + ") that are a multiple of the vector "
          "width (" + std::to_string(options.vectorWidth) + ")";
    return failure();
  }
  return success();
}

/// The masked, scaled (soft-capped, ALiBi-biased) scores of a [Bq, Bk]
/// block whose first query is `i0` and first key `j0`; `off` = k_len - Sq
/// (k_len = Sk without the operand) aligns the causal diagonal bottom-right.
static Value maskBlock(BlockBuilder &bb, Value raw, const BlockParams &bp,
                       Value i0, Value j0, Value off) {
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
        Value i = arith::AddIOp::create(
            nb, nl, i0, linalg::IndexOp::create(nb, nl, 0));
        Value j = arith::AddIOp::create(
            nb, nl, j0, linalg::IndexOp::create(nb, nl, 1));
        Value diag = arith::AddIOp::create(nb, nl, i, off);
        if (bp.slope) {
          // s -= slope * |i + off - j|
          Value dist = arith::IndexCastOp::create(
              nb, nl, nb.getI64Type(), arith::SubIOp::create(nb, nl, diag, j));
          Value d = math::AbsFOp::create(
              nb, nl, arith::SIToFPOp::create(nb, nl, f32, dist));
          s = arith::SubFOp::create(nb, nl, s,
                                    arith::MulFOp::create(nb, nl, bp.slope, d));
        }
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
                   arith::SubIOp::create(
                       nb, nl, diag,
                       arith::ConstantIndexOp::create(nb, nl, *bp.windowLeft))));
        if (bp.windowRight)
          both(cmp(arith::CmpIPredicate::sle, j,
                   arith::AddIOp::create(
                       nb, nl, diag,
                       arith::ConstantIndexOp::create(nb, nl, *bp.windowRight))));
        return arith::SelectOp::create(nb, nl, valid, s, negInf);
      });
}

/// The key blocks the query block starting at `i0` visits: [lo, hi) in
/// steps of Bk, clamped to [0, Sk] (and to the live keys with k_len).
static std::pair<Value, Value> keyRange(BlockBuilder &bb, const AttnShape &s,
                                        const BlockParams &bp, Value i0,
                                        Value off) {
  OpBuilder &b = bb.b;
  Location loc = bb.loc;
  Value zero = bb.index(0), sk = bb.index(s.skP), bk = bb.index(s.blockK);
  auto blockEnd = [&](Value end) -> Value {
    Value rounded = arith::MulIOp::create(
        b, loc, arith::CeilDivSIOp::create(b, loc, end, bk), bk);
    return arith::MaxSIOp::create(b, loc, zero,
                                  arith::MinSIOp::create(b, loc, sk, rounded));
  };
  Value lo = zero, hi = bp.kLen ? blockEnd(bp.kLen) : sk;
  // The last query of the block sees keys up to i0 + Bq - 1 + off + ahead.
  std::optional<int64_t> ahead;
  if (bp.causal)
    ahead = 0;
  if (bp.windowRight)
    ahead = ahead ? std::min(*ahead, *bp.windowRight) : *bp.windowRight;
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

LogicalResult mlir::fuel::buildAttention(RewriterBase &rewriter, FusedOp op,
                                         const ScheduleOptions &options) {
  FlashAttnView attn(op);
  AttnShape s = AttnShape::of(attn);
  BlockParams bp{attn.getSoftmaxScale(), attn.getCausal(),
                 attn.getWindowSizeLeft(), attn.getWindowSizeRight(),
                 attn.getSoftcap()};
  int64_t group = s.heads / s.kvHeads;
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  BlockBuilder bb{rewriter, loc};
  Type f32 = rewriter.getF32Type();
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());

  // Outside the loops: q and v in f32, k transposed (and in f32), each
  // padded with zeros to whole blocks and head dims of 16.
  Value q = padTo(bb, toF32(bb, attn.getQ()),
                  {s.batch, s.heads, s.sqP, s.dP});
  Value v = padTo(bb, toF32(bb, attn.getV()),
                  {s.batch, s.kvHeads, s.skP, s.dvP});
  Value kT = padTo(bb, transposeKeys(bb, attn.getK()),
                   {s.batch, s.kvHeads, s.dP, s.skP});

  Value out = bb.empty({s.batch, s.heads, s.sqP, s.dvP},
                       outType.getElementType());
  SmallVector<OpFoldResult> ubs = {
      rewriter.getIndexAttr(s.batch), rewriter.getIndexAttr(s.heads),
      rewriter.getIndexAttr(s.sqP / s.blockQ)};
  auto forall = scf::ForallOp::create(rewriter, loc, ubs, ValueRange{out},
                                      std::nullopt);
  Block *body = forall.getBody();
  rewriter.setInsertionPointToStart(body);
  Value bi = body->getArgument(0), hi = body->getArgument(1),
        qbi = body->getArgument(2), outArg = body->getArgument(3);
  auto one = rewriter.getIndexAttr(1), zero = rewriter.getIndexAttr(0);
  auto attr = [&](int64_t x) { return rewriter.getIndexAttr(x); };
  Value i0 = arith::MulIOp::create(rewriter, loc, qbi, bb.index(s.blockQ));
  Value kvHead = arith::DivUIOp::create(rewriter, loc, hi, bb.index(group));
  // off = k_len - Sq: query i's diagonal is key i + off. Keys from
  // min(k_len, Sk) on are masked (padding keys, past Sk, too).
  std::optional<Value> kLen = attn.getKLen();
  if (kLen)
    bp.kLen = s.padsKeys() ? arith::MinSIOp::create(rewriter, loc, *kLen,
                                                    bb.index(s.sk))
                                 .getResult()
                           : *kLen;
  else if (s.padsKeys())
    bp.kLen = bb.index(s.sk);
  Value off = arith::SubIOp::create(rewriter, loc,
                                    kLen ? *kLen : bb.index(s.sk),
                                    bb.index(s.sq));
  if (std::optional<Value> alibi = attn.getAlibi()) {
    // Slopes [Hq] or [B, Hq].
    SmallVector<Value> at;
    if (cast<RankedTensorType>(alibi->getType()).getRank() == 2)
      at.push_back(bi);
    at.push_back(hi);
    bp.slope = tensor::ExtractOp::create(rewriter, loc, *alibi, at);
  }

  SmallVector<OpFoldResult> ones(4, one);
  Value qBlock = tensor::ExtractSliceOp::create(
      rewriter, loc, RankedTensorType::get({s.blockQ, s.dP}, f32), q,
      SmallVector<OpFoldResult>{bi, hi, i0, zero},
      SmallVector<OpFoldResult>{one, one, attr(s.blockQ), attr(s.dP)}, ones);
  Value m0 = bb.full({s.blockQ}, f32, -INFINITY);
  Value l0 = bb.full({s.blockQ}, f32, 0.0);
  Value acc0 = bb.full({s.blockQ, s.dvP}, f32, 0.0);
  auto [lo, hiKey] = keyRange(bb, s, bp, i0, off);

  auto keyLoop = scf::ForOp::create(
      rewriter, loc, lo, hiKey, bb.index(s.blockK),
      ValueRange{m0, l0, acc0},
      [&](OpBuilder &b, Location nl, Value j0, ValueRange carried) {
        BlockBuilder kb{b, nl};
        Value m = carried[0], l = carried[1], acc = carried[2];
        Value kBlock = tensor::ExtractSliceOp::create(
            b, nl, RankedTensorType::get({s.dP, s.blockK}, f32), kT,
            SmallVector<OpFoldResult>{bi, kvHead, zero, j0},
            SmallVector<OpFoldResult>{one, one, attr(s.dP), attr(s.blockK)},
            ones);
        Value vBlock = tensor::ExtractSliceOp::create(
            b, nl, RankedTensorType::get({s.blockK, s.dvP}, f32), v,
            SmallVector<OpFoldResult>{bi, kvHead, j0, zero},
            SmallVector<OpFoldResult>{one, one, attr(s.blockK), attr(s.dvP)},
            ones);
        Value raw =
            kb.matmul(qBlock, kBlock, kb.full({s.blockQ, s.blockK}, f32, 0.0));
        Value scores = maskBlock(kb, raw, bp, i0, j0, off);
        AffineMap full = kb.map(2, {0, 1}), row = kb.map(2, {0});
        AffineMap vec = kb.map(1, {0});
        Value negInf = arith::ConstantOp::create(
            b, nl, f32, b.getF32FloatAttr(-INFINITY));
        Value zeroF = arith::ConstantOp::create(b, nl, f32,
                                                b.getF32FloatAttr(0.0));
        // exp(a - c), 0 where a is -inf (masked, or no key seen yet).
        auto expDiff = [&](OpBuilder &nb, Location l2, Value a,
                           Value c) -> Value {
          Value masked = arith::CmpFOp::create(
              nb, l2, arith::CmpFPredicate::OEQ, a, negInf);
          Value e = math::ExpOp::create(nb, l2,
                                        arith::SubFOp::create(nb, l2, a, c));
          return arith::SelectOp::create(nb, l2, masked, zeroF, e);
        };
        // The carried values are updated in place (an scf.for bufferizes
        // to one buffer for each): every read of the old m comes before
        // the op that overwrites it, and the updates of l and acc read only
        // the value they write (their init).
        // mb = rowmax(s); alpha = exp(m - max(m, mb)); m' = max(m, mb).
        Value mBlock = kb.generic(
            2, {{scores, full}}, kb.full({s.blockQ}, f32, -INFINITY), row,
            {1}, [](OpBuilder &nb, Location l2, ValueRange x) -> Value {
              return arith::MaximumFOp::create(nb, l2, x[0], x[1]);
            });
        Value alpha = kb.generic(
            1, {{m, vec}, {mBlock, vec}}, kb.empty({s.blockQ}, f32), vec, {},
            [&](OpBuilder &nb, Location l2, ValueRange x) {
              Value mNew = arith::MaximumFOp::create(nb, l2, x[0], x[1]);
              return expDiff(nb, l2, x[0], mNew);
            });
        Value mNew = kb.generic(
            1, {{mBlock, vec}}, m, vec, {},
            [](OpBuilder &nb, Location l2, ValueRange x) -> Value {
              return arith::MaximumFOp::create(nb, l2, x[0], x[1]);
            });
        Value p = kb.generic(
            2, {{scores, full}, {mNew, row}},
            kb.empty({s.blockQ, s.blockK}, f32), full, {},
            [&](OpBuilder &nb, Location l2, ValueRange x) {
              return expDiff(nb, l2, x[0], x[1]);
            });
        // l' = alpha * l + rowsum(p).
        Value lScaled = kb.generic(
            1, {{alpha, vec}}, l, vec, {},
            [](OpBuilder &nb, Location l2, ValueRange x) -> Value {
              return arith::MulFOp::create(nb, l2, x[0], x[1]);
            });
        Value lNew = kb.generic(
            2, {{p, full}}, lScaled, row, {1},
            [](OpBuilder &nb, Location l2, ValueRange x) -> Value {
              return arith::AddFOp::create(nb, l2, x[0], x[1]);
            });
        // acc' = alpha * acc + p @ v.
        Value accScaled = kb.generic(
            2, {{alpha, row}}, acc, full, {},
            [](OpBuilder &nb, Location l2, ValueRange x) -> Value {
              return arith::MulFOp::create(nb, l2, x[0], x[1]);
            });
        Value accNew = kb.matmul(p, vBlock, accScaled);
        scf::YieldOp::create(b, nl, ValueRange{mNew, lNew, accNew});
      });

  // o = acc / l, 0 on rows that saw no key.
  Value accFinal = keyLoop.getResult(2), lFinal = keyLoop.getResult(1);
  Type outElt = outType.getElementType();
  Value zeroF = arith::ConstantOp::create(rewriter, loc, f32,
                                          rewriter.getF32FloatAttr(0.0));
  Value oBlock = bb.generic(
      2, {{accFinal, bb.map(2, {0, 1})}, {lFinal, bb.map(2, {0})}},
      bb.empty({s.blockQ, s.dvP}, outElt), bb.map(2, {0, 1}), {},
      [&](OpBuilder &nb, Location nl, ValueRange x) -> Value {
        Value seen = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGT,
                                           x[1], zeroF);
        Value o = arith::SelectOp::create(
            nb, nl, seen, arith::DivFOp::create(nb, nl, x[0], x[1]), zeroF);
        if (outElt != o.getType())
          o = arith::TruncFOp::create(nb, nl, outElt, o);
        return o;
      });
  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(
      rewriter, loc, oBlock, outArg,
      SmallVector<OpFoldResult>{bi, hi, i0, zero},
      SmallVector<OpFoldResult>{one, one, attr(s.blockQ), attr(s.dvP)}, ones);
  // The result: the padded queries and value columns dropped.
  rewriter.setInsertionPointAfter(forall);
  Value result = forall.getResult(0);
  if (s.padsResult()) {
    SmallVector<OpFoldResult> zeros4(4, rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes;
    for (int64_t d : outType.getShape())
      sizes.push_back(rewriter.getIndexAttr(d));
    result = tensor::ExtractSliceOp::create(rewriter, loc, outType, result,
                                            zeros4, sizes, ones);
  }
  rewriter.replaceOp(op, result);

  scheduleBlocks(rewriter, forall, s.regN);
  return success();
}

//===----------------------------------------------------------------------===//
// The backwards (flash_attn_backward_q/k/v), FlashAttention-2's backward:
// per query row, lse = log sum_j exp(s_ij) and D_i = sum_j p_ij dp_ij (dp
// = do v^T) are computed in a first pass over the key blocks (online, as
// the forward's max and sum); then p = exp(s - lse) is recomputed block by
// block, ds = p * (dp - D) (times 1 - tanh^2 through a softcap, and the
// scale), and dq += ds k (per query block, over its key blocks), dk += ds^T
// q and dv += p^T do (per key block, over the query blocks and the query
// heads of its kv head that see it, lse and D read from a [B, Hq, Sq]
// tensor the first pass writes). Memory O(S * D); padding as in the
// forward.
//===----------------------------------------------------------------------===//

namespace {
/// The operands of a backward, in f32 and padded: q [B, Hq, SqP, DP], kT
/// [B, Hkv, DP, SkP], k [B, Hkv, SkP, DP], vT [B, Hkv, DvP, SkP], dout [B,
/// Hq, SqP, DvP].
struct BwdOperands {
  Value q, kT, k, vT, dout;
};

/// The probabilities of a block of masked scores: exp(s - lse), 0 where
/// masked.
Value blockProbs(BlockBuilder &bb, Value scores, Value lse) {
  Type f32 = bb.b.getF32Type();
  auto shape = cast<RankedTensorType>(scores.getType()).getShape();
  Value negInf = bb.constF(-INFINITY), zero = bb.constF(0.0);
  return bb.generic(
      2, {{scores, bb.map(2, {0, 1})}, {lse, bb.map(2, {0})}},
      bb.empty(shape, f32), bb.map(2, {0, 1}), {},
      [&](OpBuilder &nb, Location nl, ValueRange x) -> Value {
        Value masked = arith::CmpFOp::create(
            nb, nl, arith::CmpFPredicate::OEQ, x[0], negInf);
        Value e = math::ExpOp::create(
            nb, nl, arith::SubFOp::create(nb, nl, x[0], x[1]));
        return arith::SelectOp::create(nb, nl, masked, zero, e);
      });
}

/// ds = p * (dp - D) (through the softcap: times 1 - tanh^2) * scale, 0
/// where masked.
Value blockDs(BlockBuilder &bb, const BlockParams &bp, Value p, Value dp,
              Value delta, Value scores) {
  Type f32 = bb.b.getF32Type();
  auto shape = cast<RankedTensorType>(p.getType()).getShape();
  Value negInf = bb.constF(-INFINITY), zero = bb.constF(0.0),
        one = bb.constF(1.0), scale = bb.constF(bp.scale);
  Value cap = bp.softcap ? bb.constF(*bp.softcap) : Value();
  return bb.generic(
      2,
      {{p, bb.map(2, {0, 1})},
       {dp, bb.map(2, {0, 1})},
       {delta, bb.map(2, {0})},
       {scores, bb.map(2, {0, 1})}},
      bb.empty(shape, f32), bb.map(2, {0, 1}), {},
      [&](OpBuilder &nb, Location nl, ValueRange x) -> Value {
        Value g = arith::MulFOp::create(
            nb, nl, x[0], arith::SubFOp::create(nb, nl, x[1], x[2]));
        if (cap) {
          // The scores are cap * tanh(.) (less any ALiBi bias, which does
          // not depend on q or k); s's derivative is 1 - tanh^2.
          Value t = arith::DivFOp::create(nb, nl, x[3], cap);
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

/// lse and D ([Bq]) of the query block at i0 of head h: a pass over the
/// key blocks it sees with a running max m, sum l and E = sum exp(s - m) dp.
std::pair<Value, Value> rowStats(BlockBuilder &bb, const AttnShape &s,
                                 const BlockParams &bp,
                                 const BwdOperands &in, Value bi, Value h,
                                 Value kvHead, Value i0, Value off) {
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
            kb, kb.matmul(qBlock, kBlock, kb.full({s.blockQ, s.blockK}, f32, 0.0)),
            bp, i0, j0, off);
        Value negInf = kb.constF(-INFINITY), zeroF = kb.constF(0.0);
        auto expDiff = [&](OpBuilder &nb, Location l2, Value a,
                           Value c) -> Value {
          Value masked = arith::CmpFOp::create(
              nb, l2, arith::CmpFPredicate::OEQ, a, negInf);
          Value x = math::ExpOp::create(nb, l2,
                                        arith::SubFOp::create(nb, l2, a, c));
          return arith::SelectOp::create(nb, l2, masked, zeroF, x);
        };
        AffineMap full = kb.map(2, {0, 1}), row = kb.map(2, {0}),
                  vec = kb.map(1, {0});
        Value mBlock = kb.generic(
            2, {{scores, full}}, kb.full({s.blockQ}, f32, -INFINITY), row, {1},
            [](OpBuilder &nb, Location l2, ValueRange x) -> Value {
              return arith::MaximumFOp::create(nb, l2, x[0], x[1]);
            });
        Value alpha = kb.generic(
            1, {{m, vec}, {mBlock, vec}}, kb.empty({s.blockQ}, f32), vec, {},
            [&](OpBuilder &nb, Location l2, ValueRange x) {
              Value mNew = arith::MaximumFOp::create(nb, l2, x[0], x[1]);
              return expDiff(nb, l2, x[0], mNew);
            });
        Value mNew = kb.generic(
            1, {{mBlock, vec}}, m, vec, {},
            [](OpBuilder &nb, Location l2, ValueRange x) -> Value {
              return arith::MaximumFOp::create(nb, l2, x[0], x[1]);
            });
        Value p = kb.generic(
            2, {{scores, full}, {mNew, row}},
            kb.empty({s.blockQ, s.blockK}, f32), full, {},
            [&](OpBuilder &nb, Location l2, ValueRange x) {
              return expDiff(nb, l2, x[0], x[1]);
            });
        Value dp = kb.matmul(doBlock, vTBlock,
                             kb.full({s.blockQ, s.blockK}, f32, 0.0));
        Value pdp = kb.generic(
            2, {{p, full}, {dp, full}}, kb.empty({s.blockQ, s.blockK}, f32),
            full, {}, [](OpBuilder &nb, Location l2, ValueRange x) -> Value {
              return arith::MulFOp::create(nb, l2, x[0], x[1]);
            });
        auto scaleInPlace = [&](Value acc) {
          return kb.generic(
              1, {{alpha, vec}}, acc, vec, {},
              [](OpBuilder &nb, Location l2, ValueRange x) -> Value {
                return arith::MulFOp::create(nb, l2, x[0], x[1]);
              });
        };
        auto addRows = [&](Value x, Value init) {
          return kb.generic(
              2, {{x, full}}, init, row, {1},
              [](OpBuilder &nb, Location l2, ValueRange a) -> Value {
                return arith::AddFOp::create(nb, l2, a[0], a[1]);
              });
        };
        Value lNew = addRows(p, scaleInPlace(l));
        Value eNew = addRows(pdp, scaleInPlace(e));
        scf::YieldOp::create(b, nl, ValueRange{mNew, lNew, eNew});
      });
  AffineMap vec = bb.map(1, {0});
  Value m = loop.getResult(0), l = loop.getResult(1), e = loop.getResult(2);
  Value zeroF = bb.constF(0.0), inf = bb.constF(INFINITY);
  // Rows that see no key: lse = +inf (p = 0), D = 0.
  Value lse = bb.generic(
      1, {{m, vec}, {l, vec}}, bb.empty({s.blockQ}, f32), vec, {},
      [&](OpBuilder &nb, Location nl, ValueRange x) -> Value {
        Value seen = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGT,
                                           x[1], zeroF);
        Value v = arith::AddFOp::create(nb, nl, x[0],
                                        math::LogOp::create(nb, nl, x[1]));
        return arith::SelectOp::create(nb, nl, seen, v, inf);
      });
  Value delta = bb.generic(
      1, {{e, vec}, {l, vec}}, bb.empty({s.blockQ}, f32), vec, {},
      [&](OpBuilder &nb, Location nl, ValueRange x) -> Value {
        Value seen = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGT,
                                           x[1], zeroF);
        return arith::SelectOp::create(
            nb, nl, seen, arith::DivFOp::create(nb, nl, x[0], x[1]), zeroF);
      });
  return {lse, delta};
}
} // namespace

LogicalResult mlir::fuel::canScheduleAttentionBackward(
    FusedOp op, const ScheduleOptions &options, std::string &why) {
  for (unsigned i = 0; i < 4; ++i) {
    Type elt =
        cast<RankedTensorType>(op->getOperand(i).getType()).getElementType();
    if (!elt.isF32() && !elt.isF16() && !elt.isBF16()) {
      why = "the attention schedule handles f32, f16 and bf16";
      return failure();
    }
  }
  AttnShape s = AttnShape::of(op->getOperand(0), op->getOperand(1),
                              op->getOperand(2));
  if (!s.blockQ) {
    why = "the attention schedule needs non-empty sequences and head dims";
    return failure();
  }
  if (s.blockK % options.vectorWidth != 0) {
    why = "the attention schedule needs key blocks (" +
          std::to_string(s.blockK) + ") that are a multiple of the vector "
          "width (" + std::to_string(options.vectorWidth) + ")";
    return failure();
  }
  return success();
}

/// The backward's params (one schema for the three) and operands.
template <typename View>
static BlockParams bwdParams(View view) {
  return BlockParams{view.getSoftmaxScale(), view.getCausal(),
                     view.getWindowSizeLeft(), view.getWindowSizeRight(),
                     view.getSoftcap()};
}

LogicalResult mlir::fuel::buildAttentionBackward(
    RewriterBase &rewriter, FusedOp op, const ScheduleOptions &options) {
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
  AttnShape s = AttnShape::of(qIn, kIn, vIn);
  int64_t group = s.heads / s.kvHeads;
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  BlockBuilder bb{rewriter, loc};
  Type f32 = rewriter.getF32Type();
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  Type resElt = resultType.getElementType();

  BwdOperands in;
  in.q = padTo(bb, toF32(bb, qIn), {s.batch, s.heads, s.sqP, s.dP});
  in.dout = padTo(bb, toF32(bb, doIn), {s.batch, s.heads, s.sqP, s.dvP});
  in.kT = padTo(bb, transposeKeys(bb, kIn), {s.batch, s.kvHeads, s.dP, s.skP});
  in.vT = padTo(bb, transposeKeys(bb, vIn),
                {s.batch, s.kvHeads, s.dvP, s.skP});
  if (grad == Grad::Q)
    in.k = padTo(bb, toF32(bb, kIn), {s.batch, s.kvHeads, s.skP, s.dP});
  // Keys past Sk are padding, masked.
  if (s.padsKeys())
    bp.kLen = bb.index(s.sk);
  Value off = bb.index(s.sk - s.sq);
  auto slopeOf = [&](OpBuilder &b, Value bi, Value h) -> Value {
    if (!alibi)
      return Value();
    SmallVector<Value> at;
    if (cast<RankedTensorType>(alibi->getType()).getRank() == 2)
      at.push_back(bi);
    at.push_back(h);
    return tensor::ExtractOp::create(b, loc, *alibi, at);
  };
  auto one = rewriter.getIndexAttr(1), zeroA = rewriter.getIndexAttr(0);
  auto attr = [&](int64_t x) { return rewriter.getIndexAttr(x); };
  SmallVector<OpFoldResult> ones(4, one);

  if (grad == Grad::Q) {
    Value out = bb.empty({s.batch, s.heads, s.sqP, s.dP}, resElt);
    auto forall = scf::ForallOp::create(
        rewriter, loc,
        SmallVector<OpFoldResult>{attr(s.batch), attr(s.heads),
                                  attr(s.sqP / s.blockQ)},
        ValueRange{out}, std::nullopt);
    Block *body = forall.getBody();
    rewriter.setInsertionPointToStart(body);
    Value bi = body->getArgument(0), hi = body->getArgument(1);
    Value i0 = arith::MulIOp::create(rewriter, loc, body->getArgument(2),
                                     bb.index(s.blockQ));
    Value kvHead = arith::DivUIOp::create(rewriter, loc, hi, bb.index(group));
    BlockParams hp = bp;
    hp.slope = slopeOf(rewriter, bi, hi);
    auto [lse, delta] = rowStats(bb, s, hp, in, bi, hi, kvHead, i0, off);
    Value qBlock = bb.block(in.q, bi, hi, i0, zeroA, s.blockQ, s.dP);
    Value doBlock = bb.block(in.dout, bi, hi, i0, zeroA, s.blockQ, s.dvP);
    auto [lo, hiKey] = keyRange(bb, s, hp, i0, off);
    auto loop = scf::ForOp::create(
        rewriter, loc, lo, hiKey, bb.index(s.blockK),
        ValueRange{bb.full({s.blockQ, s.dP}, f32, 0.0)},
        [&](OpBuilder &b, Location nl, Value j0, ValueRange acc) {
          BlockBuilder kb{b, nl};
          Value kBlock = kb.block(in.kT, bi, kvHead, b.getIndexAttr(0), j0,
                                  s.dP, s.blockK);
          Value vTBlock = kb.block(in.vT, bi, kvHead, b.getIndexAttr(0), j0,
                                   s.dvP, s.blockK);
          Value kNat = kb.block(in.k, bi, kvHead, j0, b.getIndexAttr(0),
                                s.blockK, s.dP);
          Value scores = maskBlock(
              kb,
              kb.matmul(qBlock, kBlock,
                        kb.full({s.blockQ, s.blockK}, f32, 0.0)),
              hp, i0, j0, off);
          Value p = blockProbs(kb, scores, lse);
          Value dp = kb.matmul(doBlock, vTBlock,
                               kb.full({s.blockQ, s.blockK}, f32, 0.0));
          Value ds = blockDs(kb, hp, p, dp, delta, scores);
          scf::YieldOp::create(b, nl, kb.matmul(ds, kNat, acc[0]));
        });
    Value dq = loop.getResult(0);
    if (resElt != f32)
      dq = bb.generic(2, {{dq, bb.map(2, {0, 1})}},
                      bb.empty({s.blockQ, s.dP}, resElt), bb.map(2, {0, 1}),
                      {}, [&](OpBuilder &nb, Location nl, ValueRange x) -> Value {
                        return arith::TruncFOp::create(nb, nl, resElt, x[0]);
                      });
    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(
        rewriter, loc, dq, body->getArgument(3),
        SmallVector<OpFoldResult>{bi, hi, i0, zeroA},
        SmallVector<OpFoldResult>{one, one, attr(s.blockQ), attr(s.dP)}, ones);
    rewriter.setInsertionPointAfter(forall);
    scheduleBlocks(rewriter, forall, s.regN);
    Value result = forall.getResult(0);
    if (s.sqP != s.sq || s.dP != s.d) {
      SmallVector<OpFoldResult> sizes;
      for (int64_t d : resultType.getShape())
        sizes.push_back(attr(d));
      rewriter.setInsertionPointAfter(result.getDefiningOp());
      result = tensor::ExtractSliceOp::create(
          rewriter, loc, resultType, result,
          SmallVector<OpFoldResult>(4, zeroA), sizes, ones);
    }
    rewriter.replaceOp(op, result);
    return success();
  }

  // dk, dv: the rows' lse and D for every query first.
  Value lseAll = bb.empty({s.batch, s.heads, s.sqP}, f32);
  Value deltaAll = bb.empty({s.batch, s.heads, s.sqP}, f32);
  auto statsLoop = scf::ForallOp::create(
      rewriter, loc,
      SmallVector<OpFoldResult>{attr(s.batch), attr(s.heads),
                                attr(s.sqP / s.blockQ)},
      ValueRange{lseAll, deltaAll}, std::nullopt);
  {
    Block *body = statsLoop.getBody();
    rewriter.setInsertionPointToStart(body);
    Value bi = body->getArgument(0), hi = body->getArgument(1);
    Value i0 = arith::MulIOp::create(rewriter, loc, body->getArgument(2),
                                     bb.index(s.blockQ));
    Value kvHead = arith::DivUIOp::create(rewriter, loc, hi, bb.index(group));
    BlockParams hp = bp;
    hp.slope = slopeOf(rewriter, bi, hi);
    auto [lse, delta] = rowStats(bb, s, hp, in, bi, hi, kvHead, i0, off);
    rewriter.setInsertionPointToStart(statsLoop.getTerminator().getBody());
    SmallVector<OpFoldResult> at = {bi, hi, i0},
                              sizes = {one, one, attr(s.blockQ)};
    tensor::ParallelInsertSliceOp::create(rewriter, loc, lse,
                                          body->getArgument(3), at, sizes,
                                          SmallVector<OpFoldResult>(3, one));
    tensor::ParallelInsertSliceOp::create(rewriter, loc, delta,
                                          body->getArgument(4), at, sizes,
                                          SmallVector<OpFoldResult>(3, one));
  }
  rewriter.setInsertionPointAfter(statsLoop);
  scheduleBlocks(rewriter, statsLoop, s.regN);
  rewriter.setInsertionPointAfter(statsLoop);
  Value lseT = statsLoop.getResult(0), deltaT = statsLoop.getResult(1);

  int64_t width = grad == Grad::K ? s.dP : s.dvP;
  int64_t realWidth = grad == Grad::K ? s.d : s.dv;
  Value out = bb.empty({s.batch, s.kvHeads, s.skP, width}, resElt);
  auto forall = scf::ForallOp::create(
      rewriter, loc,
      SmallVector<OpFoldResult>{attr(s.batch), attr(s.kvHeads),
                                attr(s.skP / s.blockK)},
      ValueRange{out}, std::nullopt);
  Block *body = forall.getBody();
  rewriter.setInsertionPointToStart(body);
  Value bi = body->getArgument(0), hk = body->getArgument(1);
  Value j0 = arith::MulIOp::create(rewriter, loc, body->getArgument(2),
                                   bb.index(s.blockK));
  Value kBlock = bb.block(in.kT, bi, hk, zeroA, j0, s.dP, s.blockK);
  Value vTBlock = bb.block(in.vT, bi, hk, zeroA, j0, s.dvP, s.blockK);
  // The query blocks that see key block j0: i >= j0 - off - ahead (causal,
  // right window), i <= j0 + Bk - 1 - off + wl (left window).
  Value zero = bb.index(0), sqP = bb.index(s.sqP), bq = bb.index(s.blockQ);
  Value qlo = zero, qhi = sqP;
  std::optional<int64_t> ahead;
  if (bp.causal)
    ahead = 0;
  if (bp.windowRight)
    ahead = ahead ? std::min(*ahead, *bp.windowRight) : *bp.windowRight;
  if (ahead) {
    Value first = arith::SubIOp::create(rewriter, loc, j0,
                                        bb.index(s.sk - s.sq + *ahead));
    Value start = arith::MulIOp::create(
        rewriter, loc, arith::FloorDivSIOp::create(rewriter, loc, first, bq),
        bq);
    qlo = arith::MinSIOp::create(
        rewriter, loc, sqP, arith::MaxSIOp::create(rewriter, loc, zero, start));
  }
  if (bp.windowLeft) {
    Value last = arith::AddIOp::create(
        rewriter, loc, j0,
        bb.index(s.blockK - (s.sk - s.sq) + *bp.windowLeft));
    Value end = arith::MulIOp::create(
        rewriter, loc, arith::CeilDivSIOp::create(rewriter, loc, last, bq), bq);
    qhi = arith::MaxSIOp::create(
        rewriter, loc, qlo, arith::MinSIOp::create(rewriter, loc, sqP, end));
  }
  auto heads = scf::ForOp::create(
      rewriter, loc, zero, bb.index(group), bb.index(1),
      ValueRange{bb.full({s.blockK, width}, f32, 0.0)},
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
              auto oneA = b2.getIndexAttr(1);
              auto row = [&](Value t) {
                return tensor::ExtractSliceOp::create(
                    b2, l2, RankedTensorType::get({s.blockQ}, f32), t,
                    SmallVector<OpFoldResult>{bi, h, i0},
                    SmallVector<OpFoldResult>{oneA, oneA,
                                              b2.getIndexAttr(s.blockQ)},
                    SmallVector<OpFoldResult>(3, oneA));
              };
              Value scores = maskBlock(
                  qb,
                  qb.matmul(qBlock, kBlock,
                            qb.full({s.blockQ, s.blockK}, f32, 0.0)),
                  hp, i0, j0, off);
              Value p = blockProbs(qb, scores, row(lseT));
              Value next;
              if (grad == Grad::V) {
                next = qb.matmulT(p, doBlock, acc2[0]);
              } else {
                Value dp = qb.matmul(doBlock, vTBlock,
                                     qb.full({s.blockQ, s.blockK}, f32, 0.0));
                Value ds = blockDs(qb, hp, p, dp, row(deltaT), scores);
                next = qb.matmulT(ds, qBlock, acc2[0]);
              }
              scf::YieldOp::create(b2, l2, next);
            });
        scf::YieldOp::create(b, nl, queries.getResults());
      });
  Value grads = heads.getResult(0);
  if (resElt != f32)
    grads = bb.generic(2, {{grads, bb.map(2, {0, 1})}},
                       bb.empty({s.blockK, width}, resElt), bb.map(2, {0, 1}),
                       {}, [&](OpBuilder &nb, Location nl, ValueRange x) -> Value {
                         return arith::TruncFOp::create(nb, nl, resElt, x[0]);
                       });
  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(
      rewriter, loc, grads, body->getArgument(3),
      SmallVector<OpFoldResult>{bi, hk, j0, zeroA},
      SmallVector<OpFoldResult>{one, one, attr(s.blockK), attr(width)}, ones);
  rewriter.setInsertionPointAfter(forall);
  scheduleBlocks(rewriter, forall, s.regN);
  Value result = forall.getResult(0);
  if (s.skP != s.sk || width != realWidth) {
    SmallVector<OpFoldResult> sizes;
    for (int64_t d : resultType.getShape())
      sizes.push_back(attr(d));
    rewriter.setInsertionPointAfter(result.getDefiningOp());
    result = tensor::ExtractSliceOp::create(
        rewriter, loc, resultType, result, SmallVector<OpFoldResult>(4, zeroA),
        sizes, ones);
  }
  rewriter.replaceOp(op, result);
  return success();
}
