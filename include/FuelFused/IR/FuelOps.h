//===- FuelOps.h - fuel dialect ops -----------------------------*- C++ -*-===//

#ifndef FUELFUSED_IR_FUELOPS_H
#define FUELFUSED_IR_FUELOPS_H

#include "FuelFused/IR/FuelAttrs.h"
#include "FuelFused/IR/FuelDialect.h"
#include "FuelFused/IR/Registry.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/IR/SymbolTable.h"

#define GET_OP_CLASSES
#include "FuelFused/IR/FuelOps.h.inc"

#endif // FUELFUSED_IR_FUELOPS_H
