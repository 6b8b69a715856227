//===- FuelOps.cpp - fuel.fused -------------------------------------------===//
//
// The one op of the dialect: parsing and printing, verification against the
// registry, result type inference and memory effects.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/IR/FuelOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::fuel;

#define GET_OP_CLASSES
#include "FuelFused/IR/FuelOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Builders and accessors
//===----------------------------------------------------------------------===//

void FusedOp::build(OpBuilder &builder, OperationState &state, KindAttr kind,
                    ValueRange inputs, ArrayRef<NamedAttribute> params) {
  DictionaryAttr dict = builder.getDictionaryAttr(params);
  const FusedOpInfo *info = kind.getInfo();
  if (info)
    dict = canonicalizeParams(*info, dict);
  state.addOperands(inputs);
  state.addAttribute(getKindAttrName(state.name), kind);
  state.addAttribute(getParamsAttrName(state.name), dict);
  SmallVector<Type> types;
  // On failure the op is built without results and fails to verify.
  if (info && succeeded(inferFusedOpTypes(*info, inputs, dict, nullptr, types)))
    state.addTypes(types);
}

Attribute FusedOp::getParam(StringRef name) {
  if (!getInfo().getParam(name))
    return {};
  return getParamValue(getInfo(), getParams(), name, getContext());
}

Value FusedOp::getOperandNamed(StringRef name) {
  // Bind operands to specs exactly as the verifier does: required ones in
  // order, optional ones by kind.
  const FusedOpInfo &info = getInfo();
  unsigned next = 0;
  for (const OperandSpec &spec : info.operands) {
    if (next >= getNumOperands())
      return {};
    Value v = getOperand(next);
    if (spec.optional &&
        (spec.element == ElementKind::Index) != v.getType().isIndex())
      continue;
    ++next;
    if (spec.name == name)
      return v;
  }
  return {};
}

//===----------------------------------------------------------------------===//
// Assembly
//===----------------------------------------------------------------------===//

// fuel.fused NAME {params}? (operands) (attributes {attrs})? : (types) -> types
ParseResult FusedOp::parse(OpAsmParser &parser, OperationState &result) {
  MLIRContext *ctx = parser.getContext();
  std::string name;
  SMLoc nameLoc = parser.getCurrentLocation();
  // An op defined by a recipe is named by the recipe's symbol.
  StringAttr recipe;
  if (succeeded(parser.parseOptionalSymbolName(recipe))) {
    name = recipe.getValue().str();
    const FusedOpInfo *info = lookupFusedOp(name);
    if (!info || !info->runtimeRecipe)
      return parser.emitError(nameLoc)
             << "unknown fused op @" << name
             << ": no fuel.recipe @" << name << " comes before it";
    result.addAttribute(getRecipeAttrName(result.name),
                        FlatSymbolRefAttr::get(recipe));
  } else if (parser.parseKeywordOrString(&name)) {
    return failure();
  }
  const FusedOpInfo *info = lookupFusedOp(name);
  if (!info)
    return parser.emitError(nameLoc) << "unknown fused op '" << name << "'";

  // The params are checked by the verifier, like those of the generic form.
  NamedAttrList params;
  if (parser.parseOptionalAttrDict(params))
    return failure();
  DictionaryAttr dict = params.getDictionary(ctx);

  SmallVector<OpAsmParser::UnresolvedOperand> operands;
  SMLoc operandsLoc = parser.getCurrentLocation();
  FunctionType type;
  if (parser.parseOperandList(operands, OpAsmParser::Delimiter::Paren) ||
      parser.parseOptionalAttrDictWithKeyword(result.attributes) ||
      parser.parseColonType(type) ||
      parser.resolveOperands(operands, type.getInputs(), operandsLoc,
                             result.operands))
    return failure();
  result.addAttribute(getKindAttrName(result.name),
                      KindAttr::get(ctx, info->id));
  result.addAttribute(getParamsAttrName(result.name),
                      canonicalizeParams(*info, dict));
  result.addTypes(type.getResults());
  return success();
}

