//===- StridedCopies.cpp - Non-contiguous copies as loops -----------------===//
//
// MemRefToLLVM lowers a memref.copy between non-contiguous memrefs to a
// call of the runtime's generic, element-by-element `memrefCopy`; as a
// linalg.copy it becomes loops that LLVM vectorizes instead. A copy of a
// buffer onto itself is dropped.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
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
          (!isContiguous(source) || !isContiguous(target)))
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
