//===- MatchPositions.cpp - Patterns read through indices -----------------===//
//
// What the matcher reads through positions rather than values:
// rotate_half's slices (static or dynamic halves), causal masks built from
// iotas and index arithmetic (a linear function of the loop dims, with
// dynamic sizes as symbols), the guard that zeroes fully masked rows, and
// sliding windows (indexing maps `o * stride + k` over zero padding).
//
//===----------------------------------------------------------------------===//

#include "Matcher.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::fuel;
using namespace mlir::fuel::match;

static bool isWholeDim(OpFoldResult size, Value src, int64_t d) {
  int64_t static_ = cast<ShapedType>(src.getType()).getDimSize(d);
  if (std::optional<int64_t> c = getConstantIntValue(size))
    return !ShapedType::isDynamic(static_) && *c == static_;
  auto dim = dyn_cast<Value>(size)
                 ? cast<Value>(size).getDefiningOp<tensor::DimOp>()
                 : tensor::DimOp();
  return dim && dim.getSource() == src && dim.getConstantIndex() == d;
}

/// Whether `size` is half of dim `d` of `src` (an even static size, or the
/// dynamic size divided by 2).
static bool isHalfDim(OpFoldResult size, Value src, int64_t d) {
  int64_t static_ = cast<ShapedType>(src.getType()).getDimSize(d);
  if (std::optional<int64_t> c = getConstantIntValue(size))
    return !ShapedType::isDynamic(static_) && static_ % 2 == 0 &&
           *c == static_ / 2;
  auto div = dyn_cast<Value>(size)
                 ? cast<Value>(size).getDefiningOp<arith::DivUIOp>()
                 : arith::DivUIOp();
  return div && getConstantIntValue(div.getRhs()) == 2 &&
         isWholeDim(div.getLhs(), src, d);
}

/// Whether offsets/sizes select half `half` (0: the first) of `whole` along
/// `axis` and all of every other dim.
static bool isHalfWindow(ArrayRef<OpFoldResult> offsets,
                         ArrayRef<OpFoldResult> sizes, Value whole,
                         int64_t axis, int half) {
  for (int64_t d = 0, e = offsets.size(); d < e; ++d) {
    if (d != axis) {
      if (getConstantIntValue(offsets[d]) != 0 ||
          !isWholeDim(sizes[d], whole, d))
        return false;
      continue;
    }
    if (!isHalfDim(sizes[d], whole, d))
      return false;
    if (half == 0 ? getConstantIntValue(offsets[d]) != 0
                  : !isHalfDim(offsets[d], whole, d))
      return false;
  }
  return true;
}

/// Whether `slice` takes half `half` of its source along `axis`.
static bool isHalfOf(tensor::ExtractSliceOp slice, int64_t axis, int half) {
  return slice.hasUnitStride() &&
         slice.getResultType().getRank() == slice.getSourceType().getRank() &&
         isHalfWindow(slice.getMixedOffsets(), slice.getMixedSizes(),
                      slice.getSource(), axis, half);
}

/// Whether `insert` writes half `half` of its destination along `axis`.
static bool isInsertedHalf(tensor::InsertSliceOp insert, int64_t axis,
                           int half) {
  return insert.hasUnitStride() &&
         insert.getSourceType().getRank() == insert.getDestType().getRank() &&
         isHalfWindow(insert.getMixedOffsets(), insert.getMixedSizes(),
                      insert.getDest(), axis, half);
}

/// The value of an index computed from constants and static sizes
/// (`arith.addi %c0, tensor.dim %t, %c3` of a static dim).
static std::optional<int64_t> staticIndex(Value v, unsigned depth = 0) {
  if (depth > 4)
    return std::nullopt;
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return c;
  if (auto dim = v.getDefiningOp<tensor::DimOp>()) {
    std::optional<int64_t> index = dim.getConstantIndex();
    auto type = dyn_cast<RankedTensorType>(dim.getSource().getType());
    if (!index || !type || type.isDynamicDim(*index))
      return std::nullopt;
    return type.getDimSize(*index);
  }
  if (auto add = v.getDefiningOp<arith::AddIOp>()) {
    std::optional<int64_t> a = staticIndex(add.getLhs(), depth + 1);
    std::optional<int64_t> b = staticIndex(add.getRhs(), depth + 1);
    if (a && b)
      return *a + *b;
  }
  return std::nullopt;
}

/// Whether `v` is `linalg.index d` minus a static `offset` (or the index
/// itself when the offset is 0).
static bool isIndexMinus(Value v, int64_t d, int64_t offset) {
  if (auto sub = v.getDefiningOp<arith::SubIOp>()) {
    std::optional<int64_t> c = staticIndex(sub.getRhs());
    return c && *c == offset && isIndexMinus(sub.getLhs(), d, 0);
  }
  auto index = v.getDefiningOp<linalg::IndexOp>();
  return offset == 0 && index && static_cast<int64_t>(index.getDim()) == d;
}

