//===- GpuLowerAllReduce.cpp - gpu.all_reduce with known launch sizes -----===//
//
// fuel-gpu-lower-all-reduce: upstream's all-reduce patterns and its
// shuffle lowering of clustered subgroup reductions, applied before the
// conversion to NVVM or ROCDL (neither applies the latter itself), then the
// kernel's known block and grid sizes (gpu-kernel-outlining records them)
// substituted for gpu.block_dim and gpu.grid_dim. The conversions lower a
// block size to a read of the launch's dimensions: a special register on
// NVIDIA GPUs, a call of __ockl_get_local_size (a ROCm device library
// function) on AMD GPUs, which a code object linked without that library
// cannot resolve.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fuel {
#define GEN_PASS_DEF_FUELGPULOWERALLREDUCE
#include "FuelFused/Transforms/Passes.h.inc"
} // namespace mlir::fuel

using namespace mlir;

namespace {
/// The lanes a clustered subgroup reduction is lowered for: a warp, and
/// half of AMD's waves of 64 (as upstream's all-reduce lowering assumes),
/// which for clusters of at most 32 lanes shuffle alike.
constexpr unsigned kSubgroupLanes = 32;

/// `op` (gpu.block_dim or gpu.grid_dim) as the constant its kernel's known
/// launch size gives for its dimension.
template <typename DimOp>
struct KnownLaunchDim : OpRewritePattern<DimOp> {
  using OpRewritePattern<DimOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(DimOp op,
                                PatternRewriter &rewriter) const override {
    auto kernel = op->template getParentOfType<gpu::GPUFuncOp>();
    if (!kernel)
      return failure();
    std::optional<ArrayRef<int32_t>> known =
        std::is_same_v<DimOp, gpu::BlockDimOp> ? kernel.getKnownBlockSize()
                                               : kernel.getKnownGridSize();
    auto dim = static_cast<unsigned>(op.getDimension());
    if (!known || dim >= known->size())
      return failure();
    rewriter.replaceOpWithNewOp<arith::ConstantIndexOp>(op, (*known)[dim]);
    return success();
  }
};

struct FuelGpuLowerAllReducePass
    : public fuel::impl::FuelGpuLowerAllReduceBase<FuelGpuLowerAllReducePass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    // First the reductions (they create block_dim ops), then the sizes.
    // A subgroup reduction without a cluster size, or with one over 32,
    // is left for the conversion to reject.
    RewritePatternSet allReduce(ctx);
    populateGpuAllReducePatterns(allReduce);
    populateGpuLowerClusteredSubgroupReduceToShufflePatterns(
        allReduce, kSubgroupLanes, /*shuffleBitwidth=*/32);
    if (failed(applyPatternsGreedily(getOperation(), std::move(allReduce))))
      return signalPassFailure();
    RewritePatternSet known(ctx);
    known.add<KnownLaunchDim<gpu::BlockDimOp>, KnownLaunchDim<gpu::GridDimOp>>(
        ctx);
    if (failed(applyPatternsGreedily(getOperation(), std::move(known))))
      return signalPassFailure();
  }
};
} // namespace
