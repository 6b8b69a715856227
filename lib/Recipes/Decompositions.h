//===- Decompositions.h - Hand-written decompositions -----------*- C++ -*-===//

#ifndef FUEL_LIB_RECIPES_DECOMPOSITIONS_H
#define FUEL_LIB_RECIPES_DECOMPOSITIONS_H

#include "FuelFused/FuelOps.h"

#include <string>

namespace mlir::fuel::decompositions {
#define GET_FUSED_OP_DECOMPOSITION_DECLS
#include "FuelFused/FusedOpRegistry.inc"
} // namespace mlir::fuel::decompositions

#endif // FUEL_LIB_RECIPES_DECOMPOSITIONS_H