/// The two pieces an scf.if on `index(axis) < size(first)` reads, each arm
/// extracting from one of them at the loops of a body of `numLoops` loops
/// (at `index(axis) - size(first)` along the axis in the second): a concat
/// along `axis` read by index.
static std::optional<std::pair<Value, Value>>
indexedPieces(scf::IfOp branch, int64_t axis, unsigned numLoops) {
  auto cond = branch ? branch.getCondition().getDefiningOp<arith::CmpIOp>()
                     : arith::CmpIOp();
  if (!cond || cond.getPredicate() != arith::CmpIPredicate::ult ||
      !isIndexMinus(cond.getLhs(), axis, 0))
    return std::nullopt;
  std::optional<int64_t> size = staticIndex(cond.getRhs());
  if (!size)
    return std::nullopt;
  // Each arm yields one piece's element at the loops (the axis offset).
  auto piece = [&](Region &arm, int64_t offset) -> Value {
    if (!arm.hasOneBlock())
      return Value();
    auto armYield = cast<scf::YieldOp>(arm.front().getTerminator());
    auto extract =
        armYield.getNumOperands() == 1
            ? armYield.getOperand(0).getDefiningOp<tensor::ExtractOp>()
            : tensor::ExtractOp();
    if (!extract || extract.getIndices().size() != numLoops)
      return Value();
    for (auto [d, index] : llvm::enumerate(extract.getIndices()))
      if (!isIndexMinus(index, d, static_cast<int64_t>(d) == axis ? offset : 0))
        return Value();
    return extract.getTensor();
  };
  Value first = piece(branch.getThenRegion(), 0);
  Value second = piece(branch.getElseRegion(), *size);
  auto firstType = first ? dyn_cast<RankedTensorType>(first.getType())
                         : RankedTensorType();
  if (!first || !second || !firstType || firstType.getDimSize(axis) != *size)
    return std::nullopt;
  return std::pair(first, second);
}

/// A concat along `axis` written as a generic that reads its two pieces by
/// index (StableHLO's concatenate through torch-mlir: an scf.if on
/// `index(axis) < size(first)` whose arms extract from either piece): the
/// pieces.
static std::optional<std::pair<Value, Value>> indexedConcat(Value v,
                                                            int64_t axis) {
  auto op = v.getDefiningOp<linalg::GenericOp>();
  if (!op || numInputs(op) != 0 || op->getNumResults() != 1 ||
      op.getNumReductionLoops() != 0 ||
      !op.getMatchingIndexingMap(initOperand(op, 0)).isIdentity())
    return std::nullopt;
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  return indexedPieces(yield.getOperand(0).getDefiningOp<scf::IfOp>(), axis,
                       op.getNumLoops());
}

LogicalResult Matcher::matchRotateHalf(const RecipeNode &n, Value v) {
  // rotate_half(x) = [-x2, x1] along the axis, with x1, x2 the halves of x:
  // a concat, two insert_slices into an empty tensor, or a generic that
  // reads the halves by index.
  SmallVector<int64_t> dims = layout(recipe.nodes[n.operands[0]]);
  auto pos = llvm::find(dims, static_cast<int64_t>(axisDims[n.index].front()));
  if (pos == dims.end())
    return fail("rotate_half's axis is not in its operand");
  int64_t axis = pos - dims.begin();
  Value first, second;
  SmallVector<Operation *> pieces;
  if (auto concat = v.getDefiningOp<tensor::ConcatOp>()) {
    if (concat.getInputs().size() != 2 ||
        static_cast<int64_t>(concat.getDim()) != axis)
      return fail("expected rotate_half's concat");
    first = concat.getInputs()[0];
    second = concat.getInputs()[1];
    pieces.push_back(concat);
  } else if (auto outer = v.getDefiningOp<tensor::InsertSliceOp>()) {
    auto inner = outer.getDest().getDefiningOp<tensor::InsertSliceOp>();
    if (!inner || !inner.getDest().getDefiningOp<tensor::EmptyOp>())
      return fail("expected rotate_half's concat");
    // Either order of the two inserts.
    if (isInsertedHalf(outer, axis, 1) && isInsertedHalf(inner, axis, 0)) {
      first = inner.getSource();
      second = outer.getSource();
    } else if (isInsertedHalf(outer, axis, 0) &&
               isInsertedHalf(inner, axis, 1)) {
      first = outer.getSource();
      second = inner.getSource();
    } else {
      return fail("expected rotate_half's halves");
    }
    pieces.append({outer, inner});
  } else if (auto pieces2 = indexedConcat(v, axis)) {
    std::tie(first, second) = *pieces2;
    pieces.push_back(v.getDefiningOp());
  } else {
    return fail("expected rotate_half's concat");
  }
  return matchRotatedHalves(n, first, second, axis, pieces, std::nullopt);
}

