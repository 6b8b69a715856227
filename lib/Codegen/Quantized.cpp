//===- Quantized.cpp - The quantized-matmul schedule ----------------------===//
//
// Matmuls whose weight is quantized, dequantized in registers: qmatmul with
// every GGML type: the blocks of 32 (Q8_0, Q8_1, Q4_0, Q4_1, Q5_0, Q5_1) and
// the K-quants' super-blocks of 256 (Q2_K to Q6_K, below); awq_matmul and
// nf4_matmul are in QuantizedTables.cpp.
//
// qmatmul: C[m, n] = sum_k A[m, k] * dequant(W)[n, k], each weight byte read
// once per tile of rows of A and dequantized in registers.
//
// A Q8_0 block is 34 bytes (an f16 scale d, 32 int8 q: w = d * q) and a
// Q4_0 block 18 bytes (d, 16 bytes of nibbles: element e < 16 in the low
// nibble of byte e, e >= 16 in the high nibble of byte e - 16; w = d * (q -
// 8)); Q8_1, Q4_1, Q5_0 and Q5_1 add a minimum or fifth bits (`BlockLayout`).
// Blocks are not word-aligned, but two consecutive blocks are (68 and 36
// bytes, 17 and 9 u32 words): a chunk of the reduction is such a pair, 64
// weights. Q4_K's super-blocks of 256 weights are 144 bytes (Q5_K's 176),
// aligned: a step of the loop is one, four chunks of 64 whose sub-blocks'
// scales and minimums are unpacked from 6 bits in scalar code; Q2_K's (84
// bytes) likewise, its scales and minimums one vector each per super-block.
// Q3_K's and Q6_K's (110 and 210 bytes) are aligned in pairs: a step is two,
// eight chunks, their scales one vector per super-block.
//
// Quants that start two bytes into a word are shifted into place, each word
// from two neighbours (a funnel shift of 32-bit lanes, which LLVM turns into
// an unaligned load). The quants are then taken out of their words in 32-bit
// lanes, by a shift per lane (to the left, then an arithmetic shift right by
// 24 for int8; right, and a mask, for nibbles). Lane l of such a vector
// holds a quant of word l: the quants of one word spread over several
// vectors, so the chunk's weights come out in an order of their own
// (`QShape::word`, `QShape::field`). A is copied once into that order (and
// to f32) before the loop, so that lane by lane the products pair each
// weight with its activation. Byte shuffles, which a first version used to
// take the blocks apart, cost little with AVX-512 and many instructions with
// AVX2; shifts cost one instruction on either.
//
// The loops: an scf.forall over tiles of `Mt` rows of A by `Nt` rows of W
// (the threads), an scf.for over the steps of K carrying the Mt * Nt
// accumulators, one vector of the target's f32 lanes per (m, n), as many as
// half the target's vector registers. The inner code is built in the vector
// dialect on the tensors directly: the decoding has no linalg form that
// vectorizes (the decomposition decodes each element with scalar byte
// extraction). With many rows of A (prefill), where those tiles would
// dequantize the weight several times over, the panel schedule
// (QuantizedPanels.cpp) dequantizes it once per block of rows instead,
// chunk by chunk with the same decoding (`decodedChunk`).
//
//===----------------------------------------------------------------------===//

#include "Quantized.h"
#include "QuantizedTiles.h"
#include "RowSplit.h"
#include "ScheduleUtils.h"

#include "FuelFused/IR/FuelAttrs.h"
#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/ADT/MapVector.h"

#include <numeric>

using namespace mlir;
using namespace mlir::fuel;
using namespace mlir::fuel::quantized;

