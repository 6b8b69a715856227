//===- GpuMappedLoops.h - Ops inside loops mapped to a GPU ------*- C++ -*-===//
//
// Whether an op runs inside an scf.forall mapped to GPU blocks or threads,
// which the GPU passes ask before they rewrite it.
//
//===----------------------------------------------------------------------===//

#ifndef FUEL_LIB_TRANSFORMS_GPUMAPPEDLOOPS_H
#define FUEL_LIB_TRANSFORMS_GPUMAPPEDLOOPS_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::fuel {

/// Whether `op` is inside an scf.forall whose mapping has an entry of one
/// of `Attrs`' kinds (`gpu::GPUBlockMappingAttr`, `GPUThreadMappingAttr`).
template <typename... Attrs>
bool isInsideForallMappedTo(Operation *op) {
  for (auto loop = op->getParentOfType<scf::ForallOp>(); loop;
       loop = loop->getParentOfType<scf::ForallOp>()) {
    std::optional<ArrayAttr> mapping = loop.getMapping();
    if (mapping && llvm::any_of(*mapping, llvm::IsaPred<Attrs...>))
      return true;
  }
  return false;
}

} // namespace mlir::fuel

#endif // FUEL_LIB_TRANSFORMS_GPUMAPPEDLOOPS_H
