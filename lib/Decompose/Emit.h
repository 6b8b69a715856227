//===- Emit.h - Helpers for writing decompositions --------------*- C++ -*-===//
//
// Small helpers over OpBuilder for the decompositions written by hand (ops
// whose math needs indexing the recipe primitives do not have: gathers,
// sliding windows, masks by position, scans). They emit the same normal
// form as recipe instantiation: linalg.generic on tensors, reductions over
// linalg.fill, math in f32 for f16/bf16.
//
//===----------------------------------------------------------------------===//

#ifndef FUEL_LIB_DECOMPOSE_EMIT_H
#define FUEL_LIB_DECOMPOSE_EMIT_H

#include "FuelFused/IR/FuelOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/AffineMap.h"

#include <string>

namespace mlir {
namespace fuel {

class Emitter {
public:
  Emitter(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  OpBuilder &b;
  Location loc;

  AffineExpr d(unsigned i) { return b.getAffineDimExpr(i); }
  AffineMap map(unsigned numLoops, ArrayRef<AffineExpr> exprs) {
    return AffineMap::get(numLoops, 0, exprs, b.getContext());
  }
  /// The map of loops [0, n) to the listed loops.
  AffineMap loops(unsigned numLoops, ArrayRef<unsigned> dims);

  Value constF(Type t, double v) {
    return arith::ConstantOp::create(b, loc, t, b.getFloatAttr(t, v));
  }
  Value constIndex(int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  OpFoldResult dim(Value t, int64_t d) {
    return tensor::getMixedSize(b, loc, t, d);
  }
  Value dimValue(Value t, int64_t d) {
    return getValueOrCreateConstantIndexOp(b, loc, dim(t, d));
  }
  Value empty(ArrayRef<OpFoldResult> sizes, Type elt) {
    return tensor::EmptyOp::create(b, loc, sizes, elt);
  }
  Value full(ArrayRef<OpFoldResult> sizes, Type elt, double v) {
    return linalg::FillOp::create(b, loc, constF(elt, v), empty(sizes, elt))
        .getResult(0);
  }

  /// Index arithmetic that folds when both sides are static.
  OpFoldResult add(OpFoldResult a, OpFoldResult c);
  OpFoldResult sub(OpFoldResult a, OpFoldResult c);
  OpFoldResult mul(OpFoldResult a, int64_t c);
  OpFoldResult floorDiv(OpFoldResult a, int64_t c);
  OpFoldResult index(int64_t v) { return b.getIndexAttr(v); }

  using BodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;
  /// A linalg.generic writing `init` (through `outMap`); the iterators are
  /// parallel except those listed in `reductions`.
  Value generic(unsigned numLoops, ArrayRef<std::pair<Value, AffineMap>> ins,
                Value init, AffineMap outMap, ArrayRef<unsigned> reductions,
                BodyFn body);
  /// An elementwise generic over `shapeLike`'s dims (identity maps for
  /// inputs of the same rank).
  Value elementwise(ValueRange ins, Value shapeLike, Type elt, BodyFn body);
  /// c[..., m, n] = sum_k act[..., m, k] * w[n, k] (or w[k, n] when
  /// `weightKN`), accumulated in `ct` from 0.
  Value contractLastDim(Value act, Value w, bool weightKN, Type ct);
  /// `t` with element type `elt` (extf/truncf elementwise), or `t`.
  Value castTo(Value t, Type elt);

  /// The f32 compute type for f16/bf16, else `elt`.
  Type computeType(Type elt) {
    return cast<FloatType>(elt).getWidth() < 32 ? b.getF32Type() : elt;
  }
};

/// The body of a contraction: acc + a * b, for block arguments (a, b, acc).
inline Value multiplyAccumulate(OpBuilder &b, Location loc, ValueRange args) {
  Value p = arith::MulFOp::create(b, loc, args[0], args[1]);
  return arith::AddFOp::create(b, loc, args[2], p);
}

/// Index of loop `i` inside a generic body.
inline Value loopIndex(OpBuilder &b, Location loc, unsigned i) {
  return linalg::IndexOp::create(b, loc, i);
}

/// The static size of dim `d` of a shaped value, if known.
inline std::optional<int64_t> staticDim(Value v, int64_t d) {
  int64_t s = cast<ShapedType>(v.getType()).getDimSize(d);
  if (ShapedType::isDynamic(s))
    return std::nullopt;
  return s;
}

} // namespace fuel
} // namespace mlir

#endif // FUEL_LIB_DECOMPOSE_EMIT_H
