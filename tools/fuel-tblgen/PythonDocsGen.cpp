//===- PythonDocsGen.cpp - Python and docs generators ---------------------===//
//
// Reads the `FusedOp` records of FusedOps.td (FusedOpRecords.h) and
// generates:
//   -gen-fused-op-python     the Python registry module, op builders and the
//                            spellings of the enum params
//   -gen-fused-op-docs       docs/FusedOps.md
//
//===----------------------------------------------------------------------===//

#include "FusedOpRecords.h"

#include "mlir/TableGen/GenInfo.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/TableGen/Error.h"
#include "llvm/TableGen/Record.h"

#include <string>
#include <vector>

using namespace llvm;
using namespace fuel_tblgen;

namespace {

//===----------------------------------------------------------------------===//
// Python registry module
//===----------------------------------------------------------------------===//

/// `s` as a Python string literal: the escapes are C++'s.
std::string pyString(StringRef s) { return cppString(s); }

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
  // The spellings of the enum param kinds, from their enums (FuelAttrs.td).
  os << "ENUM_SPELLINGS = {\n";
  for (const Record *kind : records.getAllDerivedDefinitions("FuelParamKind")) {
    const RecordVal *e = kind->getValue("enumAttr");
    if (!e || !isa<DefInit>(e->getValue()))
      continue;
    os << "    " << pyString(kind->getValueAsString("kind")) << ": (";
    for (const Record *c : kind->getValueAsDef("enumAttr")
                               ->getValueAsListOfDefs("enumerants"))
      os << pyString(c->getValueAsString("str")) << ", ";
    os << "),\n";
  }
  os << "}\n\n";
  os << "from ._fuel_builder_support import build as _build  # noqa: E402\n\n"
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
         << ", max_rank="
         << (o.maxRank < 0 ? "None" : std::to_string(o.maxRank))
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
  os << "<!-- Generated by fuel-tblgen from include/FuelFused/IR/FusedOps.td. "
        "Do not edit. -->\n\n"
     << "# Fused ops\n\n"
     << "The registry of `fuel.fused`: " << ops.size()
     << " static ops (ids below 0x8000; ids from 0x8000 on are registered at "
        "run time). This page is the contract of what each op computes; the "
        "code and the tests cite it.\n\n"
     << "## Conventions\n\n"
     << "- Shapes: `[..., N]` means any number (>= 0) of leading batch dims; "
        "the last dim is the innermost. Every op accepts static and dynamic "
        "(`?`) dims unless it says otherwise.\n"
     << "- Float ops accept f32, f16, bf16 (and f64 where it costs nothing); "
        "reductions and accumulations run in f32 for f16/bf16 inputs and the "
        "result is cast back.\n"
     << "- Numerics are checked against an independent reference (numpy, or "
        "the library an op's `Reference` names) with these tolerances: f32 "
        "rtol 1e-5, atol 1e-6 (attention, scans, convolutions, quantized "
        "matmuls and matmuls over long sums, whose sums may run in another "
        "order or round more: rtol 1e-4, atol 1e-5); "
        "f16 rtol 2e-2, atol 2e-3; bf16 rtol 2e-2, atol 2e-2; f64 rtol 1e-10, "
        "atol 1e-12.\n"
     << "- `backward`: `Fused(x)` names the fused ops that compute the input "
        "gradients, `Decompose` means autodiff goes through the "
        "decomposition, `NotDifferentiable` means asking for a gradient is an "
        "error.\n\n"
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
      results.push_back("`" + r.name + "`" +
                        (r.doc.empty() ? "" : " " + r.doc));
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
    genPython("gen-fused-op-python",
              "Generate the Python fused-op registry and builders", emitPython);
static mlir::GenRegistration genDocs("gen-fused-op-docs",
                                     "Generate the fused-op reference docs",
                                     emitDocs);
