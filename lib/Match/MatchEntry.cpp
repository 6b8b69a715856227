//===- MatchEntry.cpp - Matching recipes: entry points --------------------===//
//
// What surrounds the walk of Match.cpp: the concrete dims a match starts
// from (the root's layout, a channels-last permutation of it, the loops of
// a body), the checks made once every recipe value is found (axis sizes,
// the causal mask's alignment, the guards), the structures tried per op
// (one per choice of bool and enum params and optional operands), and the
// public entry points matchRecipe and matchRecipeInBody.
//
//===----------------------------------------------------------------------===//

#include "Matcher.h"

#include <mutex>

using namespace mlir;
using namespace mlir::fuel;
using namespace mlir::fuel::match;

LogicalResult Matcher::match(Value root, linalg::GenericOp inBody,
                             RecipeMatch &out, std::string &w,
                             int64_t batchRank, ArrayRef<int64_t> rootPerm,
                             ArrayRef<unsigned> bodyLoops) {
  why = &w;
  if (recipe.outputs.size() != 1)
    return fail("multi-output recipes are not matched");
  const RecipeNode &outNode = recipe.nodes[recipe.outputs.front()];
  // In a body, the value lives on the op's iteration space, which its
  // (identity) output map names, or on the loops given.
  auto rootType = dyn_cast<RankedTensorType>(
      inBody ? inBody->getResult(0).getType() : root.getType());
  if (inBody && !bodyLoops.empty()) {
    SmallVector<int64_t> ranges = staticLoopRanges(inBody), shape;
    for (unsigned l : bodyLoops)
      shape.push_back(ranges[l]);
    rootType = RankedTensorType::get(shape, root.getType());
  }
  if (!rootType)
    return fail("not a ranked tensor");
  auto elementType =
      dyn_cast<FloatType>(inBody ? root.getType() : rootType.getElementType());
  if (!elementType)
    return fail("not a float value");
  minWidth = elementType.getWidth();
  rootRank = rootType.getRank();
  // Concrete dims: the batch takes what the output's named axes leave.
  int64_t named = llvm::count_if(outNode.axes,
                                 [](RecipeAxis a) { return a != kBatchAxis; });
  bool hasBatch = llvm::is_contained(outNode.axes, kBatchAxis);
  int64_t batch = rootType.getRank() - named;
  if (batch < 0 || (!hasBatch && batch != 0))
    return fail("the value's rank does not fit the recipe");
  if (!hasBatch)
    batch = batchRank;
  axisDims.assign(recipe.axisNames.size(), {});
  unsigned next = 0;
  for (int64_t i = 0; i < batch; ++i)
    axisDims[kBatchAxis].push_back(next++);
  for (unsigned a = 1; a < recipe.axisNames.size(); ++a)
    axisDims[a].push_back(next++);
  // The concrete dims the root carries, in its order (the output's layout,
  // or a permutation of it: a channels-last result).
  SmallVector<int64_t> rootDims = layout(outNode);
  if (!rootPerm.empty()) {
    if (inBody || rootPerm.size() != rootDims.size())
      return fail("the value's rank does not fit the recipe");
    SmallVector<int64_t> permuted;
    for (int64_t p : rootPerm)
      permuted.push_back(rootDims[p]);
    rootDims = std::move(permuted);
  }
  // Which of them have size 1 (dims the root does not carry are not known
  // to).
  unitDim.assign(next, false);
  for (auto [i, d] : llvm::enumerate(rootDims))
    unitDim[d] = rootType.getDimSize(i) == 1;
  if (inBody) {
    FailureOr<SmallVector<int64_t>> loops;
    if (bodyLoops.empty()) {
      loops = loopsOf(inBody, 0, layout(outNode), {});
    } else {
      // The given loops carry the value's dims; the others none (a read
      // that moves along them is not part of the value).
      loops = SmallVector<int64_t>(inBody.getNumLoops(), kUnitLoop);
      for (auto [l, d] : llvm::zip(bodyLoops, rootDims))
        (*loops)[l] = d;
    }
    if (failed(loops))
      return fail("unexpected indexing maps");
    if (failed(matchScalar({recipe.outputs.front()}, root,
                           Body{inBody, std::move(*loops)})))
      return failure();
  } else if (failed(matchTensor({recipe.outputs.front()}, root,
                                rootPerm.empty()
                                    ? std::optional<SmallVector<int64_t>>()
                                    : rootDims))) {
    return failure();
  }
  // Every input and every axis size must be bound consistently.
  for (unsigned i = 0; i < info.operands.size(); ++i)
    if (!info.operands[i].optional && !st.inputs.count(i))
      return failMatch("operand '" + info.operands[i].name + "' is not used");
  for (const DimCheck &c : st.dimChecks) {
    // The axis size: find an input that carries the dim.
    bool ok = false;
    for (const RecipeNode &n : recipe.nodes) {
      if (n.op != RecipeOp::Input)
        continue;
      Value in = st.inputs.lookup(n.index);
      SmallVector<int64_t> d = layout(n);
      auto pos = llvm::find(d, c.dim);
      if (pos == d.end())
        continue;
      int64_t p = pos - d.begin();
      if (c.src) {
        ok |= c.src == in && c.index == p;
        continue;
      }
      auto inType = cast<RankedTensorType>(in.getType());
      if (inType.getRank() != static_cast<int64_t>(d.size()))
        continue;
      int64_t size = inType.getDimSize(p);
      ok |= !ShapedType::isDynamic(size) &&
            closeTo(c.value, std::pow(static_cast<double>(size),
                                      c.quarters / 4.0),
                    c.tolerance);
    }
    if (!ok)
      return failMatch("an axis size does not match the inputs");
  }
  // A causal mask's offset is Sk - Sq (bottom-right alignment): the
  // frontend's top-left mask (offset 0) is the same when Sq == Sk.
  for (const auto &[qDim, kDim, offset] : st.causal) {
    // Sk - Sq as the inputs give it: static sizes, or their tensor.dim.
    Linear want;
    bool haveQ = false, haveK = false;
    for (const RecipeNode &r : recipe.nodes) {
      if (r.op != RecipeOp::Input)
        continue;
      Value in = st.inputs.lookup(r.index);
      auto type = cast<ShapedType>(in.getType());
      SmallVector<int64_t> d = layout(r);
      if (type.getRank() != static_cast<int64_t>(d.size()))
        continue;
      for (auto [pos, dim] : llvm::enumerate(d)) {
        bool isQ = dim == qDim && !haveQ, isK = dim == kDim && !haveK;
        if (!isQ && !isK)
          continue;
        int64_t sign = isK ? 1 : -1;
        if (type.isDynamicDim(pos))
          want.sym[{in.getAsOpaquePointer(), static_cast<int64_t>(pos)}] +=
              sign;
        else
          want.c += sign * type.getDimSize(pos);
        (isQ ? haveQ : haveK) = true;
      }
    }
    std::map<std::pair<const void *, int64_t>, int64_t> got;
    for (auto [d, k] : offset.sym)
      if (k)
        got[d] = k;
    if (!haveQ || !haveK || want.c != offset.c || want.sym != got)
      return failMatch("the causal mask is not aligned to the bottom right");
  }
  // A guard must test the scores (up to reshapes of size-1 dims).
  for (auto [node, value] : st.guards) {
    bool tested = false;
    for (auto [n, q, v] : st.done)
      tested |= n == node && q == 4 &&
                withoutUnitReshapes(Value::getFromOpaquePointer(v)) ==
                    withoutUnitReshapes(value);
    if (!tested)
      return failMatch("a guard tests a value other than the scores");
  }
  // A loss that ignores no target: the ignore index is one the targets
  // cannot hold, and a mean divides by their number.
  if (recipe.noIgnoredTargets)
    for (const RecipeNode &g : recipe.nodes) {
      if (g.op != RecipeOp::Gather)
        continue;
      Value targets = st.inputs.lookup(recipe.nodes[g.operands[1]].index);
      auto type = cast<RankedTensorType>(targets.getType());
      auto element = dyn_cast<IntegerType>(type.getElementType());
      if (!element || element.getWidth() >= 64)
        return failMatch("no target is ignored, but the targets are 64-bit: "
                         "no ignore index lies outside their values");
      if (st.countConstant &&
          (!type.hasStaticShape() ||
           static_cast<double>(type.getNumElements()) != *st.countConstant))
        return failMatch("the mean divides by another number than that of "
                         "the targets");
      if (failed(bindIntElement(
              g.param, 0, -(int64_t(1) << (element.getWidth() - 1)) - 1)))
        return failure();
      break;
    }
  for (unsigned i = 0; i < info.operands.size(); ++i) {
    out.inputs.push_back(st.inputs.lookup(i));
    out.inputRanks.push_back(st.inputRanks.lookup(i));
  }
  for (auto &p : st.params)
    out.params.push_back(NamedAttribute(
        StringAttr::get(root.getContext(), p.getKey()), p.getValue()));
  // Integer pairs (a window's stride and padding); defaults are left out.
  for (auto &p : st.intParams) {
    SmallVector<int64_t> values;
    for (std::optional<int64_t> v : p.getValue()) {
      if (!v)
        return failMatch("param '" + p.getKey() + "' is not recovered");
      values.push_back(*v);
    }
    MLIRContext *ctx = root.getContext();
    const ParamSpec *spec = info.getParam(p.getKey());
    Attribute attr =
        spec && spec->kind == ParamKind::I64 && values.size() == 1
            ? Attribute(IntegerAttr::get(IntegerType::get(ctx, 64), values[0]))
            : Attribute(DenseI64ArrayAttr::get(ctx, values));
    if (spec && spec->hasDefault() && spec->getDefault(ctx) == attr)
      continue;
    out.params.push_back(
        NamedAttribute(StringAttr::get(ctx, p.getKey()), attr));
  }
  for (unsigned i = 0; i < info.operands.size(); ++i)
    out.inputPerms.push_back(st.inputPerms.lookup(i));
  out.outputPerm.assign(rootPerm.begin(), rootPerm.end());
  llvm::SetVector<Operation *> unique(st.ops.begin(), st.ops.end());
  out.ops.assign(unique.begin(), unique.end());
  llvm::SetVector<Operation *> leaves;
  for (Operation *op : st.leafOps)
    if (!unique.contains(op))
      leaves.insert(op);
  out.leafOps.assign(leaves.begin(), leaves.end());
  return success();
}

