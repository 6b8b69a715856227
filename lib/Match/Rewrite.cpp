//===- Rewrite.cpp - Replacing a match by the fused op --------------------===//
//
// Builds the fused op a match found and erases what it covers; see
// Rewrite.h.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Match/Rewrite.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::fuel;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

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

void mlir::fuel::eraseBuiltBefore(RewriterBase &rewriter, Operation *prev,
                                  Operation *at, bool onlyUnused) {
  SmallVector<Operation *> built;
  for (Operation *op = prev ? prev->getNextNode() : &at->getBlock()->front();
       op && op != at; op = op->getNextNode())
    built.push_back(op);
  for (Operation *op : llvm::reverse(built))
    if (!onlyUnused || (op->use_empty() && !isa<FusedOp>(op)))
      rewriter.eraseOp(op);
}

/// Builds the fused op for `m` before `at`; null (nothing created, `why`
/// set) if the matched operands and params do not make a valid op of type
/// `type`. The checks are the verifier's, run silently first: a decline is
/// not an error.
static FusedOp buildFused(RewriterBase &rewriter, Operation *at,
                          const FusedOpInfo &info, const RecipeMatch &m,
                          Type type, std::string &why) {
  MLIRContext *ctx = at->getContext();
  auto params = DictionaryAttr::get(ctx, m.params);
  if (failed(verifyParams(info, params, nullptr))) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "the params found (" << params << ") are outside the op's schema";
    why = text;
    return {};
  }
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
  SmallVector<Type> inferred;
  if (succeeded(inferFusedOpTypes(info, operands, params, nullptr, inferred)) &&
      inferred.size() == 1 &&
      FusedOp::isCompatibleReturnTypes(TypeRange(inferred), TypeRange(type))) {
    auto fused = FusedOp::create(rewriter, at->getLoc(),
                                 KindAttr::get(ctx, info.id), operands,
                                 m.params);
    if (fused->getNumResults() == 1 && fused->getResult(0).getType() == type)
      return fused;
    rewriter.eraseOp(fused);
  }
  eraseBuiltBefore(rewriter, prev, at, /*onlyUnused=*/false);
  why = "the matched operands do not fit the op";
  return {};
}

/// Erases the covered ops, users first, then what only they used (inits,
/// constants, sizes, input casts); everything else stays as it was.
static void eraseCovered(RewriterBase &rewriter, const RecipeMatch &m,
                         ArrayRef<Operation *> extraLeaves = {}) {
  SmallVector<Operation *> worklist(m.ops.begin(), m.ops.end());
  llvm::append_range(worklist, m.leafOps);
  llvm::append_range(worklist, extraLeaves);
  llvm::SmallPtrSet<Operation *, 32> covered(m.ops.begin(), m.ops.end());
  llvm::SmallPtrSet<Operation *, 32> erased;
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

std::optional<SmallVector<unsigned>>
mlir::fuel::getLoopsOfScalar(linalg::GenericOp g, Value scalar) {
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
      if (arg.getArgNumber() >= static_cast<unsigned>(g.getInputs().size()))
        return std::nullopt;
      AffineMap map =
          g.getMatchingIndexingMap(&g->getOpOperand(arg.getArgNumber()));
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

/// Whether `g` no longer reads what the match covers once `scalar` is
/// replaced: no path to its yield reaches a covered op but through `scalar`.
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
          arg.getArgNumber() < static_cast<unsigned>(g.getInputs().size()))
        if (Operation *def =
                g->getOpOperand(arg.getArgNumber()).get().getDefiningOp())
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
static void replaceScalarByInput(RewriterBase &rewriter, linalg::GenericOp g,
                                 Value scalar, Value value, AffineMap map,
                                 SmallVectorImpl<Operation *> &captured) {
  Block *body = g.getBody();
  unsigned inputs = static_cast<unsigned>(g.getInputs().size());
  llvm::SmallBitVector wasUsed(inputs);
  for (unsigned i = 0; i < inputs; ++i)
    wasUsed[i] = !body->getArgument(i).use_empty();
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  maps.insert(maps.begin() + inputs, map);
  rewriter.modifyOpInPlace(g, [&] {
    g.getInputsMutable().append(value);
    g.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
  });
  BlockArgument arg =
      body->insertArgument(inputs, scalar.getType(), scalar.getLoc());
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
  for (int i = inputs - 1; i >= 0; --i) {
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

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

FailureOr<FusedOp> mlir::fuel::replaceMatchedResult(RewriterBase &rewriter,
                                                    Operation *rootOp,
                                                    const FusedOpInfo &info,
                                                    const RecipeMatch &m,
                                                    std::string &why) {
  if (!isSelfContained(m, rootOp, nullptr)) {
    why = "an intermediate value has another user";
    return failure();
  }
  // A result the IR holds permuted: the op's own layout first.
  Value root = rootOp->getResult(0);
  Type type = root.getType();
  if (!m.outputPerm.empty()) {
    auto t = cast<RankedTensorType>(type);
    SmallVector<int64_t> shape(t.getRank());
    for (auto [i, p] : llvm::enumerate(m.outputPerm))
      shape[p] = t.getDimSize(i);
    type = t.clone(shape);
  }
  FusedOp fused = buildFused(rewriter, rootOp, info, m, type, why);
  if (!fused)
    return failure();
  Value result = fused->getResult(0);
  if (!m.outputPerm.empty()) {
    rewriter.setInsertionPointAfter(fused);
    result = transposed(rewriter, result, m.outputPerm);
  }
  rewriter.replaceAllUsesWith(root, result);
  eraseCovered(rewriter, m);
  return fused;
}

FailureOr<FusedOp> mlir::fuel::replaceMatchedAggregate(
    RewriterBase &rewriter, Operation *aggregate, Operation *prev,
    const FusedOpInfo &info, const RecipeMatch &m, std::string &why) {
  if (!m.outputPerm.empty()) {
    why = "the matched operands do not fit the op";
    return failure();
  }
  FusedOp fused = buildFused(rewriter, aggregate, info, m,
                             aggregate->getResult(0).getType(), why);
  if (!fused)
    return failure();
  rewriter.replaceAllUsesWith(aggregate->getResult(0), fused->getResult(0));
  SmallVector<Value> operands(aggregate->getOperands());
  rewriter.eraseOp(aggregate);
  // What the decomposition built is unused now, and so is the op's init (a
  // tensor.empty).
  eraseBuiltBefore(rewriter, prev, fused, /*onlyUnused=*/true);
  for (Value v : operands)
    if (Operation *def = v.getDefiningOp();
        def && def->use_empty() && isOpTriviallyDead(def))
      rewriter.eraseOp(def);
  return fused;
}

FailureOr<FusedOp> mlir::fuel::replaceMatchInBody(
    RewriterBase &rewriter, linalg::GenericOp g, Value scalar,
    AffineMap readMap, Type type, const FusedOpInfo &info,
    const RecipeMatch &m, std::string &why) {
  if (!isSelfContained(m, nullptr, g) || !stopsUsingCovered(m, g, scalar)) {
    why = "an intermediate value has another user";
    return failure();
  }
  FusedOp fused = buildFused(rewriter, g, info, m, type, why);
  if (!fused)
    return failure();
  SmallVector<Operation *> captured(m.leafOps.begin(), m.leafOps.end());
  replaceScalarByInput(rewriter, g, scalar, fused->getResult(0), readMap,
                       captured);
  eraseCovered(rewriter, m, ArrayRef<Operation *>(captured).drop_front(
                                m.leafOps.size()));
  return fused;
}
