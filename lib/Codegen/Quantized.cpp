//===- Quantized.cpp - The quantized-matmul schedule ----------------------===//
//
// Matmuls whose weight is quantized, dequantized in registers: qmatmul with
// GGML's Q8_0 and Q4_0 weights (below), awq_matmul and nf4_matmul (at the
// end).
//
// qmatmul: C[m, n] = sum_k A[m, k] *
// dequant(W)[n, k], each weight byte read once per tile of rows of A and
// dequantized in registers.
//
// A Q8_0 block is 34 bytes (an f16 scale d, 32 int8 q: w = d * q) and a
// Q4_0 block 18 bytes (d, 16 bytes of nibbles: element e < 16 in the low
// nibble of byte e, e >= 16 in the high nibble of byte e - 16; w = d * (q -
// 8)). Blocks are not word-aligned, but two consecutive blocks are (68 and
// 36 bytes): the schedule reads rows of W two blocks (64 weights) at a time
// as one vector of 17 or 9 u32 words, reinterprets it as bytes, and takes
// the scales and the quants apart with static shuffles; nibbles by a mask
// and a shift. Each pair of blocks of a row n is dequantized once into four
// 16-lane vectors and multiplied into the accumulators of every row m of
// the tile; the accumulators (one 16-lane vector per (m, n)) are reduced
// across lanes once at the end.
//
// The loops: an scf.forall over tiles of `Mt` rows of A by `Nt` rows of W
// (the threads), an scf.for over the pairs of blocks of K carrying the
// Mt * Nt accumulators. The inner code is built in the vector dialect on
// the tensors directly: the decoding has no linalg form that vectorizes
// (the decomposition decodes each element with scalar byte extraction).
//
//===----------------------------------------------------------------------===//

#include "Quantized.h"

#include "FuelFused/IR/FuelAttrs.h"
#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <numeric>

using namespace mlir;
using namespace mlir::fuel;

namespace {
/// Lanes of the accumulators and of the dequantized pieces.
constexpr int64_t kLanes = 16;
/// Weights per step: two blocks of 32.
constexpr int64_t kStep = 64;

/// Rows of W per tile (N-major weights, one 16-lane accumulator per row of
/// A and of W): 4 x 4 with four rows of A; with one row (decode), 16 rows
/// of W, so that 16 independent accumulators hide the FMA latency (Q8_0
/// 1.36 -> 0.83 ms from 4 to 16 on [1, 4096] x [4096, 4096],
/// bench/qmatmul.py).
int64_t tileRowsOfW(int64_t tileM, int64_t n) {
  if (tileM == 1)
    for (int64_t t : {16, 8})
      if (n % t == 0)
        return t;
  return n % 4 == 0 ? 4 : 1;
}

/// The rows of activations [..., K] with their leading dims folded: their
/// product, or dynamic when one is.
int64_t foldedRows(Value act) {
  int64_t rows = 1;
  for (int64_t d : cast<RankedTensorType>(act.getType()).getShape().drop_back()) {
    if (ShapedType::isDynamic(d))
      return ShapedType::kDynamic;
    rows *= d;
  }
  return rows;
}

/// Rows of A per tile: 4 when they divide the rows, else 1 (also for a
/// dynamic number of rows).
int64_t rowTile(int64_t rows) {
  return !ShapedType::isDynamic(rows) && rows % 4 == 0 ? 4 : 1;
}

/// The shapes of one qmatmul the schedule handles.
struct QShape {
  QuantType type;
  int64_t rows; ///< M, the leading dims of A folded in.
  int64_t k, n;
  int64_t tileM, tileN;
  int64_t pairWords; ///< u32 words of two blocks.
};

QShape shapeOf(QmatmulView qm) {
  QShape s;
  s.type = qm.getQuantType();
  s.k = qm.getK();
  s.n = qm.getN();
  s.rows = foldedRows(qm.getA());
  s.tileM = rowTile(s.rows);
  s.tileN = tileRowsOfW(s.tileM, s.n);
  s.pairWords = 2 * getQuantBlockGeometry(s.type).second / 4;
  return s;
}
} // namespace

static LogicalResult canScheduleAwq(AwqMatmulView awq, std::string &why);
static LogicalResult buildAwq(RewriterBase &rewriter, AwqMatmulView awq);
static LogicalResult canScheduleNf4(Nf4MatmulView nf4, std::string &why);
static LogicalResult buildNf4(RewriterBase &rewriter, Nf4MatmulView nf4);

