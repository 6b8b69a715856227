//===- AttentionBlocks.h - What the attention schedules share ---*- C++ -*-===//
//
// The attention schedules (Attention.cpp, the forward; AttentionBackward.cpp,
// the backwards) build FlashAttention-2's tiled forms as linalg on blocks of
// queries and keys; these are their shapes, their block builders, the mask,
// the range of key blocks a query block sees, and the tiling and
// vectorization of the block code.
//
//===----------------------------------------------------------------------===//

#ifndef FUEL_LIB_CODEGEN_ATTENTIONBLOCKS_H
#define FUEL_LIB_CODEGEN_ATTENTIONBLOCKS_H

#include "ScheduleUtils.h"

#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace fuel {
namespace attention {

/// Register tiles of the block contractions: rows by columns, reduction
/// steps (as in the contraction schedule).
constexpr int64_t kRegM = 8, kRegK = 16;
/// Query and key block sizes, at most.
constexpr int64_t kBlockQ = 64, kBlockK = 64;

/// The largest tile of at most `most` that divides `size` and is a
/// multiple of `unit`; 0 when there is none.
inline int64_t tileOf(int64_t size, int64_t most, int64_t unit) {
  for (int64_t t = most; t >= unit; t /= 2)
    if (size % t == 0 && t % unit == 0)
      return t;
  return 0;
}

inline int64_t roundUp(int64_t x, int64_t unit) {
  return (x + unit - 1) / unit * unit;
}

/// A block for `size` rows (a multiple of `unit`, at most `most`): the
/// largest that divides `size`, unless that is small next to `size`; then
/// `size` is padded to a multiple of the block.
inline int64_t blockFor(int64_t size, int64_t most, int64_t unit) {
  int64_t t = tileOf(size, most, unit);
  if (t && (t >= 32 || size <= most))
    return t;
  return std::min(most, roundUp(size, unit));
}

/// The shapes of one flash_attn the schedule handles, and the padded
/// shapes it computes on: sequence lengths padded to whole blocks, head
/// dims to 16 (zeros; padded keys are masked, padded queries and value
/// columns dropped from the result). A dynamic sequence length (Sq or Sk:
/// the forward's CPU schedule takes them) gets blocks of kBlockQ / kBlockK
/// and a padded length known at run time: `sqP` / `skP` are then
/// ShapedType::kDynamic, and `materialize` computes the lengths and their
/// padded values in IR.
struct AttnShape {
  int64_t batch, heads, kvHeads, sq, sk, d, dv;
  int64_t blockQ, blockK, regN;
  int64_t sqP, skP, dP, dvP;
  /// With a dynamic Sq (Sk): the length and the padded length, as index
  /// values (after `materialize`; null for a static length).
  Value sqLen, sqPad, skLen, skPad;

  static AttnShape of(FlashAttnView attn) {
    return of(attn.getQ(), attn.getK(), attn.getV());
  }
  static AttnShape of(Value qv, Value kv, Value vv) {
    ArrayRef<int64_t> q = cast<RankedTensorType>(qv.getType()).getShape();
    ArrayRef<int64_t> k = cast<RankedTensorType>(kv.getType()).getShape();
    ArrayRef<int64_t> v = cast<RankedTensorType>(vv.getType()).getShape();
    AttnShape s{q[0], q[1], k[1], q[2], k[2], q[3], v[3], 0, 0, 0, 0,
                0, 0, 0, {}, {}, {}, {}};
    if (!s.sq || !s.sk || !s.d || !s.dv)
      return s;
    bool dynQ = ShapedType::isDynamic(s.sq), dynK = ShapedType::isDynamic(s.sk);
    s.blockQ = dynQ ? kBlockQ : blockFor(s.sq, kBlockQ, kRegM);
    s.blockK = dynK ? kBlockK : blockFor(s.sk, kBlockK, kRegK);
    s.sqP = dynQ ? ShapedType::kDynamic : roundUp(s.sq, s.blockQ);
    s.skP = dynK ? ShapedType::kDynamic : roundUp(s.sk, s.blockK);
    s.dP = roundUp(s.d, kRegK);
    s.dvP = roundUp(s.dv, 16);
    s.regN = s.dvP % 32 == 0 ? 32 : 16;
    return s;
  }
  bool dynamic() const {
    return ShapedType::isDynamic(sq) || ShapedType::isDynamic(sk);
  }
  /// Whether keys past Sk exist (for a dynamic Sk, whether they may).
  bool padsKeys() const { return ShapedType::isDynamic(sk) || skP != sk; }
  bool padsResult() const {
    return ShapedType::isDynamic(sq) || sqP != sq || dvP != dv;
  }

