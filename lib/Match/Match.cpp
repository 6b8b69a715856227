//===- Match.cpp - Matching recipes against linalg IR ---------------------===//
//
// The inverse of Instantiate.cpp: given a value, check that it is computed
// by an op's recipe and recover the op's inputs and params. The match walks
// the recipe from its output backwards, following values into the bodies of
// linalg ops (one scalar op per body or many, named or generic), checking
// iterators and indexing maps against the recipe's axes, and accepting the
// spellings of one formula frontends use: powers (1/x, sqrt, rsqrt, pow),
// wider intermediates, data movement and reshapes, constants in any form.
// Nothing is rewritten; the caller replaces what matched.
//
//===----------------------------------------------------------------------===//

#include "Matcher.h"

using namespace mlir;
using namespace mlir::fuel;
using namespace mlir::fuel::match;

std::string Matcher::where() const {
  if (!current)
    return "";
  std::string text = (" (at " + current->getName().getStringRef()).str();
  if (auto loc = dyn_cast<FileLineColLoc>(current->getLoc()))
    text += (", line " + Twine(loc.getLine()) + ":" + Twine(loc.getColumn()))
                .str();
  return text + ")";
}

FailureOr<Want> Matcher::normalize(Want w) {
  while (true) {
    const RecipeNode &n = recipe.nodes[w.node];
    if (n.op == RecipeOp::Sqrt || n.op == RecipeOp::Rsqrt) {
      if (w.quarters % 2 != 0)
        return failure();
      w = {n.operands[0],
           (n.op == RecipeOp::Sqrt ? 1 : -1) * w.quarters / 2};
      continue;
    }
    if (n.op == RecipeOp::Div) {
      const RecipeNode &num = recipe.nodes[n.operands[0]];
      if (num.op == RecipeOp::Const && num.constant == 1.0) {
        w = {n.operands[1], -w.quarters};
        continue;
      }
    }
    return w;
  }
}

bool Matcher::isCastToSkip(Operation *op) const {
  if (!isa<arith::ExtFOp, arith::TruncFOp>(op))
    return false;
  auto from = dyn_cast<FloatType>(op->getOperand(0).getType());
  auto to = dyn_cast<FloatType>(op->getResult(0).getType());
  return from && to && from.getWidth() >= minWidth &&
         to.getWidth() >= minWidth;
}