LogicalResult mlir::fuel::canScheduleQuantized(FusedOp op,
                                               const ScheduleOptions &options,
                                               std::string &why) {
  // Activations [..., K] may have dynamic rows (the leading dims, at most
  // one of them dynamic: upstream's memref lowering cannot split one dim
  // into several dynamic ones); everything else is static.
  auto act = cast<RankedTensorType>(op->getOperand(0).getType());
  int64_t dynamicRows = llvm::count_if(act.getShape().drop_back(),
                                       ShapedType::isDynamic);
  bool othersStatic = llvm::all_of(
      llvm::drop_begin(op->getOperandTypes()), [](Type t) {
        auto shaped = dyn_cast<ShapedType>(t);
        return !shaped || shaped.hasStaticShape();
      });
  if (act.isDynamicDim(act.getRank() - 1) || !othersStatic ||
      dynamicRows > 1) {
    why = "the quantized schedule needs static weights and K, and at most "
          "one dynamic dim of rows";
    return failure();
  }
  if (std::optional<AwqMatmulView> awq = AwqMatmulView::match(op))
    return canScheduleAwq(*awq, why);
  if (std::optional<Nf4MatmulView> nf4 = Nf4MatmulView::match(op))
    return canScheduleNf4(*nf4, why);
  QmatmulView qm(op);
  QShape s = shapeOf(qm);
  if (s.type != QuantType::Q8_0 && s.type != QuantType::Q4_0) {
    why = "the quantized schedule handles Q8_0 and Q4_0 weights";
    return failure();
  }
  if (s.k % kStep != 0) {
    why = "the quantized schedule needs K a multiple of " +
          std::to_string(kStep) + " (got " + std::to_string(s.k) + ")";
    return failure();
  }
  Type elt = cast<RankedTensorType>(qm.getA().getType()).getElementType();
  if (!elt.isF32() && !elt.isF16() && !elt.isBF16()) {
    why = "the quantized schedule handles f32, f16 and bf16 activations";
    return failure();
  }
  // The words the op's rule requires; the schedule reads no further.
  auto words = cast<RankedTensorType>(qm.getWQ().getType()).getDimSize(0);
  if (words < s.n * (s.k / kStep) * s.pairWords) {
    why = "w_q is shorter than N * K / 64 pairs of blocks";
    return failure();
  }
  return success();
}

namespace {
/// Builds the vector code of one step.
struct StepBuilder {
  OpBuilder &b;
  Location loc;

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

  /// `bytes[from, from + count)` as a vector (a static shuffle).
  Value slice(Value bytes, int64_t from, int64_t count) {
    SmallVector<int64_t> mask(count);
    std::iota(mask.begin(), mask.end(), from);
    return vector::ShuffleOp::create(b, loc, bytes, bytes, mask);
  }

  /// The f16 at bytes[from, from + 2), as an f32 broadcast to the lanes.
  Value scale(Value bytes, int64_t from) {
    Value two = slice(bytes, from, 2);
    Value half = vector::BitCastOp::create(
        b, loc, VectorType::get({1}, b.getF16Type()), two);
    Value f = arith::ExtFOp::create(
        b, loc, VectorType::get({1}, b.getF32Type()), half);
    return vector::BroadcastOp::create(
        b, loc, VectorType::get({kLanes}, b.getF32Type()),
        vector::ExtractOp::create(b, loc, f, ArrayRef<int64_t>{0}));
  }

  /// Signed i8 lanes times the broadcast scale `d` (when given), as f32.
  Value dequant(Value q, Value d) {
    Value f = arith::SIToFPOp::create(
        b, loc, VectorType::get({kLanes}, b.getF32Type()), q);
    return d ? arith::MulFOp::create(b, loc, f, d).getResult() : f;
  }

