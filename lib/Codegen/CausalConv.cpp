//===- CausalConv.cpp - The convolution schedule of causal_conv1d --------===//
//
// causal_conv1d, a depthwise convolution along time: y[b, c, t] = bias[c] +
// sum_j w[c, 0, j] * x[b, c, t + j], then SiLU if use_silu. Each channel of
// each batch is one scf.forall iteration; along time, each vector of
// `vectorWidth` outputs starts from the bias and adds the K shifted input
// vectors times their weights (read once per channel), applies SiLU, and is
// written once. A length that is not a multiple of the width ends with one
// vector read and written under a mask. f16 and bf16 compute in f32, as the
// decomposition does.
//
// The decomposition is one generic whose input map has a sum of dims
// (t + j), which upstream's vectorizer does not vectorize, so the schedule
// builds this form itself, in the vector dialect on tensors.
//
//===----------------------------------------------------------------------===//

#include "Convolution.h"

#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fuel;

LogicalResult mlir::fuel::canScheduleCausalConv1d(
    FusedOp op, const ScheduleOptions &options, std::string &why) {
  CausalConv1dView conv(op);
  for (Type t : op->getOperandTypes()) {
    Type elt = cast<RankedTensorType>(t).getElementType();
    if (!elt.isF32() && !elt.isF16() && !elt.isBF16()) {
      why = "the convolution schedule handles f32, f16 and bf16";
      return failure();
    }
  }
  // The batch and the length may be dynamic; channels and the kernel not.
  auto x = cast<RankedTensorType>(conv.getX().getType());
  if (x.isDynamicDim(1) || !cast<RankedTensorType>(conv.getW().getType())
                                .hasStaticShape()) {
    why = "the convolution schedule needs static channels and kernel";
    return failure();
  }
  auto y = cast<RankedTensorType>(op->getResult(0).getType());
  if (llvm::is_contained(y.getShape(), 0)) {
    why = "the convolution schedule needs a result that is not empty";
    return failure();
  }
  return success();
}

