//===- fuel-tblgen.cpp - TableGen driver for fuel-mlir --------------------===//
//
// mlir-tblgen with fuel's generators registered (see FusedOpsGen.cpp).
//
//===----------------------------------------------------------------------===//

#include "mlir/Tools/mlir-tblgen/MlirTblgenMain.h"

int main(int argc, char **argv) { return mlir::MlirTblgenMain(argc, argv); }
