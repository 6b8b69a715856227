//===- MatchTargets.cpp - Patterns read through class targets -------------===//
//
// What the matcher reads through a classification loss's integer targets:
// the comparison with the ignore index (maybe negated, maybe computed in an
// op of its own), the gather of each row's target class (a tensor.extract
// at the loops and the target, made safe for ignored rows), the mask that
// zeroes ignored rows, and the count of the rows kept. A gather may read
// the values flattened (TOSA's), at an offset computed in integer tensors
// (row * V + target), which is evaluated element by element.
//
//===----------------------------------------------------------------------===//

#include "Matcher.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::fuel;
using namespace mlir::fuel::match;

LogicalResult Matcher::matchKept(Value c, const Body &body, unsigned targets,
                                 StringRef param, bool &keptWhenTrue,
                                 unsigned depth) {
  if (depth > 8)
    return fail("expected a comparison of the targets with the ignore index");
  // A bool computed by an elementwise op of its own.
  if (std::optional<std::pair<Value, SmallVector<int64_t>>> read =
          readInput(c, body)) {
    Value t = withoutUnitReshapes(read->first, &st.leafOps);
    std::optional<std::pair<Value, Body>> producer =
        elementwiseProducer(t, read->second);
    if (!producer)
      return fail("expected a comparison of the targets with the ignore index");
    st.leafOps.push_back(producer->second.op);
    return matchKept(producer->first, producer->second, targets, param,
                     keptWhenTrue, depth + 1);
  }
  Operation *op = c.getDefiningOp();
  if (!op || op->getBlock() != body.block())
    return fail("expected a comparison of the targets with the ignore index");
  // not(x), as x xor true.
  if (auto x = dyn_cast<arith::XOrIOp>(op)) {
    for (auto [a, b] : {std::pair(x.getLhs(), x.getRhs()),
                        std::pair(x.getRhs(), x.getLhs())}) {
      std::optional<int64_t> k = intConstant(b, &body);
      if (!k || (*k & 1) == 0)
        continue;
      if (failed(matchKept(a, body, targets, param, keptWhenTrue, depth + 1)))
        return failure();
      keptWhenTrue = !keptWhenTrue;
      return success();
    }
    return fail("expected a comparison of the targets with the ignore index");
  }
  auto cmp = dyn_cast<arith::CmpIOp>(op);
  if (!cmp || (cmp.getPredicate() != arith::CmpIPredicate::ne &&
               cmp.getPredicate() != arith::CmpIPredicate::eq))
    return fail("expected a comparison of the targets with the ignore index");
  for (auto [t, k] : {std::pair(cmp.getLhs(), cmp.getRhs()),
                      std::pair(cmp.getRhs(), cmp.getLhs())}) {
    std::optional<int64_t> ignore = intConstant(k, &body);
    std::optional<std::pair<Value, SmallVector<int64_t>>> read =
        readInput(t, body);
    if (!ignore || !read)
      continue;
    if (failed(bindIntElement(param, 0, *ignore)) ||
        failed(matchRead({targets}, read->first, read->second)))
      return failure();
    keptWhenTrue = cmp.getPredicate() == arith::CmpIPredicate::ne;
    return success();
  }
  return fail("expected a comparison of the targets with the ignore index");
}

FailureOr<std::pair<Value, Value>>
Matcher::keptAndIgnored(arith::SelectOp sel, const Body &body,
                        unsigned targets, StringRef param) {
  bool keptWhenTrue = true;
  if (failed(matchKept(sel.getCondition(), body, targets, param,
                       keptWhenTrue)))
    return failure();
  if (keptWhenTrue)
    return std::pair(sel.getTrueValue(), sel.getFalseValue());
  return std::pair(sel.getFalseValue(), sel.getTrueValue());
}

LogicalResult Matcher::matchMaskIgnored(Want w, Operation *op,
                                        const Body &body) {
  const RecipeNode &n = recipe.nodes[w.node];
  auto sel = dyn_cast<arith::SelectOp>(op);
  if (!sel)
    return fail("expected the ignored targets masked by a select");
  FailureOr<std::pair<Value, Value>> arms =
      keptAndIgnored(sel, body, n.operands[1], n.param);
  if (failed(arms))
    return failure();
  auto [kept, ignored] = *arms;
  FloatAttr zero = constantValue(ignored, &body);
  if (!zero || !zero.getValue().isZero())
    return fail("ignored targets are not masked with 0");
  reach(w.node);
  return matchScalar({n.operands[0]}, kept, body);
}