LogicalResult Matcher::matchRotateHalfInBody(const RecipeNode &n,
                                             scf::IfOp branch,
                                             const Body &body) {
  // The concat read by index in the body of the op that reads it (once
  // upstream's elementwise fusion has put it there): the loop of the axis.
  auto loop = llvm::find(body.loops,
                         static_cast<int64_t>(axisDims[n.index].front()));
  if (loop == body.loops.end())
    return fail("rotate_half's axis is not a loop of the body that reads it");
  int64_t axis = loop - body.loops.begin();
  std::optional<std::pair<Value, Value>> halves =
      indexedPieces(branch, axis, body.op.getNumLoops());
  if (!halves)
    return fail("expected rotate_half's concat, read by index");
  return matchRotatedHalves(n, halves->first, halves->second, axis, {},
                            SmallVector<int64_t>(body.loops));
}

LogicalResult
Matcher::matchRotatedHalves(const RecipeNode &n, Value first, Value second,
                            int64_t axis, ArrayRef<Operation *> pieces,
                            std::optional<SmallVector<int64_t>> dims) {
  auto lower = second.getDefiningOp<tensor::ExtractSliceOp>();
  auto neg = first.getDefiningOp<linalg::LinalgOp>();
  Operation *negOp = neg ? singleBodyOp(neg) : nullptr;
  bool negates = negOp && numInputs(neg) == 1 &&
                 llvm::all_of(neg.getIndexingMapsArray(),
                              [](AffineMap m) { return m.isIdentity(); }) &&
                 negOp->getOperand(0) == neg.getBlock()->getArgument(0);
  if (negates && !isa<arith::NegFOp>(negOp)) {
    // x * -1.
    FloatAttr c;
    negates = isa<arith::MulFOp>(negOp) &&
              matchPattern(negOp->getOperand(1), m_Constant(&c)) &&
              c.getValueAsDouble() == -1.0;
  }
  auto upper = negates ? inputOperand(neg, 0)
                             ->get()
                             .getDefiningOp<tensor::ExtractSliceOp>()
                       : tensor::ExtractSliceOp();
  if (!lower || !upper || lower.getSource() != upper.getSource() ||
      !isHalfOf(lower, axis, 0) || !isHalfOf(upper, axis, 1))
    return fail("expected rotate_half's halves");
  llvm::append_range(st.ops, pieces);
  st.ops.append({lower, neg, upper});
  return matchTensor({n.operands[0]}, lower.getSource(), std::move(dims));
}


std::optional<std::pair<Value, SmallVector<int64_t>>>
Matcher::readInput(Value x, const Body &body) {
  auto arg = dyn_cast<BlockArgument>(x);
  if (!arg || arg.getOwner() != body.block() ||
      arg.getArgNumber() >= numInputs(body.op))
    return std::nullopt;
  FailureOr<SmallVector<int64_t>> dims = operandDims(body, arg.getArgNumber());
  if (failed(dims))
    return std::nullopt;
  return std::pair(inputOperand(body.op, arg.getArgNumber())->get(),
                   std::move(*dims));
}

std::optional<std::pair<Value, Body>>
Matcher::elementwiseProducer(Value t, ArrayRef<int64_t> dims) {
  auto op = t.getDefiningOp<linalg::LinalgOp>();
  if (!op || op.getNumReductionLoops() != 0 || !op.getBlock())
    return std::nullopt;
  unsigned k = cast<OpResult>(t).getResultNumber();
  FailureOr<SmallVector<int64_t>> loops = loopsOf(op, k, dims, {});
  if (failed(loops))
    return std::nullopt;
  auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
  return std::pair(yield.getOperand(k), Body{op, std::move(*loops)});
}

