//===- Pipelines.cpp - fuel pipelines and pass registration ---------------===//

#include "FuelFused/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

/// fuel (and linalg) on tensors -> the LLVM dialect, for the CPU and the
/// ExecutionEngine: decompose (fused ops, and linalg ops defined by their
/// decomposition), bufferize (identity layouts at function
/// boundaries), lower linalg to loops, and convert everything to LLVM.
/// Math the LLVM dialect has no intrinsic for (tanh) calls libm. Every step
/// is deterministic, so results are bit-for-bit reproducible.
static constexpr const char kFuelToLLVM[] =
    "fuel-decompose,"
    "fuel-decompose-aggregates,"
    "canonicalize,"
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    "buffer-deallocation-pipeline,"
    "convert-bufferization-to-memref,"
    "func.func(convert-linalg-to-loops),"
    "convert-scf-to-cf,"
    "expand-strided-metadata,"
    "lower-affine,"
    "fuel-bool-memrefs-to-i8,"
    "finalize-memref-to-llvm,"
    "convert-math-to-llvm,"
    "convert-math-to-libm,"
    "convert-arith-to-llvm,"
    "convert-func-to-llvm,"
    "convert-cf-to-llvm,"
    "convert-index-to-llvm,"
    "reconcile-unrealized-casts";

void mlir::fuel::buildFuelToLLVMPipeline(OpPassManager &pm) {
  if (failed(parsePassPipeline(kFuelToLLVM, pm)))
    llvm::report_fatal_error("fuel-to-llvm: a pass of the pipeline is not "
                             "registered");
}

void mlir::fuel::registerFuelPassesAndPipelines() {
  registerFuelPasses();
  PassPipelineRegistration<>(
      "fuel-to-llvm",
      "Lower fuel and linalg on tensors to the LLVM dialect for the CPU "
      "(decompose, bufferize, loops, LLVM)",
      buildFuelToLLVMPipeline);
}
