//===- DecomposeConv.cpp - Decompositions: convolutions -------------------===//

#include "Decompositions.h"
#include "Emit.h"

#include "FuelFused/IR/FusedOpViews.h"

using namespace mlir;
using namespace mlir::fuel;

/// A zero-padded copy of x[B, C, H, W] (pads may be negative: crops).
static Value padSpatial(Emitter &e, Value x, std::array<int64_t, 2> lo,
                        std::array<int64_t, 2> hi) {
  OpBuilder &b = e.b;
  if (lo == std::array<int64_t, 2>{0, 0} && hi == std::array<int64_t, 2>{0, 0})
    return x;
  // Crop first (negative pads), then pad.
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, e.loc, x);
  SmallVector<OpFoldResult> offsets(4, b.getIndexAttr(0)),
      strides(4, b.getIndexAttr(1));
  bool crop = false;
  for (int i = 0; i < 2; ++i) {
    int64_t cl = std::max<int64_t>(0, -lo[i]),
            ch = std::max<int64_t>(0, -hi[i]);
    if (cl || ch) {
      crop = true;
      offsets[2 + i] = b.getIndexAttr(cl);
      sizes[2 + i] = e.sub(sizes[2 + i], e.index(cl + ch));
    }
  }
  if (crop)
    x = tensor::ExtractSliceOp::create(b, e.loc, x, offsets, sizes, strides);
  SmallVector<OpFoldResult> low(4, b.getIndexAttr(0)),
      high(4, b.getIndexAttr(0));
  bool pad = false;
  for (int i = 0; i < 2; ++i) {
    low[2 + i] = b.getIndexAttr(std::max<int64_t>(0, lo[i]));
    high[2 + i] = b.getIndexAttr(std::max<int64_t>(0, hi[i]));
    pad |= lo[i] > 0 || hi[i] > 0;
  }
  if (!pad)
    return x;
  Type elt = cast<ShapedType>(x.getType()).getElementType();
  return tensor::PadOp::create(b, e.loc, Type(), x, low, high,
                               e.constF(elt, 0.0))
      .getResult();
}

