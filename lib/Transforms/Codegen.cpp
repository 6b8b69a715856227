//===- Codegen.cpp - The fuel-codegen-cpu and fuel-approximate-math passes ===//
//
// Thin drivers over the Codegen library: which ops get their schedule, and
// where the vector math approximations apply.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Codegen/Schedules.h"
#include "FuelFused/IR/FuelOps.h"
#include "FuelFused/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::fuel {
#define GEN_PASS_DEF_FUELCODEGENCPU
#define GEN_PASS_DEF_FUELAPPROXIMATEMATH
#include "FuelFused/Transforms/Passes.h.inc"
} // namespace mlir::fuel

using namespace mlir;
using namespace mlir::fuel;

namespace {
struct FuelCodegenCPUPass
    : public fuel::impl::FuelCodegenCPUBase<FuelCodegenCPUPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    if (vectorWidth < 1)
      return emitError(UnknownLoc::get(context))
             << "fuel-codegen-cpu: vector-width must be at least 1, got "
             << static_cast<int64_t>(vectorWidth);
    return success();
  }

  void runOnOperation() override {
    ScheduleOptions options;
    options.vectorWidth = vectorWidth;
    SmallVector<FusedOp> candidates;
    getOperation()->walk([&](FusedOp op) {
      if (lookupSchedule(op.getInfo()))
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (FusedOp op : candidates) {
      std::string why;
      if (succeeded(canSchedule(op, options, why)) &&
          succeeded(decomposeWithSchedule(rewriter, op, options, why)))
        continue;
      if (report)
        op.emitRemark() << "fuel-codegen-cpu: " << op.getInfo().name
                        << " not scheduled: " << why;
    }
  }
};

struct FuelApproximateMathPass
    : public fuel::impl::FuelApproximateMathBase<FuelApproximateMathPass> {
  void runOnOperation() override { approximateVectorMath(getOperation()); }
};
} // namespace