  /// The 64 weights of the pair of blocks in `words`, as four 16-lane f32
  /// vectors; with `scales`, the quants unscaled and the two blocks' scales
  /// (broadcast) in `scales`.
  SmallVector<Value, 4> decodePair(QuantType type, Value words,
                                   SmallVectorImpl<Value> *scales = nullptr) {
    int64_t nBytes = cast<VectorType>(words.getType()).getNumElements() * 4;
    Value bytes = vector::BitCastOp::create(
        b, loc, VectorType::get({nBytes}, b.getI8Type()), words);
    SmallVector<Value, 4> w;
    int64_t blockBytes = nBytes / 2;
    for (int64_t blk = 0; blk < 2; ++blk) {
      int64_t at = blk * blockBytes;
      Value d = scale(bytes, at);
      if (scales) {
        scales->push_back(d);
        d = Value();
      }
      if (type == QuantType::Q8_0) {
        w.push_back(dequant(slice(bytes, at + 2, kLanes), d));
        w.push_back(dequant(slice(bytes, at + 2 + kLanes, kLanes), d));
        continue;
      }
      // Q4_0: low nibbles are elements 0..15, high nibbles 16..31; q - 8.
      auto i8s = VectorType::get({kLanes}, b.getI8Type());
      auto splat = [&](int64_t v) -> Value {
        return arith::ConstantOp::create(
            b, loc, i8s, DenseElementsAttr::get(i8s, b.getI8IntegerAttr(v)));
      };
      Value qs = slice(bytes, at + 2, kLanes);
      Value lo = arith::AndIOp::create(b, loc, qs, splat(15));
      Value hi = arith::ShRUIOp::create(b, loc, qs, splat(4));
      w.push_back(dequant(arith::SubIOp::create(b, loc, lo, splat(8)), d));
      w.push_back(dequant(arith::SubIOp::create(b, loc, hi, splat(8)), d));
    }
    return w;
  }
};
} // namespace

namespace {
/// What the quantized builds share: A folded to [rows, K], an scf.forall
/// over tiles of `tileM` rows of A by `tileN` columns of C (the builder's
/// insertion point inside it), and the write of each tile and of C.
struct TileFrame {
  Value act, a;
  SmallVector<ReassociationIndices> fold;
  scf::ForallOp forall;
  Value m0, n0, outArg;
  int64_t tileM, tileN;
  RankedTensorType cType;

  static TileFrame open(RewriterBase &rewriter, FusedOp op, Value act,
                        int64_t rows, int64_t n, int64_t tileM,
                        int64_t tileN) {
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    TileFrame f;
    f.tileM = tileM;
    f.tileN = tileN;
    f.cType = cast<RankedTensorType>(op->getResult(0).getType());
    auto aType = cast<RankedTensorType>(act.getType());
    f.act = f.a = act;
    if (aType.getRank() > 2) {
      ReassociationIndices lead;
      for (int64_t d = 0; d + 1 < aType.getRank(); ++d)
        lead.push_back(d);
      f.fold = {lead, {aType.getRank() - 1}};
      f.a = tensor::CollapseShapeOp::create(rewriter, loc, act, f.fold);
    }
    // (A dynamic number of rows is tiled by one row.)
    OpFoldResult rowCount =
        ShapedType::isDynamic(rows)
            ? OpFoldResult(tensor::DimOp::create(rewriter, loc, f.a, 0).getResult())
            : OpFoldResult(rewriter.getIndexAttr(rows));
    Value out = tensor::EmptyOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{rowCount, rewriter.getIndexAttr(n)},
        f.cType.getElementType());
    SmallVector<OpFoldResult> ubs = {
        ShapedType::isDynamic(rows) ? rowCount
                                    : rewriter.getIndexAttr(rows / tileM),
        rewriter.getIndexAttr(n / tileN)};
    f.forall = scf::ForallOp::create(rewriter, loc, ubs, ValueRange{out},
                                     std::nullopt);
    Block *body = f.forall.getBody();
    rewriter.setInsertionPointToStart(body);
    f.m0 = arith::MulIOp::create(
        rewriter, loc, body->getArgument(0),
        arith::ConstantIndexOp::create(rewriter, loc, tileM));
    f.n0 = arith::MulIOp::create(
        rewriter, loc, body->getArgument(1),
        arith::ConstantIndexOp::create(rewriter, loc, tileN));
    f.outArg = body->getArgument(2);
    return f;
  }

  /// Dot-product form: the accumulator of (row m of A, row j of W) gains
  /// the products of the dequantized pieces `w` of row j with the pieces
  /// `act[m]` of row m, lane by lane.
  void accumulate(OpBuilder &b, Location loc, MutableArrayRef<Value> accs,
                  int64_t j, ArrayRef<Value> w,
                  ArrayRef<SmallVector<Value, 4>> act) const {
    for (int64_t m = 0; m < tileM; ++m) {
      Value &acc = accs[m * tileN + j];
      for (size_t piece = 0; piece < w.size(); ++piece)
        acc = vector::FMAOp::create(b, loc, w[piece], act[m][piece], acc);
    }
  }

  /// The tile of C ([tileM, tileN]) to write into.
  Value emptyTile(RewriterBase &rewriter, Location loc) const {
    return tensor::ExtractSliceOp::create(
        rewriter, loc,
        RankedTensorType::get({tileM, tileN}, cType.getElementType()), outArg,
        SmallVector<OpFoldResult>{m0, n0},
        SmallVector<OpFoldResult>{rewriter.getIndexAttr(tileM),
                                  rewriter.getIndexAttr(tileN)},
        SmallVector<OpFoldResult>(2, rewriter.getIndexAttr(1)));
  }

