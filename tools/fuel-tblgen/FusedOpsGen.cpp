//===- FusedOpsGen.cpp - C++ generators for the fused-op registry ---------===//
//
// Reads the `FusedOp` records of FusedOps.td (FusedOpRecords.h) and
// generates:
//   -gen-fused-op-registry   the C++ registry table and params schemas
//                            (data only: ids, names, schemas, shape rules)
//   -gen-fused-op-views      FusedOpKind and a typed view class per op
//   -gen-fused-op-recipe-bindings
//                            the table of ops to their recipe functions
//   -gen-fused-op-decomposition-bindings
//                            the table of ops to their hand decompositions
//   -gen-fused-op-schedule-bindings
//                            the table of ops to their codegen schedules
// PythonDocsGen.cpp generates the Python module and the docs.
//
//===----------------------------------------------------------------------===//

#include "FusedOpRecords.h"

#include "mlir/TableGen/GenInfo.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/TableGen/Error.h"
#include "llvm/TableGen/Record.h"

#include <set>
#include <string>
#include <vector>

using namespace llvm;
using namespace fuel_tblgen;

namespace {

//===----------------------------------------------------------------------===//
// C++ registry
//===----------------------------------------------------------------------===//

std::string cppDefaultExpr(const FusedOpRec &op, const ParamRec &p) {
  const std::string &v = p.defaultValue;
  if (p.kind == "F64")
    return "FloatAttr::get(Float64Type::get(ctx), " + v + ")";
  if (p.kind == "F32")
    return "FloatAttr::get(Float32Type::get(ctx), " + v + ")";
  if (p.kind == "I64")
    return "IntegerAttr::get(IntegerType::get(ctx, 64), " + v + ")";
  if (p.kind == "I32")
    return "IntegerAttr::get(IntegerType::get(ctx, 32), " + v + ")";
  if (p.kind == "Bool") {
    if (v != "true" && v != "false")
      PrintFatalError(op.def->getLoc(), "bool default must be true or false");
    return "BoolAttr::get(ctx, " + v + ")";
  }
  if (p.kind == "Pair") {
    auto [a, b] = parsePair(op, v);
    return "DenseI64ArrayAttr::get(ctx, {" + a + ", " + b + "})";
  }
  if (p.kind == "Reduction")
    return "ReductionAttr::get(ctx, *symbolizeReduction(" + cppString(v) + "))";
  if (p.kind == "QuantType")
    return "QuantTypeAttr::get(ctx, *symbolizeQuantType(" + cppString(v) + "))";
  PrintFatalError(op.def->getLoc(), "unknown param kind " + p.kind);
}

/// The C++ value a check predicate sees as `$_self`.
std::string cppCheckValue(const FusedOpRec &op, const ParamRec &p) {
  if (p.kind == "F64" || p.kind == "F32")
    return "cast<FloatAttr>(attr).getValueAsDouble()";
  if (p.kind == "I64" || p.kind == "I32")
    return "cast<IntegerAttr>(attr).getInt()";
  if (p.kind == "Bool")
    return "cast<BoolAttr>(attr).getValue()";
  if (p.kind == "Pair")
    return "cast<DenseI64ArrayAttr>(attr).asArrayRef()";
  PrintFatalError(op.def->getLoc(),
                  "param kind " + p.kind + " takes no checks");
}

bool emitRegistry(const RecordKeeper &records, raw_ostream &os) {
  std::vector<FusedOpRec> ops = loadOps(records);
  emitHeader(os, "The static fused-op registry.", "//");

  os << "#ifdef GET_FUSED_OP_RULE_DECLS\n#undef GET_FUSED_OP_RULE_DECLS\n";
  std::set<std::string> rules;
  for (const FusedOpRec &op : ops)
    rules.insert(op.rule);
  for (const std::string &r : rules)
    os << "LogicalResult " << r << "(RuleContext &ctx);\n";
  os << "#endif // GET_FUSED_OP_RULE_DECLS\n\n";

  os << "#ifdef GET_FUSED_OP_TABLE\n#undef GET_FUSED_OP_TABLE\n";
  os << "namespace {\n";
  for (const FusedOpRec &op : ops) {
    std::string id = op.cppIdent();
    os << "\n// " << op.id << ": " << op.name << "\n";
    // Param defaults and checks.
    for (const ParamRec &p : op.params) {
      std::string pid = id + "_" + camelCase(p.name, true);
      if (p.hasDefault())
        os << "Attribute default" << pid << "(MLIRContext *ctx) {\n  return "
           << cppDefaultExpr(op, p) << ";\n}\n";
      if (!p.checks.empty()) {
        os << "StringRef check" << pid << "(Attribute attr) {\n"
           << "  auto value = " << cppCheckValue(op, p) << ";\n"
           << "  (void)value;\n";
        for (const CheckRec &c : p.checks) {
          std::string pred = c.predicate;
          size_t pos;
          while ((pos = pred.find("$_self")) != std::string::npos)
            pred.replace(pos, 6, "value");
          os << "  if (!(" << pred << "))\n    return "
             << cppString(c.description) << ";\n";
        }
        os << "  return {};\n}\n";
      }
    }
    if (!op.operands.empty()) {
      os << "const OperandSpec operands" << id << "[] = {\n";
      for (const OperandRec &o : op.operands)
        os << "    {" << cppString(o.name) << ", ElementKind::" << o.element
           << ", " << o.minRank << ", " << o.maxRank << ", "
           << (o.optional ? "true" : "false") << ", " << cppString(o.doc)
           << "},\n";
      os << "};\n";
    }
    os << "const ResultSpec results" << id << "[] = {\n";
    for (const ResultRec &r : op.results)
      os << "    {" << cppString(r.name) << ", " << cppString(r.doc) << "},\n";
    os << "};\n";
    if (!op.params.empty()) {
      os << "const ParamSpec params" << id << "[] = {\n";
      for (const ParamRec &p : op.params) {
        std::string pid = id + "_" + camelCase(p.name, true);
        os << "    {" << cppString(p.name) << ", ParamKind::" << p.kind << ", "
           << (p.optional ? "true" : "false") << ", "
           << cppString(p.defaultValue) << ", "
           << (p.hasDefault() ? "default" + pid : std::string("nullptr"))
           << ", "
           << (p.checks.empty() ? std::string("nullptr") : "check" + pid)
           << ", " << cppString(p.doc) << "},\n";
      }
      os << "};\n";
    }
    if (!op.backwardTargets.empty()) {
      os << "const StringRef backward" << id << "[] = {";
      llvm::interleaveComma(op.backwardTargets, os,
                            [&](const std::string &t) { os << cppString(t); });
      os << "};\n";
    }
  }
  os << "} // namespace\n\n";

  os << "static const FusedOpInfo staticFusedOps[] = {\n";
  for (const FusedOpRec &op : ops) {
    std::string id = op.cppIdent();
    os << "    {" << op.id << ", " << cppString(op.name) << ", Family::"
       << op.family << ",\n     "
       << (op.operands.empty() ? "{}" : "operands" + id) << ", results" << id
       << ", " << (op.params.empty() ? "{}" : "params" + id)
       << ",\n     BackwardKind::" << op.backward << ", "
       << (op.backwardTargets.empty() ? "{}" : "backward" + id) << ", "
       << op.destructiveInput << ", rules::" << op.rule << ",\n     "
       << (op.recipe.empty() ? "false" : "true") << ", "
       << (op.decomposition.empty() ? "false" : "true") << ", "
       << cppString(op.recipeNote) << ",\n     "
       << cppString(op.summary) << ",\n     " << cppString(op.description)
       << "},\n";
  }
  os << "};\n#endif // GET_FUSED_OP_TABLE\n";
  return false;
}

//===----------------------------------------------------------------------===//
// Typed views
//===----------------------------------------------------------------------===//

/// The C++ type a param reads as, and the expression that reads it from a
/// non-null attribute `attr`.
std::pair<std::string, std::string> cppParamRead(const FusedOpRec &op,
                                                 const ParamRec &p) {
  if (p.kind == "F64" || p.kind == "F32")
    return {"double",
            "::llvm::cast<::mlir::FloatAttr>(attr).getValueAsDouble()"};
  if (p.kind == "I64" || p.kind == "I32")
    return {"int64_t", "::llvm::cast<::mlir::IntegerAttr>(attr).getInt()"};
  if (p.kind == "Bool")
    return {"bool", "::llvm::cast<::mlir::BoolAttr>(attr).getValue()"};
  if (p.kind == "Pair")
    return {"std::array<int64_t, 2>",
            "[&] { auto v = ::llvm::cast<::mlir::DenseI64ArrayAttr>(attr)"
            ".asArrayRef(); return std::array<int64_t, 2>{v[0], v[1]}; }()"};
  if (p.kind == "Reduction")
    return {"Reduction", "::llvm::cast<ReductionAttr>(attr).getValue()"};
  if (p.kind == "QuantType")
    return {"QuantType", "::llvm::cast<QuantTypeAttr>(attr).getValue()"};
  PrintFatalError(op.def->getLoc(), "unknown param kind " + p.kind);
}

std::string cppDocLine(StringRef doc) {
  std::string out;
  for (char c : doc)
    out += c == '\n' ? ' ' : c;
  return out;
}

/// Emits the typed getter of each param of `op`, reading the attribute
/// with `lookup` (an expression of type Attribute, given the param name).
void emitParamGetters(const FusedOpRec &op, raw_ostream &os,
                      function_ref<std::string(StringRef)> lookup) {
  for (const ParamRec &p : op.params) {
    auto [type, read] = cppParamRead(op, p);
    std::string getter = "get" + camelCase(p.name, true);
    if (!p.doc.empty())
      os << "  /// " << cppDocLine(p.doc) << "\n";
    if (p.optional) {
      os << "  std::optional<" << type << "> " << getter << "() const {\n"
         << "    ::mlir::Attribute attr = " << lookup(p.name) << ";\n"
         << "    if (!attr)\n      return std::nullopt;\n"
         << "    return " << read << ";\n  }\n";
      continue;
    }
    os << "  " << type << " " << getter << "() const {\n"
       << "    ::mlir::Attribute attr = " << lookup(p.name) << ";\n"
       << "    return " << read << ";\n  }\n";
  }
}

bool emitViews(const RecordKeeper &records, raw_ostream &os) {
  std::vector<FusedOpRec> ops = loadOps(records);
  emitHeader(os, "Typed views of the static fused ops.", "//");
  os << "#ifdef GET_FUSED_OP_VIEW_DECLS\n#undef GET_FUSED_OP_VIEW_DECLS\n\n";
  os << "/// The static fused ops, by registry id.\n"
        "enum class FusedOpKind : uint32_t {\n";
  for (const FusedOpRec &op : ops)
    os << "  " << op.cppIdent() << " = " << op.id << ", ///< " << op.name
       << "\n";
  os << "};\n\n";
  for (const FusedOpRec &op : ops) {
    std::string id = op.cppIdent();
    std::string view = id + "View", params = id + "Params";
    // The params, over a dictionary (as shape rules see them, before the op
    // exists).
    os << "/// The params of `" << op.name << "`, defaults applied.\n"
       << "class " << params << " {\npublic:\n"
       << "  /// `params` may be null (every param unset); `ctx` builds "
          "defaults.\n"
       << "  " << params
       << "(::mlir::DictionaryAttr params, ::mlir::MLIRContext *ctx)\n"
       << "      : params(params), ctx(ctx) {}\n";
    emitParamGetters(op, os, [&](StringRef name) {
      return "getParamValue(*lookupFusedOp(" + std::to_string(op.id) +
             "), params, " + cppString(name) + ", ctx)";
    });
    os << "\nprivate:\n  ::mlir::DictionaryAttr params;\n"
          "  [[maybe_unused]] ::mlir::MLIRContext *ctx;\n};\n\n";

    os << "/// A typed view of `fuel.fused " << op.name << "`: " << op.summary
       << ".\n"
       << "class " << view << " {\npublic:\n"
       << "  static constexpr FusedOpKind kKind = FusedOpKind::" << id
       << ";\n"
       << "  static constexpr ::llvm::StringLiteral kName = "
       << cppString(op.name) << ";\n";
    os << "  /// The operands' positions in the registry entry (as shape "
          "rules address them).\n"
       << "  enum Operand : unsigned {";
    for (auto [i, o] : llvm::enumerate(op.operands))
      os << (i ? ", " : " ") << camelCase(o.name, true)
         << " = " << i;
    os << (op.operands.empty() ? "};\n\n" : " };\n\n");
    os << "  /// The view of `op` if it is a " << op.name << ".\n"
       << "  static std::optional<" << view << "> match(FusedOp op) {\n"
       << "    if (!op || op.getKind().getId() != " << op.id << ")\n"
       << "      return std::nullopt;\n"
       << "    return " << view << "(op);\n  }\n"
       << "  explicit " << view << "(FusedOp op) : op(op) {\n"
       << "    assert(op.getKind().getId() == " << op.id << " && \"not a "
       << op.name << "\");\n  }\n"
       << "  FusedOp getOperation() const { return op; }\n"
       << "  operator FusedOp() const { return op; }\n"
       << "  " << params << " getTypedParams() const {\n"
       << "    return " << params << "(op.getParams(), op.getContext());\n"
       << "  }\n";
    for (auto [i, o] : llvm::enumerate(op.operands)) {
      std::string getter = "get" + camelCase(o.name, true);
      if (!o.doc.empty())
        os << "  /// " << cppDocLine(o.doc) << "\n";
      if (!o.optional) {
        os << "  ::mlir::Value " << getter
           << "() const { return op->getOperand(" << i << "); }\n";
        continue;
      }
      os << "  std::optional<::mlir::Value> " << getter << "() const {\n"
         << "    if (::mlir::Value v = op.getOperandNamed(" << cppString(o.name)
         << "))\n      return v;\n    return std::nullopt;\n  }\n";
    }
    emitParamGetters(op, os, [&](StringRef name) {
      return "op.getParam(" + cppString(name) + ")";
    });
    os << "\nprivate:\n  mutable FusedOp op;\n};\n\n";
  }
  os << "#endif // GET_FUSED_OP_VIEW_DECLS\n";
  return false;
}

//===----------------------------------------------------------------------===//
// Bindings of ops to the functions that lower them
//===----------------------------------------------------------------------===//

/// The functions a record's `recipe` or `decomposition` field names.
struct BindingKind {
  StringRef field;       ///< "recipe" or "decomposition".
  StringRef guard;       ///< GET_FUSED_OP_<guard>_{DECLS,TABLE}.
  StringRef entryType;   ///< The table's entry type.
  /// The declarations of the functions for `name`.
  std::vector<std::string> (*decls)(StringRef name);
  /// The table entry's initializer for `name`, after the id.
  std::string (*entry)(StringRef name);
};

/// Emits, for the ops whose record names a function in `kind.field`, the
/// declarations of those functions (under GET_FUSED_OP_<guard>_DECLS) and a
/// table of {op id, functions} sorted by id (under GET_FUSED_OP_<guard>_TABLE).
/// The library that defines the functions includes both, so the registry
/// itself holds data only.
void emitBindings(const RecordKeeper &records, raw_ostream &os,
                  const BindingKind &kind) {
  std::vector<FusedOpRec> ops = loadOps(records);
  emitHeader(os, ("The fused ops' " + kind.field + " functions.").str(), "//");
  auto functionOf = [&](const FusedOpRec &op) -> const std::string & {
    return kind.field == "recipe" ? op.recipe : op.decomposition;
  };
  os << "#ifdef GET_FUSED_OP_" << kind.guard << "_DECLS\n#undef GET_FUSED_OP_"
     << kind.guard << "_DECLS\n";
  std::set<std::string> functions;
  for (const FusedOpRec &op : ops)
    if (!functionOf(op).empty())
      functions.insert(functionOf(op));
  for (const std::string &f : functions)
    for (const std::string &decl : kind.decls(f))
      os << decl << ";\n";
  os << "#endif // GET_FUSED_OP_" << kind.guard << "_DECLS\n\n";

  os << "#ifdef GET_FUSED_OP_" << kind.guard << "_TABLE\n#undef GET_FUSED_OP_"
     << kind.guard << "_TABLE\n";
  os << "static const " << kind.entryType << " " << kind.field
     << "Table[] = {\n";
  for (const FusedOpRec &op : ops)
    if (!functionOf(op).empty())
      os << "    {" << op.id << ", " << kind.entry(functionOf(op)) << "}, // "
         << op.name << "\n";
  os << "};\n#endif // GET_FUSED_OP_" << kind.guard << "_TABLE\n";
}

bool emitRecipeBindings(const RecordKeeper &records, raw_ostream &os) {
  emitBindings(
      records, os,
      {"recipe", "RECIPE", "RecipeBinding",
       [](StringRef name) -> std::vector<std::string> {
         return {("void " + name + "(RecipeBuilder &r)").str()};
       },
       [](StringRef name) { return name.str(); }});
  return false;
}

/// A hand-written decomposition `name` is two functions: `check<Name>`, which
/// says (creating nothing) whether it applies, and `build<Name>`, which
/// builds the replacement values of an op it applies to.
bool emitDecompositionBindings(const RecordKeeper &records, raw_ostream &os) {
  emitBindings(
      records, os,
      {"decomposition", "DECOMPOSITION", "DecompositionBinding",
       [](StringRef name) -> std::vector<std::string> {
         std::string upper = camelCase(name, true);
         return {"LogicalResult check" + upper +
                     "(FusedOp op, std::string &why)",
                 "SmallVector<Value> build" + upper +
                     "(OpBuilder &b, FusedOp op)"};
       },
       [](StringRef name) {
         std::string upper = camelCase(name, true);
         return "check" + upper + ", build" + upper;
       }});
  return false;
}

/// The table of ops to their schedules (lib/Codegen), under
/// GET_FUSED_OP_SCHEDULE_TABLE.
bool emitScheduleBindings(const RecordKeeper &records, raw_ostream &os) {
  std::vector<FusedOpRec> ops = loadOps(records);
  emitHeader(os, "The fused ops' codegen schedules.", "//");
  os << "#ifdef GET_FUSED_OP_SCHEDULE_TABLE\n"
        "#undef GET_FUSED_OP_SCHEDULE_TABLE\n"
        "static const ScheduleBinding scheduleTable[] = {\n";
  for (const FusedOpRec &op : ops)
    if (!op.schedule.empty())
      os << "    {" << op.id << ", ScheduleKind::" << op.schedule << "}, // "
         << op.name << "\n";
  os << "};\n#endif // GET_FUSED_OP_SCHEDULE_TABLE\n";
  return false;
}

} // namespace

static mlir::GenRegistration
    genScheduleBindings("gen-fused-op-schedule-bindings",
                        "Generate the table binding ops to their schedules",
                        emitScheduleBindings);
static mlir::GenRegistration
    genRegistry("gen-fused-op-registry",
                "Generate the C++ fused-op registry table", emitRegistry);
static mlir::GenRegistration
    genViews("gen-fused-op-views",
             "Generate the typed views of the static fused ops", emitViews);
static mlir::GenRegistration
    genRecipeBindings("gen-fused-op-recipe-bindings",
                      "Generate the table binding ops to their recipes",
                      emitRecipeBindings);
static mlir::GenRegistration genDecompositionBindings(
    "gen-fused-op-decomposition-bindings",
    "Generate the table binding ops to their hand-written decompositions",
    emitDecompositionBindings);
