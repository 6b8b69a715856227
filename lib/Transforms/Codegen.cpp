//===- Codegen.cpp - The codegen passes: schedules, vector math, trees ---===//
//
// Thin drivers over the Codegen library: which ops get their schedule, and
// where the vector math approximations apply.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Codegen/Schedules.h"
#include "FuelFused/IR/FuelOps.h"
#include "FuelFused/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::fuel {
#define GEN_PASS_DEF_FUELCODEGENCPU
#define GEN_PASS_DEF_FUELAPPROXIMATEMATH
#define GEN_PASS_DEF_FUELVECTORREDUCTIONTREES
#define GEN_PASS_DEF_FUELCODEGENGPU
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
    if (vectorRegisters < 4)
      return emitError(UnknownLoc::get(context))
             << "fuel-codegen-cpu: vector-registers must be at least 4, got "
             << static_cast<int64_t>(vectorRegisters);
    if (vectorRegisterBits < 64 || vectorRegisterBits % 32 != 0)
      return emitError(UnknownLoc::get(context))
             << "fuel-codegen-cpu: vector-register-bits must be a multiple "
                "of 32 of at least 64, got "
             << static_cast<int64_t>(vectorRegisterBits);
    if (threads < 1)
      return emitError(UnknownLoc::get(context))
             << "fuel-codegen-cpu: threads must be at least 1, got "
             << static_cast<int64_t>(threads);
    return success();
  }

  void runOnOperation() override {
    ScheduleOptions options;
    options.vectorWidth = vectorWidth;
    options.vectorRegisters = vectorRegisters;
    options.vectorRegisterBits = vectorRegisterBits;
    options.reciprocal = reciprocal;
    options.threads = threads;
    SmallVector<FusedOp> candidates;
    getOperation()->walk([&](FusedOp op) {
      if (lookupSchedule(op.getInfo()))
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (FusedOp op : candidates) {
      std::string why;
      // (A failed decomposeWithSchedule may have replaced the op: by a
      // padded one, for the contraction schedule.)
      Location loc = op.getLoc();
      StringRef name = op.getInfo().name;
      if (succeeded(canSchedule(op, options, why)) &&
          succeeded(decomposeWithSchedule(rewriter, op, options, why)))
        continue;
      if (report)
        mlir::emitRemark(loc) << "fuel-codegen-cpu: " << name
                              << " not scheduled: " << why;
    }
  }
};

struct FuelCodegenGPUPass
    : public fuel::impl::FuelCodegenGPUBase<FuelCodegenGPUPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    if (maxThreads < 32 || !llvm::isPowerOf2_64(maxThreads))
      return emitError(UnknownLoc::get(context))
             << "fuel-codegen-gpu: max-threads must be a power of two of at "
                "least 32, got "
             << static_cast<int64_t>(maxThreads);
    if (maxStagedHeadDim < 0 || maxStagedHeadDim % 16)
      return emitError(UnknownLoc::get(context))
             << "fuel-codegen-gpu: max-staged-head-dim must be a multiple of "
                "16 (0 for none), got "
             << static_cast<int64_t>(maxStagedHeadDim);
    if (ownRowsBytes < 0 || ownRowsBytes > 48 * 1024)
      return emitError(UnknownLoc::get(context))
             << "fuel-codegen-gpu: own-rows-bytes must be between 0 and "
                "49152 (a block's static workgroup memory), got "
             << static_cast<int64_t>(ownRowsBytes);
    if (computeUnits < 1)
      return emitError(UnknownLoc::get(context))
             << "fuel-codegen-gpu: compute-units must be at least 1, got "
             << static_cast<int64_t>(computeUnits);
    return success();
  }

  void runOnOperation() override {
    GpuScheduleOptions options;
    options.maxThreads = maxThreads;
    options.maxStagedHeadDim = maxStagedHeadDim;
    options.computeUnits = computeUnits;
    options.maxOwnRowsBlockBytes = ownRowsBytes;
    SmallVector<FusedOp> candidates;
    getOperation()->walk([&](FusedOp op) { candidates.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (FusedOp op : candidates) {
      std::string why;
      std::string name = op.getInfo().name.str();
      Location loc = op.getLoc();
      if (succeeded(canScheduleGpu(op, options, why)) &&
          succeeded(decomposeWithGpuSchedule(rewriter, op, options, why))) {
        if (report && !why.empty())
          emitRemark(loc) << "fuel-codegen-gpu: " << name
                          << " partly scheduled: " << why;
        continue;
      }
      if (report)
        op.emitRemark() << "fuel-codegen-gpu: " << name
                        << " not scheduled: " << why;
    }
  }
};

struct FuelApproximateMathPass
    : public fuel::impl::FuelApproximateMathBase<FuelApproximateMathPass> {
  void runOnOperation() override { approximateVectorMath(getOperation()); }
};

struct FuelVectorReductionTreesPass
    : public fuel::impl::FuelVectorReductionTreesBase<
          FuelVectorReductionTreesPass> {
  void runOnOperation() override { reduceVectorsAsTrees(getOperation()); }
};
} // namespace
