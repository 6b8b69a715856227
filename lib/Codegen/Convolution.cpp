//===- Convolution.cpp - The convolution schedule -------------------------===//
//
// conv2d (NCHW input, FCHW weight) with stride 1 and one group, as register
// tiles of outer products: y[b, f, oh, ow] = bias[f] + sum over (kh, kw, c)
// of x_pad[b, c, oh + kh, ow + kw] * w[f, c, kh, kw]. For each output row
// (b, oh), a tile of 8 output columns by 32 filters is accumulated in
// registers over the reduction: each step (kh, kw, c) adds the outer product
// of 8 consecutive input pixels of row oh + kh (from column ow + kw) and 32
// consecutive filters' weights. The weight is transposed once to [kh, kw,
// C, F] so that those 32 weights are contiguous, and the input is padded
// once; the tile is transposed in registers and written as 32 rows of 8
// outputs. The loops: an scf.forall over (b, oh, filter tiles, column
// tiles), the reduction as scf.for loops over kh, kw and c carrying the
// accumulator.
//
// The decomposition's single generic over seven loops has an input map with
// sums of dims (oh + kh), which upstream's vectorizer does not turn into
// outer products, so the schedule builds this form itself, in the vector
// dialect on tensors.
//
//===----------------------------------------------------------------------===//

#include "Convolution.h"

#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fuel;

namespace {
/// The register tile: output columns by filters (8 x 32 f32 accumulators
/// are 16 AVX-512 registers).
constexpr int64_t kTileW = 8, kTileF = 32;

struct ConvShape {
  int64_t batch, c, h, w, f, kh, kw, ho, wo, padH, padW;
  int64_t tileF;
};

ConvShape shapeOf(Conv2dView conv) {
  ArrayRef<int64_t> x =
      cast<RankedTensorType>(conv.getX().getType()).getShape();
  ArrayRef<int64_t> w =
      cast<RankedTensorType>(conv.getW().getType()).getShape();
  ArrayRef<int64_t> y =
      cast<RankedTensorType>(conv.getOperation()->getResult(0).getType())
          .getShape();
  std::array<int64_t, 2> pad = conv.getPadding();
  ConvShape s{x[0], x[1], x[2], x[3], w[0], w[2], w[3], y[2], y[3],
              pad[0], pad[1], 0};
  s.tileF = s.f % kTileF == 0 ? kTileF : (s.f % 16 == 0 ? 16 : 0);
  return s;
}
} // namespace

LogicalResult mlir::fuel::canScheduleConvolution(
    FusedOp op, const ScheduleOptions &options, std::string &why) {
  Conv2dView conv(op);
  std::array<int64_t, 2> stride = conv.getStride();
  if (stride[0] != 1 || stride[1] != 1 || conv.getGroups() != 1) {
    why = "the convolution schedule handles stride 1 and one group";
    return failure();
  }
  ConvShape s = shapeOf(conv);
  if (s.wo % kTileW != 0 || !s.tileF) {
    why = "the convolution schedule needs an output width that is a "
          "multiple of " + std::to_string(kTileW) +
          " and filters a multiple of 16 (got " + std::to_string(s.wo) +
          " and " + std::to_string(s.f) + ")";
    return failure();
  }
  for (Type t : op->getOperandTypes()) {
    Type elt = cast<RankedTensorType>(t).getElementType();
    if (!elt.isF32() && !elt.isF16() && !elt.isBF16()) {
      why = "the convolution schedule handles f32, f16 and bf16";
      return failure();
    }
  }
  return success();
}

