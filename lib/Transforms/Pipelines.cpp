//===- Pipelines.cpp - fuel pipelines and pass registration ---------------===//

#include "FuelFused/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

/// fuel (and linalg) on tensors -> the LLVM dialect, for the CPU and the
/// ExecutionEngine: the ops with a schedule become tiled, fused, vectorized
/// code (fuel-codegen-cpu); the others are decomposed (fused ops, and linalg
/// ops defined by their decomposition); then bufferize (identity layouts at
/// function boundaries; copies between non-contiguous buffers as loops),
/// lower linalg to loops, vectors to LLVM vectors
/// (f32 math on vectors through polynomial approximations) and convert
/// everything to LLVM. Scalar math the LLVM dialect has no intrinsic for
/// (tanh) calls libm. Every step is deterministic, so results are
/// bit-for-bit reproducible.
static std::string getFuelToLLVMPipeline(const fuel::FuelToLLVMOptions &o) {
  std::string codegen =
      o.codegen ? llvm::formatv("fuel-codegen-cpu{{vector-width={0}},",
                                o.vectorWidth.getValue())
                      .str()
                : std::string();
  std::string distinct =
      o.outParams ? "func.func(fuel-distinct-results)," : "";
  std::string outParams =
      o.outParams ? "buffer-results-to-out-params{hoist-static-allocs "
                  "modify-public-functions},"
                  : "";
  // Scheduled loops (scf.forall) run on the async runtime's threads, or in
  // order on the calling thread.
  std::string forallLowering =
      o.threads > 1
          ? llvm::formatv("scf-forall-to-parallel,"
                          "async-parallel-for{{async-dispatch min-task-size=1 "
                          "num-workers={0}},"
                          "async-to-async-runtime,"
                          "async-runtime-ref-counting,"
                          "async-runtime-ref-counting-opt,"
                          "arith-expand,"
                          "convert-async-to-llvm,",
                          o.threads.getValue())
                .str()
          : std::string("scf-forall-to-for,");
  std::string approximate =
      o.codegen && o.approximateMath ? "fuel-approximate-math," : "";
  return codegen +
         "fuel-decompose,"
         "fuel-decompose-aggregates,"
         "canonicalize,"
         "cse,"
         "loop-invariant-subset-hoisting,"
         "eliminate-empty-tensors," +
         distinct +
         "one-shot-bufferize{bufferize-function-boundaries "
         "function-boundary-type-conversion=identity-layout-map}," +
         outParams +
         "buffer-deallocation-pipeline,"
         "convert-bufferization-to-memref,"
         "func.func(fuel-strided-copies-to-loops)," +
         forallLowering +
         "func.func(convert-linalg-to-loops)," +
         approximate +
         "func.func(lower-vector-multi-reduction),"
         "convert-vector-to-scf{full-unroll},"
         "convert-scf-to-cf,"
         "expand-strided-metadata,"
         "lower-affine,"
         "fuel-bool-memrefs-to-i8,"
         "finalize-memref-to-llvm,"
         "convert-vector-to-llvm{vector-contract-lowering=outerproduct},"
         "convert-math-to-llvm,"
         "convert-math-to-libm,"
         "convert-arith-to-llvm,"
         "convert-func-to-llvm,"
         "convert-cf-to-llvm,"
         "convert-index-to-llvm,"
         "convert-ub-to-llvm,"
         "reconcile-unrealized-casts";
}

void mlir::fuel::buildFuelToLLVMPipeline(OpPassManager &pm,
                                         const FuelToLLVMOptions &options) {
  if (failed(parsePassPipeline(getFuelToLLVMPipeline(options), pm)))
    llvm::report_fatal_error("fuel-to-llvm: a pass of the pipeline is not "
                             "registered");
}

void mlir::fuel::registerFuelPassesAndPipelines() {
  registerFuelPasses();
  PassPipelineRegistration<FuelToLLVMOptions>(
      "fuel-to-llvm",
      "Lower fuel and linalg on tensors to the LLVM dialect for the CPU "
      "(schedule or decompose, bufferize, loops and vectors, LLVM)",
      [](OpPassManager &pm, const FuelToLLVMOptions &options) {
        buildFuelToLLVMPipeline(pm, options);
      });
}
