//===- MatchScalar.cpp - Matching recipes inside linalg bodies ------------===//
//
// The scalar half of the matcher: a recipe value computed by the scalar ops
// of a linalg body (matchScalar), and the reductions whose bodies combine
// into an accumulator (matchReduction, with their identity inits and
// combiners). Match.cpp follows values between ops.
//
//===----------------------------------------------------------------------===//

#include "Matcher.h"

using namespace mlir;
using namespace mlir::fuel;
using namespace mlir::fuel::match;

LogicalResult Matcher::matchReduction(const RecipeNode &n, const Body &body,
                                      unsigned k,
                                      std::optional<unsigned> addend) {
  // init = fill(identity) (or a splat constant); body = combine(in, out) or
  // out + a * b.
  Value init = initOperand(body.op, k)->get();
  if (addend) {
    // The init is read on the op's output dims.
    AffineMap m = body.op.getMatchingIndexingMap(initOperand(body.op, k));
    SmallVector<int64_t> dims;
    for (AffineExpr e : m.getResults()) {
      auto d = dyn_cast<AffineDimExpr>(e);
      if (!d)
        continue;
      if (body.loops[d.getPosition()] != kUnitLoop)
        dims.push_back(body.loops[d.getPosition()]);
    }
    if (failed(matchRead({*addend}, init, dims)))
      return failure();
  } else if (failed(matchIdentityInit(n, init, body, k))) {
    return failure();
  }
  return matchCombiner(n, body, k);
}

LogicalResult Matcher::matchIdentityInit(const RecipeNode &n, Value init,
                                         const Body &body, unsigned k) {
  FloatAttr start;
  if (Operation *fill = fillOf(init)) {
    start = constantValue(fill->getOperand(0), nullptr);
    // A constant: frontends share one fill between reductions.
    st.leafOps.push_back(fill);
  } else {
    DenseFPElementsAttr dense;
    if (matchPattern(init, m_Constant(&dense)) && dense.isSplat())
      start = FloatAttr::get(dense.getElementType(),
                             dense.getSplatValue<APFloat>());
  }
  bool isMax = n.op == RecipeOp::ReduceMax;
  bool identity = false;
  if (start) {
    APFloat v = start.getValue();
    // max starts from -inf, or from the lowest finite value (TOSA), or
    // from NaN when it is maxnumf, which NaN does not win (upstream's
    // decomposition of linalg.softmax).
    auto combiner = cast<linalg::YieldOp>(body.block()->getTerminator())
                        .getOperand(k)
                        .getDefiningOp<arith::MaxNumFOp>();
    identity = isMax ? (v.isNegative() && (v.isInfinity() || v.isLargest())) ||
                           (v.isNaN() && combiner)
                     : v.isZero();
  }
  if (!identity)
    return fail("a reduction does not start from its identity");
  return success();
}

LogicalResult Matcher::matchCombiner(const RecipeNode &n, const Body &body,
                                     unsigned k) {
  bool isMax = n.op == RecipeOp::ReduceMax;
  Block *block = body.block();
  auto yield = cast<linalg::YieldOp>(block->getTerminator());
  Operation *op = withoutScalarTensors(yield.getOperand(k)).getDefiningOp();
  Value out = block->getArgument(numInputs(body.op) + k);
  if (!op || op->getBlock() != block || op->getNumOperands() != 2)
    return fail("expected a reduction combiner");
  Value lhs = withoutScalarTensors(op->getOperand(0));
  Value rhs = withoutScalarTensors(op->getOperand(1));
  if (lhs != out && rhs != out)
    return fail("expected a reduction combiner");
  Value in = lhs == out ? rhs : lhs;
  if (n.op == RecipeOp::Contract) {
    auto mul = in.getDefiningOp<arith::MulFOp>();
    if (!isa<arith::AddFOp>(op) || !mul || mul->getBlock() != block)
      return fail("expected multiply-accumulate");
    return matchPair({n.operands[0]}, {n.operands[1]}, mul.getLhs(),
                     mul.getRhs(), body, /*commutative=*/true);
  }
  bool kindOk = isMax ? isa<arith::MaximumFOp, arith::MaxNumFOp>(op)
                      : isa<arith::AddFOp>(op);
  if (!kindOk)
    return fail("expected a reduction combiner");
  return matchScalar({n.operands[0]}, in, body);
}