std::optional<Matcher::Linear>
Matcher::evalIndexTensor(Value t, ArrayRef<int64_t> dims, unsigned depth) {
  t = withoutUnitReshapes(t);
  DenseIntElementsAttr dense;
  if (matchPattern(t, m_Constant(&dense))) {
    if (dense.isSplat())
      return Linear{{}, dense.getSplatValue<APInt>().getSExtValue()};
    // An iota along its one non-unit dim (TOSA's arange).
    auto type = cast<ShapedType>(dense.getType());
    int64_t nonUnit = llvm::count_if(type.getShape(),
                                     [](int64_t d) { return d != 1; });
    if (nonUnit != 1 || dims.size() != 1)
      return std::nullopt;
    int64_t k = 0;
    for (APInt v : dense.getValues<APInt>())
      if (v.getSExtValue() != k++)
        return std::nullopt;
    return Linear{{{dims[0], 1}}, 0};
  }
  std::optional<std::pair<Value, Body>> producer = elementwiseProducer(t, dims);
  if (!producer)
    return std::nullopt;
  return evalIndex(producer->first, producer->second, depth + 1);
}

std::optional<Matcher::Linear> Matcher::evalIndex(Value x, const Body &body,
                                                  unsigned depth) {
  if (depth > 24)
    return std::nullopt;
  APInt c;
  if (matchPattern(x, m_ConstantInt(&c)))
    return Linear{{}, c.getSExtValue()};
  if (isa<BlockArgument>(x)) {
    auto read = readInput(x, body);
    return read ? evalIndexTensor(read->first, read->second, depth)
                : std::nullopt;
  }
  Operation *op = x.getDefiningOp();
  if (!op)
    return std::nullopt;
  if (auto index = dyn_cast<linalg::IndexOp>(op)) {
    int64_t loop = body.loops[index.getDim()];
    if (loop == kUnitLoop)
      return Linear{};
    return Linear{{{loop, 1}}, 0};
  }
  if (Value inner = withoutIntCasts(x); inner != x)
    return evalIndex(inner, body, depth + 1);
  if (auto dim = dyn_cast<tensor::DimOp>(op)) {
    std::optional<int64_t> index = dim.getConstantIndex();
    if (!index)
      return std::nullopt;
    auto type = cast<ShapedType>(dim.getSource().getType());
    if (!type.isDynamicDim(*index))
      return Linear{{}, type.getDimSize(*index), {}};
    Linear l;
    l.sym[{dim.getSource().getAsOpaquePointer(), *index}] = 1;
    return l;
  }
  if (isa<arith::AddIOp, arith::SubIOp, arith::MulIOp>(op)) {
    std::optional<Linear> a = evalIndex(op->getOperand(0), body, depth + 1);
    std::optional<Linear> b = evalIndex(op->getOperand(1), body, depth + 1);
    if (!a || !b)
      return std::nullopt;
    if (isa<arith::MulIOp>(op)) {
      // One side must be a constant.
      bool aConst = a->coef.empty() && a->sym.empty();
      bool bConst = b->coef.empty() && b->sym.empty();
      if (!aConst && !bConst)
        return std::nullopt;
      Linear &v = aConst ? *b : *a;
      int64_t f = aConst ? a->c : b->c;
      for (auto &[d, k] : v.coef)
        k *= f;
      for (auto &[d, k] : v.sym)
        k *= f;
      v.c *= f;
      return v;
    }
    int64_t sign = isa<arith::SubIOp>(op) ? -1 : 1;
    for (auto [d, k] : b->coef)
      a->coef[d] += sign * k;
    for (auto [d, k] : b->sym)
      a->sym[d] += sign * k;
    a->c += sign * b->c;
    return a;
  }
  return std::nullopt;
}

Matcher::Linear Matcher::negated(Linear l) {
  for (auto &[d, k] : l.coef)
    k = -k;
  for (auto &[d, k] : l.sym)
    k = -k;
  l.c = -l.c;
  return l;
}

std::optional<Matcher::Cond>
Matcher::evalCondTensor(Value t, ArrayRef<int64_t> dims, unsigned depth) {
  t = withoutUnitReshapes(t);
  DenseIntElementsAttr dense;
  if (matchPattern(t, m_Constant(&dense)) && dense.isSplat() &&
      dense.getElementType().isInteger(1))
    return dense.getSplatValue<bool>() ? std::optional<Cond>(Cond{true, {}})
                                       : std::nullopt;
  std::optional<std::pair<Value, Body>> producer = elementwiseProducer(t, dims);
  if (!producer)
    return std::nullopt;
  return evalCond(producer->first, producer->second, depth + 1);
}

bool Matcher::isFalse(Value x, const Body &body, unsigned depth) {
  if (depth > 24)
    return false;
  if (matchPattern(x, m_Zero()))
    return true;
  auto read = readInput(x, body);
  if (!read)
    return false;
  Value t = withoutUnitReshapes(read->first);
  DenseIntElementsAttr dense;
  if (matchPattern(t, m_Constant(&dense)))
    return dense.isSplat() && dense.getElementType().isInteger(1) &&
           !dense.getSplatValue<bool>();
  std::optional<std::pair<Value, Body>> producer =
      elementwiseProducer(t, read->second);
  return producer && isFalse(producer->first, producer->second, depth + 1);
}

