//===- fuel-opt.cpp - The fuel-mlir optimizer driver ----------------------===//
//
// mlir-opt with every upstream dialect, extension and pass, plus fuel's.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Decompose/Decompose.h"
#include "FuelFused/IR/FuelDialect.h"
#include "FuelFused/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVM/ROCDL/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

static void printVersion(llvm::raw_ostream &os) {
  os << "fuel-mlir " << FUEL_VERSION << " (fuel-opt)\n"
     << "  LLVM/MLIR " << FUEL_LLVM_VERSION << "\n";
}

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::fuel::registerFuelPassesAndPipelines();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // GPU modules serialize through LLVM IR (gpu-module-to-binary).
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  mlir::ROCDL::registerROCDLTargetInterfaceExternalModels(registry);
  registry.insert<mlir::fuel::FuelDialect>();
  mlir::fuel::registerAggregatedOpInterfaceExternalModels(registry);

  llvm::cl::AddExtraVersionPrinter(printVersion);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "fuel-mlir optimizer driver\n", registry));
}