LogicalResult Matcher::matchScalar(Want want, Value s, const Body &body) {
  FailureOr<Want> normal = normalize(want);
  if (failed(normal))
    return fail("no spelling of this power is known");
  Want w = *normal;
  const RecipeNode &n = recipe.nodes[w.node];
  Block *block = body.block();
  // Float casts between types at least as wide as the result: frontends
  // compute some intermediates wider (PyTorch's layer norm variance in f64).
  while (true) {
    s = withoutScalarTensors(s);
    Operation *def = s.getDefiningOp();
    if (!def || !isCastToSkip(def))
      break;
    s = def->getOperand(0);
  }
  // A contraction's input scaled in the contraction's own body.
  while (st.collectingFactor && n.op == RecipeOp::Input) {
    Operation *def = s.getDefiningOp();
    if (!def || def->getBlock() != block ||
        !isa<arith::MulFOp, arith::DivFOp>(def))
      break;
    bool isDiv = isa<arith::DivFOp>(def);
    FloatAttr rhs = constantValue(def->getOperand(1), &body);
    FloatAttr lhs =
        isDiv ? FloatAttr() : constantValue(def->getOperand(0), &body);
    if (rhs && !rhs.getValue().isZero()) {
      st.factor *=
          isDiv ? 1.0 / rhs.getValueAsDouble() : rhs.getValueAsDouble();
      s = def->getOperand(0);
    } else if (lhs) {
      st.factor *= lhs.getValueAsDouble();
      s = def->getOperand(1);
    } else {
      break;
    }
  }
  if (isScalarKind(n.op))
    return matchConstant(w, s, &body);
  if (n.op == RecipeOp::Window)
    return matchWindow(w, s, body);
  if (auto branch = s.getDefiningOp<scf::IfOp>();
      branch && branch->getBlock() == block && n.op == RecipeOp::RotateHalf) {
    if (w.quarters != 4)
      return fail("rotate_half is used through a power");
    return matchRotateHalfInBody(n, branch, body);
  }
  // The number of targets, a constant, where no target is ignored (or its
  // reciprocal: a mean as a multiply).
  if (n.op == RecipeOp::CountKept && recipe.noIgnoredTargets) {
    FloatAttr c = constantValue(s, &body);
    if (!c || std::abs(w.quarters) != 4 || c.getValue().isZero())
      return fail("expected the number of targets as a constant");
    st.countConstant = w.quarters == 4 ? c.getValueAsDouble()
                                       : 1.0 / c.getValueAsDouble();
    reach(w.node);
    return success();
  }
  // A count converted to float in the body that reads it.
  if (n.op == RecipeOp::CountKept)
    if (Operation *def = s.getDefiningOp();
        def && def->getBlock() == block &&
        isa<arith::SIToFPOp, arith::UIToFPOp>(def))
      s = def->getOperand(0);
  if (auto arg = dyn_cast<BlockArgument>(s); arg && arg.getOwner() == block) {
    unsigned i = arg.getArgNumber();
    if (i >= numInputs(body.op))
      return fail("a body reads its init");
    FailureOr<SmallVector<int64_t>> dims = operandDims(body, i);
    if (failed(dims)) {
      if (!explain)
        return unexplained();
      std::string map;
      llvm::raw_string_ostream os(map);
      os << body.op.getMatchingIndexingMap(inputOperand(body.op, i));
      return fail("an operand is not on the recipe's axes: input " + Twine(i) +
                  " read by " + map);
    }
    return matchRead(w, inputOperand(body.op, i)->get(), *dims);
  }
  Operation *op = s.getDefiningOp();
  if (!op || op->getBlock() != block)
    return fail("expected a scalar op in the body");
  llvm::SaveAndRestore<Operation *> at(current, op);
  // x combined with the combining op's identity (max with -inf): x.
  if (!isOpKind(op, n.op))
    if (std::optional<unsigned> i = identityOperand(op, &body))
      return matchScalar(w, op->getOperand(*i), body);
  auto isOne = [&](Value x) {
    FloatAttr c = constantValue(x, &body);
    return c && c.getValueAsDouble() == 1.0;
  };

  if (w.quarters != 4) {
    // s = node^(q/4), spelled with 1/x, sqrt, rsqrt or pow.
    Want next = w;
    Value x;
    if (auto div = dyn_cast<arith::DivFOp>(op); div && isOne(div.getLhs())) {
      next.quarters = -w.quarters;
      x = div.getRhs();
    } else if (isa<math::SqrtOp>(op)) {
      next.quarters = 2 * w.quarters;
      x = op->getOperand(0);
    } else if (isa<math::RsqrtOp>(op)) {
      next.quarters = -2 * w.quarters;
      x = op->getOperand(0);
    } else if (auto pow = dyn_cast<math::PowFOp>(op)) {
      FloatAttr p = constantValue(pow.getRhs(), &body);
      double q = p ? w.quarters / p.getValueAsDouble() : 0.0;
      if (!p || q != std::trunc(q) || q == 0)
        return fail("expected a power of the recipe value");
      next.quarters = static_cast<int>(q);
      x = pow.getLhs();
    } else {
      return fail(Twine("expected a reciprocal or root, found ") +
                  op->getName().getStringRef());
    }
    if (std::abs(next.quarters) > 16)
      return fail("no spelling of this power is known");
    return matchScalar(next, x, body);
  }

  // |sum(exp(x))|: the sum is not negative (JAX's logsumexp).
  if (n.op == RecipeOp::ReduceSum && isa<math::AbsFOp>(op) &&
      recipe.nodes[n.operands[0]].op == RecipeOp::Exp)
    return matchScalar(w, op->getOperand(0), body);
  // select(|m| != inf, m, 0): a row max replaced by 0 where it is not
  // finite (JAX's logsumexp), where the recipe allows it.
  if (auto sel = dyn_cast<arith::SelectOp>(op);
      sel && n.op == RecipeOp::ReduceMax && recipe.finiteMaxGuard) {
    FloatAttr zero = constantValue(sel.getFalseValue(), &body);
    SmallVector<Operation *> tests;
    if (zero && zero.getValue().isZero() &&
        isFiniteTestOf(sel.getCondition(), sel.getTrueValue(), body, tests)) {
      llvm::append_range(st.ops, tests);
      return matchScalar(w, sel.getTrueValue(), body);
    }
  }
  // select(all of the row is -inf, 0, p): a frontend's guard for fully
  // masked rows, which the op defines as 0 already.
  if (auto sel = dyn_cast<arith::SelectOp>(op); sel && recipe.zeroMaskedRows) {
    FloatAttr zero = constantValue(sel.getTrueValue(), &body);
    if (zero && zero.getValue().isZero() &&
        succeeded(matchMaskedRowGuard(sel.getCondition(), body)))
      return matchScalar(w, sel.getFalseValue(), body);
  }

  if (n.op == RecipeOp::CausalMask)
    return matchCausalMask(w, op, body);
  if (n.op == RecipeOp::MaskIgnored)
    return matchMaskIgnored(w, op, body);
  if (n.op == RecipeOp::Gather)
    return matchGather(w, op, body);

  // A product as written, or else as its factors in any association.
  auto orAsProduct = [&](function_ref<LogicalResult()> asWritten) {
    State before = st;
    if (succeeded(asWritten()))
      return success();
    st = std::move(before);
    return matchProduct(w, s, body);
  };
  switch (n.op) {
  case RecipeOp::Div:
    if (isa<arith::DivFOp, arith::MulFOp>(op))
      reach(w.node);
    if (isa<arith::DivFOp>(op))
      return orAsProduct([&] {
        return matchPair({n.operands[0]}, {n.operands[1]}, op->getOperand(0),
                         op->getOperand(1), body, /*commutative=*/false);
      });
    // a / b as a * (1 / b), the reciprocal in any spelling.
    if (isa<arith::MulFOp>(op))
      return orAsProduct([&] {
        return matchPair({n.operands[0]}, {n.operands[1], -4},
                         op->getOperand(0), op->getOperand(1), body,
                         /*commutative=*/true);
      });
    break;
  case RecipeOp::Mul:
    // x * p as x / c, the param its reciprocal (scores / sqrt(d)).
    if (auto div = dyn_cast<arith::DivFOp>(op)) {
      for (auto [x, p] : {std::pair(n.operands[0], n.operands[1]),
                          std::pair(n.operands[1], n.operands[0])}) {
        const RecipeNode &pn = recipe.nodes[p];
        FloatAttr c = constantValue(div.getRhs(), &body);
        if (pn.op != RecipeOp::Param || !c || c.getValue().isZero())
          continue;
        reach(w.node);
        if (failed(bindParam(pn.param,
                             FloatAttr::get(c.getType(),
                                            1.0 / c.getValueAsDouble()))))
          return failure();
        return matchScalar({x}, div.getLhs(), body);
      }
    }
    if (n.operands[0] == n.operands[1]) {
      // x * x as powi(x, 2) or pow(x, 2.0).
      if (isa<math::FPowIOp, math::PowFOp>(op)) {
        APInt i;
        FloatAttr f = constantValue(op->getOperand(1), &body);
        bool two = (f && f.getValueAsDouble() == 2.0) ||
                   (matchPattern(op->getOperand(1), m_ConstantInt(&i)) &&
                    i == 2);
        if (!two)
          return fail("expected the power 2");
        return matchScalar({n.operands[0]}, op->getOperand(0), body);
      }
    }
    break;
  default:
    break;
  }
  if (n.op == RecipeOp::Powi)
    return fail("powi recipes depend on params");
  if (!isOpKind(op, n.op)) {
    // x^3 as fpowi(x, 3) or powf(x, 3.0); a product divided.
    if ((n.op == RecipeOp::Mul || n.op == RecipeOp::Div) &&
        isa<arith::MulFOp, arith::DivFOp, math::FPowIOp, math::PowFOp>(op))
      return matchProduct(w, s, body);
    return fail(Twine("expected ") + stringifyRecipeOp(n.op) + ", found " +
                op->getName().getStringRef());
  }
  if (n.operands.size() != op->getNumOperands())
    return fail("operand count mismatch");
  reach(w.node);
  if (n.operands.size() == 1)
    return matchScalar({n.operands[0]}, op->getOperand(0), body);
  auto asWritten = [&] {
    return matchPair({n.operands[0]}, {n.operands[1]}, op->getOperand(0),
                     op->getOperand(1), body, isCommutative(n.op));
  };
  if (n.op == RecipeOp::Mul)
    return orAsProduct(asWritten);
  return asWritten();
}
