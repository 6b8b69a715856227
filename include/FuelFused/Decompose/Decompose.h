//===- Decompose.h - fuel.fused to linalg -----------------------*- C++ -*-===//
//
// Decomposition of a fused op into linalg on tensors: its recipe
// instantiated in the normal form that fusion matches, or its hand-written
// decomposition where the recipe does not cover the op.
//
//===----------------------------------------------------------------------===//

#ifndef FUELFUSED_DECOMPOSE_DECOMPOSE_H
#define FUELFUSED_DECOMPOSE_DECOMPOSE_H

#include "mlir/IR/Builders.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir {
class DialectRegistry;
namespace fuel {

class FusedOp;

/// Instantiates the op's recipe (or its hand-written decomposition) as
/// linalg on tensors at the builder's insertion point and returns the values
/// that replace the op's results. Fails, creating nothing and setting `why`,
/// when the op has neither, the recipe does not cover it and there is no
/// hand-written decomposition, or its operands are not tensors.
FailureOr<SmallVector<Value>> decomposeFusedOp(OpBuilder &b, FusedOp op,
                                               std::string &why);

/// Attaches `linalg::AggregatedOpInterface` to `fuel.fused` (the dialect
/// promises it): `decomposeOperation` is `decomposeFusedOp`, with a remark
/// saying why when it fails.
void registerAggregatedOpInterfaceExternalModels(DialectRegistry &registry);

} // namespace fuel
} // namespace mlir

#endif // FUELFUSED_DECOMPOSE_DECOMPOSE_H
