//===- GpuDeviceOptimization.h - A GPU module optimized as for its target -===//
//
// Used by fuel-gpu-emulated-kernels with memory-profile: the kernels the
// emulator counts the loads and stores of are the kernels LLVM's
// optimizer leaves for the GPU.
//
//===----------------------------------------------------------------------===//

#ifndef FUEL_LIB_TRANSFORMS_GPUDEVICEOPTIMIZATION_H
#define FUEL_LIB_TRANSFORMS_GPUDEVICEOPTIMIZATION_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
class DialectRegistry;

namespace fuel {

/// Runs LLVM's optimization pipeline over `module` (lowered to the LLVM
/// dialect, its device operations already calls into the emulator, whose
/// declarations `top` holds), as the target's serialization would: at the
/// target's opt level, with the NVPTX target machine for an NVVM target
/// (its chip and features), then EarlyCSE and the load-store vectorizer,
/// which the NVPTX and AMDGPU code generators run before instruction
/// selection. The module's functions and globals become the optimized
/// ones, imported back into the LLVM dialect, with the sites' file
/// locations kept (through line tables) and no debug information left.
/// Emits an error on `module` and fails if a step fails.
LogicalResult optimizeAsForTheDevice(gpu::GPUModuleOp module, ModuleOp top);

/// The translations and imports that optimizeAsForTheDevice needs.
void registerDeviceOptimizationDependencies(DialectRegistry &registry);

} // namespace fuel
} // namespace mlir

#endif // FUEL_LIB_TRANSFORMS_GPUDEVICEOPTIMIZATION_H
