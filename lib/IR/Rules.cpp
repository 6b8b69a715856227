//===- Rules.cpp - Shape and dtype rules: elementwise, linear, conv, loss -===//
//
// Each rule runs after the generic operand and params checks (see
// RuleContext.h), checks the op's shape and dtype rules on static dims, and
// infers the result types. Operand indices follow the op's record.
//
//===----------------------------------------------------------------------===//

#include "RuleContext.h"
#include "FuelFused/IR/FuelAttrs.h"
#include "FuelFused/IR/FusedOpViews.h"

using namespace mlir;
using namespace mlir::fuel;

/// The more static of two dims that are known not to conflict.
static int64_t mergeDims(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) ? b : a;
}

/// Every float operand shares the element type of the first; the result has
/// the type of the first operand.
LogicalResult rules::sameAsFirst(RuleContext &ctx) {
  SmallVector<unsigned> all;
  for (unsigned i = 0, e = ctx.info.operands.size(); i < e; ++i)
    all.push_back(i);
  if (failed(ctx.expectSameElementType(all)))
    return failure();
  ctx.addResult(ctx.type(0));
  return success();
}

/// (x, g) -> dx: g has x's shape and element type; dx has x's type.
LogicalResult rules::sameShapePair(RuleContext &ctx) {
  if (failed(ctx.expectSameElementType({0, 1})) ||
      failed(ctx.expectSameShape(0, 1)))
    return failure();
  ctx.addResult(ctx.type(0));
  return success();
}

/// a[..., M, K] @ b[K, N] + bias[N] -> [..., M, N].
LogicalResult rules::fusedLinear(RuleContext &ctx) {
  using V = FusedLinearView;
  if (failed(ctx.expectSameElementType({V::A, V::B, V::Bias})) ||
      failed(ctx.expectDimsEqual(V::A, -1, V::B, 0)) ||
      failed(ctx.expectDimsEqual(V::Bias, 0, V::B, 1)))
    return failure();
  SmallVector<int64_t> shape(ctx.type(V::A).getShape());
  shape.back() = mergeDims(ctx.dim(V::B, 1), ctx.dim(V::Bias, 0));
  ctx.addTensorResult(shape, ctx.elementType(V::A));
  return success();
}

/// x[..., S, D] with cos, sin [S, D]; D even.
LogicalResult rules::rope(RuleContext &ctx) {
  using V = RopeView;
  if (failed(ctx.expectSameElementType({V::X, V::Cos, V::Sin})) ||
      failed(ctx.expectDimsEqual(V::Cos, 0, V::X, -2)) ||
      failed(ctx.expectDimsEqual(V::Cos, 1, V::X, -1)) ||
      failed(ctx.expectSameShape(V::Cos, V::Sin)))
    return failure();
  int64_t d = ctx.dim(V::X, -1);
  if (!ShapedType::isDynamic(d) && d % 2 != 0)
    return ctx.fail("shape rule", "the rotated dim D (" + Twine(d) +
                                      ") must be even");
  ctx.addResult(ctx.type(V::X));
  return success();
}

/// g has x's rank; each dim of g equals x's or is 1 (a reduced dim).
LogicalResult rules::reduceMaxToBackward(RuleContext &ctx) {
  using V = ReduceMaxToBackwardView;
  if (failed(ctx.expectSameElementType({V::X, V::G})))
    return failure();
  if (ctx.rank(V::X) != ctx.rank(V::G))
    return ctx.fail("shape rule", "g must have the rank of x (" +
                                      Twine(ctx.rank(V::X)) + "), got " +
                                      Twine(ctx.rank(V::G)));
  for (int64_t d = 0, e = ctx.rank(V::X); d < e; ++d) {
    int64_t g = ctx.dim(V::G, d);
    if (!ShapedType::isDynamic(g) && g != 1 &&
        dimsConflict(g, ctx.dim(V::X, d)))
      return ctx.fail("shape rule",
                      "g dim " + Twine(d) + " (" + Twine(g) +
                          ") must be 1 (reduced) or equal x dim " + Twine(d) +
                          " (" + formatDim(ctx.dim(V::X, d)) + ")");
  }
  ctx.addResult(ctx.type(V::X));
  return success();
}

