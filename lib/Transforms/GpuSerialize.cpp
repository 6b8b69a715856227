//===- GpuSerialize.cpp - GPU modules serialized --------------------------===//
//
// fuel-gpu-module-to-llvm-ir: each gpu.module (lowered to the LLVM dialect)
// becomes a gpu.binary holding its device LLVM IR as text. Upstream's
// gpu-module-to-binary needs the target's LLVM backend even for its `llvm`
// format (it sets the data layout from a target machine); the MLIR wheel's
// LLVM has no AMDGPU backend, so fuel-to-rocdl stops at the IR, which
// Debian's llc-22 and ld.lld-22 turn into a code object.
//
// fuel-gpu-module-to-binary: upstream's gpu-module-to-binary with NVPTX's
// 32-bit pointers into shared, local and constant memory (the
// nvptx-short-ptr option of LLVM, set for the pass's run).
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/ROCDL/ROCDLToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/Function.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::fuel {
#define GEN_PASS_DEF_FUELGPUMODULETOBINARY
#define GEN_PASS_DEF_FUELGPUMODULETOLLVMIR
#include "FuelFused/Transforms/Passes.h.inc"
} // namespace mlir::fuel

using namespace mlir;

namespace {
struct FuelGpuModuleToLLVMIRPass
    : public fuel::impl::FuelGpuModuleToLLVMIRBase<FuelGpuModuleToLLVMIRPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registerBuiltinDialectTranslation(registry);
    registerGPUDialectTranslation(registry);
    registerLLVMDialectTranslation(registry);
    registerNVVMDialectTranslation(registry);
    registerROCDLDialectTranslation(registry);
  }

  void runOnOperation() override {
    SmallVector<gpu::GPUModuleOp> modules(
        getOperation().getOps<gpu::GPUModuleOp>());
    for (gpu::GPUModuleOp module : modules) {
      std::optional<ArrayAttr> targets = module.getTargets();
      if (!targets || targets->size() != 1) {
        module.emitError("fuel-gpu-module-to-llvm-ir: the GPU module needs "
                         "one target attribute (rocdl-attach-target or "
                         "nvvm-attach-target)");
        return signalPassFailure();
      }
      llvm::LLVMContext context;
      std::unique_ptr<llvm::Module> llvmModule =
          translateModuleToLLVMIR(module, context, module.getName());
      if (!llvmModule) {
        module.emitError("fuel-gpu-module-to-llvm-ir: the GPU module does "
                         "not translate to LLVM IR (is it lowered to the "
                         "LLVM dialect?)");
        return signalPassFailure();
      }
      if (auto rocdl = dyn_cast<ROCDL::ROCDLTargetAttr>((*targets)[0])) {
        // What fuel-gpu-expand-math leaves to the ROCm device library (f64
        // math): the code object is not linked with it.
        SmallVector<StringRef> library;
        for (llvm::Function &function : *llvmModule)
          if (function.isDeclaration() &&
              (function.getName().starts_with("__ocml_") ||
               function.getName().starts_with("__ockl_")))
            library.push_back(function.getName());
        if (!library.empty())
          emitWarning(module.getLoc())
              << "fuel-gpu-module-to-llvm-ir: the kernels call "
              << llvm::join(library, ", ")
              << " of the ROCm device library, which a code object made "
                 "by llc and ld.lld alone does not link (its loading would "
                 "fail): link ROCm's ocml.bc, or compute in f32";
        // The target's chip, features and wave size go on the kernels, so
        // that the IR alone says what to compile it for.
        llvmModule->setTargetTriple(llvm::Triple("amdgcn-amd-amdhsa"));
        std::string features = rocdl.getFeatures().str();
        features += (features.empty() ? "" : ",") +
                    std::string(rocdl.hasWave64() ? "+wavefrontsize64"
                                                  : "+wavefrontsize32");
        for (llvm::Function &function : *llvmModule) {
          if (function.isDeclaration())
            continue;
          function.addFnAttr("target-cpu", rocdl.getChip());
          function.addFnAttr("target-features", features);
        }
      }
      std::string text;
      llvm::raw_string_ostream os(text);
      llvmModule->print(os, nullptr);
      OpBuilder builder(module);
      auto object = gpu::ObjectAttr::get(
          &getContext(), (*targets)[0], gpu::CompilationTarget::Offload,
          builder.getStringAttr(text), nullptr, nullptr);
      gpu::BinaryOp::create(builder, module.getLoc(), module.getName(),
                            /*offloadingHandler=*/nullptr,
                            builder.getArrayAttr({object}));
      module.erase();
    }
  }
};
} // namespace

namespace {
struct FuelGpuModuleToBinaryPass
    : public fuel::impl::FuelGpuModuleToBinaryBase<FuelGpuModuleToBinaryPass> {
  using Base::Base;

  void runOnOperation() override {
    // The NVPTX backend's option, registered where LLVM has that backend
    // (a command-line option of type bool: cl::opt<bool>).
    auto *shortPtr = static_cast<llvm::cl::opt<bool> *>(
        llvm::cl::getRegisteredOptions().lookup("nvptx-short-ptr"));
    if (!shortPtr) {
      getOperation().emitError(
          "fuel-gpu-module-to-binary: LLVM has no NVPTX backend here "
          "(its option nvptx-short-ptr is not registered)");
      return signalPassFailure();
    }
    GpuModuleToBinaryPassOptions options;
    options.compilationTarget = format;
    options.toolkitPath = toolkit;
    OpPassManager pm(ModuleOp::getOperationName());
    pm.addPass(createGpuModuleToBinaryPass(options));
    bool saved = *shortPtr;
    shortPtr->setValue(shortPointers);
    LogicalResult result = runPipeline(pm, getOperation());
    shortPtr->setValue(saved);
    if (failed(result))
      signalPassFailure();
  }
};
} // namespace
