//===- FusedOpsGen.cpp - Generators for the fused-op registry -------------===//
//
// Reads the `FusedOp` records of FusedOps.td and generates:
//   -gen-fused-op-registry   the C++ registry table and params schemas
//   -gen-fused-op-python     the Python registry module and op builders
//   -gen-fused-op-docs       docs/FusedOps.md
//
//===----------------------------------------------------------------------===//

#include "mlir/TableGen/GenInfo.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/TableGen/Error.h"
#include "llvm/TableGen/Record.h"

#include <set>
#include <string>
#include <vector>

using namespace llvm;

namespace {

//===----------------------------------------------------------------------===//
// Record wrappers
//===----------------------------------------------------------------------===//

struct OperandRec {
  std::string name, element, doc;
  int64_t minRank, maxRank;
  bool optional;
};

struct ResultRec {
  std::string name, doc;
};

struct CheckRec {
  std::string predicate, description;
};

struct ParamRec {
  std::string name, kind, defaultValue, doc;
  bool optional;
  std::vector<CheckRec> checks;
  bool hasDefault() const { return !defaultValue.empty(); }
};

struct FusedOpRec {
  const Record *def;
  int64_t id;
  std::string name, family, backward, rule, recipe, decomposition, recipeNote,
      summary,
      description, reference;
  std::vector<std::string> backwardTargets;
  std::vector<OperandRec> operands;
  std::vector<ResultRec> results;
  std::vector<ParamRec> params;
  int64_t destructiveInput;

  explicit FusedOpRec(const Record *r) : def(r) {
    id = r->getValueAsInt("opId");
    name = r->getValueAsString("opName").str();
    family = r->getValueAsDef("family")->getValueAsString("name").str();
    const Record *bw = r->getValueAsDef("backward");
    backward = bw->getValueAsString("kind").str();
    for (StringRef t : bw->getValueAsListOfStrings("targets"))
      backwardTargets.push_back(t.str());
    rule = r->getValueAsString("rule").str();
    recipe = r->getValueAsString("recipe").str();
    recipeNote = r->getValueAsString("recipeNote").str();
    decomposition = r->getValueAsString("decomposition").str();
    summary = r->getValueAsString("summary").str();
    description = r->getValueAsString("description").str();
    reference = r->getValueAsString("reference").str();
    destructiveInput = r->getValueAsInt("destructiveInput");
    for (const Record *o : r->getValueAsListOfDefs("operands"))
      operands.push_back({o->getValueAsString("operandName").str(),
                          o->getValueAsDef("element")->getValueAsString("kind").str(),
                          o->getValueAsString("doc").str(),
                          o->getValueAsInt("minRank"), o->getValueAsInt("maxRank"),
                          o->getValueAsBit("isOptional")});
    for (const Record *o : r->getValueAsListOfDefs("results"))
      results.push_back({o->getValueAsString("resultName").str(),
                         o->getValueAsString("doc").str()});
    for (const Record *p : r->getValueAsListOfDefs("params")) {
      ParamRec pr{p->getValueAsString("paramName").str(),
                  p->getValueAsDef("kind")->getValueAsString("kind").str(),
                  p->getValueAsString("defaultValue").str(),
                  p->getValueAsString("doc").str(),
                  p->getValueAsBit("isOptional"),
                  {}};
      for (const Record *c : p->getValueAsListOfDefs("checks"))
        pr.checks.push_back({c->getValueAsString("predicate").str(),
                             c->getValueAsString("description").str()});
      params.push_back(std::move(pr));
    }
  }

