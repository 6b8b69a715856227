//===- DecomposeLoss.cpp - Decompositions: cross-entropy, reduce-max grad -===//

#include "Decompositions.h"
#include "Emit.h"

using namespace mlir;
using namespace mlir::fuel;

/// loss_i = logsumexp(logits_i) - logits_i[t_i] for t_i != ignore_index, else
/// 0; mean divides the sum by the number of non-ignored targets (0 -> NaN).
/// 1. m = max over V; lse = m + log(sum exp(l - m)).
/// 2. per row: valid = t != ignore; picked = l[..., valid ? t : 0] (a gather
///    in the body); loss = valid ? lse - picked : 0, count = valid ? 1 : 0.
/// 3. none: the per-row losses; sum/mean: reduce over every row.
FailureOr<SmallVector<Value>>
decompositions::crossEntropy(OpBuilder *builder, FusedOp op, std::string &why) {
  Value logits = op.getOperandNamed("logits"),
        targets = op.getOperandNamed("targets");
  auto lt = cast<RankedTensorType>(logits.getType());
  if (!builder)
    return SmallVector<Value>();
  Emitter e(*builder, op.getLoc());
  OpBuilder &b = e.b;
  Location loc = e.loc;
  Type ct = lt.getElementType().isF64() ? b.getF64Type() : b.getF32Type();
  unsigned rows = lt.getRank() - 1, n = lt.getRank();
  Value l = e.castTo(logits, ct);
  SmallVector<OpFoldResult> rowSizes = tensor::getMixedSizes(b, loc, targets);
  SmallVector<unsigned> rowDims;
  for (unsigned i = 0; i < rows; ++i)
    rowDims.push_back(i);
  SmallVector<unsigned> all(rowDims);
  all.push_back(rows);
  AffineMap full = e.loops(n, all), row = e.loops(n, rowDims);

  // 1. Log-sum-exp per row.
  Value maxInit = e.full(rowSizes, ct, -INFINITY);
  Value max = e.generic(n, {{l, full}}, maxInit, row, {rows},
                        [](OpBuilder &nb, Location nl, ValueRange a) {
                          return arith::MaximumFOp::create(nb, nl, a[0], a[1])
                              .getResult();
                        });
  Value sumInit = e.full(rowSizes, ct, 0.0);
  Value sum = e.generic(n, {{l, full}, {max, row}}, sumInit, row, {rows},
                        [](OpBuilder &nb, Location nl, ValueRange a) {
                          Value s = arith::SubFOp::create(nb, nl, a[0], a[1]);
                          Value x = math::ExpOp::create(nb, nl, s);
                          return arith::AddFOp::create(nb, nl, a[2], x)
                              .getResult();
                        });
  // 2. Per-row loss and count.
  int64_t ignore = cast<IntegerAttr>(op.getParam("ignore_index")).getInt();
  Value ignoreV = arith::ConstantOp::create(
      b, loc, b.getI64Type(), b.getI64IntegerAttr(ignore));
  Value zero = e.constF(ct, 0.0), one = e.constF(ct, 1.0);
  AffineMap rowId = AffineMap::getMultiDimIdentityMap(rows, b.getContext());
  auto perRow = [&](bool count) {
    Value init = e.empty(rowSizes, ct);
    SmallVector<std::pair<Value, AffineMap>> ins = {{targets, rowId}};
    if (!count) {
      ins.push_back({max, rowId});
      ins.push_back({sum, rowId});
    }
    return e.generic(
        rows, ins, init, rowId, {},
        [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          Value t = a[0];
          Value valid = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ne,
                                              t, ignoreV);
          if (count)
            return arith::SelectOp::create(nb, nl, valid, one, zero);
          Value zeroI = arith::ConstantOp::create(nb, nl, nb.getI64Type(),
                                                  nb.getI64IntegerAttr(0));
          Value safe = arith::SelectOp::create(nb, nl, valid, t, zeroI);
          SmallVector<Value> idx;
          for (unsigned i = 0; i < rows; ++i)
            idx.push_back(loopIndex(nb, nl, i));
          idx.push_back(
              arith::IndexCastOp::create(nb, nl, nb.getIndexType(), safe));
          Value picked = tensor::ExtractOp::create(nb, nl, l, idx);
          Value lse = arith::AddFOp::create(
              nb, nl, a[1], math::LogOp::create(nb, nl, a[2]));
          Value loss = arith::SubFOp::create(nb, nl, lse, picked);
          return arith::SelectOp::create(nb, nl, valid, loss, zero);
        });
  };
  Value loss = perRow(false);
  Type f32 = b.getF32Type();
  auto reduction = cast<ReductionAttr>(op.getParam("reduction")).getValue();
  if (reduction == Reduction::None)
    return SmallVector<Value>{e.castTo(loss, f32)};

  // 3. Reduce every row to a scalar.
  AffineMap toScalar = AffineMap::get(rows, 0, {}, b.getContext());
  SmallVector<unsigned> allRows(rowDims);
  auto total = [&](Value v) {
    Value init = e.full({}, ct, 0.0);
    return e.generic(rows, {{v, rowId}}, init, toScalar, allRows,
                     [](OpBuilder &nb, Location nl, ValueRange a) {
                       return arith::AddFOp::create(nb, nl, a[0], a[1])
                           .getResult();
                     });
  };
  Value lossSum = total(loss);
  if (reduction == Reduction::Mean) {
    Value countSum = total(perRow(true));
    lossSum = e.elementwise({lossSum, countSum}, lossSum, ct,
                            [](OpBuilder &nb, Location nl, ValueRange a) {
                              return arith::DivFOp::create(nb, nl, a[0], a[1])
                                  .getResult();
                            });
  }
  return SmallVector<Value>{e.castTo(lossSum, f32)};
}

