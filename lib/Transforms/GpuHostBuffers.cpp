//===- GpuHostBuffers.cpp - The host side's buffers on the device ---------===//
//
// fuel-gpu-host-buffers: after the loops became launches, a function's
// memref arguments and allocations are still host memory, which a kernel
// cannot read. Each argument, and each global the host side reads (a
// table of constants), gets a device copy (copied in where it is read, and
// back at each return when something writes it), each host allocation
// becomes a device allocation, each returned buffer is copied into a new
// host buffer, and the device buffers are freed at each return.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::fuel {
#define GEN_PASS_DEF_FUELGPUHOSTBUFFERS
#include "FuelFused/Transforms/Passes.h.inc"
} // namespace mlir::fuel

using namespace mlir;

/// The dynamic sizes of `value`'s memref type, read with memref.dim.
static SmallVector<Value> dynamicSizes(OpBuilder &b, Location loc,
                                       Value value) {
  auto type = cast<MemRefType>(value.getType());
  SmallVector<Value> sizes;
  for (auto [i, size] : llvm::enumerate(type.getShape()))
    if (ShapedType::isDynamic(size))
      sizes.push_back(memref::DimOp::create(b, loc, value, i));
  return sizes;
}

/// Whether anything but `ignore` writes `buffer` or a view of it.
static bool isWritten(Value buffer, Operation *ignore) {
  SmallVector<Value> worklist = {buffer};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (user == ignore)
        continue;
      if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
        if (view.getViewSource() == value && seen.insert(user).second)
          worklist.append(user->result_begin(), user->result_end());
        continue;
      }
      auto effects = dyn_cast<MemoryEffectOpInterface>(user);
      if (!effects) {
        if (!user->hasTrait<OpTrait::HasRecursiveMemoryEffects>() &&
            !isa<func::ReturnOp>(user))
          return true; // Unknown: assume it writes.
        continue;
      }
      SmallVector<MemoryEffects::EffectInstance> instances;
      effects.getEffectsOnValue(value, instances);
      if (llvm::any_of(instances, [](MemoryEffects::EffectInstance &e) {
            return isa<MemoryEffects::Write>(e.getEffect());
          }))
        return true;
    }
  }
  return false;
}

