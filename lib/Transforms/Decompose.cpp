//===- Decompose.cpp - The fuel-decompose pass ----------------------------===//
//
// A thin driver over decomposeFusedOp (lib/Recipes): picks the ops the
// options select and replaces each with its recipe's instantiation, or
// leaves it fused with a warning that says why.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Decompose/Decompose.h"
#include "FuelFused/IR/FuelOps.h"
#include "FuelFused/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::fuel {
#define GEN_PASS_DEF_FUELDECOMPOSE
#include "FuelFused/Transforms/Passes.h.inc"
} // namespace mlir::fuel

using namespace mlir;
using namespace mlir::fuel;

namespace {
struct FuelDecomposePass
    : public fuel::impl::FuelDecomposeBase<FuelDecomposePass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    for (const std::string &name : ops)
      if (!lookupFusedOp(name))
        return emitError(UnknownLoc::get(context))
               << "fuel-decompose: unknown fused op '" << name << "' in ops=";
    for (const std::string &name : keep)
      if (!lookupFusedOp(name))
        return emitError(UnknownLoc::get(context))
               << "fuel-decompose: unknown fused op '" << name << "' in keep=";
    selected.clear();
    kept.clear();
    for (const std::string &name : ops)
      selected.insert(name);
    for (const std::string &name : keep)
      kept.insert(name);
    return success();
  }

  void runOnOperation() override {
    SmallVector<FusedOp> candidates;
    getOperation()->walk([&](FusedOp op) {
      StringRef name = op.getInfo().name;
      if ((selected.empty() || selected.contains(name)) &&
          !kept.contains(name))
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (FusedOp op : candidates) {
      std::string why;
      rewriter.setInsertionPoint(op);
      FailureOr<SmallVector<Value>> values =
          decomposeFusedOp(rewriter, op, why);
      if (failed(values)) {
        if (!quiet)
          op.emitWarning() << "fuel.fused " << op.getInfo().name
                           << " left fused: " << why;
        continue;
      }
      rewriter.replaceOp(op, *values);
    }
    eraseUnusedRecipes();
  }

  /// The recipes (`fuel.recipe`) no fused op names any more: their ops are
  /// decomposed, and the code that follows has no use for them.
  void eraseUnusedRecipes() {
    llvm::StringSet<> used;
    SmallVector<RecipeDefOp> recipes;
    getOperation()->walk([&](Operation *op) {
      if (auto fused = dyn_cast<FusedOp>(op)) {
        if (FlatSymbolRefAttr ref = fused.getRecipeAttr())
          used.insert(ref.getValue());
      } else if (auto recipe = dyn_cast<RecipeDefOp>(op)) {
        recipes.push_back(recipe);
      }
    });
    for (RecipeDefOp recipe : recipes)
      if (!used.contains(recipe.getSymName()))
        recipe.erase();
  }

  llvm::StringSet<> selected, kept;
};
} // namespace