namespace {
/// What matching builds from an op's registry entry alone, kept for the
/// process: the variants of each op and the recipe of each variant (and of
/// each value-changing form). Building them again for every candidate at
/// every root was most of fusion's time. Entries are never removed (ops,
/// static or registered, are never unregistered).
struct RecipeCache {
  std::mutex mutex;
  std::map<uint32_t, SmallVector<MatchableRecipe>> variants;
  std::map<std::tuple<uint32_t, RecipeFn, size_t>, std::unique_ptr<Recipe>>
      recipes;
};

RecipeCache &getRecipeCache() {
  static RecipeCache cache;
  return cache;
}
} // namespace

/// Whether `v` is a tensor of rank 4.
static bool rootRank4(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getRank() == 4;
}

static SmallVector<MatchableRecipe>
computeMatchableRecipes(const FusedOpInfo &info) {
  SmallVector<MatchableRecipe> variants;
  if (!info.hasRecipe)
    return variants;
  RecipeBuilder probe(info, DictionaryAttr());
  lookupRecipe(info)(probe);
  if (probe.readsIntParams() && !probe.readsOnlyChoiceParams())
    return variants;
  // One structure per combination of the choice params (bools, enums) the
  // recipe reads and the optional operands it asks about.
  SmallVector<std::pair<std::string, SmallVector<int64_t>>> choices;
  for (const std::string &name : probe.choiceParamsRead()) {
    const ParamSpec *spec = info.getParam(name);
    if (spec->kind == ParamKind::Reduction)
      choices.push_back({name,
                         {static_cast<int64_t>(Reduction::Mean),
                          static_cast<int64_t>(Reduction::Sum),
                          static_cast<int64_t>(Reduction::None)}});
    else
      choices.push_back({name, {0, 1}});
  }
  SmallVector<std::string> optional(probe.optionalOperandsRead());
  size_t count = size_t(1) << optional.size();
  for (auto &c : choices)
    count *= c.second.size();
  if (count > 16)
    return variants;
  for (size_t code = 0; code < count; ++code) {
    MatchableRecipe variant;
    size_t rest = code;
    for (auto &[name, values] : choices) {
      variant.choices.push_back({name, values[rest % values.size()]});
      rest /= values.size();
    }
    for (const std::string &name : optional) {
      if (rest & 1)
        variant.present.push_back(name);
      rest >>= 1;
    }
    variants.push_back(std::move(variant));
  }
  return variants;
}

