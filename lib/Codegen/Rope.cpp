//===- Rope.cpp - The rotary schedule (rope) ------------------------------===//
//
// rope (y = x * cos + rotate_half(x) * sin) on the CPU: x as rows of D (its
// leading dims and S flattened), a row per iteration of an scf.forall, and
// in each row the pairs (p, p + D/2) in vectors of up to `vectorWidth`:
// both halves of x and the four table vectors at the row's position
// (row % S) read once,
//   y[p]       = x[p] * cos[s, p] - x[p + D/2] * sin[s, p]
//   y[p + D/2] = x[p + D/2] * cos[s, p + D/2] + x[p] * sin[s, p + D/2]
// written once. f16 and bf16 compute in f32. The decomposition is four
// loop nests or more (the halves sliced, one negated, joined, the products
// summed), each reading and writing x-sized tensors.
//
//===----------------------------------------------------------------------===//

#include "Rope.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <numeric>

using namespace mlir;
using namespace mlir::fuel;

rope::RowsShape rope::RowsShape::of(RopeView rope) {
  auto x = cast<RankedTensorType>(rope.getX().getType());
  RowsShape shape;
  shape.d = x.getShape().back();
  shape.s = x.getShape()[x.getRank() - 2];
  shape.rows = x.getNumElements() / shape.d;
  shape.half = shape.d / 2;
  return shape;
}

/// The reassociation of a rank-`rank` tensor's dims into [rows, D].
static SmallVector<ReassociationIndices> rowsOf(int64_t rank) {
  ReassociationIndices leading;
  for (int64_t i = 0; i + 1 < rank; ++i)
    leading.push_back(i);
  return {leading, {rank - 1}};
}

Value rope::asRows(OpBuilder &b, Location loc, Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  if (type.getRank() == 2)
    return x;
  return tensor::CollapseShapeOp::create(b, loc, x, rowsOf(type.getRank()));
}

Value rope::fromRows(OpBuilder &b, Location loc, Value rows,
                     RankedTensorType type) {
  if (type.getRank() == 2)
    return rows;
  return tensor::ExpandShapeOp::create(b, loc, type, rows,
                                       rowsOf(type.getRank()));
}

std::pair<Value, Value> rope::rotate(OpBuilder &b, Location loc, Value lo,
                                     Value hi, Value cosLo, Value sinLo,
                                     Value cosHi, Value sinHi) {
  Value first = arith::SubFOp::create(
      b, loc, arith::MulFOp::create(b, loc, lo, cosLo),
      arith::MulFOp::create(b, loc, hi, sinLo));
  Value second = arith::AddFOp::create(
      b, loc, arith::MulFOp::create(b, loc, hi, cosHi),
      arith::MulFOp::create(b, loc, lo, sinHi));
  return {first, second};
}

LogicalResult mlir::fuel::canScheduleRope(FusedOp op,
                                          const ScheduleOptions &options,
                                          std::string &why) {
  for (Type t : llvm::concat<Type>(op->getOperandTypes(),
                                   op->getResultTypes())) {
    auto tensor = cast<RankedTensorType>(t);
    Type elt = tensor.getElementType();
    if (!elt.isF32() && !elt.isF16() && !elt.isBF16()) {
      why = "the rotary schedule handles f32, f16 and bf16";
      return failure();
    }
    if (!tensor.hasStaticShape()) {
      why = "the rotary schedule needs static shapes";
      return failure();
    }
  }
  return success();
}

LogicalResult mlir::fuel::buildRope(RewriterBase &rewriter, FusedOp op,
                                    const ScheduleOptions &options) {
  RopeView view(op);
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  rope::RowsShape shape = rope::RowsShape::of(view);
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());
  Type elt = outType.getElementType(), f32 = rewriter.getF32Type();
  // Pairs a step: the largest power of two up to the vector width that
  // divides the half row.
  int64_t width = 1;
  while (width * 2 <= options.vectorWidth && shape.half % (width * 2) == 0)
    width *= 2;
  auto lanes = [&](Type t) { return VectorType::get({width}, t); };
  Value x = rope::asRows(rewriter, loc, view.getX());
  Value cos = view.getCos(), sin = view.getSin();
  auto index = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto read = [&](OpBuilder &b, Value from, Value i, Value j) -> Value {
    Type from_elt = cast<RankedTensorType>(from.getType()).getElementType();
    Value pad = arith::ConstantOp::create(b, loc, from_elt,
                                          b.getFloatAttr(from_elt, 0.0));
    Value v = vector::TransferReadOp::create(b, loc, lanes(from_elt), from,
                                             ValueRange{i, j}, pad,
                                             ArrayRef<bool>{true});
    return from_elt == f32 ? v
                           : arith::ExtFOp::create(b, loc, lanes(f32), v)
                                 .getResult();
  };

  Value empty = tensor::EmptyOp::create(
      rewriter, loc, ArrayRef<int64_t>{shape.rows, shape.d}, elt);
  auto rows = scf::ForallOp::create(
      rewriter, loc, ArrayRef<OpFoldResult>{rewriter.getIndexAttr(shape.rows)},
      ValueRange{empty}, std::nullopt);
  rewriter.setInsertionPointToStart(rows.getBody());
  Value row = rows.getInductionVar(0);
  Value s = arith::RemUIOp::create(rewriter, loc, row,
                                   index(rewriter, shape.s));
  auto zero = rewriter.getIndexAttr(0), one = rewriter.getIndexAttr(1);
  SmallVector<OpFoldResult> offsets = {row, zero},
                            sizes = {one, rewriter.getIndexAttr(shape.d)},
                            strides = {one, one};
  Value mine = tensor::ExtractSliceOp::create(
      rewriter, loc, rows.getRegionIterArgs()[0], offsets, sizes, strides);
  Value written =
      scf::ForOp::create(
          rewriter, loc, index(rewriter, 0), index(rewriter, shape.half),
          index(rewriter, width), ValueRange{mine},
          [&](OpBuilder &b, Location, Value p, ValueRange acc) {
            Value q = arith::AddIOp::create(b, loc, p, index(b, shape.half));
            auto [lo, hi] =
                rope::rotate(b, loc, read(b, x, row, p), read(b, x, row, q),
                             read(b, cos, s, p), read(b, sin, s, p),
                             read(b, cos, s, q), read(b, sin, s, q));
            Value out = acc[0];
            for (auto [v, at] : {std::pair{lo, p}, std::pair{hi, q}}) {
              if (elt != f32)
                v = arith::TruncFOp::create(b, loc, lanes(elt), v);
              out = vector::TransferWriteOp::create(
                        b, loc, v, out, ValueRange{index(b, 0), at},
                        ArrayRef<bool>{true})
                        .getResult();
            }
            scf::YieldOp::create(b, loc, out);
          })
          .getResult(0);
  rewriter.setInsertionPointToStart(rows.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(rewriter, loc, written,
                                        rows.getRegionIterArgs()[0], offsets,
                                        sizes, strides);
  rewriter.setInsertionPointAfter(rows);
  rewriter.replaceOp(op, rope::fromRows(rewriter, loc, rows.getResult(0),
                                        outType));
  return success();
}