LogicalResult Matcher::matchTargetIndex(const RecipeNode &n, Value index,
                                        const Body &body, unsigned depth) {
  if (depth > 8)
    return fail("expected the target as the gathered index");
  // No target is ignored: any integer function of it that is the identity
  // on the classes (a wrap of negative targets, a clamp).
  if (recipe.noIgnoredTargets)
    return matchTargetFunction(n, index, body, /*isGuard=*/false);
  index = withoutIntCasts(index);
  // The target read as it is.
  if (std::optional<std::pair<Value, SmallVector<int64_t>>> read =
          readInput(index, body)) {
    Value t = withoutUnitReshapes(read->first, &st.leafOps);
    // A safe index computed by an op of its own.
    if (std::optional<std::pair<Value, Body>> producer =
            elementwiseProducer(t, read->second)) {
      if (isa_and_nonnull<arith::SelectOp>(
              producer->first.getDefiningOp())) {
        st.leafOps.push_back(producer->second.op);
        return matchTargetIndex(n, producer->first, producer->second,
                                depth + 1);
      }
    }
    return matchRead({n.operands[1]}, read->first, read->second);
  }
  // select(kept, target, c): ignored rows read class c.
  auto sel = index.getDefiningOp<arith::SelectOp>();
  if (!sel || sel->getBlock() != body.block())
    return fail("expected the target as the gathered index");
  FailureOr<std::pair<Value, Value>> arms =
      keptAndIgnored(sel, body, n.operands[1], n.param);
  if (failed(arms))
    return failure();
  auto [target, other] = *arms;
  if (!intConstant(withoutIntCasts(other), &body))
    return fail("ignored targets read a class that is not a constant");
  return matchTargetIndex(n, target, body, depth + 1);
}

LogicalResult Matcher::matchGather(Want w, Operation *op, const Body &body) {
  const RecipeNode &n = recipe.nodes[w.node];
  // select(valid(t), x[t], NaN): a guard that holds on every class.
  if (auto sel = dyn_cast<arith::SelectOp>(op);
      sel && recipe.noIgnoredTargets) {
    FloatAttr nan = constantValue(sel.getFalseValue(), &body);
    if (!nan)
      if (auto read = readInput(sel.getFalseValue(), body)) {
        Value t = withoutUnitReshapes(read->first, &st.leafOps);
        if (auto move = t.getDefiningOp<linalg::LinalgOp>();
            move && isDataMovement(move) && numInputs(move) == 1) {
          st.leafOps.push_back(move);
          t = inputOperand(move, 0)->get();
        }
        DenseFPElementsAttr dense;
        if (matchPattern(t, m_Constant(&dense)) && dense.isSplat())
          nan = FloatAttr::get(dense.getElementType(),
                               dense.getSplatValue<APFloat>());
      }
    if (nan && nan.getValue().isNaN()) {
      if (failed(matchScalar(w, sel.getTrueValue(), body)))
        return failure();
      return matchTargetFunction(n, sel.getCondition(), body,
                                 /*isGuard=*/true);
    }
  }
  auto extract = dyn_cast<tensor::ExtractOp>(op);
  if (!extract)
    return fail("expected a gather of the target class (tensor.extract)");
  Value src = extract.getTensor();
  SmallVector<int64_t> want = layout(recipe.nodes[n.operands[0]]);
  auto type = cast<RankedTensorType>(src.getType());
  if (type.getRank() != static_cast<int64_t>(want.size()))
    return matchFlatGather(w, extract, body);
  unsigned classDim = axisDims[n.index].front();
  reach(w.node);
  for (auto [p, index] : llvm::enumerate(extract.getIndices())) {
    if (static_cast<unsigned>(want[p]) == classDim) {
      st.numClasses = type.getDimSize(p);
      if (failed(matchTargetIndex(n, index, body)))
        return failure();
      continue;
    }
    // Any other dim at its loop (or at 0 where it has size 1).
    auto loop = index.getDefiningOp<linalg::IndexOp>();
    if (loop && body.loops[loop.getDim()] == want[p])
      continue;
    if (getConstantIntValue(index) == 0 && type.getDimSize(p) == 1)
      continue;
    return fail("a gather reads a row other than its own");
  }
  return matchTensor({n.operands[0]}, src);
}

