//===- GpuRope.cpp - rope on a GPU ----------------------------------------===//
//
// rope (y = x * cos + rotate_half(x) * sin) on a GPU, in one kernel: x as
// rows of D (its leading dims and S flattened), a thread per pair of
// elements (p, p + D/2) of a row, which reads both, the four table entries
// of its position s (the row's index modulo S) and writes both results:
//   y[p]       = x[p] * cos[s, p] - x[p + D/2] * sin[s, p]
//   y[p + D/2] = x[p + D/2] * cos[s, p + D/2] + x[p] * sin[s, p + D/2]
// Thread x of a block takes pairs x, x + Tx, ... (Tx: the largest divisor of
// D/2 up to max-threads), so a warp reads and writes consecutive elements;
// a block takes Ry rows (the largest divisor of the rows that keeps the
// block at 128 threads or fewer) on its threads' y. f16 and bf16 compute
// in f32.
//
// The decomposition is four loop nests or more (the two halves sliced, one
// negated, joined, then the products and their sum; casts for f16 and
// bf16), a kernel each, each reading and writing x-sized tensors.
//
//===----------------------------------------------------------------------===//

#include "GpuBlockLoops.h"
#include "GpuSchedules.h"

#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::fuel;

namespace {
/// Threads a block aims at: enough to hide a row's latency when rows are
/// short, few enough to leave room for several blocks.
constexpr int64_t kBlockThreads = 128;

/// The largest divisor of `n` no more than `most` (at least 1).
int64_t largestDivisor(int64_t n, int64_t most) {
  for (int64_t d = std::min(n, most); d > 1; --d)
    if (n % d == 0)
      return d;
  return 1;
}

/// The rows of x (its elements over D) and the pairs a thread of `maxThreads`
/// takes.
struct RopeShape {
  int64_t rows, s, d, half;
  /// Threads per row (x), pairs per thread, rows per block (y).
  int64_t tx, each, ry;

  static RopeShape of(RopeView rope, int64_t maxThreads) {
    auto x = cast<RankedTensorType>(rope.getX().getType());
    RopeShape shape;
    shape.d = x.getShape().back();
    shape.s = x.getShape()[x.getRank() - 2];
    shape.rows = x.getNumElements() / shape.d;
    shape.half = shape.d / 2;
    shape.tx = largestDivisor(shape.half, maxThreads);
    shape.each = shape.half / shape.tx;
    shape.ry = largestDivisor(
        shape.rows, std::max<int64_t>(1, std::min(kBlockThreads, maxThreads) /
                                             shape.tx));
    return shape;
  }
};
} // namespace

LogicalResult mlir::fuel::canScheduleGpuRope(FusedOp op,
                                             const GpuScheduleOptions &options,
                                             std::string &why) {
  if (!hasF32OrHalfTensors(op)) {
    why = "the GPU rope schedule handles f32, f16 and bf16";
    return failure();
  }
  RopeShape shape = RopeShape::of(RopeView(op), options.maxThreads);
  if (shape.rows / shape.ry > std::numeric_limits<int32_t>::max()) {
    why = "more blocks of rows than the grid's x holds";
    return failure();
  }
  return success();
}

