//===- Fuse.cpp - The fuel-fuse pass --------------------------------------===//
//
// A driver over matchRecipe (lib/Recipes/Match.cpp). First it looks inside
// the bodies of reductions for the ops without reductions of their own that
// upstream elementwise fusion moved there (a RoPE inside the matmul that
// reads it); then it tries the recipes at every linalg result (and reshapes
// of one), from the last op of a block to the first, larger recipes first,
// and replaces a match whose intermediate values have no other users (a
// result the IR holds channels-last is transposed back from the op's).
// Where no recipe computes a whole result, it looks for one inside the body
// of the op, and makes the fused op an input of it. Ops upstream defines by
// their decomposition (linalg.softmax) are matched through it.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Decompose.h"
#include "FuelFused/FuelOps.h"
#include "FuelFused/Passes.h"
#include "FuelFused/Recipe.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::fuel {
#define GEN_PASS_DEF_FUELFUSE
#include "FuelFused/Passes.h.inc"
} // namespace mlir::fuel

using namespace mlir;
using namespace mlir::fuel;

namespace {

/// The match's ops other than the root's producer may only feed each other
/// (and `reader`, the op whose body the match was found in).
static bool isSelfContained(const RecipeMatch &m, Operation *rootOp,
                            Operation *reader) {
  llvm::SmallPtrSet<Operation *, 16> set(m.ops.begin(), m.ops.end());
  for (Operation *op : m.ops) {
    if (op == rootOp)
      continue;
    for (Operation *user : op->getUsers()) {
      // A use inside a body (a gather's tensor.extract) is a use by the op.
      Operation *owner = user;
      while (owner && !set.contains(owner) && owner != reader)
        owner = owner->getParentOp();
      if (!owner)
        return false;
    }
  }
  return true;
}

/// `v` without the size-1 dims a frontend added (a [1, K, N] weight for a
/// [K, N] operand), or `v` itself.
static Value dropUnitDims(OpBuilder &b, Value v, int64_t rank) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getRank() == rank)
    return v;
  SmallVector<ReassociationIndices> groups;
  SmallVector<int64_t> shape;
  ReassociationIndices pending;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    pending.push_back(d);
    if (type.getDimSize(d) == 1)
      continue;
    groups.push_back(pending);
    shape.push_back(type.getDimSize(d));
    pending.clear();
  }
  if (groups.empty())
    return v;
  llvm::append_range(groups.back(), pending);
  auto target = RankedTensorType::get(shape, type.getElementType());
  return tensor::CollapseShapeOp::create(b, v.getLoc(), target, v, groups);
}

/// `v` transposed by `perm` (result dim i is dim perm[i] of `v`).
static Value transposed(OpBuilder &b, Value v, ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<OpFoldResult> sizes;
  for (int64_t p : perm)
    sizes.push_back(tensor::getMixedSize(b, v.getLoc(), v, p));
  Value init = tensor::EmptyOp::create(b, v.getLoc(), sizes,
                                       type.getElementType());
  return linalg::TransposeOp::create(b, v.getLoc(), v, init, perm)
      ->getResult(0);
}