static LogicalResult moveBuffersToDevice(func::FuncOp func) {
  if (func.isExternal())
    return success();
  Block &entry = func.getBody().front();
  OpBuilder b(func.getContext());
  Location loc = func.getLoc();

  // Allocations on the host become device allocations.
  SmallVector<memref::AllocOp> allocs;
  func.walk([&](memref::AllocOp alloc) {
    if (!alloc->getParentOfType<gpu::LaunchOp>())
      allocs.push_back(alloc);
  });
  SmallVector<Value> deviceBuffers;
  for (memref::AllocOp alloc : allocs) {
    if (alloc->getParentRegion() != &func.getBody()) {
      return alloc.emitError("fuel-gpu-host-buffers: an allocation inside "
                             "host control flow");
    }
    b.setInsertionPoint(alloc);
    auto device = gpu::AllocOp::create(
        b, alloc.getLoc(), alloc.getType(), /*asyncToken=*/Type(),
        ValueRange(), alloc.getDynamicSizes(), alloc.getSymbolOperands(),
        /*hostShared=*/nullptr);
    alloc.replaceAllUsesWith(device.getMemref());
    alloc.erase();
    deviceBuffers.push_back(device.getMemref());
  }

  // Arguments get device copies.
  // (host, device, the copy in), of arguments and globals.
  SmallVector<std::tuple<Value, Value, Operation *>> copiedArgs;
  b.setInsertionPointToStart(&entry);
  for (BlockArgument arg : entry.getArguments()) {
    auto type = dyn_cast<MemRefType>(arg.getType());
    if (!type)
      continue;
    if (!type.getLayout().isIdentity())
      return func.emitError("fuel-gpu-host-buffers: argument ")
             << arg.getArgNumber()
             << " is not contiguous (an identity layout is needed to copy "
                "it to the device)";
    SmallVector<Value> sizes = dynamicSizes(b, loc, arg);
    auto device = gpu::AllocOp::create(b, loc, type, Type(), ValueRange(),
                                       sizes, ValueRange(), nullptr);
    auto copyIn = gpu::MemcpyOp::create(b, loc, Type(), ValueRange(),
                                        device.getMemref(), arg);
    llvm::SmallPtrSet<Operation *, 4> keep = {copyIn};
    for (Value size : sizes)
      keep.insert(size.getDefiningOp());
    arg.replaceUsesWithIf(device.getMemref(), [&](OpOperand &use) {
      return !keep.contains(use.getOwner());
    });
    copiedArgs.push_back({arg, device.getMemref(), copyIn});
    deviceBuffers.push_back(device.getMemref());
  }

  // Globals read on the host side get device copies, made where they are
  // read.
  SmallVector<memref::GetGlobalOp> globals;
  func.walk([&](memref::GetGlobalOp get) {
    if (!get->getParentOfType<gpu::LaunchOp>())
      globals.push_back(get);
  });
  for (memref::GetGlobalOp get : globals) {
    if (get->getParentRegion() != &func.getBody())
      return get.emitError("fuel-gpu-host-buffers: a global read inside "
                           "host control flow");
    MemRefType type = get.getType();
    if (!type.getLayout().isIdentity())
      return get.emitError("fuel-gpu-host-buffers: global ")
             << get.getNameAttr()
             << " is not contiguous (an identity layout is needed to copy "
                "it to the device)";
    b.setInsertionPointAfter(get);
    auto device = gpu::AllocOp::create(b, get.getLoc(), type, Type(),
                                       ValueRange(), ValueRange(),
                                       ValueRange(), nullptr);
    auto copyIn = gpu::MemcpyOp::create(b, get.getLoc(), Type(), ValueRange(),
                                        device.getMemref(), get.getResult());
    get.getResult().replaceAllUsesExcept(device.getMemref(), copyIn);
    copiedArgs.push_back({get.getResult(), device.getMemref(), copyIn});
    deviceBuffers.push_back(device.getMemref());
  }

  // At each return: written arguments and globals back, results to new
  // host buffers, device buffers freed.
  SmallVector<func::ReturnOp> returns;
  func.walk([&](func::ReturnOp ret) { returns.push_back(ret); });
  for (func::ReturnOp ret : returns) {
    b.setInsertionPoint(ret);
    for (auto [host, device, copyIn] : copiedArgs)
      if (isWritten(device, copyIn))
        gpu::MemcpyOp::create(b, ret.getLoc(), Type(), ValueRange(), host,
                              device);
    for (OpOperand &operand : ret->getOpOperands()) {
      auto type = dyn_cast<MemRefType>(operand.get().getType());
      if (!type)
        continue;
      if (!type.getLayout().isIdentity())
        return ret.emitError("fuel-gpu-host-buffers: result ")
               << operand.getOperandNumber()
               << " is not contiguous (an identity layout is needed to copy "
                  "it to the host)";
      Value device = operand.get();
      auto host = memref::AllocOp::create(
          b, ret.getLoc(), type, dynamicSizes(b, ret.getLoc(), device));
      gpu::MemcpyOp::create(b, ret.getLoc(), Type(), ValueRange(), host,
                            device);
      operand.set(host);
    }
    for (Value device : deviceBuffers)
      gpu::DeallocOp::create(b, ret.getLoc(), Type(), ValueRange(), device);
  }
  return success();
}

namespace {
struct FuelGpuHostBuffersPass
    : public fuel::impl::FuelGpuHostBuffersBase<FuelGpuHostBuffersPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(moveBuffersToDevice(func)))
        return signalPassFailure();
  }
};
} // namespace