  /// The tile of dot products: accumulator m * tileN + j, reduced across
  /// its lanes, is C[m0 + m, n0 + j].
  Value reducedTile(RewriterBase &rewriter, Location loc,
                    ValueRange accs) const {
    Type cElt = cType.getElementType();
    Value tile = emptyTile(rewriter, loc);
    for (int64_t m = 0; m < tileM; ++m) {
      SmallVector<Value> sums;
      for (int64_t j = 0; j < tileN; ++j) {
        Value sum = vector::ReductionOp::create(
            rewriter, loc, vector::CombiningKind::ADD, accs[m * tileN + j]);
        if (cElt != sum.getType())
          sum = arith::TruncFOp::create(rewriter, loc, cElt, sum);
        sums.push_back(sum);
      }
      Value row = vector::FromElementsOp::create(
          rewriter, loc, VectorType::get({tileN}, cElt), sums);
      tile = vector::TransferWriteOp::create(
                 rewriter, loc, row, tile,
                 ValueRange{arith::ConstantIndexOp::create(rewriter, loc, m),
                            arith::ConstantIndexOp::create(rewriter, loc, 0)},
                 ArrayRef<bool>{true})
                 .getResult();
    }
    return tile;
  }

  /// Writes `tile` as the forall's tile of C and replaces `op` by C.
  void close(RewriterBase &rewriter, FusedOp op, Value tile) {
    Location loc = op.getLoc();
    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(
        rewriter, loc, tile, outArg, SmallVector<OpFoldResult>{m0, n0},
        SmallVector<OpFoldResult>{rewriter.getIndexAttr(tileM),
                                  rewriter.getIndexAttr(tileN)},
        SmallVector<OpFoldResult>(2, rewriter.getIndexAttr(1)));
    rewriter.setInsertionPointAfter(forall);
    Value c = forall.getResult(0);
    if (!fold.empty()) {
      SmallVector<OpFoldResult> shape =
          tensor::getMixedSizes(rewriter, loc, act);
      shape.back() = rewriter.getIndexAttr(cType.getShape().back());
      c = tensor::ExpandShapeOp::create(rewriter, loc, cType, c, fold, shape);
    }
    rewriter.replaceOp(op, c);
  }
};
} // namespace

