//===- FuelAttrs.h - fuel attributes and enums ------------------*- C++ -*-===//

#ifndef FUELFUSED_IR_FUELATTRS_H
#define FUELFUSED_IR_FUELATTRS_H

#include "FuelFused/IR/Registry.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "FuelFused/IR/FuelEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "FuelFused/IR/FuelAttrs.h.inc"

namespace mlir::fuel {
/// GGML block geometry of a quant type: values per block, bytes per block.
std::pair<int64_t, int64_t> getQuantBlockGeometry(QuantType type);

/// bitsandbytes' NF4 code book: the value of each 4-bit code (nf4_matmul).
ArrayRef<float> getNf4CodeBook();
} // namespace mlir::fuel

#endif // FUELFUSED_IR_FUELATTRS_H
