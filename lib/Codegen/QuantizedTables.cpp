//===- QuantizedTables.cpp - awq_matmul's and nf4_matmul's schedules -----===//
//
// The quantized matmuls whose weights are not GGML blocks: AWQ's nibbles
// with a zero and a scale per group and column, and bitsandbytes' NF4 codes
// into a 16-entry code book with a scale per block. Both use the tiles of
// QuantizedTiles.h and dequantize in vector registers.
//
//===----------------------------------------------------------------------===//

#include "QuantizedTiles.h"
#include "ScheduleUtils.h"

#include "FuelFused/IR/FuelAttrs.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "llvm/ADT/bit.h"

using namespace mlir;
using namespace mlir::fuel;
using namespace mlir::fuel::quantized;

//===----------------------------------------------------------------------===//
// AWQ (GEMM format): W[k, n] = (q[k, n] - z[k / G, n]) * s[k / G, n],
// C = A @ W, eight nibbles per word along N, nibble i of word w holding
// column 8 w + kAwqOrder[i]. The weight is K-major: a tile of C covers the
// columns of `lanes` consecutive words, so each k reads one vector of words
// (a cache line with 16 lanes) and every nibble position i is a vector of
// its own, lane l holding column 8 (w0 + l) + kAwqOrder[i]: a shift and a
// mask, no shuffle. Zero and scale factor out of a group:
//   C[m, n] += s (sum_k A[m, k] q[k, n] - z sum_k A[m, k]),
// so each k costs a shift, a mask, a conversion and one FMA per row of A;
// the group's zeros (packed as the weight) and scales (shuffled into the
// nibble order) are applied once per group. A tile has up to 4 rows of A
// (kAwqTileRows); with more than one, a step of its loop over a group
// takes 4 rows of the weight (kAwqStepRows), so that each nibble
// position's partial sums are loaded and stored once per 16 multiply-adds.
// An scf.forall iteration takes a block of tiles side by side, as wide as
// 16 KiB of partial sums allow (with AVX2, 512 words for one row of A: a
// whole row of the weight at N = 4096; 128 for four), and reads each row
// of it tile after tile, into partial sums in memory, so that the weight
// streams through the caches: a tile walking K alone read half a cache
// line (AVX2) 2 KiB past the last at K = N = 4096, a new page every other
// step (with AVX2 at [1, 4096] x [4096, 4096], 1.4-1.55x faster with
// blocks of 256 bytes, and 1.4-1.9x again, for 1 to 16 rows of A in tiles
// of one, with whole rows). Each tile is shuffled back into column order
// when it is written. With 128 rows of A or more, the weight is
// dequantized once per block of rows instead, into panels that
// fused_linear's register tiles run over (`buildAwqPanels`).
//===----------------------------------------------------------------------===//

namespace {
/// The column (within its word's 8) of each nibble position.
constexpr int64_t kAwqOrder[8] = {0, 2, 4, 6, 1, 3, 5, 7};
/// The nibble position of each column: kAwqOrder's inverse.
constexpr int64_t kAwqPosition[8] = {0, 4, 1, 5, 2, 6, 3, 7};

/// The most bytes of partial sums a block of tiles keeps (with the rows
/// of the weight streaming past them through the first-level cache).
constexpr int64_t kAwqPartialBytes = 16384;
/// The rows of A of a tile, at most, and the rows of the weight a step of
/// a tile of several rows takes: each nibble position's partial sums are
/// loaded and stored once per 4 rows of the weight, their 16 multiply-adds
/// in registers. (AVX2, [M, 4096] x [4096, 4096], against tiles of one
/// row of A, each k its own step: M = 2 2.98 -> 1.91 ms, M = 4 6.95 ->
/// 3.70, M = 8 8.08 -> 4.62, M = 64 57.1 -> 25.4; tiles of 8 rows ran
/// 1.25-1.57x slower than of 4. With one row of A, 4 rows of the weight a
/// step ran 1.1x slower, twice: the rows stream one after another.)
constexpr int64_t kAwqTileRows = 4;
constexpr int64_t kAwqStepRows = 4;

struct AwqShape {
  int64_t rows, k, n, group;
  /// Words per tile and lanes of its vectors.
  int64_t lanes;
  int64_t tileM;
  /// Rows of the weight per step of a tile's loop over a group.
  int64_t stepK;
  /// Tiles per block (an scf.forall iteration), side by side along N.
  int64_t blockTiles;

