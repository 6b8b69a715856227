//===- DecomposeQuant.cpp - Decompositions: quantized matmuls -------------===//
//
// Each quantized matmul dequantizes its weight into a dense [N, K] (or
// [K, N]) tensor with one generic that unpacks the bits of each element,
// then contracts it with the activations in f32 (f16/bf16 activations are
// extended first and the result truncated back).
//
//===----------------------------------------------------------------------===//

#include "Decompositions.h"
#include "Emit.h"

#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::fuel;

/// The 4-bit field `shift` bits up in an integer (as i32).
static Value nibble(OpBuilder &b, Location loc, Value word, Value shift) {
  Value w = word;
  if (w.getType().getIntOrFloatBitWidth() < 32)
    w = arith::ExtUIOp::create(b, loc, b.getI32Type(), w);
  Value s = arith::ShRUIOp::create(b, loc, w, shift);
  Value mask = arith::ConstantOp::create(b, loc, b.getI32Type(),
                                         b.getI32IntegerAttr(15));
  return arith::AndIOp::create(b, loc, s, mask);
}

static Value indexToI32(OpBuilder &b, Location loc, Value i) {
  return arith::IndexCastOp::create(b, loc, b.getI32Type(), i);
}

/// W[n, k] = NF4[code(n, k)] * absmax[n, k / block_size], code in the high
/// nibble of byte w_packed[n, k / 2] for even k, the low one for odd k.
LogicalResult decompositions::checkNf4Matmul(FusedOp, std::string &) {
  return success(); // Every verified op.
}

SmallVector<Value> decompositions::buildNf4Matmul(OpBuilder &builder,
                                                  FusedOp op) {
  Nf4MatmulView nf4(op);
  Value act = nf4.getAct(), packed = nf4.getWPacked(),
        absmax = nf4.getAbsmax();
  Emitter e(builder, op.getLoc());
  OpBuilder &b = e.b;
  Type elt = cast<ShapedType>(act.getType()).getElementType();
  Type ct = e.computeType(elt);
  int64_t bs = nf4.getBlockSize();
  auto tableType = RankedTensorType::get({16}, b.getF32Type());
  Value table = arith::ConstantOp::create(
      b, e.loc, DenseElementsAttr::get(tableType, getNf4CodeBook()));
  SmallVector<OpFoldResult> wSizes = {
      e.dim(packed, 0),
      e.dim(act, cast<ShapedType>(act.getType()).getRank() - 1)};
  // Loops: n, k.
  Value w = e.generic(
      2, {{packed, e.map(2, {e.d(0), e.d(1).floorDiv(2)})},
          {absmax, e.map(2, {e.d(0), e.d(1).floorDiv(bs)})}},
      e.empty(wSizes, ct), e.loops(2, {0, 1}), {},
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value k = indexToI32(nb, nl, loopIndex(nb, nl, 1));
        Value one = arith::ConstantOp::create(nb, nl, nb.getI32Type(),
                                              nb.getI32IntegerAttr(1));
        Value odd = arith::AndIOp::create(nb, nl, k, one);
        // shift = (1 - odd) * 4
        Value four = arith::ConstantOp::create(nb, nl, nb.getI32Type(),
                                               nb.getI32IntegerAttr(4));
        Value shift = arith::MulIOp::create(
            nb, nl, arith::SubIOp::create(nb, nl, one, odd), four);
        Value code = nibble(nb, nl, a[0], shift);
        Value idx = arith::IndexCastOp::create(nb, nl, nb.getIndexType(), code);
        Value v = tensor::ExtractOp::create(nb, nl, table, ValueRange{idx});
        Value scale = a[1];
        Value x = arith::MulFOp::create(nb, nl, v, scale);
        if (ct != x.getType())
          x = arith::ExtFOp::create(nb, nl, ct, x);
        return x;
      });
  Value c = e.contractLastDim(e.castTo(act, ct), w, /*weightKN=*/false, ct);
  return SmallVector<Value>{e.castTo(c, elt)};
}

/// AutoAWQ GEMM: column n of a packed row is nibble inv[n % 8] of word
/// n / 8, inv = [0, 4, 1, 5, 2, 6, 3, 7] (the inverse of the pack order
/// [0, 2, 4, 6, 1, 3, 5, 7]); W[k, n] = (q - z) * scales[k / g, n].
LogicalResult decompositions::checkAwqMatmul(FusedOp, std::string &) {
  return success(); // Every verified op.
}

SmallVector<Value> decompositions::buildAwqMatmul(OpBuilder &builder,
                                                  FusedOp op) {
  AwqMatmulView awq(op);
  Value act = awq.getAct(), qweight = awq.getQweight(),
        qzeros = awq.getQzeros(), scales = awq.getScales();
  Emitter e(builder, op.getLoc());
  Type elt = cast<ShapedType>(act.getType()).getElementType();
  Type ct = e.computeType(elt);
  int64_t g = awq.getGroupSize();
  Value sf = e.castTo(scales, ct);
  SmallVector<OpFoldResult> wSizes = {e.dim(qweight, 0), e.dim(sf, 1)};
  // Loops: k, n.
  Value w = e.generic(
      2, {{qweight, e.map(2, {e.d(0), e.d(1).floorDiv(8)})},
          {qzeros, e.map(2, {e.d(0).floorDiv(g), e.d(1).floorDiv(8)})},
          {sf, e.map(2, {e.d(0).floorDiv(g), e.d(1)})}},
      e.empty(wSizes, ct), e.loops(2, {0, 1}), {},
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        auto i32 = [&](int64_t v) {
          return arith::ConstantOp::create(nb, nl, nb.getI32Type(),
                                           nb.getI32IntegerAttr(v))
              .getResult();
        };
        Value n = indexToI32(nb, nl, loopIndex(nb, nl, 1));
        Value j = arith::AndIOp::create(nb, nl, n, i32(7));
        // inv[j] = (j & 1) * 4 + (j >> 1); shift = 4 * inv[j].
        Value inv = arith::AddIOp::create(
            nb, nl,
            arith::MulIOp::create(nb, nl,
                                  arith::AndIOp::create(nb, nl, j, i32(1)),
                                  i32(4)),
            arith::ShRUIOp::create(nb, nl, j, i32(1)));
        Value shift = arith::MulIOp::create(nb, nl, inv, i32(4));
        Value q = nibble(nb, nl, a[0], shift);
        Value z = nibble(nb, nl, a[1], shift);
        Value diff = arith::SubIOp::create(nb, nl, q, z);
        Value f = arith::SIToFPOp::create(nb, nl, ct, diff);
        return arith::MulFOp::create(nb, nl, f, a[2]);
      });
  Value c = e.contractLastDim(e.castTo(act, ct), w, /*weightKN=*/true, ct);
  return SmallVector<Value>{e.castTo(c, elt)};
}