LogicalResult mlir::fuel::buildQuantized(RewriterBase &rewriter, FusedOp op,
                                         const ScheduleOptions &options) {
  if (std::optional<AwqMatmulView> awq = AwqMatmulView::match(op))
    return buildAwq(rewriter, *awq);
  if (std::optional<Nf4MatmulView> nf4 = Nf4MatmulView::match(op))
    return buildNf4(rewriter, *nf4);
  QmatmulView qm(op);
  QShape s = shapeOf(qm);
  Location loc = op.getLoc();
  Type f32 = rewriter.getF32Type();
  Type aElt = cast<RankedTensorType>(qm.getA().getType()).getElementType();
  TileFrame frame = TileFrame::open(rewriter, op, qm.getA(), s.rows, s.n,
                                    s.tileM, s.tileN);
  Value a = frame.a, m0 = frame.m0, n0 = frame.n0, wq = qm.getWQ();
  StepBuilder sb{rewriter, loc};

  auto lanes = VectorType::get({kLanes}, f32);
  Value zeros = arith::ConstantOp::create(
      rewriter, loc, lanes, DenseElementsAttr::get(lanes, 0.0f));
  int64_t nAcc = s.tileM * s.tileN;
  SmallVector<Value> inits(nAcc, zeros);
  int64_t rowWords = (s.k / kStep) * s.pairWords;
  Value padF = arith::ConstantOp::create(rewriter, loc, aElt,
                                         rewriter.getFloatAttr(aElt, 0.0));
  Value padI = arith::ConstantOp::create(rewriter, loc, rewriter.getI32Type(),
                                         rewriter.getI32IntegerAttr(0));
  auto steps = scf::ForOp::create(
      rewriter, loc, sb.index(0), sb.index(s.k / kStep), sb.index(1), inits,
      [&](OpBuilder &b, Location l, Value p, ValueRange accs) {
        StepBuilder st{b, l};
        // The activations of the step: tileM rows of 4 x 16 lanes.
        Value k0 = arith::MulIOp::create(b, l, p, st.index(kStep));
        SmallVector<SmallVector<Value, 4>> act(s.tileM);
        for (int64_t m = 0; m < s.tileM; ++m) {
          Value row = arith::AddIOp::create(b, l, m0, st.index(m));
          for (int64_t piece = 0; piece < 4; ++piece) {
            Value col = arith::AddIOp::create(b, l, k0,
                                              st.index(piece * kLanes));
            Value x = vector::TransferReadOp::create(
                b, l, VectorType::get({kLanes}, aElt), a,
                ValueRange{row, col}, padF, ArrayRef<bool>{true});
            if (aElt != f32)
              x = arith::ExtFOp::create(b, l, lanes, x);
            act[m].push_back(x);
          }
        }
        SmallVector<Value> next(accs.begin(), accs.end());
        for (int64_t j = 0; j < s.tileN; ++j) {
          // Row n0 + j of W, pair p: word (n0 + j) * rowWords + p * pairWords.
          Value rowStart = arith::MulIOp::create(
              b, l, arith::AddIOp::create(b, l, n0, st.index(j)),
              st.index(rowWords));
          Value word = arith::AddIOp::create(
              b, l, rowStart,
              arith::MulIOp::create(b, l, p, st.index(s.pairWords)));
          Value words = vector::TransferReadOp::create(
              b, l, VectorType::get({s.pairWords}, b.getI32Type()), wq,
              ValueRange{word}, padI, ArrayRef<bool>{true});
          if (s.tileM == 1) {
            // One row of A: scale each block's dot product once instead of
            // its 32 weights (3 vector ops per block, not 4).
            SmallVector<Value, 2> d;
            SmallVector<Value, 4> q = st.decodePair(s.type, words, &d);
            Value &acc = next[j];
            for (int64_t blk = 0; blk < 2; ++blk) {
              Value dot = arith::MulFOp::create(b, l, q[2 * blk],
                                                act[0][2 * blk]);
              dot = vector::FMAOp::create(b, l, q[2 * blk + 1],
                                          act[0][2 * blk + 1], dot);
              acc = vector::FMAOp::create(b, l, dot, d[blk], acc);
            }
            continue;
          }
          SmallVector<Value, 4> w = st.decodePair(s.type, words);
          frame.accumulate(b, l, next, j, w, act);
        }
        scf::YieldOp::create(b, l, next);
      });

  // Each accumulator reduced across its lanes: row m of the tile.
  frame.close(rewriter, op,
              frame.reducedTile(rewriter, loc, steps.getResults()));
  return success();
}

//===----------------------------------------------------------------------===//
// AWQ (GEMM format): W[k, n] = (q[k, n] - z[k / G, n]) * s[k / G, n],
// C = A @ W, eight nibbles per word along N in the order
// [0, 2, 4, 6, 1, 3, 5, 7]. The weight is K-major, so the product is an
// outer product per k: tiles of 64 columns (8 words of a row of qweight)
// are dequantized into four 16-lane vectors (each lane shifts its word by
// its column's nibble), and every row m of the tile adds A[m, k] times
// them. A group's zeros and scales are decoded once per group.
//===----------------------------------------------------------------------===//

namespace {
/// The nibble shift of column j % 8 of a word: 4 * position of j in the
/// pack order.
constexpr int32_t kAwqShift[8] = {0, 16, 4, 20, 8, 24, 12, 28};

struct AwqShape {
  int64_t rows, k, n, group;
  int64_t tileM, tileN;
};

AwqShape shapeOf(AwqMatmulView awq) {
  auto q = cast<RankedTensorType>(awq.getQweight().getType());
  AwqShape s;
  s.rows = foldedRows(awq.getAct());
  s.k = q.getDimSize(0);
  s.n = q.getDimSize(1) * 8;
  s.group = awq.getGroupSize();
  s.tileM = rowTile(s.rows);
  s.tileN = s.n % 64 == 0 ? 64 : (s.n % 32 == 0 ? 32 : 16);
  return s;
}
} // namespace

static LogicalResult canScheduleAwq(AwqMatmulView awq, std::string &why) {
  AwqShape s = shapeOf(awq);
  if (s.n % kLanes != 0) {
    why = "the quantized schedule needs N a multiple of " +
          std::to_string(kLanes) + " (got " + std::to_string(s.n) + ")";
    return failure();
  }
  for (Value v : {awq.getAct(), awq.getScales()}) {
    Type elt = cast<RankedTensorType>(v.getType()).getElementType();
    if (!elt.isF32() && !elt.isF16() && !elt.isBF16()) {
      why = "the quantized schedule handles f32, f16 and bf16 activations "
            "and scales";
      return failure();
    }
  }
  return success();
}

