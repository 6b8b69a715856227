//===- FuelOps.td - fuel dialect ops -----------------------*- tablegen -*-===//

#ifndef FUEL_OPS_TD
#define FUEL_OPS_TD

include "FuelFused/IR/FuelDialect.td"
include "FuelFused/IR/FuelAttrs.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Fuel_FusedOp : Fuel_Op<"fused", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DeclareOpInterfaceMethods<ConditionallySpeculatable>]> {
  let summary = "a fused op from the registry";
  let description = [{
    One op for every fused op of the registry. `kind` names the registry
    entry; `params` is a dictionary whose entries follow the entry's params
    schema (names, attribute kinds, ranges). Params equal to their default are
    omitted in the canonical form. Operands and results are variadic; their
    number, element types, ranks and shapes are checked against the registry's
    rules, and result types are inferred from operands and params.

    ```mlir
    %y = fuel.fused rms_norm_last_dim {eps = 1.0e-05 : f64} (%x)
        : (tensor<4x64xf32>) -> tensor<4x64xf32>
    %o = fuel.fused flash_attn {causal = true, softmax_scale = 0.125 : f32}
        (%q, %k, %v) : (tensor<1x8x16x64xf16>, tensor<1x2x16x64xf16>,
                        tensor<1x2x16x64xf16>) -> tensor<1x8x16x64xf16>
    ```

    The op is pure, except a destructive op on memrefs (`inplace_affine`),
    which reads and writes its destroyed operand and has no result.
  }];

  let arguments = (ins Fuel_KindAttr:$kind, DictionaryAttr:$params,
                       Variadic<AnyType>:$inputs);
  let results = (outs Variadic<AnyType>:$results);

  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;

  let builders = [
    /// Builds the op `kind` names with the given params (those equal to
    /// their default dropped) and the inferred result types. When the
    /// operands or params do not fit the op, it is built without results
    /// and fails to verify: callers verify what they build (fusion does)
    /// and erase it on failure.
    OpBuilder<(ins "KindAttr":$kind, "ValueRange":$inputs,
                   "ArrayRef<NamedAttribute>":$params)>
  ];

  let extraClassDeclaration = [{
    /// The registry entry of this op.
    const FusedOpInfo &getInfo() { return *getKind().getInfo(); }
    /// The value of param `name`: the attribute if present, else its
    /// default, else null (an unset optional param).
    Attribute getParam(StringRef name);
    /// Operand `name` of the registry entry, or null if absent.
    Value getOperandNamed(StringRef name);
    /// Declared result types may be more static than the inferred ones.
    static bool isCompatibleReturnTypes(TypeRange l, TypeRange r);
  }];
}

#endif // FUEL_OPS_TD
