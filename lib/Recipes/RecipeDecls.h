//===- RecipeDecls.h - Declarations of the recipe functions -----*- C++ -*-===//

#ifndef FUEL_LIB_RECIPES_RECIPEDECLS_H
#define FUEL_LIB_RECIPES_RECIPEDECLS_H

#include "FuelFused/Recipes/Recipe.h"

namespace mlir::fuel::recipes {
#define GET_FUSED_OP_RECIPE_DECLS
#include "FusedOpRecipes.inc"

// Value-changing forms (Recipe.cpp's table).
void layerNormLastDimOneSweep(RecipeBuilder &r);
void layerNormLastDimOneSweepClamped(RecipeBuilder &r);
void softmaxCrossEntropyLogSumExp(RecipeBuilder &r);
} // namespace mlir::fuel::recipes

#endif // FUEL_LIB_RECIPES_RECIPEDECLS_H
