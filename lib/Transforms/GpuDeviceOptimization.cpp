//===- GpuDeviceOptimization.cpp - A GPU module optimized as for its target ==//
//
// The GPU emulator runs a kernel as the LLVM dialect has it; the GPU runs
// it as LLVM's optimizer leaves it: loads of the same address merged,
// neighbouring loads made one vector load, loop invariants hoisted. A
// profile of memory requests counted on the former counts requests the
// GPU never makes. So, for the profile, each GPU module goes through the
// pipeline its serialization runs (ModuleToObject: the target machine's
// default pipeline at the target's opt level) and the IR passes the
// NVPTX and AMDGPU code generators run before instruction selection
// (EarlyCSE, the load-store vectorizer), and comes back into the LLVM
// dialect, where fuel-gpu-emulated-kernels counts its loads and stores.
//
// The device operations are calls into the emulator by then; they get the
// attributes of the intrinsics they stand for (a thread's position and the
// math library touch no memory, lane exchanges only memory the kernel
// cannot see, barriers any), so the optimizer moves loads and stores
// around them as it does around the intrinsics. The wheel's LLVM has no
// AMDGPU backend: a ROCDL module is optimized with the target-independent
// pipeline (its data layout, no target machine).
//
//===----------------------------------------------------------------------===//

#include "GpuDeviceOptimization.h"

#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Utils.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMIRToLLVMTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Target/LLVMIR/Import.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Scalar/EarlyCSE.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"
#include "llvm/Transforms/Vectorize/LoadStoreVectorizer.h"

using namespace mlir;

void mlir::fuel::registerDeviceOptimizationDependencies(
    DialectRegistry &registry) {
  registry.insert<DLTIDialect, LLVM::LLVMDialect>();
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerLLVMDialectImport(registry);
}

namespace {

/// Gives the declarations of `m` (the emulator's entry points and the math
/// library's functions) the attributes of the device operations they
/// stand for.
void describeDeclarations(llvm::Module &m) {
  for (llvm::Function &f : m) {
    StringRef name = f.getName();
    if (!f.isDeclaration() || f.isIntrinsic())
      continue;
    if (name == "fuel_emu_sreg" || name == "fuel_emu_mbcnt" ||
        name.starts_with("__nv_") || name.starts_with("__ocml_")) {
      // A thread's position, its lane, libdevice and OCML: no memory.
      f.setDoesNotAccessMemory();
      f.setDoesNotThrow();
      f.setWillReturn();
    } else if (name == "fuel_emu_shfl" || name == "fuel_emu_bpermute" ||
               name == "fuel_emu_swizzle") {
      // Lane exchanges: memory the kernel does not see.
      f.setConvergent();
      f.setDoesNotThrow();
      f.setWillReturn();
      f.setMemoryEffects(llvm::MemoryEffects::inaccessibleMemOnly());
    } else if (name == "fuel_emu_barrier") {
      // A barrier orders every access to memory.
      f.setConvergent();
      f.setDoesNotThrow();
    }
  }
}

/// The NVPTX target machine for `target` (its triple, chip and features),
/// else null with `why` said.
std::unique_ptr<llvm::TargetMachine>
nvptxMachine(NVVM::NVVMTargetAttr target, std::string &why) {
  NVVM::SerializeGPUModuleBase::init();
  llvm::Triple triple(target.getTriple());
  const llvm::Target *machine =
      llvm::TargetRegistry::lookupTarget(triple, why);
  if (!machine)
    return nullptr;
  return std::unique_ptr<llvm::TargetMachine>(machine->createTargetMachine(
      triple, target.getChip(), target.getFeatures(), {}, {}));
}

/// Runs the default pipeline at `optLevel` (with `machine`'s passes and
/// cost model where there is one), then EarlyCSE and the load-store
/// vectorizer as the GPU code generators do.
void optimize(llvm::Module &m, llvm::TargetMachine *machine, int optLevel) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(machine);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  if (optLevel <= 0) {
    builder.buildO0DefaultPipeline(llvm::OptimizationLevel::O0)
        .run(m, mam);
    return;
  }
  llvm::OptimizationLevel level = optLevel == 1   ? llvm::OptimizationLevel::O1
                                  : optLevel == 2 ? llvm::OptimizationLevel::O2
                                                  : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager passes = builder.buildPerModuleDefaultPipeline(level);
  llvm::FunctionPassManager late;
  late.addPass(llvm::EarlyCSEPass());
  late.addPass(llvm::LoadStoreVectorizerPass());
  passes.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(late)));
  passes.run(m, mam);
}

/// The first file location in `loc` (the innermost one of an inlined
/// call), else an unknown location: what a site's line says, without the
/// debug information that carried it.
Location fileLocation(Location loc) {
  Location found = UnknownLoc::get(loc->getContext());
  loc->walk([&](Location inner) {
    if (!isa<FileLineColLoc>(inner))
      return WalkResult::advance();
    found = inner;
    return WalkResult::interrupt();
  });
  return found;
}

} // namespace