  /// Sets the dynamic lengths from q [B, H, Sq, D] and k [B, Hkv, Sk, D]
  /// and their padded values, ceil(S / block) * block.
  void materialize(OpBuilder &b, Location loc, Value q, Value k) {
    auto pad = [&](Value len, int64_t block) -> Value {
      Value blk = arith::ConstantIndexOp::create(b, loc, block);
      return arith::MulIOp::create(
          b, loc, arith::CeilDivUIOp::create(b, loc, len, blk), blk);
    };
    if (ShapedType::isDynamic(sq)) {
      sqLen = tensor::DimOp::create(b, loc, q, 2);
      sqPad = pad(sqLen, blockQ);
    }
    if (ShapedType::isDynamic(sk)) {
      skLen = tensor::DimOp::create(b, loc, k, 2);
      skPad = pad(skLen, blockK);
    }
  }
  /// Sq, Sk and their padded lengths, static or materialized.
  OpFoldResult qLen(OpBuilder &b) const { return sizeOr(b, sqLen, sq); }
  OpFoldResult kLen(OpBuilder &b) const { return sizeOr(b, skLen, sk); }
  OpFoldResult qPadded(OpBuilder &b) const { return sizeOr(b, sqPad, sqP); }
  OpFoldResult kPadded(OpBuilder &b) const { return sizeOr(b, skPad, skP); }
  static OpFoldResult sizeOr(OpBuilder &b, Value v, int64_t size) {
    return v ? OpFoldResult(v) : OpFoldResult(b.getIndexAttr(size));
  }
  /// The number of query (key) blocks, static or computed.
  OpFoldResult qBlocks(OpBuilder &b, Location loc) const {
    return blockCount(b, loc, sqPad, sqP, blockQ);
  }
  OpFoldResult kBlocks(OpBuilder &b, Location loc) const {
    return blockCount(b, loc, skPad, skP, blockK);
  }
  static OpFoldResult blockCount(OpBuilder &b, Location loc, Value padded,
                                 int64_t size, int64_t block) {
    if (!padded)
      return b.getIndexAttr(size / block);
    return arith::DivUIOp::create(
               b, loc, padded, arith::ConstantIndexOp::create(b, loc, block))
        .getResult();
  }
};

/// The blocks of a flash_attn backward's GPU form (`op`: a
/// flash_attn_backward_q/k/v): for dq, blocks of queries as on the CPU (a
/// thread each) and key steps of `step`; for dk and dv, blocks of keys as
/// on the CPU (a thread each) and query steps of `step` at most (a multiple
/// of kRegM).
AttnShape backwardRowsShape(FusedOp op, int64_t step);

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
    Value c =
        arith::ConstantOp::create(b, loc, elt, b.getFloatAttr(elt, value));
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

  /// A [rows, cols] slice of a [B, H, rows', cols'] tensor at (bi, h, r0,
  /// c0); its elements are f32 unless `elt` says otherwise.
  Value block(Value t, Value bi, Value h, OpFoldResult r0, OpFoldResult c0,
              int64_t rows, int64_t cols, Type elt = {}) const {
    auto one = b.getIndexAttr(1);
    return tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get({rows, cols}, elt ? elt : b.getF32Type()),
        t,
        SmallVector<OpFoldResult>{bi, h, r0, c0},
        SmallVector<OpFoldResult>{one, one, b.getIndexAttr(rows),
                                  b.getIndexAttr(cols)},
        SmallVector<OpFoldResult>(4, one));
  }
};

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

/// `v` with its elements widened to f32 (an f32 `v` as it is).
Value toF32(BlockBuilder &bb, Value v);

/// x [B, H, S, D] as [B, H, D, S] in f32 (the keys, the values).
Value transposeKeys(BlockBuilder &bb, Value k);

