//===- DecomposeAggregates.cpp - linalg aggregate ops to generics ---------===//
//
// Ops that upstream defines by their decomposition (linalg.softmax, through
// linalg::AggregatedOpInterface) are replaced by it, so that the rest of the
// CPU pipeline (bufferization, loops) sees only structured ops.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::fuel {
#define GEN_PASS_DEF_FUELDECOMPOSEAGGREGATES
#include "FuelFused/Transforms/Passes.h.inc"
} // namespace mlir::fuel

using namespace mlir;

namespace {

struct FuelDecomposeAggregatesPass
    : public fuel::impl::FuelDecomposeAggregatesBase<
          FuelDecomposeAggregatesPass> {
  void runOnOperation() override {
    SmallVector<linalg::AggregatedOpInterface> ops;
    getOperation()->walk(
        [&](linalg::AggregatedOpInterface op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::AggregatedOpInterface op : ops) {
      rewriter.setInsertionPoint(op);
      FailureOr<SmallVector<Value>> values = op.decomposeOperation(rewriter);
      if (failed(values)) {
        op->emitError("fuel-decompose-aggregates: the op does not decompose");
        return signalPassFailure();
      }
      rewriter.replaceOp(op, *values);
    }
  }
};

} // namespace
