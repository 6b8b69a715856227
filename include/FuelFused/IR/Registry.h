//===- Registry.h - The fused-op registry -----------------------*- C++ -*-===//
//
// The registry of fused ops: the static entries generated from FusedOps.td
// and the ops registered at run time (ids >= 0x8000). Each entry describes
// an op's identity, operands, results, params schema, backward link and the
// rule that checks shapes and dtypes and infers result types.
//
//===----------------------------------------------------------------------===//

#ifndef FUELFUSED_IR_REGISTRY_H
#define FUELFUSED_IR_REGISTRY_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/ValueRange.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Types.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir {
class MLIRContext;
namespace fuel {

/// Ids below this are static (generated from FusedOps.td); ids from here on
/// are allocated to ops registered at run time.
constexpr uint32_t kRuntimeIdBase = 0x8000;
/// The largest id (ids are 16-bit, as in the original registry).
constexpr uint32_t kMaxId = 0xFFFF;

inline bool isRuntimeId(uint32_t id) { return id >= kRuntimeIdBase; }

enum class Family { Forward, Backward, Quantized, Attention, Norm };
enum class BackwardKind { Fused, Decompose, NotDifferentiable };
enum class ElementKind { AnyFloat, F32, Int64, Int32, Int8, Index };
enum class ParamKind { F64, F32, I64, I32, Bool, Pair, Reduction, QuantType };

StringRef stringifyElementKind(ElementKind k);
StringRef stringifyParamKind(ParamKind k);

/// One operand of a fused op.
struct OperandSpec {
  StringRef name;
  ElementKind element;
  int minRank;
  int maxRank; ///< -1: unbounded.
  bool optional;
  StringRef doc;
};

/// One result of a fused op.
struct ResultSpec {
  StringRef name;
  StringRef doc;
};

/// One typed param. `getDefault` is null for required and optional params.
/// `check` returns the description of the first failed range check, or an
/// empty string; it is only called on attributes of the right kind.
struct ParamSpec {
  StringRef name;
  ParamKind kind;
  bool optional;
  StringRef defaultText; ///< As written in the record; empty if none.
  Attribute (*getDefault)(MLIRContext *ctx);
  StringRef (*check)(Attribute value);
  StringRef doc;

  bool hasDefault() const { return getDefault != nullptr; }
  bool isRequired() const { return !optional && !hasDefault(); }
};

class RuleContext;
using RuleFn = LogicalResult (*)(RuleContext &);

/// The computation of an op defined in IR by a `fuel.recipe`: scalar steps
/// over the element values of its operands and its params. Values are
/// numbered: operand i's element is value i, the params follow, then one
/// value per step. Two recipes are the same op when their structures (the
/// steps, the operand count and the param names; not the names of the
/// recipes) are equal.
struct RuntimeRecipe {
  struct Step {
    /// The op's name: "arith.addf", "math.exp", "arith.constant", ...
    std::string op;
    SmallVector<unsigned> operands;
    /// arith.constant: the value.
    double constant = 0.0;
  };
  unsigned numOperands = 0;
  SmallVector<std::string> params;
  SmallVector<Step> steps;
  /// The value the recipe yields.
  unsigned result = 0;

  /// A canonical text of the structure: equal for equal structures.
  std::string structure() const;
};

/// A registry entry.
struct FusedOpInfo {
  uint32_t id;
  StringRef name;
  Family family;
  ArrayRef<OperandSpec> operands;
  ArrayRef<ResultSpec> results;
  ArrayRef<ParamSpec> params;
  BackwardKind backward;
  ArrayRef<StringRef> backwardTargets;
  int destructiveInput; ///< -1: none.
  RuleFn rule;
  /// Whether the op has a recipe (the Recipes library binds it; runtime ops
  /// have none yet). Without one, `recipeNote` says why.
  bool hasRecipe;
  /// Whether the op has a hand-written decomposition (the Decompose library
  /// binds it): for an op without a recipe, or the forms its recipe does not
  /// cover, which `recipeNote` names.
  bool hasDecomposition;
  StringRef recipeNote;
  StringRef summary;
  StringRef description;
  /// The recipe of an op defined in IR (`fuel.recipe`); null otherwise.
  const RuntimeRecipe *runtimeRecipe = nullptr;

