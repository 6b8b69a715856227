//===- Decompositions.h - Hand-written decompositions -----------*- C++ -*-===//
//
// The hand-written decompositions, for the ops (or the forms of an op) that
// no recipe covers. Each is named in its op's record (FusedOps.td,
// `decomposition`) and bound to the op by a generated table.
//
//===----------------------------------------------------------------------===//

#ifndef FUEL_LIB_DECOMPOSE_DECOMPOSITIONS_H
#define FUEL_LIB_DECOMPOSE_DECOMPOSITIONS_H

#include "FuelFused/IR/FuelOps.h"

#include <optional>
#include <string>

namespace mlir::fuel {

/// A hand-written decomposition: `check` says, creating nothing, whether it
/// applies to `op` (setting `why` when not); `build` builds the replacement
/// values of an op it applies to at the builder's insertion point.
struct HandDecomposition {
  LogicalResult (*check)(FusedOp op, std::string &why);
  SmallVector<Value> (*build)(OpBuilder &b, FusedOp op);
};

/// The hand-written decomposition of `info`'s op; std::nullopt when it has
/// none.
std::optional<HandDecomposition> lookupDecomposition(const FusedOpInfo &info);

namespace decompositions {
#define GET_FUSED_OP_DECOMPOSITION_DECLS
#include "FusedOpDecompositions.inc"
} // namespace decompositions

} // namespace mlir::fuel

#endif // FUEL_LIB_DECOMPOSE_DECOMPOSITIONS_H