FailureOr<SmallVector<int64_t>>
Matcher::loopsOf(linalg::LinalgOp op, unsigned k, ArrayRef<int64_t> allDims,
                 ArrayRef<int64_t> reductionDims) {
  AffineMap outMap = op.getMatchingIndexingMap(initOperand(op, k));
  Type type = op->getResult(k).getType();
  int64_t rank = outMap.getNumResults();
  // A value may carry fewer dims than the recipe names when the others are
  // size 1 (a [1, H] batch collapsed to [H]): leave those out.
  SmallVector<int64_t> dims(allDims);
  if (rank < static_cast<int64_t>(dims.size()))
    dims = withoutUnitDims(dims);
  int64_t extra = rank - static_cast<int64_t>(dims.size());
  if (extra < 0)
    return failure();
  // Which result positions are size-1 dims the recipe does not name: a
  // keepdim value has the root's rank with its reduced dims kept as 1;
  // otherwise the leading size-1 dims.
  SmallVector<bool> skip(rank, false);
  if (extra > 0) {
    bool keepdim = rank == rootRank && llvm::is_sorted(dims);
    if (keepdim) {
      for (int64_t r = 0; r < rank; ++r)
        skip[r] = !llvm::is_contained(dims, r);
      // (Positions are the root's dims only where the root holds them in
      // the recipe's order: otherwise the size-1 dims are found by size.)
      for (int64_t r = 0; r < rank; ++r)
        if (skip[r] && !isUnitDim(type, r))
          keepdim = false;
    }
    if (!keepdim) {
      std::fill(skip.begin(), skip.end(), false);
      // The leading size-1 dims, unless a size-1 dim of the recipe would
      // then land on a position of another size: then the size-1 dims that
      // keep each of the recipe's dims on a position of its size (JAX's
      // [B, N, T, 1, S] scores for a batch of 1, the 1 a group of heads).
      auto fits = [&](ArrayRef<bool> skipped) {
        unsigned next = 0;
        for (int64_t r = 0; r < rank; ++r) {
          if (skipped[r])
            continue;
          int64_t d = dims[next++];
          if (d >= 0 && d < static_cast<int64_t>(unitDim.size()) &&
              unitDim[d] && !isUnitDim(type, r))
            return false;
        }
        return true;
      };
      int64_t left = extra;
      for (int64_t r = 0; r < rank && left > 0; ++r)
        if (isUnitDim(type, r)) {
          skip[r] = true;
          --left;
        }
      if (!fits(skip)) {
        std::fill(skip.begin(), skip.end(), false);
        left = extra;
        for (int64_t r = rank - 1; r >= 0 && left > 0; --r)
          if (isUnitDim(type, r)) {
            skip[r] = true;
            --left;
          }
      }
    }
    if (llvm::count(skip, true) != extra)
      return failure();
  }
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  SmallVector<int64_t> loops(op.getNumLoops(), kUnsetLoop);
  SmallVector<int64_t> ranges = staticLoopRanges(op);
  unsigned next = 0;
  for (int64_t r = 0; r < rank; ++r) {
    AffineExpr e = outMap.getResult(r);
    auto d = dyn_cast<AffineDimExpr>(e);
    if (skip[r]) {
      if (!isUnitDim(type, r))
        return failure();
      if (d)
        loops[d.getPosition()] = kUnitLoop;
      else if (!isa<AffineConstantExpr>(e))
        return failure();
      continue;
    }
    if (!d || loops[d.getPosition()] != kUnsetLoop ||
        iters[d.getPosition()] != utils::IteratorType::parallel)
      return failure();
    loops[d.getPosition()] = dims[next++];
  }
  // The reduction loops carry the reduction dims, in order; reduction
  // loops of one iteration beyond those (a size-1 dim reduced along) carry
  // none.
  size_t nextReduction = 0;
  int64_t spareUnit = static_cast<int64_t>(op.getNumReductionLoops()) -
                      static_cast<int64_t>(reductionDims.size());
  for (unsigned l = 0; l < loops.size(); ++l) {
    if (loops[l] != kUnsetLoop)
      continue;
    if (spareUnit > 0 && ranges[l] == 1 &&
        iters[l] == utils::IteratorType::reduction) {
      loops[l] = kUnitLoop;
      --spareUnit;
      continue;
    }
    if (nextReduction < reductionDims.size() &&
        iters[l] == utils::IteratorType::reduction) {
      loops[l] = reductionDims[nextReduction++];
      continue;
    }
    // A loop of one iteration the result does not name.
    if (ranges[l] != 1)
      return failure();
    loops[l] = kUnitLoop;
  }
  if (nextReduction != reductionDims.size())
    return failure();
  return loops;
}

LogicalResult
Matcher::withReductionLoops(const RecipeNode &n, linalg::LinalgOp op,
                            unsigned k, ArrayRef<int64_t> dims,
                            function_ref<LogicalResult(Body)> fn) {
  SmallVector<int64_t> red;
  for (RecipeAxis a : n.op == RecipeOp::Contract
                          ? ArrayRef<RecipeAxis>(n.over)
                          : ArrayRef<RecipeAxis>(n.index))
    llvm::append_range(red, axisDims[a]);
  if (op.getNumReductionLoops() < red.size())
    return failure();
  // Named convolutions order their reduction loops differently
  // (c, kh, kw for NCHW, kh, kw, c for NHWC): try each order.
  llvm::sort(red);
  do {
    FailureOr<SmallVector<int64_t>> loops = loopsOf(op, k, dims, red);
    if (failed(loops))
      continue;
    State before = st;
    if (succeeded(fn(Body{op, std::move(*loops)})))
      return success();
    st = std::move(before);
  } while (std::next_permutation(red.begin(), red.end()));
  return failure();
}

