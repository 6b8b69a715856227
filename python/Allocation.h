//===- Allocation.h - The compiled code's buffer allocation -----*- C++ -*-===//

#ifndef FUEL_PYTHON_ALLOCATION_H
#define FUEL_PYTHON_ALLOCATION_H

#include "mlir/Bindings/Python/Nanobind.h"

namespace fuel {
/// Adds `allocation_functions()` (what the runner registers with the
/// ExecutionEngine for code compiled with fuel-to-llvm{generic-allocation})
/// to `m`.
void bindAllocationFunctions(nanobind::module_ &m);
} // namespace fuel

#endif // FUEL_PYTHON_ALLOCATION_H