namespace {
/// Weights per chunk of qmatmul's reduction: two blocks of 32, or a quarter
/// of a K-quant's super-block of 256.
constexpr int64_t kChunk = 64;

/// The fewest rows of A for which qmatmul runs on panels (static, or
/// dynamic in the branch splitQuantizedRows makes for them), by what a row
/// of W costs to decode against what panels cost (the transposition, the
/// sums in memory): 9 for the K-quants (more than one tile of 8 rows),
/// 17 for the blocks of 32 with nibbles (more than two), 32 for the int8
/// blocks. Interleaved (AVX2, K = N = 4096, static rows padded to whole
/// tiles), panels against tiles: Q2_K to Q6_K 1.28x (Q2_K) to 2.5x (Q6_K)
/// faster at 9 and 12 rows, Q4_K 1.24x to 1.52x at 16 to 28; Q5_0 1.31x to
/// 1.36x at 17 to 24, Q4_0 1.13x to 1.25x at 20 to 28, Q5_1 1.09x to
/// 1.13x, Q4_1 0.98x to 1.02x; Q8_0 0.81x at 16, 0.94x to 1.02x at 20 and
/// 24, 1.15x at 28.
constexpr int64_t kPanelRowsSuperBlocks = 9;
constexpr int64_t kPanelRowsNibbles = 17;
constexpr int64_t kPanelRowsInt8 = 32;

/// Dynamic rows up to which the rows run as a static count of them, padded
/// with zero rows (splitQuantizedRows): tiles of up to 4 rows.
constexpr int64_t kFewRows = 4;

/// Where the fields of a GGML block of 32 weights lie (bytes from the
/// block's start), for the types the schedule decodes: an f16 scale d at 0;
/// for Q4_1 and Q5_1 an f16 minimum m at 2 (w = d * q + m); for Q5_0 and
/// Q5_1 a u32 of the quants' fifth bits; then the quants, 32 int8 (Q8_0,
/// Q8_1: w = d * q; Q8_1's second half is a sum the dequantization does not
/// read) or 16 bytes of nibbles (Q4_0: w = d * (q - 8); Q5_0: d * (q - 16)
/// with the fifth bit; Q4_1, Q5_1: unsigned).
///
/// Q4_K's super-block of 256 weights is 144 bytes: f16 d and dmin, 12 bytes
/// of 6-bit scales and minimums of its eight sub-blocks of 32 (llama.cpp's
/// get_scale_min_k4), then four chunks of 32 bytes: chunk c's low nibbles
/// are sub-block 2c, its high nibbles sub-block 2c + 1; w = d * sc * q -
/// dmin * m. Q5_K's (176 bytes) has 32 bytes of fifth bits after the scales
/// (byte l: those of weight l of the sub-blocks, bit j for sub-block j).
///
/// Q6_K's super-block (210 bytes: llama.cpp's dequantize_row_q6_K) is two
/// halves of 128 weights, 32t + l (t < 4, l < 32) of half h: the low 4
/// bits in ql[64h + l + 32 (t % 2)] (the low nibble for t < 2, else the
/// high one), the top 2 in bits 2t, 2t + 1 of qh[32h + l] (bytes 128-191),
/// a signed 8-bit scale per 16 weights, sc[8h + 2t + l / 16] (bytes
/// 192-207), and an f16 d at 208: w = d * sc * (q - 32). 32 bytes of ql
/// hold 64 weights (t and t + 2) as a Q4_K chunk does, with the top bits of
/// a lane's nibble in the same byte of the same word of qh. A super-block
/// is not word-aligned, but two are (105 words): a step is such a pair.
///
/// Q2_K's (84 bytes: dequantize_row_q2_K) holds a byte per sub-block of 16
/// (bytes 0-15: the scale in the low nibble, the minimum in the high one),
/// 64 bytes of 2-bit quants, weight 32j + l of half h in bits 2j, 2j + 1 of
/// byte 16 + 32h + l, and f16 d and dmin at 80 and 82: w = d * sc * q -
/// dmin * m, for sub-block 8h + 2j + l / 16. The quants of j = 2c' and 2c'
/// + 1 (c' < 2) in the half's 32 bytes are weights 64c' to 64c' + 63 of it,
/// in the places a Q4_K chunk's nibbles hold.
///
/// Q3_K's (110 bytes: dequantize_row_q3_K) has Q2_K's quants at 32-95 and a
/// third bit for weight 32j + l of half h in bit 4h + j of hmask[l] (bytes
/// 0-31), set for q, clear for q - 4; sixteen 6-bit scales packed in bytes
/// 96-107 (their low nibbles in the first 8 bytes, the top two bits in the
/// last 4), less 32; and an f16 d at 108: w = d * (sc - 32) * (q + 4 bit
/// - 4). Like Q6_K's, two super-blocks make a step.
struct BlockLayout {
  int64_t bytes;          ///< 34, 36, 18, 20, 22, 24; 84 to 210.
  int64_t quants;         ///< where the quants start.
  int64_t minimum = -1;   ///< where m is, or -1.
  int64_t highBits = -1;  ///< where the fifth bits are (Q6_K: the top
                          ///< two; Q3_K: the third), or -1.
  bool int8 = false;      ///< int8 quants (else nibbles).
  int32_t offset = 0;     ///< subtracted from each quant.
  bool superBlock = false; ///< a K-quant's chunks (Q5_K's with `highBits`:
                           ///< where its 32 bytes of fifth bits are).
  bool sixBit = false;     ///< Q6_K's super-block.
  bool twoBit = false;     ///< Q2_K's super-block (Q3_K's with
                           ///< `highBits`: its hmask).

  /// Blocks per step of the loop: two of 32 (a chunk), one super-block, or
  /// two where one is not word-aligned (Q3_K's, Q6_K's).
  int64_t perStep() const { return superBlock && bytes % 4 == 0 ? 1 : 2; }
  /// Chunks of 64 weights per step: a pair of blocks of 32, or four per
  /// super-block.
  int64_t chunks() const { return superBlock ? 4 * perStep() : 1; }
};

BlockLayout layoutOf(QuantType type) {
  switch (type) {
  case QuantType::Q8_0:
    return BlockLayout{34, 2, -1, -1, true, 0};
  case QuantType::Q8_1:
    return BlockLayout{36, 4, -1, -1, true, 0};
  case QuantType::Q4_0:
    return BlockLayout{18, 2, -1, -1, false, 8};
  case QuantType::Q4_1:
    return BlockLayout{20, 4, 2, -1, false, 0};
  case QuantType::Q5_0:
    return BlockLayout{22, 6, -1, 2, false, 16};
  case QuantType::Q5_1:
    return BlockLayout{24, 8, 2, 4, false, 0};
  case QuantType::Q4_K:
    return BlockLayout{144, 16, 2, -1, false, 0, true};
  case QuantType::Q5_K:
    return BlockLayout{176, 48, 2, 16, false, 0, true};
  case QuantType::Q6_K:
    return BlockLayout{210, 0, -1, 128, false, 32, true, true};
  case QuantType::Q2_K:
    return BlockLayout{84, 16, 82, -1, false, 0, true, false, true};
  case QuantType::Q3_K:
    return BlockLayout{110, 32, -1, 0, false, 4, true, false, true};
  }
  llvm_unreachable("a GGML type without a layout");
}

/// The shapes of one qmatmul the schedule handles, and its tiles.
struct QShape {
  QuantType type;
  BlockLayout layout;
  int64_t rows; ///< M, the leading dims of A folded in.
  int64_t k, n;
  int64_t tileM, tileN;
  int64_t stepWords; ///< u32 words a step of the loop reads: two blocks
                     ///< (blocks have even sizes), or a super-block (two
                     ///< of Q3_K's and Q6_K's).
  int64_t chunks;    ///< chunks of 64 weights per step: 1, 4 or 8.
  int64_t lanes;     ///< f32 lanes of a vector: the target's, 2 to 16.

