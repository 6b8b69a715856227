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

def FuelFuse : Pass<"fuel-fuse"> {
  let summary = "Find fused ops in linalg IR by matching their recipes";
  let description = [{
    Replaces subgraphs of linalg on tensors that compute an op's recipe with
    `fuel.fused`, recovering the op's inputs and params. The matcher reads
    the recipes that `--fuel-decompose` instantiates, so
    `fuse(decompose(op))` gives back `op`. It matches the normal form (one
    scalar op per `linalg.generic`, broadcasts through indexing maps); the
    normalization that brings frontend spellings to that form is not there
    yet, so IR from frontends is mostly left as it is. Ops that are
    decompose-only, or whose recipe depends on params, are not searched for.
    A subgraph is fused only when its intermediate values have no other
    users; what is not fused is left exactly as it was. `report=near-misses`
    emits a remark at each root where a recipe matched at least three ops
    before a rule stopped it, naming that rule.

    ```mlir
    // The normal form of softmax over the last dim (max, subtract, exp,
    // sum, divide) becomes:
    %y = fuel.fused softmax_last_dim (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let options = [
    ListOption<"ops", "ops", "std::string",
               "Search only for these fused ops (default: all with a recipe)">,
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "'near-misses': a remark at each candidate that almost matched, "
           "naming the rule that stopped it">
  ];
  let dependentDialects = ["::mlir::fuel::FuelDialect"];
}

#endif // FUEL_PASSES_TD
