//===- FuelRecipes.cpp - fuel.recipe --------------------------------------===//
//
// Fused ops defined in IR: `fuel.recipe` (its syntax, its checks and its
// registration) and the uses of such ops by `fuel.fused @name`.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/IR/FuelOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StableHashing.h"
#include "llvm/Support/ScopedPrinter.h"

#include <map>
#include <tuple>

using namespace mlir;
using namespace mlir::fuel;

/// The ops a recipe's body may use: those recipes are made of.
static bool isRecipeStep(Operation &op) {
  return isa<arith::ConstantOp, arith::AddFOp, arith::SubFOp, arith::MulFOp,
             arith::DivFOp, arith::MaximumFOp, arith::MinimumFOp,
             arith::NegFOp, math::ExpOp, math::LogOp, math::SqrtOp,
             math::RsqrtOp, math::TanhOp, math::ErfOp, math::AbsFOp,
             math::Log1pOp, math::ExpM1Op>(op);
}

/// Checks the recipe in `body` (whose last `numParams` arguments are
/// params): one float type, recipe steps only, a yield of a value that
/// depends on an operand. On failure, sets `error` and `at` (the offending
/// op, or null for the recipe as a whole).
static LogicalResult checkRecipe(Block &body, unsigned numParams,
                                 std::string &error, Operation *&at) {
  at = nullptr;
  unsigned numArgs = body.getNumArguments();
  if (numArgs <= numParams) {
    error = "needs at least one operand";
    return failure();
  }
  Type element = body.getArgument(0).getType();
  if (!isa<FloatType>(element)) {
    error = "operands and params must be float scalars, got " +
            llvm::to_string(element);
    return failure();
  }
  for (BlockArgument arg : body.getArguments())
    if (arg.getType() != element) {
      error = "operands and params must all have one float type (" +
              llvm::to_string(element) + "), got " +
              llvm::to_string(arg.getType());
      return failure();
    }
  // Which values depend on an operand (not only on params and constants).
  llvm::DenseSet<Value> varying;
  for (unsigned i = 0, e = numArgs - numParams; i < e; ++i)
    varying.insert(body.getArgument(i));
  for (Operation &op : body) {
    at = &op;
    // (The parser resolves a name from an enclosing scope before the
    // region's isolation is verified.)
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return v.getParentBlock() != &body; })) {
      error = "uses a value from outside the recipe (a recipe sees only its "
              "operands, its params and its own steps)";
      return failure();
    }
    if (auto yield = dyn_cast<YieldOp>(op)) {
      // (The parser reads a recipe before its block's terminator is
      // verified.)
      if (&op != &body.back()) {
        at = op.getNextNode();
        error = "has an op after its fuel.yield, which ends the recipe";
        return failure();
      }
      Value v = yield.getValue();
      if (v.getType() != element) {
        error = "yields " + llvm::to_string(v.getType()) +
                ", expected the recipe's type " + llvm::to_string(element);
        return failure();
      }
      if (!varying.contains(v)) {
        error = "the result does not depend on any operand";
        return failure();
      }
      return success();
    }
    if (!isRecipeStep(op)) {
      error = "'" + op.getName().getStringRef().str() +
              "' is not a recipe step (expected a float arith.constant, "
              "arith.addf/subf/mulf/divf/maximumf/minimumf/negf or "
              "math.exp/log/log1p/expm1/sqrt/rsqrt/tanh/erf/absf)";
      return failure();
    }
    if (op.getNumResults() != 1 || op.getResult(0).getType() != element) {
      error = "every value must have the recipe's type " +
              llvm::to_string(element);
      return failure();
    }
    if (auto constant = dyn_cast<arith::ConstantOp>(op))
      if (!isa<FloatAttr>(constant.getValue())) {
        error = "a constant must be a float";
        return failure();
      }
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return varying.contains(v); }))
      varying.insert(op.getResult(0));
  }
  at = nullptr;
  error = "has no fuel.yield";
  return failure();
}

/// What a value of a recipe computes, as a hash that is the same in every
/// process (the order of a commutative op's operands, and so the recipe's
/// numbering and the matcher's order of work, must not vary between runs).
using StructureMap = llvm::DenseMap<Value, llvm::stable_hash>;