/// On tensors: y has x's type. On a memref: written in place, no result.
LogicalResult rules::inplaceAffine(RuleContext &ctx) {
  using V = InplaceAffineView;
  if (!isa<MemRefType>(ctx.type(V::X)))
    ctx.addResult(ctx.type(V::X));
  return success();
}

/// logits[..., V], targets[...] -> f32 loss: [] (mean, sum) or targets'
/// shape (none).
LogicalResult rules::crossEntropy(RuleContext &ctx) {
  using V = FusedSoftmaxCrossEntropyView;
  auto params = ctx.params<FusedSoftmaxCrossEntropyParams>();
  if (ctx.rank(V::Targets) != ctx.rank(V::Logits) - 1)
    return ctx.fail("shape rule",
                    "targets must have rank " + Twine(ctx.rank(V::Logits) - 1) +
                        " (logits' rank minus the class dim), got " +
                        Twine(ctx.rank(V::Targets)));
  for (int64_t d = 0, e = ctx.rank(V::Targets); d < e; ++d)
    if (failed(ctx.expectDimsEqual(V::Targets, d, V::Logits, d)))
      return failure();
  Type f32 = Float32Type::get(ctx.type(V::Logits).getContext());
  auto reduction = params.getReduction();
  if (reduction == Reduction::None)
    ctx.addTensorResult(ctx.type(V::Targets).getShape(), f32);
  else
    ctx.addTensorResult({}, f32);
  return success();
}

//===----------------------------------------------------------------------===//
// Convolutions
//===----------------------------------------------------------------------===//

/// Checks `divisor` divides dim `d` of operand `i` (when static).
static LogicalResult expectDivides(RuleContext &ctx, unsigned i, int64_t d,
                                   int64_t divisor, StringRef what) {
  int64_t v = ctx.dim(i, d);
  if (ShapedType::isDynamic(v) || v % divisor == 0)
    return success();
  return ctx.fail("shape rule", what + " (" + Twine(divisor) +
                                    ") must divide " + ctx.name(i) + " dim " +
                                    Twine(d) + " (" + Twine(v) + ")");
}

