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
#include "GpuBlockLoops.h"
#include "GpuSchedules.h"

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

namespace {
/// The arithmetic of causal_conv1d for channel `c` of batch `b`, a vector
/// of `width` consecutive outputs at a time: the channel's bias and
/// weights, read once (at the insertion point at construction) and
/// broadcast to vectors, and `compute`, the outputs from time t.
class ChannelVectors {
public:
  ChannelVectors(RewriterBase &rewriter, Location loc, CausalConv1dView conv,
                 Value b, Value c, int64_t width)
      : conv(conv), loc(loc), b(b), c(c), width(width),
        f32(rewriter.getF32Type()), lanes(VectorType::get({width}, f32)) {
    Value x = conv.getX(), w = conv.getW();
    k = cast<RankedTensorType>(w.getType()).getShape()[2];
    biasLanes = vector::BroadcastOp::create(
        rewriter, loc, lanes,
        widen(rewriter, tensor::ExtractOp::create(rewriter, loc,
                                                  conv.getBias(),
                                                  ValueRange{c})));
    for (int64_t j = 0; j < k; ++j)
      weights.push_back(vector::BroadcastOp::create(
          rewriter, loc, lanes,
          widen(rewriter,
                tensor::ExtractOp::create(
                    rewriter, loc, w,
                    ValueRange{c, index(rewriter, 0), index(rewriter, j)}))));
    xElt = cast<RankedTensorType>(x.getType()).getElementType();
    padX = arith::ConstantOp::create(rewriter, loc, xElt,
                                     rewriter.getFloatAttr(xElt, 0.0));
    one = arith::ConstantOp::create(rewriter, loc, lanes,
                                    DenseElementsAttr::get(lanes, 1.0f));
    xLength = getValueOrCreateConstantIndexOp(
        rewriter, loc, tensor::getMixedSize(rewriter, loc, x, 2));
  }

  Value index(OpBuilder &nb, int64_t v) const {
    return arith::ConstantIndexOp::create(nb, loc, v);
  }

  /// The lanes from `from` on of a row of `size`, as a mask. (Masks, not
  /// transfers that may run out of bounds: upstream lowers those through a
  /// memref.dim after memrefs are lowered, which a dynamic length leaves.)
  Value lanesBefore(OpBuilder &nb, Value size, Value from) const {
    return vector::CreateMaskOp::create(
        nb, loc, VectorType::get({width}, nb.getI1Type()),
        ValueRange{arith::SubIOp::create(nb, loc, size, from)});
  }

  /// y[b, c, t : t + width] in the element type `yElt`: the bias plus the
  /// K shifted input vectors times their weights, then SiLU if use_silu.
  /// With `masked`, x's lanes past its length read as zero.
  Value compute(OpBuilder &nb, Value t, bool masked, Type yElt) const {
    Value acc = biasLanes;
    ArrayAttr inBoundsAttr = nb.getBoolArrayAttr({true});
    AffineMap alongTime = AffineMap::getMinorIdentityMap(3, 1, nb.getContext());
    for (int64_t j = 0; j < k; ++j) {
      Value at = arith::AddIOp::create(nb, loc, t, index(nb, j));
      Value mask = masked ? lanesBefore(nb, xLength, at) : Value();
      Value in = vector::TransferReadOp::create(
          nb, loc, VectorType::get({width}, xElt), conv.getX(),
          ValueRange{b, c, at}, alongTime, padX, mask, inBoundsAttr);
      acc = math::FmaOp::create(nb, loc, widen(nb, in), weights[j], acc);
    }
    if (conv.getUseSilu()) {
      // SiLU(y) = y / (1 + exp(-y)), as the decomposition computes it.
      Value e = math::ExpOp::create(nb, loc,
                                    arith::NegFOp::create(nb, loc, acc));
      acc = arith::DivFOp::create(nb, loc, acc,
                                  arith::AddFOp::create(nb, loc, one, e));
    }
    if (yElt != f32)
      acc = arith::TruncFOp::create(nb, loc, VectorType::get({width}, yElt),
                                    acc);
    return acc;
  }

private:
  /// `v` (a scalar or vector of lanes) in f32.
  Value widen(OpBuilder &nb, Value v) const {
    if (getElementTypeOrSelf(v.getType()) == f32)
      return v;
    Type to = isa<VectorType>(v.getType()) ? Type(lanes) : f32;
    return arith::ExtFOp::create(nb, loc, to, v);
  }

  CausalConv1dView conv;
  Location loc;
  Value b, c;
  int64_t width, k;
  Type f32, xElt;
  VectorType lanes;
  Value biasLanes, padX, one, xLength;
  SmallVector<Value> weights;
};
} // namespace