LogicalResult Matcher::matchCountKept(Want w, Value v) {
  const RecipeNode &n = recipe.nodes[w.node];
  // No target is ignored: the number of targets, a constant.
  if (recipe.noIgnoredTargets) {
    FloatAttr c = constantTensorValue(v);
    if (!c)
      return fail("expected the number of targets as a constant");
    st.countConstant = c.getValueAsDouble();
    reach(w.node);
    return success();
  }
  // The count cast to float in an op of its own.
  v = withoutUnitReshapes(v, &st.ops);
  if (auto cast = v.getDefiningOp<linalg::LinalgOp>()) {
    Operation *body = singleBodyOp(cast);
    if (body && isa<arith::SIToFPOp, arith::UIToFPOp>(body) &&
        numInputs(cast) == 1 && cast.getNumReductionLoops() == 0 &&
        body->getOperand(0) == cast.getBlock()->getArgument(0)) {
      st.ops.push_back(cast);
      v = withoutUnitReshapes(inputOperand(cast, 0)->get(), &st.ops);
    }
  }
  auto op = v.getDefiningOp<linalg::LinalgOp>();
  if (!op || !op.hasPureTensorSemantics() || op->getNumResults() != 1 ||
      !op.getBlock())
    return fail("expected a count of the kept targets");
  st.ops.push_back(op);
  return withReductionLoops(n, op, 0, {}, [&](Body body) -> LogicalResult {
    // Starts from 0.
    Value init = initOperand(op, 0)->get();
    Operation *fill = fillOf(init);
    std::optional<int64_t> start =
        fill ? intConstant(fill->getOperand(0), nullptr) : std::nullopt;
    FloatAttr startF = fill ? constantValue(fill->getOperand(0), nullptr)
                            : FloatAttr();
    if (!(start == 0 || (startF && startF.getValue().isZero())))
      return fail("a count does not start from 0");
    st.leafOps.push_back(fill);
    // acc + (kept ? 1 : 0).
    Block *block = body.block();
    Value out = block->getArgument(numInputs(op));
    Operation *add = cast<linalg::YieldOp>(block->getTerminator())
                         .getOperand(0)
                         .getDefiningOp();
    if (!add || !isa<arith::AddIOp, arith::AddFOp>(add) ||
        !llvm::is_contained(add->getOperands(), out))
      return fail("expected a count of the kept targets");
    Value one = add->getOperand(0) == out ? add->getOperand(1)
                                          : add->getOperand(0);
    // The summand computed by an op of its own.
    Body at = body;
    if (std::optional<std::pair<Value, SmallVector<int64_t>>> read =
            readInput(one, body)) {
      std::optional<std::pair<Value, Body>> producer = elementwiseProducer(
          withoutUnitReshapes(read->first, &st.ops), read->second);
      if (!producer)
        return fail("expected a count of the kept targets");
      st.ops.push_back(producer->second.op);
      one = producer->first;
      at = producer->second;
    }
    Operation *def = one.getDefiningOp();
    bool keptWhenTrue = true;
    Value c;
    if (def && isa<arith::ExtUIOp, arith::UIToFPOp>(def)) {
      c = def->getOperand(0);
    } else if (auto sel = dyn_cast_or_null<arith::SelectOp>(def)) {
      std::optional<int64_t> a = intConstant(sel.getTrueValue(), &at),
                             b = intConstant(sel.getFalseValue(), &at);
      FloatAttr fa = constantValue(sel.getTrueValue(), &at),
                fb = constantValue(sel.getFalseValue(), &at);
      bool oneZero = (a == 1 && b == 0) ||
                     (fa && fb && fa.getValueAsDouble() == 1.0 &&
                      fb.getValueAsDouble() == 0.0);
      bool zeroOne = (a == 0 && b == 1) ||
                     (fa && fb && fa.getValueAsDouble() == 0.0 &&
                      fb.getValueAsDouble() == 1.0);
      if (!oneZero && !zeroOne)
        return fail("expected a count of the kept targets");
      c = sel.getCondition();
      keptWhenTrue = oneZero;
    } else {
      return fail("expected a count of the kept targets");
    }
    bool condKept = true;
    if (failed(matchKept(c, at, n.operands[0], n.param, condKept)))
      return failure();
    if (condKept != keptWhenTrue)
      return fail("the count is of the ignored targets");
    reach(w.node);
    return success();
  });
}