FailureOr<SmallVector<int64_t>> Matcher::operandDims(const Body &body,
                                                     unsigned i) {
  OpOperand *operand = inputOperand(body.op, i);
  AffineMap m = body.op.getMatchingIndexingMap(operand);
  Type type = operand->get().getType();
  SmallVector<int64_t> dims;
  for (unsigned r = 0; r < m.getNumResults(); ++r) {
    AffineExpr e = m.getResult(r);
    if (auto d = dyn_cast<AffineDimExpr>(e)) {
      int64_t loop = body.loops[d.getPosition()];
      if (loop == kUnitLoop) {
        if (!isUnitDim(type, r))
          return failure();
        continue;
      }
      dims.push_back(loop);
      continue;
    }
    // A size-1 dim kept by the frontend and read at 0.
    auto c = dyn_cast<AffineConstantExpr>(e);
    if (!c || c.getValue() != 0 || !isUnitDim(type, r))
      return failure();
  }
  return dims;
}

/// Whether an expand/collapse_shape only adds or drops size-1 dims.

LogicalResult Matcher::bindParam(StringRef name, FloatAttr value) {
  const ParamSpec *spec = info.getParam(name);
  double v = shortestDecimal(value);
  MLIRContext *ctx = value.getContext();
  Attribute attr;
  if (spec->kind == ParamKind::F64)
    attr = FloatAttr::get(Float64Type::get(ctx), v);
  else if (spec->kind == ParamKind::F32)
    attr = FloatAttr::get(Float32Type::get(ctx), v);
  else
    return fail("param '" + name + "' is not a float slot");
  auto it = st.params.find(name);
  if (it != st.params.end() && it->second != attr)
    return fail("param '" + name + "' has two different values");
  st.params[name] = attr;
  return success();
}


/// A constant for a message: at most 9 significant digits (all of an f32).
static std::string formatConstant(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", v);
  return text;
}

LogicalResult Matcher::matchConstantAttr(Want w, FloatAttr c) {
  const RecipeNode &n = recipe.nodes[w.node];
  double power = w.quarters / 4.0;
  double v = c.getValueAsDouble();
  switch (n.op) {
  case RecipeOp::Param:
    if (w.quarters != 4)
      return fail("param '" + n.param + "' is not used as it is");
    return bindParam(n.param, c);
  case RecipeOp::Const:
  case RecipeOp::Splat:
    if (!closeTo(v, std::pow(n.constant, power), toleranceOf(c.getType())))
      return !explain ? unexplained()
                      : fail("expected the constant " +
                  formatConstant(shortestDecimal(
                      FloatAttr::get(c.getType(), n.constant))) +
                  ", found " + formatConstant(shortestDecimal(c)));
    return success();
  case RecipeOp::DimSize:
    st.dimChecks.push_back({Value(), 0, axisDims[n.index].front(), v,
                            w.quarters, toleranceOf(c.getType())});
    return success();
  default:
    return fail("expected a scalar");
  }
}

LogicalResult Matcher::matchConstant(Want w, Value s, const Body *body) {
  const RecipeNode &n = recipe.nodes[w.node];
  if (FloatAttr c = constantValue(s, body))
    return matchConstantAttr(w, c);
  if (n.op != RecipeOp::DimSize || w.quarters != 4)
    return fail(n.op == RecipeOp::Param
                    ? "param '" + n.param + "' is not a constant"
                    : std::string("expected a constant"));
  // uitofp/sitofp(index_cast(tensor.dim(src, d))).
  Operation *toFp = s.getDefiningOp();
  if (!toFp || !isa<arith::UIToFPOp, arith::SIToFPOp>(toFp))
    return fail("expected the size of an axis");
  auto cast = toFp->getOperand(0).getDefiningOp<arith::IndexCastOp>();
  auto dimOp = cast ? cast.getIn().getDefiningOp<tensor::DimOp>()
                    : tensor::DimOp();
  std::optional<int64_t> index =
      dimOp ? dimOp.getConstantIndex() : std::optional<int64_t>();
  if (!index)
    return fail("expected the size of an axis");
  st.dimChecks.push_back(
      {dimOp.getSource(), *index, axisDims[n.index].front(), 0.0, 4, 0.0});
  return success();
}