/// Lanes 8j..8j+7 take word `first + j` of `words`, shifted to their
/// column's nibble and masked: the nibbles of 16 columns as i32.
static Value awqNibbles(StepBuilder &st, Value words, int64_t first) {
  OpBuilder &b = st.b;
  Location loc = st.loc;
  SmallVector<int64_t> spread;
  for (int64_t lane = 0; lane < kLanes; ++lane)
    spread.push_back(first + lane / 8);
  Value w = vector::ShuffleOp::create(b, loc, words, words, spread);
  auto i32s = VectorType::get({kLanes}, b.getI32Type());
  SmallVector<int32_t> shifts;
  for (int64_t lane = 0; lane < kLanes; ++lane)
    shifts.push_back(kAwqShift[lane % 8]);
  Value shift = arith::ConstantOp::create(
      b, loc, i32s, DenseElementsAttr::get(i32s, ArrayRef<int32_t>(shifts)));
  Value fifteen = arith::ConstantOp::create(
      b, loc, i32s, DenseElementsAttr::get(i32s, b.getI32IntegerAttr(15)));
  return arith::AndIOp::create(b, loc,
                               arith::ShRUIOp::create(b, loc, w, shift),
                               fifteen);
}

static LogicalResult buildAwq(RewriterBase &rewriter, AwqMatmulView awq) {
  FusedOp op = awq.getOperation();
  AwqShape s = shapeOf(awq);
  Location loc = op.getLoc();
  Type f32 = rewriter.getF32Type(), i32 = rewriter.getI32Type();
  Type aElt = cast<RankedTensorType>(awq.getAct().getType()).getElementType();
  Type cElt = cast<RankedTensorType>(op->getResult(0).getType())
                  .getElementType();
  Value scales = awq.getScales();
  Type sElt = cast<RankedTensorType>(scales.getType()).getElementType();
  TileFrame frame = TileFrame::open(rewriter, op, awq.getAct(), s.rows, s.n,
                                    s.tileM, s.tileN);
  Value a = frame.a, m0 = frame.m0, n0 = frame.n0;
  StepBuilder sb{rewriter, loc};
  Value w0 = arith::DivUIOp::create(rewriter, loc, n0, sb.index(8));
  int64_t nVec = s.tileN / kLanes, nWords = s.tileN / 8;
  auto lanes = VectorType::get({kLanes}, f32);
  Value zeros = arith::ConstantOp::create(
      rewriter, loc, lanes, DenseElementsAttr::get(lanes, 0.0f));
  Value padI = arith::ConstantOp::create(rewriter, loc, i32,
                                         rewriter.getI32IntegerAttr(0));
  Value padS = arith::ConstantOp::create(rewriter, loc, sElt,
                                         rewriter.getFloatAttr(sElt, 0.0));
  SmallVector<Value> inits(s.tileM * nVec, zeros);
  auto wordsAt = [&](OpBuilder &b, Location l, Value tensor, Value row) {
    return vector::TransferReadOp::create(
        b, l, VectorType::get({nWords}, i32), tensor, ValueRange{row, w0},
        padI, ArrayRef<bool>{true});
  };
  auto groups = scf::ForOp::create(
      rewriter, loc, sb.index(0), sb.index(s.k / s.group), sb.index(1), inits,
      [&](OpBuilder &b, Location l, Value g, ValueRange accs) {
        StepBuilder st{b, l};
        // The group's zeros (as i32 nibbles) and scales, per 16 columns.
        Value zWords = wordsAt(b, l, awq.getQzeros(), g);
        SmallVector<Value> z, sc;
        for (int64_t v = 0; v < nVec; ++v) {
          z.push_back(awqNibbles(st, zWords, 2 * v));
          Value col = arith::AddIOp::create(b, l, n0, st.index(v * kLanes));
          Value x = vector::TransferReadOp::create(
              b, l, VectorType::get({kLanes}, sElt), scales,
              ValueRange{g, col}, padS, ArrayRef<bool>{true});
          if (sElt != f32)
            x = arith::ExtFOp::create(b, l, lanes, x);
          sc.push_back(x);
        }
        Value k0 = arith::MulIOp::create(b, l, g, st.index(s.group));
        auto inner = scf::ForOp::create(
            b, l, st.index(0), st.index(s.group), st.index(1), accs,
            [&](OpBuilder &ib, Location il, Value kk, ValueRange acc) {
              StepBuilder it{ib, il};
              Value k = arith::AddIOp::create(ib, il, k0, kk);
              Value words = wordsAt(ib, il, awq.getQweight(), k);
              SmallVector<Value> w;
              for (int64_t v = 0; v < nVec; ++v) {
                Value q = awqNibbles(it, words, 2 * v);
                Value diff = arith::SubIOp::create(ib, il, q, z[v]);
                Value f = arith::SIToFPOp::create(ib, il, lanes, diff);
                w.push_back(arith::MulFOp::create(ib, il, f, sc[v]));
              }
              SmallVector<Value> next(acc.begin(), acc.end());
              for (int64_t m = 0; m < s.tileM; ++m) {
                Value row = arith::AddIOp::create(ib, il, m0, it.index(m));
                Value x = tensor::ExtractOp::create(ib, il, a,
                                                    ValueRange{row, k});
                if (aElt != f32)
                  x = arith::ExtFOp::create(ib, il, f32, x);
                Value bx = vector::BroadcastOp::create(ib, il, lanes, x);
                for (int64_t v = 0; v < nVec; ++v) {
                  Value &av = next[m * nVec + v];
                  av = vector::FMAOp::create(ib, il, w[v], bx, av);
                }
              }
              scf::YieldOp::create(ib, il, next);
            });
        scf::YieldOp::create(b, l, inner.getResults());
      });

  Value tile = frame.emptyTile(rewriter, loc);
  for (int64_t m = 0; m < s.tileM; ++m)
    for (int64_t v = 0; v < nVec; ++v) {
      Value acc = groups.getResult(m * nVec + v);
      if (cElt != f32)
        acc = arith::TruncFOp::create(
            rewriter, loc, VectorType::get({kLanes}, cElt), acc);
      tile = vector::TransferWriteOp::create(
                 rewriter, loc, acc, tile,
                 ValueRange{sb.index(m), sb.index(v * kLanes)},
                 ArrayRef<bool>{true})
                 .getResult();
    }
  frame.close(rewriter, op, tile);
  return success();
}

