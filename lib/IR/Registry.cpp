//===- Registry.cpp - The fused-op registry -------------------------------===//
//
// Lookups over the generated static table and the runtime-registered ops,
// and the generic checks every op gets from its record: operand count,
// element kinds, ranks and the params schema. The per-op shape and dtype
// rules live in Rules*.cpp.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/IR/Registry.h"
#include "FuelFused/IR/FuelAttrs.h"
#include "RuleContext.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <deque>
#include <memory>
#include <mutex>

using namespace mlir;
using namespace mlir::fuel;

namespace mlir::fuel {
#define GET_FUSED_OP_TABLE
#include "FuelFused/IR/FusedOpRegistry.inc"
} // namespace mlir::fuel

//===----------------------------------------------------------------------===//
// Enum spellings
//===----------------------------------------------------------------------===//

StringRef mlir::fuel::stringifyElementKind(ElementKind k) {
  switch (k) {
  case ElementKind::AnyFloat:
    return "f16, bf16, f32 or f64";
  case ElementKind::F32:
    return "f32";
  case ElementKind::Int64:
    return "64-bit integer";
  case ElementKind::Int32:
    return "32-bit integer";
  case ElementKind::Int8:
    return "8-bit integer";
  case ElementKind::Index:
    return "index";
  }
  llvm_unreachable("unknown element kind");
}

StringRef mlir::fuel::stringifyParamKind(ParamKind k) {
  switch (k) {
  case ParamKind::F64:
    return "an f64 float";
  case ParamKind::F32:
    return "an f32 float";
  case ParamKind::I64:
    return "an i64 integer";
  case ParamKind::I32:
    return "an i32 integer";
  case ParamKind::Bool:
    return "a bool";
  case ParamKind::Pair:
    return "a pair array<i64: a, b>";
  case ParamKind::Reduction:
    return "a #fuel.reduction<mean|sum|none>";
  case ParamKind::QuantType:
    return "a #fuel.quant<...> GGML quant type";
  }
  llvm_unreachable("unknown param kind");
}

//===----------------------------------------------------------------------===//
// FusedOpInfo
//===----------------------------------------------------------------------===//

const ParamSpec *FusedOpInfo::getParam(StringRef paramName) const {
  for (const ParamSpec &p : params)
    if (p.name == paramName)
      return &p;
  return nullptr;
}

unsigned FusedOpInfo::getNumRequiredOperands() const {
  return llvm::count_if(operands,
                        [](const OperandSpec &o) { return !o.optional; });
}

ArrayRef<FusedOpInfo> mlir::fuel::getStaticOps() { return staticFusedOps; }

//===----------------------------------------------------------------------===//
// Runtime-registered ops
//===----------------------------------------------------------------------===//

namespace {
/// Owns the strings and specs a runtime entry's FusedOpInfo points into.
struct RuntimeEntry {
  std::string name;
  /// For an op defined by a recipe: the recipe and its structure.
  std::unique_ptr<RuntimeRecipe> recipe;
  std::string structure;
  std::deque<std::string> strings;
  SmallVector<OperandSpec> operands;
  SmallVector<ParamSpec> params;
  ResultSpec result{"y", "shaped like the first operand"};
  FusedOpInfo info;
};

struct RuntimeRegistry {
  std::mutex mutex;
  std::deque<std::unique_ptr<RuntimeEntry>> entries;
  llvm::StringMap<uint32_t> byName;
  /// Ops defined by recipes, by structure.
  llvm::StringMap<uint32_t> byStructure;
  /// The recipes every later fusion searches for (addFusionRecipe).
  std::vector<std::pair<uint32_t, std::string>> fusionRecipes;
};

RuntimeRegistry &getRuntimeRegistry() {
  static RuntimeRegistry registry;
  return registry;
}
} // namespace