std::optional<Matcher::Cond> Matcher::evalCond(Value x, const Body &body,
                                               unsigned depth) {
  if (depth > 24)
    return std::nullopt;
  if (matchPattern(x, m_One()))
    return Cond{true, {}};
  if (isa<BlockArgument>(x)) {
    auto read = readInput(x, body);
    return read ? evalCondTensor(read->first, read->second, depth)
                : std::nullopt;
  }
  Operation *op = x.getDefiningOp();
  if (!op)
    return std::nullopt;
  if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    std::optional<Linear> a = evalIndex(cmp.getLhs(), body, depth + 1);
    std::optional<Linear> b = evalIndex(cmp.getRhs(), body, depth + 1);
    if (!a || !b)
      return std::nullopt;
    // d = a - b.
    Linear d = *a;
    for (auto [dim, k] : b->coef)
      d.coef[dim] -= k;
    for (auto [dim, k] : b->sym)
      d.sym[dim] -= k;
    d.c -= b->c;
    switch (cmp.getPredicate()) {
    case arith::CmpIPredicate::sle: // a - b <= 0
      return Cond{false, d};
    case arith::CmpIPredicate::slt: // a - b + 1 <= 0
      d.c += 1;
      return Cond{false, d};
    case arith::CmpIPredicate::sge: // b - a <= 0
      return Cond{false, negated(d)};
    case arith::CmpIPredicate::sgt: { // b - a + 1 <= 0
      Linear n = negated(d);
      n.c += 1;
      return Cond{false, n};
    }
    default:
      return std::nullopt;
    }
  }
  // select(c, a, false) is c and a (jnp.tril's select of a mask of ones).
  auto sel = dyn_cast<arith::SelectOp>(op);
  bool andLike =
      isa<arith::AndIOp>(op) ||
      (sel && sel.getType().isInteger(1) &&
       isFalse(sel.getFalseValue(), body, depth + 1));
  if (andLike) {
    Value lhs = sel ? sel.getCondition() : op->getOperand(0);
    Value rhs = sel ? sel.getTrueValue() : op->getOperand(1);
    std::optional<Cond> a = evalCond(lhs, body, depth + 1);
    std::optional<Cond> b = evalCond(rhs, body, depth + 1);
    if (!a || !b)
      return std::nullopt;
    if (a->always)
      return b;
    if (b->always)
      return a;
    return std::nullopt;
  }
  if (isa<arith::XOrIOp>(op)) {
    // not c: c is L <= 0, not c is 1 - L <= 0.
    Value other;
    if (matchPattern(op->getOperand(1), m_One()))
      other = op->getOperand(0);
    else if (matchPattern(op->getOperand(0), m_One()))
      other = op->getOperand(1);
    std::optional<Cond> c =
        other ? evalCond(other, body, depth + 1) : std::nullopt;
    if (!c || c->always)
      return std::nullopt;
    Linear n = negated(c->le);
    n.c += 1;
    return Cond{false, n};
  }
  return std::nullopt;
}

std::optional<Matcher::Cond> Matcher::evalMaskBias(Value y, const Body &body,
                                                   unsigned depth) {
  if (depth > 24)
    return std::nullopt;
  if (isa<BlockArgument>(y)) {
    auto read = readInput(y, body);
    SmallVector<Operation *> views;
    Value t = read ? withoutUnitReshapes(read->first, &views) : Value();
    std::optional<std::pair<Value, Body>> producer =
        read ? elementwiseProducer(t, read->second) : std::nullopt;
    if (!producer)
      return std::nullopt;
    std::optional<Cond> c =
        evalMaskBias(producer->first, producer->second, depth + 1);
    if (c) {
      llvm::append_range(st.ops, views);
      st.ops.push_back(t.getDefiningOp());
    }
    return c;
  }
  auto sel = y.getDefiningOp<arith::SelectOp>();
  if (!sel)
    return std::nullopt;
  FloatAttr a = constantValue(sel.getTrueValue(), &body);
  FloatAttr b = constantValue(sel.getFalseValue(), &body);
  if (!a || !b)
    return std::nullopt;
  std::optional<Cond> c = evalCond(sel.getCondition(), body, depth + 1);
  if (!c || c->always)
    return std::nullopt;
  if (a.getValue().isZero() && isNegInfOrLowest(b))
    return c;
  if (isNegInfOrLowest(a) && b.getValue().isZero()) {
    Linear n = negated(c->le);
    n.c += 1;
    return Cond{false, n};
  }
  return std::nullopt;
}

