//===- FusedOpsBase.td - Classes for the fused-op registry -*- tablegen -*-===//
//
// The vocabulary that FusedOps.td uses to describe each fused op: operands
// with their element-type and rank constraints, results, typed params with
// defaults and range checks, the family, and the backward link. The project
// backend `fuel-tblgen` reads records derived from `FusedOp` and generates the
// C++ registry table, the params schemas, the Python registry module and
// docs/FusedOps.md from them.
//
//===----------------------------------------------------------------------===//

#ifndef FUEL_FUSEDOPSBASE_TD
#define FUEL_FUSEDOPSBASE_TD

include "FuelFused/IR/FuelAttrs.td"

//===----------------------------------------------------------------------===//
// Operand element types
//===----------------------------------------------------------------------===//

/// An element-type class of a fused-op operand. `kind` names the C++
/// enumerator `mlir::fuel::ElementKind::<kind>`.
class FuelElementKind<string kindName, string desc> {
  string kind = kindName;
  string description = desc;
}

def FuelAnyFloat : FuelElementKind<"AnyFloat", "f16, bf16, f32 or f64">;
def FuelF32 : FuelElementKind<"F32", "f32">;
def FuelInt64 : FuelElementKind<"Int64", "64-bit integer">;
def FuelInt32 : FuelElementKind<"Int32", "32-bit integer (a u32 word stream or i32 indices)">;
def FuelInt8 : FuelElementKind<"Int8", "8-bit integer (packed bytes)">;
def FuelIndex : FuelElementKind<"Index", "index scalar">;

//===----------------------------------------------------------------------===//
// Operands and results
//===----------------------------------------------------------------------===//

/// A fused-op operand: a ranked tensor (or memref, for a destructive input)
/// whose element type is in `element` and whose rank lies in
/// [minRank, maxRank] (maxRank = -1: unbounded). An `Index` operand is a
/// scalar `index` value instead.
class FusedOperand<string name, FuelElementKind elt, int minR = 0,
                   int maxR = -1, string d = ""> {
  string operandName = name;
  FuelElementKind element = elt;
  int minRank = minR;
  int maxRank = maxR;
  bit isOptional = 0;
  string doc = d;
}

/// A trailing operand that may be absent. Optional operands are matched in
/// order by kind (a tensor operand versus an `index` scalar).
class OptionalOperand<string name, FuelElementKind elt, int minR = 0,
                      int maxR = -1, string d = "">
    : FusedOperand<name, elt, minR, maxR, d> {
  let isOptional = 1;
}

class FusedResult<string name, string d = ""> {
  string resultName = name;
  string doc = d;
}

//===----------------------------------------------------------------------===//
// Params
//===----------------------------------------------------------------------===//

/// The kind of a param value: its attribute, its C++ value type, and how
/// a default written in a record is turned into an attribute. An enum param
/// names its enum (FuelAttrs.td), whose spellings the Python builders take.
class FuelParamKind<string kindName, string desc> {
  string kind = kindName;
  string description = desc;
  I32EnumAttr enumAttr = ?;
}

def FuelParamF64 : FuelParamKind<"F64", "f64 float">;
def FuelParamF32 : FuelParamKind<"F32", "f32 float">;
def FuelParamI64 : FuelParamKind<"I64", "i64 integer">;
def FuelParamI32 : FuelParamKind<"I32", "i32 integer">;
def FuelParamBool : FuelParamKind<"Bool", "bool">;
def FuelParamPair : FuelParamKind<"Pair", "pair of i64 (array<i64: h, w>)">;
def FuelParamReduction
    : FuelParamKind<"Reduction", "reduction (mean, sum, none)"> {
  let enumAttr = Fuel_Reduction;
}
def FuelParamQuantType : FuelParamKind<"QuantType", "GGML quant type"> {
  let enumAttr = Fuel_QuantType;
}

/// A check on one param value. `predicate` is a C++ boolean expression in
/// which `$_self` is the value (a double, int64_t, bool or
/// `ArrayRef<int64_t>`); `description` completes "must be ...".
class ParamCheck<code pred, string desc> {
  code predicate = pred;
  string description = desc;
}

def Positive : ParamCheck<[{$_self > 0}], "> 0">;
def NonNegative : ParamCheck<[{$_self >= 0}], ">= 0">;
def AtLeastOne : ParamCheck<[{$_self >= 1}], ">= 1">;
def FiniteFloat : ParamCheck<[{std::isfinite($_self)}], "finite">;
def PairAtLeastOne
    : ParamCheck<[{$_self[0] >= 1 && $_self[1] >= 1}], "a pair of values >= 1">;