/// A linalg.generic over all dims of `out` (its shape, f32) reading `in`
/// through `inMap` and widening to f32.
static Value copyWidened(OpBuilder &b, Location loc, Value in, AffineMap inMap,
                         ArrayRef<int64_t> shape) {
  Type f32 = b.getF32Type();
  Value init = tensor::EmptyOp::create(b, loc, shape, f32);
  unsigned rank = shape.size();
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, init.getType(), in, init,
             SmallVector<AffineMap>{inMap,
                                    b.getMultiDimIdentityMap(rank)},
             iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value v = args[0];
               if (v.getType() != f32)
                 v = arith::ExtFOp::create(nb, nl, f32, v);
               linalg::YieldOp::create(nb, nl, v);
             })
      .getResult(0);
}

LogicalResult mlir::fuel::buildConvolution(RewriterBase &rewriter, FusedOp op,
                                           const ScheduleOptions &options) {
  Conv2dView conv(op);
  ConvShape s = shapeOf(conv);
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  MLIRContext *ctx = rewriter.getContext();
  Type f32 = rewriter.getF32Type();
  auto yType = cast<RankedTensorType>(op->getResult(0).getType());
  Type yElt = yType.getElementType();
  auto index = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };

  // The weight as [kh, kw, C, F] and the input padded, both in f32.
  AffineExpr d0, d1, d2, d3;
  bindDims(ctx, d0, d1, d2, d3);
  Value wT = copyWidened(rewriter, loc, conv.getW(),
                         AffineMap::get(4, 0, {d3, d2, d0, d1}, ctx),
                         {s.kh, s.kw, s.c, s.f});
  int64_t hp = s.h + 2 * s.padH, wp = s.w + 2 * s.padW;
  Value xPad = conv.getX();
  if (!cast<RankedTensorType>(xPad.getType()).getElementType().isF32())
    xPad = copyWidened(rewriter, loc, xPad, rewriter.getMultiDimIdentityMap(4),
                       {s.batch, s.c, s.h, s.w});
  if (s.padH || s.padW) {
    Value zero = arith::ConstantOp::create(rewriter, loc, f32,
                                           rewriter.getF32FloatAttr(0.0));
    Value filled = linalg::FillOp::create(
                       rewriter, loc, zero,
                       ValueRange{tensor::EmptyOp::create(
                           rewriter, loc,
                           ArrayRef<int64_t>{s.batch, s.c, hp, wp}, f32)})
                       .getResult(0);
    xPad = tensor::InsertSliceOp::create(
        rewriter, loc, xPad, filled,
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0),
                               rewriter.getIndexAttr(0),
                               rewriter.getIndexAttr(s.padH),
                               rewriter.getIndexAttr(s.padW)},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(s.batch),
                               rewriter.getIndexAttr(s.c),
                               rewriter.getIndexAttr(s.h),
                               rewriter.getIndexAttr(s.w)},
        SmallVector<OpFoldResult>(4, rewriter.getIndexAttr(1)));
  }
  std::optional<Value> bias = conv.getBias();

  Value out = tensor::EmptyOp::create(rewriter, loc, yType.getShape(), yElt);
  SmallVector<OpFoldResult> ubs = {
      rewriter.getIndexAttr(s.batch), rewriter.getIndexAttr(s.ho),
      rewriter.getIndexAttr(s.f / s.tileF),
      rewriter.getIndexAttr(s.wo / kTileW)};
  auto forall =
      scf::ForallOp::create(rewriter, loc, ubs, ValueRange{out}, std::nullopt);
  Block *body = forall.getBody();
  rewriter.setInsertionPointToStart(body);
  Value bi = body->getArgument(0), oh = body->getArgument(1);
  Value f0 = arith::MulIOp::create(rewriter, loc, body->getArgument(2),
                                   index(rewriter, s.tileF));
  Value ow0 = arith::MulIOp::create(rewriter, loc, body->getArgument(3),
                                    index(rewriter, kTileW));
  Value outArg = body->getArgument(4);
  auto accType = VectorType::get({kTileW, s.tileF}, f32);
  Value acc0 = arith::ConstantOp::create(
      rewriter, loc, accType, DenseElementsAttr::get(accType, 0.0f));
  Value pad = arith::ConstantOp::create(rewriter, loc, f32,
                                        rewriter.getF32FloatAttr(0.0));

  // for kh, kw, c: acc += x_pad[b, c, oh + kh, ow0 + kw : +8] (outer)
  //                       w_t[kh, kw, c, f0 : +tileF]
  auto nest = [&](OpBuilder &b, int64_t ub, Value init,
                  function_ref<Value(OpBuilder &, Value, Value)> step) {
    return scf::ForOp::create(
               b, loc, index(b, 0), index(b, ub), index(b, 1), init,
               [&](OpBuilder &nb, Location, Value iv, ValueRange args) {
                 scf::YieldOp::create(nb, loc, step(nb, iv, args[0]));
               })
        .getResult(0);
  };
  Value acc = nest(rewriter, s.kh, acc0, [&](OpBuilder &b1, Value kh,
                                             Value a1) {
    Value row = arith::AddIOp::create(b1, loc, oh, kh);
    return nest(b1, s.kw, a1, [&](OpBuilder &b2, Value kw, Value a2) {
      Value col = arith::AddIOp::create(b2, loc, ow0, kw);
      return nest(b2, s.c, a2, [&](OpBuilder &b3, Value c, Value a3) {
        Value pixels = vector::TransferReadOp::create(
            b3, loc, VectorType::get({kTileW}, f32), xPad,
            ValueRange{bi, c, row, col}, pad, ArrayRef<bool>{true});
        Value weights = vector::TransferReadOp::create(
            b3, loc, VectorType::get({s.tileF}, f32), wT,
            ValueRange{kh, kw, c, f0}, pad, ArrayRef<bool>{true});
        return vector::OuterProductOp::create(b3, loc, accType, pixels,
                                              weights, a3)
            .getResult();
      });
    });
  });
  if (bias) {
    Value bv = vector::TransferReadOp::create(
        rewriter, loc, VectorType::get({s.tileF}, cast<RankedTensorType>(
                                                      bias->getType())
                                                      .getElementType()),
        *bias, ValueRange{f0},
        arith::ConstantOp::create(
            rewriter, loc,
            cast<RankedTensorType>(bias->getType()).getElementType(),
            rewriter.getFloatAttr(
                cast<RankedTensorType>(bias->getType()).getElementType(),
                0.0)),
        ArrayRef<bool>{true});
    if (cast<VectorType>(bv.getType()).getElementType() != f32)
      bv = arith::ExtFOp::create(rewriter, loc,
                                 VectorType::get({s.tileF}, f32), bv);
    acc = arith::AddFOp::create(
        rewriter, loc, acc,
        vector::BroadcastOp::create(rewriter, loc, accType, bv));
  }
  // [columns, filters] -> [filters, columns], rows of y.
  Value tileT = vector::TransposeOp::create(rewriter, loc, acc,
                                            ArrayRef<int64_t>{1, 0});
  if (yElt != f32)
    tileT = arith::TruncFOp::create(
        rewriter, loc, VectorType::get({s.tileF, kTileW}, yElt), tileT);
  Value tile = tensor::EmptyOp::create(
      rewriter, loc, ArrayRef<int64_t>{s.tileF, kTileW}, yElt);
  Value c0 = index(rewriter, 0);
  tile = vector::TransferWriteOp::create(rewriter, loc, tileT, tile,
                                         ValueRange{c0, c0},
                                         ArrayRef<bool>{true, true})
             .getResult();
  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  auto one = rewriter.getIndexAttr(1);
  tensor::ParallelInsertSliceOp::create(
      rewriter, loc, tile, outArg,
      SmallVector<OpFoldResult>{bi, f0, oh, ow0},
      SmallVector<OpFoldResult>{one, rewriter.getIndexAttr(s.tileF), one,
                                rewriter.getIndexAttr(kTileW)},
      SmallVector<OpFoldResult>(4, one));
  rewriter.replaceOp(op, forall.getResults());
  return success();
}
