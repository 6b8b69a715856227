//===- FuelDialect.td - The fuel dialect -------------------*- tablegen -*-===//

#ifndef FUEL_DIALECT_TD
#define FUEL_DIALECT_TD

include "mlir/IR/OpBase.td"

def Fuel_Dialect : Dialect {
  let name = "fuel";
  let cppNamespace = "::mlir::fuel";
  let summary = "Fused deep-learning ops as one registry-driven op";
  let description = [{
    The `fuel` dialect brings a framework's registry of fused ops into MLIR.
    It has one generic op, `fuel.fused`, whose identity (`#fuel.kind<...>`)
    and typed params are attributes verified against a registry generated
    from TableGen (`include/FuelFused/IR/FusedOps.td`).
  }];
  let useDefaultAttributePrinterParser = 1;
  let usePropertiesForAttributes = 0;
  let hasConstantMaterializer = 1;
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

class Fuel_Op<string mnemonic, list<Trait> traits = []>
    : Op<Fuel_Dialect, mnemonic, traits>;

#endif // FUEL_DIALECT_TD
