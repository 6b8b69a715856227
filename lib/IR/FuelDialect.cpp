//===- FuelDialect.cpp - The fuel dialect and its attributes --------------===//

#include "FuelFused/IR/FuelDialect.h"
#include "FuelFused/IR/FuelAttrs.h"
#include "FuelFused/IR/FuelOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::fuel;

#include "FuelFused/IR/FuelDialect.cpp.inc"
#include "FuelFused/IR/FuelEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "FuelFused/IR/FuelAttrs.cpp.inc"

void FuelDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "FuelFused/IR/FuelAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "FuelFused/IR/FuelOps.cpp.inc"
      >();
  // Decomposition is lowering code: the Decompose library attaches it
  // (registerAggregatedOpInterfaceExternalModels).
  declarePromisedInterface<linalg::AggregatedOpInterface, FusedOp>();
}

//===----------------------------------------------------------------------===//
// QuantType, NF4
//===----------------------------------------------------------------------===//

ArrayRef<float> mlir::fuel::getNf4CodeBook() {
  static const float table[16] = {
      -1.0f,
      -0.6961928009986877f,
      -0.5250730514526367f,
      -0.39491748809814453f,
      -0.28444138169288635f,
      -0.18477343022823334f,
      -0.09105003625154495f,
      0.0f,
      0.07958029955625534f,
      0.16093020141124725f,
      0.24611230194568634f,
      0.33791524171829224f,
      0.44070982933044434f,
      0.5626170039176941f,
      0.7229568362236023f,
      1.0f};
  return table;
}

std::pair<int64_t, int64_t> mlir::fuel::getQuantBlockGeometry(QuantType type) {
  switch (type) {
  case QuantType::Q4_0:
    return {32, 18};
  case QuantType::Q4_1:
    return {32, 20};
  case QuantType::Q5_0:
    return {32, 22};
  case QuantType::Q5_1:
    return {32, 24};
  case QuantType::Q8_0:
    return {32, 34};
  case QuantType::Q8_1:
    return {32, 36};
  case QuantType::Q2_K:
    return {256, 84};
  case QuantType::Q3_K:
    return {256, 110};
  case QuantType::Q4_K:
    return {256, 144};
  case QuantType::Q5_K:
    return {256, 176};
  case QuantType::Q6_K:
    return {256, 210};
  }
  llvm_unreachable("unknown quant type");
}

//===----------------------------------------------------------------------===//
// KindAttr
//===----------------------------------------------------------------------===//

const FusedOpInfo *KindAttr::getInfo() const { return lookupFusedOp(getId()); }

StringRef KindAttr::getName() const {
  const FusedOpInfo *info = getInfo();
  return info ? info->name : StringRef("<unknown>");
}

LogicalResult KindAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               uint32_t id) {
  if (!lookupFusedOp(id))
    return emitError() << "unknown fused op id " << id
                       << (isRuntimeId(id) ? " (no runtime op has this id)"
                                           : "");
  return success();
}

/// Parses `<name>` (a registered op, static or runtime) or `<id>`.
Attribute KindAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess())
    return {};
  uint32_t id = 0;
  OptionalParseResult parsedId = parser.parseOptionalInteger(id);
  if (parsedId.has_value()) {
    if (failed(*parsedId) || parser.parseGreater())
      return {};
    return KindAttr::getChecked([&] { return parser.emitError(loc); },
                                parser.getContext(), id);
  }
  std::string name;
  if (parser.parseKeywordOrString(&name) || parser.parseGreater())
    return {};
  const FusedOpInfo *info = lookupFusedOp(name);
  if (!info) {
    parser.emitError(loc) << "unknown fused op '" << name << "'";
    return {};
  }
  return KindAttr::get(parser.getContext(), info->id);
}

void KindAttr::print(AsmPrinter &printer) const {
  printer << "<" << getName() << ">";
}