void FusedOp::print(OpAsmPrinter &p) {
  if (getRecipeAttr() && getKind().getInfo() &&
      getKind().getInfo()->runtimeRecipe) {
    p << ' ';
    p.printSymbolName(getRecipeAttr().getValue());
  } else {
    p << ' ' << getKind().getName();
  }
  if (!getParams().empty()) {
    p << ' ';
    p.printAttributeWithoutType(getParams());
  }
  p << " (";
  p.printOperands(getOperands());
  p << ')';
  p.printOptionalAttrDictWithKeyword(
      (*this)->getAttrs(),
      {getKindAttrName().getValue(), getParamsAttrName().getValue(),
       getRecipeAttrName().getValue()});
  p << " : ";
  p.printFunctionalType(getOperandTypes(), getResultTypes());
}

//===----------------------------------------------------------------------===//
// Verification and type inference
//===----------------------------------------------------------------------===//

LogicalResult FusedOp::verify() {
  const FusedOpInfo &info = getInfo();
  auto emit = [&]() { return emitOpError(); };
  if (failed(verifyParams(info, getParams(), emit)))
    return failure();
  SmallVector<Type> inferred;
  if (failed(inferFusedOpTypes(info, getOperands(), getParams(), emit,
                               inferred)))
    return failure();
  if (inferred.size() != getNumResults())
    return emitOpError() << info.name << ": result types: expects "
                         << inferred.size() << " results, got "
                         << getNumResults();
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(inferred, getResultTypes()))) {
    auto [want, got] = pair;
    if (!isCompatibleReturnTypes(TypeRange(want), TypeRange(got)))
      return emitOpError() << info.name << ": result types: result #" << i
                           << " must be " << want << ", got " << got;
  }
  return success();
}

LogicalResult FusedOp::inferReturnTypes(
    MLIRContext *ctx, std::optional<Location> location, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  auto emit = [&]() { return mlir::emitError(*location); };
  function_ref<InFlightDiagnostic()> emitError;
  if (location)
    emitError = emit;
  auto fail = [&](const Twine &msg) -> LogicalResult {
    if (location)
      mlir::emitError(*location) << "fuel.fused: " << msg;
    return failure();
  };
  auto kind = attributes ? dyn_cast_or_null<KindAttr>(attributes.get("kind"))
                         : KindAttr();
  if (!kind)
    return fail("missing 'kind' attribute");
  const FusedOpInfo *info = kind.getInfo();
  if (!info)
    return fail("unknown fused op id " + Twine(kind.getId()));
  Attribute paramsAttr = attributes.get("params");
  auto params = dyn_cast_or_null<DictionaryAttr>(paramsAttr);
  if (paramsAttr && !params)
    return fail("'params' must be a dictionary");
  if (!params)
    params = DictionaryAttr::get(ctx);
  if (failed(verifyParams(*info, params, emitError)))
    return failure();
  return inferFusedOpTypes(*info, operands, params, emitError,
                           inferredReturnTypes);
}

/// A declared result type may be more static than the inferred one (for
/// example when dynamic inputs are known to have a static shape).
bool FusedOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  if (l.size() != r.size())
    return false;
  for (auto [a, b] : llvm::zip(l, r)) {
    if (a == b)
      continue;
    auto ta = dyn_cast<RankedTensorType>(a), tb = dyn_cast<RankedTensorType>(b);
    if (!ta || !tb || ta.getElementType() != tb.getElementType() ||
        failed(verifyCompatibleShape(ta, tb)))
      return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Side effects
//===----------------------------------------------------------------------===//

/// Pure, except that a destructive op whose destroyed operand is a memref
/// reads and writes it in place.
void FusedOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  const FusedOpInfo *info = getKind().getInfo();
  if (!info || info->destructiveInput < 0 ||
      info->destructiveInput >= static_cast<int>(getNumOperands()))
    return;
  OpOperand &destroyed = getOperation()->getOpOperand(info->destructiveInput);
  if (!isa<MemRefType>(destroyed.get().getType()))
    return;
  effects.emplace_back(MemoryEffects::Read::get(), &destroyed,
                       SideEffects::DefaultResource::get());
  effects.emplace_back(MemoryEffects::Write::get(), &destroyed,
                       SideEffects::DefaultResource::get());
}

Speculation::Speculatability FusedOp::getSpeculatability() {
  for (Type t : getOperandTypes())
    if (isa<MemRefType>(t))
      return Speculation::NotSpeculatable;
  return Speculation::Speculatable;
}