  /// The weights of a step of the loop.
  int64_t stepWeights() const { return chunks * kChunk; }
  /// The quant words of a chunk: 16 int8 ones, 8 of nibbles.
  int64_t words() const { return layout.int8 ? 16 : 8; }
  /// The vectors a chunk's weights fill.
  int64_t pieces() const { return kChunk / lanes; }
  /// Lane l of piece p holds element e = p * lanes + l of the chunk's
  /// weights in decoded order: field e / words() (a byte, or a nibble) of
  /// quant word e % words().
  int64_t word(int64_t p, int64_t l) const {
    return (p * lanes + l) % words();
  }
  int64_t field(int64_t p, int64_t l) const {
    return (p * lanes + l) / words();
  }
  /// The block of the chunk (0 or 1) of that weight: the first block's
  /// words, then the second's; in a Q4_K chunk, low nibbles, then high. In
  /// a Q2_K, Q3_K or Q6_K chunk, the sub-block of 16 (0 to 3): words 0-3 or
  /// 4-7, of the even or odd fields (2 * (field % 2) + word / 4).
  int64_t block(int64_t p, int64_t l) const {
    if (layout.sixBit || layout.twoBit)
      return 2 * (field(p, l) % 2) + word(p, l) / 4;
    return layout.superBlock ? field(p, l) % 2 : 2 * word(p, l) / words();
  }
  /// The weight of its block that lane l of piece p holds: byte f of word
  /// i is weight 4i + f; nibble f (of byte f / 2) is weight 4i + f / 2,
  /// plus 16 for a high nibble (in a Q4_K chunk, the high nibbles are the
  /// second block: 4i + f / 2 in either).
  int64_t weight(int64_t p, int64_t l) const {
    int64_t i = word(p, l) % (words() / 2), f = field(p, l);
    if (layout.superBlock)
      return 4 * word(p, l) + f / 2;
    return layout.int8 ? 4 * i + f : 16 * (f % 2) + 4 * i + f / 2;
  }
};

/// qmatmul's tiles: with one row of A (decode, or a dynamic number of
/// rows), as many rows of W as half the vector registers hold accumulators
/// (16 with AVX-512, 8 with AVX2; a quarter for the K-quants, below), so
/// that independent FMA chains hide the latency and the rest of the
/// registers decode; with more rows, tiles of 8 rows of A (or 4) sharing
/// each decoded weight, and as many rows of W as fill half the registers
/// (8 x 2 and 8 x 1).
QShape shapeOf(QmatmulView qm, const ScheduleOptions &options) {
  QShape s;
  s.type = qm.getQuantType();
  s.layout = layoutOf(s.type);
  s.k = qm.getK();
  s.n = qm.getN();
  s.rows = foldedRows(qm.getA());
  s.chunks = s.layout.chunks();
  s.stepWords = s.layout.perStep() * s.layout.bytes / 4;
  s.lanes = targetLanes(options);
  int64_t accs = std::max<int64_t>(options.vectorRegisters / 2, 1);
  // (Dynamic rows: as many as there may be, padded to whole tiles; one
  // row and a few run apart, splitQuantizedRows.)
  s.tileM = rowTile(s.rows, std::min<int64_t>(8, accs));
  // With one row of A, the K-quants' decoding keeps more in registers (the
  // super-block's scales, high bits): a quarter of the registers' rows of W
  // (4 with AVX-512) measured 10-30% faster than half for Q3_K to Q6_K, and
  // the same for Q2_K.
  int64_t rowsOfW = accs / s.tileM;
  if (s.tileM == 1 && s.layout.superBlock)
    rowsOfW = accs / 4;
  s.tileN = powerOfTwoDividing(s.n, std::max<int64_t>(rowsOfW, 1));
  return s;
}

} // namespace

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
    return canScheduleNf4(*nf4, options, why);
  QmatmulView qm(op);
  QShape s = shapeOf(qm, options);
  if (s.k % s.stepWeights() != 0) {
    why = "the quantized schedule needs K a multiple of " +
          std::to_string(s.stepWeights()) + " (got " + std::to_string(s.k) +
          ")";
    return failure();
  }
  Type elt = cast<RankedTensorType>(qm.getA().getType()).getElementType();
  if (!elt.isF32() && !elt.isF16() && !elt.isBF16()) {
    why = "the quantized schedule handles f32, f16 and bf16 activations";
    return failure();
  }
  // The words the op's rule requires; the schedule reads no further.
  auto words = cast<RankedTensorType>(qm.getWQ().getType()).getDimSize(0);
  if (words < s.n * (s.k / s.stepWeights()) * s.stepWords) {
    why = "w_q is shorter than N rows of K weights";
    return failure();
  }
  return success();
}

namespace {
/// The fields of one pair of blocks (`BlockLayout`): both blocks' quants as
/// u32 words, and each block's scale, minimum (when the type has one) and
/// fifth bits (likewise).
struct PairFields {
  Value words;
  /// Per block of the chunk (two).
  Value d[4], m[4], highBits[4];
  /// The fifth bits per lane, by `PairDecoder::blockLanes`.
  llvm::SmallMapVector<uint64_t, Value, 2> highBitLanes;
  /// Q5_K: the super-block's 32 bytes of fifth bits as words (byte l holds
  /// those of weight l of each sub-block, bit 2c + h for chunk c's low (h =
  /// 0) or high nibbles); Q6_K: the half's 32 bytes of qh. Per field f of a
  /// quant word (nibble f % 2 of byte f / 2), where in the lane's word of
  /// `highWords` its high bits start; `highBitCount` of them.
  Value highWords;
  int32_t highBitOf[8] = {};
  int64_t highBitCount = 1;
  int32_t highBitTo = 4; ///< where the high bits go (Q3_K's: 2).
  /// Where field f of a quant word is (`fieldShift[f]` bits up) and its
  /// mask: nibbles, or Q2_K's 2-bit quants.
  int32_t fieldShift[8] = {0, 4, 8, 12, 16, 20, 24, 28};
  int32_t fieldMask = 15;
  /// Q6_K, Q2_K: the super-block's 16 scales d * sc (and Q2_K's minimums
  /// -dmin * m) as vector<16xf32>; the chunk's sub-block j of 16 is entry
  /// `scaleBase + highStep * (j / 2) + j % 2`.
  Value scales, minimums;
  int64_t scaleBase = 0, highStep = 0;
};

/// Decodes qmatmul's pairs of blocks (`QShape`): the `pieces()` vectors of
/// the step's weights in decoded order, and the blocks' scales.
struct PairDecoder {
  const QShape &s;
  StepBuilder &st;