/// Checks that `name` can name a runtime op: an identifier that is not a
/// static op's name.
static LogicalResult checkRuntimeName(StringRef name, StringRef what,
                                      std::string &error) {
  if (name.empty() || !llvm::all_of(name, [](char c) {
        return llvm::isAlnum(c) || c == '_';
      }) || llvm::isDigit(name.front())) {
    error = ("invalid " + what + " name '" + name +
             "': expected [A-Za-z_][A-Za-z0-9_]*")
                .str();
    return failure();
  }
  for (const FusedOpInfo &info : getStaticOps())
    if (info.name == name) {
      error = ("'" + name + "' is a static fused op").str();
      return failure();
    }
  return success();
}

/// Adds an entry for the op `name` with `numOperands` float operands, f64
/// `params` and one result; `reg.mutex` must be held. Returns its id, or
/// std::nullopt with `error` set when the id space is exhausted.
static std::optional<uint32_t>
addRuntimeEntry(RuntimeRegistry &reg, StringRef name, unsigned numOperands,
                ArrayRef<std::string> params, StringRef paramDoc, RuleFn rule,
                std::unique_ptr<RuntimeRecipe> recipe, std::string &error) {
  if (kRuntimeIdBase + reg.entries.size() > kMaxId) {
    error = "the runtime fused-op id space is exhausted";
    return std::nullopt;
  }
  auto entry = std::make_unique<RuntimeEntry>();
  entry->name = name.str();
  for (unsigned i = 0; i < numOperands; ++i) {
    StringRef n = entry->strings.emplace_back("in" + std::to_string(i));
    entry->operands.push_back(
        {n, ElementKind::AnyFloat, 0, -1, /*optional=*/false, ""});
  }
  for (const std::string &p : params) {
    StringRef n = entry->strings.emplace_back(p);
    entry->params.push_back({n, ParamKind::F64, /*optional=*/false, "", nullptr,
                             nullptr, paramDoc});
  }
  bool hasRecipe = recipe != nullptr;
  if (recipe) {
    entry->structure = recipe->structure();
    entry->recipe = std::move(recipe);
    entry->result = {"y", "shaped like the operands"};
  }
  uint32_t id = kRuntimeIdBase + reg.entries.size();
  entry->info = FusedOpInfo{
      id,
      entry->name,
      Family::Forward,
      entry->operands,
      ArrayRef<ResultSpec>(entry->result),
      entry->params,
      BackwardKind::Decompose,
      {},
      -1,
      rule,
      hasRecipe,
      /*hasDecomposition=*/false,
      hasRecipe ? "" : "a runtime-registered op has no recipe yet",
      hasRecipe ? "fused op defined by a recipe in IR"
                : "runtime-registered fused op",
      "",
      entry->recipe.get()};
  reg.byName[entry->name] = id;
  if (hasRecipe)
    reg.byStructure[entry->structure] = id;
  reg.entries.push_back(std::move(entry));
  return id;
}

std::optional<uint32_t>
mlir::fuel::registerRuntimeOp(StringRef name, unsigned numOperands,
                              ArrayRef<StringRef> paramNames,
                              std::string &error) {
  if (failed(checkRuntimeName(name, "runtime op", error)))
    return std::nullopt;
  if (numOperands == 0) {
    error = "a runtime op needs at least one operand";
    return std::nullopt;
  }
  RuntimeRegistry &reg = getRuntimeRegistry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  auto it = reg.byName.find(name);
  if (it != reg.byName.end()) {
    const RuntimeEntry &e = *reg.entries[it->second - kRuntimeIdBase];
    bool same = e.operands.size() == numOperands &&
                e.params.size() == paramNames.size() &&
                llvm::all_of(llvm::zip(e.params, paramNames), [](auto pair) {
                  return std::get<0>(pair).name == std::get<1>(pair);
                });
    if (!same) {
      error = ("runtime op '" + name +
               "' is already registered with a different signature")
                  .str();
      return std::nullopt;
    }
    return it->second;
  }
  SmallVector<std::string> params;
  for (StringRef p : paramNames)
    params.push_back(p.str());
  return addRuntimeEntry(reg, name, numOperands, params, "recipe scalar slot",
                         rules::sameAsFirst, nullptr, error);
}

