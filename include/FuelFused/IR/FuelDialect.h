//===- FuelDialect.h - The fuel dialect -------------------------*- C++ -*-===//

#ifndef FUELFUSED_IR_FUELDIALECT_H
#define FUELFUSED_IR_FUELDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

#include "FuelFused/IR/FuelDialect.h.inc"

#endif // FUELFUSED_IR_FUELDIALECT_H