  /// `count` u32 words from byte `byte` of the pair at word `pair` of `wq`:
  /// read as they are when `byte` is word-aligned, else (two bytes in)
  /// each from the high half of one word and the low half of the next.
  Value wordsAt(Value wq, Value pair, int64_t byte, int64_t count) {
    OpBuilder &b = st.b;
    Location loc = st.loc;
    auto type = VectorType::get({count}, b.getI32Type());
    Value pad = arith::ConstantOp::create(b, loc, b.getI32Type(),
                                          b.getI32IntegerAttr(0));
    auto read = [&](int64_t at) -> Value {
      Value idx = arith::AddIOp::create(b, loc, pair, st.index(at));
      return vector::TransferReadOp::create(b, loc, type, wq, ValueRange{idx},
                                            pad, ArrayRef<bool>{true});
    };
    if (byte % 4 == 0)
      return read(byte / 4);
    SmallVector<int32_t> sixteen(count, 16);
    return arith::OrIOp::create(
        b, loc,
        arith::ShRUIOp::create(b, loc, read(byte / 4), st.lanesOf(sixteen)),
        arith::ShLIOp::create(b, loc, read(byte / 4 + 1),
                              st.lanesOf(sixteen)));
  }

  /// The u32 at byte `byte` of the pair (a multiple of 2).
  Value wordAt(Value wq, Value pair, int64_t byte) {
    return vector::ExtractOp::create(st.b, st.loc,
                                     wordsAt(wq, pair, byte, 1), int64_t{0});
  }

  /// The f16 at byte `byte` of the pair (a multiple of 2), as f32.
  Value halfAt(Value wq, Value pair, int64_t byte) {
    OpBuilder &b = st.b;
    Location loc = st.loc;
    Value word = wordAt(wq, pair, byte - byte % 4);
    if (byte % 4)
      word = arith::ShRUIOp::create(
          b, loc, word,
          arith::ConstantOp::create(b, loc, b.getI32Type(),
                                    b.getI32IntegerAttr(16)));
    return st.halfToF32(word);
  }

  /// The fields of chunk `c` of the step at word `step` of `wq`: a pair of
  /// blocks of 32, or a quarter of a Q4_K super-block.
  PairFields read(Value wq, Value step, int64_t c) {
    const BlockLayout &bl = s.layout;
    if (bl.sixBit)
      return readSixBitChunk(wq, step, c);
    if (bl.twoBit)
      return readTwoBitChunk(wq, step, c);
    if (bl.superBlock)
      return readSuperBlockChunk(wq, step, c);
    PairFields f;
    SmallVector<Value, 2> quants;
    int64_t blockWords = s.words() / 2;
    for (int64_t blk = 0; blk < 2; ++blk) {
      int64_t at = blk * bl.bytes;
      f.d[blk] = halfAt(wq, step, at);
      if (bl.minimum >= 0)
        f.m[blk] = halfAt(wq, step, at + bl.minimum);
      if (bl.highBits >= 0)
        f.highBits[blk] = wordAt(wq, step, at + bl.highBits);
      quants.push_back(wordsAt(wq, step, at + bl.quants, blockWords));
    }
    SmallVector<int64_t> both(s.words());
    std::iota(both.begin(), both.end(), 0);
    f.words = vector::ShuffleOp::create(st.b, st.loc, quants[0], quants[1],
                                        both);
    return f;
  }

  /// Chunk c of a Q4_K super-block: its 32 bytes of nibbles, and the scale
  /// d * sc and minimum -dmin * m of its sub-blocks 2c and 2c + 1, the 6-bit
  /// sc and m unpacked from the 12 scale bytes as llama.cpp's
  /// get_scale_min_k4 does.
  PairFields readSuperBlockChunk(Value wq, Value step, int64_t c) {
    OpBuilder &b = st.b;
    Location loc = st.loc;
    auto i32 = [&](int32_t v) -> Value {
      return arith::ConstantOp::create(b, loc, b.getI32Type(),
                                       b.getI32IntegerAttr(v));
    };
    // Scale byte n (bytes 4-15 of the super-block: words 1-3).
    auto scaleByte = [&](int64_t n) -> Value {
      Value word = wordAt(wq, step, 4 + 4 * (n / 4));
      if (n % 4)
        word = arith::ShRUIOp::create(b, loc, word, i32(8 * (n % 4)));
      return arith::AndIOp::create(b, loc, word, i32(0xFF));
    };
    auto low = [&](Value x, int32_t mask) -> Value {
      return arith::AndIOp::create(b, loc, x, i32(mask));
    };
    auto top2 = [&](Value x) -> Value { // (x >> 6) << 4
      return arith::ShLIOp::create(
          b, loc, arith::ShRUIOp::create(b, loc, x, i32(6)), i32(4));
    };
    Value d = halfAt(wq, step, 0), dmin = halfAt(wq, step, 2);
    Type f32 = b.getF32Type();
    PairFields f;
    for (int64_t blk = 0; blk < 2; ++blk) {
      int64_t j = 2 * c + blk;
      Value sc, m;
      if (j < 4) {
        sc = low(scaleByte(j), 63);
        m = low(scaleByte(j + 4), 63);
      } else {
        sc = arith::OrIOp::create(b, loc, low(scaleByte(j + 4), 0xF),
                                  top2(scaleByte(j - 4)));
        m = arith::OrIOp::create(
            b, loc, arith::ShRUIOp::create(b, loc, scaleByte(j + 4), i32(4)),
            top2(scaleByte(j)));
      }
      f.d[blk] = arith::MulFOp::create(
          b, loc, d, arith::UIToFPOp::create(b, loc, f32, sc));
      f.m[blk] = arith::NegFOp::create(
          b, loc,
          arith::MulFOp::create(b, loc, dmin,
                                arith::UIToFPOp::create(b, loc, f32, m)));
    }
    f.words = wordsAt(wq, step, s.layout.quants + 32 * c, s.words());
    if (s.layout.highBits >= 0) {
      f.highWords = wordsAt(wq, step, s.layout.highBits, s.words());
      for (int32_t field = 0; field < 8; ++field)
        f.highBitOf[field] = 8 * (field / 2) + 2 * c + field % 2;
    }
    return f;
  }