std::string RuntimeRecipe::structure() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << numOperands << " operands; params";
  for (const std::string &p : params)
    os << ' ' << p;
  for (const Step &step : steps) {
    os << "; " << step.op;
    if (step.op == "arith.constant")
      os << ' ' << llvm::formatv("{0:e16}", step.constant).str();
    for (unsigned v : step.operands)
      os << " %" << v;
  }
  os << "; yield %" << result;
  return text;
}

/// The rule of ops defined by recipes: elementwise over operands of one
/// shape and element type.
static LogicalResult elementwiseRecipeRule(RuleContext &ctx) {
  SmallVector<unsigned> all;
  for (unsigned i = 0, e = ctx.info.operands.size(); i < e; ++i)
    all.push_back(i);
  if (failed(ctx.expectSameElementType(all)))
    return failure();
  for (unsigned i = 1, e = all.size(); i < e; ++i)
    if (failed(ctx.expectSameShape(0, i)))
      return failure();
  ctx.addResult(ctx.type(0));
  return success();
}

std::optional<uint32_t>
mlir::fuel::registerRuntimeRecipe(StringRef name, const RuntimeRecipe &recipe,
                                  std::string &error) {
  if (failed(checkRuntimeName(name, "recipe", error)))
    return std::nullopt;
  std::string structure = recipe.structure();
  RuntimeRegistry &reg = getRuntimeRegistry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  auto named = reg.byName.find(name);
  if (named != reg.byName.end()) {
    const RuntimeEntry &e = *reg.entries[named->second - kRuntimeIdBase];
    if (e.structure == structure)
      return named->second;
    error = e.recipe ? ("'" + name +
                        "' is already defined by a recipe that computes "
                        "something else")
                           .str()
                     : ("'" + name +
                        "' is already registered as a runtime op without a "
                        "recipe")
                           .str();
    return std::nullopt;
  }
  auto same = reg.byStructure.find(structure);
  if (same != reg.byStructure.end()) {
    reg.byName[name] = same->second;
    return same->second;
  }
  return addRuntimeEntry(reg, name, recipe.numOperands, recipe.params,
                         "a param of the recipe", elementwiseRecipeRule,
                         std::make_unique<RuntimeRecipe>(recipe), error);
}

//===----------------------------------------------------------------------===//
// Lookup
//===----------------------------------------------------------------------===//

const FusedOpInfo *mlir::fuel::lookupFusedOp(uint32_t id) {
  if (isRuntimeId(id)) {
    RuntimeRegistry &reg = getRuntimeRegistry();
    std::lock_guard<std::mutex> lock(reg.mutex);
    uint32_t slot = id - kRuntimeIdBase;
    if (slot >= reg.entries.size())
      return nullptr;
    return &reg.entries[slot]->info;
  }
  ArrayRef<FusedOpInfo> ops = getStaticOps();
  auto it = llvm::lower_bound(
      ops, id, [](const FusedOpInfo &info, uint32_t v) { return info.id < v; });
  if (it == ops.end() || it->id != id)
    return nullptr;
  return &*it;
}

const FusedOpInfo *mlir::fuel::lookupFusedOp(StringRef name) {
  for (const FusedOpInfo &info : getStaticOps())
    if (info.name == name)
      return &info;
  RuntimeRegistry &reg = getRuntimeRegistry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  auto it = reg.byName.find(name);
  if (it == reg.byName.end())
    return nullptr;
  return &reg.entries[it->second - kRuntimeIdBase]->info;
}

LogicalResult mlir::fuel::addFusionRecipe(StringRef name, StringRef text,
                                          std::string &error) {
  const FusedOpInfo *info = lookupFusedOp(name);
  if (!info || !info->runtimeRecipe) {
    error = ("'" + name + "' is not an op defined by a recipe").str();
    return failure();
  }
  RuntimeRegistry &reg = getRuntimeRegistry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  if (llvm::none_of(reg.fusionRecipes,
                    [&](auto &entry) { return entry.first == info->id; }))
    reg.fusionRecipes.emplace_back(info->id, text.str());
  return success();
}

