//===- FuelFolds.cpp - Folds and canonicalizations of fuel.fused ----------===//
//
// Folds that return an existing value or a constant, and canonicalization
// patterns that rewrite a fused op into a simpler one. Every rewrite keeps
// the op's value, up to the usual floating-point caveats noted per rule.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/IR/FuelOps.h"
#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::fuel;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Whether `v` is a constant float splat equal to `value` (which matches both
/// signs of zero when it is 0).
static bool isFloatSplat(Value v, double value) {
  DenseFPElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)) || !attr.isSplat())
    return false;
  return attr.getSplatValue<APFloat>().convertToDouble() == value;
}

static bool isFloatSplat(Attribute attr, double value) {
  auto dense = dyn_cast_or_null<DenseFPElementsAttr>(attr);
  return dense && dense.isSplat() &&
         dense.getSplatValue<APFloat>().convertToDouble() == value;
}

/// A splat constant of `value` shaped like `type`, if `type` is static.
static Attribute getFloatSplat(Type type, double value) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() ||
      !isa<FloatType>(tensor.getElementType()))
    return {};
  return DenseElementsAttr::get(
      tensor, FloatAttr::get(tensor.getElementType(), value));
}

//===----------------------------------------------------------------------===//
// Folds
//===----------------------------------------------------------------------===//

Operation *FuelDialect::materializeConstant(OpBuilder &builder,
                                            Attribute value, Type type,
                                            Location loc) {
  return arith::ConstantOp::materialize(builder, value, type, loc);
}

/// The upstream gradient operand of a backward op (`g`, or `do` for the
/// attention backwards), if any.
static Value getUpstreamGradient(FusedOp op) {
  if (op.getInfo().family != Family::Backward)
    return {};
  if (Value g = op.getOperandNamed("g"))
    return g;
  return op.getOperandNamed("do");
}

LogicalResult FusedOp::fold(FoldAdaptor adaptor,
                            SmallVectorImpl<OpFoldResult> &results) {
  // Params in canonical form: defaults and explicit "unset" dropped, so
  // equal params print and compare equal. (In place: no new results.)
  DictionaryAttr canonical = canonicalizeParams(getInfo(), getParams());
  if (canonical != getParams()) {
    setParamsAttr(canonical);
    return success();
  }
  if (getNumResults() != 1)
    return failure();
  Type resultType = getResult(0).getType();
  auto operandAttr = [&](Value v) -> Attribute {
    for (auto [operand, attr] : llvm::zip(getOperands(), adaptor.getInputs()))
      if (operand == v)
        return attr;
    return {};
  };

  // inplace_affine(x) {mul = 1, add = 0} -> x, on tensors. (With add = +0.0
  // an input of -0.0 would become +0.0; the two compare equal.)
  if (auto affine = InplaceAffineView::match(*this);
      affine && affine->getMul() == 1.0 && affine->getAdd() == 0.0) {
    results.push_back(affine->getX());
    return success();
  }

  // softmax_last_dim(x) over a last dim of size 1 -> 1.
  if (isFusedOpKind(*this, FusedOpKind::SoftmaxLastDim) &&
      cast<ShapedType>(resultType).getShape().back() == 1) {
    if (Attribute ones = getFloatSplat(resultType, 1.0)) {
      results.push_back(ones);
      return success();
    }
  }

  // powi_backward(x, g) {exp = 1} -> g; {exp = 0} -> 0.
  if (auto powi = PowiBackwardView::match(*this)) {
    int64_t exp = powi->getExp();
    if (exp == 1) {
      results.push_back(powi->getG());
      return success();
    }
    if (exp == 0)
      if (Attribute zeros = getFloatSplat(resultType, 0.0)) {
        results.push_back(zeros);
        return success();
      }
  }

  // rope(x, cos = 1, sin = 0) -> x.
  if (auto rope = RopeView::match(*this);
      rope && isFloatSplat(operandAttr(rope->getCos()), 1.0) &&
      isFloatSplat(operandAttr(rope->getSin()), 0.0)) {
    results.push_back(rope->getX());
    return success();
  }

  // backward(..., g = 0) -> 0: every backward is linear in its upstream
  // gradient.
  if (Value g = getUpstreamGradient(*this))
    if (isFloatSplat(g, 0.0))
      if (Attribute zeros = getFloatSplat(resultType, 0.0)) {
        results.push_back(zeros);
        return success();
      }
  return failure();
}

//===----------------------------------------------------------------------===//
// Canonicalization patterns
//===----------------------------------------------------------------------===//

