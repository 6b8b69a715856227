//===- ApproximateMath.cpp - Vectorizable math functions ------------------===//
//
// libm has no vector entry points the LLVM dialect lowers to, so a
// `math.exp` on a vector becomes one call per lane. Polynomial
// approximations compute the same functions with vector arithmetic; this
// applies them to the f32 math ops on vectors only, leaving scalar code on
// libm. `exp` has one of its own (below), the row ops' hot loop; the other
// functions use upstream's (Cephes-style, accurate to a few ulp in f32).
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Codegen/Schedules.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::fuel;

namespace {
/// `exp(x)` on a vector of f32 as 2^k * exp(r), x = k ln 2 + r, |r| <= ln 2
/// / 2, in 15 vector ops where upstream's pattern takes about 22 (it clamps
/// x and k on both sides, rounds and converts k, and adds the polynomial's
/// constant term apart):
///
///   x' = max(x, -88)                 (one op that keeps a NaN)
///   t  = x' * log2(e) + (1.5 * 2^23 + 127), clamped to k <= 127
///        (the float adds k + 127 to the low bits of 1.5 * 2^23: rounding
///        to an integer, and the exponent field of 2^k, in one fma)
///   k  = t - (1.5 * 2^23 + 127)
///   r  = x' - k ln 2                 (ln 2 in two parts, two fmas)
///   y  = 1 + r + r^2 P(r)            (Cephes' expf polynomial, Horner)
///   exp(x) = y * bitcast<f32>(bitcast<i32>(t) << 23)
///
/// Where it differs from exp rounded once: at most 2 ulp over the normal
/// range up to x = 88.38, 5 above it (k is clamped to 127, so r reaches
/// ln 2 for x in (88.38, 88.72]); results below 2^-126 * 0.73 (x < -87.68)
/// are 0, as in upstream's (no subnormal results); x > 88.72 gives +inf
/// (y * 2^127 overflows), -inf gives 0 and NaN gives NaN (2^k's bits are
/// then 0 or tiny, and NaN times it is NaN). test_approximate_math.py
/// measures it in ulps against float64 over the whole range.
struct ExpF32Approximation : public OpRewritePattern<math::ExpOp> {
  ExpF32Approximation(MLIRContext *context)
      : OpRewritePattern(context, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(math::ExpOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<VectorType>(op.getType());
    if (!type || !type.getElementType().isF32() || type.isScalable())
      return rewriter.notifyMatchFailure(op, "not a fixed vector of f32");
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    auto i32 = type.clone(b.getI32Type());
    auto f32 = [&](float value) -> Value {
      return arith::ConstantOp::create(
          b, DenseElementsAttr::get(type, b.getF32FloatAttr(value)));
    };
    auto fma = [&](Value a, Value x, Value c) -> Value {
      return math::FmaOp::create(b, a, x, c);
    };
    // select(bound > x, bound, x): the maximum, and x where x is NaN (one
    // x86 max instruction; arith.maximumf needs a NaN check besides).
    auto clampBelow = [&](Value x, Value bound) -> Value {
      Value below = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT,
                                          bound, x);
      return arith::SelectOp::create(b, below, bound, x);
    };
    auto clampAbove = [&](Value x, Value bound) -> Value {
      Value above = arith::CmpFOp::create(b, arith::CmpFPredicate::OLT,
                                          bound, x);
      return arith::SelectOp::create(b, above, bound, x);
    };

    // 1.5 * 2^23: adding it rounds a float of magnitude below 2^22 to an
    // integer held in the low mantissa bits.
    constexpr float kRound = 12582912.0f;
    constexpr float kBias = kRound + 127.0f;
    Value x = clampBelow(op.getOperand(), f32(-88.0f));
    Value t = fma(x, f32(1.44269504088896341f), f32(kBias));
    t = clampAbove(t, f32(kBias + 127.0f));
    Value k = arith::SubFOp::create(b, t, f32(kBias));
    // ln 2 = 0.693359375 - 2.12194440e-4 (the first part exact in 9 bits,
    // so k times it is exact).
    Value r = fma(k, f32(-0.693359375f), x);
    r = fma(k, f32(2.12194440e-4f), r);
    Value p = f32(1.9875691500e-4f);
    for (float c : {1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f,
                    1.6666665459e-1f, 5.0000001201e-1f})
      p = fma(p, r, f32(c));
    Value y = fma(fma(p, r, f32(1.0f)), r, f32(1.0f));
    Value bits = arith::BitcastOp::create(b, i32, t);
    Value shift = arith::ConstantOp::create(
        b, DenseElementsAttr::get(i32, b.getI32IntegerAttr(23)));
    Value scale = arith::BitcastOp::create(
        b, type, arith::ShLIOp::create(b, bits, shift));
    rewriter.replaceOpWithNewOp<arith::MulFOp>(op, y, scale);
    return success();
  }
};
} // namespace

void mlir::fuel::approximateVectorMath(Operation *root) {
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) {
    if (!isa<math::MathDialect>(op->getDialect()) || op->getNumResults() != 1)
      return;
    auto vector = dyn_cast<VectorType>(op->getResult(0).getType());
    if (vector && vector.getElementType().isF32())
      ops.push_back(op);
  });
  if (ops.empty())
    return;
  RewritePatternSet patterns(root->getContext());
  patterns.add<ExpF32Approximation>(root->getContext());
  populateMathPolynomialApproximationPatterns(
      patterns, [](StringRef) { return true; });
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  (void)applyOpPatternsGreedily(ops, std::move(patterns), config);
}
