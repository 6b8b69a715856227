//===- Passes.h - fuel passes and pipelines ---------------------*- C++ -*-===//

#ifndef FUELFUSED_TRANSFORMS_PASSES_H
#define FUELFUSED_TRANSFORMS_PASSES_H

#include "FuelFused/IR/FuelDialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
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
  Option<int64_t> vectorRegisters{
      *this, "vector-registers",
      llvm::cl::desc("Vector registers of the target (32 with AVX-512, 16 "
                     "with AVX2): the register tiles are sized to them"),
      llvm::cl::init(32)};
  Option<int64_t> vectorRegisterBits{
      *this, "vector-register-bits",
      llvm::cl::desc("Bits of one vector register of the target (512 with "
                     "AVX-512, 256 with AVX2)"),
      llvm::cl::init(512)};
  Option<bool> approximateMath{
      *this, "approximate-math",
      llvm::cl::desc("Polynomial approximations of f32 math on vectors, "
                     "and a row's reciprocal multiplied instead of dividing "
                     "by it (off: one libm call per lane, a divide per "
                     "element)"),
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
  Option<bool> genericAllocation{
      *this, "generic-allocation",
      llvm::cl::desc("Buffers are allocated and freed by calls to "
                     "_mlir_memref_to_llvm_alloc, _aligned_alloc and _free "
                     "(upstream's generic allocation functions), which "
                     "whoever runs the code provides (the Python runner: "
                     "malloc, with large buffers on transparent huge "
                     "pages); off: malloc and free"),
      llvm::cl::init(false)};
};

/// Adds the fuel-to-llvm pipeline: schedule or decompose, bufferize, lower
/// to loops and vectors and to the LLVM dialect, ready for the
/// ExecutionEngine.
void buildFuelToLLVMPipeline(OpPassManager &pm,
                             const FuelToLLVMOptions &options = {});

/// The options of the fuel-to-nvvm pipeline.
struct FuelToNVVMOptions : public PassPipelineOptions<FuelToNVVMOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("The GPU's architecture (sm_80, "
                                          "sm_90, ...)"),
                           llvm::cl::init("sm_80")};
  Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features: the PTX ISA version (+ptx80 is PTX "
                     "8.0, what sm_90 needs at least)"),
      llvm::cl::init("+ptx80")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("What each GPU module becomes: isa (PTX text), bin "
                     "(cubin: needs ptxas), fatbin, llvm (LLVM IR), offload "
                     "(LLVM bitcode), emulator (host code for the CPU "
                     "emulator of the GPU runtime: fuel-gpu-emulated-"
                     "kernels), emulator-profile (the same, with its "
                     "memory-access profile)"),
      llvm::cl::init("isa")};
  Option<int> optLevel{*this, "opt-level",
                       llvm::cl::desc("LLVM optimization level of the "
                                      "device code (0 to 3)"),
                       llvm::cl::init(3)};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("The CUDA toolkit root, for libdevice (exp, log, ...) "
                     "and ptxas; empty: the environment's CUDA_ROOT, "
                     "CUDA_HOME or CUDA_PATH"),
      llvm::cl::init("")};
  Option<int64_t> maxThreads{
      *this, "max-threads",
      llvm::cl::desc("Threads per block at most (a power of two from 32 to "
                     "1024)"),
      llvm::cl::init(256)};
  Option<int64_t> computeUnits{
      *this, "compute-units",
      llvm::cl::desc("The GPU's multiprocessors (SMs), which the "
                     "contractions' block tiles are chosen to fill; 0: "
                     "those of the largest GPU of the chip's generation"),
      llvm::cl::init(0)};
  Option<int64_t> ownRowsBytes{
      *this, "own-rows-bytes",
      llvm::cl::desc("The most shared memory (bytes, at most 49152) a "
                     "staged attention block takes once the rows each "
                     "thread reads at every step are copied there too "
                     "(fuel-codegen-gpu); 0: read from global memory"),
      llvm::cl::init(32 * 1024)};
  Option<bool> shortPointers{
      *this, "short-pointers",
      llvm::cl::desc("32-bit addresses of shared, local and constant "
                     "memory (a shared address one register, not two: "
                     "LLVM's nvptx-short-ptr, fuel-gpu-module-to-binary)"),
      llvm::cl::init(true)};
  Option<bool> codegen{
      *this, "codegen",
      llvm::cl::desc("Schedule the ops that have a GPU schedule; off: every "
                     "op as decomposed, one kernel per loop nest"),
      llvm::cl::init(true)};
};