/// y[b, f, oh, ow] = bias[f] + sum_{c, kh, kw} xp[b, g(f) * Cg + c,
///   oh * sh + kh * dh, ow * sw + kw * dw] * w[f, c, kh, kw], with xp the
/// padded input and g(f) = f / (F / groups) the group of output channel f.
static Value convolve(Emitter &e, Value xp, Value w, Value bias,
                      std::array<int64_t, 2> stride,
                      std::array<int64_t, 2> dilation, int64_t groups,
                      Type ct) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  // Loops: b, f, oh, ow, c, kh, kw.
  auto [sh, sw] = stride;
  auto [dh, dw] = dilation;
  AffineExpr channel = e.d(4);
  if (groups > 1) {
    int64_t fPerGroup = *staticDim(w, 0) / groups, cPerGroup = *staticDim(w, 1);
    channel = e.d(1).floorDiv(fPerGroup) * cPerGroup + e.d(4);
  }
  AffineMap xMap = e.map(7, {e.d(0), channel, e.d(2) * sh + e.d(5) * dh,
                             e.d(3) * sw + e.d(6) * dw});
  AffineMap wMap = e.loops(7, {1, 4, 5, 6});
  AffineMap outMap = e.loops(7, {0, 1, 2, 3});
  SmallVector<OpFoldResult> out = {e.dim(xp, 0), e.dim(w, 0)};
  for (int i = 0; i < 2; ++i) {
    // (Hp - dil * (K - 1) - 1) / s + 1
    OpFoldResult span = e.add(e.mul(e.sub(e.dim(w, 2 + i), e.index(1)),
                                    i == 0 ? dh : dw),
                              e.index(1));
    out.push_back(e.add(e.floorDiv(e.sub(e.dim(xp, 2 + i), span),
                                   i == 0 ? sh : sw),
                        e.index(1)));
  }
  Value init;
  if (bias) {
    Value bf = e.castTo(bias, ct);
    init = e.generic(4, {{bf, e.loops(4, {1})}}, e.empty(out, ct),
                     e.loops(4, {0, 1, 2, 3}), {},
                     [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  } else {
    init = e.full(out, ct, 0.0);
  }
  return e.generic(7, {{xp, xMap}, {w, wMap}}, init, outMap, {4, 5, 6},
                   multiplyAccumulate);
}

/// PyTorch conv2d: pad, then the grouped correlation above.
LogicalResult decompositions::checkConv2d(FusedOp op, std::string &why) {
  Conv2dView conv(op);
  Value w = conv.getW();
  if (conv.getGroups() > 1 && (!staticDim(w, 0) || !staticDim(w, 1))) {
    why = "grouped convolution needs static weight dims";
    return failure();
  }
  return success();
}

SmallVector<Value> decompositions::buildConv2d(OpBuilder &builder,
                                               FusedOp op) {
  Conv2dView conv(op);
  Value x = conv.getX(), w = conv.getW(),
        bias = conv.getBias().value_or(Value());
  int64_t groups = conv.getGroups();
  Emitter e(builder, op.getLoc());
  Type elt = cast<ShapedType>(x.getType()).getElementType();
  Type ct = e.computeType(elt);
  std::array<int64_t, 2> pad = conv.getPadding();
  Value xp = padSpatial(e, e.castTo(x, ct), pad, pad);
  Value y = convolve(e, xp, e.castTo(w, ct), bias, conv.getStride(), {1, 1},
                     groups, ct);
  return SmallVector<Value>{e.castTo(y, elt)};
}

/// PyTorch conv_transpose2d as a correlation: insert stride - 1 zeros
/// between input pixels, pad by dilation * (K - 1) - padding (plus
/// output_padding at the end), and correlate with the kernel flipped
/// spatially and transposed to [F, C/groups, kh, kw] per group.
LogicalResult decompositions::checkConvTranspose2d(FusedOp op,
                                                   std::string &why) {
  ConvTranspose2dView conv(op);
  if (!cast<RankedTensorType>(conv.getW().getType()).hasStaticShape()) {
    why = "conv_transpose_2d needs a static weight shape";
    return failure();
  }
  return success();
}

SmallVector<Value> decompositions::buildConvTranspose2d(OpBuilder &builder,
                                                        FusedOp op) {
  ConvTranspose2dView conv(op);
  Value x = conv.getX(), w = conv.getW();
  auto wt = cast<RankedTensorType>(w.getType());
  Emitter e(builder, op.getLoc());
  OpBuilder &b = e.b;
  Location loc = e.loc;
  Type elt = cast<ShapedType>(x.getType()).getElementType();
  Type ct = e.computeType(elt);
  int64_t groups = conv.getGroups();
  std::array<int64_t, 2> stride = conv.getStride(),
                         padding = conv.getPadding(),
                         outPad = conv.getOutputPadding(),
                         dilation = conv.getDilation();
  int64_t cIn = wt.getDimSize(0), fPerGroup = wt.getDimSize(1),
          kh = wt.getDimSize(2), kw = wt.getDimSize(3);
  int64_t cPerGroup = cIn / groups, f = fPerGroup * groups;

  // 1. Dilate x by the stride: xd[.., i * s] = x[.., i].
  Value xf = e.castTo(x, ct);
  SmallVector<OpFoldResult> dSizes = {e.dim(xf, 0), e.dim(xf, 1)};
  for (int i = 0; i < 2; ++i)
    dSizes.push_back(e.add(e.mul(e.sub(e.dim(xf, 2 + i), e.index(1)),
                               stride[i]),
                         e.index(1)));
  Value xd = xf;
  if (stride != std::array<int64_t, 2>{1, 1}) {
    SmallVector<OpFoldResult> zeros(4, b.getIndexAttr(0));
    SmallVector<OpFoldResult> strides = {b.getIndexAttr(1), b.getIndexAttr(1),
                                         b.getIndexAttr(stride[0]),
                                         b.getIndexAttr(stride[1])};
    xd = tensor::InsertSliceOp::create(b, loc, xf, e.full(dSizes, ct, 0.0),
                                       zeros, tensor::getMixedSizes(b, loc, xf),
                                       strides);
  }
  // 2. Pad (or crop) by dilation * (K - 1) - padding.
  std::array<int64_t, 2> lo, hi;
  for (int i = 0; i < 2; ++i) {
    int64_t k = i == 0 ? kh : kw;
    lo[i] = dilation[i] * (k - 1) - padding[i];
    hi[i] = lo[i] + outPad[i];
  }
  Value xp = padSpatial(e, xd, lo, hi);
  // 3. The flipped, transposed kernel: wf[g * Fg + fo, c, a, b] =
  //    w[g * Cg + c, fo, kh - 1 - a, kw - 1 - b].
  Value wf = e.castTo(w, ct);
  SmallVector<OpFoldResult> wfSizes = {b.getIndexAttr(f),
                                       b.getIndexAttr(cPerGroup),
                                       b.getIndexAttr(kh), b.getIndexAttr(kw)};
  // Loops: (f, c, a, b) over wf.
  AffineExpr group = e.d(0).floorDiv(fPerGroup);
  AffineMap src = e.map(4, {group * cPerGroup + e.d(1), e.d(0) % fPerGroup,
                            b.getAffineConstantExpr(kh - 1) - e.d(2),
                            b.getAffineConstantExpr(kw - 1) - e.d(3)});
  Value wFlip =
      e.generic(4, {{wf, src}}, e.empty(wfSizes, ct), e.loops(4, {0, 1, 2, 3}),
                {}, [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  // 4. Correlate with dilation, stride 1.
  Value y = convolve(e, xp, wFlip, Value(), {1, 1}, dilation, groups, ct);
  return SmallVector<Value>{e.castTo(y, elt)};
}

/// y[b, c, t] = bias[c] + sum_j w[c, 0, j] * x[b, c, t + j], then
/// SiLU(y) = y / (1 + exp(-y)) if use_silu.
LogicalResult decompositions::checkCausalConv1d(FusedOp, std::string &) {
  return success(); // Every verified op.
}

SmallVector<Value> decompositions::buildCausalConv1d(OpBuilder &builder,
                                                     FusedOp op) {
  CausalConv1dView conv(op);
  Value x = conv.getX(), w = conv.getW(), bias = conv.getBias();
  Emitter e(builder, op.getLoc());
  Type elt = cast<ShapedType>(x.getType()).getElementType();
  Type ct = e.computeType(elt);
  Value xf = e.castTo(x, ct), wf = e.castTo(w, ct), bf = e.castTo(bias, ct);
  SmallVector<OpFoldResult> out = {
      e.dim(xf, 0), e.dim(xf, 1),
      e.add(e.sub(e.dim(xf, 2), e.dim(wf, 2)), e.index(1))};
  Value init = e.generic(
      3, {{bf, e.loops(3, {1})}}, e.empty(out, ct), e.loops(3, {0, 1, 2}), {},
      [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  // Loops: b, c, t, j.
  AffineMap xMap = e.map(4, {e.d(0), e.d(1), e.d(2) + e.d(3)});
  AffineMap wMap = e.map(4, {e.d(1), e.b.getAffineConstantExpr(0), e.d(3)});
  Value y = e.generic(4, {{xf, xMap}, {wf, wMap}}, init, e.loops(4, {0, 1, 2}),
                      {3}, multiplyAccumulate);
  if (conv.getUseSilu()) {
    Value one = e.constF(ct, 1.0);
    y = e.elementwise(
        {y}, y, ct, [&](OpBuilder &nb, Location nl, ValueRange a) {
          Value neg = arith::NegFOp::create(nb, nl, a[0]);
          Value den = arith::AddFOp::create(nb, nl, one,
                                            math::ExpOp::create(nb, nl, neg));
          return arith::DivFOp::create(nb, nl, a[0], den).getResult();
        });
  }
  return SmallVector<Value>{e.castTo(y, elt)};
}