LogicalResult Matcher::matchCausalMask(Want w, Operation *op,
                                       const Body &body) {
  const RecipeNode &n = recipe.nodes[w.node];
  int64_t qDim = axisDims[n.index].front(), kDim = axisDims[n.intValue].front();
  // The visible condition must read j - i - offset <= 0.
  auto record = [&](const Cond &c) -> LogicalResult {
    std::map<int64_t, int64_t> coef;
    for (auto [d, k] : c.le.coef)
      if (k != 0)
        coef[d] = k;
    if (coef != std::map<int64_t, int64_t>{{kDim, 1}, {qDim, -1}})
      return fail("a mask is not the causal mask");
    Linear offset;
    offset.c = -c.le.c;
    for (auto [d, k] : c.le.sym)
      if (k != 0)
        offset.sym[d] = -k;
    st.causal.push_back({qDim, kDim, offset});
    reach(w.node);
    return success();
  };
  Want inner{n.operands[0]};
  // select(visible, s, -inf) or select(hidden, -inf, s).
  if (auto sel = dyn_cast<arith::SelectOp>(op)) {
    for (bool sFirst : {true, false}) {
      Value sv = sFirst ? sel.getTrueValue() : sel.getFalseValue();
      FloatAttr other = constantValue(
          sFirst ? sel.getFalseValue() : sel.getTrueValue(), &body);
      if (!isNegInfOrLowest(other))
        continue;
      std::optional<Cond> c = evalCond(sel.getCondition(), body, 0);
      if (!c || c->always)
        return fail("a mask is not the causal mask");
      Cond visible = *c;
      if (!sFirst) {
        visible.le = negated(c->le);
        visible.le.c += 1;
      }
      if (failed(record(visible)))
        return failure();
      return matchScalar(inner, sv, body);
    }
    return fail("expected a causal mask");
  }
  // s + bias, the bias 0 where visible and -inf elsewhere.
  if (isa<arith::AddFOp>(op)) {
    for (unsigned side : {0u, 1u}) {
      State before = st;
      std::optional<Cond> c = evalMaskBias(op->getOperand(1 - side), body, 0);
      if (c && succeeded(record(*c)) &&
          succeeded(matchScalar(inner, op->getOperand(side), body)))
        return success();
      st = std::move(before);
    }
    return fail("expected a causal mask");
  }
  return fail(Twine("expected a causal mask, found ") +
              op->getName().getStringRef());
}

LogicalResult Matcher::matchMaskedRowGuard(Value c, const Body &body) {
  // The softmax's max: its operand is the scores, its axis the row.
  const RecipeNode *max = nullptr;
  for (const RecipeNode &r : recipe.nodes)
    if (r.op == RecipeOp::ReduceMax)
      max = &r;
  auto read = readInput(c, body);
  if (!max || !read)
    return fail("expected a guard for fully masked rows");
  SmallVector<int64_t> &dims = read->second;
  SmallVector<Operation *> covered;
  Value all = withoutUnitReshapes(read->first, &covered);
  // all = and-reduce over the row, from true, of (scores == -inf).
  auto red = all.getDefiningOp<linalg::LinalgOp>();
  if (!red || numInputs(red) != 1 ||
      numInits(red) != 1 || red.getNumReductionLoops() != 1)
    return fail("expected a guard for fully masked rows");
  int64_t row = axisDims[max->index].front();
  FailureOr<SmallVector<int64_t>> loops = loopsOf(red, 0, dims, {row});
  Operation *init = fillOf(initOperand(red, 0)->get());
  // The combiner: andi(e, out), e read from the input or computed in the
  // body (the comparison fused into the reduction).
  Block *redBlock = red.getBlock();
  auto combine =
      redBlock->getTerminator()->getOperand(0).getDefiningOp<arith::AndIOp>();
  Value out = redBlock->getArgument(numInputs(red));
  if (failed(loops) || !init || !matchPattern(init->getOperand(0), m_One()) ||
      !combine || combine->getBlock() != redBlock ||
      !llvm::is_contained(combine->getOperands(), out))
    return fail("expected a guard for fully masked rows");
  Value e = combine.getLhs() == out ? combine.getRhs() : combine.getLhs();
  Body redBody{red, std::move(*loops)};
  FailureOr<SmallVector<int64_t>> eqDims = operandDims(redBody, 0);
  const RecipeNode &scores = recipe.nodes[max->operands[0]];
  if (failed(eqDims) || !sameDims(*eqDims, layout(scores)))
    return fail("expected a guard for fully masked rows");
  // The comparison x == -inf, and the op whose body holds it.
  linalg::LinalgOp cmpOp = red;
  if (e == redBlock->getArgument(0)) {
    cmpOp = inputOperand(red, 0)->get().getDefiningOp<linalg::LinalgOp>();
    if (!cmpOp || numInits(cmpOp) != 1 ||
        cmpOp.getNumReductionLoops() != 0 ||
        !cmpOp.getMatchingIndexingMap(initOperand(cmpOp, 0)).isIdentity())
      return fail("expected a guard for fully masked rows");
    e = cmpOp.getBlock()->getTerminator()->getOperand(0);
  }
  auto cmp = e.getDefiningOp<arith::CmpFOp>();
  if (!cmp || cmp->getBlock() != cmpOp.getBlock() ||
      cmp.getPredicate() != arith::CmpFPredicate::OEQ)
    return fail("expected a guard for fully masked rows");
  Value x = cmp.getLhs();
  while (x.getDefiningOp<arith::ExtFOp>())
    x = x.getDefiningOp()->getOperand(0);
  Body cmpBody{cmpOp, {}};
  FloatAttr ninf = constantValue(cmp.getRhs(), &cmpBody);
  auto xArg = dyn_cast<BlockArgument>(x);
  if (!xArg || xArg.getOwner() != cmpOp.getBlock() ||
      xArg.getArgNumber() >= numInputs(cmpOp) ||
      (cmpOp != red &&
       !cmpOp.getMatchingIndexingMap(inputOperand(cmpOp, xArg.getArgNumber()))
            .isIdentity()) ||
      !ninf || !ninf.getValue().isInfinity() || !ninf.getValue().isNegative())
    return fail("expected a guard for fully masked rows");
  Value tested = withoutUnitReshapes(
      inputOperand(cmpOp, xArg.getArgNumber())->get(), &covered);
  // The scores, perhaps extended to f64 by a generic of their own.
  tested = withoutCastGenerics(
      tested, [](Operation *op) { return isa<arith::ExtFOp>(op); }, covered);
  llvm::append_range(st.ops, covered);
  st.ops.push_back(red);
  if (cmpOp != red)
    st.ops.push_back(cmpOp);
  st.leafOps.push_back(init);
  st.guards.push_back({max->operands[0], tested});
  return success();
}