/// Adds the fuel-to-nvvm pipeline: schedule or decompose, bufferize, map
/// loops to GPU kernels, outline them and lower them to NVVM, and serialize
/// each GPU module (PTX by default); the host side calls the GPU runtime.
/// Fails when an option is out of range.
LogicalResult buildFuelToNVVMPipeline(OpPassManager &pm,
                                      const FuelToNVVMOptions &options = {});

/// The options of the fuel-to-rocdl pipeline.
struct FuelToROCDLOptions : public PassPipelineOptions<FuelToROCDLOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("The AMD GPU's architecture "
                                          "(gfx90a, gfx942, ...)"),
                           llvm::cl::init("gfx942")};
  Option<std::string> features{
      *this, "features", llvm::cl::desc("Target features (+sramecc, ...)"),
      llvm::cl::init("")};
  Option<bool> wave64{*this, "wave64",
                      llvm::cl::desc("64-lane waves (the gfx9 default); "
                                     "false: 32-lane waves"),
                      llvm::cl::init(true)};
  Option<int> optLevel{*this, "opt-level",
                       llvm::cl::desc("Optimization level recorded on the "
                                      "target (0 to 3; llc applies it)"),
                       llvm::cl::init(3)};
  Option<int64_t> maxThreads{
      *this, "max-threads",
      llvm::cl::desc("Threads per block at most (a power of two from 32 to "
                     "1024)"),
      llvm::cl::init(256)};
  Option<int64_t> computeUnits{
      *this, "compute-units",
      llvm::cl::desc("The GPU's multiprocessors (compute units), which the "
                     "contractions' block tiles are chosen to fill; 0: "
                     "those of the largest GPU of the chip's generation"),
      llvm::cl::init(0)};
  Option<int64_t> ownRowsBytes{
      *this, "own-rows-bytes",
      llvm::cl::desc("The most LDS (bytes, at most 49152) a staged "
                     "attention block takes once the rows each thread "
                     "reads at every step are copied there too "
                     "(fuel-codegen-gpu); 0, the default: read from global "
                     "memory (copied, the AMDGPU backend took more than 256 "
                     "VGPRs in half the kernels it changed)"),
      llvm::cl::init(0)};
  Option<bool> codegen{
      *this, "codegen",
      llvm::cl::desc("Schedule the ops that have a GPU schedule; off: every "
                     "op as decomposed, one kernel per loop nest"),
      llvm::cl::init(true)};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("What each GPU module becomes: llvm (its device LLVM "
                     "IR, for llc-22 and ld.lld-22), emulator (host code "
                     "for the CPU emulator of the GPU runtime: "
                     "fuel-gpu-emulated-kernels), emulator-profile (the "
                     "same, with its memory-access profile)"),
      llvm::cl::init("llvm")};
};

/// Adds the fuel-to-rocdl pipeline: fuel-to-nvvm's steps up to the GPU
/// dialect, then ROCDL, each GPU module's device LLVM IR in a gpu.binary
/// (for llc-22 -mtriple=amdgcn-amd-amdhsa and ld.lld-22), and host code
/// that calls the GPU runtime. Fails when an option is out of range.
LogicalResult buildFuelToROCDLPipeline(OpPassManager &pm,
                                       const FuelToROCDLOptions &options = {});

#define GEN_PASS_REGISTRATION
#include "FuelFused/Transforms/Passes.h.inc"

/// Registers the fuel passes and pipelines.
void registerFuelPassesAndPipelines();

} // namespace fuel
} // namespace mlir

#endif // FUELFUSED_TRANSFORMS_PASSES_H