LogicalResult Matcher::matchPair(Want a, Want b, Value x, Value y,
                                 const Body &body, bool commutative) {
  State before = st;
  if (succeeded(matchScalar(a, x, body)) && succeeded(matchScalar(b, y, body)))
    return success();
  if (!commutative)
    return failure();
  st = std::move(before);
  if (succeeded(matchScalar(a, y, body)) && succeeded(matchScalar(b, x, body)))
    return success();
  return failure();
}

LogicalResult Matcher::bindInput(unsigned index, Value v, unsigned rank) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type)
    return fail("an input is not a ranked tensor");
  // Inputs the frontend carries with extra size-1 dims (TOSA's rank-3
  // weights) are reshaped when fused; the dims that remain must be exactly
  // the non-unit ones.
  if (type.getRank() != rank &&
      llvm::count_if(type.getShape(), [](int64_t d) { return d != 1; }) !=
          static_cast<int64_t>(rank))
    return fail("an input has the wrong rank");
  auto it = st.inputs.find(index);
  if (it != st.inputs.end() &&
      (it->second != v || st.inputPerms.lookup(index) !=
                              SmallVector<int64_t>(pendingPerm)))
    return fail("an input is bound to two values");
  if (!pendingPerm.empty() && type.getRank() != static_cast<int64_t>(rank))
    return fail("an input in another layout has extra dims");
  st.inputs[index] = v;
  st.inputRanks[index] = rank;
  if (!pendingPerm.empty())
    st.inputPerms[index] = SmallVector<int64_t>(pendingPerm);
  return success();
}

std::optional<SmallVector<int64_t>>
Matcher::throughReshape(Operation *view, ArrayRef<int64_t> dims) {
  auto dst = cast<RankedTensorType>(view->getResult(0).getType());
  auto src = cast<RankedTensorType>(view->getOperand(0).getType());
  if (dst.getRank() != static_cast<int64_t>(dims.size()))
    return std::nullopt;
  SmallVector<int64_t> out;
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(view)) {
    // Source dim i holds the result dims of its group.
    for (const ReassociationIndices &group : expand.getReassociationIndices()) {
      SmallVector<int64_t> members;
      for (int64_t r : group)
        if (dst.getDimSize(r) != 1)
          members.push_back(dims[r]);
      if (members.empty()) {
        continue;
      }
      if (members.size() == 1) {
        out.push_back(members.front());
        continue;
      }
      for (size_t m = 0; m < members.size(); ++m)
        if (isGroup(members[m]) || (m && members[m] != members[m - 1] + 1))
          return std::nullopt;
      out.push_back(groupCode(members.front(), members.back()));
    }
    return out;
  }
  auto collapse = cast<tensor::CollapseShapeOp>(view);
  for (auto [p, group] : llvm::enumerate(collapse.getReassociationIndices())) {
    SmallVector<int64_t> nonUnit;
    for (int64_t r : group)
      if (src.getDimSize(r) != 1)
        nonUnit.push_back(r);
    if (nonUnit.size() <= 1) {
      if (!nonUnit.empty())
        out.push_back(dims[p]);
      continue;
    }
    if (!isGroup(dims[p]))
      return std::nullopt;
    auto [a, b] = groupRange(dims[p]);
    if (b - a + 1 != static_cast<int64_t>(nonUnit.size()))
      return std::nullopt;
    for (int64_t x = a; x <= b; ++x)
      out.push_back(x);
  }
  return out;
}

