//===- Fuse.cpp - The fuel-fuse pass --------------------------------------===//
//
// A driver over matchRecipe (lib/Recipes/Match.cpp): tries the recipes at
// every linalg.generic result, from the last op of a block to the first, and
// replaces a match whose intermediate values have no other users.
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
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::fuel {
#define GEN_PASS_DEF_FUELFUSE
#include "FuelFused/Passes.h.inc"
} // namespace mlir::fuel

using namespace mlir;
using namespace mlir::fuel;

namespace {

/// The match's ops other than the root's producer may only feed each other.
static bool isSelfContained(const RecipeMatch &m, Operation *rootOp) {
  llvm::SmallPtrSet<Operation *, 16> set(m.ops.begin(), m.ops.end());
  for (Operation *op : m.ops) {
    if (op == rootOp)
      continue;
    for (Operation *user : op->getUsers())
      if (!set.contains(user))
        return false;
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

struct FuelFusePass : public fuel::impl::FuelFuseBase<FuelFusePass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    candidates.clear();
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
    }
    for (const FusedOpInfo &info : getStaticOps()) {
      if (!info.recipe ||
          (!ops.empty() && !llvm::is_contained(ops, info.name.str())))
        continue;
      RecipeBuilder rb(info, DictionaryAttr());
      info.recipe(rb);
      if (rb.readsIntParams())
        continue;
      candidates.push_back({&info, rb.take().nodes.size()});
    }
    // Larger recipes first: a layer norm contains a mean that a smaller
    // recipe could take for itself.
    llvm::stable_sort(candidates, [](auto &a, auto &b) {
      return a.second > b.second;
    });
    return success();
  }

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> roots;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (!isa<linalg::FillOp>(op) && op->getNumResults() == 1)
        roots.push_back(op);
    });
    llvm::SmallPtrSet<Operation *, 32> erased;
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp g : llvm::reverse(roots)) {
      if (erased.contains(g))
        continue;
      Value root = g->getResult(0);
      SmallVector<std::string> nearMisses;
      bool fusedHere = false;
      for (auto [info, size] : candidates) {
        std::string why;
        unsigned progress = 0;
        FailureOr<RecipeMatch> m = matchRecipe(*info, root, why, &progress);
        if (succeeded(m) && !isSelfContained(*m, g)) {
          why = "an intermediate value has another user";
          progress = m->ops.size();
          m = failure();
        }
        if (failed(m)) {
          if (progress >= kNearMissOps)
            nearMisses.push_back((info->name + ": " + why).str());
          continue;
        }
        rewriter.setInsertionPoint(g);
        SmallVector<Value> operands;
        SmallVector<Operation *> reshapes;
        for (auto [v, rank] : llvm::zip(m->inputs, m->inputRanks)) {
          if (!v)
            continue;
          if (Value reshaped = dropUnitDims(rewriter, v, rank); reshaped != v) {
            reshapes.push_back(reshaped.getDefiningOp());
            v = reshaped;
          }
          operands.push_back(v);
        }
        auto fused = FusedOp::create(rewriter, g.getLoc(),
                                     KindAttr::get(&getContext(), info->id),
                                     operands, m->params);
        if (fused->getNumResults() != 1 ||
            fused->getResult(0).getType() != root.getType() ||
            failed(mlir::verify(fused))) {
          rewriter.eraseOp(fused);
          for (Operation *op : llvm::reverse(reshapes))
            rewriter.eraseOp(op);
          why = "the matched operands do not fit the op";
          if (m->ops.size() >= kNearMissOps)
            nearMisses.push_back((info->name + ": " + why).str());
          continue;
        }
        rewriter.replaceAllUsesWith(root, fused->getResult(0));
        // Erase the covered ops, users first, then what only they used
        // (inits, constants, sizes); everything else stays as it was.
        SmallVector<Operation *> worklist(m->ops.begin(), m->ops.end());
        llvm::append_range(worklist, m->leafOps);
        llvm::SmallPtrSet<Operation *, 32> covered(m->ops.begin(),
                                                   m->ops.end());
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
        fusedHere = true;
        break;
      }
      if (!fusedHere && report == "near-misses")
        for (const std::string &miss : nearMisses)
          g.emitRemark() << "fuel-fuse near miss: " << miss;
    }
  }

  /// How many ops a failed match must cover to count as a near miss.
  static constexpr unsigned kNearMissOps = 3;

  SmallVector<std::pair<const FusedOpInfo *, size_t>> candidates;
};

} // namespace
