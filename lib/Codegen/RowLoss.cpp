//===- RowLoss.cpp - The row-loss schedule --------------------------------===//
//
// fused_softmax_cross_entropy: per row of logits x[r, :] with target t[r],
// loss[r] = logsumexp(x[r, :]) - x[r, t[r]] (0 where t[r] is the ignored
// index), then the mean over the rows not ignored, the sum, or the losses
// as they are. One row per scf.forall iteration, each row read twice in
// 16-lane vectors (its max, then the sum of exponentials; a last partial
// vector under a mask), the target's
// logit read once; the [R, V] log-softmax the decomposition materializes
// (and then gathers one element of per row) never exists. The reduction
// over rows is a small linalg op after the loop.
//
// The decomposition reads the gathered logit through a tensor.extract in a
// body, which tile-and-fuse cannot fuse into a row loop, so the schedule
// builds the row loop itself.
//
//===----------------------------------------------------------------------===//

#include "RowLoss.h"

#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fuel;

LogicalResult mlir::fuel::canScheduleRowLoss(FusedOp op,
                                             const ScheduleOptions &options,
                                             std::string &why) {
  FusedSoftmaxCrossEntropyView ce(op);
  auto logits = cast<RankedTensorType>(ce.getLogits().getType());
  int64_t v = logits.getShape().back();
  auto targets = cast<RankedTensorType>(ce.getTargets().getType());
  if (ShapedType::isDynamic(v)) {
    why = "the row-loss schedule needs a static class count";
    return failure();
  }
  // Rows may be dynamic; per-row losses are returned in the targets' shape,
  // and upstream's memref lowering cannot split one dim into several
  // dynamic ones.
  if (ce.getReduction() == Reduction::None && targets.getRank() > 1 &&
      !targets.hasStaticShape()) {
    why = "the row-loss schedule returns per-row losses of dynamic rows "
          "only for one dim of targets";
    return failure();
  }
  if (v < options.vectorWidth) {
    why = "the row-loss schedule needs at least a vector of classes (" +
          std::to_string(options.vectorWidth) + "; got " + std::to_string(v) +
          ")";
    return failure();
  }
  Type elt = logits.getElementType();
  if (!elt.isF32() && !elt.isF16() && !elt.isBF16()) {
    why = "the row-loss schedule handles f32, f16 and bf16 logits";
    return failure();
  }
  return success();
}

Value mlir::fuel::flattenToOneDim(OpBuilder &b, Location loc, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getRank() == 1)
    return v;
  if (type.getRank() == 0)
    return tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({1}, type.getElementType()), v,
        ArrayRef<ReassociationIndices>{});
  ReassociationIndices all;
  for (int64_t d = 0; d < type.getRank(); ++d)
    all.push_back(d);
  return tensor::CollapseShapeOp::create(b, loc, v,
                                         ArrayRef<ReassociationIndices>{all});
}

Value mlir::fuel::logitsAsRows(OpBuilder &b, Location loc, Value logits) {
  auto type = cast<RankedTensorType>(logits.getType());
  int64_t rank = type.getRank();
  if (rank == 2)
    return logits;
  if (rank == 1)
    return tensor::ExpandShapeOp::create(
        b, loc,
        RankedTensorType::get({1, type.getShape().back()},
                              type.getElementType()),
        logits, ArrayRef<ReassociationIndices>{{0, 1}});
  ReassociationIndices lead;
  for (int64_t d = 0; d + 1 < rank; ++d)
    lead.push_back(d);
  return tensor::CollapseShapeOp::create(
      b, loc, logits, ArrayRef<ReassociationIndices>{lead, {rank - 1}});
}

Value mlir::fuel::lossesInTargetsShape(OpBuilder &b, Location loc,
                                       Value perRow,
                                       RankedTensorType targets) {
  auto type = RankedTensorType::get(targets.getShape(),
                                    cast<ShapedType>(perRow.getType())
                                        .getElementType());
  if (targets.getRank() == 1)
    return perRow;
  if (targets.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, type, perRow,
                                           ArrayRef<ReassociationIndices>{});
  ReassociationIndices all;
  for (int64_t d = 0; d < targets.getRank(); ++d)
    all.push_back(d);
  return tensor::ExpandShapeOp::create(b, loc, type, perRow,
                                       ArrayRef<ReassociationIndices>{all});
}

