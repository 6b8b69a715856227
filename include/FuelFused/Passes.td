//===- Passes.td - fuel passes -----------------------------*- tablegen -*-===//

#ifndef FUEL_PASSES_TD
#define FUEL_PASSES_TD

include "mlir/Pass/PassBase.td"

def FuelDecompose : Pass<"fuel-decompose"> {
  let summary = "Decompose fuel.fused ops into linalg on tensors";
  let description = [{
    Rewrites every `fuel.fused` op into linalg/tensor/arith/math on tensors
    by instantiating its recipe, the same definition that fusion matches.
    The result is in the normal form: one scalar op per `linalg.generic`,
    reductions over `linalg.fill` inits, f16/bf16 computed in f32.

    ```mlir
    %y = fuel.fused softmax_last_dim (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    // becomes a max reduction, subtract, exp, sum reduction and divide.
    ```

    The pass is total: an op it cannot decompose (no recipe yet, operands
    on memrefs) stays fused, with a warning that says why. `ops=` decomposes
    only the named ops, `keep=` all but the named ones; an unknown name is an
    error.
  }];
  let options = [
    ListOption<"ops", "ops", "std::string",
               "Decompose only these fused ops (default: all)">,
    ListOption<"keep", "keep", "std::string",
               "Keep these fused ops fused">,
    Option<"quiet", "quiet", "bool", /*default=*/"false",
           "Do not warn about ops left fused">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif // FUEL_PASSES_TD
