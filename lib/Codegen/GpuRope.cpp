//===- GpuRope.cpp - rope on a GPU ----------------------------------------===//
//
// The rotary schedule (rope) on a GPU, in one kernel: x as rows of D (its
// leading dims and S flattened; Rope.h), a thread per pair of elements
// (p, p + D/2) of a row, which reads both, the four table entries of its
// position s (the row's index modulo S) and writes both results
// (rope::rotate, the CPU form's arithmetic). Thread x of a block takes
// pairs x, x + Tx, ... (Tx: the largest divisor of D/2 up to max-threads),
// so a warp reads and writes consecutive elements; a block takes Ry rows
// (the largest divisor of the rows that keeps the block at 128 threads or
// fewer) on its threads' y. f16 and bf16 compute in f32.
//
// The decomposition is four loop nests or more (the two halves sliced, one
// negated, joined, then the products and their sum; casts for f16 and
// bf16), a kernel each, each reading and writing x-sized tensors.
//
//===----------------------------------------------------------------------===//

#include "GpuBlockLoops.h"
#include "GpuSchedules.h"
#include "Rope.h"

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

/// How a block's threads take the rows' pairs.
struct Threads {
  /// Threads per row (x), pairs per thread, rows per block (y).
  int64_t tx, each, ry;

  static Threads of(const rope::RowsShape &shape, int64_t maxThreads) {
    Threads threads;
    threads.tx = largestDivisor(shape.half, maxThreads);
    threads.each = shape.half / threads.tx;
    threads.ry = largestDivisor(
        shape.rows,
        std::max<int64_t>(1, std::min(kBlockThreads, maxThreads) / threads.tx));
    return threads;
  }
};
} // namespace

LogicalResult mlir::fuel::canScheduleGpuRope(FusedOp op,
                                             const GpuScheduleOptions &options,
                                             std::string &why) {
  if (failed(canScheduleRope(op, ScheduleOptions{}, why)))
    return failure();
  rope::RowsShape shape = rope::RowsShape::of(RopeView(op));
  Threads threads = Threads::of(shape, options.maxThreads);
  if (shape.rows / threads.ry > std::numeric_limits<int32_t>::max()) {
    why = "more blocks of rows than the grid's x holds";
    return failure();
  }
  return success();
}

LogicalResult mlir::fuel::buildGpuRope(RewriterBase &rewriter, FusedOp op,
                                       const GpuScheduleOptions &options) {
  RopeView view(op);
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  rope::RowsShape shape = rope::RowsShape::of(view);
  Threads threads = Threads::of(shape, options.maxThreads);
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());
  Type elt = outType.getElementType(), f32 = rewriter.getF32Type();
  Value x = rope::asRows(rewriter, loc, view.getX());
  Value cos = view.getCos(), sin = view.getSin();
  auto index = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto read = [&](OpBuilder &b, Value from, Value i, Value j) -> Value {
    Value v = tensor::ExtractOp::create(b, loc, from, ValueRange{i, j});
    return v.getType() == f32 ? v : arith::ExtFOp::create(b, loc, f32, v);
  };

  Value empty = tensor::EmptyOp::create(
      rewriter, loc, ArrayRef<int64_t>{shape.rows, shape.d}, elt);
  auto blocks = scf::ForallOp::create(
      rewriter, loc,
      ArrayRef<OpFoldResult>{rewriter.getIndexAttr(shape.rows / threads.ry)},
      ValueRange{empty}, std::nullopt);
  mapForall(rewriter, blocks, /*threads=*/false);
  rewriter.setInsertionPointToStart(blocks.getBody());
  Value firstRow = arith::MulIOp::create(rewriter, loc,
                                         blocks.getInductionVar(0),
                                         index(rewriter, threads.ry));
  auto zero = rewriter.getIndexAttr(0), one = rewriter.getIndexAttr(1);
  SmallVector<OpFoldResult> blockOffsets = {firstRow, zero},
                            blockSizes = {rewriter.getIndexAttr(threads.ry),
                                          rewriter.getIndexAttr(shape.d)},
                            blockStrides = {one, one};
  Value blockInit = tensor::ExtractSliceOp::create(
      rewriter, loc, blocks.getRegionIterArgs()[0], blockOffsets, blockSizes,
      blockStrides);
  // Thread (r, t) owns elements t, t + Tx, ... of row r of the block: its
  // pairs' first halves, then (from i = each on) their second halves.
  Value rows = threadSlices(
      rewriter, loc, {threads.ry, threads.tx}, blockInit,
      {1, 2 * threads.each}, {1, threads.tx},
      [](ValueRange ids) -> SmallVector<OpFoldResult> {
        return {ids[0], ids[1]};
      },
      [&](ValueRange ids, Value mine) -> Value {
        Value row = arith::AddIOp::create(rewriter, loc, firstRow, ids[0]);
        Value s = arith::RemUIOp::create(rewriter, loc, row,
                                         index(rewriter, shape.s));
        for (int64_t i = 0; i < threads.each; ++i) {
          Value p = arith::AddIOp::create(rewriter, loc, ids[1],
                                          index(rewriter, i * threads.tx));
          Value q = arith::AddIOp::create(rewriter, loc, p,
                                          index(rewriter, shape.half));
          auto [lo, hi] = rope::rotate(
              rewriter, loc, read(rewriter, x, row, p),
              read(rewriter, x, row, q), read(rewriter, cos, s, p),
              read(rewriter, sin, s, p), read(rewriter, cos, s, q),
              read(rewriter, sin, s, q));
          for (auto [v, at] :
               {std::pair{lo, i}, std::pair{hi, threads.each + i}}) {
            if (elt != f32)
              v = arith::TruncFOp::create(rewriter, loc, elt, v);
            mine = tensor::InsertOp::create(
                rewriter, loc, v, mine,
                ValueRange{index(rewriter, 0), index(rewriter, at)});
          }
        }
        return mine;
      });
  rewriter.setInsertionPointToStart(blocks.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(rewriter, loc, rows,
                                        blocks.getRegionIterArgs()[0],
                                        blockOffsets, blockSizes, blockStrides);
  rewriter.setInsertionPointAfter(blocks);
  rewriter.replaceOp(op, rope::fromRows(rewriter, loc, blocks.getResult(0),
                                        outType));
  return success();
}