SmallVector<MatchableRecipe>
mlir::fuel::getMatchableRecipes(const FusedOpInfo &info) {
  RecipeCache &cache = getRecipeCache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  auto it = cache.variants.find(info.id);
  if (it == cache.variants.end())
    it = cache.variants.emplace(info.id, computeMatchableRecipes(info)).first;
  return it->second;
}

/// The attribute of a choice param's value.
static Attribute choiceAttr(MLIRContext *ctx, const ParamSpec &spec,
                            int64_t value) {
  if (spec.kind == ParamKind::Reduction)
    return ReductionAttr::get(ctx, static_cast<Reduction>(value));
  return BoolAttr::get(ctx, value != 0);
}

/// Matches the recipe `recipeFn` builds for `info`'s op (its own, or a
/// value-changing form of it) at `root`; `best` and `bestWhy` keep the
/// nearest miss.
static FailureOr<RecipeMatch>
matchRecipeFn(const FusedOpInfo &info, RecipeFn recipeFn,
              ArrayRef<MatchableRecipe> variants, Value root,
              linalg::GenericOp inBody, ArrayRef<unsigned> bodyLoops,
              bool explain, unsigned &best, std::string &bestWhy) {
  MLIRContext *ctx = root.getContext();
  for (auto [index, variant] : llvm::enumerate(variants)) {
    auto getFlags = [&, &variant = variant] {
      SmallVector<NamedAttribute> flags;
      for (auto [name, value] : variant.choices)
        flags.push_back(NamedAttribute(
            StringAttr::get(ctx, name),
            choiceAttr(ctx, *info.getParam(name), value)));
      return flags;
    };
    const Recipe *built;
    {
      RecipeCache &cache = getRecipeCache();
      std::lock_guard<std::mutex> lock(cache.mutex);
      std::unique_ptr<Recipe> &slot =
          cache.recipes[std::make_tuple(info.id, recipeFn, index)];
      if (!slot) {
        RecipeBuilder rb(info, DictionaryAttr::get(ctx, getFlags()));
        rb.assumePresent(variant.present);
        recipeFn(rb);
        slot = std::make_unique<Recipe>(rb.take());
      }
      built = slot.get();
    }
    const Recipe &recipe = *built;
    if (!recipe.unsupported.empty())
      continue;
    // An output without the batch axis (a loss summed over it): the batch
    // rank is not the root's; try each.
    const RecipeNode &outNode = recipe.nodes[recipe.outputs.front()];
    bool batchElsewhere =
        !llvm::is_contained(outNode.axes, kBatchAxis) &&
        llvm::any_of(recipe.nodes, [](const RecipeNode &n) {
          return llvm::is_contained(n.axes, kBatchAxis);
        });
    // A fixed-rank output (an image's [N, C, H, W]) may also be computed
    // channels-last (NHWC): then the fused op's result is transposed.
    SmallVector<SmallVector<int64_t>> perms = {{}};
    if (!inBody && !llvm::is_contained(outNode.axes, kBatchAxis) &&
        outNode.axes.size() >= 3) {
      SmallVector<int64_t> channelsLast = {0};
      for (int64_t i = 2, e = outNode.axes.size(); i < e; ++i)
        channelsLast.push_back(i);
      channelsLast.push_back(1);
      perms.push_back(channelsLast);
    }
    // Attention's [B, H, S, D] output may be held sequence-first,
    // [B, S, H, D] (JAX's layout): then the fused op's result is
    // transposed.
    if (!inBody && llvm::is_contained(outNode.axes, kBatchAxis) &&
        outNode.axes.size() == 3 && rootRank4(root) &&
        llvm::any_of(recipe.nodes, [](const RecipeNode &n) {
          return n.op == RecipeOp::Contract;
        }))
      perms.push_back({0, 2, 1, 3});
    RecipeMatch result;
    std::string w;
    LogicalResult matched = failure();
    unsigned numReached = 0;
    for (ArrayRef<int64_t> perm : perms) {
      for (int64_t rank = 0; rank <= (batchElsewhere ? 4 : 0); ++rank) {
        Matcher m(info, recipe, explain);
        RecipeMatch attempt;
        std::string attemptWhy;
        matched = m.match(root, inBody, attempt, attemptWhy, rank, perm,
                          bodyLoops);
        // Ties go to the first attempt (the layout itself).
        if (w.empty() || m.numReached() > numReached) {
          numReached = m.numReached();
          w = attemptWhy;
        }
        if (succeeded(matched)) {
          result = std::move(attempt);
          break;
        }
      }
      if (succeeded(matched))
        break;
    }
    unsigned reached =
        numReached >= 3 ? 100 * numReached / recipe.nodes.size() : 0;
    if (succeeded(matched)) {
      // The choices that differ from their defaults are params of the op.
      for (NamedAttribute flag : getFlags()) {
        const ParamSpec *spec = info.getParam(flag.getName());
        Attribute byDefault = spec->hasDefault() ? spec->getDefault(ctx)
                                                 : BoolAttr::get(ctx, false);
        if (flag.getValue() != byDefault)
          result.params.push_back(flag);
      }
      return result;
    }
    if (reached >= best) {
      best = reached;
      bestWhy = w;
    }
  }
  return failure();
}

