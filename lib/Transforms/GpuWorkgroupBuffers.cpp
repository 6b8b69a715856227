//===- GpuWorkgroupBuffers.cpp - A kernel's workgroup buffers -------------===//
//
// Shared workgroup attributions for buffers that are never live at the
// same time (see the header).
//
//===----------------------------------------------------------------------===//

#include "GpuWorkgroupBuffers.h"

#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::fuel;

bool mlir::fuel::allBufferUsers(Value buffer,
                                function_ref<bool(Operation *)> fn) {
  SmallVector<Value> views{buffer};
  while (!views.empty()) {
    Value view = views.pop_back_val();
    for (Operation *user : view.getUsers()) {
      if (auto viewLike = dyn_cast<ViewLikeOpInterface>(user);
          viewLike && viewLike.getViewSource() == view) {
        llvm::append_range(views, user->getResults());
        continue;
      }
      if (!fn(user))
        return false;
    }
  }
  return true;
}

bool mlir::fuel::mayPassBufferOn(Operation *user) {
  return user->hasTrait<OpTrait::IsTerminator>() ||
         isa<CallOpInterface>(user) ||
         llvm::any_of(user->getResultTypes(),
                      llvm::IsaPred<BaseMemRefType, TensorType>);
}

/// The op of `launch`'s body that holds `alloc` and every use of its
/// buffer (through views of it), or null: where the alloc is the body's
/// own op, or a view of the buffer may leave that op (mayPassBufferOn).
static Operation *holderOf(gpu::LaunchOp launch, memref::AllocOp alloc) {
  Block &body = launch.getBody().front();
  Operation *holder = body.findAncestorOpInBlock(*alloc);
  if (!holder || holder == alloc)
    return nullptr;
  bool held = allBufferUsers(alloc.getResult(), [&](Operation *user) {
    return holder->isAncestor(user) && !mayPassBufferOn(user);
  });
  return held ? holder : nullptr;
}

/// Whether a `gpu.barrier` of the kernel's body lies between `first` and
/// `second`, ops of that body in that order.
static bool barrierBetween(Operation *first, Operation *second) {
  if (!first->isBeforeInBlock(second))
    return false;
  for (Operation *op = first->getNextNode(); op != second;
       op = op->getNextNode())
    if (isa<gpu::BarrierOp>(op))
      return true;
  return false;
}

BlockArgument WorkgroupBuffers::bufferFor(gpu::LaunchOp launch,
                                          memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  SmallVector<Buffer> &kernel = buffers[launch];
  Operation *holder = holderOf(launch, alloc);
  if (holder)
    for (Buffer &buffer : kernel)
      if (buffer.argument.getType() == type && buffer.holder &&
          buffer.holder != holder && barrierBetween(buffer.holder, holder)) {
        buffer.holder = holder;
        return buffer.argument;
      }
  BlockArgument argument =
      launch.addWorkgroupAttribution(type, alloc.getLoc());
  kernel.push_back({argument, holder});
  return argument;
}
