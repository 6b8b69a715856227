//===- GpuWorkgroupBuffers.h - A kernel's workgroup buffers -----*- C++ -*-===//
//
// The workgroup attributions that fuel-gpu-private-allocs gives a kernel's
// buffers in workgroup memory, shared by buffers that are never live at
// the same time.
//
//===----------------------------------------------------------------------===//

#ifndef FUEL_LIB_TRANSFORMS_GPUWORKGROUPBUFFERS_H
#define FUEL_LIB_TRANSFORMS_GPUWORKGROUPBUFFERS_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::fuel {

/// Whether `fn` holds for every user of `buffer` and of the views made of
/// it (ViewLikeOpInterface ops whose source it is, transitively), other
/// than those views.
bool allBufferUsers(Value buffer, function_ref<bool(Operation *)> fn);

/// Whether `user`, an op that takes a view of a buffer without being a
/// view of it, may pass the buffer on: a terminator (an `scf.yield`), a
/// call, or an op that makes a memref or a tensor of it. Loads, stores,
/// copies and other accesses do not.
bool mayPassBufferOn(Operation *user);

/// Hands out workgroup attributions for the static workgroup buffers of
/// kernels, asked in program order. Two buffers of one type share an
/// attribution where each is allocated inside, and used only inside, its
/// own op of the kernel's body (a loop over the blocks of a staged
/// operand: dq's two key loops), the first op before the second with a
/// `gpu.barrier` between them: every thread has then read the first
/// buffer for the last time before any writes the second. A kernel's
/// workgroup memory is then its largest set of buffers live at once
/// rather than all of them (dq with heads of 64: 14 KiB, not 24).
/// Upstream MLIR gives each buffer an attribution of its own.
class WorkgroupBuffers {
public:
  /// The attribution of `launch` for `alloc`: a shared one where it may
  /// be, else a new one.
  BlockArgument bufferFor(gpu::LaunchOp launch, memref::AllocOp alloc);

private:
  struct Buffer {
    BlockArgument argument;
    /// The op of the kernel's body whose buffer it was last given to; null
    /// where that buffer may be used anywhere.
    Operation *holder;
  };
  llvm::DenseMap<Operation *, SmallVector<Buffer>> buffers;
};

} // namespace mlir::fuel

#endif // FUEL_LIB_TRANSFORMS_GPUWORKGROUPBUFFERS_H