LogicalResult mlir::fuel::buildCausalConv1d(RewriterBase &rewriter,
                                            FusedOp op,
                                            const ScheduleOptions &options) {
  CausalConv1dView conv(op);
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value x = conv.getX();
  auto yType = cast<RankedTensorType>(op->getResult(0).getType());
  Type yElt = yType.getElementType();
  int64_t channels = yType.getShape()[1], staticLength = yType.getShape()[2];
  int64_t k = cast<RankedTensorType>(conv.getW().getType()).getShape()[2];
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
  auto index = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };

  OpFoldResult channelCount = rewriter.getIndexAttr(channels);
  Value empty = tensor::EmptyOp::create(
      rewriter, loc, ArrayRef<OpFoldResult>{batches, channelCount, length},
      yElt);
  auto forall = scf::ForallOp::create(
      rewriter, loc, ArrayRef<OpFoldResult>{batches, channelCount},
      ValueRange{empty}, std::nullopt);
  Block *body = forall.getBody();
  rewriter.setInsertionPointToStart(body);
  Value b = body->getArgument(0), c = body->getArgument(1);
  Value out = body->getArgument(2);
  ChannelVectors channel(rewriter, loc, conv, b, c, width);

  // The channel's row of the result, written vector by vector.
  auto rowType = RankedTensorType::get({staticLength}, yElt);
  OpFoldResult unit = rewriter.getIndexAttr(1);
  SmallVector<OpFoldResult> rowAt = {b, c, rewriter.getIndexAttr(0)};
  SmallVector<OpFoldResult> rowSizes = {unit, unit, length};
  SmallVector<OpFoldResult> unitStrides(3, unit);
  Value row = tensor::ExtractSliceOp::create(rewriter, loc, rowType, out, rowAt,
                                             rowSizes, unitStrides);
  Value yLength = getValueOrCreateConstantIndexOp(rewriter, loc, length);
  // The outputs from `t` on: one vector, under a mask past the row when
  // not `inBounds`.
  auto step = [&](OpBuilder &nb, Value t, Value into, bool inBounds) {
    Value acc = channel.compute(nb, t, /*masked=*/!inBounds, yElt);
    Value mask = inBounds ? Value() : channel.lanesBefore(nb, yLength, t);
    return vector::TransferWriteOp::create(
               nb, loc, into.getType(), acc, into, ValueRange{t},
               AffineMap::getMultiDimIdentityMap(1, nb.getContext()), mask,
               nb.getBoolArrayAttr({true}))
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

void mlir::fuel::buildGpuCausalConv1d(RewriterBase &rewriter, FusedOp op,
                                      int64_t maxThreads, int64_t width) {
  CausalConv1dView conv(op);
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto yType = cast<RankedTensorType>(op->getResult(0).getType());
  Type yElt = yType.getElementType();
  ArrayRef<int64_t> y = yType.getShape();
  // A stretch of time a block: `threads` vectors of `width` outputs (the
  // threads a power of two from a warp, no more than the row needs); the
  // row padded to whole stretches, the outputs past it computed from zeros
  // and dropped.
  int64_t vectors = (y[2] + width - 1) / width;
  int64_t threads = threadsFor(vectors, maxThreads);
  int64_t stretch = threads * width;
  int64_t padded = (y[2] + stretch - 1) / stretch * stretch;
  auto index = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto attr = [&](int64_t v) -> OpFoldResult {
    return rewriter.getIndexAttr(v);
  };
  Value empty = tensor::EmptyOp::create(
      rewriter, loc, ArrayRef<int64_t>{y[0], y[1], padded}, yElt);
  auto blocks = scf::ForallOp::create(
      rewriter, loc,
      ArrayRef<OpFoldResult>{attr(y[0]), attr(y[1]), attr(padded / stretch)},
      ValueRange{empty}, std::nullopt);
  Block *body = blocks.getBody();
  rewriter.setInsertionPointToStart(body);
  Value b = body->getArgument(0), c = body->getArgument(1);
  Value t0 = arith::MulIOp::create(rewriter, loc, body->getArgument(2),
                                   index(rewriter, stretch));
  ChannelVectors channel(rewriter, loc, conv, b, c, width);
  SmallVector<OpFoldResult> blockAt = {b, c, t0};
  SmallVector<OpFoldResult> blockSizes = {attr(1), attr(1), attr(stretch)};
  SmallVector<OpFoldResult> strides(3, attr(1));
  Value part = tensor::ExtractSliceOp::create(
      rewriter, loc, RankedTensorType::get({stretch}, yElt),
      body->getArgument(3), blockAt, blockSizes, strides);
  auto perThread = scf::ForallOp::create(
      rewriter, loc, ArrayRef<OpFoldResult>{attr(threads)}, ValueRange{part},
      std::nullopt);
  {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(blocks.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(rewriter, loc,
                                          perThread.getResult(0),
                                          body->getArgument(3), blockAt,
                                          blockSizes, strides);
  }
  Block *threadBody = perThread.getBody();
  rewriter.setInsertionPointToStart(threadBody);
  Value at = arith::MulIOp::create(rewriter, loc, threadBody->getArgument(0),
                                   index(rewriter, width));
  Value t = arith::AddIOp::create(rewriter, loc, t0, at);
  // x's lanes past its end (only in a padded row's last stretch) read zero.
  Value acc = channel.compute(rewriter, t, /*masked=*/padded != y[2], yElt);
  Value zero = index(rewriter, 0);
  Value vec = vector::TransferWriteOp::create(
                  rewriter, loc, acc,
                  tensor::EmptyOp::create(rewriter, loc,
                                          ArrayRef<int64_t>{width}, yElt),
                  ValueRange{zero}, ArrayRef<bool>{true})
                  .getResult();
  rewriter.setInsertionPointToStart(perThread.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(
      rewriter, loc, vec, threadBody->getArgument(1),
      ArrayRef<OpFoldResult>{at}, ArrayRef<OpFoldResult>{attr(width)},
      ArrayRef<OpFoldResult>{attr(1)});
  mapForall(rewriter, blocks, /*threads=*/false);
  mapForall(rewriter, perThread, /*threads=*/true);
  rewriter.setInsertionPointAfter(blocks);
  Value result = blocks.getResult(0);
  if (padded != y[2])
    result = tensor::ExtractSliceOp::create(
        rewriter, loc, yType, result,
        ArrayRef<OpFoldResult>{attr(0), attr(0), attr(0)},
        ArrayRef<OpFoldResult>{attr(y[0]), attr(y[1]), attr(y[2])},
        ArrayRef<OpFoldResult>{attr(1), attr(1), attr(1)});
  rewriter.replaceOp(op, result);
}