LogicalResult mlir::fuel::buildRowLoss(RewriterBase &rewriter, FusedOp op,
                                       const ScheduleOptions &options) {
  FusedSoftmaxCrossEntropyView ce(op);
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Type f32 = rewriter.getF32Type();
  auto lType = cast<RankedTensorType>(ce.getLogits().getType());
  Type elt = lType.getElementType();
  int64_t width = options.vectorWidth, v = lType.getShape().back();

  // logits as [rows, V], targets as [rows].
  Value logits = logitsAsRows(rewriter, loc, ce.getLogits());
  Value targets = flattenToOneDim(rewriter, loc, ce.getTargets());
  // The number of rows (dynamic when a leading dim is).
  OpFoldResult rows = tensor::getMixedSize(rewriter, loc, logits, 0);
  int64_t ignore = ce.getIgnoreIndex();

  auto index = [&](OpBuilder &b, int64_t x) -> Value {
    return arith::ConstantIndexOp::create(b, loc, x);
  };
  auto lanes = VectorType::get({width}, f32);
  Value losses = tensor::EmptyOp::create(rewriter, loc,
                                         ArrayRef<OpFoldResult>{rows}, f32);
  auto forall = scf::ForallOp::create(
      rewriter, loc, ArrayRef<OpFoldResult>{rows},
      ValueRange{losses}, std::nullopt);
  Block *body = forall.getBody();
  rewriter.setInsertionPointToStart(body);
  Value r = body->getArgument(0), outArg = body->getArgument(1);
  // The lanes past the row (a class count that is not a multiple of the
  // width: its last vector is read under a mask) read as -inf, which adds
  // nothing to the max and exp(-inf) = 0 to the sum.
  Value padE = arith::ConstantOp::create(rewriter, loc, elt,
                                         rewriter.getFloatAttr(elt, -INFINITY));
  auto readRow = [&](OpBuilder &b, Value col, bool inBounds) -> Value {
    Value x = vector::TransferReadOp::create(
        b, loc, VectorType::get({width}, elt), logits, ValueRange{r, col},
        padE, ArrayRef<bool>{inBounds});
    return elt == f32 ? x : arith::ExtFOp::create(b, loc, lanes, x).getResult();
  };
  int64_t whole = v - v % width;
  auto overRow = [&](Value init,
                     function_ref<Value(OpBuilder &, Value, Value)> step) {
    Value acc =
        scf::ForOp::create(
            rewriter, loc, index(rewriter, 0), index(rewriter, whole),
            index(rewriter, width), ValueRange{init},
            [&](OpBuilder &b, Location, Value col, ValueRange acc) {
              scf::YieldOp::create(
                  b, loc, step(b, readRow(b, col, /*inBounds=*/true), acc[0]));
            })
            .getResult(0);
    if (whole == v)
      return acc;
    return step(rewriter,
                readRow(rewriter, index(rewriter, whole), /*inBounds=*/false),
                acc);
  };
  auto splat = [&](double x) -> Value {
    return arith::ConstantOp::create(
        rewriter, loc, lanes,
        DenseElementsAttr::get(lanes, static_cast<float>(x)));
  };
  // m = max_j x[r, j]; l = sum_j exp(x[r, j] - m).
  Value mv = overRow(splat(-INFINITY), [&](OpBuilder &b, Value x, Value acc) {
    return arith::MaximumFOp::create(b, loc, acc, x).getResult();
  });
  Value m = vector::ReductionOp::create(rewriter, loc,
                                        vector::CombiningKind::MAXIMUMF, mv);
  Value mb = vector::BroadcastOp::create(rewriter, loc, lanes, m);
  Value lv = overRow(splat(0.0), [&](OpBuilder &b, Value x, Value acc) {
    Value e = math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, x, mb));
    return arith::AddFOp::create(b, loc, acc, e).getResult();
  });
  Value l = vector::ReductionOp::create(rewriter, loc,
                                        vector::CombiningKind::ADD, lv);
  Value lse = arith::AddFOp::create(rewriter, loc, m,
                                    math::LogOp::create(rewriter, loc, l));
  // The target's logit; 0 loss where the target is ignored.
  Value t = tensor::ExtractOp::create(rewriter, loc, targets, ValueRange{r});
  Value ignored = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::eq, t,
      arith::ConstantOp::create(rewriter, loc, rewriter.getI64Type(),
                                rewriter.getI64IntegerAttr(ignore)));
  Value zeroI = arith::ConstantOp::create(rewriter, loc, rewriter.getI64Type(),
                                          rewriter.getI64IntegerAttr(0));
  Value col = arith::IndexCastOp::create(
      rewriter, loc, rewriter.getIndexType(),
      arith::SelectOp::create(rewriter, loc, ignored, zeroI, t));
  Value xt = tensor::ExtractOp::create(rewriter, loc, logits,
                                       ValueRange{r, col});
  if (elt != f32)
    xt = arith::ExtFOp::create(rewriter, loc, f32, xt);
  Value zeroF = arith::ConstantOp::create(rewriter, loc, f32,
                                          rewriter.getF32FloatAttr(0.0));
  Value loss = arith::SelectOp::create(
      rewriter, loc, ignored, zeroF,
      arith::SubFOp::create(rewriter, loc, lse, xt));
  Value one = tensor::FromElementsOp::create(
      rewriter, loc, RankedTensorType::get({1}, f32), ValueRange{loss});
  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(
      rewriter, loc, one, outArg, ArrayRef<OpFoldResult>{r},
      ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)},
      ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)});
  rewriter.setInsertionPointAfter(forall);
  Value perRow = forall.getResult(0);

  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  Value result;
  if (ce.getReduction() == Reduction::None) {
    result = lossesInTargetsShape(
        rewriter, loc, perRow,
        cast<RankedTensorType>(ce.getTargets().getType()));
  } else {
    // sum_r loss[r], and for the mean / #{r : t[r] != ignore}.
    bool mean = ce.getReduction() == Reduction::Mean;
    auto scalar = RankedTensorType::get({}, f32);
    Value zero = arith::ConstantOp::create(rewriter, loc, f32,
                                           rewriter.getF32FloatAttr(0.0));
    Value acc = linalg::FillOp::create(
                    rewriter, loc, ValueRange{zero},
                    ValueRange{tensor::EmptyOp::create(
                        rewriter, loc, ArrayRef<int64_t>{}, f32)})
                    .getResult(0);
    AffineMap id = rewriter.getMultiDimIdentityMap(1);
    AffineMap toScalar = AffineMap::get(1, 0, {}, rewriter.getContext());
    Value sum = linalg::GenericOp::create(
                    rewriter, loc, scalar, ValueRange{perRow}, ValueRange{acc},
                    ArrayRef<AffineMap>{id, toScalar},
                    ArrayRef<utils::IteratorType>{
                        utils::IteratorType::reduction},
                    [&](OpBuilder &b, Location l, ValueRange args) {
                      linalg::YieldOp::create(
                          b, l,
                          ValueRange{arith::AddFOp::create(b, l, args[0],
                                                           args[1])});
                    })
                    .getResult(0);
    result = sum;
    if (mean) {
      Value count = linalg::GenericOp::create(
                        rewriter, loc, scalar, ValueRange{targets},
                        ValueRange{acc}, ArrayRef<AffineMap>{id, toScalar},
                        ArrayRef<utils::IteratorType>{
                            utils::IteratorType::reduction},
                        [&](OpBuilder &b, Location l, ValueRange args) {
                          Value kept = arith::CmpIOp::create(
                              b, l, arith::CmpIPredicate::ne, args[0],
                              arith::ConstantOp::create(
                                  b, l, b.getI64Type(),
                                  b.getI64IntegerAttr(ignore)));
                          Value oneF = arith::ConstantOp::create(
                              b, l, f32, b.getF32FloatAttr(1.0));
                          Value add = arith::SelectOp::create(
                              b, l, kept, oneF,
                              arith::ConstantOp::create(
                                  b, l, f32, b.getF32FloatAttr(0.0)));
                          linalg::YieldOp::create(
                              b, l,
                              ValueRange{arith::AddFOp::create(b, l, args[1],
                                                               add)});
                        })
                        .getResult(0);
      result = linalg::GenericOp::create(
                   rewriter, loc, scalar, ValueRange{sum, count},
                   ValueRange{tensor::EmptyOp::create(
                       rewriter, loc, ArrayRef<int64_t>{}, f32)},
                   SmallVector<AffineMap>(
                       3, AffineMap::get(0, 0, rewriter.getContext())),
                   ArrayRef<utils::IteratorType>{},
                   [&](OpBuilder &b, Location l, ValueRange args) {
                     linalg::YieldOp::create(
                         b, l,
                         ValueRange{arith::DivFOp::create(b, l, args[0],
                                                          args[1])});
                   })
                   .getResult(0);
    }
  }
  if (result.getType() != resultType)
    result = tensor::CastOp::create(rewriter, loc, resultType, result);
  rewriter.replaceOp(op, result);
  return success();
}