/// The row-major strides of a static shape.
static std::optional<SmallVector<int64_t>> stridesOf(ShapedType type) {
  if (!type.hasStaticShape())
    return std::nullopt;
  SmallVector<int64_t> strides(type.getRank(), 1);
  for (int64_t d = type.getRank() - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * type.getDimSize(d + 1);
  return strides;
}

static void accumulate(FlatIndex &into, const FlatIndex &x,
                       int64_t factor) {
  for (auto [d, k] : x.coef)
    into.coef[d] += factor * k;
  into.c += factor * x.c;
  into.target += factor * x.target;
}

static FlatIndex constantIndex(int64_t c) {
  FlatIndex f;
  f.c = c;
  return f;
}

LogicalResult Matcher::matchFlatGather(Want w, tensor::ExtractOp extract,
                                       const Body &body) {
  const RecipeNode &n = recipe.nodes[w.node];
  SmallVector<int64_t> want = layout(recipe.nodes[n.operands[0]]);
  Value src = extract.getTensor();
  // The value on its own layout, under reshapes (which keep row-major
  // order).
  SmallVector<Operation *> views;
  Value base = src;
  while (Operation *def = base.getDefiningOp()) {
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
      break;
    views.push_back(def);
    base = def->getOperand(0);
  }
  auto baseType = cast<RankedTensorType>(base.getType());
  std::optional<SmallVector<int64_t>> srcStrides =
      stridesOf(cast<ShapedType>(src.getType()));
  std::optional<SmallVector<int64_t>> baseStrides = stridesOf(baseType);
  if (baseType.getRank() != static_cast<int64_t>(want.size()) ||
      !srcStrides || !baseStrides)
    return fail("a gather reads a tensor of another rank");
  SmallVector<FlatIndex> loopAt;
  for (int64_t loop : body.loops) {
    FlatIndex f;
    if (loop >= 0)
      f.coef[loop] = 1;
    loopAt.push_back(f);
  }
  FlatIndex offset;
  for (auto [p, index] : llvm::enumerate(extract.getIndices())) {
    std::optional<FlatIndex> v = evalFlat(index, body.op, loopAt, n, 0);
    if (!v)
      return fail("a gather's offset is not row * V + target");
    accumulate(offset, *v, (*srcStrides)[p]);
  }
  // row * V + target: each other dim at its loop, the class at the target.
  FlatIndex expected;
  unsigned classDim = axisDims[n.index].front();
  for (auto [q, dim] : llvm::enumerate(want)) {
    if (static_cast<unsigned>(dim) == classDim)
      expected.target = (*baseStrides)[q];
    else if (baseType.getDimSize(q) != 1)
      expected.coef[dim] = (*baseStrides)[q];
  }
  for (auto it = offset.coef.begin(); it != offset.coef.end();)
    it = it->second == 0 ? offset.coef.erase(it) : std::next(it);
  if (offset.coef != expected.coef || offset.c != 0 ||
      offset.target != expected.target)
    return fail("a gather's offset is not row * V + target");
  llvm::append_range(st.ops, views);
  return matchTensor({n.operands[0]}, base);
}

std::optional<FlatIndex>
Matcher::evalFlat(Value x, linalg::LinalgOp op, ArrayRef<FlatIndex> loopAt,
                  const RecipeNode &gather, unsigned depth) {
  if (depth > 32)
    return std::nullopt;
  if (std::optional<int64_t> c = intConstant(x, nullptr))
    return constantIndex(*c);
  Block *block = op.getBlock();
  if (auto arg = dyn_cast<BlockArgument>(x)) {
    if (arg.getOwner() != block || arg.getArgNumber() >= numInputs(op))
      return std::nullopt;
    OpOperand *operand = inputOperand(op, arg.getArgNumber());
    AffineMap map = op.getMatchingIndexingMap(operand);
    SmallVector<FlatIndex> at;
    for (AffineExpr e : map.getResults()) {
      if (auto d = dyn_cast<AffineDimExpr>(e))
        at.push_back(loopAt[d.getPosition()]);
      else if (auto k = dyn_cast<AffineConstantExpr>(e))
        at.push_back(constantIndex(k.getValue()));
      else
        return std::nullopt;
    }
    return evalFlatTensor(operand->get(), at, gather, depth + 1);
  }
  Operation *def = x.getDefiningOp();
  if (!def || def->getBlock() != block)
    return std::nullopt;
  if (auto index = dyn_cast<linalg::IndexOp>(def))
    return loopAt[index.getDim()];
  if (Value inner = withoutIntCasts(x); inner != x)
    return evalFlat(inner, op, loopAt, gather, depth + 1);
  if (isa<arith::AddIOp, arith::SubIOp, arith::MulIOp>(def)) {
    std::optional<FlatIndex> a =
        evalFlat(def->getOperand(0), op, loopAt, gather, depth + 1);
    std::optional<FlatIndex> b =
        a ? evalFlat(def->getOperand(1), op, loopAt, gather, depth + 1)
          : std::nullopt;
    if (!a || !b)
      return std::nullopt;
    if (isa<arith::MulIOp>(def)) {
      if (!a->isConstant() && !b->isConstant())
        return std::nullopt;
      FlatIndex product;
      if (a->isConstant())
        accumulate(product, *b, a->c);
      else
        accumulate(product, *a, b->c);
      return product;
    }
    accumulate(*a, *b, isa<arith::SubIOp>(def) ? -1 : 1);
    return a;
  }
  // The row's target (made safe for ignored rows): matched as the gather's
  // index, on the loops the positions name.
  Body body{op, {}};
  for (auto [l, at] : llvm::enumerate(loopAt)) {
    SmallVector<std::pair<int64_t, int64_t>> terms;
    for (auto [d, k] : at.coef)
      if (k)
        terms.push_back({d, k});
    if (terms.empty() && at.c == 0 && at.target == 0 &&
        staticLoopRanges(op)[l] == 1)
      body.loops.push_back(kUnitLoop);
    else if (terms.size() == 1 && terms[0].second == 1 && at.c == 0 &&
             at.target == 0)
      body.loops.push_back(terms[0].first);
    else
      return std::nullopt;
  }
  State before = st;
  if (succeeded(matchTargetIndex(gather, x, body))) {
    FlatIndex t;
    t.target = 1;
    return t;
  }
  st = std::move(before);
  return std::nullopt;
}

std::optional<FlatIndex>
Matcher::evalFlatTensor(Value t, ArrayRef<FlatIndex> at,
                        const RecipeNode &gather, unsigned depth) {
  if (depth > 32)
    return std::nullopt;
  auto type = cast<RankedTensorType>(t.getType());
  Operation *def = t.getDefiningOp();
  if (auto expand = dyn_cast_or_null<tensor::ExpandShapeOp>(def)) {
    // A source dim is the row-major combination of its group's indices.
    SmallVector<FlatIndex> srcAt;
    for (const ReassociationIndices &group :
         expand.getReassociationIndices()) {
      FlatIndex f;
      int64_t stride = 1;
      for (int64_t r : llvm::reverse(group)) {
        accumulate(f, at[r], stride);
        if (type.isDynamicDim(r))
          return std::nullopt;
        stride *= type.getDimSize(r);
      }
      srcAt.push_back(f);
    }
    st.leafOps.push_back(def);
    return evalFlatTensor(expand.getSrc(), srcAt, gather, depth + 1);
  }
  if (auto collapse = dyn_cast_or_null<tensor::CollapseShapeOp>(def)) {
    // Only groups with one dim of size other than 1 split back.
    auto srcType = collapse.getSrcType();
    SmallVector<FlatIndex> srcAt(srcType.getRank(), constantIndex(0));
    for (auto [p, group] :
         llvm::enumerate(collapse.getReassociationIndices())) {
      SmallVector<int64_t> nonUnit;
      for (int64_t r : group)
        if (srcType.getDimSize(r) != 1)
          nonUnit.push_back(r);
      if (nonUnit.size() > 1)
        return std::nullopt;
      srcAt[nonUnit.empty() ? group.front() : nonUnit.front()] = at[p];
    }
    st.leafOps.push_back(def);
    return evalFlatTensor(collapse.getSrc(), srcAt, gather, depth + 1);
  }
  DenseIntElementsAttr dense;
  if (matchPattern(t, m_Constant(&dense))) {
    if (dense.isSplat())
      return constantIndex(dense.getSplatValue<APInt>().getSExtValue());
    if (llvm::all_of(at, [](const FlatIndex &f) { return f.isConstant(); })) {
      SmallVector<uint64_t> index;
      for (const FlatIndex &f : at)
        index.push_back(f.c);
      if (!dense.getType().hasStaticShape())
        return std::nullopt;
      for (auto [i, d] : llvm::enumerate(dense.getType().getShape()))
        if (static_cast<int64_t>(index[i]) >= d)
          return std::nullopt;
      return constantIndex(
          dense.getValues<APInt>()[index].getSExtValue());
    }
    // An iota along its one dim of size other than 1.
    auto shape = dense.getType().getShape();
    if (llvm::count_if(shape, [](int64_t d) { return d != 1; }) != 1)
      return std::nullopt;
    int64_t dim = llvm::find_if(shape, [](int64_t d) { return d != 1; }) -
                  shape.begin();
    int64_t k = 0;
    for (APInt v : dense.getValues<APInt>())
      if (v.getSExtValue() != k++)
        return std::nullopt;
    return at[dim];
  }
  if (auto insert = dyn_cast_or_null<tensor::InsertSliceOp>(def)) {
    if (insert.getSourceType().getRank() != type.getRank() ||
        !insert.hasUnitStride())
      return std::nullopt;
    bool inside = true;
    SmallVector<FlatIndex> srcAt;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      std::optional<int64_t> offset =
          getConstantIntValue(insert.getMixedOffsets()[d]);
      std::optional<int64_t> size =
          getConstantIntValue(insert.getMixedSizes()[d]);
      if (!offset || !size)
        return std::nullopt;
      FlatIndex f = at[d];
      if (f.isConstant()) {
        inside &= *offset <= f.c && f.c < *offset + *size;
      } else if (*offset != 0 || *size != type.getDimSize(d)) {
        return std::nullopt;
      }
      f.c -= *offset;
      srcAt.push_back(f);
    }
    st.leafOps.push_back(def);
    return inside ? evalFlatTensor(insert.getSource(), srcAt, gather, depth + 1)
                  : evalFlatTensor(insert.getDest(), at, gather, depth + 1);
  }
  auto op = dyn_cast_or_null<linalg::LinalgOp>(def);
  if (!op || !op.hasPureTensorSemantics() || !op.getBlock())
    return std::nullopt;
  unsigned k = cast<OpResult>(t).getResultNumber();
  AffineMap outMap = op.getMatchingIndexingMap(initOperand(op, k));
  SmallVector<std::optional<FlatIndex>> loops(op.getNumLoops());
  for (auto [p, e] : llvm::enumerate(outMap.getResults())) {
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d)
      return std::nullopt;
    loops[d.getPosition()] = at[p];
  }
  SmallVector<int64_t> ranges = staticLoopRanges(op);
  std::optional<unsigned> reduction;
  for (unsigned l = 0; l < loops.size(); ++l) {
    if (loops[l])
      continue;
    if (op.getIteratorTypesArray()[l] != utils::IteratorType::reduction ||
        reduction || ShapedType::isDynamic(ranges[l]) || ranges[l] > 16)
      return std::nullopt;
    reduction = l;
  }
  Block *block = op.getBlock();
  Value yielded = cast<linalg::YieldOp>(block->getTerminator()).getOperand(k);
  st.leafOps.push_back(op);
  if (!reduction) {
    SmallVector<FlatIndex> loopAt;
    for (auto &l : loops)
      loopAt.push_back(*l);
    return evalFlat(yielded, op, loopAt, gather, depth + 1);
  }
  // A short sum from 0: unrolled.
  Value out = block->getArgument(numInputs(op) + k);
  auto add = yielded.getDefiningOp<arith::AddIOp>();
  Operation *fill = fillOf(initOperand(op, k)->get());
  if (!add || !llvm::is_contained(add->getOperands(), out) || !fill ||
      intConstant(fill->getOperand(0), nullptr) != 0)
    return std::nullopt;
  st.leafOps.push_back(fill);
  Value term = add.getLhs() == out ? add.getRhs() : add.getLhs();
  FlatIndex sum;
  for (int64_t v = 0; v < ranges[*reduction]; ++v) {
    loops[*reduction] = constantIndex(v);
    SmallVector<FlatIndex> loopAt;
    for (auto &l : loops)
      loopAt.push_back(*l);
    std::optional<FlatIndex> x = evalFlat(term, op, loopAt, gather, depth + 1);
    if (!x)
      return std::nullopt;
    accumulate(sum, *x, 1);
  }
  return sum;
}

