//===- GpuRowLoss.cpp - The row-loss schedule on a GPU --------------------===//
//
// fused_softmax_cross_entropy on a GPU: a block per row of logits (an
// scf.forall on `#gpu.block<x>`), the row split over the block's T threads
// (an scf.forall on `#gpu.thread<x>`): thread t reads classes t, t + T,
// t + 2T, ... (a warp's loads are consecutive), keeps its partial max, then
// its partial sum of exp(x - max), each combined across the block by
// `gpu.all_reduce`; every thread then has the row's log-sum-exp and reads
// the target's logit. The [R, V] log-softmax the decomposition materializes
// never exists, and each row is read twice (the second time from cache).
// Thread 0's loss leaves the thread loop through workgroup memory (a slot
// per thread) and is stored by the block. The sum or the mean over the rows
// is a second kernel of one block whose threads reduce rows t, t + T, ...
// the same way (with the count of rows whose target is not ignored).
//
// As on the CPU (RowLoss.cpp), the schedule builds these loops itself: the
// decomposition's gather from the log-softmax (a tensor.extract in a body)
// does not fuse into a row loop.
//
//===----------------------------------------------------------------------===//

#include "GpuBlockLoops.h"
#include "GpuSchedules.h"
#include "RowLoss.h"

#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fuel;

LogicalResult mlir::fuel::canScheduleGpuRowLoss(
    FusedOp op, const GpuScheduleOptions &options, std::string &why) {
  FusedSoftmaxCrossEntropyView ce(op);
  Type elt = cast<RankedTensorType>(ce.getLogits().getType()).getElementType();
  if (!elt.isF32() && !elt.isF16() && !elt.isBF16()) {
    why = "the GPU row-loss schedule handles f32, f16 and bf16 logits";
    return failure();
  }
  return success();
}


LogicalResult mlir::fuel::buildGpuRowLoss(RewriterBase &rewriter, FusedOp op,
                                          const GpuScheduleOptions &options) {
  FusedSoftmaxCrossEntropyView ce(op);
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  BlockLoops build(rewriter, loc);
  Type f32 = rewriter.getF32Type(), i64 = rewriter.getI64Type();
  Value logits = logitsAsRows(rewriter, loc, ce.getLogits());
  Value targets = flattenToOneDim(rewriter, loc, ce.getTargets());
  auto lType = cast<RankedTensorType>(logits.getType());
  int64_t rows = lType.getDimSize(0), v = lType.getDimSize(1);
  Type elt = lType.getElementType();
  int64_t ignore = ce.getIgnoreIndex();
  auto i64Constant = [&](OpBuilder &b, int64_t x) -> Value {
    return arith::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(x));
  };
  auto logit = [&](OpBuilder &b, Value r, Value j) -> Value {
    Value x = tensor::ExtractOp::create(b, loc, logits, ValueRange{r, j});
    return elt == f32 ? x : arith::ExtFOp::create(b, loc, f32, x).getResult();
  };

  // loss[r] = logsumexp(x[r, :]) - x[r, t[r]], 0 where t[r] is ignored.
  int64_t threads = threadsFor(v, options.maxThreads);
  Value perRow = build.perBlock(rows, [&](Value r) {
    return build.onEveryThread(threads, [&](Value t) {
      Value m = build.blockReduce(
          t, threads, v, -INFINITY, gpu::AllReduceOperation::MAXIMUMF,
          [&](OpBuilder &b, Value j, Value acc) -> Value {
            return arith::MaximumFOp::create(b, loc, acc, logit(b, r, j));
          });
      Value l = build.blockReduce(
          t, threads, v, 0.0, gpu::AllReduceOperation::ADD,
          [&](OpBuilder &b, Value j, Value acc) -> Value {
            Value e = math::ExpOp::create(
                b, loc, arith::SubFOp::create(b, loc, logit(b, r, j), m));
            return arith::AddFOp::create(b, loc, acc, e);
          });
      Value lse = arith::AddFOp::create(rewriter, loc, m,
                                        math::LogOp::create(rewriter, loc, l));
      Value target =
          tensor::ExtractOp::create(rewriter, loc, targets, ValueRange{r});
      Value ignored =
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                target, i64Constant(rewriter, ignore));
      Value col = arith::IndexCastOp::create(
          rewriter, loc, rewriter.getIndexType(),
          arith::SelectOp::create(rewriter, loc, ignored,
                                  i64Constant(rewriter, 0), target));
      return arith::SelectOp::create(
                 rewriter, loc, ignored, build.f32Constant(0.0),
                 arith::SubFOp::create(rewriter, loc, lse,
                                       logit(rewriter, r, col)))
          .getResult();
    });
  });

  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  Value result;
  if (ce.getReduction() == Reduction::None) {
    result = lossesInTargetsShape(
        rewriter, loc, perRow,
        cast<RankedTensorType>(ce.getTargets().getType()));
  } else {
    // One block: sum_r loss[r], and for the mean / #{r : t[r] != ignore}.
    bool mean = ce.getReduction() == Reduction::Mean;
    int64_t sumThreads = threadsFor(rows, options.maxThreads);
    Value total = build.perBlock(1, [&](Value) {
      return build.onEveryThread(sumThreads, [&](Value t) {
        Value sum = build.blockReduce(
            t, sumThreads, rows, 0.0, gpu::AllReduceOperation::ADD,
            [&](OpBuilder &b, Value j, Value acc) -> Value {
              Value loss = tensor::ExtractOp::create(b, loc, perRow,
                                                     ValueRange{j});
              return arith::AddFOp::create(b, loc, acc, loss);
            });
        if (!mean)
          return sum;
        Value count = build.blockReduce(
            t, sumThreads, rows, 0.0, gpu::AllReduceOperation::ADD,
            [&](OpBuilder &b, Value j, Value acc) -> Value {
              Value target =
                  tensor::ExtractOp::create(b, loc, targets, ValueRange{j});
              Value kept = arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::ne, target,
                  i64Constant(b, ignore));
              Value one = arith::UIToFPOp::create(b, loc, f32, kept);
              return arith::AddFOp::create(b, loc, acc, one);
            });
        return arith::DivFOp::create(rewriter, loc, sum, count).getResult();
      });
    });
    result = tensor::CollapseShapeOp::create(
        rewriter, loc, RankedTensorType::get({}, f32), total,
        ArrayRef<ReassociationIndices>{});
  }
  if (result.getType() != resultType)
    result = tensor::CastOp::create(rewriter, loc, resultType, result);
  rewriter.replaceOp(op, result);
  return success();
}
