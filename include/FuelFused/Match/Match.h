//===- Match.h - Finding fused ops in linalg --------------------*- C++ -*-===//
//
// Matching a fused op's recipe against linalg on tensors: in the normal form
// that decomposition produces and in the spellings frontends use for the
// same formula. Rewrite.h replaces what a match covers by the fused op.
//
//===----------------------------------------------------------------------===//

#ifndef FUELFUSED_MATCH_MATCH_H
#define FUELFUSED_MATCH_MATCH_H

#include "mlir/IR/Builders.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir {
namespace linalg {
class GenericOp;
} // namespace linalg

namespace fuel {

struct FusedOpInfo;

/// What matching a recipe recovers: the op's operands (null for an absent
/// optional one; an operand may carry extra size-1 dims, which the caller
/// drops), its params, the ops that compute the result (their values must
/// have no other users), and the ops that only prepare an input (an extf, a
/// unit reshape: they go away only if nothing else uses them).
struct RecipeMatch {
  SmallVector<Value> inputs;
  /// The rank each input has in the recipe.
  SmallVector<int64_t> inputRanks;
  /// Per input: empty, or the permutation that puts it in the op's layout
  /// (operand = linalg.transpose(input, permutation); a weight a frontend
  /// holds in another order).
  SmallVector<SmallVector<int64_t>> inputPerms;
  /// Empty, or the permutation the matched value holds the op's result in
  /// (value = linalg.transpose(result, permutation); a channels-last
  /// convolution).
  SmallVector<int64_t> outputPerm;
  SmallVector<NamedAttribute> params;
  SmallVector<Operation *> ops;
  SmallVector<Operation *> leafOps;
};

/// The structures fusion searches for an op: one per combination of the
/// choice params (bools, enums) its recipe reads and the optional operands
/// it asks about (none: one structure). Empty when the op has no recipe or
/// its recipe's structure depends on an integer param.
struct MatchableRecipe {
  /// Choice params and their values (a bool as 0/1, an enum's value).
  SmallVector<std::pair<std::string, int64_t>> choices;
  /// The optional operands present in this structure.
  SmallVector<std::string> present;
};
SmallVector<MatchableRecipe> getMatchableRecipes(const FusedOpInfo &info);

/// What fusion accepts beyond an op's recipe and its spellings.
struct MatchOptions {
  /// The value-changing forms of the op (getValueChangingForms): equal to
  /// its recipe in exact arithmetic, rounded otherwise.
  bool valueChanging = false;
  /// Say why a match failed (the deepest rule, where and what it found, for
  /// the near-miss report). Without, `why` only says that it failed: the
  /// messages print types and maps, a good part of a failed match's time.
  bool explain = true;
};

/// Checks that `root` is computed by `info`'s recipe, in the normal form that
/// decomposition produces or in a frontend's spelling of the same formula,
/// and recovers the inputs and params (bool params by trying the recipe
/// once per value); sets `why` (the deepest rule that failed) when not.
/// `progress`, if given, receives how near a miss was: the percentage of the
/// recipe's values the match found a computation of (0 below 3 values).
FailureOr<RecipeMatch> matchRecipe(const FusedOpInfo &info, Value root,
                                   std::string &why,
                                   unsigned *progress = nullptr,
                                   const MatchOptions &options = {});

/// As matchRecipe, for a scalar computed inside the body of a generic `op`
/// (a frontend that fuses elementwise ops puts a norm's last steps and the
/// multiply by its weight in one body, or a RoPE in the body of the matmul
/// that reads it): the value the recipe computes is the tensor of `scalar`
/// over `loops`, the loops of `op` it depends on (all of an elementwise op's
/// loops, or a part of a reduction's), of static sizes when not all.
FailureOr<RecipeMatch> matchRecipeInBody(const FusedOpInfo &info,
                                         Value scalar, linalg::GenericOp op,
                                         ArrayRef<unsigned> loops,
                                         std::string &why,
                                         unsigned *progress = nullptr,
                                         const MatchOptions &options = {});

} // namespace fuel
} // namespace mlir

#endif // FUELFUSED_MATCH_MATCH_H