//===----------------------------------------------------------------------===//
// Losses that ignore no target (JAX's)
//===----------------------------------------------------------------------===//

/// The most classes a target function is checked on, one by one.
static constexpr int64_t kMaxCheckedClasses = int64_t(1) << 20;

/// `v` as an integer of `width` bits holds it: bools 0 or 1, others
/// sign-extended.
static int64_t wrapTo(int64_t v, unsigned width) {
  if (width == 1)
    return v & 1;
  if (width >= 64)
    return v;
  uint64_t mask = (uint64_t(1) << width) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (u >> (width - 1))
    u |= ~mask;
  return static_cast<int64_t>(u);
}

/// The bits of `v` (of `width` bits) as an unsigned number.
static uint64_t unsignedOf(int64_t v, unsigned width) {
  if (width >= 64)
    return static_cast<uint64_t>(v);
  return static_cast<uint64_t>(v) & ((uint64_t(1) << width) - 1);
}

static unsigned widthOf(Type t) {
  if (isa<IndexType>(t))
    return 64;
  if (auto i = dyn_cast<IntegerType>(t))
    return i.getWidth();
  return 0;
}

std::optional<int64_t>
Matcher::evalTensorOfTarget(Value v, ArrayRef<int64_t> dims, int64_t t,
                            TargetLeaf &leaf, unsigned depth) {
  v = withoutUnitReshapes(v);
  auto type = dyn_cast<RankedTensorType>(v.getType());
  unsigned width = type ? widthOf(type.getElementType()) : 0;
  if (!width)
    return std::nullopt;
  DenseIntElementsAttr dense;
  if (matchPattern(v, m_Constant(&dense)) && dense.isSplat())
    return wrapTo(dense.getSplatValue<APInt>().getSExtValue(), width);
  if (Operation *fill = fillOf(v))
    if (std::optional<int64_t> c = intConstant(fill->getOperand(0), nullptr))
      return wrapTo(*c, width);
  // An op elementwise on the row, maybe reducing along size-1 loops
  // (StableHLO's all-reduction of a [N, 1, 1] mask).
  if (auto op = v.getDefiningOp<linalg::LinalgOp>();
      op && op.getBlock() && op.hasPureTensorSemantics()) {
    SmallVector<int64_t> ranges = staticLoopRanges(op);
    bool unitReductions = llvm::all_of(
        llvm::zip(op.getIteratorTypesArray(), ranges), [](auto it) {
          return std::get<0>(it) != utils::IteratorType::reduction ||
                 std::get<1>(it) == 1;
        });
    unsigned k = cast<OpResult>(v).getResultNumber();
    FailureOr<SmallVector<int64_t>> loops =
        unitReductions ? loopsOf(op, k, dims, {})
                       : FailureOr<SmallVector<int64_t>>(failure());
    if (succeeded(loops)) {
      leaf.ops.insert(op);
      auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
      return evalOfTarget(yield.getOperand(k), Body{op, std::move(*loops)},
                          t, leaf, depth + 1);
    }
  }
  // Anything else is the targets, read at the row's own dims.
  if (!leaf.tensor) {
    leaf.tensor = v;
    leaf.dims.assign(dims.begin(), dims.end());
  }
  if (leaf.tensor != v || leaf.dims != ArrayRef<int64_t>(dims))
    return std::nullopt;
  return wrapTo(t, width);
}

