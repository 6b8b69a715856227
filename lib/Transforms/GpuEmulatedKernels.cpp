//===- GpuEmulatedKernels.cpp - GPU kernels compiled for the host ---------===//
//
// fuel-gpu-emulated-kernels: the kernels of each NVVM or ROCDL gpu.module,
// lowered to the LLVM dialect, move into the host module, where the GPU
// emulator (runtime/GpuEmulator.c) runs them on the CPU: each thread of a
// block is a fiber, and the operations that read a thread's position, wait
// at a barrier or exchange values across a warp (or an AMD wave) become
// calls into the emulator. The gpu.module becomes a gpu.binary naming the
// module, so the host code is exactly what it is for a GPU (gpu-to-llvm,
// the runtime calls of MLIR's GPU runtime wrappers, which the emulator
// provides). Upstream has no way to run a GPU kernel with barriers and
// shuffles on the CPU; this is how the kernels' numerics are checked
// without a GPU.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Transforms/Passes.h"

#include "GpuDeviceOptimization.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"

#include "llvm/ADT/StringMap.h"

#include <algorithm>

namespace mlir::fuel {
#define GEN_PASS_DEF_FUELGPUEMULATEDKERNELS
#include "FuelFused/Transforms/Passes.h.inc"
} // namespace mlir::fuel

using namespace mlir;

namespace {

/// The code `fuel_emu_sreg` takes for each special register the kernels
/// read (a thread's position, the block's and grid's sizes, its lane).
const llvm::StringMap<int32_t> &specialRegisters() {
  static const llvm::StringMap<int32_t> codes = {
      {"nvvm.read.ptx.sreg.tid.x", 0},     {"nvvm.read.ptx.sreg.tid.y", 1},
      {"nvvm.read.ptx.sreg.tid.z", 2},     {"nvvm.read.ptx.sreg.ntid.x", 3},
      {"nvvm.read.ptx.sreg.ntid.y", 4},    {"nvvm.read.ptx.sreg.ntid.z", 5},
      {"nvvm.read.ptx.sreg.ctaid.x", 6},   {"nvvm.read.ptx.sreg.ctaid.y", 7},
      {"nvvm.read.ptx.sreg.ctaid.z", 8},   {"nvvm.read.ptx.sreg.nctaid.x", 9},
      {"nvvm.read.ptx.sreg.nctaid.y", 10}, {"nvvm.read.ptx.sreg.nctaid.z", 11},
      {"nvvm.read.ptx.sreg.laneid", 12},   {"nvvm.read.ptx.sreg.warpsize", 13},
      {"rocdl.workitem.id.x", 0},          {"rocdl.workitem.id.y", 1},
      {"rocdl.workitem.id.z", 2},          {"rocdl.workgroup.dim.x", 3},
      {"rocdl.workgroup.dim.y", 4},        {"rocdl.workgroup.dim.z", 5},
      {"rocdl.workgroup.id.x", 6},         {"rocdl.workgroup.id.y", 7},
      {"rocdl.workgroup.id.z", 8},         {"rocdl.grid.dim.x", 9},
      {"rocdl.grid.dim.y", 10},            {"rocdl.grid.dim.z", 11},
      {"rocdl.wavefrontsize", 13},
  };
  return codes;
}

/// The emulator's entry points, declared in `top` once.
struct Runtime {
  ModuleOp top;
  OpBuilder builder;

  explicit Runtime(ModuleOp top)
      : top(top), builder(OpBuilder::atBlockEnd(top.getBody())) {}

