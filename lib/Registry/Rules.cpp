//===- Rules.cpp - Shape and dtype rules: elementwise, linear, conv, loss -===//
//
// Each rule runs after the generic operand and params checks (see
// RuleContext.h), checks the op's shape and dtype rules on static dims, and
// infers the result types. Operand indices follow the op's record.
//
//===----------------------------------------------------------------------===//

#include "RuleContext.h"
#include "FuelFused/FuelAttrs.h"

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
  if (failed(ctx.expectSameElementType({0, 1, 2})) ||
      failed(ctx.expectDimsEqual(0, -1, 1, 0)) ||
      failed(ctx.expectDimsEqual(2, 0, 1, 1)))
    return failure();
  SmallVector<int64_t> shape(ctx.type(0).getShape());
  shape.back() = mergeDims(ctx.dim(1, 1), ctx.dim(2, 0));
  ctx.addTensorResult(shape, ctx.elementType(0));
  return success();
}

/// x[..., S, D] with cos, sin [S, D]; D even.
LogicalResult rules::rope(RuleContext &ctx) {
  if (failed(ctx.expectSameElementType({0, 1, 2})) ||
      failed(ctx.expectDimsEqual(1, 0, 0, -2)) ||
      failed(ctx.expectDimsEqual(1, 1, 0, -1)) ||
      failed(ctx.expectSameShape(1, 2)))
    return failure();
  int64_t d = ctx.dim(0, -1);
  if (!ShapedType::isDynamic(d) && d % 2 != 0)
    return ctx.fail("shape rule", "the rotated dim D (" + Twine(d) +
                                      ") must be even");
  ctx.addResult(ctx.type(0));
  return success();
}

/// g has x's rank; each dim of g equals x's or is 1 (a reduced dim).
LogicalResult rules::reduceMaxToBackward(RuleContext &ctx) {
  if (failed(ctx.expectSameElementType({0, 1})))
    return failure();
  if (ctx.rank(0) != ctx.rank(1))
    return ctx.fail("shape rule", "g must have the rank of x (" +
                                      Twine(ctx.rank(0)) + "), got " +
                                      Twine(ctx.rank(1)));
  for (int64_t d = 0, e = ctx.rank(0); d < e; ++d) {
    int64_t g = ctx.dim(1, d);
    if (!ShapedType::isDynamic(g) && g != 1 &&
        dimsConflict(g, ctx.dim(0, d)))
      return ctx.fail("shape rule",
                      "g dim " + Twine(d) + " (" + Twine(g) +
                          ") must be 1 (reduced) or equal x dim " + Twine(d) +
                          " (" + formatDim(ctx.dim(0, d)) + ")");
  }
  ctx.addResult(ctx.type(0));
  return success();
}

/// On tensors: y has x's type. On a memref: written in place, no result.
LogicalResult rules::inplaceAffine(RuleContext &ctx) {
  if (!isa<MemRefType>(ctx.type(0)))
    ctx.addResult(ctx.type(0));
  return success();
}

