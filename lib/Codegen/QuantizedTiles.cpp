//===- QuantizedTiles.cpp - What the quantized schedules share ------------===//

#include "QuantizedTiles.h"
#include "ScheduleUtils.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::fuel;
using namespace mlir::fuel::quantized;

int64_t quantized::foldedRows(Value act) {
  int64_t rows = 1;
  for (int64_t d :
       cast<RankedTensorType>(act.getType()).getShape().drop_back()) {
    if (ShapedType::isDynamic(d))
      return ShapedType::kDynamic;
    rows *= d;
  }
  return rows;
}

int64_t quantized::powerOfTwoDividing(int64_t n, int64_t most) {
  int64_t t = 1;
  while (2 * t <= most && n % (2 * t) == 0)
    t *= 2;
  return t;
}

int64_t quantized::rowTile(int64_t rows, int64_t most) {
  most = static_cast<int64_t>(
      llvm::bit_floor(static_cast<uint64_t>(std::max<int64_t>(most, 1))));
  if (ShapedType::isDynamic(rows) || rows >= most)
    return most;
  return static_cast<int64_t>(
      llvm::bit_ceil(static_cast<uint64_t>(std::max<int64_t>(rows, 1))));
}

int64_t quantized::targetLanes(const ScheduleOptions &options) {
  int64_t lanes = std::max<int64_t>(options.vectorRegisterBits / 32, 2);
  return static_cast<int64_t>(
      llvm::bit_floor(static_cast<uint64_t>(std::min<int64_t>(lanes, 16))));
}

Value quantized::permuteColumns(RewriterBase &rewriter, Location loc, Value a,
                               ArrayRef<int64_t> split,
                               ArrayRef<unsigned> perm) {
  auto aType = cast<RankedTensorType>(a.getType());
  int64_t rank = static_cast<int64_t>(split.size()) + 1;
  SmallVector<int64_t> from = {aType.getDimSize(0)}, to = {aType.getDimSize(0)};
  llvm::append_range(from, split);
  for (unsigned d : perm)
    to.push_back(split[d]);
  SmallVector<ReassociationIndices> dims = {{0}, {}};
  for (int64_t d = 1; d < rank; ++d)
    dims[1].push_back(d);
  OpFoldResult rowCount = tensor::getMixedSize(rewriter, loc, a, 0);
  SmallVector<OpFoldResult> fromSizes = {rowCount}, toSizes = {rowCount};
  for (int64_t d = 1; d < rank; ++d) {
    fromSizes.push_back(rewriter.getIndexAttr(from[d]));
    toSizes.push_back(rewriter.getIndexAttr(to[d]));
  }
  Value blocks = tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get(from, aType.getElementType()), a,
      dims, fromSizes);
  // Output dim d reads input dim perm[d]: the input's map sends input dim
  // j to the loop of the output dim that reads it.
  SmallVector<AffineExpr> inExprs(rank);
  inExprs[0] = rewriter.getAffineDimExpr(0);
  for (int64_t d = 1; d < rank; ++d)
    inExprs[perm[d - 1] + 1] = rewriter.getAffineDimExpr(d);
  Value packed = copyWidened(
      rewriter, loc, blocks,
      AffineMap::get(rank, 0, inExprs, rewriter.getContext()), toSizes);
  return tensor::CollapseShapeOp::create(rewriter, loc, packed, dims);
}