  /// Chunk c of a step of two Q6_K super-blocks (`BlockLayout`): super-block
  /// c / 4, half h = c / 2 % 2, its 32 bytes of ql from 64h + 32 (c % 2),
  /// whose low nibbles are t = c % 2 and high ones t + 2; the half's 32
  /// bytes of qh (the bits of t at 2t); the scales d * sc of its four
  /// sub-blocks of 16, 2 * high + j: sc[8h + 2t + j].
  PairFields readSixBitChunk(Value wq, Value step, int64_t c) {
    OpBuilder &b = st.b;
    Location loc = st.loc;
    const BlockLayout &bl = s.layout;
    int64_t base = (c / 4) * bl.bytes, half = c / 2 % 2, t = c % 2;
    PairFields f;
    f.words = wordsAt(wq, step, base + bl.quants + 64 * half + 32 * t,
                      s.words());
    f.highWords =
        wordsAt(wq, step, base + bl.highBits + 32 * half, s.words());
    f.highBitCount = 2;
    for (int32_t field = 0; field < 8; ++field)
      f.highBitOf[field] = 8 * (field / 2) + 2 * (t + 2 * (field % 2));
    // The 16 scales as one vector: four words as int8 lanes, to f32, times
    // d (the same ops for every chunk of the super-block, merged by CSE).
    auto f32s = VectorType::get({16}, b.getF32Type());
    Value bytes = vector::BitCastOp::create(
        b, loc, VectorType::get({16}, b.getI8Type()),
        wordsAt(wq, step, base + 192, 4));
    f.scales = arith::MulFOp::create(
        b, loc, arith::SIToFPOp::create(b, loc, f32s, bytes),
        vector::BroadcastOp::create(b, loc, f32s,
                                    halfAt(wq, step, base + 208)));
    f.scaleBase = 8 * half + 2 * t;
    f.highStep = 4;
    return f;
  }

  /// Chunk c of a Q2_K super-block (`BlockLayout`): half h = c / 2, its 32
  /// bytes of quants, field f of a word the quant at bit 8 (f / 2) + 2 (2
  /// (c % 2) + f % 2); the 16 scales and minimums as vectors (the same ops
  /// for every chunk, merged by CSE), sub-block j of 16 of the chunk being
  /// 8h + 4 (c % 2) + 2 (j / 2) + j % 2.
  PairFields readTwoBitChunk(Value wq, Value step, int64_t c) {
    OpBuilder &b = st.b;
    Location loc = st.loc;
    const BlockLayout &bl = s.layout;
    int64_t base = (c / 4) * bl.bytes, half = c % 4 / 2, pair = c % 2;
    PairFields f;
    f.words = wordsAt(wq, step, base + bl.quants + 32 * half, s.words());
    for (int32_t field = 0; field < 8; ++field)
      f.fieldShift[field] = 8 * (field / 2) + 2 * (2 * pair + field % 2);
    f.fieldMask = 3;
    f.scaleBase = 8 * half + 4 * pair;
    f.highStep = 2;
    auto i8s = VectorType::get({16}, b.getI8Type());
    auto f32s = VectorType::get({16}, b.getF32Type());
    if (bl.highBits >= 0) {
      // Q3_K: the hmask bit of field f, bit 4h + 2 pair + f % 2 of byte
      // f / 2, as 4; the scales unpacked as dequantize_row_q3_K does, in
      // four u32s (scale 4w + y in byte y of the w-th), less 32, times d.
      f.highWords = wordsAt(wq, step, base + bl.highBits, s.words());
      for (int32_t field = 0; field < 8; ++field)
        f.highBitOf[field] =
            8 * (field / 2) + 4 * half + 2 * pair + field % 2;
      f.highBitTo = 2;
      auto i32 = [&](uint32_t v) -> Value {
        return arith::ConstantOp::create(
            b, loc, b.getI32Type(),
            b.getI32IntegerAttr(static_cast<int32_t>(v)));
      };
      auto low = [&](Value x, unsigned by) -> Value { // (x >> by) & 0x0f0f0f0f
        if (by)
          x = arith::ShRUIOp::create(b, loc, x, i32(by));
        return arith::AndIOp::create(b, loc, x, i32(0x0F0F0F0F));
      };
      auto top = [&](Value x, unsigned by) -> Value { // ((x >> by) & 3s) << 4
        if (by)
          x = arith::ShRUIOp::create(b, loc, x, i32(by));
        return arith::ShLIOp::create(
            b, loc, arith::AndIOp::create(b, loc, x, i32(0x03030303)),
            i32(4));
      };
      Value a0 = wordAt(wq, step, base + 96), a1 = wordAt(wq, step, base + 100);
      Value tmp = wordAt(wq, step, base + 104);
      SmallVector<Value, 4> aux = {
          arith::OrIOp::create(b, loc, low(a0, 0), top(tmp, 0)),
          arith::OrIOp::create(b, loc, low(a1, 0), top(tmp, 2)),
          arith::OrIOp::create(b, loc, low(a0, 4), top(tmp, 4)),
          arith::OrIOp::create(b, loc, low(a1, 4), top(tmp, 6))};
      Value bytes = vector::BitCastOp::create(
          b, loc, i8s,
          vector::FromElementsOp::create(
              b, loc, VectorType::get({4}, b.getI32Type()), aux));
      Value thirtyTwo = arith::ConstantOp::create(
          b, loc, f32s, DenseElementsAttr::get(f32s, 32.0f));
      f.scales = arith::MulFOp::create(
          b, loc,
          arith::SubFOp::create(b, loc,
                                arith::UIToFPOp::create(b, loc, f32s, bytes),
                                thirtyTwo),
          vector::BroadcastOp::create(b, loc, f32s,
                                      halfAt(wq, step, base + 108)));
      return f;
    }
    Value bytes =
        vector::BitCastOp::create(b, loc, i8s, wordsAt(wq, step, 0, 4));
    Value four = arith::ConstantOp::create(
        b, loc, i8s, DenseElementsAttr::get(i8s, b.getI8IntegerAttr(4)));
    Value fifteen = arith::ConstantOp::create(
        b, loc, i8s, DenseElementsAttr::get(i8s, b.getI8IntegerAttr(15)));
    auto times = [&](Value x, Value by) -> Value {
      return arith::MulFOp::create(
          b, loc, arith::UIToFPOp::create(b, loc, f32s, x),
          vector::BroadcastOp::create(b, loc, f32s, by));
    };
    f.scales = times(arith::AndIOp::create(b, loc, bytes, fifteen),
                     halfAt(wq, step, 80));
    f.minimums = times(arith::ShRUIOp::create(b, loc, bytes, four),
                       arith::NegFOp::create(b, loc, halfAt(wq, step, 82)));
    return f;
  }