//===----------------------------------------------------------------------===//
// NF4 (bitsandbytes): W[n, k] = NF4[code(n, k)] * absmax[n, k / B], code in
// the high nibble of byte w_packed[n, k / 2] for even k, the low one for odd
// k; C = A @ W^T. N-major like qmatmul: per row n of a tile, steps of 32
// weights (16 bytes read as one vector) split into nibbles, interleaved
// back into element order by static shuffles, looked up in the 16-entry
// code book (a gather from a constant, in L1), scaled by the block's absmax
// and multiplied into the accumulators of every row m of the tile.
//===----------------------------------------------------------------------===//

namespace {
struct Nf4Shape {
  int64_t rows, k, n, block;
  int64_t tileM, tileN;
};

Nf4Shape shapeOf(Nf4MatmulView nf4) {
  auto a = cast<RankedTensorType>(nf4.getAct().getType());
  auto w = cast<RankedTensorType>(nf4.getWPacked().getType());
  Nf4Shape s;
  s.rows = foldedRows(nf4.getAct());
  s.k = a.getShape().back();
  s.n = w.getDimSize(0);
  s.block = nf4.getBlockSize();
  s.tileM = rowTile(s.rows);
  s.tileN = tileRowsOfW(s.tileM, s.n);
  return s;
}
} // namespace

static LogicalResult canScheduleNf4(Nf4MatmulView nf4, std::string &why) {
  Nf4Shape s = shapeOf(nf4);
  if (s.k % 32 != 0 || s.block % 32 != 0) {
    why = "the quantized schedule needs K and the block size multiples of "
          "32 (got " + std::to_string(s.k) + " and " +
          std::to_string(s.block) + ")";
    return failure();
  }
  Type elt = cast<RankedTensorType>(nf4.getAct().getType()).getElementType();
  if (!elt.isF32() && !elt.isF16() && !elt.isBF16()) {
    why = "the quantized schedule handles f32, f16 and bf16 activations";
    return failure();
  }
  return success();
}

