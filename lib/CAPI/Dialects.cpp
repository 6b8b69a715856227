//===- Dialects.cpp - C API for the fuel dialect --------------------------===//

#include "fuel-c/Dialects.h"

#include "FuelFused/Decompose/Decompose.h"
#include "FuelFused/IR/FuelDialect.h"
#include "FuelFused/IR/FuelOps.h"
#include "FuelFused/Transforms/Passes.h"
#include "FuelFused/IR/Registry.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"

// The dialect comes with what other libraries attach to it (the
// decomposition behind AggregatedOpInterface), so these hooks are written
// out rather than taken from MLIR_DEFINE_CAPI_DIALECT_REGISTRATION.
static void insertFuelDialect(MlirDialectRegistry registry) {
  mlir::DialectRegistry *r = unwrap(registry);
  r->insert<mlir::fuel::FuelDialect>();
  mlir::fuel::registerAggregatedOpInterfaceExternalModels(*r);
}

static MlirDialect loadFuelDialect(MlirContext context) {
  mlir::MLIRContext *ctx = unwrap(context);
  mlir::DialectRegistry registry;
  mlir::fuel::registerAggregatedOpInterfaceExternalModels(registry);
  ctx->appendDialectRegistry(registry);
  return wrap(ctx->getOrLoadDialect<mlir::fuel::FuelDialect>());
}

static MlirStringRef getFuelNamespace() {
  return wrap(mlir::fuel::FuelDialect::getDialectNamespace());
}

MlirDialectHandle mlirGetDialectHandle__fuel__() {
  static MlirDialectRegistrationHooks hooks = {
      insertFuelDialect, loadFuelDialect, getFuelNamespace};
  return MlirDialectHandle{&hooks};
}

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

bool fuelAddFusionRecipe(MlirStringRef name, MlirStringRef text,
                         MlirStringCallback errorCallback, void *userData) {
  std::string error;
  if (succeeded(
          mlir::fuel::addFusionRecipe(unwrap(name), unwrap(text), error)))
    return true;
  if (errorCallback)
    errorCallback(mlirStringRefCreate(error.data(), error.size()), userData);
  return false;
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