  LLVM::LLVMFuncOp declare(StringRef name, Type result,
                           ArrayRef<Type> params) {
    if (auto fn = top.lookupSymbol<LLVM::LLVMFuncOp>(name))
      return fn;
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(top.getBody());
    return LLVM::LLVMFuncOp::create(
        builder, top.getLoc(), name,
        LLVM::LLVMFunctionType::get(result, params));
  }
};

/// Replaces the NVVM or ROCDL operations of `fn` by calls into the
/// emulator; fails (with a diagnostic) on one it has no emulation for.
LogicalResult emulateDeviceOps(LLVM::LLVMFuncOp fn, Runtime &rt) {
  MLIRContext *ctx = fn.getContext();
  Type i32 = IntegerType::get(ctx, 32), i64 = IntegerType::get(ctx, 64);
  Type voidTy = LLVM::LLVMVoidType::get(ctx);
  SmallVector<Operation *> nvvmOps;
  fn.walk([&](Operation *op) {
    if (isa<NVVM::NVVMDialect, ROCDL::ROCDLDialect>(op->getDialect()))
      nvvmOps.push_back(op);
  });
  for (Operation *op : nvvmOps) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    auto constant = [&](int64_t v, Type t) -> Value {
      return LLVM::ConstantOp::create(b, loc, t, b.getIntegerAttr(t, v));
    };
    StringRef name = op->getName().getStringRef();
    auto code = specialRegisters().find(name);
    if (code != specialRegisters().end()) {
      LLVM::LLVMFuncOp callee = rt.declare("fuel_emu_sreg", i32, {i32});
      auto call = LLVM::CallOp::create(
          b, loc, callee, ValueRange{constant(code->second, i32)});
      // The register's range (a block's known size bounds a thread's
      // position), as the intrinsic's call has it on the GPU.
      auto range = op->getAttrOfType<LLVM::ConstantRangeAttr>("range");
      if (range && range.getLower().getBitWidth() == 32)
        call.setResAttrsAttr(b.getArrayAttr(b.getDictionaryAttr(
            b.getNamedAttr(LLVM::LLVMDialect::getRangeAttrName(), range))));
      Value v = call.getResult();
      auto type = dyn_cast<IntegerType>(op->getResult(0).getType());
      if (!type)
        return op->emitError("fuel-gpu-emulated-kernels: ")
               << name << " of type " << op->getResult(0).getType()
               << " is not emulated";
      if (type.getWidth() > 32)
        v = LLVM::ZExtOp::create(b, loc, type, v);
      else if (type.getWidth() < 32)
        v = LLVM::TruncOp::create(b, loc, type, v);
      op->getResult(0).replaceAllUsesWith(v);
      op->erase();
      continue;
    }
    if (isa<NVVM::Barrier0Op, ROCDL::BarrierOp, ROCDL::SBarrierOp>(op) ||
        (isa<NVVM::BarrierOp>(op) && op->getNumOperands() == 0)) {
      LLVM::LLVMFuncOp callee = rt.declare("fuel_emu_barrier", voidTy, {});
      LLVM::CallOp::create(b, loc, callee, ValueRange{});
      op->erase();
      continue;
    }
    if (auto shfl = dyn_cast<NVVM::ShflOp>(op)) {
      // fuel_emu_shfl(kind, mask, value, offset, clamp): the value read in
      // the low 32 bits, whether its lane was in range in bit 32.
      // (The op takes i32 and f32 only.)
      Type valType = shfl.getVal().getType();
      Value val = shfl.getVal();
      if (valType.isF32())
        val = LLVM::BitcastOp::create(b, loc, i32, val);
      LLVM::LLVMFuncOp callee =
          rt.declare("fuel_emu_shfl", i64, {i32, i32, i32, i32, i32});
      Value kind = constant(static_cast<int64_t>(shfl.getKind()), i32);
      Value packed =
          LLVM::CallOp::create(b, loc, callee,
                               ValueRange{kind, shfl.getThreadMask(), val,
                                          shfl.getOffset(),
                                          shfl.getMaskAndClamp()})
              .getResult();
      Value read = LLVM::TruncOp::create(b, loc, i32, packed);
      if (valType.isF32())
        read = LLVM::BitcastOp::create(b, loc, valType, read);
      Value result = read;
      if (shfl.getReturnValueAndIsValid()) {
        Value valid = LLVM::TruncOp::create(
            b, loc, IntegerType::get(ctx, 1),
            LLVM::LShrOp::create(b, loc, packed, constant(32, i64)));
        Type structType = shfl.getResult().getType();
        Value s = LLVM::PoisonOp::create(b, loc, structType);
        s = LLVM::InsertValueOp::create(b, loc, s, read, ArrayRef<int64_t>{0});
        result = LLVM::InsertValueOp::create(b, loc, s, valid,
                                             ArrayRef<int64_t>{1});
      }
      shfl.getResult().replaceAllUsesWith(result);
      op->erase();
      continue;
    }
    // A call of `callee` (returning i32) on `args` in place of `op`.
    auto replaceByCall = [&](StringRef callee, ValueRange args) {
      SmallVector<Type> types(args.size(), i32);
      Value v = LLVM::CallOp::create(b, loc, rt.declare(callee, i32, types),
                                     args)
                    .getResult();
      op->getResult(0).replaceAllUsesWith(v);
      op->erase();
    };
    // fuel_emu_mbcnt(high half, mask, base): the mask's bits below the
    // lane, in the low or high 32 lanes, plus base.
    if (isa<ROCDL::MbcntLoOp, ROCDL::MbcntHiOp>(op)) {
      Value high = constant(isa<ROCDL::MbcntHiOp>(op) ? 1 : 0, i32);
      replaceByCall("fuel_emu_mbcnt",
                    {high, op->getOperand(0), op->getOperand(1)});
      continue;
    }
    // fuel_emu_bpermute(byte address, value): the value of lane
    // address / 4 of the wave; fuel_emu_swizzle(value, pattern).
    if (isa<ROCDL::DsBpermuteOp>(op) || isa<ROCDL::DsSwizzleOp>(op)) {
      replaceByCall(isa<ROCDL::DsBpermuteOp>(op) ? "fuel_emu_bpermute"
                                                 : "fuel_emu_swizzle",
                    op->getOperands());
      continue;
    }
    return op->emitError("fuel-gpu-emulated-kernels: ")
           << name << " has no emulation on the CPU";
  }
  return success();
}