/// The operands of `op` in the recipe's order: as written, except for a
/// commutative op, whose operands are ordered by their structure
/// (`structure`), so that `a * b` and `b * a` are one step.
static SmallVector<Value, 2> orderedOperands(Operation *op,
                                             const StructureMap &structure) {
  SmallVector<Value, 2> operands(op->getOperands());
  if (op->hasTrait<OpTrait::IsCommutative>())
    llvm::stable_sort(operands, [&](Value a, Value b) {
      return structure.lookup(a) < structure.lookup(b);
    });
  return operands;
}

/// A hash of what each value of the checked recipe in `body` computes,
/// independent of names and of the order of a commutative op's operands.
static StructureMap hashRecipe(Block &body) {
  StructureMap structure;
  for (BlockArgument arg : body.getArguments())
    structure[arg] = llvm::stable_hash_combine(llvm::stable_hash_name("arg"),
                                               arg.getArgNumber());
  for (Operation &op : body) {
    if (op.getNumResults() != 1)
      continue;
    SmallVector<llvm::stable_hash> parts = {
        llvm::stable_hash_name(op.getName().getStringRef())};
    if (auto constant = dyn_cast<arith::ConstantOp>(op))
      parts.push_back(llvm::bit_cast<uint64_t>(
          cast<FloatAttr>(constant.getValue()).getValueAsDouble()));
    SmallVector<llvm::stable_hash> operands;
    for (Value operand : op.getOperands())
      operands.push_back(structure.lookup(operand));
    if (op.hasTrait<OpTrait::IsCommutative>())
      llvm::sort(operands);
    llvm::append_range(parts, operands);
    structure[op.getResult(0)] = llvm::stable_hash_combine(parts);
  }
  return structure;
}

/// The steps of the checked recipe in `body`, numbered by a depth-first
/// walk from its result (operands in order; a commutative op's by their
/// structure): the numbering depends only on the computation, not on the
/// order or the names the ops are written with. Steps the result does not
/// use are left out and equal steps are one.
static RuntimeRecipe numberRecipe(Block &body, ArrayRef<std::string> params) {
  StructureMap structure = hashRecipe(body);
  RuntimeRecipe recipe;
  unsigned numArgs = body.getNumArguments();
  recipe.numOperands = numArgs - params.size();
  recipe.params.assign(params.begin(), params.end());
  llvm::DenseMap<Value, unsigned> number;
  for (BlockArgument arg : body.getArguments())
    number[arg] = arg.getArgNumber();
  std::map<std::tuple<std::string, SmallVector<unsigned>, uint64_t>, unsigned>
      steps;
  Value result = cast<YieldOp>(body.back()).getValue();
  // An explicit stack: a recipe may be a long chain.
  SmallVector<std::pair<Value, bool>> stack{{result, false}};
  while (!stack.empty()) {
    auto [value, ready] = stack.pop_back_val();
    if (number.count(value))
      continue;
    Operation *op = value.getDefiningOp();
    if (!ready) {
      stack.push_back({value, true});
      SmallVector<Value, 2> operands = orderedOperands(op, structure);
      for (Value operand : llvm::reverse(operands))
        if (!number.count(operand))
          stack.push_back({operand, false});
      continue;
    }
    RuntimeRecipe::Step step;
    step.op = op->getName().getStringRef().str();
    uint64_t bits = 0;
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      step.constant = cast<FloatAttr>(constant.getValue()).getValueAsDouble();
      bits = llvm::bit_cast<uint64_t>(step.constant);
    }
    for (Value operand : orderedOperands(op, structure))
      step.operands.push_back(number.lookup(operand));
    auto key = std::make_tuple(step.op, step.operands, bits);
    auto [it, inserted] =
        steps.try_emplace(key, numArgs + recipe.steps.size());
    if (inserted)
      recipe.steps.push_back(std::move(step));
    number[value] = it->second;
  }
  recipe.result = number.lookup(result);
  return recipe;
}