/// `e` as sum(coef[d] * d) + constant, if it is linear in the dims.
static bool linearExpr(AffineExpr e, std::map<unsigned, int64_t> &coef,
                       int64_t &constant, int64_t scale = 1) {
  if (auto d = dyn_cast<AffineDimExpr>(e)) {
    coef[d.getPosition()] += scale;
    return true;
  }
  if (auto c = dyn_cast<AffineConstantExpr>(e)) {
    constant += scale * c.getValue();
    return true;
  }
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin)
    return false;
  if (bin.getKind() == AffineExprKind::Add)
    return linearExpr(bin.getLHS(), coef, constant, scale) &&
           linearExpr(bin.getRHS(), coef, constant, scale);
  if (bin.getKind() == AffineExprKind::Mul) {
    if (auto c = dyn_cast<AffineConstantExpr>(bin.getRHS()))
      return linearExpr(bin.getLHS(), coef, constant, scale * c.getValue());
    if (auto c = dyn_cast<AffineConstantExpr>(bin.getLHS()))
      return linearExpr(bin.getRHS(), coef, constant, scale * c.getValue());
  }
  return false;
}

LogicalResult Matcher::bindIntElement(StringRef name, unsigned element,
                                      int64_t value) {
  SmallVector<std::optional<int64_t>, 2> &slot = st.intParams[name];
  if (slot.size() <= element)
    slot.resize(element + 1);
  if (slot[element] && *slot[element] != value)
    return fail("param '" + name + "' has two different values");
  slot[element] = value;
  return success();
}

