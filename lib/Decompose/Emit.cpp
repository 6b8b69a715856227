//===- Emit.cpp - Helpers for writing decompositions ----------------------===//

#include "Emit.h"

using namespace mlir;
using namespace mlir::fuel;

AffineMap Emitter::loops(unsigned numLoops, ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned i : dims)
    exprs.push_back(d(i));
  return map(numLoops, exprs);
}

Value Emitter::generic(unsigned numLoops,
                       ArrayRef<std::pair<Value, AffineMap>> ins, Value init,
                       AffineMap outMap, ArrayRef<unsigned> reductions,
                       BodyFn body) {
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (auto [v, m] : ins) {
    inputs.push_back(v);
    maps.push_back(m);
  }
  maps.push_back(outMap);
  SmallVector<utils::IteratorType> iters(numLoops,
                                         utils::IteratorType::parallel);
  for (unsigned r : reductions)
    iters[r] = utils::IteratorType::reduction;
  return linalg::GenericOp::create(
             b, loc, init.getType(), inputs, init, maps, iters,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(nb, nloc, body(nb, nloc, args));
             })
      .getResult(0);
}

Value Emitter::elementwise(ValueRange ins, Value shapeLike, Type elt,
                             BodyFn body) {
  auto type = cast<RankedTensorType>(shapeLike.getType());
  unsigned rank = type.getRank();
  SmallVector<std::pair<Value, AffineMap>> inputs;
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, b.getContext());
  for (Value v : ins)
    inputs.push_back({v, id});
  Value init = empty(tensor::getMixedSizes(b, loc, shapeLike), elt);
  return generic(rank, inputs, init, id, {}, body);
}

Value Emitter::castTo(Value t, Type elt) {
  Type from = cast<ShapedType>(t.getType()).getElementType();
  if (from == elt)
    return t;
  return elementwise(
      {t}, t, elt, [&](OpBuilder &nb, Location nloc, ValueRange a) {
        if (cast<FloatType>(elt).getWidth() > cast<FloatType>(from).getWidth())
          return arith::ExtFOp::create(nb, nloc, elt, a[0]).getResult();
        return arith::TruncFOp::create(nb, nloc, elt, a[0]).getResult();
      });
}

OpFoldResult Emitter::add(OpFoldResult a, OpFoldResult c) {
  auto x = getConstantIntValue(a), y = getConstantIntValue(c);
  if (x && y)
    return b.getIndexAttr(*x + *y);
  return arith::AddIOp::create(b, loc,
                               getValueOrCreateConstantIndexOp(b, loc, a),
                               getValueOrCreateConstantIndexOp(b, loc, c))
      .getResult();
}

OpFoldResult Emitter::sub(OpFoldResult a, OpFoldResult c) {
  auto x = getConstantIntValue(a), y = getConstantIntValue(c);
  if (x && y)
    return b.getIndexAttr(*x - *y);
  return arith::SubIOp::create(b, loc,
                               getValueOrCreateConstantIndexOp(b, loc, a),
                               getValueOrCreateConstantIndexOp(b, loc, c))
      .getResult();
}

OpFoldResult Emitter::mul(OpFoldResult a, int64_t c) {
  if (auto x = getConstantIntValue(a))
    return b.getIndexAttr(*x * c);
  return arith::MulIOp::create(
             b, loc, getValueOrCreateConstantIndexOp(b, loc, a), constIndex(c))
      .getResult();
}

OpFoldResult Emitter::floorDiv(OpFoldResult a, int64_t c) {
  if (auto x = getConstantIntValue(a))
    return b.getIndexAttr(llvm::divideFloorSigned(*x, c));
  return arith::FloorDivSIOp::create(
             b, loc, getValueOrCreateConstantIndexOp(b, loc, a), constIndex(c))
      .getResult();
}

Value Emitter::contractLastDim(Value act, Value w, bool weightKN, Type ct) {
  auto at = cast<RankedTensorType>(act.getType());
  unsigned rank = at.getRank(), numLoops = rank + 1; // ..., m, n, k
  SmallVector<unsigned> actDims, outDims;
  for (unsigned i = 0; i + 1 < rank; ++i) {
    actDims.push_back(i);
    outDims.push_back(i);
  }
  actDims.push_back(rank);     // k
  outDims.push_back(rank - 1); // n
  AffineMap wMap = weightKN ? loops(numLoops, {rank, rank - 1})
                            : loops(numLoops, {rank - 1, rank});
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, act);
  sizes.back() = dim(w, weightKN ? 1 : 0);
  return generic(numLoops, {{act, loops(numLoops, actDims)}, {w, wMap}},
                 full(sizes, ct, 0.0), loops(numLoops, outDims), {rank},
                 multiplyAccumulate);
}