struct FuelFusePass : public fuel::impl::FuelFuseBase<FuelFusePass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    candidates.clear();
    elementwiseRecipes.clear();
    if (!report.empty() && report != "near-misses")
      return emitError(UnknownLoc::get(context))
             << "fuel-fuse: unknown report '" << report
             << "' (expected 'near-misses')";
    for (const std::string &name : ops) {
      const FusedOpInfo *info = lookupFusedOp(name);
      if (!info)
        return emitError(UnknownLoc::get(context))
               << "fuel-fuse: unknown fused op '" << name << "' in ops=";
      if (!info->recipe)
        return emitError(UnknownLoc::get(context))
               << "fuel-fuse: " << name
               << " has no recipe, so it cannot be fused ("
               << info->recipeNote << ")";
      if (getMatchableRecipes(*info).empty())
        return emitError(UnknownLoc::get(context))
               << "fuel-fuse: " << name << " is not searched for ("
               << info->recipeNote << ")";
    }
    for (const FusedOpInfo &info : getStaticOps()) {
      if (!info.recipe ||
          (!ops.empty() && !llvm::is_contained(ops, info.name.str())))
        continue;
      if (getMatchableRecipes(info).empty())
        continue;
      RecipeBuilder rb(info, DictionaryAttr());
      info.recipe(rb);
      Recipe recipe = rb.take();
      if (llvm::none_of(recipe.nodes, [](const RecipeNode &n) {
            return n.op == RecipeOp::ReduceSum ||
                   n.op == RecipeOp::ReduceMax ||
                   n.op == RecipeOp::Contract ||
                   n.op == RecipeOp::CountKept;
          }))
        elementwiseRecipes.insert(&info);
      candidates.push_back({&info, recipe.nodes.size()});
    }
    // Larger recipes first: a layer norm contains a mean that a smaller
    // recipe could take for itself.
    llvm::stable_sort(candidates, [](auto &a, auto &b) {
      return a.second > b.second;
    });
    return success();
  }

  /// How much of its recipe (percent) a failed match must have found to
  /// count as a near miss.
  static constexpr unsigned kNearMissPercent = 30;

  /// The near misses at one candidate: the matches that went furthest.
  struct NearMisses {
    unsigned best = 0;
    SmallVector<std::string> lines;
  };
  static void noteMiss(NearMisses &misses, const FusedOpInfo &info,
                       StringRef why, unsigned progress) {
    if (progress < kNearMissPercent || progress < misses.best)
      return;
    if (progress > misses.best)
      misses.lines.clear();
    misses.best = progress;
    misses.lines.push_back((info.name + ": " + why).str());
  }

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // First the values an upstream fusion moved into a reduction's body (a
    // RoPE inside the matmul that reads it), so that what reads the
    // reduction can match; then every result.
    SmallVector<linalg::GenericOp> reductions;
    getOperation()->walk([&](linalg::GenericOp g) {
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
    llvm::MapVector<Operation *, SmallVector<std::string>> misses;
    sweep(rewriter, misses);
    if (report == "near-misses")
      for (auto &[op, lines] : misses)
        if (!erased.contains(op))
          for (const std::string &miss : lines)
            op->emitRemark() << "fuel-fuse near miss: " << miss;
    erased.clear();
  }

  void sweep(IRRewriter &rewriter,
                 llvm::MapVector<Operation *, SmallVector<std::string>> &misses) {
    // Candidates: linalg results, and reshapes of them (a batch matmul's
    // result expanded back to [B, H, ...]).
    SmallVector<Operation *> roots;
    getOperation()->walk([&](Operation *op) {
      if (op->getNumResults() != 1)
        return;
      if ((isa<linalg::LinalgOp>(op) && !isa<linalg::FillOp>(op)) ||
          isa<linalg::AggregatedOpInterface>(op))
        roots.push_back(op);
      else if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op) &&
               op->getOperand(0).getDefiningOp<linalg::LinalgOp>())
        roots.push_back(op);
    });
    for (Operation *g : llvm::reverse(roots)) {
      if (erased.contains(g))
        continue;
      NearMisses nearMisses;
      bool fused = isa<linalg::AggregatedOpInterface>(g)
                       ? fuseAggregate(rewriter, g, nearMisses)
                       : fuseResult(rewriter, g, nearMisses);
      // A body that computes more than the op (the weight multiply after a
      // norm, fused into one generic; a RoPE inside the matmul that reads
      // it): look for the op inside it.
      if (!fused)
        if (auto generic = dyn_cast<linalg::GenericOp>(g))
          while (fuseInBody(rewriter, generic, nearMisses))
            fused = true;
      if (!fused && !nearMisses.lines.empty())
        misses[g] = std::move(nearMisses.lines);
    }
  }

  /// Builds the fused op for `m` before `at`; null (and nothing created) if
  /// the matched operands do not make a valid op of type `type`.
  FusedOp buildFused(IRRewriter &rewriter, Operation *at,
                     const FusedOpInfo &info, const RecipeMatch &m,
                     Type type) {
    rewriter.setInsertionPoint(at);
    // Everything built goes right before `at`: on failure, what lies
    // between `prev` and `at` is erased.
    Operation *prev = at->getPrevNode();
    SmallVector<Value> operands;
    for (auto [input, rank, perm] :
         llvm::zip(m.inputs, m.inputRanks, m.inputPerms)) {
      if (!input)
        continue;
      operands.push_back(perm.empty() ? dropUnitDims(rewriter, input, rank)
                                      : transposed(rewriter, input, perm));
    }
    auto fused = FusedOp::create(rewriter, at->getLoc(),
                                 KindAttr::get(&getContext(), info.id),
                                 operands, m.params);
    if (fused->getNumResults() == 1 && fused->getResult(0).getType() == type &&
        succeeded(mlir::verify(fused)))
      return fused;
    eraseBuiltBefore(rewriter, prev, at, /*onlyUnused=*/false);
    return {};
  }

  /// Erases the ops between `prev` (or the start of the block) and `at`,
  /// last first: what a rewrite built there. With `onlyUnused`, those that
  /// nothing uses any more (fused ops aside).
  static void eraseBuiltBefore(IRRewriter &rewriter, Operation *prev,
                               Operation *at, bool onlyUnused) {
    SmallVector<Operation *> built;
    for (Operation *op = prev ? prev->getNextNode() : &at->getBlock()->front();
         op && op != at; op = op->getNextNode())
      built.push_back(op);
    for (Operation *op : llvm::reverse(built))
      if (!onlyUnused || (op->use_empty() && !isa<FusedOp>(op)))
        rewriter.eraseOp(op);
  }

  /// Erases the covered ops, users first, then what only they used (inits,
  /// constants, sizes, input casts); everything else stays as it was.
  void eraseCovered(IRRewriter &rewriter, const RecipeMatch &m) {
    SmallVector<Operation *> worklist(m.ops.begin(), m.ops.end());
    llvm::append_range(worklist, m.leafOps);
    llvm::SmallPtrSet<Operation *, 32> covered(m.ops.begin(), m.ops.end());
    bool erasing = true;
    while (erasing) {
      erasing = false;
      for (size_t i = 0; i < worklist.size(); ++i) {
        Operation *op = worklist[i];
        if (!op || !op->use_empty() ||
            (!covered.contains(op) && !isOpTriviallyDead(op)))
          continue;
        // Operands, and values the bodies capture from above.
        op->walk([&](Operation *nested) {
          for (Value operand : nested->getOperands())
            if (Operation *def = operand.getDefiningOp())
              if (!op->isAncestor(def) && !erased.contains(def) &&
                  !llvm::is_contained(worklist, def))
                worklist.push_back(def);
        });
        erased.insert(op);
        rewriter.eraseOp(op);
        worklist[i] = nullptr;
        erasing = true;
      }
    }
  }

  /// An op defined by its upstream decomposition (linalg.softmax): the
  /// recipes are tried on that decomposition, built before the op and
  /// removed again whatever the outcome.
  bool fuseAggregate(IRRewriter &rewriter, Operation *op,
                     NearMisses &nearMisses) {
    Operation *prev = op->getPrevNode();
    auto removeBuilt = [&](bool onlyUnused) {
      eraseBuiltBefore(rewriter, prev, op, onlyUnused);
    };
    rewriter.setInsertionPoint(op);
    FailureOr<SmallVector<Value>> parts =
        cast<linalg::AggregatedOpInterface>(op).decomposeOperation(rewriter);
    if (failed(parts) || parts->size() != 1 || op->getNumResults() != 1 ||
        !(*parts)[0].getDefiningOp()) {
      removeBuilt(/*onlyUnused=*/false);
      return false;
    }
    Value root = (*parts)[0];
    for (auto [info, size] : candidates) {
      std::string why;
      unsigned progress = 0;
      FailureOr<RecipeMatch> m = matchRecipe(*info, root, why, &progress);
      FusedOp fused;
      if (succeeded(m) && m->outputPerm.empty())
        fused = buildFused(rewriter, op, *info, *m, op->getResult(0).getType());
      if (!fused) {
        if (succeeded(m))
          why = "the matched operands do not fit the op";
        noteMiss(nearMisses, *info, why, progress);
        continue;
      }
      rewriter.replaceAllUsesWith(op->getResult(0), fused->getResult(0));
      SmallVector<Value> operands(op->getOperands());
      erased.insert(op);
      rewriter.eraseOp(op);
      // What the decomposition built is unused now, and so is the op's
      // init (a tensor.empty).
      op = fused;
      removeBuilt(/*onlyUnused=*/true);
      for (Value v : operands)
        if (Operation *def = v.getDefiningOp();
            def && def->use_empty() && isOpTriviallyDead(def)) {
          erased.insert(def);
          rewriter.eraseOp(def);
        }
      return true;
    }
    removeBuilt(/*onlyUnused=*/false);
    return false;
  }

  /// Tries the recipes on the result of `g`.
  bool fuseResult(IRRewriter &rewriter, Operation *g,
                  NearMisses &nearMisses) {
    Value root = g->getResult(0);
    for (auto [info, size] : candidates) {
      std::string why;
      unsigned progress = 0;
      FailureOr<RecipeMatch> m = matchRecipe(*info, root, why, &progress);
      if (succeeded(m) && !isSelfContained(*m, g, nullptr)) {
        why = "an intermediate value has another user";
        m = failure();
      }
      FusedOp fused;
      if (succeeded(m)) {
        // A result the IR holds permuted: the op's own layout first.
        Type type = root.getType();
        if (!m->outputPerm.empty()) {
          auto t = cast<RankedTensorType>(type);
          SmallVector<int64_t> shape(t.getRank());
          for (auto [i, p] : llvm::enumerate(m->outputPerm))
            shape[p] = t.getDimSize(i);
          type = t.clone(shape);
        }
        fused = buildFused(rewriter, g, *info, *m, type);
        if (!fused) {
          why = "the matched operands do not fit the op";
        }
      }
      if (!fused) {
        noteMiss(nearMisses, *info, why, progress);
        continue;
      }
      Value result = fused->getResult(0);
      if (!m->outputPerm.empty()) {
        rewriter.setInsertionPointAfter(fused);
        result = transposed(rewriter, result, m->outputPerm);
      }
      rewriter.replaceAllUsesWith(root, result);
      eraseCovered(rewriter, *m);
      return true;
    }
    return false;
  }

  /// Tries the recipes on the scalars of `g`'s body; on a match, the fused
  /// op becomes a new input of `g` that replaces the scalar.
  bool fuseInBody(IRRewriter &rewriter, linalg::GenericOp g,
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
      std::optional<SmallVector<unsigned>> loops = loopsOfScalar(g, scalar);
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
      for (auto [info, size] : candidates) {
        if (elementwiseOnly && !elementwiseRecipes.contains(info))
          continue;
        std::string why;
        unsigned progress = 0;
        FailureOr<RecipeMatch> m =
            matchRecipeInBody(*info, scalar, g, *loops, why, &progress);
        if (succeeded(m) && (!isSelfContained(*m, nullptr, g) ||
                             !stopsUsingCovered(*m, g, scalar))) {
          why = "an intermediate value has another user";
          m = failure();
        }
        FusedOp fused;
        if (succeeded(m)) {
          fused = buildFused(rewriter, g, *info, *m, type);
          if (!fused) {
            why = "the matched operands do not fit the op";
          }
        }
        if (!fused) {
          noteMiss(nearMisses, *info, why, progress);
          continue;
        }
        AffineMap readMap =
            elementwise
                ? g.getMatchingIndexingMap(g.getDpsInitOperand(0))
                : AffineMap::get(
                      g.getNumLoops(), 0,
                      llvm::map_to_vector(*loops,
                                          [&](unsigned l) -> AffineExpr {
                                            return rewriter.getAffineDimExpr(l);
                                          }),
                      g.getContext());
        replaceScalarByInput(rewriter, g, scalar, fused->getResult(0), readMap,
                             m->leafOps);
        eraseCovered(rewriter, *m);
        return true;
      }
    }
    return false;
  }

  /// The loops `scalar` (in `g`'s body) depends on, in order: those of the
  /// inputs it reads and of the linalg.index it uses; none if it reads the
  /// accumulator.
  static std::optional<SmallVector<unsigned>>
  loopsOfScalar(linalg::GenericOp g, Value scalar) {
    Block *body = g.getBody();
    llvm::SmallBitVector used(g.getNumLoops());
    SmallVector<Value> worklist = {scalar};
    llvm::SmallPtrSet<Value, 16> seen;
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      if (!seen.insert(v).second)
        continue;
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        if (arg.getOwner() != body)
          continue;
        if (arg.getArgNumber() >= g.getNumDpsInputs())
          return std::nullopt;
        AffineMap map =
            g.getMatchingIndexingMap(g.getDpsInputOperand(arg.getArgNumber()));
        for (unsigned l = 0; l < g.getNumLoops(); ++l)
          if (map.isFunctionOfDim(l))
            used.set(l);
        continue;
      }
      Operation *def = v.getDefiningOp();
      if (!def || def->getBlock() != body)
        continue;
      if (auto index = dyn_cast<linalg::IndexOp>(def))
        used.set(index.getDim());
      llvm::append_range(worklist, def->getOperands());
    }
    SmallVector<unsigned> loops;
    for (unsigned l = 0; l < g.getNumLoops(); ++l)
      if (used.test(l))
        loops.push_back(l);
    return loops;
  }

  static bool stopsUsingCovered(const RecipeMatch &m, linalg::GenericOp g,
                                Value scalar) {
    llvm::SmallPtrSet<Operation *, 16> covered(m.ops.begin(), m.ops.end());
    SmallVector<Value> worklist(g.getBody()->getTerminator()->getOperands());
    llvm::SmallPtrSet<Value, 16> seen;
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      if (v == scalar || !seen.insert(v).second)
        continue;
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        if (arg.getOwner() == g.getBody() &&
            arg.getArgNumber() < g.getNumDpsInputs())
          if (Operation *def =
                  g.getDpsInputOperand(arg.getArgNumber())->get().getDefiningOp())
            if (covered.contains(def))
              return false;
        continue;
      }
      Operation *def = v.getDefiningOp();
      if (def && def->getBlock() == g.getBody())
        llvm::append_range(worklist, def->getOperands());
    }
    return true;
  }

  /// Makes `value` (the tensor of `scalar` over `g`'s iteration space) an
  /// input of `g` read where `scalar` was, and drops what the body no longer
  /// uses: the ops that computed `scalar` and the inputs only they read.
  static void replaceScalarByInput(IRRewriter &rewriter, linalg::GenericOp g,
                                   Value scalar, Value value, AffineMap map,
                                   SmallVectorImpl<Operation *> &captured) {
    Block *body = g.getBody();
    unsigned numInputs = g.getNumDpsInputs();
    llvm::SmallBitVector wasUsed(numInputs);
    for (unsigned i = 0; i < numInputs; ++i)
      wasUsed[i] = !body->getArgument(i).use_empty();
    SmallVector<AffineMap> maps = g.getIndexingMapsArray();
    maps.insert(maps.begin() + numInputs, map);
    rewriter.modifyOpInPlace(g, [&] {
      g.getInputsMutable().append(value);
      g.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
    BlockArgument arg =
        body->insertArgument(numInputs, scalar.getType(), scalar.getLoc());
    rewriter.replaceAllUsesWith(scalar, arg);
    // Dead body ops, last first.
    SmallVector<Operation *> bodyOps;
    for (Operation &op : body->without_terminator())
      bodyOps.push_back(&op);
    for (Operation *op : llvm::reverse(bodyOps)) {
      if (!isOpTriviallyDead(op))
        continue;
      // Values from above that only the erased ops read go too.
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          if (def->getBlock() != body)
            captured.push_back(def);
      rewriter.eraseOp(op);
    }
    for (int i = numInputs - 1; i >= 0; --i) {
      if (!wasUsed[i] || !body->getArgument(i).use_empty())
        continue;
      maps.erase(maps.begin() + i);
      rewriter.modifyOpInPlace(g, [&] {
        g.getInputsMutable().erase(i);
        g.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
      });
      body->eraseArgument(i);
    }
  }


  SmallVector<std::pair<const FusedOpInfo *, size_t>> candidates;
  llvm::SmallPtrSet<Operation *, 32> erased;
  /// The candidates whose recipes have no reductions.
  llvm::SmallPtrSet<const FusedOpInfo *, 8> elementwiseRecipes;
};

} // namespace
