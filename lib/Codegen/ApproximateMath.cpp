//===- ApproximateMath.cpp - Vectorizable math functions ------------------===//
//
// libm has no vector entry points the LLVM dialect lowers to, so a
// `math.exp` on a vector becomes one call per lane. Upstream's polynomial
// approximations (Cephes-style, accurate to a few ulp in f32) compute the
// same functions with vector arithmetic; this applies them to the f32 math
// ops on vectors only, leaving scalar code on libm.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Codegen/Schedules.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::fuel;

void mlir::fuel::approximateVectorMath(Operation *root) {
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) {
    if (!isa<math::MathDialect>(op->getDialect()) || op->getNumResults() != 1)
      return;
    auto vector = dyn_cast<VectorType>(op->getResult(0).getType());
    if (vector && vector.getElementType().isF32())
      ops.push_back(op);
  });
  if (ops.empty())
    return;
  RewritePatternSet patterns(root->getContext());
  populateMathPolynomialApproximationPatterns(
      patterns, [](StringRef) { return true; });
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  (void)applyOpPatternsGreedily(ops, std::move(patterns), config);
}
