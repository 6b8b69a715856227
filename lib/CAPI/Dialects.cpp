//===- Dialects.cpp - C API for the fuel dialect --------------------------===//

#include "fuel-c/Dialects.h"

#include "FuelFused/FuelDialect.h"
#include "FuelFused/Passes.h"
#include "FuelFused/Registry.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Fuel, fuel, mlir::fuel::FuelDialect)

unsigned fuelRegisterRuntimeOp(MlirStringRef name, unsigned numOperands,
                               intptr_t numParams,
                               const MlirStringRef *paramNames,
                               MlirStringCallback errorCallback,
                               void *userData) {
  llvm::SmallVector<llvm::StringRef> params;
  for (intptr_t i = 0; i < numParams; ++i)
    params.push_back(unwrap(paramNames[i]));
  std::string error;
  std::optional<uint32_t> id =
      mlir::fuel::registerRuntimeOp(unwrap(name), numOperands, params, error);
  if (!id) {
    if (errorCallback)
      errorCallback(mlirStringRefCreate(error.data(), error.size()), userData);
    return 0;
  }
  return *id;
}

unsigned fuelLookupFusedOpId(MlirStringRef name) {
  const mlir::fuel::FusedOpInfo *info = mlir::fuel::lookupFusedOp(unwrap(name));
  return info ? info->id : 0;
}

bool fuelIsRuntimeId(unsigned id) { return mlir::fuel::isRuntimeId(id); }

void fuelRegisterPasses(void) {
  static bool registered = [] {
    mlir::fuel::registerFuelPassesAndPipelines();
    return true;
  }();
  (void)registered;
}