  /// The scale of each lane's block in `key` (`blockLanes`): the blocks'
  /// scales broadcast and blended, or for Q6_K lanes of the super-block's
  /// scales, shuffled.
  Value scaleLanes(PairFields &f, uint64_t key) {
    return f.scales ? subBlockLanes(f, f.scales, key) : perBlock(key, f.d);
  }

  /// Likewise the minimums (for the types that have them).
  Value minimumLanes(PairFields &f, uint64_t key) {
    return f.minimums ? subBlockLanes(f, f.minimums, key)
                      : perBlock(key, f.m);
  }

  /// Lane l of the result is the entry of the super-block's `entries` for
  /// the sub-block of lane l in `key`.
  Value subBlockLanes(PairFields &f, Value entries, uint64_t key) {
    SmallVector<int64_t> mask;
    for (int64_t l = 0; l < s.lanes; ++l) {
      int64_t blk = (key >> (2 * l)) & 3;
      mask.push_back(f.scaleBase + f.highStep * (blk / 2) + blk % 2);
    }
    return vector::ShuffleOp::create(st.b, st.loc, entries, entries, mask);
  }

  /// Piece p of the step's weights, unscaled, as f32: lane l's quant word
  /// gathered by a shuffle (none where the lanes are the words in order),
  /// its field shifted out in 32-bit lanes (and its fifth bit added).
  Value piece(PairFields &f, int64_t p) {
    OpBuilder &b = st.b;
    Location loc = st.loc;
    int64_t n = s.lanes;
    SmallVector<int64_t> mask, identity(n);
    SmallVector<int32_t> shifts, weights;
    for (int64_t l = 0; l < n; ++l) {
      mask.push_back(s.word(p, l));
      shifts.push_back(static_cast<int32_t>(s.field(p, l)));
      weights.push_back(static_cast<int32_t>(s.weight(p, l)));
    }
    std::iota(identity.begin(), identity.end(), 0);
    Value v = f.words;
    if (n != s.words() || mask != identity)
      v = vector::ShuffleOp::create(b, loc, f.words, f.words, mask);
    auto splat = [&](int32_t x) {
      return st.lanesOf(SmallVector<int32_t>(n, x));
    };
    auto shifted = [&](auto op, Value x, ArrayRef<int32_t> by) -> Value {
      if (llvm::all_of(by, [](int32_t y) { return y == 0; }))
        return x;
      return decltype(op)::create(b, loc, x, st.lanesOf(by));
    };
    if (s.layout.int8) {
      // Byte f to the top (a left shift by 24 - 8f), then arithmetically
      // back down: the signed int8.
      SmallVector<int32_t> left;
      for (int32_t field : shifts)
        left.push_back(24 - 8 * field);
      v = shifted(arith::ShLIOp(), v, left);
      v = arith::ShRSIOp::create(b, loc, v, splat(24));
    } else {
      // Nibble f: shifted down by 4f (Q2_K: its quant's place) and masked.
      SmallVector<int32_t> right;
      for (int32_t field : shifts)
        right.push_back(f.fieldShift[field]);
      v = shifted(arith::ShRUIOp(), v, right);
      v = arith::AndIOp::create(b, loc, v, splat(f.fieldMask));
      if (f.highWords) {
        // Lane l's word of high bits (the lanes' words as the quants'),
        // the bits of its quant's field moved above the quant.
        SmallVector<int32_t> bitOf;
        for (int32_t field : shifts)
          bitOf.push_back(f.highBitOf[field]);
        Value h = f.highWords;
        if (n != s.words() || mask != identity)
          h = vector::ShuffleOp::create(b, loc, h, h, mask);
        v = arith::OrIOp::create(b, loc, v,
                                 bitsAt(h, bitOf, f.highBitCount,
                                        f.highBitTo));
      } else if (f.highBits[0]) {
        // Bit w of the block's fifth bits, for weight w, as 16.
        uint64_t key = blockLanes(p);
        Value &lanes = f.highBitLanes[key];
        if (!lanes)
          lanes = perBlock(key, f.highBits);
        v = arith::OrIOp::create(b, loc, v, bitsAt(lanes, weights, 1, 4));
      }
    }
    auto f32s = VectorType::get({n}, b.getF32Type());
    if (!s.layout.offset)
      return arith::SIToFPOp::create(b, loc, f32s, v);
    // q - offset for q in [0, 2^23): q in the mantissa of 2^23 (exponent
    // bits or'd in, which x86 merges with the mask above into one
    // vpternlogd) less 2^23 + offset, exactly; one op fewer than a
    // subtraction and a conversion.
    constexpr int32_t kTwoTo23 = 0x4B000000;
    Value biased = arith::BitcastOp::create(
        b, loc, f32s, arith::OrIOp::create(b, loc, v, splat(kTwoTo23)));
    return arith::SubFOp::create(
        b, loc, biased,
        arith::ConstantOp::create(
            b, loc, f32s,
            DenseElementsAttr::get(
                f32s, static_cast<float>(8388608 + s.layout.offset))));
  }

  /// The chunk's weights, dequantized: its `pieces()` vectors in decoded
  /// order, each lane's quant times its block's scale (plus its minimum).
  SmallVector<Value, 16> weights(PairFields &f) {
    OpBuilder &b = st.b;
    Location loc = st.loc;
    bool hasMin = s.layout.minimum >= 0;
    SmallVector<Value, 16> w;
    llvm::SmallMapVector<uint64_t, std::pair<Value, Value>, 2> scaleOf;
    for (int64_t p = 0; p < s.pieces(); ++p) {
      uint64_t key = blockLanes(p);
      auto &[d, m] = scaleOf[key];
      if (!d) {
        d = scaleLanes(f, key);
        if (hasMin)
          m = minimumLanes(f, key);
      }
      Value q = piece(f, p);
      if (hasMin)
        w.push_back(vector::FMAOp::create(b, loc, q, d, m));
      else
        w.push_back(arith::MulFOp::create(b, loc, q, d));
    }
    return w;
  }