std::vector<std::string> mlir::fuel::getFusionRecipes() {
  RuntimeRegistry &reg = getRuntimeRegistry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  std::vector<std::string> texts;
  for (auto &entry : reg.fusionRecipes)
    texts.push_back(entry.second);
  return texts;
}

//===----------------------------------------------------------------------===//
// Params
//===----------------------------------------------------------------------===//

/// Whether `attr` has the attribute kind that `kind` asks for.
static bool hasParamKind(Attribute attr, ParamKind kind) {
  switch (kind) {
  case ParamKind::F64:
    return isa<FloatAttr>(attr) && cast<FloatAttr>(attr).getType().isF64();
  case ParamKind::F32:
    return isa<FloatAttr>(attr) && cast<FloatAttr>(attr).getType().isF32();
  case ParamKind::I64:
  case ParamKind::I32: {
    auto intAttr = dyn_cast<IntegerAttr>(attr);
    unsigned width = kind == ParamKind::I64 ? 64 : 32;
    return intAttr && intAttr.getType().isSignlessInteger(width);
  }
  case ParamKind::Bool:
    return isa<BoolAttr>(attr);
  case ParamKind::Pair: {
    auto arr = dyn_cast<DenseI64ArrayAttr>(attr);
    return arr && arr.size() == 2;
  }
  case ParamKind::Reduction:
    return isa<ReductionAttr>(attr);
  case ParamKind::QuantType:
    return isa<QuantTypeAttr>(attr);
  }
  return false;
}

LogicalResult
mlir::fuel::verifyParams(const FusedOpInfo &info, DictionaryAttr params,
                         function_ref<InFlightDiagnostic()> emitError) {
  auto fail = [&](const Twine &msg) -> LogicalResult {
    if (emitError)
      emitError() << info.name << ": params schema: " << msg;
    return failure();
  };
  if (params) {
    for (NamedAttribute entry : params) {
      const ParamSpec *spec = info.getParam(entry.getName());
      if (!spec) {
        std::string known;
        for (const ParamSpec &p : info.params)
          known += (known.empty() ? "" : ", ") + p.name.str();
        return fail("unknown param '" + entry.getName().strref() + "' (" +
                    (known.empty() ? std::string("the op has no params")
                                   : "params: " + known) +
                    ")");
      }
      // An optional param may be spelled explicitly unset (a unit attribute).
      if (spec->optional && isa<UnitAttr>(entry.getValue()))
        continue;
      // The value as written, for a message (printed only on failure: the
      // verifier runs this on every op).
      auto printed = [&] {
        std::string text;
        llvm::raw_string_ostream os(text);
        entry.getValue().print(os);
        return text;
      };
      if (!hasParamKind(entry.getValue(), spec->kind))
        return fail("param '" + spec->name + "' must be " +
                    stringifyParamKind(spec->kind) + ", got " + printed());
      if (spec->check) {
        StringRef violated = spec->check(entry.getValue());
        if (!violated.empty())
          return fail("param '" + spec->name + "' must be " + violated +
                      ", got " + printed());
      }
    }
  }
  for (const ParamSpec &p : info.params)
    if (p.isRequired() && (!params || !params.get(p.name)))
      return fail("missing required param '" + p.name + "' (" +
                  stringifyParamKind(p.kind) + ")");
  return success();
}

DictionaryAttr mlir::fuel::canonicalizeParams(const FusedOpInfo &info,
                                              DictionaryAttr params) {
  if (!params)
    return params;
  SmallVector<NamedAttribute> kept;
  bool changed = false;
  for (NamedAttribute entry : params) {
    const ParamSpec *spec = info.getParam(entry.getName());
    bool isDefault = spec && spec->hasDefault() &&
                     spec->getDefault(params.getContext()) == entry.getValue();
    bool isUnset = spec && spec->optional && isa<UnitAttr>(entry.getValue());
    if (isDefault || isUnset) {
      changed = true;
      continue;
    }
    kept.push_back(entry);
  }
  if (!changed)
    return params;
  return DictionaryAttr::get(params.getContext(), kept);
}

//===----------------------------------------------------------------------===//
// Operands and rules
//===----------------------------------------------------------------------===//

