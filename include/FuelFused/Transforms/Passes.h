//===- Passes.h - fuel passes and pipelines ---------------------*- C++ -*-===//

#ifndef FUELFUSED_TRANSFORMS_PASSES_H
#define FUELFUSED_TRANSFORMS_PASSES_H

#include "FuelFused/IR/FuelDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir {
namespace fuel {

#define GEN_PASS_DECL
#include "FuelFused/Transforms/Passes.h.inc"

/// Adds the fuel-to-llvm pipeline: decompose, bufferize, lower to loops and
/// to the LLVM dialect, ready for the ExecutionEngine.
void buildFuelToLLVMPipeline(OpPassManager &pm);

#define GEN_PASS_REGISTRATION
#include "FuelFused/Transforms/Passes.h.inc"

/// Registers the fuel passes and pipelines.
void registerFuelPassesAndPipelines();

} // namespace fuel
} // namespace mlir

#endif // FUELFUSED_TRANSFORMS_PASSES_H