  /// Bits `bit[l]` to `bit[l] + count - 1` of lane l of `x`, moved to bit
  /// `to` (the others cleared): by one shift where every lane's bit is on
  /// the same side of `to`, else by two.
  Value bitsAt(Value x, ArrayRef<int32_t> bit, int64_t count, int32_t to) {
    OpBuilder &b = st.b;
    Location loc = st.loc;
    int64_t n = static_cast<int64_t>(bit.size());
    auto by = [&](auto f) {
      SmallVector<int32_t> amounts;
      for (int32_t x : bit)
        amounts.push_back(f(x));
      return st.lanesOf(amounts);
    };
    auto isZero = [&](auto f) {
      return llvm::all_of(bit, [&](int32_t x) { return f(x) == 0; });
    };
    auto down = [&](int32_t x) { return x - to; };
    auto up = [&](int32_t x) { return to - x; };
    Value moved;
    if (llvm::all_of(bit, [&](int32_t x) { return x >= to; }))
      moved = isZero(down) ? x
                           : arith::ShRUIOp::create(b, loc, x, by(down))
                                 .getResult();
    else if (llvm::all_of(bit, [&](int32_t x) { return x <= to; }))
      moved = isZero(up) ? x
                         : arith::ShLIOp::create(b, loc, x, by(up)).getResult();
    else
      moved = arith::ShLIOp::create(
          b, loc,
          arith::ShRUIOp::create(b, loc, x, by([](int32_t x) { return x; })),
          st.lanesOf(SmallVector<int32_t>(n, to)));
    int32_t bits = ((1 << count) - 1) << to;
    return arith::AndIOp::create(b, loc, moved,
                                 st.lanesOf(SmallVector<int32_t>(n, bits)));
  }

  /// The block of each lane of piece p, two bits a lane (pieces with the
  /// same key share their per-lane scales).
  uint64_t blockLanes(int64_t p) const {
    uint64_t key = 0;
    for (int64_t l = 0; l < s.lanes; ++l)
      key |= static_cast<uint64_t>(s.block(p, l)) << (2 * l);
    return key;
  }

  /// A vector whose lane l is xs[block of lane l in `key`]: a broadcast per
  /// block, blended by lane.
  Value perBlock(uint64_t key, ArrayRef<Value> xs) {
    OpBuilder &b = st.b;
    Location loc = st.loc;
    auto type = VectorType::get({s.lanes}, xs[0].getType());
    auto blockOf = [&](int64_t l) { return (key >> (2 * l)) & 3; };
    Value v;
    for (uint64_t blk = 0; blk < 4; ++blk) {
      bool used = false;
      for (int64_t l = 0; l < s.lanes; ++l)
        used |= blockOf(l) == blk;
      if (!used)
        continue;
      Value bv = vector::BroadcastOp::create(b, loc, type, xs[blk]);
      if (!v) {
        v = bv;
        continue;
      }
      SmallVector<int64_t> mask;
      for (int64_t l = 0; l < s.lanes; ++l)
        mask.push_back(blockOf(l) == blk ? s.lanes + l : l);
      v = vector::ShuffleOp::create(b, loc, v, bv, mask);
    }
    return v;
  }
};

/// Chunk `c` (static) of the step at u32 word `word` of `wq`, dequantized:
/// its `pieces()` vectors of f32 in decoded order.
SmallVector<Value, 16> decodedChunk(StepBuilder &st, const QShape &s,
                                    Value wq, Value word, int64_t c) {
  PairDecoder dec{s, st};
  PairFields fields = dec.read(wq, word, c);
  return dec.weights(fields);
}

/// A ([rows, K], folded) as f32 in the decoded order of each chunk
/// (`QShape::word`, `QShape::field`): element e of a chunk, field f of quant
/// word w (block b, word i of the block), is activation
///   int8 blocks: 32b + 4i + f      (e = 16f + 8b + i),
///   Q4_K:        32h + 4w + y, for the nibble f = 2y + h of byte y of the
///                word, its high nibbles the second block (e = 16y + 8h + w),
///   nibbles:     32b + 16h + 4i + y (e = 16y + 8h + 4b + i),
/// so all are transposes of A with K split: [K/64, b, i, f] to
/// [K/64, f, b, i] (the first two), and [K/64, b, h, i, y] to
/// [K/64, y, h, b, i]; Q6_K's chunks interleave two sub-blocks of 32 with
/// the next two (below).
Value packActivations(RewriterBase &rewriter, Location loc, const QShape &s,
                      Value a) {
  int64_t steps = s.k / kChunk;
  if (s.layout.sixBit)
    // Q6_K: weight 128H + 64h + 32t + 4i + y (nibble h of byte y of word i
    // of chunk 2H + t) is element 16y + 8h + i of its chunk: [K/128, h, t,
    // i, y] to [K/128, t, y, h, i].
    return permuteColumns(rewriter, loc, a, {s.k / 128, 2, 2, 8, 4},
                          {0, 2, 4, 1, 3});
  if (s.layout.int8 || s.layout.superBlock)
    return permuteColumns(rewriter, loc, a, {steps, 2, 8, 4}, {0, 3, 1, 2});
  return permuteColumns(rewriter, loc, a, {steps, 2, 2, 4, 4},
                        {0, 4, 2, 1, 3});
}
} // namespace


/// The fewest rows of A for which a qmatmul runs on panels, or 0 when the
/// panels do not fit it.
static int64_t panelRows(const QShape &s, const ScheduleOptions &options) {
  if (!panelColumnsFit(s.n, s.lanes, options))
    return 0;
  if (s.layout.superBlock)
    return kPanelRowsSuperBlocks;
  return s.layout.int8 ? kPanelRowsInt8 : kPanelRowsNibbles;
}

SmallVector<RowBranch>
mlir::fuel::splitQuantizedRows(RewriterBase &rewriter, FusedOp op,
                               const ScheduleOptions &options) {
  int64_t least = 0;
  if (std::optional<AwqMatmulView> awq = AwqMatmulView::match(op))
    least = awqPanelRows(*awq, options);
  else if (!Nf4MatmulView::match(op))
    least = panelRows(shapeOf(QmatmulView(op), options), options);
  return splitFewRows(rewriter, op, /*actIndex=*/0, kFewRows,
                      least > kFewRows + 1 ? least - 1 : 0);
}

