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
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir {
namespace fuel {

#define GEN_PASS_DECL
#include "FuelFused/Transforms/Passes.h.inc"

/// The options of the fuel-to-llvm pipeline.
struct FuelToLLVMOptions : public PassPipelineOptions<FuelToLLVMOptions> {
  Option<bool> codegen{
      *this, "codegen",
      llvm::cl::desc("Schedule the ops that have a schedule (tiled, fused, "
                     "vectorized); off: every op as decomposed, scalar loops"),
      llvm::cl::init(true)};
  Option<int64_t> vectorWidth{
      *this, "vector-width",
      llvm::cl::desc("Vector lanes of the schedules"), llvm::cl::init(16)};
  Option<bool> approximateMath{
      *this, "approximate-math",
      llvm::cl::desc("Polynomial approximations of f32 math on vectors "
                     "(off: one libm call per lane)"),
      llvm::cl::init(true)};
  Option<int64_t> threads{
      *this, "threads",
      llvm::cl::desc("Threads the scheduled loops run on: above 1, their "
                     "iterations are split into that many blocks run by the "
                     "async runtime (libmlir_async_runtime); 1: one thread"),
      llvm::cl::init(1)};
  Option<bool> outParams{
      *this, "out-params",
      llvm::cl::desc("Return results through out-params the caller "
                     "allocates (every result shape must be static): "
                     "the compiled code writes into the caller's buffers"),
      llvm::cl::init(false)};
};

/// Adds the fuel-to-llvm pipeline: schedule or decompose, bufferize, lower
/// to loops and vectors and to the LLVM dialect, ready for the
/// ExecutionEngine.
void buildFuelToLLVMPipeline(OpPassManager &pm,
                             const FuelToLLVMOptions &options = {});

#define GEN_PASS_REGISTRATION
#include "FuelFused/Transforms/Passes.h.inc"

/// Registers the fuel passes and pipelines.
void registerFuelPassesAndPipelines();

} // namespace fuel
} // namespace mlir

#endif // FUELFUSED_TRANSFORMS_PASSES_H