/// k [B, H, S, D] (S a multiple of `blockK`) as blocks of k^T: [B, H,
/// S / blockK, D, blockK]. A block's rows are then blockK elements apart,
/// not S: read in place from [B, H, D, S] with S = 1024, each row of a
/// block was a 4 KiB page of its own and the same L1 set (causal attention
/// at [1, 8, 1024, 64] on AVX2: 45 ms, 38 with the blocks).
/// S may be dynamic (a multiple of blockK at run time).
Value blockKeysT(BlockBuilder &bb, Value k, int64_t blockK);

/// `x` (f32) in the first corner of a zero tensor of `shape`; `x` itself
/// when it has that shape (for the second form: when every size is static
/// and x's).
Value padTo(BlockBuilder &bb, Value x, ArrayRef<int64_t> shape);
Value padTo(BlockBuilder &bb, Value x, ArrayRef<OpFoldResult> shape);

/// The masked, scaled (soft-capped, ALiBi-biased) scores of a [Bq, Bk]
/// block whose first query is `i0` and first key `j0`; `off` = k_len - Sq
/// (k_len = Sk without the operand) aligns the causal diagonal bottom-right.
/// With `keysByRow` the block is [Bk, Bq] (a key's scores on a row: dk and
/// dv's GPU form).
Value maskBlock(BlockBuilder &bb, Value raw, const BlockParams &bp, Value i0,
                Value j0, Value off, bool keysByRow = false);

/// Inside the body of a generic over a block of scores placed as for
/// maskBlock: the element's query index plus `off` (its diagonal) and its
/// key index.
std::pair<Value, Value> diagonalAndKey(OpBuilder &b, Location loc, Value i0,
                                       Value j0, Value off, bool keysByRow);

/// ALiBi's bias magnitude slope * |diag - j| (f32), which the scores less.
Value alibiDistance(OpBuilder &b, Location loc, Value slope, Value diag,
                    Value j);

/// The key blocks the query block starting at `i0` visits: [lo, hi) in
/// steps of Bk, clamped to [0, SkP] (and to the live keys with k_len).
std::pair<Value, Value> keyRange(BlockBuilder &bb, const AttnShape &s,
                                 const BlockParams &bp, Value i0, Value off);

/// The query blocks that see the keys [j0, j0 + Bk): [lo, hi) in steps of
/// Bq, clamped to [0, SqP]; `off` as for maskBlock.
std::pair<Value, Value> queryRange(BlockBuilder &bb, const AttnShape &s,
                                   const BlockParams &bp, Value j0,
                                   Value off);

/// Whether every dim of `op`'s operands and results is static but the
/// sequence lengths: dim 2 of its first `sequenceOperands` operands (q, k,
/// v and, for a backward, do) and of its result. Sets `why` when not.
LogicalResult checkStaticButLengths(FusedOp op, unsigned sequenceOperands,
                                    std::string &why);

/// The checks both attention schedules make: f32, f16 or bf16 `floats`,
/// non-empty sequences and head dims, key blocks a multiple of the vector
/// width. Sets `why` when not.
LogicalResult checkAttention(ValueRange floats, Value q, Value k, Value v,
                             int64_t vectorWidth, std::string &why);

/// `padded` (the schedule's result on padded shapes) cut to `type` (its
/// first corner); `padded` itself when it has that type. `dynamicSizes`:
/// the sizes of type's dynamic dims, in order.
Value sliceToResult(OpBuilder &b, Location loc, Value padded,
                    RankedTensorType type, ValueRange dynamicSizes = {});

/// One step of an online softmax over a [Bq, Bk] block of masked scores,
/// with the running row max `m` ([Bq], updated in place):
///   m' = max(m, rowmax(s)); alpha = exp(m - m'); p = exp(s - m')
/// (0 where s or m is -inf: masked, or no key seen yet). Every read of the
/// old m comes before the op that overwrites it, so that the carried value
/// bufferizes to one buffer; the caller scales its sums by alpha in place
/// likewise (`scaleRows`).
struct OnlineStep {
  Value mNew, alpha, p;
};
OnlineStep onlineSoftmaxStep(BlockBuilder &bb, Value scores, Value m);

/// `acc` ([Bq] or [Bq, N]) times alpha ([Bq]) per row, in place (the op
/// reads only the value it writes).
Value scaleRows(BlockBuilder &bb, Value acc, Value alpha);