LogicalResult mlir::fuel::buildQuantized(RewriterBase &rewriter, FusedOp op,
                                         const ScheduleOptions &options) {
  if (std::optional<AwqMatmulView> awq = AwqMatmulView::match(op))
    return buildAwq(rewriter, *awq, options);
  if (std::optional<Nf4MatmulView> nf4 = Nf4MatmulView::match(op))
    return buildNf4(rewriter, *nf4, options);
  QmatmulView qm(op);
  QShape s = shapeOf(qm, options);
  // Many rows of A: panels, the weight dequantized once per block of rows.
  int64_t rowWords = (s.k / s.stepWeights()) * s.stepWords;
  auto pack = [&](Value a) {
    return packActivations(rewriter, op.getLoc(), s, a);
  };
  auto decode = [&](StepBuilder &st, Value row, Value step, int64_t c) {
    Value word = arith::AddIOp::create(
        st.b, st.loc,
        arith::MulIOp::create(st.b, st.loc, row, st.index(rowWords)),
        arith::MulIOp::create(st.b, st.loc, step, st.index(s.stepWords)));
    return decodedChunk(st, s, qm.getWQ(), word, c);
  };
  RowPanels panels{kChunk, s.chunks, panelRows(s, options), pack, decode};
  if (panels.leastRows &&
      succeeded(buildRowPanels(rewriter, op, qm.getA(), s.k, s.n, s.lanes,
                               panels, options)))
    return success();
  Location loc = op.getLoc();
  Type f32 = rewriter.getF32Type();
  TileFrame frame = TileFrame::open(
      rewriter, op, qm.getA(), s.rows, s.n, s.tileM, s.tileN,
      [&](Value a) { return packActivations(rewriter, loc, s, a); });
  Value a = frame.a, m0 = frame.m0, n0 = frame.n0, wq = qm.getWQ();
  StepBuilder sb{rewriter, loc};

  auto lanes = VectorType::get({s.lanes}, f32);
  Value zeros = arith::ConstantOp::create(
      rewriter, loc, lanes, DenseElementsAttr::get(lanes, 0.0f));
  SmallVector<Value> inits(s.tileM * s.tileN, zeros);
  Value padF = arith::ConstantOp::create(rewriter, loc, f32,
                                         rewriter.getF32FloatAttr(0.0));
  auto steps = scf::ForOp::create(
      rewriter, loc, sb.index(0), sb.index(s.k / s.stepWeights()),
      sb.index(1), inits,
      [&](OpBuilder &b, Location l, Value p, ValueRange accs) {
        StepBuilder st{b, l};
        PairDecoder dec{s, st};
        SmallVector<Value> next(accs.begin(), accs.end());
        Value k0 = arith::MulIOp::create(b, l, p, st.index(s.stepWeights()));
        for (int64_t c = 0; c < s.chunks; ++c) {
          // The chunk's activations (packed in decoded order): tileM rows of
          // pieces() vectors.
          SmallVector<SmallVector<Value, 8>> act(s.tileM);
          for (int64_t m = 0; m < s.tileM; ++m) {
            Value row = arith::AddIOp::create(b, l, m0, st.index(m));
            for (int64_t piece = 0; piece < s.pieces(); ++piece) {
              Value col = arith::AddIOp::create(
                  b, l, k0, st.index(c * kChunk + piece * s.lanes));
              act[m].push_back(vector::TransferReadOp::create(
                  b, l, lanes, a, ValueRange{row, col}, padF,
                  ArrayRef<bool>{true}));
            }
          }
          // With one row of A and a minimum in the blocks: the activations
          // summed lane by lane over the pieces that share their scales.
          llvm::SmallMapVector<uint64_t, Value, 2> actSums;
          if (s.tileM == 1 && s.layout.minimum >= 0) {
            for (int64_t piece = 0; piece < s.pieces(); ++piece) {
              Value &sum = actSums[dec.blockLanes(piece)];
              sum = sum ? arith::AddFOp::create(b, l, sum, act[0][piece])
                              .getResult()
                        : act[0][piece];
            }
          }
          for (int64_t j = 0; j < s.tileN; ++j) {
            // Row n0 + j of W, step p: word (n0 + j) * rowWords + p *
            // stepWords.
            Value rowStart = arith::MulIOp::create(
                b, l, arith::AddIOp::create(b, l, n0, st.index(j)),
                st.index(rowWords));
            Value word = arith::AddIOp::create(
                b, l, rowStart,
                arith::MulIOp::create(b, l, p, st.index(s.stepWords)));
            PairFields fields = dec.read(wq, word, c);
            bool hasMin = s.layout.minimum >= 0;
            if (s.tileM == 1) {
              // One row of A: the products of the pieces that share their
              // lanes' scales summed first, then scaled once (one multiply
              // per vector fewer); a minimum m times the sum of the block's
              // activations (summed once per step, for every row of W).
              llvm::SmallMapVector<uint64_t, Value, 2> dots;
              for (int64_t piece = 0; piece < s.pieces(); ++piece) {
                Value q = dec.piece(fields, piece);
                Value &dot = dots[dec.blockLanes(piece)];
                dot = dot ? vector::FMAOp::create(b, l, q, act[0][piece], dot)
                                .getResult()
                          : arith::MulFOp::create(b, l, q, act[0][piece])
                                .getResult();
              }
              for (auto [second, dot] : dots) {
                next[j] = vector::FMAOp::create(
                    b, l, dot, dec.scaleLanes(fields, second),
                    next[j]);
                if (hasMin)
                  next[j] = vector::FMAOp::create(
                      b, l, actSums[second],
                      dec.minimumLanes(fields, second), next[j]);
              }
              continue;
            }
            frame.accumulate(b, l, next, j, dec.weights(fields), act);
          }
        }
        scf::YieldOp::create(b, l, next);
      });

  // Each accumulator reduced across its lanes: row m of the tile.
  frame.close(rewriter, op,
              frame.reducedTile(rewriter, loc, steps.getResults()));
  return success();
}
