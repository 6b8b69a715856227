//===- FuelOps.td - fuel dialect ops -----------------------*- tablegen -*-===//

#ifndef FUEL_OPS_TD
#define FUEL_OPS_TD

include "FuelFused/IR/FuelDialect.td"
include "FuelFused/IR/FuelAttrs.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Fuel_FusedOp : Fuel_Op<"fused", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
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

    An op defined by a recipe in IR (`fuel.recipe`) is named by the recipe's
    symbol, which `recipe` holds; the recipe must come before its uses:
    ```mlir
    %y = fuel.fused @gelu_tanh (%x) : (tensor<4x64xf32>) -> tensor<4x64xf32>
    ```
  }];

  let arguments = (ins Fuel_KindAttr:$kind, DictionaryAttr:$params,
                       Variadic<AnyType>:$inputs,
                       OptionalAttr<FlatSymbolRefAttr>:$recipe);
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

//===----------------------------------------------------------------------===//
// Recipes defined in IR
//===----------------------------------------------------------------------===//

def Fuel_RecipeDefOp : Fuel_Op<"recipe", [
    Symbol, IsolatedFromAbove,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>]> {
  let summary = "the definition of a fused op by its computation";
  let description = [{
    Defines a fused op by what it computes on one element: the block's
    arguments are the elements of the op's operands (tensors of one shape)
    followed by its params (f64 attributes of the op, converted to the
    element type), and the body is scalar arith and math ops that yield the
    result's element. Every value has one float type (the recipe is
    instantiated for each float element type). The ops a body may use are
    those recipes are made of: `arith.constant` (a float), `arith.addf`,
    `subf`, `mulf`, `divf`, `maximumf`, `minimumf`, `negf`, `math.exp`, `log`,
    `log1p`, `expm1`, `sqrt`, `rsqrt`, `tanh`, `erf`, `absf`.

    ```mlir
    fuel.recipe @leaky_relu(%x: f32) params(%alpha: f32) -> f32 {
      %0 = arith.mulf %x, %alpha : f32
      %1 = arith.maximumf %x, %0 : f32
      fuel.yield %1 : f32
    }
    %y = fuel.fused @leaky_relu {alpha = 0.01 : f64} (%t)
        : (tensor<8x16xf32>) -> tensor<8x16xf32>
    ```

    The recipe registers its op when it is parsed or verified. Its identity
    is its canonical form (the body canonicalized, unused steps left out,
    equal steps merged, numbered from the result), its operand count and
    its param names: another name for a recipe already registered names the
    same op, canonicalizing a recipe keeps its op, and a name already used
    for another computation is an error.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       StrArrayAttr:$param_names);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The number of operands of the op the recipe defines.
    unsigned getNumInputs() {
      unsigned args = getBody().empty() ? 0
                                        : getBody().front().getNumArguments();
      return args - std::min<unsigned>(args, getParamNames().size());
    }
    /// The op's registry entry (registering it if need be); null, with
    /// `error` set, when the recipe is malformed or conflicts.
    const FusedOpInfo *getInfo(std::string &error);
  }];
}

def Fuel_YieldOp : Fuel_Op<"yield", [
    Pure, Terminator, ReturnLike, HasParent<"RecipeDefOp">]> {
  let summary = "the result of a recipe";
  let arguments = (ins AnyFloat:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

#endif // FUEL_OPS_TD
