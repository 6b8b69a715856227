//===- FuelAttrs.h - fuel attributes and enums ------------------*- C++ -*-===//

#ifndef FUELFUSED_FUELATTRS_H
#define FUELFUSED_FUELATTRS_H

#include "FuelFused/Registry.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "FuelFused/FuelEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "FuelFused/FuelAttrs.h.inc"

#endif // FUELFUSED_FUELATTRS_H
