//===- DecomposeGgml.cpp - Decomposition: GGML quantized matmul -----------===//
//
// qmatmul: C = A @ dequant(W)^T with W the little-endian GGML block stream
// of N rows of K values in u32 words. Each weight element (n, k) is decoded
// where it is used: its block is n * (K / QK) + k / QK, at byte offset
// block * block_bytes; a byte is read from its word, f16 fields from two
// bytes. The per-type formulas are llama.cpp's (ggml-quants.c), written per
// element.
//
//===----------------------------------------------------------------------===//

#include "Decompositions.h"
#include "Emit.h"

#include "FuelFused/IR/FusedOpViews.h"

using namespace mlir;
using namespace mlir::fuel;

namespace {

/// Integer and byte helpers inside the dequantization body.
struct Decoder {
  OpBuilder &b;
  Location loc;
  Value stream; ///< tensor<?xi32> of words.
  Value base;   ///< index: the block's first byte.
  Value e;      ///< index: the element's position in its block.

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value i32(int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32Type(),
                                     b.getI32IntegerAttr(v));
  }
  Value addI(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mulI(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value divI(Value x, int64_t c) {
    return arith::DivUIOp::create(b, loc, x, idx(c));
  }
  Value remI(Value x, int64_t c) {
    return arith::RemUIOp::create(b, loc, x, idx(c));
  }
  Value shr(Value x, Value s) { return arith::ShRUIOp::create(b, loc, x, s); }
  Value shl(Value x, Value s) { return arith::ShLIOp::create(b, loc, x, s); }
  Value band(Value x, int64_t m) {
    return arith::AndIOp::create(b, loc, x, i32(m));
  }
  Value bor(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value toI32(Value index) {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), index);
  }
  Value toF32(Value i) {
    return arith::SIToFPOp::create(b, loc, b.getF32Type(), i);
  }

  /// The byte at `offset` (index) from the block start, as i32 in [0, 255].
  Value byteAt(Value offset) {
    Value o = addI(base, offset);
    Value word =
        tensor::ExtractOp::create(b, loc, stream, ValueRange{divI(o, 4)});
    Value shift = mulI(toI32(remI(o, 4)), i32(8));
    return band(shr(word, shift), 255);
  }
  Value byteAt(int64_t offset) { return byteAt(idx(offset)); }
  /// A signed byte.
  Value sbyteAt(Value offset) {
    Value v = byteAt(offset);
    Value t = arith::TruncIOp::create(b, loc, b.getI8Type(), v);
    return arith::ExtSIOp::create(b, loc, b.getI32Type(), t);
  }
  /// The f16 at `offset`, as f32.
  Value halfAt(int64_t offset) {
    Value lo = byteAt(offset), hi = byteAt(offset + 1);
    Value bits = bor(lo, shl(hi, i32(8)));
    Value h = arith::TruncIOp::create(b, loc, b.getI16Type(), bits);
    Value f = arith::BitcastOp::create(b, loc, b.getF16Type(), h);
    return arith::ExtFOp::create(b, loc, b.getF32Type(), f);
  }
  /// A 2-bit, 4-bit... field: (byte >> (width * sel)) & mask, sel an index.
  Value field(Value byte, Value sel, int64_t width, int64_t mask) {
    Value s = mulI(toI32(sel), i32(width));
    return band(shr(byte, s), mask);
  }
  Value mulF(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value subF(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value addF(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }

  /// Q4_K/Q5_K 6-bit scale and min of sub-block j (index, 0..7); the 12
  /// scale bytes start at `at`.
  std::pair<Value, Value> scaleMinK4(Value j, int64_t at) {
    // j < 4: sc = s[j] & 63, m = s[j + 4] & 63; else
    // sc = (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4),
    // m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4).
    Value low = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, j,
                                      idx(4));
    Value jm4 = arith::SelectOp::create(
        b, loc, low, j, arith::SubIOp::create(b, loc, j, idx(4)));
    Value sj = byteAt(addI(idx(at), j));
    Value sj4 = byteAt(addI(idx(at + 4), j));
    Value sjm4 = byteAt(addI(idx(at), jm4));
    Value scLow = band(sj, 63), mLow = band(sj4, 63);
    Value scHigh = bor(band(sj4, 15), shl(shr(sjm4, i32(6)), i32(4)));
    Value mHigh = bor(shr(sj4, i32(4)), shl(shr(sj, i32(6)), i32(4)));
    return {arith::SelectOp::create(b, loc, low, scLow, scHigh),
            arith::SelectOp::create(b, loc, low, mLow, mHigh)};
  }

  /// The dequantized value of element e of a block of `type`.
  Value decode(QuantType type);
};

Value Decoder::decode(QuantType type) {
  Value j16 = remI(e, 16), hi16 = divI(e, 16);
  switch (type) {
  case QuantType::Q4_0:
  case QuantType::Q4_1: {
    // Low nibbles are elements 0..15, high nibbles 16..31.
    bool hasMin = type == QuantType::Q4_1;
    Value q = field(byteAt(addI(idx(hasMin ? 4 : 2), j16)), hi16, 4, 15);
    Value d = halfAt(0);
    if (hasMin)
      return addF(mulF(toF32(q), d), halfAt(2));
    return mulF(toF32(arith::SubIOp::create(b, loc, q, i32(8))), d);
  }
  case QuantType::Q5_0:
  case QuantType::Q5_1: {
    bool hasMin = type == QuantType::Q5_1;
    int64_t qh = hasMin ? 4 : 2, qs = qh + 4;
    Value q = field(byteAt(addI(idx(qs), j16)), hi16, 4, 15);
    // The fifth bit of element e is bit e of the little-endian u32 qh.
    Value hb = field(byteAt(addI(idx(qh), divI(e, 8))), remI(e, 8), 1, 1);
    q = bor(q, shl(hb, i32(4)));
    Value d = halfAt(0);
    if (hasMin)
      return addF(mulF(toF32(q), d), halfAt(2));
    return mulF(toF32(arith::SubIOp::create(b, loc, q, i32(16))), d);
  }
  case QuantType::Q8_0:
  case QuantType::Q8_1: {
    int64_t qs = type == QuantType::Q8_0 ? 2 : 4;
    return mulF(toF32(sbyteAt(addI(idx(qs), e))), halfAt(0));
  }
  case QuantType::Q2_K: {
    // scales[16] @0, qs[64] @16, d @80, dmin @82; element e = half * 128 +
    // s * 32 + l takes bits 2s of qs[half * 32 + l].
    Value half = divI(e, 128), s = divI(remI(e, 128), 32), l = remI(e, 32);
    Value q =
        field(byteAt(addI(idx(16), addI(mulI(half, idx(32)), l))), s, 2, 3);
    Value sc = byteAt(hi16);
    Value dl = mulF(halfAt(80), toF32(band(sc, 15)));
    Value ml = mulF(halfAt(82), toF32(shr(sc, i32(4))));
    return subF(mulF(dl, toF32(q)), ml);
  }
  case QuantType::Q3_K: {
    // hmask[32] @0, qs[64] @32, scales[12] @96, d @108.
    Value half = divI(e, 128), s = divI(remI(e, 128), 32), l = remI(e, 32);
    Value ql =
        field(byteAt(addI(idx(32), addI(mulI(half, idx(32)), l))), s, 2, 3);
    Value qh = field(byteAt(l), divI(e, 32), 1, 1);
    // q = ql - 4 when the mask bit is clear.
    Value q = arith::SubIOp::create(
        b, loc, ql, shl(arith::XOrIOp::create(b, loc, qh, i32(1)), i32(2)));
    Value g = hi16;
    Value lsc = field(byteAt(addI(idx(96), remI(g, 8))), divI(g, 8), 4, 15);
    Value hsc = field(byteAt(addI(idx(104), remI(g, 4))), divI(g, 4), 2, 3);
    Value sc = arith::SubIOp::create(b, loc, bor(lsc, shl(hsc, i32(4))),
                                     i32(32));
    return mulF(mulF(halfAt(108), toF32(sc)), toF32(q));
  }
  case QuantType::Q4_K:
  case QuantType::Q5_K: {
    // d @0, dmin @2, scales[12] @4, (Q5_K: qh[32] @16,) qs @16 or @48;
    // element e = c * 64 + s * 32 + l takes nibble s of qs[c * 32 + l].
    bool five = type == QuantType::Q5_K;
    Value c = divI(e, 64), s = divI(remI(e, 64), 32), l = remI(e, 32);
    Value q = field(
        byteAt(addI(idx(five ? 48 : 16), addI(mulI(c, idx(32)), l))), s, 4, 15);
    if (five) {
      Value qh = field(byteAt(addI(idx(16), l)), divI(e, 32), 1, 1);
      q = bor(q, shl(qh, i32(4)));
    }
    auto [sc, mn] = scaleMinK4(divI(e, 32), 4);
    Value d = mulF(halfAt(0), toF32(sc)), dm = mulF(halfAt(2), toF32(mn));
    return subF(mulF(d, toF32(q)), dm);
  }
  case QuantType::Q6_K: {
    // ql[128] @0, qh[64] @128, scales[16] (int8) @192, d @208;
    // e = half * 128 + s * 64 + m: nibble s of ql[half * 64 + m];
    // e = half * 128 + t * 32 + l: bits 2t of qh[half * 32 + l].
    Value half = divI(e, 128), r = remI(e, 128);
    Value ql = field(byteAt(addI(mulI(half, idx(64)), remI(r, 64))),
                     divI(r, 64), 4, 15);
    Value qh =
        field(byteAt(addI(idx(128), addI(mulI(half, idx(32)), remI(r, 32)))),
              divI(r, 32), 2, 3);
    Value q = arith::SubIOp::create(b, loc, bor(ql, shl(qh, i32(4))), i32(32));
    Value sc = sbyteAt(addI(idx(192), hi16));
    return mulF(mulF(halfAt(208), toF32(sc)), toF32(q));
  }
  }
  llvm_unreachable("unknown quant type");
}

} // namespace

LogicalResult decompositions::checkQmatmul(FusedOp, std::string &) {
  return success(); // Every verified op.
}

SmallVector<Value> decompositions::buildQmatmul(OpBuilder &builder,
                                                FusedOp op) {
  QmatmulView qm(op);
  Value a = qm.getA(), wq = qm.getWQ();
  Emitter e(builder, op.getLoc());
  OpBuilder &b = e.b;
  Type elt = cast<ShapedType>(a.getType()).getElementType();
  Type ct = e.computeType(elt);
  QuantType type = qm.getQuantType();
  int64_t k = qm.getK();
  int64_t n = qm.getN();
  auto [qk, bytes] = getQuantBlockGeometry(type);
  // 1. W[n, k], decoded element by element; loops (n, k).
  SmallVector<OpFoldResult> wSizes = {b.getIndexAttr(n), b.getIndexAttr(k)};
  Value w = e.generic(
      2, {}, e.empty(wSizes, b.getF32Type()), e.loops(2, {0, 1}), {},
      [&](OpBuilder &nb, Location nl, ValueRange) -> Value {
        Decoder d{nb, nl, wq, Value(), Value()};
        Value row = loopIndex(nb, nl, 0), col = loopIndex(nb, nl, 1);
        Value block = d.addI(d.mulI(row, d.idx(k / qk)), d.divI(col, qk));
        d.base = d.mulI(block, d.idx(bytes));
        d.e = d.remI(col, qk);
        return d.decode(type);
      });
  if (ct != b.getF32Type())
    w = e.castTo(w, ct);
  // 2. C[..., m, n] = sum_k A[..., m, k] * W[n, k].
  Value c = e.contractLastDim(e.castTo(a, ct), w, /*weightKN=*/false, ct);
  return SmallVector<Value>{e.castTo(c, elt)};
}