/// Whether `ptr` points into a thread's private memory: an alloca (through
/// GEPs and casts), or address space 5.
bool isPrivate(Value ptr) {
  for (;;) {
    auto type = dyn_cast<LLVM::LLVMPointerType>(ptr.getType());
    if (type && type.getAddressSpace() == 5)
      return true;
    Operation *def = ptr.getDefiningOp();
    if (auto gep = dyn_cast_or_null<LLVM::GEPOp>(def))
      ptr = gep.getBase();
    else if (auto cast = dyn_cast_or_null<LLVM::AddrSpaceCastOp>(def))
      ptr = cast.getArg();
    else
      return isa_and_nonnull<LLVM::AllocaOp>(def);
  }
}

/// Calls fuel_emu_access(site, address, bytes, alignment) before each load
/// and store of `fn` but those of private memory (the alignment bounds the
/// pieces the backend moves it in), numbering the sites from
/// `numSites` on, and adds each one's line to `table`: the function
/// (`name`), load or store, the type, the alignment, the location.
void instrumentAccesses(LLVM::LLVMFuncOp fn, StringRef name, Runtime &rt,
                        const DataLayout &layout, int32_t &numSites,
                        std::string &table) {
  MLIRContext *ctx = fn.getContext();
  Type i32 = IntegerType::get(ctx, 32);
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  LLVM::LLVMFuncOp callee = rt.declare(
      "fuel_emu_access", LLVM::LLVMVoidType::get(ctx),
      {i32, ptr, i32, i32});
  SmallVector<Operation *> accesses;
  fn.walk([&](Operation *op) {
    if (isa<LLVM::LoadOp, LLVM::StoreOp>(op))
      accesses.push_back(op);
  });
  for (Operation *op : accesses) {
    auto load = dyn_cast<LLVM::LoadOp>(op);
    auto store = dyn_cast<LLVM::StoreOp>(op);
    Value address = load ? load.getAddr() : store.getAddr();
    Type type = load ? load.getType() : store.getValue().getType();
    if (isPrivate(address))
      continue;
    int64_t alignment = load ? load.getAlignment().value_or(0)
                             : store.getAlignment().value_or(0);
    if (!alignment)
      alignment = layout.getTypeABIAlignment(type);
    OpBuilder b(op);
    Location loc = op->getLoc();
    // (The cast vanishes with the address spaces.)
    if (address.getType() != ptr)
      address = LLVM::AddrSpaceCastOp::create(b, loc, ptr, address);
    auto constant = [&](int64_t v) -> Value {
      return LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(v));
    };
    LLVM::CallOp::create(
        b, loc, callee,
        ValueRange{constant(numSites++), address,
                   constant(layout.getTypeSize(type).getFixedValue()),
                   constant(alignment)});
    std::string typeAndLoc;
    llvm::raw_string_ostream os(typeAndLoc);
    os << type << '\t' << alignment << '\t' << loc;
    // One line a site: no tabs or newlines but the separators (a file
    // name in the location could have them).
    size_t first = typeAndLoc.find('\t');
    size_t second = typeAndLoc.find('\t', first + 1);
    std::replace_if(
        typeAndLoc.begin(), typeAndLoc.end(),
        [](char c) { return c == '\t' || c == '\n'; }, ' ');
    typeAndLoc[first] = typeAndLoc[second] = '\t';
    table += (name + "\t" + (load ? "load" : "store") + "\t").str();
    table += typeAndLoc;
    table += '\n';
  }
}

