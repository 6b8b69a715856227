//===- RowSplit.cpp - Few dynamic rows run apart --------------------------===//

#include "RowSplit.h"
#include "ScheduleUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::fuel;

SmallVector<ReassociationIndices> mlir::fuel::rowGroups(int64_t rank) {
  SmallVector<ReassociationIndices> groups(2);
  for (int64_t d = 0; d + 1 < rank; ++d)
    groups[0].push_back(d);
  groups[1].push_back(rank - 1);
  return groups;
}

Value mlir::fuel::viewRowsBack(RewriterBase &rewriter, Location loc,
                               Value rows, Value a, RankedTensorType y) {
  auto aType = cast<RankedTensorType>(a.getType());
  int64_t rank = aType.getRank();
  if (rank == 2)
    return rows.getType() == y ? rows
                               : tensor::CastOp::create(rewriter, loc, y, rows);
  SmallVector<OpFoldResult> yShape;
  for (int64_t d = 0; d + 1 < rank; ++d)
    yShape.push_back(tensor::getMixedSize(rewriter, loc, a, d));
  yShape.push_back(rewriter.getIndexAttr(y.getShape().back()));
  if (llvm::count_if(aType.getShape().drop_back(), ShapedType::isDynamic) <=
      1)
    return tensor::ExpandShapeOp::create(rewriter, loc, y, rows,
                                         rowGroups(rank), yShape);
  Value shape = tensor::FromElementsOp::create(
      rewriter, loc, getValueOrCreateConstantIndexOp(rewriter, loc, yShape));
  return tensor::ReshapeOp::create(rewriter, loc, y, rows, shape);
}

SmallVector<RowBranch> mlir::fuel::splitFewRows(RewriterBase &rewriter,
                                                FusedOp op, unsigned actIndex,
                                                int64_t fewRows,
                                                int64_t someRows) {
  if (op->getNumResults() != 1)
    return {};
  Value a = op->getOperand(actIndex);
  auto aType = cast<RankedTensorType>(a.getType());
  auto y = cast<RankedTensorType>(op->getResult(0).getType());
  int64_t rank = aType.getRank(), k = aType.getShape().back(),
          n = y.getShape().back();
  ArrayRef<int64_t> rowDims = aType.getShape().drop_back();
  if (llvm::all_of(rowDims, ShapedType::isStatic) ||
      llvm::any_of(rowDims, [](int64_t d) {
        return ShapedType::isStatic(d) && d != 1;
      }))
    return {};
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value rows;
  for (int64_t d = 0; d + 1 < rank; ++d) {
    if (!aType.isDynamicDim(d))
      continue;
    Value dim = tensor::DimOp::create(rewriter, loc, a, d);
    rows = rows ? arith::MulIOp::create(rewriter, loc, rows, dim) : dim;
  }
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, v);
  };
  auto withResult = [&](FusedOp copy, Value newA, ArrayRef<int64_t> shape) {
    copy->setOperand(actIndex, newA);
    copy->getResult(0).setType(y.clone(shape));
  };
  OpBuilder::InsertionGuard guard(rewriter);
  // An scf.if on `rows <predicate> bound` (in the else block of the one
  // before, which yields its result), building on in its then block.
  scf::IfOp outermost;
  auto branch = [&](arith::CmpIPredicate predicate, int64_t bound) {
    auto ifOp = scf::IfOp::create(
        rewriter, loc, TypeRange{y},
        arith::CmpIOp::create(rewriter, loc, predicate, rows, index(bound)),
        /*withElseRegion=*/true);
    if (outermost)
      scf::YieldOp::create(rewriter, loc, ifOp.getResults());
    else
      outermost = ifOp;
    rewriter.setInsertionPointToStart(ifOp.thenBlock());
    return ifOp;
  };
  // One row: a[0, ..., 0, :] as [1, ..., 1, K].
  scf::IfOp isOne = branch(arith::CmpIPredicate::eq, 1);
  SmallVector<int64_t> rowShape(rank, 1);
  rowShape.back() = k;
  SmallVector<OpFoldResult> zeros(rank, rewriter.getIndexAttr(0)),
      ones(rank, rewriter.getIndexAttr(1)), sizes(ones);
  sizes.back() = rewriter.getIndexAttr(k);
  Value row = tensor::ExtractSliceOp::create(
      rewriter, loc, aType.clone(rowShape), a, zeros, sizes, ones);
  auto oneRow = cast<FusedOp>(rewriter.clone(*op));
  rowShape.back() = n;
  withResult(oneRow, row, rowShape);
  scf::YieldOp::create(
      rewriter, loc,
      ValueRange{tensor::CastOp::create(rewriter, loc, y,
                                        oneRow->getResult(0))});
  // 2 to fewRows rows: a's rows padded with zeros to a static fewRows.
  rewriter.setInsertionPointToStart(isOne.elseBlock());
  scf::IfOp isFew = branch(arith::CmpIPredicate::ule, fewRows);
  Value aRows =
      rank == 2 ? a
                : tensor::CollapseShapeOp::create(rewriter, loc, a,
                                                  rowGroups(rank))
                      .getResult();
  Value padded = padWithZeros(rewriter, loc, aRows, {fewRows, k});
  auto few = cast<FusedOp>(rewriter.clone(*op));
  withResult(few, padded, {fewRows, n});
  Value used = tensor::ExtractSliceOp::create(
      rewriter, loc, few->getResult(0),
      ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0),
                             rewriter.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{rows, rewriter.getIndexAttr(n)},
      ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1),
                             rewriter.getIndexAttr(1)});
  scf::YieldOp::create(rewriter, loc,
                       viewRowsBack(rewriter, loc, used, a, y));
  SmallVector<RowBranch> copies = {{oneRow, 1, 1}, {few, 2, fewRows}};
  int64_t above = fewRows;
  rewriter.setInsertionPointToStart(isFew.elseBlock());
  // Up to someRows rows: the op as it was, to be scheduled with the bound.
  if (someRows > fewRows) {
    scf::IfOp isSome = branch(arith::CmpIPredicate::ule, someRows);
    auto some = cast<FusedOp>(rewriter.clone(*op));
    scf::YieldOp::create(rewriter, loc, some->getResults());
    copies.push_back({some, fewRows + 1, someRows});
    above = someRows;
    rewriter.setInsertionPointToStart(isSome.elseBlock());
  }
  // Otherwise, the op as it was.
  auto rest = cast<FusedOp>(rewriter.clone(*op));
  scf::YieldOp::create(rewriter, loc, rest->getResults());
  copies.push_back({rest, above + 1, 0});
  rewriter.replaceOp(op, outermost.getResults());
  return copies;
}
