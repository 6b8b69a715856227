//===- FastCall.h - One call of a compiled function, in C++ ---------------===//

#ifndef FUEL_PYTHON_FASTCALL_H
#define FUEL_PYTHON_FASTCALL_H

#include "mlir/Bindings/Python/Nanobind.h"

namespace fuel {
/// Adds `FastCall` (the runner's call path for out-param functions) to `m`.
void bindFastCall(nanobind::module_ &m);
} // namespace fuel

#endif // FUEL_PYTHON_FASTCALL_H