TileFrame TileFrame::open(RewriterBase &rewriter, FusedOp op, Value act,
                      int64_t rows, int64_t n, int64_t tileM,
                      int64_t tileN, function_ref<Value(Value)> prepare,
                      int64_t rowUnit) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  TileFrame f;
  f.tileM = tileM;
  f.tileN = tileN;
  f.cType = cast<RankedTensorType>(op->getResult(0).getType());
  auto aType = cast<RankedTensorType>(act.getType());
  f.act = f.a = act;
  if (aType.getRank() > 2) {
    ReassociationIndices lead;
    for (int64_t d = 0; d + 1 < aType.getRank(); ++d)
      lead.push_back(d);
    f.fold = {lead, {aType.getRank() - 1}};
    f.a = tensor::CollapseShapeOp::create(rewriter, loc, act, f.fold);
  }
  // Rows that are not whole tiles are padded with zero rows, a's to a
  // multiple of the row unit and C's to whole tiles (static rows at
  // compile time, a dynamic number at run time); the rows beyond them are
  // dropped at the end.
  assert((!rowUnit || tileM % rowUnit == 0) && "a unit divides the tiles");
  int64_t unit = rowUnit ? rowUnit : tileM;
  OpFoldResult tiles, paddedRows;
  if (ShapedType::isStatic(rows)) {
    int64_t aRows = llvm::alignTo(rows, unit),
            cRows = llvm::alignTo(rows, tileM);
    tiles = rewriter.getIndexAttr(cRows / tileM);
    paddedRows = rewriter.getIndexAttr(cRows);
    if (aRows != rows)
      f.a = padWithZeros(rewriter, loc, f.a,
                         {aRows, aType.getShape().back()});
    if (cRows != rows)
      f.usedRows = rewriter.getIndexAttr(rows);
    if (aRows != cRows)
      f.paddedRows = arith::ConstantIndexOp::create(rewriter, loc, aRows);
  } else {
    f.rowCount = tensor::DimOp::create(rewriter, loc, f.a, 0).getResult();
    // The units of `u` rows that cover the rows, and their rows.
    auto units = [&](int64_t u) -> Value {
      if (u == 1)
        return f.rowCount;
      return arith::CeilDivUIOp::create(
          rewriter, loc, f.rowCount,
          arith::ConstantIndexOp::create(rewriter, loc, u));
    };
    auto rowsOf = [&](Value count, int64_t u) -> Value {
      if (u == 1)
        return count;
      return arith::MulIOp::create(
          rewriter, loc, count,
          arith::ConstantIndexOp::create(rewriter, loc, u));
    };
    Value tileCount = units(tileM), cRows = rowsOf(tileCount, tileM);
    tiles = tileCount;
    paddedRows = cRows;
    f.paddedRows = unit == tileM ? cRows : rowsOf(units(unit), unit);
    if (tileM > 1)
      f.usedRows = f.rowCount;
    if (unit > 1)
      f.a = padWithZeros(
          rewriter, loc, f.a,
          ArrayRef<OpFoldResult>{
              f.paddedRows, tensor::getMixedSize(rewriter, loc, f.a, 1)});
  }
  if (prepare)
    f.a = prepare(f.a);
  Value out = tensor::EmptyOp::create(
      rewriter, loc,
      ArrayRef<OpFoldResult>{paddedRows, rewriter.getIndexAttr(n)},
      f.cType.getElementType());
  SmallVector<OpFoldResult> ubs = {tiles, rewriter.getIndexAttr(n / tileN)};
  f.forall = scf::ForallOp::create(rewriter, loc, ubs, ValueRange{out},
                                       std::nullopt);
  Block *body = f.forall.getBody();
  rewriter.setInsertionPointToStart(body);
  f.m0 = arith::MulIOp::create(
      rewriter, loc, body->getArgument(0),
      arith::ConstantIndexOp::create(rewriter, loc, tileM));
  f.n0 = arith::MulIOp::create(
      rewriter, loc, body->getArgument(1),
      arith::ConstantIndexOp::create(rewriter, loc, tileN));
  f.outArg = body->getArgument(2);
  return f;
}

Value TileFrame::liveRows(OpBuilder &b, Location loc) const {
  if (!paddedRows)
    return nullptr;
  Value left = arith::SubIOp::create(b, loc, paddedRows, m0);
  return arith::MinUIOp::create(
      b, loc, left, arith::ConstantIndexOp::create(b, loc, tileM));
}

Value TileFrame::emptyTile(RewriterBase &rewriter, Location loc) const {
  return tensor::ExtractSliceOp::create(
      rewriter, loc,
      RankedTensorType::get({tileM, tileN}, cType.getElementType()), outArg,
      SmallVector<OpFoldResult>{m0, n0},
      SmallVector<OpFoldResult>{rewriter.getIndexAttr(tileM),
                                rewriter.getIndexAttr(tileN)},
      SmallVector<OpFoldResult>(2, rewriter.getIndexAttr(1)));
}

Value TileFrame::reducedTile(RewriterBase &rewriter, Location loc,
                  ValueRange accs) const {
  Type cElt = cType.getElementType();
  Value tile = emptyTile(rewriter, loc);
  for (int64_t m = 0; m < tileM; ++m) {
    SmallVector<Value> sums;
    for (int64_t j = 0; j < tileN; ++j) {
      Value sum = vector::ReductionOp::create(
          rewriter, loc, vector::CombiningKind::ADD, accs[m * tileN + j]);
      if (cElt != sum.getType())
        sum = arith::TruncFOp::create(rewriter, loc, cElt, sum);
      sums.push_back(sum);
    }
    Value row = vector::FromElementsOp::create(
        rewriter, loc, VectorType::get({tileN}, cElt), sums);
    tile = vector::TransferWriteOp::create(
               rewriter, loc, row, tile,
               ValueRange{arith::ConstantIndexOp::create(rewriter, loc, m),
                          arith::ConstantIndexOp::create(rewriter, loc, 0)},
               ArrayRef<bool>{true})
               .getResult();
  }
  return tile;
}

void TileFrame::close(RewriterBase &rewriter, FusedOp op, Value tile) {
  Location loc = op.getLoc();
  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(
      rewriter, loc, tile, outArg, SmallVector<OpFoldResult>{m0, n0},
      SmallVector<OpFoldResult>{rewriter.getIndexAttr(tileM),
                                rewriter.getIndexAttr(tileN)},
      SmallVector<OpFoldResult>(2, rewriter.getIndexAttr(1)));
  rewriter.setInsertionPointAfter(forall);
  Value c = forall.getResult(0);
  if (usedRows) {
    int64_t n = cType.getShape().back();
    c = tensor::ExtractSliceOp::create(
        rewriter, loc, c,
        SmallVector<OpFoldResult>(2, rewriter.getIndexAttr(0)),
        SmallVector<OpFoldResult>{usedRows, rewriter.getIndexAttr(n)},
        SmallVector<OpFoldResult>(2, rewriter.getIndexAttr(1)));
  }
  if (!fold.empty()) {
    SmallVector<OpFoldResult> shape =
        tensor::getMixedSizes(rewriter, loc, act);
    shape.back() = rewriter.getIndexAttr(cType.getShape().back());
    c = tensor::ExpandShapeOp::create(rewriter, loc, cType, c, fold, shape);
  }
  rewriter.replaceOp(op, c);
}