static FailureOr<RecipeMatch> matchAt(const FusedOpInfo &info, Value root,
                                      linalg::GenericOp inBody,
                                      ArrayRef<unsigned> bodyLoops,
                                      const MatchOptions &options,
                                      std::string &why, unsigned *progress) {
  SmallVector<MatchableRecipe> variants = getMatchableRecipes(info);
  if (variants.empty()) {
    why = info.hasRecipe ? "the recipe's structure depends on params"
                      : "the op has no recipe";
    return failure();
  }
  unsigned best = 0;
  std::string bestWhy;
  FailureOr<RecipeMatch> result =
      matchRecipeFn(info, lookupRecipe(info), variants, root, inBody,
                    bodyLoops, options.explain, best, bestWhy);
  // The forms that round otherwise than the op's definition: fused when
  // asked, named in the report when not (neither asked nor reported, they
  // cannot change the outcome and are not tried).
  for (const ValueChangingForm &form : getValueChangingForms()) {
    if (succeeded(result) || form.op != info.name ||
        (!options.valueChanging && !options.explain))
      continue;
    unsigned formBest = 0;
    std::string formWhy;
    result = matchRecipeFn(info, form.recipe, variants, root, inBody,
                           bodyLoops, options.explain, formBest, formWhy);
    if (succeeded(result) && !options.valueChanging) {
      best = 100;
      bestWhy = ("computes it with " + form.description +
                 ", which rounds otherwise than its definition (fused "
                 "under --fuel-fuse=value-changing)")
                    .str();
      result = failure();
      break;
    }
    // A form that got further than the definition: its reason, named.
    if (failed(result) && formBest > best) {
      best = formBest;
      bestWhy = (formWhy + " (as " + form.description + ")").str();
    }
  }
  if (succeeded(result)) {
    if (progress)
      *progress = 100;
    return result;
  }
  if (progress)
    *progress = best;
  why = bestWhy.empty() ? std::string("the recipe does not apply") : bestWhy;
  return failure();
}

