//===- FuelOps.td - Python bindings for the fuel dialect ---*- tablegen -*-===//

#ifndef PYTHON_BINDINGS_FUEL_OPS
#define PYTHON_BINDINGS_FUEL_OPS

include "FuelFused/IR/FuelOps.td"

#endif // PYTHON_BINDINGS_FUEL_OPS