LogicalResult mlir::fuel::buildGpuRope(RewriterBase &rewriter, FusedOp op,
                                       const GpuScheduleOptions &options) {
  RopeView rope(op);
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  RopeShape shape = RopeShape::of(rope, options.maxThreads);
  auto xType = cast<RankedTensorType>(rope.getX().getType());
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());
  Type elt = outType.getElementType(), f32 = rewriter.getF32Type();
  // x as [rows, D].
  ReassociationIndices leading;
  for (int64_t i = 0; i + 1 < xType.getRank(); ++i)
    leading.push_back(i);
  SmallVector<ReassociationIndices> toRows = {leading,
                                              {xType.getRank() - 1}};
  Value x = rope.getX(), cos = rope.getCos(), sin = rope.getSin();
  if (xType.getRank() > 2)
    x = tensor::CollapseShapeOp::create(rewriter, loc, x, toRows);
  auto index = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto read = [&](OpBuilder &b, Value from, Value i, Value j) -> Value {
    Value v = tensor::ExtractOp::create(b, loc, from, ValueRange{i, j});
    return v.getType() == f32 ? v : arith::ExtFOp::create(b, loc, f32, v);
  };

  auto rowsType = RankedTensorType::get({shape.rows, shape.d}, elt);
  Value empty = tensor::EmptyOp::create(rewriter, loc, rowsType.getShape(),
                                        elt);
  auto blocks = scf::ForallOp::create(
      rewriter, loc,
      ArrayRef<OpFoldResult>{rewriter.getIndexAttr(shape.rows / shape.ry)},
      ValueRange{empty}, std::nullopt);
  mapForall(rewriter, blocks, /*threads=*/false);
  rewriter.setInsertionPointToStart(blocks.getBody());
  Value firstRow = arith::MulIOp::create(rewriter, loc,
                                         blocks.getInductionVar(0),
                                         index(rewriter, shape.ry));
  auto zero = rewriter.getIndexAttr(0), one = rewriter.getIndexAttr(1);
  SmallVector<OpFoldResult> blockOffsets = {firstRow, zero},
                            blockSizes = {rewriter.getIndexAttr(shape.ry),
                                          rewriter.getIndexAttr(shape.d)},
                            blockStrides = {one, one};
  Value blockInit = tensor::ExtractSliceOp::create(
      rewriter, loc, blocks.getRegionIterArgs()[0], blockOffsets, blockSizes,
      blockStrides);
  // Thread (r, t) owns elements t, t + Tx, ... of row r of the block: its
  // pairs' first halves, then (from i = each on) their second halves.
  Value rows = threadSlices(
      rewriter, loc, {shape.ry, shape.tx}, blockInit, {1, 2 * shape.each},
      {1, shape.tx},
      [](ValueRange ids) -> SmallVector<OpFoldResult> {
        return {ids[0], ids[1]};
      },
      [&](ValueRange ids, Value mine) -> Value {
        Value row = arith::AddIOp::create(rewriter, loc, firstRow, ids[0]);
        Value s = arith::RemUIOp::create(rewriter, loc, row,
                                         index(rewriter, shape.s));
        for (int64_t i = 0; i < shape.each; ++i) {
          Value p = arith::AddIOp::create(rewriter, loc, ids[1],
                                          index(rewriter, i * shape.tx));
          Value q = arith::AddIOp::create(rewriter, loc, p,
                                          index(rewriter, shape.half));
          Value a = read(rewriter, x, row, p), b = read(rewriter, x, row, q);
          auto rotate = [&](Value u, Value c, Value v, Value sn,
                            bool negate) -> Value {
            Value uc = arith::MulFOp::create(rewriter, loc, u, c);
            Value vs = arith::MulFOp::create(rewriter, loc, v, sn);
            Value y = negate ? arith::SubFOp::create(rewriter, loc, uc, vs)
                                   .getResult()
                             : arith::AddFOp::create(rewriter, loc, uc, vs)
                                   .getResult();
            return y.getType() == elt
                       ? y
                       : arith::TruncFOp::create(rewriter, loc, elt, y);
          };
          Value lo = rotate(a, read(rewriter, cos, s, p), b,
                            read(rewriter, sin, s, p), /*negate=*/true);
          Value hi = rotate(b, read(rewriter, cos, s, q), a,
                            read(rewriter, sin, s, q), /*negate=*/false);
          mine = tensor::InsertOp::create(rewriter, loc, lo, mine,
                                          ValueRange{index(rewriter, 0),
                                                     index(rewriter, i)});
          mine = tensor::InsertOp::create(
              rewriter, loc, hi, mine,
              ValueRange{index(rewriter, 0),
                         index(rewriter, shape.each + i)});
        }
        return mine;
      });
  rewriter.setInsertionPointToStart(blocks.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(rewriter, loc, rows,
                                        blocks.getRegionIterArgs()[0],
                                        blockOffsets, blockSizes, blockStrides);
  rewriter.setInsertionPointAfter(blocks);
  Value y = blocks.getResult(0);
  if (outType.getRank() > 2)
    y = tensor::ExpandShapeOp::create(rewriter, loc, outType, y, toRows);
  rewriter.replaceOp(op, y);
  return success();
}
