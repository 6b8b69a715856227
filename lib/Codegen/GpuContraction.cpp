//===- GpuContraction.cpp - The contraction schedule on a GPU -------------===//
//
// The contraction schedule's GPU form (fused_linear): the CPU form's tiles
// mapped to the GPU's. The last op is tiled into block tiles of the output
// (an scf.forall on `#gpu.block`s, the contraction, its fill and the bias
// add fused in), each block tile into 4 x 4 thread tiles (an scf.forall on
// `#gpu.thread`s, x along N: a warp writes consecutive columns), and each
// thread's contraction over K in steps with its accumulator in registers
// (vector.contract, lowered to fused multiply-adds). f16 and bf16 operands
// are widened to f32 step by step. Operands are read from global memory
// through the caches: no shared-memory staging yet. A quantized matmul with
// many rows takes the same tiles with the contraction as the root and the
// weight's dequantization fused into each step (GpuQuantized.cpp).
//
//===----------------------------------------------------------------------===//

#include "Contraction.h"
#include "GpuSchedules.h"
#include "ScheduleUtils.h"

#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::fuel;

namespace {
/// A thread's tile of the output, and the reduction step.
constexpr int64_t kThreadM = 4, kThreadN = 4, kStepK = 8;
/// The block tile at most.
constexpr int64_t kBlockM = 64, kBlockN = 64;
} // namespace

/// The block tile for an M x N output with at most `maxThreads` threads.
static std::pair<int64_t, int64_t> blockTile(int64_t m, int64_t n,
                                             int64_t maxThreads) {
  int64_t tileM = tileOf(m, kBlockM, kThreadM);
  int64_t tileN = tileOf(n, kBlockN, kThreadN);
  while (tileM && tileN &&
         (tileM / kThreadM) * (tileN / kThreadN) > maxThreads) {
    if (tileM >= tileN && tileM > kThreadM)
      tileM /= 2;
    else
      tileN /= 2;
  }
  return {tileM, tileN};
}

LogicalResult mlir::fuel::canScheduleGpuContraction(
    FusedOp op, const GpuScheduleOptions &options, std::string &why) {
  for (Type t : llvm::concat<Type>(op->getOperandTypes(),
                                   op->getResultTypes())) {
    Type elt = cast<RankedTensorType>(t).getElementType();
    if (!elt.isF32() && !elt.isF16() && !elt.isBF16()) {
      why = "the GPU contraction schedule handles f32, f16 and bf16";
      return failure();
    }
  }
  FusedLinearView linear(op);
  auto a = cast<RankedTensorType>(linear.getA().getType());
  auto b = cast<RankedTensorType>(linear.getB().getType());
  if (a.getRank() > 3) {
    why = "the GPU contraction schedule takes at most one leading dim (a "
          "grid dim), got " +
          std::to_string(a.getRank() - 2);
    return failure();
  }
  int64_t m = a.getShape()[a.getRank() - 2], n = b.getShape().back();
  if (m % kThreadM != 0 || n % kThreadN != 0) {
    why = "the GPU contraction schedule needs M and N multiples of 4 (got " +
          std::to_string(m) + ", " + std::to_string(n) + ")";
    return failure();
  }
  return success();
}

LogicalResult mlir::fuel::scheduleGpuContraction(
    RewriterBase &rewriter, linalg::LinalgOp root,
    const llvm::SmallPtrSetImpl<Operation *> &decomposition,
    const GpuScheduleOptions &options, std::string &why) {
  // The root: elementwise over the output (fused_linear's bias add), or
  // the contraction itself (a quantized matmul's), its reduction untiled.
  unsigned rank = root.getNumLoops();
  AffineMap out = root->getNumResults() == 1
                      ? root.getIndexingMapMatchingResult(root->getResult(0))
                      : AffineMap();
  unsigned outRank = out ? out.getNumResults() : 0;
  if (!out || root.getNumReductionLoops() > 1 || outRank < 2 || outRank > 3 ||
      !out.isProjectedPermutation() ||
      outRank + root.getNumReductionLoops() != rank) {
    why = "the op's last step is not elementwise over the output or a "
          "contraction into it";
    return failure();
  }
  unsigned loopM = out.getDimPosition(outRank - 2),
           loopN = out.getDimPosition(outRank - 1);
  SmallVector<int64_t> ranges = root.getStaticLoopRanges();
  auto [tileM, tileN] =
      blockTile(ranges[loopM], ranges[loopN], options.maxThreads);
  if (!tileM || !tileN) {
    why = "the output has no block tile of whole thread tiles";
    return failure();
  }
  SmallVector<unsigned> reductionDims;
  root.getReductionDims(reductionDims);
  auto sizes = [&](int64_t tm, int64_t tn) {
    SmallVector<OpFoldResult> s(rank, rewriter.getIndexAttr(1));
    for (unsigned r : reductionDims)
      s[r] = rewriter.getIndexAttr(0);
    s[loopM] = rewriter.getIndexAttr(tm);
    s[loopN] = rewriter.getIndexAttr(tn);
    return s;
  };

  // 1. Block tiles, the decomposition fused.
  FailureOr<TiledRoot> blocks = tileAndFuseRoot(
      rewriter, cast<TilingInterface>(root.getOperation()),
      sizes(tileM, tileN), scf::SCFTilingOptions::LoopType::ForallOp,
      [&](Operation *producer) { return decomposition.contains(producer); });
  if (failed(blocks)) {
    why = "tiling the output into blocks failed";
    return failure();
  }
  auto blockLoop = cast<scf::ForallOp>(blocks->loop);

  // 2. Thread tiles of each block tile, the contraction fused.
  FailureOr<TiledRoot> threads = tileAndFuseRoot(
      rewriter, blocks->tiled, sizes(kThreadM, kThreadN),
      scf::SCFTilingOptions::LoopType::ForallOp, [&](Operation *producer) {
        return blockLoop->isProperAncestor(producer);
      });
  if (failed(threads)) {
    why = "tiling a block tile into thread tiles failed";
    return failure();
  }
  auto threadLoop = cast<scf::ForallOp>(threads->loop);
  privatizeEmptySlices(rewriter, blockLoop);
  mapForall(rewriter, blockLoop, /*threads=*/false);
  mapForall(rewriter, threadLoop, /*threads=*/true);

  // 3. Each thread's reduction in steps (the largest power of two up to
  // kStepK that divides K), the accumulator in registers.
  int64_t step = kStepK;
  threadLoop->walk([&](linalg::LinalgOp op) {
    SmallVector<unsigned> reductions;
    op.getReductionDims(reductions);
    if (reductions.size() == 1)
      step = std::max<int64_t>(
          tileOf(op.getStaticLoopRanges()[reductions.front()], step, 1), 1);
  });
  tileContractionReductions(rewriter, threadLoop, step);
  // What a step computes for its contraction (a dequantized weight's
  // elements, and the scales they read) is written into a slice of the
  // thread tile's whole empty tensor: a buffer of the step's own size
  // instead.
  privatizeEmptySlices(rewriter, threadLoop);

  // 4. Vectorize the thread tiles.
  vectorizeInside(rewriter, threadLoop, /*contractions=*/true);
  return success();
}