  int64_t tileN() const { return 8 * lanes; }
};

AwqShape shapeOf(AwqMatmulView awq, const ScheduleOptions &options) {
  auto q = cast<RankedTensorType>(awq.getQweight().getType());
  AwqShape s;
  s.rows = foldedRows(awq.getAct());
  s.k = q.getDimSize(0);
  s.n = q.getDimSize(1) * 8;
  s.group = awq.getGroupSize();
  // (Rows that are not whole tiles, dynamic ones included: padded to
  // them.)
  s.tileM = rowTile(s.rows, kAwqTileRows);
  s.stepK = s.tileM > 1 ? powerOfTwoDividing(s.group, kAwqStepRows) : 1;
  s.lanes = powerOfTwoDividing(s.n / 8, targetLanes(options));
  // As many tiles a block as keep kAwqPartialBytes of partial sums (a
  // tile's: 8 vectors per row of A). (Even where that leaves the scf.forall
  // one iteration: one row of A and a weight read from memory ran faster
  // as whole rows on one thread than as half rows on two.)
  int64_t tiles = s.n / s.tileN();
  int64_t tileBytes = s.tileM * 8 * s.lanes * 4;
  // (The most tiles that divide them: N = 11008 is 172 tiles of 64
  // columns with AVX2, blocks of 43.)
  s.blockTiles = std::max<int64_t>(kAwqPartialBytes / tileBytes, 1);
  while (tiles % s.blockTiles != 0)
    --s.blockTiles;
  return s;
}

/// Concatenates `parts` (a power-of-two count of vectors of one type).
Value concatenate(OpBuilder &b, Location loc, SmallVector<Value> parts) {
  while (parts.size() > 1) {
    SmallVector<Value> next;
    int64_t width = cast<VectorType>(parts[0].getType()).getNumElements();
    SmallVector<int64_t> both =
        llvm::to_vector(llvm::seq<int64_t>(0, 2 * width));
    for (size_t i = 0; i < parts.size(); i += 2)
      next.push_back(
          vector::ShuffleOp::create(b, loc, parts[i], parts[i + 1], both));
    parts = std::move(next);
  }
  return parts[0];
}

/// A row of a tile of 8 * lanes columns from its 8 vectors of nibble
/// positions `parts`, in column order (column 8 l + j is lane l of
/// position kAwqPosition[j]) and as `elt`.
Value inColumnOrder(OpBuilder &b, Location loc, SmallVector<Value> parts,
                    Type elt) {
  int64_t lanes = cast<VectorType>(parts[0].getType()).getNumElements();
  SmallVector<int64_t> order;
  for (int64_t lane = 0; lane < lanes; ++lane)
    for (int64_t j = 0; j < 8; ++j)
      order.push_back(kAwqPosition[j] * lanes + lane);
  Value all = concatenate(b, loc, std::move(parts));
  Value row = vector::ShuffleOp::create(b, loc, all, all, order);
  if (elt != b.getF32Type())
    row = arith::TruncFOp::create(b, loc, VectorType::get({8 * lanes}, elt),
                                  row);
  return row;
}
} // namespace