/// dx = (x == max) * g / count(x == max) per reduced group; the reduced dims
/// are those where g has size 1 and x does not (known statically).
FailureOr<SmallVector<Value>>
decompositions::reduceMaxToBackward(OpBuilder *builder, FusedOp op,
                                    std::string &why) {
  Value x = op.getOperandNamed("x"), g = op.getOperandNamed("g");
  auto xt = cast<RankedTensorType>(x.getType());
  auto gt = cast<RankedTensorType>(g.getType());
  unsigned n = xt.getRank();
  SmallVector<unsigned> kept, reduced;
  for (unsigned i = 0; i < n; ++i) {
    int64_t gs = gt.getDimSize(i), xs = xt.getDimSize(i);
    if (ShapedType::isDynamic(gs) || (gs == 1 && ShapedType::isDynamic(xs))) {
      why = "which dims are reduced must be known statically (dim " +
            std::to_string(i) + " is dynamic)";
      return failure();
    }
    (gs == 1 && xs != 1 ? reduced : kept).push_back(i);
  }
  if (!builder)
    return SmallVector<Value>();
  Emitter e(*builder, op.getLoc());
  OpBuilder &b = e.b;
  Location loc = e.loc;
  Type ct = e.computeType(xt.getElementType());
  Value xf = e.castTo(x, ct), gf = e.castTo(g, ct);
  // Loops over all of x's dims; the group value lives on g's shape, with
  // its reduced dims at index 0.
  SmallVector<AffineExpr> groupExprs;
  for (unsigned i = 0; i < n; ++i)
    groupExprs.push_back(llvm::is_contained(reduced, i)
                             ? b.getAffineConstantExpr(0)
                             : e.d(i));
  AffineMap groupMap = e.map(n, groupExprs);
  AffineMap id = AffineMap::getMultiDimIdentityMap(n, b.getContext());
  SmallVector<OpFoldResult> gSizes = tensor::getMixedSizes(b, loc, gf);
  Value max = e.generic(n, {{xf, id}}, e.full(gSizes, ct, -INFINITY), groupMap,
                        reduced, [](OpBuilder &nb, Location nl, ValueRange a) {
                          return arith::MaximumFOp::create(nb, nl, a[0], a[1])
                              .getResult();
                        });
  Value zero = e.constF(ct, 0.0), one = e.constF(ct, 1.0);
  Value count = e.generic(
      n, {{xf, id}, {max, groupMap}}, e.full(gSizes, ct, 0.0), groupMap,
      reduced, [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value eq = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                         a[0], a[1]);
        Value c = arith::SelectOp::create(nb, nl, eq, one, zero);
        return arith::AddFOp::create(nb, nl, a[2], c).getResult();
      });
  Value init = e.empty(tensor::getMixedSizes(b, loc, xf), ct);
  Value dx = e.generic(
      n, {{xf, id}, {max, groupMap}, {count, groupMap}, {gf, groupMap}}, init,
      id, {}, [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value eq = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                         a[0], a[1]);
        Value share = arith::DivFOp::create(nb, nl, a[3], a[2]);
        return arith::SelectOp::create(nb, nl, eq, share, zero).getResult();
      });
  return SmallVector<Value>{e.castTo(dx, xt.getElementType())};
}
