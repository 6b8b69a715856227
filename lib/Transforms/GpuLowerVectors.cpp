//===- GpuLowerVectors.cpp - Kernels' vector ops for the GPU conversions --===//
//
// fuel-gpu-lower-vectors: the vector-to-vector half of convert-vector-to-llvm
// (contractions as outer products, transfers as loads and stores, slices,
// broadcasts, shape casts and masks unrolled), applied to the kernels, so
// that convert-gpu-to-nvvm and convert-gpu-to-rocdl, which convert the
// vector dialect too, convert what is left. convert-vector-to-llvm's own
// conversion has no mapping for the GPU address spaces: in a kernel it
// reports an error for each vector access to workgroup memory (and leaves
// it to the GPU conversion), which fails a pipeline run in process.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fuel {
#define GEN_PASS_DEF_FUELGPULOWERVECTORS
#include "FuelFused/Transforms/Passes.h.inc"
} // namespace mlir::fuel

using namespace mlir;

namespace {
struct FuelGpuLowerVectorsPass
    : public fuel::impl::FuelGpuLowerVectorsBase<FuelGpuLowerVectorsPass> {
  void runOnOperation() override {
    // The patterns and options of convert-vector-to-llvm's first step, with
    // contractions as outer products (fused multiply-adds on vectors).
    RewritePatternSet patterns(&getContext());
    vector::populateVectorToVectorCanonicalizationPatterns(patterns);
    vector::populateVectorBitCastLoweringPatterns(patterns);
    vector::populateVectorBroadcastLoweringPatterns(patterns);
    vector::populateVectorContractLoweringPatterns(
        patterns, vector::VectorContractLowering::OuterProduct);
    vector::populateVectorMaskOpLoweringPatterns(patterns);
    vector::populateVectorShapeCastLoweringPatterns(patterns);
    vector::populateVectorInterleaveLoweringPatterns(patterns);
    vector::populateVectorTransposeLoweringPatterns(
        patterns, vector::VectorTransposeLowering::EltWise);
    // Transfers of rank above 1 are unrolled by convert-vector-to-scf.
    vector::populateVectorTransferLoweringPatterns(patterns,
                                                   /*maxTransferRank=*/1);
    vector::populateVectorMaskMaterializationPatterns(
        patterns, /*force32BitVectorIndices=*/true);
    vector::populateVectorInsertExtractStridedSliceTransforms(patterns);
    vector::populateVectorStepLoweringPatterns(patterns);
    vector::populateVectorRankReducingFMAPattern(patterns);
    vector::populateVectorGatherLoweringPatterns(patterns);
    // n-D from_elements and to_elements as 1-D ones, which both GPU
    // conversions take (convert-gpu-to-rocdl has no n-D form of them).
    vector::populateVectorFromElementsUnrollPatterns(patterns);
    vector::populateVectorToElementsUnrollPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