namespace {

/// Pattern: inplace_affine(inplace_affine(x, m1, a1), m2, a2)
///       -> inplace_affine(x, m2 * m1, m2 * a1 + a2), on tensors, when the
/// inner op has no other use. The composed params are computed in f64, so
/// the result may differ from the chain by the rounding of one step.
struct ComposeInplaceAffine : OpRewritePattern<FusedOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(FusedOp op,
                                PatternRewriter &rewriter) const override {
    auto outer = InplaceAffineView::match(op);
    if (!outer || op.getNumResults() != 1)
      return rewriter.notifyMatchFailure(op, "not inplace_affine on a tensor");
    auto inner =
        InplaceAffineView::match(outer->getX().getDefiningOp<FusedOp>());
    if (!inner || inner->getOperation().getNumResults() != 1)
      return rewriter.notifyMatchFailure(op, "operand is not inplace_affine");
    if (!inner->getOperation()->hasOneUse())
      return rewriter.notifyMatchFailure(op, "inner op has other uses");
    double m1 = inner->getMul(), a1 = inner->getAdd();
    double m2 = outer->getMul(), a2 = outer->getAdd();
    Type f64 = rewriter.getF64Type();
    NamedAttribute params[] = {
        rewriter.getNamedAttr("mul", rewriter.getFloatAttr(f64, m2 * m1)),
        rewriter.getNamedAttr("add", rewriter.getFloatAttr(f64, m2 * a1 + a2))};
    rewriter.replaceOpWithNewOp<FusedOp>(op, op.getKind(), inner->getX(),
                                         params);
    return success();
  }
};

/// Pattern: fused_linear(a, b, bias = 0) -> matmul(a, b), as linalg.matmul
/// over a collapsed to [M', K] (M' all leading dims), accumulating in f32
/// for f16/bf16 like the fused op. Adding a zero bias to a sum that starts
/// from +0.0 changes nothing, so the rewrite is exact.
struct FusedLinearZeroBiasToMatmul : OpRewritePattern<FusedOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(FusedOp op,
                                PatternRewriter &rewriter) const override {
    auto linear = FusedLinearView::match(op);
    if (!linear)
      return rewriter.notifyMatchFailure(op, "not fused_linear");
    if (!isFloatSplat(linear->getBias(), 0.0))
      return rewriter.notifyMatchFailure(op, "bias is not a zero constant");
    Location loc = op.getLoc();
    Value a = linear->getA(), b = linear->getB();
    auto aType = cast<RankedTensorType>(a.getType());
    auto resultType = cast<RankedTensorType>(op.getResult(0).getType());
    Type elt = resultType.getElementType();
    Type accType = elt.isF16() || elt.isBF16() ? rewriter.getF32Type() : elt;

    // 1. Collapse a[..., M, K] to a[M', K].
    int64_t rank = aType.getRank();
    Value a2d = a;
    if (rank > 2) {
      SmallVector<ReassociationIndices> reassoc(2);
      for (int64_t d = 0; d < rank - 1; ++d)
        reassoc[0].push_back(d);
      reassoc[1].push_back(rank - 1);
      a2d = tensor::CollapseShapeOp::create(rewriter, loc, a, reassoc);
    }
    // 2. C[M', N] = sum_k a[M', k] * b[k, N], from a +0.0 fill.
    OpFoldResult m = tensor::getMixedSize(rewriter, loc, a2d, 0);
    OpFoldResult n = tensor::getMixedSize(rewriter, loc, b, 1);
    Value init = tensor::EmptyOp::create(rewriter, loc,
                                         ArrayRef<OpFoldResult>{m, n}, accType);
    Value zero = arith::ConstantOp::create(rewriter, loc, accType,
                                           rewriter.getZeroAttr(accType));
    Value acc = linalg::FillOp::create(rewriter, loc, zero, init).getResult(0);
    Value c = linalg::MatmulOp::create(rewriter, loc, ValueRange{a2d, b}, acc)
                  .getResult(0);
    // 3. Back to the element type and to [..., M, N].
    if (accType != elt)
      c = arith::TruncFOp::create(
          rewriter, loc,
          RankedTensorType::get(cast<ShapedType>(c.getType()).getShape(), elt),
          c);
    if (rank > 2) {
      SmallVector<ReassociationIndices> reassoc(2);
      for (int64_t d = 0; d < rank - 1; ++d)
        reassoc[0].push_back(d);
      reassoc[1].push_back(rank - 1);
      SmallVector<OpFoldResult> outShape =
          tensor::getMixedSizes(rewriter, loc, a);
      outShape.back() = n;
      c = tensor::ExpandShapeOp::create(rewriter, loc, resultType, c, reassoc,
                                        outShape);
    }
    rewriter.replaceOp(op, c);
    return success();
  }
};

} // namespace

void FusedOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                          MLIRContext *context) {
  results.add<ComposeInplaceAffine, FusedLinearZeroBiasToMatmul>(context);
}