def PairNonNegative
    : ParamCheck<[{$_self[0] >= 0 && $_self[1] >= 0}], "a pair of values >= 0">;
def GroupSize64Or128
    : ParamCheck<[{$_self == 64 || $_self == 128}], "64 or 128">;

/// A typed param. A param with a `defaultValue` may be omitted (and is
/// omitted in the canonical form when it equals the default); an optional
/// param has no default and its absence means "unset". `defaultValue` is
/// written as: a number, `true`/`false`, `[a, b]` for pairs, or an enum
/// spelling.
class FusedParam<string name, FuelParamKind k, string d = ""> {
  string paramName = name;
  FuelParamKind kind = k;
  string defaultValue = "";
  bit isOptional = 0;
  list<ParamCheck> checks = [];
  string doc = d;
}

class DefaultParam<string name, FuelParamKind k, string defVal,
                   list<ParamCheck> c = [], string d = "">
    : FusedParam<name, k, d> {
  let defaultValue = defVal;
  let checks = c;
}

class RequiredParam<string name, FuelParamKind k, list<ParamCheck> c = [],
                    string d = ""> : FusedParam<name, k, d> {
  let checks = c;
}

class OptionalParam<string name, FuelParamKind k, list<ParamCheck> c = [],
                    string d = ""> : FusedParam<name, k, d> {
  let isOptional = 1;
  let checks = c;
}

//===----------------------------------------------------------------------===//
// Family and backward
//===----------------------------------------------------------------------===//

class FusedFamily<string n> { string name = n; }
def Forward : FusedFamily<"Forward">;
def Backward : FusedFamily<"Backward">;
def Quantized : FusedFamily<"Quantized">;
def Attention : FusedFamily<"Attention">;
def Norm : FusedFamily<"Norm">;

/// How autodiff handles the op: `FusedGrad` names the fused ops that compute
/// the input gradients, `Decompose` differentiates the decomposition, and
/// `NotDifferentiable` makes asking for a gradient an error.
class FusedBackwardKind<string k, list<string> t = []> {
  string kind = k;
  list<string> targets = t;
}
class FusedGrad<list<string> targets> : FusedBackwardKind<"Fused", targets>;
def Decompose : FusedBackwardKind<"Decompose">;
def NotDifferentiable : FusedBackwardKind<"NotDifferentiable">;

//===----------------------------------------------------------------------===//
// The fused op record
//===----------------------------------------------------------------------===//

/// One entry of the registry. `opId` is stable forever; ids >= 0x8000 are
/// reserved for ops registered at run time.
///
/// `rule` names the C++ function (in lib/Registry/Rules*.cpp) that checks the
/// shape and dtype rules and infers the result types; the generic checks
/// (operand count, element types, ranks, params schema) come from the fields
/// below and run first.
class FusedOp<int id, string name, FusedFamily fam> {
  int opId = id;
  string opName = name;
  FusedFamily family = fam;
  list<FusedOperand> operands = [];
  list<FusedResult> results = [];
  list<FusedParam> params = [];
  FusedBackwardKind backward = NotDifferentiable;
  /// Index of the operand the op destroys (writes in place), or -1.
  int destructiveInput = -1;
  string rule = "";
  /// The C++ function (lib/Recipes/Recipes*.cpp) that builds the op's recipe,
  /// the one definition that decomposition and fusion share; empty while the
  /// op has none. The Recipes library binds it to the op through a table
  /// generated from this field.
  string recipe = "";
  /// The C++ function (lib/Decompose/Decompose*.cpp) that decomposes the
  /// forms of the op its recipe does not cover, or the whole op when it has
  /// no recipe (then fusion cannot find it); bound by the Decompose library.
  string decomposition = "";
  /// What the recipe does not cover, or why there is none (the primitives it
  /// would need); required with a `decomposition`.
  string recipeNote = "";
  /// How codegen schedules the op's decomposition (lib/Codegen,
  /// `ScheduleKind`): "RowWise", "Contraction", "Attention",
  /// "Quantized", "Convolution", "RowLoss", "Scan", or empty for none (lowered as
  /// decomposed).
  string schedule = "";
  string summary = "";
  string description = "";
  /// The independent reference the op is tested against.
  string reference = "";
}

#endif // FUEL_FUSEDOPSBASE_TD