/// Host memory has one address space: pointers into workgroup memory (3)
/// and the rest become plain pointers, and casts between them vanish.
void dropAddressSpaces(Operation *root) {
  AttrTypeReplacer replacer;
  replacer.addReplacement(
      [](LLVM::LLVMPointerType type) -> std::optional<Type> {
        if (type.getAddressSpace() == 0)
          return std::nullopt;
        return LLVM::LLVMPointerType::get(type.getContext());
      });
  replacer.recursivelyReplaceElementsIn(root, /*replaceAttrs=*/true,
                                        /*replaceLocs=*/false,
                                        /*replaceTypes=*/true);
  root->walk([](LLVM::AddrSpaceCastOp cast) {
    if (cast.getArg().getType() == cast.getType()) {
      cast.replaceAllUsesWith(cast.getArg());
      cast.erase();
    }
  });
}

/// A NUL-terminated string constant in `top`, and its address.
Value addressOfString(OpBuilder &b, Location loc, ModuleOp top,
                      StringRef symbol, StringRef text) {
  MLIRContext *ctx = b.getContext();
  if (!top.lookupSymbol(symbol)) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(top.getBody());
    std::string bytes = text.str();
    bytes.push_back('\0');
    auto type = LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8),
                                         bytes.size());
    LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true,
                           LLVM::Linkage::Internal, symbol,
                           b.getStringAttr(bytes));
  }
  return LLVM::AddressOfOp::create(b, loc, LLVM::LLVMPointerType::get(ctx),
                                   symbol);
}

/// Whether emulateDeviceOps replaces `op` (an NVVM or ROCDL operation).
bool hasEmulation(Operation *op) {
  return specialRegisters().contains(op->getName().getStringRef()) ||
         isa<NVVM::Barrier0Op, NVVM::ShflOp, ROCDL::BarrierOp,
             ROCDL::SBarrierOp, ROCDL::MbcntLoOp, ROCDL::MbcntHiOp,
             ROCDL::DsBpermuteOp, ROCDL::DsSwizzleOp>(op) ||
         (isa<NVVM::BarrierOp>(op) && op->getNumOperands() == 0);
}

