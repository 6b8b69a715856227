//===- FuelAttrs.td - fuel attributes and enums ------------*- tablegen -*-===//

#ifndef FUEL_ATTRS_TD
#define FUEL_ATTRS_TD

include "FuelFused/IR/FuelDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums used by params
//===----------------------------------------------------------------------===//

/// PyTorch's loss `reduction`. Values are stable.
def Fuel_Reduction : I32EnumAttr<"Reduction", "loss reduction", [
    I32EnumAttrCase<"Mean", 0, "mean">,
    I32EnumAttrCase<"Sum", 1, "sum">,
    I32EnumAttrCase<"None", 2, "none">
  ]> {
  let cppNamespace = "::mlir::fuel";
  let genSpecializedAttr = 0;
}
def Fuel_ReductionAttr : EnumAttr<Fuel_Dialect, Fuel_Reduction, "reduction"> {
  let assemblyFormat = "`<` $value `>`";
}

/// GGML quantization types. Values are stable (the original registry's keys).
def Fuel_QuantType : I32EnumAttr<"QuantType", "GGML quantization type", [
    I32EnumAttrCase<"Q4_0", 1, "q4_0">,
    I32EnumAttrCase<"Q4_1", 2, "q4_1">,
    I32EnumAttrCase<"Q5_0", 3, "q5_0">,
    I32EnumAttrCase<"Q5_1", 4, "q5_1">,
    I32EnumAttrCase<"Q8_0", 5, "q8_0">,
    I32EnumAttrCase<"Q8_1", 6, "q8_1">,
    I32EnumAttrCase<"Q2_K", 7, "q2_k">,
    I32EnumAttrCase<"Q3_K", 8, "q3_k">,
    I32EnumAttrCase<"Q4_K", 9, "q4_k">,
    I32EnumAttrCase<"Q5_K", 10, "q5_k">,
    I32EnumAttrCase<"Q6_K", 11, "q6_k">
  ]> {
  let cppNamespace = "::mlir::fuel";
  let genSpecializedAttr = 0;
}
def Fuel_QuantTypeAttr : EnumAttr<Fuel_Dialect, Fuel_QuantType, "quant"> {
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// The fused-op identity
//===----------------------------------------------------------------------===//

def Fuel_KindAttr : AttrDef<Fuel_Dialect, "Kind"> {
  let mnemonic = "kind";
  let summary = "identity of a fused op in the registry";
  let description = [{
    The registry id of a fused op, printed by name:

    ```mlir
    #fuel.kind<rms_norm_last_dim>
    ```

    Ids below 0x8000 are the static registry's; ids from 0x8000 on are
    registered at run time (`mlir::fuel::registerRuntimeOp`).
  }];
  let parameters = (ins "uint32_t":$id);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The registry entry this attribute names (never null once verified).
    const ::mlir::fuel::FusedOpInfo *getInfo() const;
    ::llvm::StringRef getName() const;
  }];
}

#endif // FUEL_ATTRS_TD