LogicalResult Matcher::matchTensor(Want want, Value v,
                                   std::optional<SmallVector<int64_t>> given) {
  FailureOr<Want> normal = normalize(want);
  if (failed(normal))
    return fail("no spelling of this power is known");
  Want w = *normal;
  const RecipeNode &n = recipe.nodes[w.node];
  if (!st.done.insert({w.node, w.quarters, v.getAsOpaquePointer()}).second) {
    if (n.op == RecipeOp::Input &&
        st.inputPerms.lookup(n.index) != SmallVector<int64_t>(pendingPerm))
      return fail("an input is read in two layouts");
    return success();
  }
  if (n.op == RecipeOp::Window)
    return fail("a window is read outside the body of a linalg op");
  unsigned layoutRank = layout(n).size();
  SmallVector<int64_t> vdims = given ? *given : layout(n);
  // Reshapes that only add or drop size-1 dims, and reshapes that merge or
  // split batch dims.
  SmallVector<Operation *> views;
  while (Operation *def = v.getDefiningOp()) {
    if (tensor::CollapseShapeOp flat = unitReshapePairSource(def);
        flat && !llvm::any_of(vdims, isGroup)) {
      views.append({def, flat});
      v = flat.getSrc();
      continue;
    }
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
      break;
    auto src = cast<RankedTensorType>(def->getOperand(0).getType());
    auto dst = cast<RankedTensorType>(def->getResult(0).getType());
    if (isUnitReshape(def) && !llvm::any_of(vdims, isGroup)) {
      if (n.op == RecipeOp::Input && dst.getRank() == layoutRank &&
          src.getRank() != layoutRank &&
          llvm::count_if(src.getShape(), [](int64_t d) { return d != 1; }) !=
              layoutRank)
        break;
      views.push_back(def);
      v = def->getOperand(0);
      continue;
    }
    std::optional<SmallVector<int64_t>> srcDims = throughReshape(def, vdims);
    if (!srcDims)
      break;
    // An input the frontend holds with dims merged (a matmul's [B * T, N]
    // result expanded to [B, T, N] for the op that reads it): the op reads
    // the expanded value.
    if (n.op == RecipeOp::Input && llvm::any_of(*srcDims, isGroup) &&
        !llvm::any_of(vdims, isGroup))
      break;
    vdims = std::move(*srcDims);
    views.push_back(def);
    v = def->getOperand(0);
  }
  if (n.op == RecipeOp::Input && llvm::any_of(vdims, isGroup))
    return fail("an input is read with merged dims");
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type)
    return fail("expected a ranked tensor");

  if (n.op == RecipeOp::Input) {
    if (w.quarters != 4)
      return fail("an input is used through a power");
    bool scaled = false;
    while (st.collectingFactor) {
      auto scale = v.getDefiningOp<linalg::LinalgOp>();
      std::optional<double> f =
          scale ? scaleFactorOf(scale) : std::optional<double>();
      if (!f)
        break;
      st.factor *= *f;
      st.ops.push_back(scale);
      scaled = true;
      v = withoutUnitReshapes(inputOperand(scale, 0)->get(), &st.ops);
    }
    // Views of the input itself go with it; views of a scaled value are
    // intermediates.
    llvm::append_range(scaled ? st.ops : st.leafOps, views);
    // Inputs computed in a wider type come through an extf.
    v = withoutCastGenerics(
        v, [](Operation *op) { return isa<arith::ExtFOp>(op); }, st.leafOps);
    if (failed(bindInput(n.index, v, layoutRank)))
      return failure();
    reach(w.node);
    return success();
  }
  llvm::append_range(st.ops, views);
  if (isScalarKind(n.op)) {
    DenseFPElementsAttr dense;
    if (matchPattern(v, m_Constant(&dense)) && dense.isSplat())
      return matchConstant(w, v.getDefiningOp()->getResult(0), nullptr);
    if (Operation *fill = fillOf(v)) {
      st.leafOps.push_back(fill);
      return matchConstant(w, fill->getOperand(0), nullptr);
    }
    // Constants computed by elementwise ops (TOSA's pow(2 / pi, 0.5)).
    if (FloatAttr c = constantTensorValue(v))
      return matchConstantAttr(w, c);
    return fail("expected a constant tensor");
  }
  // (A power of the count is taken in the body that computes it.)
  if (n.op == RecipeOp::CountKept && w.quarters == 4)
    return matchCountKept(w, v);
  if (!isa<FloatType>(type.getElementType()))
    return fail("expected a float value");

  if (n.op == RecipeOp::RotateHalf) {
    if (w.quarters != 4)
      return fail("rotate_half is used through a power");
    return matchRotateHalf(n, v);
  }

  // A value computed wider and cast (f16 results of f32 math): the cast
  // in a generic of its own.
  v = withoutCastGenerics(
      v, [&](Operation *op) { return isCastToSkip(op); }, st.ops);
  auto op = v.getDefiningOp<linalg::LinalgOp>();
  if (!op || isa<linalg::FillOp>(op) || !op.hasPureTensorSemantics() ||
      op->getNumResults() != numInits(op) || !op.getBlock())
    return fail("expected a linalg op");
  unsigned k = cast<OpResult>(v).getResultNumber();
  st.ops.push_back(op);
  llvm::SaveAndRestore<Operation *> at(current, op);
  // A copy onto the same dims and size-1 ones (StableHLO's broadcast_in_dim
  // of a reduction to its keepdim shape) holds its input's values.
  if (auto source = throughMove(op, k, vdims))
    return matchRead(w, source->first, std::move(source->second));
  // A value combined with the identity of the combining op (StableHLO's
  // max of a max reduction with a -inf splat): the value.
  if (op.getNumReductionLoops() == 0) {
    auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
    Operation *scalar =
        withoutScalarTensors(yield.getOperand(k)).getDefiningOp();
    FailureOr<SmallVector<int64_t>> loops = loopsOf(op, k, vdims, {});
    // (An op without reduction loops is not the reduction itself, even
    // where it combines as the reduction does.)
    bool reduces = n.op == RecipeOp::ReduceMax || n.op == RecipeOp::ReduceSum;
    if (scalar && scalar->getBlock() == op.getBlock() &&
        (reduces || !isOpKind(scalar, n.op)) && succeeded(loops)) {
      Body body{op, std::move(*loops)};
      if (std::optional<unsigned> i = identityOperand(scalar, &body))
        if (auto read = readInput(
                withoutScalarTensors(scalar->getOperand(*i)), body))
          return matchRead(w, read->first, read->second);
    }
  }
  // A reduction's value through a spelling matchScalar reads in a body of
  // its own: |sum(exp(x))|, a row max replaced by 0 where it is not finite.
  if ((n.op == RecipeOp::ReduceSum || n.op == RecipeOp::ReduceMax) &&
      w.quarters == 4 && op.getNumReductionLoops() == 0) {
    auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
    Value result = withoutScalarTensors(yield.getOperand(k));
    Operation *scalar = result.getDefiningOp();
    bool spelled =
        scalar && scalar->getBlock() == op.getBlock() &&
        ((n.op == RecipeOp::ReduceSum && isa<math::AbsFOp>(scalar) &&
          recipe.nodes[n.operands[0]].op == RecipeOp::Exp) ||
         (n.op == RecipeOp::ReduceMax && recipe.finiteMaxGuard &&
          isa<arith::SelectOp>(scalar)));
    if (spelled)
      if (FailureOr<SmallVector<int64_t>> loops = loopsOf(op, k, vdims, {});
          succeeded(loops))
        return matchScalar(w, result, Body{op, std::move(*loops)});
  }
  // scale * (a . b) as a contraction of scaled inputs (or of unscaled ones,
  // scale 1 when the frontend folded it elsewhere is not assumed: a factor
  // must be found).
  if (n.op == RecipeOp::Mul && w.quarters == 4 && !st.collectingFactor) {
    for (auto [c, p] : {std::pair(n.operands[0], n.operands[1]),
                        std::pair(n.operands[1], n.operands[0])}) {
      const RecipeNode &cn = recipe.nodes[c], &pn = recipe.nodes[p];
      if (cn.op != RecipeOp::Contract || pn.op != RecipeOp::Param)
        continue;
      auto type = dyn_cast<FloatType>(
          cast<ShapedType>(op->getResult(k).getType()).getElementType());
      if (!type)
        continue;
      if (succeeded(withReductionLoops(cn, op, k, vdims, [&](Body body) {
            reach(w.node);
            reach(c);
            st.collectingFactor = true;
            st.factor = 1.0;
            LogicalResult ok = matchReduction(cn, body, k);
            st.collectingFactor = false;
            if (failed(ok) || st.factor == 1.0)
              return failure();
            return bindParam(pn.param, FloatAttr::get(type, st.factor));
          })))
        return success();
    }
  }
  // a + sum(...) as a reduction that starts from a (a bias broadcast into a
  // matmul's or a convolution's init).
  if (n.op == RecipeOp::Add && w.quarters == 4) {
    for (auto [p, q] : {std::pair(n.operands[0], n.operands[1]),
                        std::pair(n.operands[1], n.operands[0])}) {
      const RecipeNode &pn = recipe.nodes[p];
      if (pn.op != RecipeOp::ReduceSum && pn.op != RecipeOp::Contract)
        continue;
      if (succeeded(withReductionLoops(pn, op, k, vdims, [&](Body body) {
            reach(w.node);
            reach(p);
            return matchReduction(pn, body, k, q);
          })))
        return success();
    }
  }
  bool isReduction = w.quarters == 4 && (n.op == RecipeOp::ReduceSum ||
                                         n.op == RecipeOp::ReduceMax ||
                                         n.op == RecipeOp::Contract);
  if (isReduction) {
    bool loopsFound = false;
    LogicalResult matched =
        withReductionLoops(n, op, k, vdims, [&](Body body) {
          loopsFound = true;
          reach(w.node);
          return matchReduction(n, body, k);
        });
    if (!loopsFound) {
      if (!explain)
        return unexplained();
      std::string found;
      llvm::raw_string_ostream os(found);
      llvm::interleaveComma(op.getIteratorTypesArray(), os,
                            [&](utils::IteratorType t) {
                              os << utils::stringifyIteratorType(t);
                            });
      return fail("wrong iterators: expected " + stringifyRecipeOp(n.op) +
                  " over the recipe's axes, found [" + found + "]");
    }
    return matched;
  }
  FailureOr<SmallVector<int64_t>> loops = loopsOf(op, k, vdims, {});
  if (failed(loops))
    return fail("unexpected indexing maps");
  Body body{op, std::move(*loops)};
  auto yield = cast<linalg::YieldOp>(body.block()->getTerminator());
  return matchScalar(w, yield.getOperand(k), body);
}