static bool hasElementKind(Type t, ElementKind kind) {
  switch (kind) {
  case ElementKind::AnyFloat:
    return t.isF16() || t.isBF16() || t.isF32() || t.isF64();
  case ElementKind::F32:
    return t.isF32();
  case ElementKind::Int64:
    return t.isInteger(64);
  case ElementKind::Int32:
    return t.isInteger(32);
  case ElementKind::Int8:
    return t.isInteger(8);
  case ElementKind::Index:
    return t.isIndex();
  }
  return false;
}

static std::string describeOperand(const OperandSpec &spec) {
  if (spec.element == ElementKind::Index)
    return "an index scalar";
  std::string rank;
  if (spec.minRank == spec.maxRank)
    rank = " of rank " + std::to_string(spec.minRank);
  else if (spec.maxRank < 0)
    rank = spec.minRank > 0 ? " of rank >= " + std::to_string(spec.minRank)
                            : "";
  else
    rank = " of rank " + std::to_string(spec.minRank) + " to " +
           std::to_string(spec.maxRank);
  return "a ranked tensor of " + stringifyElementKind(spec.element).str() +
         " values" + rank;
}

LogicalResult
mlir::fuel::inferFusedOpTypes(const FusedOpInfo &info, ValueRange operands,
                              DictionaryAttr params,
                              function_ref<InFlightDiagnostic()> emitError,
                              SmallVectorImpl<Type> &resultTypes) {
  auto fail = [&](StringRef rule, const Twine &msg) -> LogicalResult {
    if (emitError)
      emitError() << info.name << ": " << rule << ": " << msg;
    return failure();
  };

  // 1. Bind operands to the entry's operand specs: required ones in order,
  //    then each optional spec takes the next operand if it is of its kind
  //    (an index scalar versus a shaped value).
  unsigned numRequired = info.getNumRequiredOperands();
  unsigned numTotal = info.operands.size();
  if (operands.size() < numRequired || operands.size() > numTotal) {
    std::string expected =
        numRequired == numTotal
            ? std::to_string(numTotal)
            : std::to_string(numRequired) + " to " + std::to_string(numTotal);
    return fail("operand count", "expects " + expected + " operands, got " +
                                     Twine(operands.size()));
  }
  SmallVector<Value> bound(numTotal);
  unsigned next = 0;
  for (unsigned i = 0; i < numTotal; ++i) {
    const OperandSpec &spec = info.operands[i];
    if (next >= operands.size())
      break;
    if (spec.optional) {
      bool isIndexSpec = spec.element == ElementKind::Index;
      if (isIndexSpec != operands[next].getType().isIndex())
        continue;
    }
    bound[i] = operands[next++];
  }
  if (next != operands.size())
    return fail("operand count",
                "operand #" + Twine(next) + " of type " +
                    llvm::formatv("{0}", operands[next].getType()).str() +
                    " matches no optional operand");

  // 2. Element kinds and ranks.
  for (unsigned i = 0; i < numTotal; ++i) {
    if (!bound[i])
      continue;
    const OperandSpec &spec = info.operands[i];
    Type t = bound[i].getType();
    std::string got = llvm::formatv("{0}", t).str();
    auto mismatch = [&]() {
      return fail("operand types", "operand '" + spec.name + "' must be " +
                                       describeOperand(spec) + ", got " + got);
    };
    if (spec.element == ElementKind::Index) {
      if (!t.isIndex())
        return mismatch();
      continue;
    }
    bool isDestroyed = info.destructiveInput == static_cast<int>(i);
    auto shaped = dyn_cast<ShapedType>(t);
    if (!shaped || !shaped.hasRank() ||
        !(isa<RankedTensorType>(t) || (isDestroyed && isa<MemRefType>(t))))
      return mismatch();
    if (!hasElementKind(shaped.getElementType(), spec.element))
      return mismatch();
    if (shaped.getRank() < spec.minRank ||
        (spec.maxRank >= 0 && shaped.getRank() > spec.maxRank))
      return mismatch();
  }

  // 3. The op's own shape and dtype rules.
  resultTypes.clear();
  RuleContext ctx(info, bound, params, emitError, resultTypes);
  return info.rule(ctx);
}