LogicalResult Matcher::matchWindow(Want w, Value x, const Body &body) {
  if (w.quarters != 4)
    return fail("a window is used through a power");
  // The chain of windows down to the value they read.
  SmallVector<unsigned> windows;
  unsigned base = w.node;
  while (recipe.nodes[base].op == RecipeOp::Window) {
    windows.push_back(base);
    base = recipe.nodes[base].operands[0];
  }
  auto arg = dyn_cast<BlockArgument>(x);
  if (!arg || arg.getOwner() != body.block() ||
      arg.getArgNumber() >= numInputs(body.op))
    return fail("expected a windowed read of a tensor");
  OpOperand *operand = inputOperand(body.op, arg.getArgNumber());
  AffineMap map = body.op.getMatchingIndexingMap(operand);
  Value t = operand->get();
  auto type = cast<ShapedType>(t.getType());
  // Each result of the map: a dim, or `o * stride + k` for a window.
  SmallVector<int64_t> dims;
  SmallVector<std::optional<unsigned>> windowAt; // per kept position
  SmallVector<int64_t> positions;
  llvm::SmallDenseSet<unsigned, 4> seen;
  for (unsigned r = 0; r < map.getNumResults(); ++r) {
    AffineExpr e = map.getResult(r);
    if (auto d = dyn_cast<AffineDimExpr>(e)) {
      int64_t loop = body.loops[d.getPosition()];
      if (loop == kUnitLoop) {
        if (!isUnitDim(type, r))
          return fail("an operand is not on the recipe's axes");
        continue;
      }
      dims.push_back(loop);
      windowAt.push_back(std::nullopt);
      positions.push_back(r);
      continue;
    }
    if (auto c = dyn_cast<AffineConstantExpr>(e);
        c && c.getValue() == 0 && isUnitDim(type, r))
      continue;
    std::map<unsigned, int64_t> coef;
    int64_t constant = 0;
    if (!linearExpr(e, coef, constant) || constant != 0)
      return fail("expected a window read as `o * stride + k`");
    std::optional<unsigned> found;
    for (unsigned node : windows) {
      const RecipeNode::WindowSpec &spec = *recipe.nodes[node].window;
      int64_t out = axisDims[spec.out].front();
      int64_t kernel = axisDims[spec.kernel].front();
      int64_t stride = 0, dilation = 0;
      bool other = false;
      for (auto [loop, k] : coef) {
        if (k == 0)
          continue;
        if (body.loops[loop] == out)
          stride = k;
        else if (body.loops[loop] == kernel)
          dilation = k;
        else
          other = true;
      }
      if (other || stride == 0)
        continue;
      // A windowed read: what stops it now is a near miss of the recipe.
      for (unsigned w : windows)
        reach(w);
      if (dilation != 1)
        return fail("a window is dilated");
      if (stride < 1)
        return fail("a window has a negative stride");
      if (!seen.insert(node).second)
        return fail("a window is read twice");
      if (failed(bindIntElement(spec.stride, spec.element, stride)))
        return failure();
      found = node;
      break;
    }
    if (!found)
      return fail("expected a window read as `o * stride + k`");
    dims.push_back(axisDims[recipe.nodes[*found].index].front());
    windowAt.push_back(found);
    positions.push_back(r);
  }
  if (seen.size() != windows.size())
    return fail("a window's axis is not read through one");
  // Zero padding, in one tensor.pad or several.
  SmallVector<int64_t> low(type.getRank(), 0), high(type.getRank(), 0);
  while (auto pad = t.getDefiningOp<tensor::PadOp>()) {
    Value padValue = pad.getConstantPaddingValue();
    FloatAttr zero = padValue ? constantValue(padValue, nullptr) : FloatAttr();
    if (!zero || !zero.getValue().isZero())
      return fail("a window's padding is not zero");
    for (auto [i, l, h] :
         llvm::enumerate(pad.getStaticLow(), pad.getStaticHigh())) {
      if (ShapedType::isDynamic(l) || ShapedType::isDynamic(h))
        return fail("a window's padding is not static");
      low[i] += l;
      high[i] += h;
    }
    st.leafOps.push_back(pad);
    t = pad.getSource();
  }
  auto srcType = cast<ShapedType>(t.getType());
  for (int64_t r = 0; r < type.getRank(); ++r) {
    auto it = llvm::find(positions, r);
    std::optional<unsigned> node =
        it == positions.end() ? std::nullopt : windowAt[it - positions.begin()];
    if (!node) {
      if (low[r] || high[r])
        return fail("a dim that is not windowed is padded");
      continue;
    }
    const RecipeNode::WindowSpec &spec = *recipe.nodes[*node].window;
    if (low[r] != high[r]) {
      // Padding on the high side that differs from the low side only in
      // what no window reaches (a strided window's last rows) is the same
      // padding.
      std::optional<int64_t> stride = st.intParams[spec.stride][spec.element];
      int64_t in = srcType.getDimSize(r);
      int64_t kernel = staticLoopRanges(body.op)[llvm::find(
                           body.loops, axisDims[spec.kernel].front()) -
                       body.loops.begin()];
      bool reachesSame =
          stride && !ShapedType::isDynamic(in) &&
          !ShapedType::isDynamic(kernel) &&
          in + 2 * low[r] - kernel >= 0 &&
          (in + low[r] + high[r] - kernel) / *stride ==
              (in + 2 * low[r] - kernel) / *stride;
      if (!reachesSame)
        return fail("a window's padding is not symmetric");
    }
    if (failed(bindIntElement(spec.padding, spec.element, low[r])))
      return failure();
  }
  return matchRead({base}, t, dims);
}