LogicalResult mlir::fuel::optimizeAsForTheDevice(gpu::GPUModuleOp module,
                                                 ModuleOp top) {
  MLIRContext *ctx = module.getContext();
  Attribute target = (*module.getTargets())[0];
  auto fail = [&](const Twine &why) {
    return module.emitError("fuel-gpu-emulated-kernels: cannot optimize the "
                            "GPU module as for its target: ")
           << why;
  };

  // A module to translate: the GPU module's functions and globals, the
  // declarations in `top` they call, its data layout.
  OwningOpRef<ModuleOp> copy = ModuleOp::create(module.getLoc());
  for (NamedAttribute attr : module->getDiscardableAttrs())
    if (llvm::is_contained({"llvm", "dlti"},
                           attr.getName().strref().split('.').first))
      (*copy)->setAttr(attr.getName(), attr.getValue());
  OpBuilder builder = OpBuilder::atBlockEnd(copy->getBody());
  llvm::StringSet<> kernels;
  for (Operation &op : module.getBody()->getOperations()) {
    if (op.hasAttr(gpu::GPUDialect::getKernelFuncAttrName()) ||
        op.hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName()) ||
        op.hasAttr(ROCDL::ROCDLDialect::getKernelFuncAttrName()))
      kernels.insert(cast<SymbolOpInterface>(op).getName());
    builder.clone(op);
  }
  SmallVector<LLVM::LLVMFuncOp> callees;
  copy->walk([&](LLVM::CallOp call) {
    std::optional<StringRef> callee = call.getCallee();
    if (!callee || copy->lookupSymbol(*callee))
      return;
    if (auto fn = top.lookupSymbol<LLVM::LLVMFuncOp>(*callee))
      if (!llvm::is_contained(callees, fn))
        callees.push_back(fn);
  });
  for (LLVM::LLVMFuncOp fn : callees)
    builder.clone(*fn);
  // Line tables carry the sites' locations through LLVM IR.
  PassManager scopes(ctx, ModuleOp::getOperationName());
  scopes.addPass(LLVM::createDIScopeForLLVMFuncOpPass());
  if (failed(scopes.run(*copy)))
    return fail("no debug scopes for its functions");

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*copy, llvmContext, module.getName());
  if (!llvmModule)
    return fail("it does not translate to LLVM IR");
  std::unique_ptr<llvm::TargetMachine> machine;
  int optLevel;
  if (auto nvvm = dyn_cast<NVVM::NVVMTargetAttr>(target)) {
    std::string why;
    machine = nvptxMachine(nvvm, why);
    if (!machine)
      return fail("no NVPTX target machine (" + why + ")");
    llvmModule->setTargetTriple(machine->getTargetTriple());
    llvmModule->setDataLayout(machine->createDataLayout());
    optLevel = nvvm.getO();
  } else {
    auto rocdl = cast<ROCDL::ROCDLTargetAttr>(target);
    llvmModule->setTargetTriple(llvm::Triple(rocdl.getTriple()));
    optLevel = rocdl.getO();
  }
  describeDeclarations(*llvmModule);
  // The workgroup buffers are the emulator's to see (it registers their
  // addresses): calls that may touch memory may touch them.
  SmallVector<llvm::GlobalValue *> buffers;
  for (llvm::GlobalVariable &global : llvmModule->globals())
    if (!global.isConstant())
      buffers.push_back(&global);
  if (!buffers.empty())
    llvm::appendToUsed(*llvmModule, buffers);
  optimize(*llvmModule, machine.get(), optLevel);

  // Back into the LLVM dialect (the import's warnings about what it drops,
  // such as metadata, are of no use here).
  std::string errors;
  OwningOpRef<ModuleOp> optimized;
  {
    ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error)
        errors += (errors.empty() ? "" : "; ") + diag.str();
      return success();
    });
    optimized = translateLLVMIRToModule(
        std::move(llvmModule), ctx, /*emitExpensiveWarnings=*/false,
        /*dropDICompositeTypeElements=*/false, /*loadAllDialects=*/false);
  }
  if (!optimized)
    return fail("its optimized LLVM IR does not import into the LLVM "
                "dialect: " +
                (errors.empty() ? std::string("no diagnostic") : errors));

  Block *body = module.getBody();
  for (Operation &op : llvm::make_early_inc_range(*body))
    op.erase();
  for (Operation &op :
       llvm::make_early_inc_range(optimized->getBody()->getOperations())) {
    if (auto fn = dyn_cast<LLVM::LLVMFuncOp>(op)) {
      // The emulator's entry points are declared in `top` already.
      if (fn.isExternal() && top.lookupSymbol(fn.getName()))
        continue;
      // The host calls the kernels with its own convention.
      fn.setCConv(LLVM::CConv::C);
      fn.removeTargetCpuAttr();
      fn.removeTargetFeaturesAttr();
      // What the optimizer inferred of a definition (its memory, that it
      // does not synchronize) no longer holds once the emulator's calls
      // count its accesses and switch threads.
      if (!fn.isExternal()) {
        fn.removeMemoryEffectsAttr();
        fn.removeWillReturnAttr();
        fn.removePassthroughAttr();
      }
      if (kernels.contains(fn.getName()))
        fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                    UnitAttr::get(ctx));
    } else if (auto global = dyn_cast<LLVM::GlobalOp>(op)) {
      if (global.getSymName() == "llvm.used")
        continue;
    } else {
      // Module flags and the like.
      continue;
    }
    op.moveBefore(body, body->end());
  }
  // The file locations stay, the debug information goes (the host module
  // has none).
  module.walk([](Operation *op) {
    op->setLoc(fileLocation(op->getLoc()));
    if (auto br = dyn_cast<LLVM::BrOp>(op))
      br.removeLoopAnnotationAttr();
    else if (auto condBr = dyn_cast<LLVM::CondBrOp>(op))
      condBr.removeLoopAnnotationAttr();
  });
  return success();
}
