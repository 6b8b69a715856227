//===- ScheduleUtils.cpp - Steps the schedules share ----------------------===//

#include "ScheduleUtils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::fuel;

void mlir::fuel::vectorizeInside(RewriterBase &rewriter, Operation *loop,
                                  bool contractions) {
  SmallVector<linalg::LinalgOp> toVectorize;
  loop->walk([&](linalg::LinalgOp op) { toVectorize.push_back(op); });
  for (linalg::LinalgOp op : toVectorize) {
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::VectorizationResult> vectorized =
        linalg::vectorize(rewriter, op);
    if (succeeded(vectorized))
      rewriter.replaceOp(op, vectorized->replacements);
  }
  MLIRContext *ctx = loop->getContext();
  RewritePatternSet patterns(ctx);
  vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
  if (contractions)
    vector::populateVectorReductionToContractPatterns(patterns);
  vector::populateSinkVectorOpsPatterns(patterns);
  vector::TransferReadOp::getCanonicalizationPatterns(patterns, ctx);
  vector::TransferWriteOp::getCanonicalizationPatterns(patterns, ctx);
  tensor::populateFoldTensorSubsetIntoVectorTransferPatterns(patterns);
  SmallVector<Operation *> inside;
  loop->walk([&](Operation *op) {
    if (op != loop)
      inside.push_back(op);
  });
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  (void)applyOpPatternsGreedily(inside, std::move(patterns), config);
}

void mlir::fuel::eraseFusedProducers(
    RewriterBase &rewriter, const llvm::SetVector<Operation *> &fused) {
  SmallVector<Operation *> pending(fused.begin(), fused.end());
  bool erased = true;
  while (erased) {
    erased = false;
    for (Operation *&op : pending) {
      if (!op)
        continue;
      // Tile-and-fuse leaves the slices it fused through in place, unused.
      for (Operation *user : llvm::make_early_inc_range(op->getUsers()))
        if (isa<tensor::ExtractSliceOp>(user) && user->use_empty())
          rewriter.eraseOp(user);
      if (!op->use_empty())
        continue;
      rewriter.eraseOp(op);
      op = nullptr;
      erased = true;
    }
  }
}
