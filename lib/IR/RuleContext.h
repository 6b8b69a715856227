//===- RuleContext.h - What a registry rule sees ----------------*- C++ -*-===//
//
// A rule checks an op's shape and dtype rules and infers its result types.
// It runs after the generic checks (operand count, element kinds, ranks,
// params schema), so it may assume those hold: every present operand has the
// declared element kind and a rank in the declared range, and every param
// has the declared attribute kind.
//
//===----------------------------------------------------------------------===//

#ifndef FUEL_LIB_IR_RULECONTEXT_H
#define FUEL_LIB_IR_RULECONTEXT_H

#include "FuelFused/IR/Registry.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"


namespace mlir {
namespace fuel {

class RuleContext {
public:
  RuleContext(const FusedOpInfo &info, ArrayRef<Value> bound,
              DictionaryAttr params,
              function_ref<InFlightDiagnostic()> emitError,
              SmallVectorImpl<Type> &results)
      : info(info), bound(bound), paramsDict(params), emitErrorFn(emitError),
        results(results) {}

  const FusedOpInfo &info;

  //===--------------------------------------------------------------------===//
  // Operands, by their index in the registry entry.
  //===--------------------------------------------------------------------===//

  bool has(unsigned i) const { return i < bound.size() && bound[i]; }
  Value operand(unsigned i) const { return bound[i]; }
  ShapedType type(unsigned i) const {
    return cast<ShapedType>(bound[i].getType());
  }
  StringRef name(unsigned i) const { return info.operands[i].name; }
  int64_t rank(unsigned i) const { return type(i).getRank(); }
  /// Dim `d` of operand `i`; a negative `d` counts from the last dim.
  int64_t dim(unsigned i, int64_t d) const {
    ShapedType t = type(i);
    return t.getDimSize(d < 0 ? t.getRank() + d : d);
  }
  Type elementType(unsigned i) const { return type(i).getElementType(); }

  //===--------------------------------------------------------------------===//
  // Params (defaults applied).
  //===--------------------------------------------------------------------===//

  /// The params, typed: `ctx.params<Conv2dParams>().getGroups()` (the
  /// classes are generated per op, FusedOpViews.h).
  template <typename Params>
  Params params() const {
    return Params(paramsDict, getContext());
  }
  MLIRContext *getContext() const;

  //===--------------------------------------------------------------------===//
  // Diagnostics
  //===--------------------------------------------------------------------===//

  /// Reports "<op>: <rule>: <message>" (when reporting is on) and fails.
  LogicalResult fail(StringRef rule, const Twine &message) const;

  /// Checks that dim `da` of operand `a` equals dim `db` of operand `b`
  /// when both are static.
  LogicalResult expectDimsEqual(unsigned a, int64_t da, unsigned b, int64_t db,
                                StringRef rule = "shape rule") const;
  /// Checks that dim `d` of operand `a` equals `value` when both are static.
  LogicalResult expectDimEquals(unsigned a, int64_t d, int64_t value,
                                const Twine &what,
                                StringRef rule = "shape rule") const;
  /// Checks that the listed (present) operands share one element type.
  LogicalResult expectSameElementType(ArrayRef<unsigned> operands) const;
  /// Checks that operands `a` and `b` have compatible shapes.
  LogicalResult expectSameShape(unsigned a, unsigned b) const;

  //===--------------------------------------------------------------------===//
  // Checked size arithmetic: a size that does not fit in 64 bits fails the
  // rule ("<what> overflows 64 bits") instead of wrapping.
  //===--------------------------------------------------------------------===//

  FailureOr<int64_t> add(int64_t a, int64_t b, const Twine &what) const;
  FailureOr<int64_t> sub(int64_t a, int64_t b, const Twine &what) const;
  FailureOr<int64_t> mul(int64_t a, int64_t b, const Twine &what) const;

  //===--------------------------------------------------------------------===//
  // Results
  //===--------------------------------------------------------------------===//

  void addResult(Type t) { results.push_back(t); }
  void addTensorResult(ArrayRef<int64_t> shape, Type elementType) {
    results.push_back(RankedTensorType::get(shape, elementType));
  }

private:
  ArrayRef<Value> bound;
  DictionaryAttr paramsDict;
  function_ref<InFlightDiagnostic()> emitErrorFn;
  SmallVectorImpl<Type> &results;
};

/// Static dims: true when both are known and differ.
inline bool dimsConflict(int64_t a, int64_t b) {
  return !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b;
}

/// Formats a dim for diagnostics ("?" for dynamic).
std::string formatDim(int64_t d);

namespace rules {
#define GET_FUSED_OP_RULE_DECLS
#include "FuelFused/IR/FusedOpRegistry.inc"
} // namespace rules

} // namespace fuel
} // namespace mlir

#endif // FUEL_LIB_IR_RULECONTEXT_H
