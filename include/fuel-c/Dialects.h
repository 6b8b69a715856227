//===- Dialects.h - C API for the fuel dialect --------------------*- C -*-===//

#ifndef FUEL_C_DIALECTS_H
#define FUEL_C_DIALECTS_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Fuel, fuel);

/// Makes the op defined by a recipe that `name` names a candidate of every
/// later `--fuel-fuse` run in the process, its recipe `text` (see
/// mlir::fuel::addFusionRecipe). Returns false, with `errorCallback` called
/// on the error message, when `name` is not such an op.
MLIR_CAPI_EXPORTED bool fuelAddFusionRecipe(MlirStringRef name,
                                            MlirStringRef text,
                                            MlirStringCallback errorCallback,
                                            void *userData);

/// Registers a fused op at run time (see mlir::fuel::registerRuntimeOp).
/// Returns its id (>= 0x8000), or 0 with `errorCallback` called on the error
/// message.
MLIR_CAPI_EXPORTED unsigned
fuelRegisterRuntimeOp(MlirStringRef name, unsigned numOperands,
                      intptr_t numParams, const MlirStringRef *paramNames,
                      MlirStringCallback errorCallback, void *userData);

/// Returns the id of a registered op (static or runtime), or 0 if unknown.
MLIR_CAPI_EXPORTED unsigned fuelLookupFusedOpId(MlirStringRef name);

/// Registers the fuel passes and pipelines (fuel-decompose, fuel-to-llvm).
MLIR_CAPI_EXPORTED void fuelRegisterPasses(void);

/// Returns whether `id` lies in the runtime-registered range.
MLIR_CAPI_EXPORTED bool fuelIsRuntimeId(unsigned id);

#ifdef __cplusplus
}
#endif

#endif // FUEL_C_DIALECTS_H