//===----------------------------------------------------------------------===//
// RuleContext
//===----------------------------------------------------------------------===//

std::string mlir::fuel::formatDim(int64_t d) {
  return ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d);
}

Attribute mlir::fuel::getParamValue(const FusedOpInfo &info,
                                   DictionaryAttr params, StringRef name,
                                   MLIRContext *ctx) {
  if (params)
    if (Attribute attr = params.get(name))
      return isa<UnitAttr>(attr) ? Attribute() : attr;
  const ParamSpec *spec = info.getParam(name);
  assert(spec && "asked for a param its record does not declare");
  if (spec->hasDefault())
    return spec->getDefault(ctx);
  return {};
}

MLIRContext *RuleContext::getContext() const {
  return paramsDict ? paramsDict.getContext() : bound.front().getContext();
}

static FailureOr<int64_t> checkedResult(const RuleContext &ctx,
                                        std::optional<int64_t> value,
                                        const Twine &what) {
  if (value)
    return *value;
  (void)ctx.fail("shape rule", what + " overflows 64 bits");
  return failure();
}

FailureOr<int64_t> RuleContext::add(int64_t a, int64_t b,
                                    const Twine &what) const {
  return checkedResult(*this, llvm::checkedAdd(a, b), what);
}

FailureOr<int64_t> RuleContext::sub(int64_t a, int64_t b,
                                    const Twine &what) const {
  return checkedResult(*this, llvm::checkedSub(a, b), what);
}

FailureOr<int64_t> RuleContext::mul(int64_t a, int64_t b,
                                    const Twine &what) const {
  return checkedResult(*this, llvm::checkedMul(a, b), what);
}

LogicalResult RuleContext::fail(StringRef rule, const Twine &message) const {
  if (emitErrorFn)
    emitErrorFn() << info.name << ": " << rule << ": " << message;
  return failure();
}

LogicalResult RuleContext::expectDimsEqual(unsigned a, int64_t da, unsigned b,
                                           int64_t db, StringRef rule) const {
  int64_t x = dim(a, da), y = dim(b, db);
  if (!dimsConflict(x, y))
    return success();
  int64_t ia = da < 0 ? rank(a) + da : da, ib = db < 0 ? rank(b) + db : db;
  return fail(rule, name(a) + " dim " + Twine(ia) + " (" + formatDim(x) +
                        ") must equal " + name(b) + " dim " + Twine(ib) +
                        " (" + formatDim(y) + ")");
}

LogicalResult RuleContext::expectDimEquals(unsigned a, int64_t d, int64_t value,
                                           const Twine &what,
                                           StringRef rule) const {
  int64_t x = dim(a, d);
  if (!dimsConflict(x, value))
    return success();
  int64_t ia = d < 0 ? rank(a) + d : d;
  return fail(rule, name(a) + " dim " + Twine(ia) + " (" + formatDim(x) +
                        ") must equal " + what + " (" + formatDim(value) +
                        ")");
}

LogicalResult
RuleContext::expectSameElementType(ArrayRef<unsigned> operands) const {
  std::optional<unsigned> first;
  for (unsigned i : operands) {
    if (!has(i))
      continue;
    if (!first) {
      first = i;
      continue;
    }
    if (elementType(i) != elementType(*first))
      return fail("dtype rule",
                  name(i) + " has element type " +
                      llvm::formatv("{0}", elementType(i)).str() +
                      " but " + name(*first) + " has " +
                      llvm::formatv("{0}", elementType(*first)).str());
  }
  return success();
}

LogicalResult RuleContext::expectSameShape(unsigned a, unsigned b) const {
  if (rank(a) != rank(b))
    return fail("shape rule", name(b) + " must have the rank of " + name(a) +
                                  " (" + Twine(rank(a)) + "), got " +
                                  Twine(rank(b)));
  for (int64_t d = 0, e = rank(a); d < e; ++d)
    if (failed(expectDimsEqual(b, d, a, d)))
      return failure();
  return success();
}
