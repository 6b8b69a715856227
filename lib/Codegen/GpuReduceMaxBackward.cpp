//===- GpuReduceMaxBackward.cpp - reduce_max_to_backward on a GPU ---------===//
//
// reduce_max_to_backward (dx = (x == max) * g / count(x == max) per group
// of x that g reduces to one element) on a GPU where x's last dim is
// reduced but the row-wise schedule does not take the op (g reduces more
// dims than the last, or the rows are not a multiple of a warp long; see
// GpuSchedules.cpp), so that a group's elements are rows of x: a block per
// group (an scf.forall on `#gpu.block<x>` over g's elements), the group's
// elements over the block's T threads (thread t takes t, t + T, ... in the
// group's row-major order, so a warp reads consecutive elements of the last
// dim); the group's max, then the count of elements equal to it, each a
// `gpu.all_reduce` of the threads' partials (GpuBlockLoops.h); each block
// writes its max and g / count. Then one elementwise kernel over x writes
// dx = x == max ? g / count : 0, a thread per element.
//
// The decomposition reduces each group serially in one thread (a thread
// per group, in two of its five kernels; one thread for a reduction over
// all of x). With the last dim kept the groups' elements are strided in
// memory and the decomposition's thread per group reads consecutive
// groups: this schedule declines, and the op lowers as decomposed.
//
//===----------------------------------------------------------------------===//

#include "GpuBlockLoops.h"
#include "GpuSchedules.h"

#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fuel;

namespace {
/// x's dims split into those g keeps and those it reduces (static).
struct Groups {
  SmallVector<int64_t> keptDims, reducedDims;
  int64_t count = 1, size = 1;

  static Groups of(ReduceMaxToBackwardView rm) {
    auto xt = cast<RankedTensorType>(rm.getX().getType());
    auto gt = cast<RankedTensorType>(rm.getG().getType());
    Groups groups;
    for (int64_t i = 0; i < xt.getRank(); ++i) {
      if (gt.getDimSize(i) == 1 && xt.getDimSize(i) != 1) {
        groups.reducedDims.push_back(i);
        groups.size *= xt.getDimSize(i);
      } else {
        groups.keptDims.push_back(i);
        groups.count *= xt.getDimSize(i);
      }
    }
    return groups;
  }
};

} // namespace

LogicalResult mlir::fuel::canScheduleGpuReduceMaxBackward(
    FusedOp op, const GpuScheduleOptions &options, std::string &why) {
  ReduceMaxToBackwardView rm(op);
  if (!hasF32OrHalfTensors(op)) {
    why = "the GPU schedule of reduce_max_to_backward handles f32, f16 "
            "and bf16";
    return failure();
  }
  Groups groups = Groups::of(rm);
  int64_t last = cast<RankedTensorType>(rm.getX().getType()).getRank() - 1;
  if (!llvm::is_contained(groups.reducedDims, last)) {
    why = "x's last dim is not reduced (the decomposition's thread per "
          "group reads consecutive groups)";
    return failure();
  }
  if (groups.count > std::numeric_limits<int32_t>::max()) {
    why = "more groups than the grid's x holds";
    return failure();
  }
  return success();
}

