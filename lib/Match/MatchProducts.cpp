//===- MatchProducts.cpp - Products matched as multisets of factors -------===//
//
// Frontends associate a product of several factors either way:
// `0.5 * x * (1 + erf(x / sqrt 2))` is exported as x * ((erf(..) + 1) * 0.5)
// by one and as (0.5 * x) * (1 + erf(..)) by another, and x^3 as
// fpowi(x, 3), powf(x, 3.0) or x * x * x. When the recipe's product does
// not match the IR's as written, both are flattened into factors (through
// multiplies, divisions and small integer powers; in one body or through the
// elementwise ops that compute the factors) and the recipe's factors are
// matched against the IR's, in any order.
//
// Reassociating a product of n factors changes its rounding by at most
// about n - 1 ulp (each multiply rounds once): the spellings differ by as
// much as a multiply by a reciprocal and a divide do, which the matcher
// accepts too. Sums are not reassociated: their rounding can differ by any
// amount where terms cancel.
//
//===----------------------------------------------------------------------===//

#include "Matcher.h"

using namespace mlir;
using namespace mlir::fuel;
using namespace mlir::fuel::match;

/// Factors of a product beyond this many are not reassociated (the search
/// tries assignments of recipe factors to IR factors).
static constexpr size_t kMaxFactors = 8;
/// The most integer power spelled as a repeated factor.
static constexpr int64_t kMaxPowerFactors = 4;
/// The matches tried in one product search at most.
static constexpr unsigned kMaxProductTries = 4096;

/// The integer exponent of `op` when it is `x^k`, 2 <= k <= kMaxPowerFactors
/// (fpowi with a constant integer or powf with a constant integral float).
static std::optional<int64_t> smallIntegerPower(Operation *op,
                                                const Body &body) {
  int64_t k = 0;
  if (isa<math::FPowIOp>(op)) {
    APInt i;
    if (!matchPattern(op->getOperand(1), m_ConstantInt(&i)))
      return std::nullopt;
    k = i.getSExtValue();
  } else if (isa<math::PowFOp>(op)) {
    FloatAttr c = constantValue(op->getOperand(1), &body);
    if (!c)
      return std::nullopt;
    double v = c.getValueAsDouble();
    if (v != std::trunc(v) || std::abs(v) > kMaxPowerFactors)
      return std::nullopt;
    k = static_cast<int64_t>(v);
  } else {
    return std::nullopt;
  }
  if (k < 2 || k > kMaxPowerFactors)
    return std::nullopt;
  return k;
}

namespace {
/// One factor of a flattened product: a recipe value to a power (in
/// quarters, 4 or -4), or an IR scalar in a body, inverted or not.
struct IRFactor {
  Value value;
  unsigned body; // Index into ProductSearch::bodies.
  bool inverted;
};
} // namespace

/// The recipe's factors of `node`, raised to `sign` (1 or -1): through Mul,
/// and Div (the divisor inverted); constant factors of 1 left out. `chain`:
/// the Mul and Div nodes passed through.
static void recipeFactors(const Recipe &recipe, unsigned node, int sign,
                          SmallVectorImpl<Want> &out,
                          SmallVectorImpl<unsigned> &chain) {
  const RecipeNode &n = recipe.nodes[node];
  if (n.op == RecipeOp::Mul || n.op == RecipeOp::Div) {
    chain.push_back(node);
    recipeFactors(recipe, n.operands[0], sign, out, chain);
    recipeFactors(recipe, n.operands[1],
                  n.op == RecipeOp::Div ? -sign : sign, out, chain);
    return;
  }
  if (n.op == RecipeOp::Const && n.constant == 1.0)
    return;
  out.push_back({node, 4 * sign});
}

LogicalResult Matcher::matchProduct(Want w, Value s, const Body &body) {
  SmallVector<Want> wanted;
  SmallVector<unsigned> chain;
  recipeFactors(recipe, w.node, w.quarters > 0 ? 1 : -1, wanted, chain);

  // The IR's factors, and the bodies they live in: `body`, and those of the
  // elementwise producers of its inputs that compute part of the product.
  std::deque<Body> bodies;
  bodies.push_back(body);
  SmallVector<Operation *> producers;
  SmallVector<IRFactor> factors;
  bool tooMany = false;
  std::function<void(Value, unsigned, bool)> collect = [&](Value v,
                                                           unsigned b,
                                                           bool inverted) {
    if (factors.size() > kMaxFactors) {
      tooMany = true;
      return;
    }
    const Body &in = bodies[b];
    if (FloatAttr c = constantValue(v, &in); c && c.getValueAsDouble() == 1.0)
      return;
    Operation *op = v.getDefiningOp();
    if (op && op->getBlock() == in.block()) {
      if (isa<arith::MulFOp>(op)) {
        collect(op->getOperand(0), b, inverted);
        collect(op->getOperand(1), b, inverted);
        return;
      }
      if (isa<arith::DivFOp>(op)) {
        collect(op->getOperand(0), b, inverted);
        collect(op->getOperand(1), b, !inverted);
        return;
      }
      if (std::optional<int64_t> k = smallIntegerPower(op, in)) {
        for (int64_t i = 0; i < *k; ++i)
          collect(op->getOperand(0), b, inverted);
        return;
      }
    }
    // An input computed by an elementwise op whose result is a product
    // too (TOSA's one op per multiply).
    if (auto read = readInput(v, in)) {
      if (auto producer = elementwiseProducer(read->first, read->second)) {
        Operation *def = producer->first.getDefiningOp();
        if (def && def->getBlock() == producer->second.block() &&
            (isa<arith::MulFOp, arith::DivFOp>(def) ||
             smallIntegerPower(def, producer->second))) {
          producers.push_back(read->first.getDefiningOp());
          bodies.push_back(std::move(producer->second));
          collect(producer->first, bodies.size() - 1, inverted);
          return;
        }
      }
    }
    factors.push_back({v, b, inverted});
  };
  collect(s, 0, false);

  // The product is found, whatever its factors turn out to be.
  for (unsigned node : chain)
    reach(node);
  if (tooMany || wanted.size() > kMaxFactors)
    return failOverTies("a product has too many factors to reassociate");
  if (factors.size() != wanted.size())
    return failOverTies("a product of " + Twine(factors.size()) +
                        " factors where the recipe has " +
                        Twine(wanted.size()));
  // Factors with structure first: constants and params match any constant,
  // so they go last, once the rest is bound.
  llvm::stable_sort(wanted, [&](const Want &a, const Want &b) {
    return !isScalarKind(recipe.nodes[a.node].op) &&
           isScalarKind(recipe.nodes[b.node].op);
  });

  SmallVector<bool> used(factors.size(), false);
  unsigned tries = 0;
  std::function<LogicalResult(size_t)> assign = [&](size_t i) {
    if (i == wanted.size())
      return success();
    for (auto [j, f] : llvm::enumerate(factors)) {
      if (used[j])
        continue;
      if (++tries > kMaxProductTries)
        return failure();
      // An inverted IR factor is matched by the inverse of the wanted one.
      Want want = wanted[i];
      if (f.inverted)
        want.quarters = -want.quarters;
      State before = st;
      used[j] = true;
      if (succeeded(matchScalar(want, f.value, bodies[f.body])) &&
          succeeded(assign(i + 1)))
        return success();
      used[j] = false;
      st = std::move(before);
    }
    return failure();
  };
  if (failed(assign(0)))
    return tries > kMaxProductTries
               ? failOverTies("a product has too many factors to reassociate")
               : failure();
  llvm::append_range(st.ops, producers);
  return success();
}
