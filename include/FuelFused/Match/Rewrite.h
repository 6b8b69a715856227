//===- Rewrite.h - Replacing a match by the fused op ------------*- C++ -*-===//
//
// What fusion does once matchRecipe (Match.h) has found a fused op in linalg:
// build the op from the matched operands, make it compute what the matched
// ops computed, and erase what only they used. Like upstream's
// `linalg::fuseElementwiseOps`, these are rewrites on a RewriterBase, so a
// pass, a pattern or a transform op can drive them; each fails without
// changing the IR.
//
//===----------------------------------------------------------------------===//

#ifndef FUELFUSED_MATCH_REWRITE_H
#define FUELFUSED_MATCH_REWRITE_H

#include "FuelFused/IR/FuelOps.h"
#include "FuelFused/Match/Match.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>
#include <string>

namespace mlir {
namespace fuel {

/// Replaces the result of `rootOp` (a linalg op, or a reshape of one) that
/// `match` found `info` computing: the fused op is built before `rootOp` (its
/// operands without the size-1 dims a frontend added, or transposed into the
/// op's layout), a result held permuted is transposed back, and the matched
/// ops and what only they used are erased. Fails, changing nothing and
/// setting `why`, when an intermediate value of the match has another user or
/// the matched operands do not make a valid op.
FailureOr<FusedOp> replaceMatchedResult(RewriterBase &rewriter,
                                        Operation *rootOp,
                                        const FusedOpInfo &info,
                                        const RecipeMatch &match,
                                        std::string &why);

/// Replaces `aggregate` (an op upstream defines by its decomposition, such
/// as linalg.softmax) by the fused op `match` found `info` computing in that
/// decomposition, which the caller built between `prev` (or the start of the
/// block when null) and `aggregate`; erases `aggregate`, what of the
/// decomposition is unused then, and the operands only `aggregate` used.
/// Fails, changing nothing and setting `why`, when the match holds its
/// result permuted or its operands do not make a valid op.
FailureOr<FusedOp> replaceMatchedAggregate(RewriterBase &rewriter,
                                           Operation *aggregate,
                                           Operation *prev,
                                           const FusedOpInfo &info,
                                           const RecipeMatch &match,
                                           std::string &why);

/// The loops `scalar` (a value in the body of `op`) depends on, in order:
/// those of the inputs it reads and of the linalg.index ops it uses; none if
/// it reads the accumulator (std::nullopt).
std::optional<SmallVector<unsigned>> getLoopsOfScalar(linalg::GenericOp op,
                                                      Value scalar);

/// Replaces `scalar`, in the body of `op`, that matchRecipeInBody found
/// `info` computing over `loops`: the fused op (of type `type`) becomes a new
/// input of `op`, read through `readMap` where `scalar` was, and the body
/// ops, inputs and outside ops only the match used are erased. Fails,
/// changing nothing and setting `why`, when an intermediate value of the
/// match has another user or the operands do not make a valid op.
FailureOr<FusedOp> replaceMatchInBody(RewriterBase &rewriter,
                                      linalg::GenericOp op, Value scalar,
                                      AffineMap readMap, Type type,
                                      const FusedOpInfo &info,
                                      const RecipeMatch &match,
                                      std::string &why);

/// Erases the ops between `prev` (or the start of the block when null) and
/// `at`, last first: what a rewrite built there. With `onlyUnused`, only
/// those that nothing uses any more (fused ops aside).
void eraseBuiltBefore(RewriterBase &rewriter, Operation *prev, Operation *at,
                      bool onlyUnused);

} // namespace fuel
} // namespace mlir

#endif // FUELFUSED_MATCH_REWRITE_H