/// Checks, before anything changes, that `module` can be emulated: one
/// NVVM or ROCDL target, only LLVM functions and globals, declarations
/// that agree with the host module's, and no device operation without an
/// emulation.
LogicalResult checkModule(gpu::GPUModuleOp module, ModuleOp top) {
  std::optional<ArrayAttr> targets = module.getTargets();
  if (!targets || targets->size() != 1 ||
      !isa<NVVM::NVVMTargetAttr, ROCDL::ROCDLTargetAttr>((*targets)[0]))
    return module.emitError("fuel-gpu-emulated-kernels: the GPU module needs "
                            "one NVVM or ROCDL target (nvvm-attach-target, "
                            "rocdl-attach-target)");
  for (Operation &op : module.getBody()->getOperations()) {
    auto fn = dyn_cast<LLVM::LLVMFuncOp>(op);
    if (!fn && !isa<LLVM::GlobalOp>(op))
      return op.emitError("fuel-gpu-emulated-kernels: the GPU module is not "
                          "lowered to LLVM functions and globals");
    if (fn && fn.isExternal()) {
      Operation *existing = top.lookupSymbol(fn.getName());
      auto other = dyn_cast_or_null<LLVM::LLVMFuncOp>(existing);
      if (existing &&
          (!other || other.getFunctionType() != fn.getFunctionType()))
        return fn.emitError("fuel-gpu-emulated-kernels: declared "
                            "differently in the host module");
    }
  }
  WalkResult walk = module.walk([](Operation *op) {
    if (!isa<NVVM::NVVMDialect, ROCDL::ROCDLDialect>(op->getDialect()) ||
        hasEmulation(op))
      return WalkResult::advance();
    op->emitError("fuel-gpu-emulated-kernels: ")
        << op->getName() << " has no emulation on the CPU";
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

struct FuelGpuEmulatedKernelsPass
    : public fuel::impl::FuelGpuEmulatedKernelsBase<
          FuelGpuEmulatedKernelsPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    fuel::registerDeviceOptimizationDependencies(registry);
  }

  void runOnOperation() override;
};

void FuelGpuEmulatedKernelsPass::runOnOperation() {
  ModuleOp top = getOperation();
  MLIRContext *ctx = &getContext();
  Runtime rt(top);
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  Type i64 = IntegerType::get(ctx, 64);
  Type voidTy = LLVM::LLVMVoidType::get(ctx);
  // What the registration constructor records: each kernel's entry, and
  // each workgroup buffer (which the emulator poisons before every block).
  struct KernelEntry {
    std::string module, name;
    LLVM::LLVMFuncOp fn;
    int64_t warpSize;
  };
  SmallVector<KernelEntry> entries;
  SmallVector<std::tuple<std::string, std::string, int64_t>> sharedBuffers;
  // With memory-profile: each module's table of sites.
  SmallVector<std::pair<std::string, std::string>> siteTables;

  SmallVector<gpu::GPUModuleOp> modules(top.getOps<gpu::GPUModuleOp>());
  // Nothing changes unless every module can be emulated.
  for (gpu::GPUModuleOp module : modules)
    if (failed(checkModule(module, top)))
      return signalPassFailure();
  // The profile counts the loads and stores LLVM's optimizer leaves for the
  // GPU: the device operations become calls first, then the optimizer runs
  // as the target's serialization would run it.
  if (memoryProfile) {
    for (gpu::GPUModuleOp module : modules) {
      for (auto fn : module.getOps<LLVM::LLVMFuncOp>())
        if (!fn.isExternal() && failed(emulateDeviceOps(fn, rt)))
          return signalPassFailure();
      if (failed(fuel::optimizeAsForTheDevice(module, top)))
        return signalPassFailure();
    }
  }
  for (gpu::GPUModuleOp module : modules) {
    std::optional<ArrayAttr> targets = module.getTargets();
    // The lanes a warp (NVIDIA) or wave (AMD) has.
    int64_t warpSize = 32;
    if (auto rocdl = dyn_cast<ROCDL::ROCDLTargetAttr>((*targets)[0]))
      warpSize = rocdl.hasWave64() ? 64 : 32;
    std::string prefix = ("__fuel_emu." + module.getName() + ".").str();
    DataLayout layout = DataLayout::closest(module);
    int32_t numSites = 0;
    std::string table;
    SmallVector<Operation *> moved;
    for (Operation &op :
         llvm::make_early_inc_range(module.getBody()->getOperations())) {
      auto fn = dyn_cast<LLVM::LLVMFuncOp>(op);
      if (fn && fn.isExternal()) {
        // A declaration (libdevice's __nv_expf, ...): the emulator
        // defines it; one declaration in the host module serves all.
        // (checkModule: the same type.)
        if (top.lookupSymbol(fn.getName())) {
          fn.erase();
          continue;
        }
        moved.push_back(fn);
        continue;
      }
      auto symbol = cast<SymbolOpInterface>(op);
      auto newName = StringAttr::get(ctx, prefix + symbol.getName().str());
      if (failed(SymbolTable::replaceAllSymbolUses(&op, newName, module))) {
        op.emitError("fuel-gpu-emulated-kernels: cannot rename uses");
        return signalPassFailure();
      }
      bool isKernel =
          fn && (fn->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName()) ||
                 fn->hasAttr(gpu::GPUDialect::getKernelFuncAttrName()));
      if (isKernel)
        entries.push_back(
            {module.getName().str(), fn.getName().str(), fn, warpSize});
      if (auto global = dyn_cast<LLVM::GlobalOp>(op)) {
        if (global.getAddrSpace() == 3)
          sharedBuffers.emplace_back(
              module.getName().str(), newName.str(),
              layout.getTypeSize(global.getGlobalType()));
        global.setAddrSpace(0);
      }
      SymbolTable::setSymbolName(&op, newName);
      moved.push_back(&op);
    }
    for (Operation *op : moved) {
      if (auto fn = dyn_cast<LLVM::LLVMFuncOp>(op)) {
        // The targets' kernel attributes (nvvm.kernel, rocdl.kernel,
        // nvvm.maxntid, rocdl.flat_work_group_size, gpu.known_block_size,
        // ...) mean nothing on the host.
        for (NamedAttribute attr : llvm::to_vector(fn->getDiscardableAttrs()))
          if (llvm::is_contained({"nvvm", "rocdl", "gpu"},
                                 attr.getName().strref().split('.').first))
            fn->removeAttr(attr.getName());
        // (With the profile, the device operations are calls already.)
        if (!fn.isExternal() && !memoryProfile &&
            failed(emulateDeviceOps(fn, rt)))
          return signalPassFailure();
        if (!fn.isExternal() && memoryProfile)
          instrumentAccesses(fn, fn.getName().drop_front(prefix.size()), rt,
                             layout, numSites, table);
      }
      dropAddressSpaces(op);
      op->moveBefore(module);
    }
    if (numSites)
      siteTables.emplace_back(module.getName().str(), std::move(table));
    // The host code loads the module by this name (mgpuModuleLoad).
    OpBuilder b(module);
    std::string object = "fuel-gpu-emulator:" + module.getName().str();
    object.push_back('\0');
    auto attr = gpu::ObjectAttr::get(ctx, (*targets)[0],
                                     gpu::CompilationTarget::Binary,
                                     b.getStringAttr(object), nullptr,
                                     nullptr);
    gpu::BinaryOp::create(b, module.getLoc(), module.getName(),
                          /*offloadingHandler=*/nullptr,
                          b.getArrayAttr({attr}));
    module.erase();
  }
  if (entries.empty())
    return;

  // Each kernel's entry takes the launch's `void **params`, as the driver
  // does, and calls the kernel with the arguments they point to.
  OpBuilder b = OpBuilder::atBlockEnd(top.getBody());
  Location loc = top.getLoc();
  SmallVector<LLVM::LLVMFuncOp> trampolines;
  for (KernelEntry &e : entries) {
    LLVM::LLVMFuncOp kernel = e.fn;
    auto fnType = LLVM::LLVMFunctionType::get(voidTy, {ptr});
    auto entry = LLVM::LLVMFuncOp::create(
        b, loc, (kernel.getName() + ".params").str(), fnType,
        LLVM::Linkage::Internal);
    OpBuilder body = OpBuilder::atBlockEnd(entry.addEntryBlock(b));
    Value params = entry.getArgument(0);
    SmallVector<Value> args;
    for (auto [i, type] :
         llvm::enumerate(kernel.getFunctionType().getParams())) {
      Value slot = LLVM::GEPOp::create(body, loc, ptr, ptr, params,
                                       ArrayRef<LLVM::GEPArg>{int32_t(i)});
      Value at = LLVM::LoadOp::create(body, loc, ptr, slot);
      args.push_back(LLVM::LoadOp::create(body, loc, type, at));
    }
    LLVM::CallOp::create(body, loc, kernel, args);
    LLVM::ReturnOp::create(body, loc, ValueRange{});
    trampolines.push_back(entry);
  }

  // A constructor registers the entries and the workgroup buffers.
  auto ctorType = LLVM::LLVMFunctionType::get(voidTy, {});
  auto ctor = LLVM::LLVMFuncOp::create(b, loc, "__fuel_emu.register",
                                       ctorType, LLVM::Linkage::Internal);
  OpBuilder body = OpBuilder::atBlockEnd(ctor.addEntryBlock(b));
  Type i32 = IntegerType::get(ctx, 32);
  LLVM::LLVMFuncOp registerKernel =
      rt.declare("fuel_emu_register_kernel", voidTy, {ptr, ptr, ptr, i32});
  LLVM::LLVMFuncOp registerShared =
      rt.declare("fuel_emu_register_shared", voidTy, {ptr, ptr, i64});
  for (auto [i, e] : llvm::enumerate(entries)) {
    std::string tag = "__fuel_emu.name." + std::to_string(i);
    Value moduleString =
        addressOfString(body, loc, top, tag + ".module", e.module);
    Value kernelString =
        addressOfString(body, loc, top, tag + ".kernel", e.name);
    Value fnPtr = LLVM::AddressOfOp::create(body, loc, ptr,
                                            trampolines[i].getName());
    Value warp = LLVM::ConstantOp::create(body, loc, i32,
                                          body.getI32IntegerAttr(e.warpSize));
    LLVM::CallOp::create(
        body, loc, registerKernel,
        ValueRange{moduleString, kernelString, fnPtr, warp});
  }
  for (auto [i, buffer] : llvm::enumerate(sharedBuffers)) {
    auto &[moduleName, name, bytes] = buffer;
    Value moduleString = addressOfString(
        body, loc, top, "__fuel_emu.shared." + std::to_string(i),
        moduleName);
    Value at = LLVM::AddressOfOp::create(body, loc, ptr, name);
    Value size = LLVM::ConstantOp::create(body, loc, i64,
                                          body.getI64IntegerAttr(bytes));
    LLVM::CallOp::create(body, loc, registerShared,
                         ValueRange{moduleString, at, size});
  }
  for (auto [i, sites] : llvm::enumerate(siteTables)) {
    LLVM::LLVMFuncOp registerSites =
        rt.declare("fuel_emu_register_sites", voidTy, {ptr, ptr});
    std::string tag = "__fuel_emu.sites." + std::to_string(i);
    Value moduleString =
        addressOfString(body, loc, top, tag + ".module", sites.first);
    Value tableString =
        addressOfString(body, loc, top, tag + ".table", sites.second);
    LLVM::CallOp::create(body, loc, registerSites,
                         ValueRange{moduleString, tableString});
  }
  LLVM::ReturnOp::create(body, loc, ValueRange{});
  LLVM::GlobalCtorsOp::create(
      b, loc, b.getArrayAttr({FlatSymbolRefAttr::get(ctor.getNameAttr())}),
      b.getI32ArrayAttr({0}), b.getArrayAttr({LLVM::ZeroAttr::get(ctx)}));
}

} // namespace