std::optional<std::pair<Value, SmallVector<int64_t>>>
Matcher::throughMove(linalg::LinalgOp op, unsigned k, ArrayRef<int64_t> dims) {
  if (!isDataMovement(op))
    return std::nullopt;
  FailureOr<SmallVector<int64_t>> loops = loopsOf(op, k, dims, {});
  if (failed(loops))
    return std::nullopt;
  FailureOr<SmallVector<int64_t>> inner =
      operandDims(Body{op, std::move(*loops)}, 0);
  if (failed(inner))
    return std::nullopt;
  return std::pair(inputOperand(op, 0)->get(), std::move(*inner));
}

LogicalResult Matcher::matchRead(Want w, Value t, SmallVector<int64_t> dims) {
  const RecipeNode &n = recipe.nodes[w.node];
  // Broadcasts and transposes written as ops of their own (StableHLO's
  // broadcast_in_dim, linalg.broadcast): read through them.
  SmallVector<Operation *> moves;
  // (An input the frontend transposed before reshaping away its size-1
  // dims is read through the transpose, even where the dims it is read on
  // look like the recipe's: JAX's q for a batch matmul of its heads.)
  auto transposedInput = [&](Value v) {
    if (n.op != RecipeOp::Input || dims.size() == layout(n).size())
      return false;
    auto move = withoutUnitReshapes(v).getDefiningOp<linalg::LinalgOp>();
    return move && isPermutationCopy(move);
  };
  while (!sameDims(dims, layout(n)) || transposedInput(t) ||
         (st.collectingFactor && n.op == RecipeOp::Input &&
          t.getDefiningOp<linalg::LinalgOp>() &&
          scaleFactorOf(t.getDefiningOp<linalg::LinalgOp>()))) {
    if (st.collectingFactor && n.op == RecipeOp::Input)
      if (auto scale = t.getDefiningOp<linalg::LinalgOp>())
        if (std::optional<double> f = scaleFactorOf(scale)) {
          // What lies between the scale and the reader is intermediate.
          llvm::append_range(st.ops, moves);
          moves.clear();
          st.factor *= *f;
          st.ops.push_back(scale);
          t = inputOperand(scale, 0)->get();
          continue;
        }
    // Reshapes that only add or drop size-1 dims, or merge batch dims.
    if (tensor::CollapseShapeOp flat =
            unitReshapePairSource(t.getDefiningOp());
        flat && !llvm::any_of(dims, isGroup)) {
      moves.append({t.getDefiningOp(), flat});
      t = flat.getSrc();
      continue;
    }
    if (auto *view = t.getDefiningOp();
        view && isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(view)) {
      if (isUnitReshape(view) && !llvm::any_of(dims, isGroup)) {
        moves.push_back(view);
        t = view->getOperand(0);
        continue;
      }
      if (std::optional<SmallVector<int64_t>> srcDims =
              throughReshape(view, dims)) {
        dims = std::move(*srcDims);
        moves.push_back(view);
        t = view->getOperand(0);
        continue;
      }
    }
    auto move = t.getDefiningOp<linalg::LinalgOp>();
    // What an operand read off the recipe's axes is, for the report.
    auto offAxes = [&](const Twine &how) {
      if (!explain)
        return unexplained();
      std::string type;
      llvm::raw_string_ostream os(type);
      os << t.getType();
      return fail("an operand is not on the recipe's axes: a " + type +
                  " (" + stringifyRecipeOp(n.op) + " of the recipe) " + how);
    };
    if (!move || !isDataMovement(move)) {
      if (llvm::any_of(dims, isGroup))
        return offAxes("read with merged dims");
      SmallVector<int64_t> want = layout(n);
      // An input read without some of the recipe's size-1 dims (a batch of
      // 1 collapsed away for a batch matmul) that it holds itself: its
      // size-1 positions carry them.
      if (n.op == RecipeOp::Input && dims.size() < want.size())
        if (std::optional<SmallVector<int64_t>> full =
                withUnitDimsOf(t.getType(), dims, want))
          dims = std::move(*full);
      bool computed = n.op != RecipeOp::Input &&
                      n.op != RecipeOp::RotateHalf && !isScalarKind(n.op);
      // A computed value may hold the recipe's size-1 dims elsewhere, or
      // not at all (a batch of 1 collapsed away for a batch matmul).
      SmallVector<int64_t> have = withoutUnitDims(dims),
                           wantNonUnit = withoutUnitDims(want);
      if (!std::is_permutation(dims.begin(), dims.end(), want.begin(),
                               want.end()) &&
          (!computed ||
           !std::is_permutation(have.begin(), have.end(),
                                wantNonUnit.begin(), wantNonUnit.end())))
        return offAxes(dims.size() == want.size()
                           ? "read on other axes"
                           : ("read on " + Twine(dims.size()) +
                              " axes where the recipe's value has " +
                              Twine(want.size()))
                                 .str());
      // A value computed in another layout (an NHWC convolution transposed
      // back to NCHW): the op computing it says on which loops.
      if (computed) {
        llvm::append_range(st.ops, moves);
        return matchTensor(w, t, dims);
      }
      // An input the frontend holds in another layout (a weight constant in
      // FHWC order): the fused op reads it transposed.
      auto type = dyn_cast<RankedTensorType>(t.getType());
      if (n.op != RecipeOp::Input || !type ||
          type.getRank() != static_cast<int64_t>(dims.size()))
        return offAxes("read transposed");
      SmallVector<int64_t> perm;
      for (int64_t d : want)
        perm.push_back(llvm::find(dims, d) - dims.begin());
      llvm::append_range(st.leafOps, moves);
      SmallVector<int64_t> saved = std::exchange(pendingPerm, perm);
      LogicalResult bound = matchTensor(w, t, want);
      pendingPerm = std::move(saved);
      return bound;
    }
    auto source = throughMove(move, cast<OpResult>(t).getResultNumber(), dims);
    if (!source)
      return offAxes("copied by an op that moves it off them");
    dims = std::move(source->second);
    moves.push_back(move);
    t = source->first;
  }
  // On the recipe's axes already, maybe through copies that only move
  // size-1 dims: the value they copy is the one read.
  while (auto move = t.getDefiningOp<linalg::LinalgOp>()) {
    if (!isUnitDimMove(move))
      break;
    auto source = throughMove(move, cast<OpResult>(t).getResultNumber(), dims);
    if (!source || !sameDims(source->second, layout(n)))
      break;
    dims = std::move(source->second);
    moves.push_back(move);
    t = source->first;
  }
  llvm::append_range(n.op == RecipeOp::Input ? st.leafOps : st.ops, moves);
  return matchTensor(w, t, dims);
}
