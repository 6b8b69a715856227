//===- StridedCopies.cpp - Non-contiguous copies as loops -----------------===//
//
// MemRefToLLVM lowers a memref.copy between non-contiguous memrefs to a
// call of the runtime's generic, element-by-element `memrefCopy`; as a
// linalg.copy it becomes loops that LLVM vectorizes instead. So does every
// copy in a GPU kernel's loops, which would be a memcpy without alignment.
// A copy of a buffer onto itself is dropped.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Transforms/Passes.h"
#include "GpuMappedLoops.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::fuel {
#define GEN_PASS_DEF_FUELSTRIDEDCOPIESTOLOOPS
#include "FuelFused/Transforms/Passes.h.inc"
} // namespace mlir::fuel

using namespace mlir;

namespace {
/// Whether `type` is a ranked memref laid out contiguously (what
/// MemRefToLLVM copies with memcpy).
static bool isContiguous(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && memref.getLayout().isIdentity();
}

/// Whether `op` is in a loop a GPU's blocks or threads run (an scf.forall
/// mapped to `#gpu.block`s or `#gpu.thread`s): in a kernel, a memcpy
/// carries no alignment, so the backends move it a byte at a time.
static bool inGpuLoop(Operation *op) {
  return fuel::isInsideForallMappedTo<gpu::GPUBlockMappingAttr,
                                      gpu::GPUThreadMappingAttr>(op);
}

struct FuelStridedCopiesToLoopsPass
    : public fuel::impl::FuelStridedCopiesToLoopsBase<
          FuelStridedCopiesToLoopsPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation()->walk([&](memref::CopyOp copy) {
      // A buffer copied onto itself (bufferization leaves one where a tile
      // was written in place): nothing to do.
      if (copy.getSource() == copy.getTarget()) {
        copy.erase();
        return;
      }
      Type source = copy.getSource().getType(),
           target = copy.getTarget().getType();
      if (isa<MemRefType>(source) && isa<MemRefType>(target) &&
          (!isContiguous(source) || !isContiguous(target) ||
           inGpuLoop(copy)))
        copies.push_back(copy);
    });
    IRRewriter rewriter(&getContext());
    for (memref::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                  copy.getTarget());
    }
  }
};
} // namespace