  bool isRuntime() const { return isRuntimeId(id); }
  const ParamSpec *getParam(StringRef paramName) const;
  unsigned getNumRequiredOperands() const;
};

/// The static entries, sorted by id.
ArrayRef<FusedOpInfo> getStaticOps();

/// Looks an entry up by id or name, static or runtime-registered. Returns
/// null when there is none.
const FusedOpInfo *lookupFusedOp(uint32_t id);
const FusedOpInfo *lookupFusedOp(StringRef name);

/// Registers an op at run time. Ops are deduplicated by name: registering a
/// name again with the same arity returns the same id. Fails (returns
/// std::nullopt with `error` set) for a name that collides with a static op
/// or with a different arity, or when the runtime id space is exhausted.
/// Runtime ops have AnyFloat tensor operands of any rank, one result shaped
/// like the first operand, and f64 params (the recipe's scalar slots).
std::optional<uint32_t> registerRuntimeOp(StringRef name, unsigned numOperands,
                                          ArrayRef<StringRef> paramNames,
                                          std::string &error);

/// Registers the op a `fuel.recipe @name` defines. Ops are deduplicated by
/// structure: a recipe equal to a registered one returns its id, and `name`
/// becomes another name of it. Fails (returns std::nullopt with `error`
/// set) when `name` is a static op, or names another op (a recipe with
/// another structure, or a runtime op registered without a recipe), or
/// when the runtime id space is exhausted. The op's operands are float
/// tensors of one shape and element type, its params f64 values, and its
/// result is shaped like its operands.
std::optional<uint32_t> registerRuntimeRecipe(StringRef name,
                                              const RuntimeRecipe &recipe,
                                              std::string &error);

/// Makes the op `name` names, defined by a recipe, a candidate of every
/// `--fuel-fuse` run that starts later in this process, as if its recipe
/// (`text`, a module holding the `fuel.recipe`) were in a recipe library
/// (`recipes=`): what registering a recipe from Python does. The first text
/// given for an op is kept. Fails (with `error` set) when `name` is not an
/// op defined by a recipe.
LogicalResult addFusionRecipe(StringRef name, StringRef text,
                              std::string &error);

/// The texts addFusionRecipe kept, in the order they were added.
std::vector<std::string> getFusionRecipes();

/// Checks the params dictionary of an op against its schema: only known
/// names, right attribute kinds, values in range, required params present.
/// An optional param may be a unit attribute, meaning explicitly unset.
LogicalResult verifyParams(const FusedOpInfo &info, DictionaryAttr params,
                           function_ref<InFlightDiagnostic()> emitError);

/// Returns `params` in canonical form: every entry equal to its default, and
/// every optional param spelled explicitly unset (a unit attribute), removed.
DictionaryAttr canonicalizeParams(const FusedOpInfo &info,
                                  DictionaryAttr params);

/// The value of param `name` of `info`'s op in `params` (which may be null):
/// the attribute if set, else the param's default (built in `ctx`), else null
/// (an unset optional param).
Attribute getParamValue(const FusedOpInfo &info, DictionaryAttr params,
                        StringRef name, MLIRContext *ctx);

/// Verifies operands (count, element kinds, ranks) and runs the op's rule.
/// On success `resultTypes` holds the inferred result types. `emitError` may
/// be null, in which case nothing is reported.
LogicalResult inferFusedOpTypes(const FusedOpInfo &info, ValueRange operands,
                                DictionaryAttr params,
                                function_ref<InFlightDiagnostic()> emitError,
                                SmallVectorImpl<Type> &resultTypes);

} // namespace fuel
} // namespace mlir

#endif // FUELFUSED_IR_REGISTRY_H