static LogicalResult buildNf4(RewriterBase &rewriter, Nf4MatmulView nf4) {
  FusedOp op = nf4.getOperation();
  Nf4Shape s = shapeOf(nf4);
  Location loc = op.getLoc();
  Type f32 = rewriter.getF32Type(), i8 = rewriter.getI8Type();
  Type aElt = cast<RankedTensorType>(nf4.getAct().getType()).getElementType();
  rewriter.setInsertionPoint(op);
  auto tableType = RankedTensorType::get({16}, f32);
  Value table = arith::ConstantOp::create(
      rewriter, loc, DenseElementsAttr::get(tableType, getNf4CodeBook()));
  TileFrame frame = TileFrame::open(rewriter, op, nf4.getAct(), s.rows, s.n,
                                    s.tileM, s.tileN);
  Value a = frame.a, m0 = frame.m0, n0 = frame.n0;
  StepBuilder sb{rewriter, loc};
  auto lanes = VectorType::get({kLanes}, f32);
  auto i8s = VectorType::get({kLanes}, i8);
  auto i32s = VectorType::get({kLanes}, rewriter.getI32Type());
  Value zeros = arith::ConstantOp::create(
      rewriter, loc, lanes, DenseElementsAttr::get(lanes, 0.0f));
  Value padF = arith::ConstantOp::create(rewriter, loc, aElt,
                                         rewriter.getFloatAttr(aElt, 0.0));
  Value padI = arith::ConstantOp::create(rewriter, loc, i8,
                                         rewriter.getI8IntegerAttr(0));
  Value padT = arith::ConstantOp::create(rewriter, loc, f32,
                                         rewriter.getF32FloatAttr(0.0));
  auto i1s = VectorType::get({kLanes}, rewriter.getI1Type());
  Value all = arith::ConstantOp::create(
      rewriter, loc, i1s, DenseElementsAttr::get(i1s, true));
  SmallVector<Value> inits(s.tileM * s.tileN, zeros);
  auto steps = scf::ForOp::create(
      rewriter, loc, sb.index(0), sb.index(s.k / 32), sb.index(1), inits,
      [&](OpBuilder &b, Location l, Value p, ValueRange accs) {
        StepBuilder st{b, l};
        Value k0 = arith::MulIOp::create(b, l, p, st.index(32));
        Value byte0 = arith::MulIOp::create(b, l, p, st.index(16));
        Value blk = arith::DivUIOp::create(b, l, k0, st.index(s.block));
        SmallVector<SmallVector<Value, 4>> act(s.tileM);
        for (int64_t m = 0; m < s.tileM; ++m) {
          Value row = arith::AddIOp::create(b, l, m0, st.index(m));
          for (int64_t piece = 0; piece < 2; ++piece) {
            Value col = arith::AddIOp::create(b, l, k0,
                                              st.index(piece * kLanes));
            Value x = vector::TransferReadOp::create(
                b, l, VectorType::get({kLanes}, aElt), a,
                ValueRange{row, col}, padF, ArrayRef<bool>{true});
            if (aElt != f32)
              x = arith::ExtFOp::create(b, l, lanes, x);
            act[m].push_back(x);
          }
        }
        auto splat = [&](int64_t v) -> Value {
          return arith::ConstantOp::create(
              b, l, i8s, DenseElementsAttr::get(i8s, b.getI8IntegerAttr(v)));
        };
        Value c0 = st.index(0);
        SmallVector<Value> next(accs.begin(), accs.end());
        for (int64_t j = 0; j < s.tileN; ++j) {
          Value n = arith::AddIOp::create(b, l, n0, st.index(j));
          Value bytes = vector::TransferReadOp::create(
              b, l, i8s, nf4.getWPacked(), ValueRange{n, byte0}, padI,
              ArrayRef<bool>{true});
          Value hi = arith::ShRUIOp::create(b, l, bytes, splat(4));
          Value lo = arith::AndIOp::create(b, l, bytes, splat(15));
          Value scale = vector::BroadcastOp::create(
              b, l, lanes,
              tensor::ExtractOp::create(b, l, nf4.getAbsmax(),
                                        ValueRange{n, blk}));
          SmallVector<Value, 2> w;
          for (int64_t half = 0; half < 2; ++half) {
            // Elements 16 * half + 2i and + 2i + 1: the high and the low
            // nibble of byte 8 * half + i.
            SmallVector<int64_t> order;
            for (int64_t i = 0; i < kLanes / 2; ++i) {
              order.push_back(half * 8 + i);
              order.push_back(kLanes + half * 8 + i);
            }
            Value codes = vector::ShuffleOp::create(b, l, hi, lo, order);
            Value idx = arith::ExtUIOp::create(b, l, i32s, codes);
            Value v = vector::GatherOp::create(b, l, lanes, table,
                                               ValueRange{c0}, idx, all,
                                               vector::BroadcastOp::create(
                                                   b, l, lanes, padT));
            w.push_back(arith::MulFOp::create(b, l, v, scale));
          }
          frame.accumulate(b, l, next, j, w, act);
        }
        scf::YieldOp::create(b, l, next);
      });

  frame.close(rewriter, op,
              frame.reducedTile(rewriter, loc, steps.getResults()));
  return success();
}