/// Reads the recipe in `body`: checks it, then numbers the steps of its
/// canonical form (a copy canonicalized with the arith and math patterns),
/// so that canonicalizing the recipe itself (constants folded or moved, an
/// identity dropped) does not change the op it defines.
static std::optional<RuntimeRecipe> readRecipe(Block &body,
                                               ArrayRef<std::string> paramNames,
                                               std::string &error,
                                               Operation *&at) {
  if (failed(checkRecipe(body, paramNames.size(), error, at)))
    return std::nullopt;
  MLIRContext *ctx = body.front().getContext();
  OperationState state(UnknownLoc::get(ctx), RecipeDefOp::getOperationName());
  state.addRegion();
  Operation *copy = Operation::create(state);
  IRMapping mapping;
  body.getParent()->cloneInto(&copy->getRegion(0), mapping);
  // Only the entry block holds the recipe (the op has one).
  while (copy->getRegion(0).getBlocks().size() > 1)
    copy->getRegion(0).back().erase();
  RewritePatternSet patterns(ctx);
  for (StringRef name : {"arith", "math"})
    if (Dialect *dialect = ctx->getLoadedDialect(name))
      dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName op : ctx->getRegisteredOperations())
    if (op.getDialectNamespace() == "arith" ||
        op.getDialectNamespace() == "math")
      op.getCanonicalizationPatterns(patterns, ctx);
  (void)applyPatternsGreedily(copy->getRegion(0), std::move(patterns));
  Block &canonical = copy->getRegion(0).front();
  std::string ignored;
  Operation *ignoredAt;
  // Canonicalization keeps to the vocabulary; if it ever left it, the
  // recipe as written is its own canonical form.
  RuntimeRecipe recipe =
      succeeded(checkRecipe(canonical, paramNames.size(), ignored, ignoredAt))
          ? numberRecipe(canonical, paramNames)
          : numberRecipe(body, paramNames);
  copy->destroy();
  return recipe;
}

static SmallVector<std::string> paramNamesOf(ArrayAttr names) {
  SmallVector<std::string> out;
  for (Attribute a : names)
    out.push_back(cast<StringAttr>(a).getValue().str());
  return out;
}

//===----------------------------------------------------------------------===//
// fuel.recipe
//===----------------------------------------------------------------------===//

const FusedOpInfo *RecipeDefOp::getInfo(std::string &error) {
  Operation *at;
  std::optional<RuntimeRecipe> recipe =
      readRecipe(getBody().front(), paramNamesOf(getParamNames()), error, at);
  if (!recipe)
    return nullptr;
  std::optional<uint32_t> id =
      registerRuntimeRecipe(getSymName(), *recipe, error);
  return id ? lookupFusedOp(*id) : nullptr;
}

LogicalResult RecipeDefOp::verifyRegions() {
  std::string error;
  Operation *at;
  if (!readRecipe(getBody().front(), paramNamesOf(getParamNames()), error, at))
    return (at ? at->emitOpError() : emitOpError()) << error;
  if (!getInfo(error))
    return emitOpError() << error;
  return success();
}

void RecipeDefOp::getAsmBlockArgumentNames(Region &region,
                                        OpAsmSetValueNameFn setNameFn) {
  if (&region != &getBody() || region.empty())
    return;
  Block &body = region.front();
  unsigned first = getNumInputs();
  for (auto [i, name] : llvm::enumerate(getParamNames()))
    if (first + i < body.getNumArguments())
      setNameFn(body.getArgument(first + i), cast<StringAttr>(name).getValue());
}