std::optional<int64_t> Matcher::evalOfTarget(Value x, const Body &body,
                                             int64_t t, TargetLeaf &leaf,
                                             unsigned depth) {
  if (depth > 32)
    return std::nullopt;
  unsigned width = widthOf(x.getType());
  if (!width)
    return std::nullopt;
  if (std::optional<std::pair<Value, SmallVector<int64_t>>> read =
          readInput(x, body))
    return evalTensorOfTarget(read->first, read->second, t, leaf, depth);
  // The init's element (a reduction's start).
  if (auto arg = dyn_cast<BlockArgument>(x);
      arg && arg.getOwner() == body.block()) {
    FailureOr<SmallVector<int64_t>> dims =
        operandDims(body, arg.getArgNumber());
    if (failed(dims))
      return std::nullopt;
    return evalTensorOfTarget(body.op->getOperand(arg.getArgNumber()), *dims,
                              t, leaf, depth);
  }
  APInt c;
  if (matchPattern(x, m_ConstantInt(&c)))
    return wrapTo(c.getSExtValue(), width);
  Operation *op = x.getDefiningOp();
  if (!op || op->getBlock() != body.block())
    return std::nullopt;
  // An element of a tensor read at the row's own loops (and at 0 where the
  // tensor has size 1).
  if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
    auto type = cast<RankedTensorType>(extract.getTensor().getType());
    SmallVector<int64_t> dims;
    for (auto [p, index] : llvm::enumerate(extract.getIndices())) {
      if (auto loop = index.getDefiningOp<linalg::IndexOp>()) {
        int64_t d = body.loops[loop.getDim()];
        if (d == kUnitLoop || d == kUnsetLoop)
          return std::nullopt;
        dims.push_back(d);
        continue;
      }
      if (getConstantIntValue(index) != 0 || type.getDimSize(p) != 1)
        return std::nullopt;
    }
    return evalTensorOfTarget(extract.getTensor(), dims, t, leaf, depth + 1);
  }
  auto operand = [&](unsigned i) {
    return evalOfTarget(op->getOperand(i), body, t, leaf, depth + 1);
  };
  auto operandWidth = [&](unsigned i) {
    return widthOf(op->getOperand(i).getType());
  };
  if (auto sel = dyn_cast<arith::SelectOp>(op)) {
    std::optional<int64_t> cond = operand(0);
    if (!cond)
      return std::nullopt;
    return *cond ? operand(1) : operand(2);
  }
  if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    std::optional<int64_t> a = operand(0), b = operand(1);
    if (!a || !b)
      return std::nullopt;
    unsigned w = operandWidth(0);
    uint64_t ua = unsignedOf(*a, w), ub = unsignedOf(*b, w);
    switch (cmp.getPredicate()) {
    case arith::CmpIPredicate::eq:
      return *a == *b;
    case arith::CmpIPredicate::ne:
      return *a != *b;
    case arith::CmpIPredicate::slt:
      return *a < *b;
    case arith::CmpIPredicate::sle:
      return *a <= *b;
    case arith::CmpIPredicate::sgt:
      return *a > *b;
    case arith::CmpIPredicate::sge:
      return *a >= *b;
    case arith::CmpIPredicate::ult:
      return ua < ub;
    case arith::CmpIPredicate::ule:
      return ua <= ub;
    case arith::CmpIPredicate::ugt:
      return ua > ub;
    case arith::CmpIPredicate::uge:
      return ua >= ub;
    }
    return std::nullopt;
  }
  if (isa<arith::IndexCastOp, arith::ExtSIOp, arith::TruncIOp>(op)) {
    std::optional<int64_t> a = operand(0);
    if (!a)
      return std::nullopt;
    // A bool sign-extends to -1.
    int64_t v = operandWidth(0) == 1 && *a ? -1 : *a;
    return wrapTo(v, width);
  }
  if (isa<arith::IndexCastUIOp, arith::ExtUIOp>(op)) {
    std::optional<int64_t> a = operand(0);
    if (!a)
      return std::nullopt;
    return wrapTo(static_cast<int64_t>(unsignedOf(*a, operandWidth(0))),
                  width);
  }
  if (op->getNumOperands() != 2 || op->getNumResults() != 1)
    return std::nullopt;
  std::optional<int64_t> a = operand(0), b = operand(1);
  if (!a || !b)
    return std::nullopt;
  uint64_t ua = unsignedOf(*a, width), ub = unsignedOf(*b, width);
  std::optional<int64_t> r =
      llvm::TypeSwitch<Operation *, std::optional<int64_t>>(op)
          .Case([&](arith::AddIOp) {
            return static_cast<int64_t>(uint64_t(*a) + uint64_t(*b));
          })
          .Case([&](arith::SubIOp) {
            return static_cast<int64_t>(uint64_t(*a) - uint64_t(*b));
          })
          .Case([&](arith::MulIOp) {
            return static_cast<int64_t>(uint64_t(*a) * uint64_t(*b));
          })
          .Case([&](arith::AndIOp) { return *a & *b; })
          .Case([&](arith::OrIOp) { return *a | *b; })
          .Case([&](arith::XOrIOp) { return *a ^ *b; })
          .Case([&](arith::MaxSIOp) { return std::max(*a, *b); })
          .Case([&](arith::MinSIOp) { return std::min(*a, *b); })
          .Case([&](arith::MaxUIOp) { return ua >= ub ? *a : *b; })
          .Case([&](arith::MinUIOp) { return ua <= ub ? *a : *b; })
          .Default([](Operation *) { return std::nullopt; });
  if (!r)
    return std::nullopt;
  return wrapTo(*r, width);
}