LogicalResult mlir::fuel::buildGpuReduceMaxBackward(
    RewriterBase &rewriter, FusedOp op, const GpuScheduleOptions &options) {
  ReduceMaxToBackwardView rm(op);
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value x = rm.getX(), g = rm.getG();
  auto xt = cast<RankedTensorType>(x.getType());
  auto gt = cast<RankedTensorType>(g.getType());
  auto dxType = cast<RankedTensorType>(op->getResult(0).getType());
  Type f32 = rewriter.getF32Type();
  Groups groups = Groups::of(rm);
  SmallVector<int64_t> keptSizes, reducedSizes;
  for (int64_t d : groups.keptDims)
    keptSizes.push_back(xt.getDimSize(d));
  for (int64_t d : groups.reducedDims)
    reducedSizes.push_back(xt.getDimSize(d));
  auto widen = [&](OpBuilder &b, Value v) -> Value {
    return v.getType() == f32 ? v : arith::ExtFOp::create(b, loc, f32, v);
  };

  // Per group: its max, and g / count(x == max).
  BlockLoops build(rewriter, loc);
  int64_t threads = threadsFor(groups.size, options.maxThreads);
  SmallVector<Value> perGroup = build.perBlock(
      groups.count, 2, [&](Value group) -> SmallVector<Value> {
        SmallVector<Value> kept = delinearize(rewriter, loc, group, keptSizes);
        // The group's element j of x, and g's element.
        auto at = [&](OpBuilder &b, Value j) {
          SmallVector<Value> reduced =
              delinearize(b, loc, j, reducedSizes);
          SmallVector<Value> indices(xt.getRank());
          for (auto [d, i] : llvm::zip(groups.keptDims, kept))
            indices[d] = i;
          for (auto [d, i] : llvm::zip(groups.reducedDims, reduced))
            indices[d] = i;
          return indices;
        };
        auto element = [&](OpBuilder &b, Value j) -> Value {
          return widen(b, tensor::ExtractOp::create(b, loc, x, at(b, j)));
        };
        return build.onEveryThread(
            threads, 2, [&](Value t) -> SmallVector<Value> {
              Value max = build.blockReduce(
                  t, threads, groups.size, -INFINITY,
                  gpu::AllReduceOperation::MAXIMUMF,
                  [&](OpBuilder &b, Value j, Value acc) -> Value {
                    return arith::MaximumFOp::create(b, loc, acc,
                                                     element(b, j));
                  });
              Value count = build.blockReduce(
                  t, threads, groups.size, 0.0, gpu::AllReduceOperation::ADD,
                  [&](OpBuilder &b, Value j, Value acc) -> Value {
                    Value hit = arith::CmpFOp::create(
                        b, loc, arith::CmpFPredicate::OEQ, element(b, j), max);
                    return arith::AddFOp::create(
                        b, loc, acc, arith::UIToFPOp::create(b, loc, f32, hit));
                  });
              // g at the group: x's indices, 0 where g reduces.
              SmallVector<Value> gAt(gt.getRank(),
                                     build.index(0));
              for (auto [d, i] : llvm::zip(groups.keptDims, kept))
                gAt[d] = i;
              Value gv = widen(
                  rewriter, tensor::ExtractOp::create(rewriter, loc, g, gAt));
              return {max,
                      arith::DivFOp::create(rewriter, loc, gv, count)};
            });
      });

  // dx = x == max ? scale : 0, elementwise over x, the group's values read
  // through g's shape.
  auto asG = [&](Value v) -> Value {
    auto type = RankedTensorType::get(gt.getShape(), f32);
    if (v.getType() == type)
      return v;
    ReassociationIndices all;
    for (int64_t i = 0; i < gt.getRank(); ++i)
      all.push_back(i);
    return tensor::ExpandShapeOp::create(rewriter, loc, type, v,
                                         ArrayRef<ReassociationIndices>{all});
  };
  Value max = asG(perGroup[0]), scale = asG(perGroup[1]);
  MLIRContext *ctx = rewriter.getContext();
  unsigned rank = xt.getRank();
  SmallVector<AffineExpr> groupExprs;
  for (unsigned i = 0; i < rank; ++i)
    groupExprs.push_back(llvm::is_contained(groups.reducedDims, i)
                             ? getAffineConstantExpr(0, ctx)
                             : getAffineDimExpr(i, ctx));
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap groupMap = AffineMap::get(rank, 0, groupExprs, ctx);
  Value init = tensor::EmptyOp::create(rewriter, loc, dxType.getShape(),
                                       dxType.getElementType());
  auto dx = linalg::GenericOp::create(
      rewriter, loc, TypeRange{dxType}, ValueRange{x, max, scale},
      ValueRange{init}, ArrayRef<AffineMap>{id, groupMap, groupMap, id},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &b, Location, ValueRange args) {
        Value hit = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                          widen(b, args[0]), args[1]);
        Value v = arith::SelectOp::create(b, loc, hit, args[2],
                                          arith::ConstantOp::create(
                                              b, loc, f32,
                                              b.getF32FloatAttr(0.0f)));
        if (v.getType() != dxType.getElementType())
          v = arith::TruncFOp::create(b, loc, dxType.getElementType(), v);
        linalg::YieldOp::create(b, loc, v);
      });
  rewriter.replaceOp(op, dx->getResults());
  return success();
}
