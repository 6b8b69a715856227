//===- DecomposeReduceMax.cpp - Decompositions: reduce-max gradient ------===//

#include "Decompositions.h"
#include "Emit.h"

#include "FuelFused/IR/FusedOpViews.h"

using namespace mlir;
using namespace mlir::fuel;

/// The dims of x that g reduces: those where g has size 1 and x does not,
/// known statically; fails (with `why`) when a dim is dynamic.
static FailureOr<SmallVector<unsigned>>
getReducedDims(ReduceMaxToBackwardView rm, std::string &why) {
  auto xt = cast<RankedTensorType>(rm.getX().getType());
  auto gt = cast<RankedTensorType>(rm.getG().getType());
  SmallVector<unsigned> reduced;
  for (unsigned i = 0, n = xt.getRank(); i < n; ++i) {
    int64_t gs = gt.getDimSize(i), xs = xt.getDimSize(i);
    if (ShapedType::isDynamic(gs) || (gs == 1 && ShapedType::isDynamic(xs))) {
      why = "which dims are reduced must be known statically (dim " +
            std::to_string(i) + " is dynamic)";
      return failure();
    }
    if (gs == 1 && xs != 1)
      reduced.push_back(i);
  }
  return reduced;
}

LogicalResult decompositions::checkReduceMaxToBackward(FusedOp op,
                                                       std::string &why) {
  return getReducedDims(ReduceMaxToBackwardView(op), why);
}

/// dx = (x == max) * g / count(x == max) per reduced group.
SmallVector<Value>
decompositions::buildReduceMaxToBackward(OpBuilder &builder, FusedOp op) {
  ReduceMaxToBackwardView rm(op);
  Value x = rm.getX(), g = rm.getG();
  auto xt = cast<RankedTensorType>(x.getType());
  unsigned n = xt.getRank();
  std::string why;
  SmallVector<unsigned> reduced = *getReducedDims(rm, why);
  Emitter e(builder, op.getLoc());
  OpBuilder &b = e.b;
  Location loc = e.loc;
  Type ct = e.computeType(xt.getElementType());
  Value xf = e.castTo(x, ct), gf = e.castTo(g, ct);
  // Loops over all of x's dims. g is read on its own shape, its reduced
  // dims at index 0; the groups' max and count live on the kept dims alone
  // (each reduction's result a projection of the loops, as tiling wants).
  SmallVector<AffineExpr> groupExprs, keptExprs;
  SmallVector<OpFoldResult> keptSizes;
  SmallVector<OpFoldResult> gSizes = tensor::getMixedSizes(b, loc, gf);
  for (unsigned i = 0; i < n; ++i) {
    bool isReduced = llvm::is_contained(reduced, i);
    groupExprs.push_back(isReduced ? b.getAffineConstantExpr(0) : e.d(i));
    if (!isReduced) {
      keptExprs.push_back(e.d(i));
      keptSizes.push_back(gSizes[i]);
    }
  }
  AffineMap groupMap = e.map(n, groupExprs), keptMap = e.map(n, keptExprs);
  AffineMap id = AffineMap::getMultiDimIdentityMap(n, b.getContext());
  Value max = e.generic(n, {{xf, id}}, e.full(keptSizes, ct, -INFINITY),
                        keptMap, reduced,
                        [](OpBuilder &nb, Location nl, ValueRange a) {
                          return arith::MaximumFOp::create(nb, nl, a[0], a[1])
                              .getResult();
                        });
  Value zero = e.constF(ct, 0.0), one = e.constF(ct, 1.0);
  Value count = e.generic(
      n, {{xf, id}, {max, keptMap}}, e.full(keptSizes, ct, 0.0), keptMap,
      reduced, [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value eq = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                         a[0], a[1]);
        Value c = arith::SelectOp::create(nb, nl, eq, one, zero);
        return arith::AddFOp::create(nb, nl, a[2], c).getResult();
      });
  Value init = e.empty(tensor::getMixedSizes(b, loc, xf), ct);
  Value dx = e.generic(
      n, {{xf, id}, {max, keptMap}, {count, keptMap}, {gf, groupMap}}, init,
      id, {}, [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value eq = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                         a[0], a[1]);
        Value share = arith::DivFOp::create(nb, nl, a[3], a[2]);
        return arith::SelectOp::create(nb, nl, eq, share, zero).getResult();
      });
  return SmallVector<Value>{e.castTo(dx, xt.getElementType())};
}
