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

/// Integer tensor `v` sign-extended to i64 (JAX's i32 class targets for an
/// op that takes i64 ones), or `v` itself.
static Value signExtendedToI64(OpBuilder &b, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  auto element = dyn_cast<IntegerType>(type.getElementType());
  if (!element || element.getWidth() >= 64)
    return v;
  Location loc = v.getLoc();
  Type i64 = b.getI64Type();
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, v);
  Value init = tensor::EmptyOp::create(b, loc, sizes, i64);
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iters(type.getRank(),
                                         utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{v}, ValueRange{init},
             ArrayRef<AffineMap>{id, id}, iters,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value wide = arith::ExtSIOp::create(nb, l, i64, args[0]);
               linalg::YieldOp::create(nb, l, wide);
             })
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

/// The static sizes of `t` other than 1, in order; nullopt for a dynamic
/// size.
static std::optional<SmallVector<int64_t>> nonUnitSizes(Type t) {
  auto type = dyn_cast<RankedTensorType>(t);
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  SmallVector<int64_t> sizes;
  for (int64_t d : type.getShape())
    if (d != 1)
      sizes.push_back(d);
  return sizes;
}

/// Whether static tensor types `a` and `b` hold the same elements in the
/// same order, their shapes differing only in size-1 dims (a result the IR
/// holds with its size-1 dims elsewhere: StableHLO's [1, 1, 4, 16, 16] for
/// the op's [1, 4, 16, 1, 16]).
static bool sameUpToUnitDims(Type a, Type b) {
  std::optional<SmallVector<int64_t>> x = nonUnitSizes(a), y = nonUnitSizes(b);
  return x && y && *x == *y &&
         cast<ShapedType>(a).getElementType() ==
             cast<ShapedType>(b).getElementType();
}

/// `v` reshaped to `type` (same up to size-1 dims): its size-1 dims dropped
/// and those of `type` added; `v` itself when it has that type.
static Value reshapedTo(OpBuilder &b, Value v, Type type) {
  if (v.getType() == type)
    return v;
  auto target = cast<RankedTensorType>(type);
  Value flat = dropUnitDims(b, v, nonUnitSizes(v.getType())->size());
  auto flatType = cast<RankedTensorType>(flat.getType());
  if (flatType == target)
    return flat;
  // Each non-unit dim of `type` with the size-1 dims before it (and the
  // last one with those after it).
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  for (int64_t d = 0; d < target.getRank(); ++d) {
    pending.push_back(d);
    if (target.getDimSize(d) == 1)
      continue;
    groups.push_back(pending);
    pending.clear();
  }
  if (groups.empty()) {
    // A single element: collapse everything, expand into `type`.
    Value scalar = tensor::CollapseShapeOp::create(
        b, v.getLoc(), RankedTensorType::get({}, target.getElementType()),
        flat, SmallVector<ReassociationIndices>{});
    return tensor::ExpandShapeOp::create(b, v.getLoc(), target, scalar,
                                         SmallVector<ReassociationIndices>{});
  }
  llvm::append_range(groups.back(), pending);
  return tensor::ExpandShapeOp::create(b, v.getLoc(), target, flat, groups);
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
  for (auto [spec, input, rank, perm] :
       llvm::zip(info.operands, m.inputs, m.inputRanks, m.inputPerms)) {
    if (!input)
      continue;
    Value operand = perm.empty() ? dropUnitDims(rewriter, input, rank)
                                 : transposed(rewriter, input, perm);
    if (spec.element == ElementKind::Int64)
      operand = signExtendedToI64(rewriter, operand);
    operands.push_back(operand);
  }
  SmallVector<Type> inferred;
  if (succeeded(inferFusedOpTypes(info, operands, params, nullptr, inferred)) &&
      inferred.size() == 1 &&
      (FusedOp::isCompatibleReturnTypes(TypeRange(inferred), TypeRange(type)) ||
       sameUpToUnitDims(inferred[0], type))) {
    auto fused = FusedOp::create(rewriter, at->getLoc(),
                                 KindAttr::get(ctx, info.id), operands,
                                 m.params);
    if (fused->getNumResults() == 1 &&
        (fused->getResult(0).getType() == type ||
         sameUpToUnitDims(fused->getResult(0).getType(), type)))
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
  rewriter.setInsertionPointAfter(fused);
  Value result = reshapedTo(rewriter, fused->getResult(0), type);
  if (!m.outputPerm.empty())
    result = transposed(rewriter, result, m.outputPerm);
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
  rewriter.setInsertionPointAfter(fused);
  rewriter.replaceAllUsesWith(
      aggregate->getResult(0),
      reshapedTo(rewriter, fused->getResult(0),
                 aggregate->getResult(0).getType()));
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
  rewriter.setInsertionPointAfter(fused);
  replaceScalarByInput(rewriter, g, scalar,
                       reshapedTo(rewriter, fused->getResult(0), type), readMap,
                       captured);
  eraseCovered(rewriter, m, ArrayRef<Operation *>(captured).drop_front(
                                m.leafOps.size()));
  return fused;
}
