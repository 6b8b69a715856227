//===- Fuse.cpp - The fuel-fuse pass --------------------------------------===//
//
// A driver over the Match library: matchRecipe finds a fused op, Rewrite.h
// replaces what it covers. First it looks inside the bodies of reductions
// for the ops without reductions of their own that upstream elementwise
// fusion moved there (a RoPE inside the matmul that reads it); then it tries
// the recipes at every linalg result (and reshapes of one), from the last op
// of a block to the first, larger recipes first. Where no recipe computes a
// whole result, it looks for one inside the body of the op, and makes the
// fused op an input of it. Ops upstream defines by their decomposition
// (linalg.softmax) are matched through it.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/IR/FuelOps.h"
#include "FuelFused/Match/Match.h"
#include "FuelFused/Match/Rewrite.h"
#include "FuelFused/Recipes/Recipe.h"
#include "FuelFused/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Threading.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::fuel {
#define GEN_PASS_DEF_FUELFUSE
#include "FuelFused/Transforms/Passes.h.inc"
} // namespace mlir::fuel

using namespace mlir;
using namespace mlir::fuel;

namespace {

/// Records the ops a rewrite erases, so the sweep skips them.
struct ErasedOps : public RewriterBase::Listener {
  void notifyOperationErased(Operation *op) override { ops.insert(op); }
  llvm::SmallPtrSet<Operation *, 32> ops;
};

struct FuelFusePass : public fuel::impl::FuelFuseBase<FuelFusePass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    candidates.clear();
    elementwiseRecipes.clear();
    if (!report.empty() && report != "near-misses" && report != "misses")
      return emitError(UnknownLoc::get(context))
             << "fuel-fuse: unknown report '" << report
             << "' (expected 'near-misses' or 'misses')";
    // The recipe libraries: parsing them registers their ops.
    libraries.clear();
    libraryRecipes.clear();
    SmallVector<const FusedOpInfo *> libraryOps;
    auto addLibrary = [&](OwningOpRef<ModuleOp> library) -> LogicalResult {
      for (auto recipe : library->getOps<RecipeDefOp>()) {
        std::string error;
        const FusedOpInfo *info = recipe.getInfo(error);
        if (!info)
          return recipe.emitError() << "fuel-fuse: " << error;
        libraryRecipes.try_emplace(info->id, recipe);
        libraryOps.push_back(info);
      }
      libraries.push_back(
          std::make_shared<OwningOpRef<ModuleOp>>(std::move(library)));
      return success();
    };
    ParserConfig config(context);
    for (const std::string &path : recipes) {
      OwningOpRef<ModuleOp> library = parseSourceFile<ModuleOp>(path, config);
      if (!library)
        return emitError(UnknownLoc::get(context))
               << "fuel-fuse: cannot read the recipes in '" << path << "'";
      if (failed(addLibrary(std::move(library))))
        return failure();
    }
    // The recipes registered for fusion in this process (from Python).
    for (const std::string &text : getFusionRecipes()) {
      OwningOpRef<ModuleOp> library = parseSourceString<ModuleOp>(text, config);
      if (!library || failed(addLibrary(std::move(library))))
        return emitError(UnknownLoc::get(context))
               << "fuel-fuse: a recipe registered for fusion does not parse";
    }
    selected.clear();
    for (const std::string &name : ops) {
      const FusedOpInfo *info = lookupFusedOp(name);
      if (!info)
        return emitError(UnknownLoc::get(context))
               << "fuel-fuse: unknown fused op '" << name << "' in ops=";
      selected.insert(info->id);
      if (!info->hasRecipe)
        return emitError(UnknownLoc::get(context))
               << "fuel-fuse: " << name
               << " has no recipe, so it cannot be fused ("
               << info->recipeNote << ")";
      if (getMatchableRecipes(*info).empty())
        return emitError(UnknownLoc::get(context))
               << "fuel-fuse: " << name << " is not searched for ("
               << info->recipeNote << ")";
    }
    for (const FusedOpInfo &info : getStaticOps())
      addCandidate(info);
    for (const FusedOpInfo *info : libraryOps)
      addCandidate(*info);
    sortCandidates();
    return success();
  }

  /// Adds `info`'s op to the candidates if it has a recipe fusion can
  /// match and `ops=` selects it (or is empty).
  void addCandidate(const FusedOpInfo &info) {
    if (!info.hasRecipe || (!ops.empty() && !selected.contains(info.id)))
      return;
    if (llvm::any_of(candidates, [&](auto &c) { return c.first == &info; }))
      return;
    if (getMatchableRecipes(info).empty())
      return;
    RecipeBuilder rb(info, DictionaryAttr());
    lookupRecipe(info)(rb);
    Recipe recipe = rb.take();
    if (llvm::none_of(recipe.nodes, [](const RecipeNode &n) {
          return n.op == RecipeOp::ReduceSum || n.op == RecipeOp::ReduceMax ||
                 n.op == RecipeOp::Contract || n.op == RecipeOp::CountKept;
        }))
      elementwiseRecipes.insert(&info);
    candidates.push_back({&info, recipe.nodes.size()});
  }

  /// Larger recipes first: a layer norm contains a mean that a smaller
  /// recipe could take for itself.
  void sortCandidates() {
    llvm::stable_sort(candidates, [](auto &a, auto &b) {
      return a.second > b.second;
    });
  }

  /// The ops defined by recipes in the module join the candidates for this
  /// run; returns the recipe that names each such op in the module, by id.
  llvm::DenseMap<uint32_t, StringAttr> addModuleRecipes() {
    llvm::DenseMap<uint32_t, StringAttr> names;
    size_t before = candidates.size();
    getOperation()->walk([&](RecipeDefOp recipe) {
      std::string error;
      if (const FusedOpInfo *info = recipe.getInfo(error)) {
        names.try_emplace(info->id, recipe.getSymNameAttr());
        addCandidate(*info);
      }
    });
    // The module's own recipes win ties with the others (a library's or a
    // registered SiLU spelled otherwise that matches the same IR).
    std::rotate(candidates.begin(), candidates.begin() + before,
                candidates.end());
    sortCandidates();
    return names;
  }

  /// Names each fused op the run created for an op defined by a recipe
  /// (the module's own recipe, or a copy of the library's put into the
  /// module); fails where the op the pass runs on cannot hold a recipe.
  LogicalResult nameRecipes(llvm::DenseMap<uint32_t, StringAttr> &names) {
    Operation *root = getOperation();
    SmallVector<FusedOp> unnamed;
    root->walk([&](FusedOp op) {
      if (op.getInfo().runtimeRecipe && !op.getRecipeAttr())
        unnamed.push_back(op);
    });
    std::optional<SymbolTable> symbols;
    for (FusedOp op : unnamed) {
      uint32_t id = op.getInfo().id;
      auto it = names.find(id);
      if (it == names.end()) {
        auto library = libraryRecipes.find(id);
        if (library == libraryRecipes.end() ||
            !root->hasTrait<OpTrait::SymbolTable>() ||
            root->getNumRegions() != 1 || root->getRegion(0).empty())
          return op.emitError()
                 << "fuel-fuse: the recipe of " << op.getInfo().name
                 << " cannot be put into the IR (run the pass on a module)";
        // Renamed if the module has a symbol of its name (a function
        // @silu): the copy is still the same op.
        if (!symbols)
          symbols.emplace(root);
        auto copy = cast<RecipeDefOp>(library->second->clone());
        symbols->insert(copy, root->getRegion(0).front().begin());
        it = names.try_emplace(id, copy.getSymNameAttr()).first;
      }
      op.setRecipeAttr(FlatSymbolRefAttr::get(it->second));
    }
    return success();
  }

  MatchOptions matchOptions() const {
    MatchOptions options;
    options.valueChanging = valueChanging;
    // The reasons are read only by the report.
    options.explain = !report.empty();
    return options;
  }

  /// How much of its recipe (percent) a failed match must have found to
  /// count as a near miss.
  static constexpr unsigned kNearMissPercent = 30;

  /// The near misses at one candidate: the matches that went furthest.
  struct NearMisses {
    unsigned best = 0;
    SmallVector<std::string> lines;
  };
  void noteMiss(NearMisses &misses, const FusedOpInfo &info, StringRef why,
                unsigned progress) const {
    // `report=misses`: every candidate tried, with how far it got.
    if (report == "misses") {
      misses.lines.push_back(
          (info.name + " (" + Twine(progress) + "%): " + why).str());
      return;
    }
    if (progress < kNearMissPercent || progress < misses.best)
      return;
    if (progress > misses.best)
      misses.lines.clear();
    misses.best = progress;
    misses.lines.push_back((info.name + ": " + why).str());
  }

  /// Tries the candidates in order (with `elementwiseOnly`, those whose
  /// recipes have no reductions): `match` looks for one, `replace` rewrites
  /// a match; the first that both accept wins. The others are noted as near
  /// misses.
  template <typename MatchFn, typename ReplaceFn>
  bool fuseFirst(NearMisses &nearMisses, bool elementwiseOnly, MatchFn match,
                 ReplaceFn replace) {
    for (auto [info, size] : candidates) {
      if (elementwiseOnly && !elementwiseRecipes.contains(info))
        continue;
      std::string why;
      unsigned progress = 0;
      ++numAttempts;
      FailureOr<RecipeMatch> m = match(*info, why, progress);
      if (succeeded(m) && succeeded(replace(*info, *m, why))) {
        ++numFused;
        return true;
      }
      noteMiss(nearMisses, *info, why, progress);
    }
    return false;
  }

  void runOnOperation() override {
    // The module's recipes are this run's own candidates: a pass manager may
    // run the pass again, on another module.
    auto initialCandidates = candidates;
    auto initialElementwise = elementwiseRecipes;
    llvm::DenseMap<uint32_t, StringAttr> recipeNames = addModuleRecipes();
    fuse();
    if (failed(nameRecipes(recipeNames)))
      signalPassFailure();
    candidates = std::move(initialCandidates);
    elementwiseRecipes = std::move(initialElementwise);
  }

  /// The near misses of one scope, in the order of its roots.
  using MissList =
      SmallVector<std::pair<Operation *, SmallVector<std::string>>>;

  /// Fuses what `scope` (a function, or the op the pass runs on) computes.
  void fuseIn(Operation *scope, MissList &out) {
    ErasedOps erased;
    IRRewriter rewriter(&getContext(), &erased);
    // First the values an upstream fusion moved into a reduction's body (a
    // RoPE inside the matmul that reads it), so that what reads the
    // reduction can match; then every result.
    SmallVector<linalg::GenericOp> reductions;
    scope->walk([&](linalg::GenericOp g) {
      if (g.getNumReductionLoops() > 0)
        reductions.push_back(g);
    });
    // (Only recipes without reductions: a value with reductions of its own
    // in a body, a softmax divided in the matmul that reads it, may be part
    // of a larger op, found from its root.)
    for (linalg::GenericOp g : reductions) {
      NearMisses ignored;
      while (fuseInBody(rewriter, g, ignored, /*elementwiseOnly=*/true))
        ;
    }
    // Candidates: linalg results, and reshapes of them (a batch matmul's
    // result expanded back to [B, H, ...]). A fused op is an aggregate
    // too: what its decomposition computes may be found as another op.
    SmallVector<Operation *> roots;
    scope->walk([&](Operation *op) {
      if (op->getNumResults() != 1)
        return;
      if ((isa<linalg::LinalgOp>(op) && !isa<linalg::FillOp>(op)) ||
          isa<linalg::AggregatedOpInterface>(op))
        roots.push_back(op);
      else if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op) &&
               op->getOperand(0).getDefiningOp<linalg::LinalgOp>())
        roots.push_back(op);
    });
    erased.ops.clear();
    llvm::MapVector<Operation *, SmallVector<std::string>> misses;
    for (Operation *g : llvm::reverse(roots)) {
      if (erased.ops.contains(g))
        continue;
      ++numRoots;
      NearMisses nearMisses;
      bool fused = isa<linalg::AggregatedOpInterface>(g)
                       ? fuseAggregate(rewriter, g, nearMisses)
                       : fuseResult(rewriter, g, nearMisses);
      // A body that computes more than the op (the weight multiply after a
      // norm, fused into one generic; a RoPE inside the matmul that reads
      // it): look for the op inside it.
      if (!fused)
        if (auto generic = dyn_cast<linalg::GenericOp>(g)) {
          bool inBody = false;
          while (fuseInBody(rewriter, generic, nearMisses))
            fused = inBody = true;
          // What is left of the body reads the fused op as an input now:
          // it may be an op itself (a leaky ReLU of a SiLU fused into one
          // body).
          if (inBody && !erased.ops.contains(g))
            fuseResult(rewriter, g, nearMisses);
        }
      if (!fused && !nearMisses.lines.empty())
        misses[g] = std::move(nearMisses.lines);
    }
    for (auto &[op, lines] : misses)
      if (!erased.ops.contains(op))
        out.emplace_back(op, std::move(lines));
  }

  /// Functions are fused independently, on the context's threads; the near
  /// misses are reported afterwards, in the order of the IR.
  void fuse() {
    Operation *root = getOperation();
    SmallVector<Operation *> scopes;
    if (root->hasTrait<OpTrait::SymbolTable>()) {
      for (Region &region : root->getRegions())
        for (Block &block : region)
          for (Operation &op : block)
            if (op.hasTrait<OpTrait::IsIsolatedFromAbove>() &&
                op.getNumRegions() > 0 && !isa<RecipeDefOp>(op))
              scopes.push_back(&op);
    } else {
      scopes.push_back(root);
    }
    SmallVector<MissList> misses(scopes.size());
    parallelFor(&getContext(), 0, scopes.size(),
                [&](size_t i) { fuseIn(scopes[i], misses[i]); });
    if (report.empty())
      return;
    StringRef prefix =
        report == "misses" ? "fuel-fuse miss: " : "fuel-fuse near miss: ";
    for (MissList &list : misses)
      for (auto &[op, lines] : list)
        for (const std::string &miss : lines)
          op->emitRemark() << prefix << miss;
  }

  /// An op defined by its upstream decomposition (linalg.softmax): the
  /// recipes are tried on that decomposition, built before the op and
  /// removed again whatever the outcome.
  bool fuseAggregate(RewriterBase &rewriter, Operation *op,
                     NearMisses &nearMisses) {
    Operation *prev = op->getPrevNode();
    rewriter.setInsertionPoint(op);
    FailureOr<SmallVector<Value>> parts =
        cast<linalg::AggregatedOpInterface>(op).decomposeOperation(rewriter);
    if (succeeded(parts) && parts->size() == 1 && op->getNumResults() == 1 &&
        (*parts)[0].getDefiningOp()) {
      Value root = (*parts)[0];
      if (fuseFirst(
              nearMisses, /*elementwiseOnly=*/false,
              [&](const FusedOpInfo &info, std::string &why,
                  unsigned &progress) {
                return matchRecipe(info, root, why, &progress,
                                   matchOptions());
              },
              [&](const FusedOpInfo &info, const RecipeMatch &m,
                  std::string &why) {
                return replaceMatchedAggregate(rewriter, op, prev, info, m,
                                               why);
              }))
        return true;
    }
    eraseBuiltBefore(rewriter, prev, op, /*onlyUnused=*/false);
    return false;
  }

  /// Tries the recipes on the result of `g`.
  bool fuseResult(RewriterBase &rewriter, Operation *g,
                  NearMisses &nearMisses) {
    Value root = g->getResult(0);
    return fuseFirst(
        nearMisses, /*elementwiseOnly=*/false,
        [&](const FusedOpInfo &info, std::string &why, unsigned &progress) {
          return matchRecipe(info, root, why, &progress, matchOptions());
        },
        [&](const FusedOpInfo &info, const RecipeMatch &m, std::string &why) {
          return replaceMatchedResult(rewriter, g, info, m, why);
        });
  }

  /// Tries the recipes on the scalars of `g`'s body; on a match, the fused
  /// op becomes a new input of `g` that replaces the scalar.
  bool fuseInBody(RewriterBase &rewriter, linalg::GenericOp g,
                  NearMisses &nearMisses, bool elementwiseOnly = false) {
    if (g.getNumDpsInits() != 1 || !g.hasPureTensorSemantics())
      return false;
    Block *body = g.getBody();
    Value yielded = body->getTerminator()->getOperand(0);
    SmallVector<Operation *> scalars;
    for (Operation &op : body->without_terminator())
      if (op.getNumResults() == 1 && op.getResult(0) != yielded &&
          isa<FloatType>(op.getResult(0).getType()))
        scalars.push_back(&op);
    bool elementwise = g.getNumReductionLoops() == 0 &&
                       g.getMatchingIndexingMap(g.getDpsInitOperand(0))
                           .isIdentity();
    for (Operation *scalarOp : llvm::reverse(scalars)) {
      Value scalar = scalarOp->getResult(0);
      // The loops the scalar lives on: all of an elementwise op's, or those
      // its inputs are read on (not the accumulator of a reduction).
      std::optional<SmallVector<unsigned>> loops = getLoopsOfScalar(g, scalar);
      if (!loops || loops->empty())
        continue;
      // An elementwise op's value lives on its whole space, the result's
      // shape; a reduction's on the loops it reads, of static sizes.
      SmallVector<int64_t> shape;
      if (elementwise) {
        loops = llvm::to_vector(llvm::seq<unsigned>(0, g.getNumLoops()));
        llvm::append_range(
            shape, cast<ShapedType>(g->getResult(0).getType()).getShape());
      } else {
        SmallVector<int64_t> ranges = g.getStaticLoopRanges();
        for (unsigned l : *loops)
          shape.push_back(ranges[l]);
      }
      auto type = RankedTensorType::get(shape, scalar.getType());
      AffineMap readMap =
          elementwise
              ? g.getMatchingIndexingMap(g.getDpsInitOperand(0))
              : AffineMap::get(g.getNumLoops(), 0,
                               llvm::map_to_vector(
                                   *loops,
                                   [&](unsigned l) -> AffineExpr {
                                     return rewriter.getAffineDimExpr(l);
                                   }),
                               g.getContext());
      if (fuseFirst(
              nearMisses, elementwiseOnly,
              [&](const FusedOpInfo &info, std::string &why,
                  unsigned &progress) {
                return matchRecipeInBody(info, scalar, g, *loops, why,
                                         &progress, matchOptions());
              },
              [&](const FusedOpInfo &info, const RecipeMatch &m,
                  std::string &why) {
                return replaceMatchInBody(rewriter, g, scalar, readMap, type,
                                          info, m, why);
              }))
        return true;
    }
    return false;
  }

  SmallVector<std::pair<const FusedOpInfo *, size_t>> candidates;
  /// The recipe libraries (`recipes=`) and their recipes by op id.
  SmallVector<std::shared_ptr<OwningOpRef<ModuleOp>>> libraries;
  llvm::DenseMap<uint32_t, RecipeDefOp> libraryRecipes;
  /// The ids `ops=` names (any of an op's names selects it).
  llvm::DenseSet<uint32_t> selected;
  /// The candidates whose recipes have no reductions.
  llvm::SmallPtrSet<const FusedOpInfo *, 8> elementwiseRecipes;
};

} // namespace