/// The online softmax's state for a block's rows: running max m [Bq],
/// running sum l [Bq], accumulator acc [Bq, Dv].
struct RowState {
  Value m, l, acc;
};

/// One key block's update of `state` from its masked scores [Bq, Bk] and
/// its values [Bk, Dv] (f32): m' = max(m, rowmax(s)), p = exp(s - m'),
/// l' = alpha * l + rowsum(p), acc' = alpha * acc + p @ v; each carried
/// value updated in place.
RowState onlineUpdate(BlockBuilder &bb, Value scores, Value vBlock,
                      RowState state);

/// o = acc / l, 0 on rows that saw no key, narrowed to the element type of
/// `init` ([Bq, Dv]) and written into it.
Value normalizeRows(BlockBuilder &bb, Value acc, Value l, Value init);

/// The backward's first pass over the key blocks, per query row: the
/// running max m, sum l and E = sum exp(s - m) dp ([Bq] each).
struct StatsState {
  Value m, l, e;
};

/// One key block's update of `state` from its masked scores and dp = do
/// v^T ([Bq, Bk] each), each carried value updated in place.
StatsState statsUpdate(BlockBuilder &bb, Value scores, Value dp,
                       StatsState state);

/// lse = m + log l and D = E / l from the first pass's `state` (+inf and 0
/// on rows that see no key).
std::pair<Value, Value> finishStats(BlockBuilder &bb, StatsState state);

/// The probabilities of a block of masked scores: exp(s - lse), 0 where
/// masked. With `keysByRow` the blocks are [Bk, Bq] (as for maskBlock):
/// lse and delta then go along the columns.
Value blockProbs(BlockBuilder &bb, Value scores, Value lse,
                 bool keysByRow = false);

/// ds = p * (dp - D) (through the softcap: times 1 - tanh^2) * scale, 0
/// where masked. `scores` are maskBlock's, of the block at `i0`, `j0` with
/// `off` (tanh is theirs over the cap once the ALiBi bias is added back).
Value blockDs(BlockBuilder &bb, const BlockParams &bp, Value p, Value dp,
              Value delta, Value scores, Value i0, Value j0, Value off,
              bool keysByRow = false);

/// What the block code of head (bi, hi) applies, built at the builder's
/// insertion point (inside the block loop; `s` materialized): the op's
/// params `bp` with k_len (where the op has it; clamped to Sk where keys
/// are padded, Sk itself where the op has none) and the head's ALiBi slope
/// (from slopes [Hq] or [B, Hq], where the op has them), its kv head, and
/// off = k_len - Sq, which aligns the causal diagonal bottom-right.
struct HeadParams {
  BlockParams bp;
  Value kvHead, off;
};
HeadParams headParams(BlockBuilder &bb, BlockParams bp,
                      std::optional<Value> kLen, std::optional<Value> alibi,
                      const AttnShape &s, Value bi, Value hi);

/// flash_attn's params, as the block code applies them.
inline BlockParams paramsOf(FlashAttnView attn) {
  return BlockParams{attn.getSoftmaxScale(), attn.getCausal(),
                     attn.getWindowSizeLeft(), attn.getWindowSizeRight(),
                     attn.getSoftcap(), Value(), Value()};
}

/// In a block loop's body, at the rewriter's insertion point: an
/// scf.forall over the `rows` rows of the block (the GPU forms: a thread per
/// row) whose shared outputs are `inits`, each [rows, ...]. `row(r)` builds
/// row r's part of each, [1, ...], in the loop's body. The rewriter is left
/// after the loop.
scf::ForallOp rowForall(RewriterBase &rewriter, Location loc, int64_t rows,
                        ValueRange inits,
                        function_ref<SmallVector<Value>(Value r)> row);

/// Tiles and vectorizes the block code under `forall`: each contraction in
/// register tiles of `target.m` x regN (regN at most `target.n`; its init
/// computed in the tile, the reduction in steps of kRegK), each other op
/// over a block's rows one row at a time (a few whole vectors per row).
void scheduleBlocks(RewriterBase &rewriter, scf::ForallOp forall,
                    int64_t regN, RegisterTile target);

} // namespace attention
} // namespace fuel
} // namespace mlir

#endif // FUEL_LIB_CODEGEN_ATTENTIONBLOCKS_H
