//===- FusedOpRecords.h - The FusedOp records, read -------------*- C++ -*-===//
//
// The `FusedOp` records of FusedOps.td as plain structs, validated (a bad
// record is a TableGen error at its location), and the helpers every
// generator of fuel-tblgen shares.
//
//===----------------------------------------------------------------------===//

#ifndef FUEL_TBLGEN_FUSEDOPRECORDS_H
#define FUEL_TBLGEN_FUSEDOPRECORDS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TableGen/Record.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fuel_tblgen {

using llvm::raw_ostream;
using llvm::Record;
using llvm::RecordKeeper;
using llvm::StringRef;

/// `snake_case` as `SnakeCase` (or `snakeCase`): every part capitalized,
/// digits included ("conv_transpose_2d" -> "ConvTranspose2d").
std::string camelCase(StringRef snake, bool capitalizeFirst);

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
      schedule,
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
    schedule = r->getValueAsString("schedule").str();
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
    return camelCase(name, /*capitalizeFirst=*/true);
  }
};

/// Loads, validates and sorts (by id) the records. Reports fatal TableGen
/// errors for inconsistent records so a bad edit fails the build, not a test.
std::vector<FusedOpRec> loadOps(const RecordKeeper &records);

/// `s` as a C++ string literal (quotes, backslashes and newlines escaped;
/// the same spelling is a Python string literal).
std::string cppString(StringRef s);

/// The "generated, do not edit" header, in the comment syntax given.
void emitHeader(raw_ostream &os, StringRef what, StringRef comment);

/// Parses a pair default written as "[a, b]".
std::pair<std::string, std::string> parsePair(const FusedOpRec &op,
                                              StringRef text);

} // namespace fuel_tblgen

#endif // FUEL_TBLGEN_FUSEDOPRECORDS_H