// fuel.recipe @name(%x: T, ...) (params(%p: T, ...))? -> T { body }
ParseResult RecipeDefOp::parse(OpAsmParser &parser, OperationState &result) {
  MLIRContext *ctx = parser.getContext();
  StringAttr name;
  SMLoc nameLoc = parser.getCurrentLocation();
  if (parser.parseSymbolName(name, getSymNameAttrName(result.name),
                             result.attributes))
    return failure();
  SmallVector<OpAsmParser::Argument> args;
  if (parser.parseArgumentList(args, OpAsmParser::Delimiter::Paren,
                               /*allowType=*/true))
    return failure();
  SmallVector<std::string> paramNames;
  if (succeeded(parser.parseOptionalKeyword("params"))) {
    SmallVector<OpAsmParser::Argument> params;
    if (parser.parseArgumentList(params, OpAsmParser::Delimiter::Paren,
                                 /*allowType=*/true))
      return failure();
    for (OpAsmParser::Argument &p : params) {
      paramNames.push_back(p.ssaName.name.drop_front().str());
      args.push_back(p);
    }
  }
  Type resultType;
  if (parser.parseArrow() || parser.parseType(resultType) ||
      parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  Region *body = result.addRegion();
  SMLoc bodyLoc = parser.getCurrentLocation();
  if (parser.parseRegion(*body, args))
    return failure();
  if (body->empty())
    return parser.emitError(bodyLoc, "a recipe needs a body");
  SmallVector<Attribute> names;
  for (const std::string &p : paramNames)
    names.push_back(StringAttr::get(ctx, p));
  result.addAttribute(getParamNamesAttrName(result.name),
                      ArrayAttr::get(ctx, names));
  Block &block = body->front();
  auto yield = dyn_cast_or_null<YieldOp>(block.empty() ? nullptr
                                                       : &block.back());
  if (yield && yield.getValue().getType() != resultType)
    return parser.emitError(bodyLoc)
           << "the recipe yields " << yield.getValue().getType()
           << ", not its declared result type " << resultType;
  // Register the op now, so that the uses that follow parse.
  std::string error;
  Operation *at;
  std::optional<RuntimeRecipe> recipe =
      readRecipe(body->front(), paramNames, error, at);
  if (!recipe) {
    if (at)
      return at->emitError("'fuel.recipe' op ") << error;
    return parser.emitError(nameLoc, "'fuel.recipe' op ") << error;
  }
  if (!registerRuntimeRecipe(name.getValue(), *recipe, error))
    return parser.emitError(nameLoc, "'fuel.recipe' op ") << error;
  return success();
}

void RecipeDefOp::print(OpAsmPrinter &p) {
  p << ' ';
  p.printSymbolName(getSymName());
  Block &body = getBody().front();
  unsigned numInputs = getNumInputs();
  auto printArgs = [&](unsigned from, unsigned to) {
    p << '(';
    for (unsigned i = from; i < to; ++i) {
      if (i != from)
        p << ", ";
      p.printRegionArgument(body.getArgument(i));
    }
    p << ')';
  };
  printArgs(0, numInputs);
  if (!getParamNames().empty()) {
    p << " params";
    printArgs(numInputs, body.getNumArguments());
  }
  p << " -> ";
  if (auto yield = dyn_cast_or_null<YieldOp>(body.empty() ? nullptr
                                                          : &body.back()))
    p << yield.getValue().getType();
  else if (body.getNumArguments() != 0)
    p << body.getArgument(0).getType();
  else
    p << "none";
  p.printOptionalAttrDictWithKeyword(
      (*this)->getAttrs(),
      {getSymNameAttrName().getValue(), getParamNamesAttrName().getValue()});
  p << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                /*printBlockTerminators=*/true);
}

//===----------------------------------------------------------------------===//
// Uses: fuel.fused @name
//===----------------------------------------------------------------------===//

LogicalResult
FusedOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  const FusedOpInfo &info = getInfo();
  FlatSymbolRefAttr ref = getRecipeAttr();
  if (!info.runtimeRecipe) {
    if (ref)
      return emitOpError() << info.name << " is not defined by a recipe, but "
                           << "the op names the recipe " << ref;
    return success();
  }
  if (!ref)
    return emitOpError() << info.name
                         << " is defined by a recipe: the op must name it "
                            "(`recipe`)";
  auto recipe = symbolTable.lookupNearestSymbolFrom<RecipeDefOp>(*this, ref);
  if (!recipe)
    return emitOpError() << "no fuel.recipe " << ref
                         << " in scope: a module that uses an op defined by "
                            "a recipe holds the recipe";
  std::string error;
  const FusedOpInfo *defined = recipe.getInfo(error);
  if (defined && defined->id != info.id)
    return emitOpError() << "the recipe " << ref << " defines "
                         << defined->name << ", not the op's " << info.name;
  return success();
}
