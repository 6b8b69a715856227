//===- RowWise.cpp - The row-wise schedule --------------------------------===//
//
// For ops that read and write whole rows of their last dim (softmax, RMS
// and layer norm): the decomposition's last op is tiled one row at a time
// in an scf.forall over the leading dims, and its producers (the row
// statistics, the elementwise steps, the fills) are fused into it, so each
// row is computed in one iteration and nothing full-size is materialized.
// Inside the row, each elementwise op runs over it in vectors of
// `vectorWidth` lanes (an scf.for), and each reduction accumulates partial
// sums in one vector that is reduced once per row.
//
//===----------------------------------------------------------------------===//

#include "RowWise.h"
#include "ScheduleUtils.h"

#include "FuelFused/IR/FuelOps.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::fuel;

LogicalResult mlir::fuel::canScheduleRowWise(FusedOp op,
                                             const ScheduleOptions &options,
                                             std::string &why) {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (type.getRank() < 2) {
    why = "the row-wise schedule needs rows: a rank of at least 2";
    return failure();
  }
  int64_t row = type.getShape().back();
  if (row < options.vectorWidth || row % options.vectorWidth != 0) {
    why = "the row length (" + std::to_string(row) +
          ") is not a multiple of the vector width (" +
          std::to_string(options.vectorWidth) + ")";
    return failure();
  }
  return success();
}

/// Tiles `op` (inside a row) along its last loop by `width`: reductions as
/// partial vector sums, elementwise ops as a loop over the row. Leaves ops
/// whose last loop is not a whole, static, divisible row as they are.
static void tileAlongRow(RewriterBase &rewriter, linalg::LinalgOp op,
                         int64_t rowLength, int64_t width) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges.empty() || ranges.back() != rowLength)
    return;
  unsigned last = ranges.size() - 1;
  SmallVector<OpFoldResult> sizes(ranges.size(), rewriter.getIndexAttr(0));
  sizes[last] = rewriter.getIndexAttr(width);
  SmallVector<unsigned> reductions;
  op.getReductionDims(reductions);
  rewriter.setInsertionPoint(op);
  if (!reductions.empty()) {
    if (reductions.size() != 1 || reductions.front() != last ||
        op.getNumDpsInits() != 1)
      return;
    FailureOr<scf::SCFTilingResult> tiled = scf::tileReductionUsingScf(
        rewriter, cast<PartialReductionOpInterface>(op.getOperation()),
        sizes);
    if (succeeded(tiled))
      rewriter.replaceOp(op, tiled->replacements);
    return;
  }
  scf::SCFTilingOptions options;
  options.setTileSizes(sizes);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (succeeded(tiled))
    rewriter.replaceOp(op, tiled->replacements);
}

/// Whether `op` runs over a whole row: its last loop is the row's.
static bool spansRow(linalg::LinalgOp op, int64_t rowLength) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  return !ranges.empty() && ranges.back() == rowLength;
}

void mlir::fuel::fuseRowElementwise(RewriterBase &rewriter, Operation *loop,
                               int64_t rowLength) {
  SmallVector<Operation *> ops;
  loop->walk([&](linalg::GenericOp op) { ops.push_back(op); });
  RewritePatternSet patterns(loop->getContext());
  linalg::populateElementwiseOpsFusionPatterns(
      patterns, [&](OpOperand *operand) {
        auto producer = operand->get().getDefiningOp<linalg::LinalgOp>();
        auto consumer = dyn_cast<linalg::LinalgOp>(operand->getOwner());
        return producer && consumer && loop->isProperAncestor(producer) &&
               spansRow(producer, rowLength) &&
               spansRow(consumer, rowLength);
      });
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  (void)applyOpPatternsGreedily(ops, std::move(patterns), config);
}

FailureOr<scf::ForallOp> mlir::fuel::tileRows(
    RewriterBase &rewriter, linalg::LinalgOp root,
    const llvm::SmallPtrSetImpl<Operation *> &decomposition) {
  SmallVector<int64_t> ranges = root.getStaticLoopRanges();
  int64_t rowLength = ranges.back();
  SmallVector<OpFoldResult> rowTile(ranges.size(), rewriter.getIndexAttr(1));
  rowTile.back() = rewriter.getIndexAttr(0);
  FailureOr<TiledRoot> tiled = tileAndFuseRoot(
      rewriter, cast<TilingInterface>(root.getOperation()), rowTile,
      scf::SCFTilingOptions::LoopType::ForallOp,
      [&](Operation *producer) { return decomposition.contains(producer); });
  if (failed(tiled))
    return failure();
  auto loop = cast<scf::ForallOp>(tiled->loop);

  // A producer fused for two consumers is computed twice: once is enough.
  DominanceInfo dominance;
  eliminateCommonSubExpressions(rewriter, dominance, loop);

  // Elementwise steps over the whole row fuse into the ops that read them
  // (softmax's subtract into its exp, and that into the sum and the divide:
  // the row is read three times, not five, and no row-sized temporary is
  // left). A row statistic is not fused into the elementwise op that reads
  // it: it would be computed once per element.
  fuseRowElementwise(rewriter, loop, rowLength);
  return loop;
}

LogicalResult mlir::fuel::scheduleRowWise(
    RewriterBase &rewriter, linalg::LinalgOp root,
    const llvm::SmallPtrSetImpl<Operation *> &decomposition,
    const ScheduleOptions &options) {
  if (root.getNumReductionLoops() != 0 || root.getNumLoops() < 2 ||
      root->getNumResults() != 1)
    return failure();
  SmallVector<int64_t> ranges = root.getStaticLoopRanges();
  int64_t rowLength = ranges.back();
  if (ShapedType::isDynamic(rowLength))
    return failure();

  // 1. One row per iteration, the producers fused in, the elementwise steps
  // fused into the ops that read them.
  FailureOr<scf::ForallOp> rows = tileRows(rewriter, root, decomposition);
  if (failed(rows))
    return failure();
  Operation *loop = *rows;

  // 2. Each op over the row in vectors.
  SmallVector<linalg::LinalgOp> inRow;
  loop->walk([&](linalg::LinalgOp op) { inRow.push_back(op); });
  // Steps of `unroll` vectors: as many independent accumulators per
  // reduction, so the adds do not wait on each other.
  int64_t step = options.vectorWidth * options.unroll;
  if (rowLength % step != 0)
    step = options.vectorWidth;
  for (linalg::LinalgOp op : inRow)
    tileAlongRow(rewriter, op, rowLength, step);

  // 3. Vectorize everything in the loop that has static shapes now.
  vectorizeInside(rewriter, loop, /*contractions=*/false);
  return success();
}