LogicalResult Matcher::matchTargetFunction(const RecipeNode &n, Value x,
                                           const Body &body, bool isGuard) {
  int64_t classes = st.numClasses;
  if (classes <= 0)
    return fail("the number of classes is not static");
  if (classes > kMaxCheckedClasses)
    return fail("too many classes to check the class read on each");
  TargetLeaf leaf;
  for (int64_t t = 0; t < classes; ++t) {
    std::optional<int64_t> v = evalOfTarget(x, body, t, leaf, 0);
    if (!v)
      return fail(isGuard ? "a guard of the class read is not integer "
                            "arithmetic on the target"
                          : "the class read is not integer arithmetic on "
                            "the target");
    if (isGuard ? *v == 0 : *v != t)
      return fail(isGuard ? "a guard of the class read fails on a valid class"
                          : "the class read is not the target on every class");
  }
  if (!leaf.tensor)
    return fail("the class read does not depend on the target");
  llvm::append_range(st.leafOps, leaf.ops);
  return matchRead({n.operands[1]}, leaf.tensor, leaf.dims);
}

bool Matcher::isFiniteTestOf(Value c, Value x, const Body &body,
                             SmallVectorImpl<Operation *> &ops) {
  // Where `v` (in `at`) reads its value: a tensor, or the value itself.
  auto source = [&](Value v, const Body &at) -> Value {
    if (auto read = readInput(v, at))
      return withoutUnitReshapes(read->first);
    return v;
  };
  Body at = body;
  if (std::optional<std::pair<Value, SmallVector<int64_t>>> read =
          readInput(c, body)) {
    std::optional<std::pair<Value, Body>> producer =
        elementwiseProducer(withoutUnitReshapes(read->first), read->second);
    if (!producer)
      return false;
    ops.push_back(producer->second.op);
    c = producer->first;
    at = producer->second;
  }
  auto cmp = c.getDefiningOp<arith::CmpFOp>();
  if (!cmp || cmp->getBlock() != at.block() ||
      (cmp.getPredicate() != arith::CmpFPredicate::ONE &&
       cmp.getPredicate() != arith::CmpFPredicate::OLT))
    return false;
  auto abs = cmp.getLhs().getDefiningOp<math::AbsFOp>();
  FloatAttr inf = constantValue(cmp.getRhs(), &at);
  if (!abs || abs->getBlock() != at.block() || !inf ||
      !inf.getValue().isInfinity() || inf.getValue().isNegative())
    return false;
  Value tested = source(abs.getOperand(), at);
  return tested == x || tested == source(x, body);
}