FailureOr<RecipeMatch> mlir::fuel::matchRecipe(const FusedOpInfo &info,
                                               Value root, std::string &why,
                                               unsigned *progress,
                                               const MatchOptions &options) {
  return matchAt(info, root, {}, {}, options, why, progress);
}

FailureOr<RecipeMatch>
mlir::fuel::matchRecipeInBody(const FusedOpInfo &info, Value scalar,
                              linalg::GenericOp op, ArrayRef<unsigned> loops,
                              std::string &why, unsigned *progress,
                              const MatchOptions &options) {
  if (numInits(op) != 1 || !op.hasPureTensorSemantics()) {
    why = "the op is not a generic on tensors with one result";
    return failure();
  }
  bool whole = loops.size() == op.getNumLoops() &&
               op.getNumReductionLoops() == 0 &&
               op.getMatchingIndexingMap(initOperand(op, 0)).isIdentity();
  SmallVector<int64_t> ranges = staticLoopRanges(op);
  if (!whole && llvm::any_of(loops, [&](unsigned l) {
        return ShapedType::isDynamic(ranges[l]);
      })) {
    why = "a value inside a body over part of its loops needs static sizes";
    return failure();
  }
  return matchAt(info, scalar, op, whole ? ArrayRef<unsigned>() : loops,
                 options, why, progress);
}
