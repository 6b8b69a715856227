//===- QuantizedBlocks.h - GGML blocks as qmatmul decodes them -*- C++ -*-===//
//
// What qmatmul's two CPU schedules share (Quantized.cpp: tiles of rows of A
// by rows of W, each dequantizing the weight in registers; QuantizedPanels.cpp:
// many rows of A over panels of the weight dequantized once): where the
// fields of each GGML type's blocks lie, the shape of a qmatmul and the
// order its chunks decode in, the activations packed into that order, and
// the decoding of one chunk.
//
//===----------------------------------------------------------------------===//

#ifndef FUEL_LIB_CODEGEN_QUANTIZEDBLOCKS_H
#define FUEL_LIB_CODEGEN_QUANTIZEDBLOCKS_H

#include "QuantizedTiles.h"

#include "FuelFused/IR/FuelAttrs.h"

namespace mlir {
namespace fuel {
namespace quantized {

/// Weights per chunk of qmatmul's reduction: two blocks of 32, or a quarter
/// of a K-quant's super-block of 256.
constexpr int64_t kChunk = 64;

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

/// qmatmul's shape and its tiles of rows of A by rows of W (Quantized.cpp).
QShape shapeOf(QmatmulView qm, const ScheduleOptions &options);

/// A ([rows, K], folded) copied as f32 with each chunk's K in the order its
/// weights decode in.
Value packActivations(RewriterBase &rewriter, Location loc, const QShape &s,
                      Value a);

/// Chunk `c` (static) of the step at u32 word `word` of `wq`, dequantized:
/// its `pieces()` vectors of f32 in decoded order.
SmallVector<Value, 16> decodedChunk(StepBuilder &st, const QShape &s,
                                    Value wq, Value word, int64_t c);

/// Replaces `op` (a qmatmul canScheduleQuantized accepts, of shape `s`) by
/// the panel schedule (QuantizedPanels.cpp) when it has enough rows of A
/// for it; fails, changing nothing, otherwise.
LogicalResult buildPanels(RewriterBase &rewriter, FusedOp op,
                          QmatmulView qm, const QShape &s,
                          const ScheduleOptions &options);

} // namespace quantized
} // namespace fuel
} // namespace mlir

#endif // FUEL_LIB_CODEGEN_QUANTIZEDBLOCKS_H