  std::string cppIdent() const {
    return convertToCamelFromSnakeCase(name, /*capitalizeFirst=*/true);
  }
};

/// Loads, validates and sorts the records. Reports fatal TableGen errors for
/// inconsistent records so a bad edit fails the build, not a test.
std::vector<FusedOpRec> loadOps(const RecordKeeper &records) {
  std::vector<FusedOpRec> ops;
  for (const Record *r : records.getAllDerivedDefinitions("FusedOp"))
    ops.emplace_back(r);
  llvm::sort(ops, [](const FusedOpRec &a, const FusedOpRec &b) {
    return a.id < b.id;
  });
  StringSet<> names;
  DenseSet<int64_t> ids;
  for (const FusedOpRec &op : ops) {
    if (op.id < 1 || op.id >= 0x8000)
      PrintFatalError(op.def->getLoc(),
                      "fused op id must be in [1, 0x8000): ids from 0x8000 on "
                      "are reserved for runtime-registered ops");
    if (!ids.insert(op.id).second)
      PrintFatalError(op.def->getLoc(), "duplicate fused op id " + Twine(op.id));
    if (!names.insert(op.name).second)
      PrintFatalError(op.def->getLoc(), "duplicate fused op name " + op.name);
    if (op.rule.empty())
      PrintFatalError(op.def->getLoc(), "fused op " + op.name + " has no rule");
    // A recipe and a hand-written decomposition together: the recipe covers
    // the op's basic form (fusion finds it, decomposition uses it), the hand
    // decomposition the rest; the note says where the line is.
    if (!op.decomposition.empty() && op.recipeNote.empty())
      PrintFatalError(op.def->getLoc(),
                      "op " + op.name +
                          " with a hand-written decomposition must say what "
                          "its recipe does not cover (recipeNote)");
    if (op.results.empty())
      PrintFatalError(op.def->getLoc(), "fused op " + op.name + " has no result");
    if (op.destructiveInput >= (int64_t)op.operands.size())
      PrintFatalError(op.def->getLoc(), "destructiveInput out of range");
    bool seenOptional = false;
    for (const OperandRec &o : op.operands) {
      if (seenOptional && !o.optional)
        PrintFatalError(op.def->getLoc(),
                        "required operand '" + o.name + "' after an optional one");
      seenOptional |= o.optional;
    }
    for (const ParamRec &p : op.params)
      if (p.optional && p.hasDefault())
        PrintFatalError(op.def->getLoc(),
                        "param '" + p.name + "' is optional and has a default");
  }
  for (const FusedOpRec &op : ops)
    for (const std::string &t : op.backwardTargets)
      if (!names.contains(t))
        PrintFatalError(op.def->getLoc(), "unknown backward target " + t);
  return ops;
}

std::string cppString(StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

void emitHeader(raw_ostream &os, StringRef what, StringRef comment) {
  os << comment << " " << what << "\n"
     << comment << " Generated by fuel-tblgen from FusedOps.td. Do not edit.\n\n";
}

/// Parses a pair default written as "[a, b]".
std::pair<std::string, std::string> parsePair(const FusedOpRec &op,
                                              StringRef text) {
  StringRef t = text.trim();
  if (!t.consume_front("[") || !t.consume_back("]"))
    PrintFatalError(op.def->getLoc(), "pair default must be written [a, b]");
  auto [a, b] = t.split(',');
  return {a.trim().str(), b.trim().str()};
}

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
  PrintFatalError(op.def->getLoc(), "param kind " + p.kind + " takes no checks");
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

  os << "#ifdef GET_FUSED_OP_RECIPE_DECLS\n#undef GET_FUSED_OP_RECIPE_DECLS\n";
  std::set<std::string> recipes;
  for (const FusedOpRec &op : ops)
    if (!op.recipe.empty())
      recipes.insert(op.recipe);
  for (const std::string &r : recipes)
    os << "void " << r << "(RecipeBuilder &r);\n";
  os << "#endif // GET_FUSED_OP_RECIPE_DECLS\n\n";

  os << "#ifdef GET_FUSED_OP_DECOMPOSITION_DECLS\n"
        "#undef GET_FUSED_OP_DECOMPOSITION_DECLS\n";
  std::set<std::string> decompositions;
  for (const FusedOpRec &op : ops)
    if (!op.decomposition.empty())
      decompositions.insert(op.decomposition);
  for (const std::string &d : decompositions)
    os << "FailureOr<SmallVector<Value>> " << d
       << "(OpBuilder *b, FusedOp op, std::string &why);\n";
  os << "#endif // GET_FUSED_OP_DECOMPOSITION_DECLS\n\n";

  os << "#ifdef GET_FUSED_OP_TABLE\n#undef GET_FUSED_OP_TABLE\n";
  os << "namespace {\n";
  for (const FusedOpRec &op : ops) {
    std::string id = op.cppIdent();
    os << "\n// " << op.id << ": " << op.name << "\n";
    // Param defaults and checks.
    for (const ParamRec &p : op.params) {
      std::string pid = id + "_" + convertToCamelFromSnakeCase(p.name, true);
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
        std::string pid = id + "_" + convertToCamelFromSnakeCase(p.name, true);
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
       << (op.recipe.empty() ? std::string("nullptr") : "recipes::" + op.recipe)
       << ", "
       << (op.decomposition.empty() ? std::string("nullptr")
                                    : "decompositions::" + op.decomposition)
       << ", " << cppString(op.recipeNote) << ",\n     "
       << cppString(op.summary) << ",\n     " << cppString(op.description)
       << "},\n";
  }
  os << "};\n#endif // GET_FUSED_OP_TABLE\n";
  return false;
}

//===----------------------------------------------------------------------===//
// Python registry module
//===----------------------------------------------------------------------===//

std::string pyString(StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string pyDefault(const FusedOpRec &op, const ParamRec &p) {
  if (!p.hasDefault())
    return "None";
  const std::string &v = p.defaultValue;
  if (p.kind == "Bool")
    return v == "true" ? "True" : "False";
  if (p.kind == "Pair") {
    auto [a, b] = parsePair(op, v);
    return "(" + a + ", " + b + ")";
  }
  if (p.kind == "Reduction" || p.kind == "QuantType")
    return pyString(v);
  if (p.kind == "F64" || p.kind == "F32")
    return "float(" + v + ")";
  return v;
}

bool isPythonKeyword(StringRef s) {
  static const char *const keywords[] = {
      "False", "None", "True", "and", "as", "assert", "async", "await",
      "break", "class", "continue", "def", "del", "elif", "else", "except",
      "finally", "for", "from", "global", "if", "import", "in", "is",
      "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try",
      "while", "with", "yield"};
  return llvm::is_contained(keywords, s);
}

std::string pyIdent(StringRef s) {
  return isPythonKeyword(s) ? (s + "_").str() : s.str();
}

bool emitPython(const RecordKeeper &records, raw_ostream &os) {
  std::vector<FusedOpRec> ops = loadOps(records);
  emitHeader(os, "The static fused-op registry and its op builders.", "#");
  os << "from ._fuel_builder_support import build as _build\n\n"
     << "ENTRIES = (\n";
  for (const FusedOpRec &op : ops) {
    os << "    dict(\n"
       << "        id=" << op.id << ",\n"
       << "        name=" << pyString(op.name) << ",\n"
       << "        family=" << pyString(op.family) << ",\n"
       << "        operands=(\n";
    for (const OperandRec &o : op.operands)
      os << "            dict(name=" << pyString(o.name)
         << ", element=" << pyString(o.element) << ", min_rank=" << o.minRank
         << ", max_rank=" << (o.maxRank < 0 ? "None" : std::to_string(o.maxRank))
         << ", optional=" << (o.optional ? "True" : "False")
         << ", doc=" << pyString(o.doc) << "),\n";
    os << "        ),\n        results=(\n";
    for (const ResultRec &r : op.results)
      os << "            dict(name=" << pyString(r.name)
         << ", doc=" << pyString(r.doc) << "),\n";
    os << "        ),\n        params=(\n";
    for (const ParamRec &p : op.params) {
      os << "            dict(name=" << pyString(p.name)
         << ", kind=" << pyString(p.kind)
         << ", default=" << pyDefault(op, p)
         << ", has_default=" << (p.hasDefault() ? "True" : "False")
         << ", optional=" << (p.optional ? "True" : "False") << ", checks=(";
      for (const CheckRec &c : p.checks)
        os << pyString(c.description) << ", ";
      os << "), doc=" << pyString(p.doc) << "),\n";
    }
    os << "        ),\n        backward=dict(kind=" << pyString(op.backward)
       << ", targets=(";
    for (const std::string &t : op.backwardTargets)
      os << pyString(t) << ", ";
    os << ")),\n        destructive_input="
       << (op.destructiveInput < 0 ? "None"
                                   : std::to_string(op.destructiveInput))
       << ",\n        has_recipe=" << (op.recipe.empty() ? "False" : "True")
       << ",\n        decomposable="
       << (op.recipe.empty() && op.decomposition.empty() ? "False" : "True")
       << ",\n        recipe_note=" << pyString(op.recipeNote)
       << ",\n        summary=" << pyString(op.summary)
       << ",\n        description=" << pyString(op.description)
       << ",\n        reference=" << pyString(op.reference) << ",\n    ),\n";
  }
  os << ")\n\n";

  // One builder per op, with the operands as positional arguments (optional
  // ones default to None) and the params as keywords.
  os << "__all__ = [\n";
  for (const FusedOpRec &op : ops)
    os << "    " << pyString(op.name) << ",\n";
  os << "]\n";
  for (const FusedOpRec &op : ops) {
    SmallVector<std::string> args, operandNames;
    for (const OperandRec &o : op.operands) {
      args.push_back(pyIdent(o.name) + (o.optional ? "=None" : ""));
      operandNames.push_back(pyIdent(o.name));
    }
    args.push_back("*");
    SmallVector<std::string> kwargs;
    for (const ParamRec &p : op.params) {
      std::string n = pyIdent(p.name);
      args.push_back(p.optional || p.hasDefault() ? n + "=None" : n);
      kwargs.push_back(pyString(p.name) + ": " + n);
    }
    args.push_back("loc=None");
    args.push_back("ip=None");
    os << "\n\ndef " << op.name << "(" << llvm::join(args, ", ") << "):\n"
       << "    \"\"\"" << op.summary << ".\n\n    " << op.description
       << "\n\n    Returns the result value"
       << (op.results.size() > 1 ? "s as a tuple" : "")
       << " of a new `fuel.fused " << op.name << "` op.\n    \"\"\"\n"
       << "    return _build(" << pyString(op.name) << ", ["
       << llvm::join(operandNames, ", ") << "], {"
       << llvm::join(kwargs, ", ") << "}, loc=loc, ip=ip)\n";
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Markdown docs
//===----------------------------------------------------------------------===//

bool emitDocs(const RecordKeeper &records, raw_ostream &os) {
  std::vector<FusedOpRec> ops = loadOps(records);
  os << "<!-- Generated by fuel-tblgen from include/FuelFused/FusedOps.td. "
        "Do not edit. -->\n\n"
     << "# Fused ops\n\n"
     << "The registry of `fuel.fused`: " << ops.size()
     << " static ops (ids below 0x8000; ids from 0x8000 on are registered at "
        "run time).\n\n"
     << "| id | name | family | operands | results | params | backward | "
        "destructive |\n|---|---|---|---|---|---|---|---|\n";
  for (const FusedOpRec &op : ops) {
    SmallVector<std::string> operands, results, params;
    for (const OperandRec &o : op.operands)
      operands.push_back(o.name + (o.optional ? "?" : ""));
    for (const ResultRec &r : op.results)
      results.push_back(r.name);
    for (const ParamRec &p : op.params)
      params.push_back(p.name + (p.optional ? "?" : ""));
    std::string backward = op.backward;
    if (!op.backwardTargets.empty())
      backward += "(" + llvm::join(op.backwardTargets, ", ") + ")";
    os << "| " << op.id << " | [`" << op.name << "`](#" << op.name << ") | "
       << op.family << " | " << llvm::join(operands, ", ") << " | "
       << llvm::join(results, ", ") << " | "
       << (params.empty() ? "-" : llvm::join(params, ", ")) << " | "
       << backward << " | "
       << (op.destructiveInput < 0
               ? std::string("-")
               : "input " + std::to_string(op.destructiveInput))
       << " |\n";
  }
  for (const FusedOpRec &op : ops) {
    os << "\n## " << op.name << "\n\n"
       << "Id " << op.id << ", family " << op.family << ": " << op.summary
       << ".\n\n"
       << op.description << "\n\n";
    if (!op.reference.empty())
      os << "Reference: " << op.reference << ".\n\n";
    os << "| operand | element type | rank | |\n|---|---|---|---|\n";
    for (const OperandRec &o : op.operands) {
      std::string rank;
      if (o.element == "Index")
        rank = "scalar";
      else if (o.minRank == o.maxRank)
        rank = std::to_string(o.minRank);
      else if (o.maxRank < 0)
        rank = ">= " + std::to_string(o.minRank);
      else
        rank = std::to_string(o.minRank) + ".." + std::to_string(o.maxRank);
      os << "| `" << o.name << "`" << (o.optional ? " (optional)" : "")
         << " | " << o.element << " | " << rank << " | " << o.doc << " |\n";
    }
    os << "\nResults: ";
    SmallVector<std::string> results;
    for (const ResultRec &r : op.results)
      results.push_back("`" + r.name + "`" + (r.doc.empty() ? "" : " " + r.doc));
    os << llvm::join(results, "; ") << ".\n\n";
    if (!op.params.empty()) {
      os << "| param | kind | default | must be | |\n|---|---|---|---|---|\n";
      for (const ParamRec &p : op.params) {
        SmallVector<std::string> checks;
        for (const CheckRec &c : p.checks)
          checks.push_back(c.description);
        os << "| `" << p.name << "` | " << p.kind << " | "
           << (p.hasDefault() ? "`" + p.defaultValue + "`"
                              : (p.optional ? std::string("unset")
                                            : std::string("required")))
           << " | " << llvm::join(checks, ", ") << " | " << p.doc << " |\n";
      }
      os << "\n";
    }
    if (!op.recipe.empty() && !op.decomposition.empty())
      os << "Decomposition: its recipe (`" << op.recipe
         << "`, the definition fusion matches too) where it applies, else "
            "written by hand (`"
         << op.decomposition << "`): " << op.recipeNote << ".\n\n";
    else if (!op.recipe.empty() && !op.recipeNote.empty())
      os << "Decomposition: its recipe (`" << op.recipe << "`); "
         << op.recipeNote << ".\n\n";
    else if (!op.recipe.empty())
      os << "Decomposition: its recipe (`" << op.recipe
         << "`), the definition fusion matches too.\n\n";
    else if (!op.decomposition.empty())
      os << "Decomposition: written by hand (`" << op.decomposition
         << "`); " << op.recipeNote << ".\n\n";
    else
      os << "Decomposition: none yet.\n\n";
    os << "Backward: " << op.backward;
    if (!op.backwardTargets.empty())
      os << " (" << llvm::join(op.backwardTargets, ", ") << ")";
    os << ".";
    if (op.destructiveInput >= 0)
      os << " Destroys input " << op.destructiveInput << ".";
    os << "\n";
  }
  return false;
}

} // namespace

static mlir::GenRegistration
    genRegistry("gen-fused-op-registry",
                "Generate the C++ fused-op registry table", emitRegistry);
static mlir::GenRegistration
    genPython("gen-fused-op-python",
              "Generate the Python fused-op registry and builders", emitPython);
static mlir::GenRegistration genDocs("gen-fused-op-docs",
                                     "Generate the fused-op reference docs",
                                     emitDocs);