/// x[B, C, H, W], w[F, C/groups, kh, kw], bias[F]? -> [B, F, Ho, Wo] with
/// Ho = (H + 2 * padding - kh) / stride + 1.
LogicalResult rules::conv2d(RuleContext &ctx) {
  using V = Conv2dView;
  auto params = ctx.params<Conv2dParams>();
  if (failed(ctx.expectSameElementType({V::X, V::W, V::Bias})))
    return failure();
  int64_t groups = params.getGroups();
  auto stride = params.getStride();
  auto padding = params.getPadding();
  if (failed(expectDivides(ctx, V::X, 1, groups, "groups")) ||
      failed(expectDivides(ctx, V::W, 0, groups, "groups")))
    return failure();
  int64_t c = ctx.dim(V::X, 1);
  if (!ShapedType::isDynamic(c) &&
      failed(ctx.expectDimEquals(V::W, 1, c / groups, "C / groups")))
    return failure();
  if (ctx.has(V::Bias) && failed(ctx.expectDimsEqual(V::Bias, 0, V::W, 0)))
    return failure();
  SmallVector<int64_t> shape = {ctx.dim(V::X, 0), ctx.dim(V::W, 0)};
  for (int i = 0; i < 2; ++i) {
    int64_t in = ctx.dim(V::X, 2 + i), k = ctx.dim(V::W, 2 + i);
    if (ShapedType::isDynamic(in) || ShapedType::isDynamic(k)) {
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    FailureOr<int64_t> twice = ctx.mul(2, padding[i], "the padding");
    if (failed(twice))
      return failure();
    FailureOr<int64_t> paddedSize =
        ctx.add(in, *twice, "the padded input in spatial dim " + Twine(i));
    if (failed(paddedSize))
      return failure();
    int64_t padded = *paddedSize;
    if (padded < k)
      return ctx.fail("shape rule",
                      "the kernel (" + Twine(k) +
                          ") is larger than the padded input (" +
                          Twine(padded) + ") in spatial dim " + Twine(i));
    shape.push_back((padded - k) / stride[i] + 1);
  }
  ctx.addTensorResult(shape, ctx.elementType(V::X));
  return success();
}

/// x[B, C, H, W], w[C, F/groups, kh, kw] -> [B, F, Ho, Wo] with
/// Ho = (H - 1) * stride - 2 * padding + dilation * (kh - 1) +
/// output_padding + 1.
LogicalResult rules::convTranspose2d(RuleContext &ctx) {
  using V = ConvTranspose2dView;
  auto params = ctx.params<ConvTranspose2dParams>();
  if (failed(ctx.expectSameElementType({V::X, V::W})))
    return failure();
  int64_t groups = params.getGroups();
  auto stride = params.getStride();
  auto padding = params.getPadding();
  auto outPad = params.getOutputPadding();
  auto dilation = params.getDilation();
  for (int i = 0; i < 2; ++i)
    if (outPad[i] >= stride[i] && outPad[i] >= dilation[i])
      return ctx.fail("params rule",
                      "output_padding[" + Twine(i) + "] (" + Twine(outPad[i]) +
                          ") must be smaller than stride or dilation");
  if (failed(expectDivides(ctx, V::X, 1, groups, "groups")) ||
      failed(ctx.expectDimsEqual(V::W, 0, V::X, 1)))
    return failure();
  int64_t fPerGroup = ctx.dim(V::W, 1);
  int64_t outChannels = ShapedType::kDynamic;
  if (!ShapedType::isDynamic(fPerGroup)) {
    FailureOr<int64_t> f = ctx.mul(fPerGroup, groups, "the output channels");
    if (failed(f))
      return failure();
    outChannels = *f;
  }
  SmallVector<int64_t> shape = {ctx.dim(V::X, 0), outChannels};
  for (int i = 0; i < 2; ++i) {
    int64_t in = ctx.dim(V::X, 2 + i), k = ctx.dim(V::W, 2 + i);
    if (ShapedType::isDynamic(in) || ShapedType::isDynamic(k)) {
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    // (in - 1) * stride - 2 * padding + dilation * (k - 1) + outPad + 1,
    // every step checked.
    std::string what = ("the output size in spatial dim " + Twine(i)).str();
    FailureOr<int64_t> strided = ctx.mul(in - 1, stride[i], what);
    if (failed(strided))
      return failure();
    FailureOr<int64_t> twice = ctx.mul(2, padding[i], what);
    if (failed(twice))
      return failure();
    FailureOr<int64_t> cropped = ctx.sub(*strided, *twice, what);
    if (failed(cropped))
      return failure();
    FailureOr<int64_t> reach = ctx.mul(dilation[i], k - 1, what);
    if (failed(reach))
      return failure();
    FailureOr<int64_t> widened = ctx.add(*cropped, *reach, what);
    if (failed(widened))
      return failure();
    FailureOr<int64_t> total = ctx.add(*widened, outPad[i] + 1, what);
    if (failed(total))
      return failure();
    int64_t out = *total;
    if (out < 1)
      return ctx.fail("shape rule", "the output size in spatial dim " +
                                        Twine(i) + " would be " + Twine(out));
    shape.push_back(out);
  }
  ctx.addTensorResult(shape, ctx.elementType(V::X));
  return success();
}

/// x[B, C, S + K - 1], w[C, 1, K], bias[C] -> [B, C, S].
LogicalResult rules::causalConv1d(RuleContext &ctx) {
  using V = CausalConv1dView;
  if (failed(ctx.expectSameElementType({V::X, V::W, V::Bias})) ||
      failed(ctx.expectDimsEqual(V::W, 0, V::X, 1)) ||
      failed(ctx.expectDimEquals(V::W, 1, 1, "1 (depthwise)")) ||
      failed(ctx.expectDimsEqual(V::Bias, 0, V::X, 1)))
    return failure();
  int64_t len = ctx.dim(V::X, 2), k = ctx.dim(V::W, 2);
  int64_t out = ShapedType::kDynamic;
  if (!ShapedType::isDynamic(len) && !ShapedType::isDynamic(k)) {
    if (len < k)
      return ctx.fail("shape rule", "x's length (" + Twine(len) +
                                        ") must be at least the kernel size (" +
                                        Twine(k) + ")");
    out = len - k + 1;
  }
  ctx.addTensorResult({ctx.dim(V::X, 0), ctx.dim(V::X, 1), out},
                      ctx.elementType(V::X));
  return success();
}
