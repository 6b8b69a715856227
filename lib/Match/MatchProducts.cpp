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
/// One factor of a flattened product: an IR scalar in a body, inverted or
/// not.
struct IRFactor {
  Value value;
  unsigned body; // Index into the bodies of matchProduct.
  bool inverted;
};

/// A way to take an IR product apart: its factors, and the elementwise
/// producers whose values were taken apart on the way (they become part of
/// the match).
struct Cut {
  SmallVector<IRFactor> factors;
  SmallVector<Operation *> producers;
};
} // namespace

/// The cuts of a product beyond this many are not tried.
static constexpr size_t kMaxCuts = 64;
/// The values a product's walk visits at most.
static constexpr unsigned kMaxVisits = 256;

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
  // Each product inside the product may be a factor itself or be taken
  // apart (a SiLU's quotient feeding a product is one factor to a recipe
  // that reads SiLU's result, two to one that spells SiLU out): every way
  // of cutting is a candidate.
  std::deque<Body> bodies;
  bodies.push_back(body);
  // (A budget on the walk: a product whose factors share subproducts, x^2
  // squared and squared again, would be walked once per path.)
  unsigned visits = 0;
  std::function<SmallVector<Cut>(Value, unsigned, bool, bool)> cutsOf =
      [&](Value v, unsigned b, bool inverted, bool mustSplit) {
        SmallVector<Cut> cuts;
        if (++visits > kMaxVisits)
          return cuts;
        const Body &in = bodies[b];
        if (FloatAttr c = constantValue(v, &in);
            c && c.getValueAsDouble() == 1.0) {
          cuts.emplace_back();
          return cuts;
        }
        if (!mustSplit)
          cuts.push_back(Cut{{{v, b, inverted}}, {}});
        // The factors of `v`'s op, in the body `at`.
        SmallVector<std::pair<Value, bool>> parts;
        unsigned at = b;
        Operation *crossed = nullptr;
        Operation *op = v.getDefiningOp();
        if (!op || op->getBlock() != in.block()) {
          // An input computed by an elementwise op (TOSA's one op per
          // multiply).
          op = nullptr;
          if (auto read = readInput(v, in))
            if (auto producer =
                    elementwiseProducer(read->first, read->second)) {
              Operation *def = producer->first.getDefiningOp();
              if (def && def->getBlock() == producer->second.block()) {
                crossed = read->first.getDefiningOp();
                bodies.push_back(std::move(producer->second));
                at = bodies.size() - 1;
                op = def;
              }
            }
        }
        if (!op)
          return cuts;
        if (isa<arith::MulFOp>(op)) {
          parts = {{op->getOperand(0), inverted},
                   {op->getOperand(1), inverted}};
        } else if (isa<arith::DivFOp>(op)) {
          parts = {{op->getOperand(0), inverted},
                   {op->getOperand(1), !inverted}};
        } else if (std::optional<int64_t> k =
                       smallIntegerPower(op, bodies[at])) {
          for (int64_t i = 0; i < *k; ++i)
            parts.push_back({op->getOperand(0), inverted});
        } else {
          return cuts;
        }
        // The cartesian product of the parts' cuts.
        SmallVector<Cut> split = {Cut{{},
                                      crossed
                                          ? SmallVector<Operation *>{crossed}
                                          : SmallVector<Operation *>{}}};
        for (auto [part, inv] : parts) {
          SmallVector<Cut> partCuts = cutsOf(part, at, inv, false);
          SmallVector<Cut> next;
          for (const Cut &left : split)
            for (const Cut &right : partCuts) {
              if (next.size() >= kMaxCuts ||
                  left.factors.size() + right.factors.size() > kMaxFactors)
                continue;
              Cut both = left;
              llvm::append_range(both.factors, right.factors);
              llvm::append_range(both.producers, right.producers);
              next.push_back(std::move(both));
            }
          split = std::move(next);
        }
        for (Cut &cut : split)
          if (cuts.size() < kMaxCuts)
            cuts.push_back(std::move(cut));
        return cuts;
      };
  // (The product as written was tried before: it is taken apart.) Not
  // when the IR is no product at all: one factor for a recipe of several.
  Operation *rootOp = s.getDefiningOp();
  if (!rootOp || rootOp->getBlock() != body.block() ||
      !(isa<arith::MulFOp, arith::DivFOp>(rootOp) ||
        smallIntegerPower(rootOp, body)))
    return fail("expected a product");
  SmallVector<Cut> cuts = cutsOf(s, 0, false, /*mustSplit=*/true);

  // The product is found, whatever its factors turn out to be.
  for (unsigned node : chain)
    reach(node);
  if (wanted.size() > kMaxFactors)
    return failOverTies("a product has too many factors to reassociate");
  auto sameCount = [&](const Cut &cut) {
    return cut.factors.size() == wanted.size();
  };
  // Factors with structure first: constants and params match any constant,
  // so they go last, once the rest is bound.
  llvm::stable_sort(wanted, [&](const Want &a, const Want &b) {
    return !isScalarKind(recipe.nodes[a.node].op) &&
           isScalarKind(recipe.nodes[b.node].op);
  });

  // Where the IR has another number of factors however it is cut, that is
  // what the report says, not where a pairing of the factors failed.
  size_t most = 0;
  for (const Cut &cut : cuts)
    most = std::max(most, cut.factors.size());
  std::string whyBefore = *why;
  unsigned depthBefore = whyDepth;
  auto failOnFactors = [&]() -> LogicalResult {
    if (most == wanted.size())
      return failure();
    *why = std::move(whyBefore);
    whyDepth = depthBefore;
    return failOverTies("a product of " + Twine(most) +
                        " factors where the recipe has " +
                        Twine(wanted.size()));
  };
  unsigned tries = 0;
  for (const Cut &cut : cuts) {
    if (!sameCount(cut))
      continue;
    ArrayRef<IRFactor> factors = cut.factors;
    SmallVector<bool> used(factors.size(), false);
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
    State before = st;
    if (succeeded(assign(0))) {
      llvm::append_range(st.ops, cut.producers);
      return success();
    }
    st = std::move(before);
    if (tries > kMaxProductTries)
      return failOverTies("a product has too many factors to reassociate");
  }
  return failOnFactors();
}