LogicalResult quantized::canScheduleAwq(AwqMatmulView awq, std::string &why) {
  auto q = cast<RankedTensorType>(awq.getQweight().getType());
  int64_t n = q.getDimSize(1) * 8;
  if (n % 16 != 0) {
    why = "the quantized schedule needs N a multiple of 16 (got " +
          std::to_string(n) + ")";
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

/// Nibble position `i` of each lane's word as the f32 1 + q / 16: the
/// nibble shifted to the top of a mantissa (bits 19-22) and or'd into 1.0's
/// bits (one shift and one ternary logic op with AVX-512, no conversion).
static Value awqNibble(StepBuilder &st, Value words, int64_t i) {
  OpBuilder &b = st.b;
  auto type = cast<VectorType>(words.getType());
  auto splat = [&](int32_t v) {
    return arith::ConstantOp::create(
        b, st.loc, type, DenseElementsAttr::get(type, b.getI32IntegerAttr(v)));
  };
  int64_t shift = 19 - 4 * i;
  Value q = shift > 0 ? arith::ShLIOp::create(b, st.loc, words, splat(shift))
                      : arith::ShRUIOp::create(b, st.loc, words, splat(-shift))
                            .getResult();
  q = arith::AndIOp::create(b, st.loc, q, splat(15 << 19));
  q = arith::OrIOp::create(b, st.loc, q, splat(0x3F800000));
  return arith::BitcastOp::create(
      b, st.loc, VectorType::get(type.getShape(), b.getF32Type()), q);
}

/// The fewest rows of A for which awq_matmul runs on panels: with
/// AVX2 ([M, 4096] x [4096, 4096]) against the tiles of 4 rows, 8 rows ran
/// 1.5x slower on panels, 16 1.4x, 32 1.1x, 64 even (26.4 and 25.4 ms),
/// 128 1.09x faster.
static constexpr int64_t kAwqPanelRows = 128;

int64_t quantized::awqPanelRows(AwqMatmulView awq,
                                const ScheduleOptions &options) {
  RegisterTile rt = registerTile(options);
  int64_t lanes = shapeOf(awq, options).lanes;
  bool fits = lanes == targetLanes(options) && rt.n == 2 * lanes &&
              kPanelBlockM % rt.m == 0;
  return fits ? kAwqPanelRows : 0;
}

/// With many rows of A, the tiles of a few rows would each decode the
/// whole weight. On panels, an scf.forall iteration takes up to
/// 128 rows of A by the columns of a vector of words (64 with AVX2) and
/// walks K a panel at a time (64 steps with AVX2, dividing the group): it
/// dequantizes the panel's words once, each nibble position a vector, (q -
/// z) s exactly (as (1 + q / 16) - (1 + z / 16), times 16 s), into a panel
/// [kc, 8 * lanes] in nibble order, and runs fused_linear's register tiles
/// over it (`accumulatePanel`); each row of sums is shuffled back into
/// column order once, at the end.
static LogicalResult buildAwqPanels(RewriterBase &rewriter,
                                    AwqMatmulView awq, const AwqShape &s,
                                    const ScheduleOptions &options) {
  RegisterTile rt = registerTile(options);
  int64_t lanes = s.lanes, columns = 8 * lanes;
  int64_t least = awqPanelRows(awq, options);
  bool dynamic = ShapedType::isDynamic(s.rows);
  if (!least || (dynamic ? options.rowsAtLeast < least : s.rows < least))
    return failure();
  int64_t blockM = panelBlockRows(s.rows, rt.m);
  int64_t kc = powerOfTwoDividing(
      s.group, std::max<int64_t>(kPanelBytes / (columns * 4), 1));
  FusedOp op = awq.getOperation();
  Location loc = op.getLoc();
  Type f32 = rewriter.getF32Type(), i32 = rewriter.getI32Type();
  Type cElt = cast<RankedTensorType>(op->getResult(0).getType())
                  .getElementType();
  Value scales = awq.getScales();
  Type sElt = cast<RankedTensorType>(scales.getType()).getElementType();
  TileFrame frame = TileFrame::open(rewriter, op, awq.getAct(), s.rows, s.n,
                                    blockM, columns, nullptr, rt.m);
  Value a = frame.a, m0 = frame.m0, n0 = frame.n0;
  Value live = frame.liveRows(rewriter, loc);
  StepBuilder sb{rewriter, loc};
  Value w0 = arith::DivUIOp::create(rewriter, loc, n0, sb.index(8));
  auto vec = VectorType::get({lanes}, f32);
  auto words = VectorType::get({lanes}, i32);
  Value zero = arith::ConstantOp::create(rewriter, loc, f32,
                                         rewriter.getF32FloatAttr(0.0f));
  Value padI = arith::ConstantOp::create(rewriter, loc, i32,
                                         rewriter.getI32IntegerAttr(0));
  Value padS = arith::ConstantOp::create(rewriter, loc, sElt,
                                         rewriter.getFloatAttr(sElt, 0.0));
  Value sums =
      linalg::FillOp::create(
          rewriter, loc, zero,
          tensor::EmptyOp::create(rewriter, loc,
                                  ArrayRef<int64_t>{blockM, columns}, f32)
              .getResult())
          .getResult(0);
  Value panel = tensor::EmptyOp::create(
      rewriter, loc, ArrayRef<int64_t>{kc, columns}, f32);
  auto loop = scf::ForOp::create(
      rewriter, loc, sb.index(0), sb.index(s.k / kc), sb.index(1),
      ValueRange{sums, panel},
      [&](OpBuilder &b, Location l, Value it, ValueRange args) {
        StepBuilder st{b, l};
        Value k0 = arith::MulIOp::create(b, l, it, st.index(kc));
        Value g = arith::DivUIOp::create(b, l, k0, st.index(s.group));
        // The group's zeros as 1 + z / 16 and its scales times 16, per
        // nibble position.
        Value zWords = vector::TransferReadOp::create(
            b, l, words, awq.getQzeros(), ValueRange{g, w0}, padI,
            ArrayRef<bool>{true});
        auto rowType = VectorType::get({columns}, f32);
        Value sRow = vector::TransferReadOp::create(
            b, l, VectorType::get({columns}, sElt), scales,
            ValueRange{g, n0}, padS, ArrayRef<bool>{true});
        if (sElt != f32)
          sRow = arith::ExtFOp::create(b, l, rowType, sRow);
        sRow = arith::MulFOp::create(
            b, l, sRow,
            arith::ConstantOp::create(
                b, l, DenseElementsAttr::get(rowType, 16.0f)));
        SmallVector<Value> z, sc;
        for (int64_t i = 0; i < 8; ++i) {
          z.push_back(awqNibble(st, zWords, i));
          SmallVector<int64_t> mask;
          for (int64_t lane = 0; lane < lanes; ++lane)
            mask.push_back(8 * lane + kAwqOrder[i]);
          sc.push_back(vector::ShuffleOp::create(b, l, sRow, sRow, mask));
        }
        Value panel = carriedLoop(
            b, l, 0, kc, 1, args[1],
            [&](OpBuilder &pb, Value kk, Value panel) -> Value {
              StepBuilder pst{pb, l};
              Value q = vector::TransferReadOp::create(
                  pb, l, words, awq.getQweight(),
                  ValueRange{arith::AddIOp::create(pb, l, k0, kk), w0}, padI,
                  ArrayRef<bool>{true});
              for (int64_t i = 0; i < 8; ++i) {
                Value w = arith::MulFOp::create(
                    pb, l,
                    arith::SubFOp::create(pb, l, awqNibble(pst, q, i), z[i]),
                    sc[i]);
                panel = vector::TransferWriteOp::create(
                            pb, l, w, panel,
                            ValueRange{kk, pst.index(i * lanes)},
                            ArrayRef<bool>{true})
                            .getResult();
              }
              return panel;
            });
        Value next = accumulatePanel(
            b, l, PanelTile{rt.m, lanes, blockM, kc, columns}, a, m0, k0,
            panel, args[0], live);
        scf::YieldOp::create(b, l, ValueRange{next, panel});
      });
  // Each row back in column order.
  Value done = loop.getResult(0);
  Value tile = carriedLoop(
      rewriter, loc, 0, blockM, 1, frame.emptyTile(rewriter, loc),
      [&](OpBuilder &b, Value m, Value tile) -> Value {
        StepBuilder st{b, loc};
        SmallVector<Value> parts;
        for (int64_t i = 0; i < 8; ++i)
          parts.push_back(vector::TransferReadOp::create(
              b, loc, vec, done, ValueRange{m, st.index(i * lanes)}, zero,
              ArrayRef<bool>{true}));
        Value row = inColumnOrder(b, loc, parts, cElt);
        return vector::TransferWriteOp::create(b, loc, row, tile,
                                               ValueRange{m, st.index(0)},
                                               ArrayRef<bool>{true})
            .getResult();
      });
  frame.close(rewriter, op, tile);
  return success();
}

LogicalResult quantized::buildAwq(RewriterBase &rewriter, AwqMatmulView awq,
                                 const ScheduleOptions &options) {
  FusedOp op = awq.getOperation();
  AwqShape s = shapeOf(awq, options);
  if (succeeded(buildAwqPanels(rewriter, awq, s, options)))
    return success();
  Location loc = op.getLoc();
  Type f32 = rewriter.getF32Type(), i32 = rewriter.getI32Type();
  Type aElt = cast<RankedTensorType>(awq.getAct().getType()).getElementType();
  Type cElt = cast<RankedTensorType>(op->getResult(0).getType())
                  .getElementType();
  Value scales = awq.getScales();
  Type sElt = cast<RankedTensorType>(scales.getType()).getElementType();
  int64_t lanes = s.lanes, tileN = s.tileN(), tileM = s.tileM;
  int64_t tiles = s.blockTiles;
  TileFrame frame = TileFrame::open(rewriter, op, awq.getAct(), s.rows, s.n,
                                    tileM, tiles * tileN);
  Value a = frame.a, m0 = frame.m0, n0 = frame.n0;
  StepBuilder sb{rewriter, loc};
  Value w0 = arith::DivUIOp::create(rewriter, loc, n0, sb.index(8));
  auto vec = VectorType::get({lanes}, f32);
  Value zero = arith::ConstantOp::create(rewriter, loc, f32,
                                         rewriter.getF32FloatAttr(0.0f));
  Value padI = arith::ConstantOp::create(rewriter, loc, i32,
                                         rewriter.getI32IntegerAttr(0));
  Value padS = arith::ConstantOp::create(rewriter, loc, sElt,
                                         rewriter.getFloatAttr(sElt, 0.0));
  // The first word of tile t of the block (its column n0 + t * tileN, over
  // 8).
  auto tileWord = [&](OpBuilder &b, Location l, Value t) -> Value {
    return arith::AddIOp::create(
        b, l, w0,
        arith::MulIOp::create(b, l, t, StepBuilder{b, l}.index(lanes)));
  };
  auto wordsAt = [&](OpBuilder &b, Location l, Value tensor, Value row,
                     Value word) {
    return vector::TransferReadOp::create(
        b, l, VectorType::get({lanes}, i32), tensor, ValueRange{row, word},
        padI, ArrayRef<bool>{true});
  };
  // The block's accumulators: (tile t, row m of A, nibble position i) at
  // [t, m * 8 + i], carried in memory across the groups.
  auto accType = RankedTensorType::get({tiles, tileM * 8, lanes}, f32);
  Value accInit =
      linalg::FillOp::create(
          rewriter, loc, zero,
          tensor::EmptyOp::create(rewriter, loc, accType.getShape(), f32)
              .getResult())
          .getResult(0);
  auto accAt = [&](OpBuilder &b, Location l, Value acc, Value t,
                   int64_t slot) {
    StepBuilder st{b, l};
    return vector::TransferReadOp::create(
        b, l, vec, acc, ValueRange{t, st.index(slot), st.index(0)}, zero,
        ArrayRef<bool>{true});
  };
  auto accWrite = [&](OpBuilder &b, Location l, Value v, Value acc, Value t,
                      int64_t slot) {
    StepBuilder st{b, l};
    return vector::TransferWriteOp::create(
               b, l, v, acc, ValueRange{t, st.index(slot), st.index(0)},
               ArrayRef<bool>{true})
        .getResult();
  };
  // Per group, each step reads the block's words of its rows k (one, or
  // kAwqStepRows for tiles of several rows of A), tile by tile
  // (consecutive addresses: the rows stream through the caches, where a
  // tile walking all of K alone reads half a cache line 2 KiB after the
  // last at K = N = 4096), into the group's partial sums in memory,
  // [tiles, rows * 8, lanes]; then the group's zeros and scales take them
  // into the accumulators.
  // (The partial sums' buffer is carried across the groups and zeroed at
  // each, one allocation.)
  Value partInit =
      tensor::EmptyOp::create(rewriter, loc, accType.getShape(), f32);
  auto groups = scf::ForOp::create(
      rewriter, loc, sb.index(0), sb.index(s.k / s.group), sb.index(1),
      ValueRange{accInit, partInit},
      [&](OpBuilder &b, Location l, Value g, ValueRange carriedAcrossGroups) {
        StepBuilder st{b, l};
        Value k0 = arith::MulIOp::create(b, l, g, st.index(s.group));
        ValueRange accs = carriedAcrossGroups.take_front();
        // sum_k A[m, k] q[k, n] per (tile, row, nibble position), and
        // sum_k A[m, k] per row.
        SmallVector<Value> inits = {
            linalg::FillOp::create(b, l, zero, carriedAcrossGroups[1])
                .getResult(0)};
        inits.append(tileM, zero);
        // Each step takes s.stepK rows of the weight: k0 + kk + r.
        auto steps = scf::ForOp::create(
            b, l, st.index(0), st.index(s.group), st.index(s.stepK), inits,
            [&](OpBuilder &kb, Location kl, Value kk, ValueRange carried) {
              StepBuilder ks{kb, kl};
              SmallVector<Value> sums(carried.drop_front()), kRows;
              // A[m0 + m, k] broadcast, per row r of the step and m of A.
              SmallVector<SmallVector<Value>> bx(s.stepK);
              for (int64_t r = 0; r < s.stepK; ++r) {
                Value k = arith::AddIOp::create(
                    kb, kl, k0, arith::AddIOp::create(kb, kl, kk, ks.index(r)));
                kRows.push_back(k);
                for (int64_t m = 0; m < tileM; ++m) {
                  Value row = arith::AddIOp::create(kb, kl, m0, ks.index(m));
                  Value x =
                      tensor::ExtractOp::create(kb, kl, a, ValueRange{row, k});
                  if (aElt != f32)
                    x = arith::ExtFOp::create(kb, kl, f32, x);
                  sums[m] = arith::AddFOp::create(kb, kl, sums[m], x);
                  bx[r].push_back(vector::BroadcastOp::create(kb, kl, vec, x));
                }
              }
              auto perTile = scf::ForOp::create(
                  kb, kl, ks.index(0), ks.index(tiles), ks.index(1),
                  ValueRange{carried[0]},
                  [&](OpBuilder &ib, Location il, Value t, ValueRange part) {
                    StepBuilder it{ib, il};
                    SmallVector<Value> words;
                    for (Value k : kRows)
                      words.push_back(wordsAt(ib, il, awq.getQweight(), k,
                                              tileWord(ib, il, t)));
                    Value p = part[0];
                    for (int64_t i = 0; i < 8; ++i) {
                      SmallVector<Value> q;
                      for (Value w : words)
                        q.push_back(awqNibble(it, w, i));
                      for (int64_t m = 0; m < tileM; ++m) {
                        Value acc = accAt(ib, il, p, t, m * 8 + i);
                        for (int64_t r = 0; r < s.stepK; ++r)
                          acc = vector::FMAOp::create(ib, il, q[r], bx[r][m],
                                                      acc);
                        p = accWrite(ib, il, acc, p, t, m * 8 + i);
                      }
                    }
                    scf::YieldOp::create(ib, il, p);
                  });
              SmallVector<Value> next = {perTile.getResult(0)};
              next.append(sums);
              scf::YieldOp::create(kb, kl, next);
            });
        Value part = steps.getResult(0);
        // C += s (sum A q - z sum A), in the nibble order: the group's
        // zeros decode as the weight does; its scales, read in column
        // order, are shuffled into it.
        auto perTile = scf::ForOp::create(
            b, l, st.index(0), st.index(tiles), st.index(1), accs,
            [&](OpBuilder &tb, Location tl, Value t, ValueRange tileAccs) {
              StepBuilder tt{tb, tl};
              Value nt = arith::AddIOp::create(
                  tb, tl, n0,
                  arith::MulIOp::create(tb, tl, t, tt.index(tileN)));
              Value zWords =
                  wordsAt(tb, tl, awq.getQzeros(), g, tileWord(tb, tl, t));
              Value sRow = vector::TransferReadOp::create(
                  tb, tl, VectorType::get({tileN}, sElt), scales,
                  ValueRange{g, nt}, padS, ArrayRef<bool>{true});
              if (sElt != f32)
                sRow = arith::ExtFOp::create(
                    tb, tl, VectorType::get({tileN}, f32), sRow);
              // (With the weights and zeros as 1 + q / 16 and 1 + z / 16,
              // the group's dot is 16 (acc - (1 + z / 16) sum A).)
              sRow = arith::MulFOp::create(
                  tb, tl, sRow,
                  arith::ConstantOp::create(
                      tb, tl,
                      DenseElementsAttr::get(VectorType::get({tileN}, f32),
                                             16.0f)));
              Value acc = tileAccs[0];
              for (int64_t i = 0; i < 8; ++i) {
                Value z = awqNibble(tt, zWords, i);
                SmallVector<int64_t> mask;
                for (int64_t lane = 0; lane < lanes; ++lane)
                  mask.push_back(8 * lane + kAwqOrder[i]);
                Value sc = vector::ShuffleOp::create(tb, tl, sRow, sRow, mask);
                for (int64_t m = 0; m < tileM; ++m) {
                  Value sum = steps.getResult(1 + m);
                  Value negSum = vector::BroadcastOp::create(
                      tb, tl, vec, arith::NegFOp::create(tb, tl, sum));
                  Value dot =
                      vector::FMAOp::create(tb, tl, z, negSum,
                                            accAt(tb, tl, part, t, m * 8 + i));
                  Value updated = vector::FMAOp::create(
                      tb, tl, sc, dot, accAt(tb, tl, acc, t, m * 8 + i));
                  acc = accWrite(tb, tl, updated, acc, t, m * 8 + i);
                }
              }
              scf::YieldOp::create(tb, tl, acc);
            });
        scf::YieldOp::create(b, l, ValueRange{perTile.getResult(0), part});
      });

  // Each row of each tile back in column order.
  Value acc = groups.getResult(0);
  auto written = scf::ForOp::create(
      rewriter, loc, sb.index(0), sb.index(tiles), sb.index(1),
      ValueRange{frame.emptyTile(rewriter, loc)},
      [&](OpBuilder &b, Location l, Value t, ValueRange outs) {
        StepBuilder st{b, l};
        Value col = arith::MulIOp::create(b, l, t, st.index(tileN));
        Value tile = outs[0];
        for (int64_t m = 0; m < tileM; ++m) {
          SmallVector<Value> parts;
          for (int64_t i = 0; i < 8; ++i)
            parts.push_back(accAt(b, l, acc, t, m * 8 + i));
          Value row = inColumnOrder(b, l, parts, cElt);
          tile = vector::TransferWriteOp::create(
                     b, l, row, tile, ValueRange{st.index(m), col},
                     ArrayRef<bool>{true})
                     .getResult();
        }
        scf::YieldOp::create(b, l, tile);
      });
  frame.close(rewriter, op, written.getResult(0));
  return success();
}

//===----------------------------------------------------------------------===//
// NF4 (bitsandbytes): W[n, k] = NF4[code(n, k)] * absmax[n, k / B], code in
// the high nibble of byte w_packed[n, k / 2] for even k, the low one for odd
// k; C = A @ W^T. N-major like qmatmul: per row n of a tile, steps of 32
// weights (16 bytes), whose high nibbles and low nibbles are the codes. A is
// copied once into the order the codes decode in (`packNf4Activations`), so
// no shuffle puts them back into element order. The decode depends on the
// vector width:
//  - 16 lanes (AVX-512) and 2: `lanes` bytes at a time widened to i32
//    lanes, each looked up in the code book held in registers (`lookUp`,
//    one vpermps with 16 lanes);
//  - 8 lanes (AVX2) and 4: the code book does not fit one register, so the
//    codes stay bytes and each byte of the book's f32 values is looked up
//    as a table of 16 bytes (`lookUpByPlanes`, four vpshufb per 32
//    codes), the four bytes then interleaved into f32 lanes, 128 bits at a
//    time (x86's unpacks, NEON's zips): 15 shuffles and logic operations
//    per 32 weights where the two halves of the book took 8 vpermps, 4
//    compares and 4 blends, and more (AVX2, [1, 4096] x [4096, 4096]:
//    4.4 to 2.7-3.0 ms).
// The scale of the step's block multiplies the step's dot product (one row
// of A) or the weights (more).
//
// The tiles are sized as qmatmul's (QShape in Quantized.cpp): one row of A
// by as many rows of W as half the vector registers hold accumulators, or
// up to 8 rows of A sharing each looked-up weight.
//===----------------------------------------------------------------------===//

namespace {
/// Weights of a step of nf4's reduction: 16 bytes.
constexpr int64_t kNf4Step = 32;

struct Nf4Shape {
  int64_t rows, k, n, block;
  int64_t lanes;
  int64_t tileM, tileN;

  /// The vectors of a step's weights.
  int64_t pieces() const { return kNf4Step / lanes; }
  /// Whether the codes are looked up a byte of the book at a time
  /// (`lookUpByPlanes`): vectors of 16 or 32 bytes.
  bool byPlanes() const { return lanes == 4 || lanes == 8; }
};

Nf4Shape shapeOf(Nf4MatmulView nf4, const ScheduleOptions &options) {
  auto a = cast<RankedTensorType>(nf4.getAct().getType());
  auto w = cast<RankedTensorType>(nf4.getWPacked().getType());
  Nf4Shape s;
  s.rows = foldedRows(nf4.getAct());
  s.k = a.getShape().back();
  s.n = w.getDimSize(0);
  s.block = nf4.getBlockSize();
  s.lanes = targetLanes(options);
  int64_t accs = std::max<int64_t>(options.vectorRegisters / 2, 1);
  // (Dynamic rows: padded to whole tiles of 8 rows, or 4.)
  s.tileM = rowTile(s.rows, std::min<int64_t>(8, accs));
  s.tileN = powerOfTwoDividing(s.n, std::max<int64_t>(accs / s.tileM, 1));
  return s;
}

/// A ([rows, K], folded) as f32 in the order of the decoded weights. With
/// `lookUp`, lane l of piece p = 2j + h of a step holds weight 2 (j * lanes
/// + l) + h, so A's K split as [K/32, 16/lanes, lanes, 2] is transposed to
/// [K/32, 16/lanes, 2, lanes]. With `lookUpByPlanes`, the step's weights
/// split as [4 (q), 4 (t), 2 (h)] come out in the order (q, h, t) from
/// vectors of 32 bytes and (h, q, t) from vectors of 16.
Value packNf4Activations(RewriterBase &rewriter, Location loc,
                         const Nf4Shape &s, Value a) {
  if (s.byPlanes()) {
    SmallVector<unsigned> perm = {0, 1, 3, 2};
    if (s.lanes == 4)
      perm = {0, 3, 1, 2};
    return permuteColumns(rewriter, loc, a, {s.k / kNf4Step, 4, 4, 2}, perm);
  }
  // Output dims (s, j, h, l) read input dims (s, j, l, h).
  return permuteColumns(rewriter, loc, a,
                        {s.k / kNf4Step, kNf4Step / 2 / s.lanes, s.lanes, 2},
                        {0, 1, 3, 2});
}

/// `table[codes[l]]` in lane l, for codes below table.size() (a multiple of
/// the lanes): the table is split into vectors of `lanes` entries, each
/// looked up by an extract at a dynamic position per lane (the form the
/// X86 backend selects as one variable permute, vpermps, with AVX2 or
/// AVX-512; the vector dialect has no dynamic shuffle), and the right part
/// selected per lane by the code's high bits.
Value lookUp(OpBuilder &b, Location loc, Value codes, ArrayRef<float> table) {
  auto type = cast<VectorType>(codes.getType());
  int64_t lanes = type.getNumElements();
  auto f32s = VectorType::get({lanes}, b.getF32Type());
  auto splat = [&](int32_t v) -> Value {
    return arith::ConstantOp::create(
        b, loc, type, DenseElementsAttr::get(type, b.getI32IntegerAttr(v)));
  };
  int64_t parts = static_cast<int64_t>(table.size()) / lanes;
  Value low = parts > 1 ? arith::AndIOp::create(b, loc, codes, splat(lanes - 1))
                              .getResult()
                        : codes;
  SmallVector<Value> positions;
  for (int64_t l = 0; l < lanes; ++l)
    positions.push_back(arith::IndexCastUIOp::create(
        b, loc, b.getIndexType(), vector::ExtractOp::create(b, loc, low, l)));
  Value result;
  for (int64_t q = 0; q < parts; ++q) {
    Value part = arith::ConstantOp::create(
        b, loc, f32s,
        DenseElementsAttr::get(f32s, table.slice(q * lanes, lanes)));
    SmallVector<Value> entries;
    for (Value position : positions)
      entries.push_back(vector::ExtractOp::create(
          b, loc, part, ArrayRef<OpFoldResult>{position}));
    Value looked = vector::FromElementsOp::create(b, loc, f32s, entries);
    if (!result) {
      result = looked;
      continue;
    }
    Value inPart = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                         codes, splat(q * lanes));
    result = arith::SelectOp::create(b, loc, inPart, looked, result);
  }
  return result;
}

/// The in-lane interleave of two vectors of `count` elements, 128 bits
/// (`segment` elements) at a time: the low (or high) halves of each
/// segment of `x` and `y`, element by element (x86's punpckl/punpckh,
/// NEON's zip1/zip2 for 128-bit vectors).
Value interleave(OpBuilder &b, Location loc, Value x, Value y,
                 int64_t segment, bool high) {
  int64_t count = cast<VectorType>(x.getType()).getNumElements();
  SmallVector<int64_t> mask;
  for (int64_t first = 0; first < count; first += segment)
    for (int64_t j = 0; j < segment / 2; ++j) {
      int64_t at = first + j + (high ? segment / 2 : 0);
      mask.push_back(at);
      mask.push_back(count + at);
    }
  return vector::ShuffleOp::create(b, loc, x, y, mask);
}

/// The f32 weights of a step of 16 bytes of NF4 codes, in vectors of
/// `lanes` (4 or 8). The codes, high nibbles then low ones, are one vector
/// of 32 bytes or two of 16; each byte of the code book's f32 values
/// (least significant first) is a table of 16 bytes, looked up per code by
/// an extract at a dynamic position (one vpshufb with SSSE3 or AVX2, one
/// tbl with NEON), and the four bytes are interleaved into f32 lanes: bytes
/// into i16 pairs, pairs into i32 (little endian), 128 bits at a time. Lane
/// 4 s + t of vector q of a vector of codes holds its code 16 s + 4 q + t.
SmallVector<Value, 8> lookUpByPlanes(OpBuilder &b, Location loc, Value bytes,
                                     int64_t lanes) {
  Type i8 = b.getI8Type();
  int64_t width = 4 * lanes;
  auto bytes16 = cast<VectorType>(bytes.getType());
  auto splat = [&](int8_t v) -> Value {
    return arith::ConstantOp::create(
        b, loc, bytes16,
        DenseElementsAttr::get(bytes16, b.getI8IntegerAttr(v)));
  };
  // The codes, frozen: LLVM otherwise reads each position through the
  // shift and the mask (or the concatenation), and the positions must all
  // come from one vector to be selected as one shuffle. The 32 codes of
  // one vector are the bytes twice, shifted by 4 bits in the first half,
  // computed in i32 lanes: the backend sees through a concatenation even
  // when it is frozen.
  SmallVector<Value> codeVectors;
  if (width == 16) {
    codeVectors.push_back(arith::ShRUIOp::create(b, loc, bytes, splat(4)));
    codeVectors.push_back(arith::AndIOp::create(b, loc, bytes, splat(15)));
  } else {
    auto words = VectorType::get({8}, b.getI32Type());
    auto wordsOf = [&](int32_t first, int32_t second) -> Value {
      SmallVector<int32_t> v(4, first);
      v.append(4, second);
      return arith::ConstantOp::create(
          b, loc, words, DenseElementsAttr::get(words, ArrayRef(v)));
    };
    SmallVector<int64_t> twice;
    for (int64_t i = 0; i < 32; ++i)
      twice.push_back(i % 16);
    Value both = vector::BitCastOp::create(
        b, loc, words, vector::ShuffleOp::create(b, loc, bytes, bytes, twice));
    Value shifted = arith::ShRUIOp::create(b, loc, both, wordsOf(4, 0));
    codeVectors.push_back(vector::BitCastOp::create(
        b, loc, VectorType::get({32}, i8),
        arith::AndIOp::create(b, loc, shifted,
                              wordsOf(0x0f0f0f0f, 0x0f0f0f0f))));
  }
  for (Value &codes : codeVectors)
    codes = LLVM::FreezeOp::create(b, loc, codes);

  ArrayRef<float> book = getNf4CodeBook();
  auto table = VectorType::get({16}, i8);
  SmallVector<Value, 4> planes;
  for (int64_t p = 0; p < 4; ++p) {
    SmallVector<int8_t> entries;
    for (float v : book)
      entries.push_back(static_cast<int8_t>(
          (llvm::bit_cast<uint32_t>(v) >> (8 * p)) & 0xff));
    planes.push_back(arith::ConstantOp::create(
        b, loc, table, DenseElementsAttr::get(table, ArrayRef(entries))));
  }

  auto codeType = VectorType::get({width}, i8);
  auto pairType = VectorType::get({width / 2}, b.getI16Type());
  auto f32s = VectorType::get({lanes}, b.getF32Type());
  SmallVector<Value, 8> weights;
  for (Value codes : codeVectors) {
    SmallVector<Value> positions;
    for (int64_t i = 0; i < width; ++i) {
      Value code = vector::ExtractOp::create(b, loc, codes, i);
      positions.push_back(
          arith::IndexCastUIOp::create(b, loc, b.getIndexType(), code));
    }
    SmallVector<Value, 4> looked;
    for (Value plane : planes) {
      SmallVector<Value> entries;
      for (Value position : positions)
        entries.push_back(vector::ExtractOp::create(
            b, loc, plane, ArrayRef<OpFoldResult>{position}));
      // Frozen, so that LLVM keeps the vector whole: otherwise InstCombine
      // rebuilds it for each interleave from the half that one reads, and
      // the backend, seeing no one lookup, extracts and inserts each byte.
      looked.push_back(LLVM::FreezeOp::create(
          b, loc, vector::FromElementsOp::create(b, loc, codeType, entries)));
    }
    SmallVector<Value, 2> pairs[2];
    for (int64_t half = 0; half < 2; ++half)
      for (int64_t p = 0; p < 4; p += 2)
        pairs[half].push_back(vector::BitCastOp::create(
            b, loc, pairType,
            interleave(b, loc, looked[p], looked[p + 1], 16, half == 1)));
    for (int64_t q = 0; q < 4; ++q) {
      ArrayRef<Value> pair = pairs[q / 2];
      weights.push_back(vector::BitCastOp::create(
          b, loc, f32s, interleave(b, loc, pair[0], pair[1], 8, q % 2 == 1)));
    }
  }
  return weights;
}
} // namespace

LogicalResult quantized::canScheduleNf4(Nf4MatmulView nf4,
                                        const ScheduleOptions &options,
                                        std::string &why) {
  Nf4Shape s = shapeOf(nf4, options);
  if (s.k % kNf4Step != 0 || s.block % kNf4Step != 0) {
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

LogicalResult quantized::buildNf4(RewriterBase &rewriter, Nf4MatmulView nf4,
                                  const ScheduleOptions &options) {
  FusedOp op = nf4.getOperation();
  Nf4Shape s = shapeOf(nf4, options);
  Location loc = op.getLoc();
  Type f32 = rewriter.getF32Type(), i8 = rewriter.getI8Type();
  TileFrame frame = TileFrame::open(
      rewriter, op, nf4.getAct(), s.rows, s.n, s.tileM, s.tileN,
      [&](Value a) { return packNf4Activations(rewriter, loc, s, a); });
  Value a = frame.a, m0 = frame.m0, n0 = frame.n0;
  StepBuilder sb{rewriter, loc};
  auto lanes = VectorType::get({s.lanes}, f32);
  auto i8s = VectorType::get({s.lanes}, i8);
  auto i32s = VectorType::get({s.lanes}, rewriter.getI32Type());
  Value zeros = arith::ConstantOp::create(
      rewriter, loc, lanes, DenseElementsAttr::get(lanes, 0.0f));
  Value padF = arith::ConstantOp::create(rewriter, loc, f32,
                                         rewriter.getF32FloatAttr(0.0));
  Value padI = arith::ConstantOp::create(rewriter, loc, i8,
                                         rewriter.getI8IntegerAttr(0));
  SmallVector<Value> inits(s.tileM * s.tileN, zeros);
  auto steps = scf::ForOp::create(
      rewriter, loc, sb.index(0), sb.index(s.k / kNf4Step), sb.index(1),
      inits, [&](OpBuilder &b, Location l, Value p, ValueRange accs) {
        StepBuilder st{b, l};
        Value k0 = arith::MulIOp::create(b, l, p, st.index(kNf4Step));
        Value byte0 = arith::MulIOp::create(b, l, p, st.index(kNf4Step / 2));
        Value blk = arith::DivUIOp::create(b, l, k0, st.index(s.block));
        SmallVector<SmallVector<Value, 8>> act(s.tileM);
        for (int64_t m = 0; m < s.tileM; ++m) {
          Value row = arith::AddIOp::create(b, l, m0, st.index(m));
          for (int64_t piece = 0; piece < s.pieces(); ++piece) {
            Value col = arith::AddIOp::create(b, l, k0,
                                              st.index(piece * s.lanes));
            act[m].push_back(vector::TransferReadOp::create(
                b, l, lanes, a, ValueRange{row, col}, padF,
                ArrayRef<bool>{true}));
          }
        }
        SmallVector<Value> next(accs.begin(), accs.end());
        for (int64_t j = 0; j < s.tileN; ++j) {
          Value n = arith::AddIOp::create(b, l, n0, st.index(j));
          Value scale = vector::BroadcastOp::create(
              b, l, lanes,
              tensor::ExtractOp::create(b, l, nf4.getAbsmax(),
                                        ValueRange{n, blk}));
          SmallVector<Value, 8> w;
          if (s.byPlanes()) {
            Value bytes = vector::TransferReadOp::create(
                b, l, VectorType::get({kNf4Step / 2}, i8), nf4.getWPacked(),
                ValueRange{n, byte0}, padI, ArrayRef<bool>{true});
            w = lookUpByPlanes(b, l, bytes, s.lanes);
          } else {
            for (int64_t group = 0; group < s.pieces() / 2; ++group) {
              Value at = arith::AddIOp::create(b, l, byte0,
                                               st.index(group * s.lanes));
              Value bytes = arith::ExtUIOp::create(
                  b, l, i32s,
                  vector::TransferReadOp::create(b, l, i8s, nf4.getWPacked(),
                                                 ValueRange{n, at}, padI,
                                                 ArrayRef<bool>{true}));
              Value high = arith::ShRUIOp::create(
                  b, l, bytes, st.lanesOf(SmallVector<int32_t>(s.lanes, 4)));
              Value lowNibbles = arith::AndIOp::create(
                  b, l, bytes, st.lanesOf(SmallVector<int32_t>(s.lanes, 15)));
              w.push_back(lookUp(b, l, high, getNf4CodeBook()));
              w.push_back(lookUp(b, l, lowNibbles, getNf4CodeBook()));
            }
          }
          if (s.tileM == 1) {
            // One row of A: the step's dot product, then scaled once.
            Value dot = arith::MulFOp::create(b, l, w[0], act[0][0]);
            for (int64_t piece = 1; piece < s.pieces(); ++piece)
              dot = vector::FMAOp::create(b, l, w[piece], act[0][piece], dot);
            next[j] = vector::FMAOp::create(b, l, dot, scale, next[j]);
            continue;
          }
          for (Value &x : w)
            x = arith::MulFOp::create(b, l, x, scale);
          frame.accumulate(b, l, next, j, w, act);
        }
        scf::YieldOp::create(b, l, next);
      });

  frame.close(rewriter, op,
              frame.reducedTile(rewriter, loc, steps.getResults()));
  return success();
}