LogicalResult mlir::fuel::buildCausalConv1d(RewriterBase &rewriter,
                                            FusedOp op,
                                            const ScheduleOptions &options) {
  CausalConv1dView conv(op);
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value x = conv.getX(), w = conv.getW(), bias = conv.getBias();
  auto yType = cast<RankedTensorType>(op->getResult(0).getType());
  int64_t channels = yType.getShape()[1], staticLength = yType.getShape()[2];
  int64_t k = cast<RankedTensorType>(w.getType()).getShape()[2];
  // The batch and the length (x's minus K - 1), static or dynamic.
  OpFoldResult batches = tensor::getMixedSize(rewriter, loc, x, 0);
  OpFoldResult length =
      ShapedType::isDynamic(staticLength)
          ? OpFoldResult(arith::SubIOp::create(
                             rewriter, loc,
                             tensor::DimOp::create(rewriter, loc, x, 2),
                             arith::ConstantIndexOp::create(rewriter, loc,
                                                            k - 1))
                             .getResult())
          : OpFoldResult(rewriter.getIndexAttr(staticLength));
  int64_t width = options.vectorWidth;
  Type f32 = rewriter.getF32Type();
  auto lanes = VectorType::get({width}, f32);
  auto index = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto widen = [&](OpBuilder &b, Value v) -> Value {
    Type elt = getElementTypeOrSelf(v.getType());
    if (elt == f32)
      return v;
    Type to = isa<VectorType>(v.getType()) ? Type(lanes) : f32;
    return arith::ExtFOp::create(b, loc, to, v);
  };

  OpFoldResult channelCount = rewriter.getIndexAttr(channels);
  Value empty = tensor::EmptyOp::create(
      rewriter, loc, ArrayRef<OpFoldResult>{batches, channelCount, length},
      yType.getElementType());
  auto forall = scf::ForallOp::create(
      rewriter, loc, ArrayRef<OpFoldResult>{batches, channelCount},
      ValueRange{empty}, std::nullopt);
  Block *body = forall.getBody();
  rewriter.setInsertionPointToStart(body);
  Value b = body->getArgument(0), c = body->getArgument(1);
  Value out = body->getArgument(2);

  // The channel's bias and weights, once, as vectors of lanes.
  Value biasLanes = vector::BroadcastOp::create(
      rewriter, loc, lanes,
      widen(rewriter, tensor::ExtractOp::create(rewriter, loc, bias,
                                                ValueRange{c})));
  SmallVector<Value> weights;
  for (int64_t j = 0; j < k; ++j)
    weights.push_back(vector::BroadcastOp::create(
        rewriter, loc, lanes,
        widen(rewriter,
              tensor::ExtractOp::create(
                  rewriter, loc, w,
                  ValueRange{c, index(rewriter, 0), index(rewriter, j)}))));

  // The channel's row of the result, written vector by vector.
  auto rowType =
      RankedTensorType::get({staticLength}, yType.getElementType());
  OpFoldResult unit = rewriter.getIndexAttr(1);
  SmallVector<OpFoldResult> rowAt = {b, c, rewriter.getIndexAttr(0)};
  SmallVector<OpFoldResult> rowSizes = {unit, unit, length};
  SmallVector<OpFoldResult> unitStrides(3, unit);
  Value row = tensor::ExtractSliceOp::create(rewriter, loc, rowType, out, rowAt,
                                             rowSizes, unitStrides);
  Type xElt = cast<RankedTensorType>(x.getType()).getElementType();
  Value padX = arith::ConstantOp::create(rewriter, loc, xElt,
                                         rewriter.getFloatAttr(xElt, 0.0));
  Value one = arith::ConstantOp::create(
      rewriter, loc, lanes, DenseElementsAttr::get(lanes, 1.0f));
  // The outputs from `t` on: one vector, under a mask past the row when
  // not `inBounds`.
  // The lanes from `from` on of a row of `size`, as a mask. (Masks, not
  // transfers that may run out of bounds: upstream lowers those through a
  // memref.dim after memrefs are lowered, which a dynamic length leaves.)
  auto lanesBefore = [&](OpBuilder &nb, Value size, Value from) -> Value {
    return vector::CreateMaskOp::create(
        nb, loc, VectorType::get({width}, nb.getI1Type()),
        ValueRange{arith::SubIOp::create(nb, loc, size, from)});
  };
  Value xLength = getValueOrCreateConstantIndexOp(
      rewriter, loc, tensor::getMixedSize(rewriter, loc, x, 2));
  Value yLength = getValueOrCreateConstantIndexOp(rewriter, loc, length);
  AffineMap alongTime =
      AffineMap::getMinorIdentityMap(3, 1, rewriter.getContext());
  auto step = [&](OpBuilder &nb, Value t, Value into, bool inBounds) {
    Value acc = biasLanes;
    ArrayAttr inBoundsAttr = nb.getBoolArrayAttr({true});
    for (int64_t j = 0; j < k; ++j) {
      Value at = arith::AddIOp::create(nb, loc, t, index(nb, j));
      Value mask = inBounds ? Value() : lanesBefore(nb, xLength, at);
      Value in = vector::TransferReadOp::create(
          nb, loc, VectorType::get({width}, xElt), x, ValueRange{b, c, at},
          alongTime, padX, mask, inBoundsAttr);
      acc = math::FmaOp::create(nb, loc, widen(nb, in), weights[j], acc);
    }
    if (conv.getUseSilu()) {
      // SiLU(y) = y / (1 + exp(-y)), as the decomposition computes it.
      Value e = math::ExpOp::create(nb, loc,
                                    arith::NegFOp::create(nb, loc, acc));
      acc = arith::DivFOp::create(nb, loc, acc,
                                  arith::AddFOp::create(nb, loc, one, e));
    }
    Type yElt = yType.getElementType();
    if (yElt != f32)
      acc = arith::TruncFOp::create(
          nb, loc, VectorType::get({width}, yElt), acc);
    Value mask = inBounds ? Value() : lanesBefore(nb, yLength, t);
    return vector::TransferWriteOp::create(
               nb, loc, into.getType(), acc, into, ValueRange{t},
               AffineMap::getMultiDimIdentityMap(1, nb.getContext()), mask,
               inBoundsAttr)
        .getResult();
  };
  // Whole vectors, then the rest under a mask.
  if (!ShapedType::isDynamic(staticLength)) {
    int64_t whole = staticLength - staticLength % width;
    row = scf::ForOp::create(
              rewriter, loc, index(rewriter, 0), index(rewriter, whole),
              index(rewriter, width), ValueRange{row},
              [&](OpBuilder &nb, Location, Value t, ValueRange iter) {
                scf::YieldOp::create(nb, loc,
                                     step(nb, t, iter[0], /*inBounds=*/true));
              })
              .getResult(0);
    if (whole != staticLength)
      row = step(rewriter, index(rewriter, whole), row, /*inBounds=*/false);
  } else {
    Value n = yLength;
    Value whole = arith::SubIOp::create(
        rewriter, loc, n,
        arith::RemUIOp::create(rewriter, loc, n, index(rewriter, width)));
    row = scf::ForOp::create(
              rewriter, loc, index(rewriter, 0), whole, index(rewriter, width),
              ValueRange{row},
              [&](OpBuilder &nb, Location, Value t, ValueRange iter) {
                scf::YieldOp::create(nb, loc,
                                     step(nb, t, iter[0], /*inBounds=*/true));
              })
              .getResult(0);
    Value rest = arith::CmpIOp::create(rewriter, loc,
                                       arith::CmpIPredicate::ult, whole, n);
    Value full = row;
    row = scf::IfOp::create(
              rewriter, loc, rest,
              [&](OpBuilder &nb, Location) {
                scf::YieldOp::create(
                    nb, loc, step(nb, whole, full, /*inBounds=*/false));
              },
              [&](OpBuilder &nb, Location) {
                scf::YieldOp::create(nb, loc, full);
              })
              .getResult(0);
  }

  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(rewriter, loc, row, out, rowAt,
                                        rowSizes, unitStrides);
  rewriter.replaceOp(op, forall->getResults());
  return success();
}