/// logits[..., V], targets[...] -> f32 loss: [] (mean, sum) or targets'
/// shape (none).
LogicalResult rules::crossEntropy(RuleContext &ctx) {
  if (ctx.rank(1) != ctx.rank(0) - 1)
    return ctx.fail("shape rule",
                    "targets must have rank " + Twine(ctx.rank(0) - 1) +
                        " (logits' rank minus the class dim), got " +
                        Twine(ctx.rank(1)));
  for (int64_t d = 0, e = ctx.rank(1); d < e; ++d)
    if (failed(ctx.expectDimsEqual(1, d, 0, d)))
      return failure();
  Type f32 = Float32Type::get(ctx.type(0).getContext());
  auto reduction = cast<ReductionAttr>(ctx.param("reduction")).getValue();
  if (reduction == Reduction::None)
    ctx.addTensorResult(ctx.type(1).getShape(), f32);
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
  if (failed(ctx.expectSameElementType({0, 1, 2})))
    return failure();
  int64_t groups = ctx.getInt("groups");
  auto stride = ctx.getPair("stride");
  auto padding = ctx.getPair("padding");
  if (failed(expectDivides(ctx, 0, 1, groups, "groups")) ||
      failed(expectDivides(ctx, 1, 0, groups, "groups")))
    return failure();
  int64_t c = ctx.dim(0, 1);
  if (!ShapedType::isDynamic(c) &&
      failed(ctx.expectDimEquals(1, 1, c / groups, "C / groups")))
    return failure();
  if (ctx.has(2) && failed(ctx.expectDimsEqual(2, 0, 1, 0)))
    return failure();
  SmallVector<int64_t> shape = {ctx.dim(0, 0), ctx.dim(1, 0)};
  for (int i = 0; i < 2; ++i) {
    int64_t in = ctx.dim(0, 2 + i), k = ctx.dim(1, 2 + i);
    if (ShapedType::isDynamic(in) || ShapedType::isDynamic(k)) {
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    int64_t padded = in + 2 * padding[i];
    if (padded < k)
      return ctx.fail("shape rule",
                      "the kernel (" + Twine(k) +
                          ") is larger than the padded input (" +
                          Twine(padded) + ") in spatial dim " + Twine(i));
    shape.push_back((padded - k) / stride[i] + 1);
  }
  ctx.addTensorResult(shape, ctx.elementType(0));
  return success();
}

/// x[B, C, H, W], w[C, F/groups, kh, kw] -> [B, F, Ho, Wo] with
/// Ho = (H - 1) * stride - 2 * padding + dilation * (kh - 1) +
/// output_padding + 1.
LogicalResult rules::convTranspose2d(RuleContext &ctx) {
  if (failed(ctx.expectSameElementType({0, 1})))
    return failure();
  int64_t groups = ctx.getInt("groups");
  auto stride = ctx.getPair("stride");
  auto padding = ctx.getPair("padding");
  auto outPad = ctx.getPair("output_padding");
  auto dilation = ctx.getPair("dilation");
  for (int i = 0; i < 2; ++i)
    if (outPad[i] >= stride[i] && outPad[i] >= dilation[i])
      return ctx.fail("params rule",
                      "output_padding[" + Twine(i) + "] (" + Twine(outPad[i]) +
                          ") must be smaller than stride or dilation");
  if (failed(expectDivides(ctx, 0, 1, groups, "groups")) ||
      failed(ctx.expectDimsEqual(1, 0, 0, 1)))
    return failure();
  int64_t fPerGroup = ctx.dim(1, 1);
  SmallVector<int64_t> shape = {
      ctx.dim(0, 0), ShapedType::isDynamic(fPerGroup) ? ShapedType::kDynamic
                                                      : fPerGroup * groups};
  for (int i = 0; i < 2; ++i) {
    int64_t in = ctx.dim(0, 2 + i), k = ctx.dim(1, 2 + i);
    if (ShapedType::isDynamic(in) || ShapedType::isDynamic(k)) {
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    int64_t out = (in - 1) * stride[i] - 2 * padding[i] +
                  dilation[i] * (k - 1) + outPad[i] + 1;
    if (out < 1)
      return ctx.fail("shape rule", "the output size in spatial dim " +
                                        Twine(i) + " would be " + Twine(out));
    shape.push_back(out);
  }
  ctx.addTensorResult(shape, ctx.elementType(0));
  return success();
}

/// x[B, C, S + K - 1], w[C, 1, K], bias[C] -> [B, C, S].
LogicalResult rules::causalConv1d(RuleContext &ctx) {
  if (failed(ctx.expectSameElementType({0, 1, 2})) ||
      failed(ctx.expectDimsEqual(1, 0, 0, 1)) ||
      failed(ctx.expectDimEquals(1, 1, 1, "1 (depthwise)")) ||
      failed(ctx.expectDimsEqual(2, 0, 0, 1)))
    return failure();
  int64_t len = ctx.dim(0, 2), k = ctx.dim(1, 2);
  int64_t out = ShapedType::kDynamic;
  if (!ShapedType::isDynamic(len) && !ShapedType::isDynamic(k)) {
    if (len < k)
      return ctx.fail("shape rule", "x's length (" + Twine(len) +
                                        ") must be at least the kernel size (" +
                                        Twine(k) + ")");
    out = len - k + 1;
  }
  ctx.addTensorResult({ctx.dim(0, 0), ctx.dim(0, 1), out}, ctx.elementType(0));
  return success();
}
