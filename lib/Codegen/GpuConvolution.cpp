//===- GpuConvolution.cpp - The convolution schedule on a GPU -------------===//
//
// The convolution schedule's GPU forms, built as the CPU's are
// (Convolution.cpp, CausalConv.cpp) with their loops on blocks and
// threads:
// - conv2d and conv_transpose_2d: a thread per register tile of 4 output
//   columns by up to 4 filters, accumulated over (kh, kw, c) in registers
//   (16 fused multiply-adds a step for 4 loads of pixels and one of 4
//   weights). A block's threads: along x the tiles of an output row (as
//   many as it has, up to a warp; wider rows in blocks of 16 to 32 tiles,
//   whichever pads the row least), so that a warp reads consecutive pixels
//   and writes consecutive outputs; along y filter tiles, as many as keep
//   the block within max-threads, so that the block's threads share each
//   pixel through the cache. Blocks: (b * Ho + oh, filter blocks, column
//   blocks) on (z, y, x). With stride s a thread reads s * 4 consecutive
//   pixels and keeps every s-th. The input is padded (and a transposed
//   convolution's spread out) and the weight transposed by loop nests
//   before the kernel, as on the CPU. The block's pixels and weights are
//   read through the caches.
// - conv2d and conv_transpose_2d whose filters per group and output pixels
//   are multiples of 32 and whose channels per group times kh * kw are a
//   multiple of 8 are instead an implicit matrix product staged in shared
//   memory (GpuStaged.h): per image and group, y[f, p] = sum over k =
//   (c, kh, kw) of w[f, k] * x[c, i(p, kh), j(p, kw)] (p = oh * Wo + ow;
//   conv2d: i = oh * s_h + kh - pad_h; transposed: i = (oh + pad_h - kh *
//   dil_h) / s_h where that divides; zero outside x), the weight's and the
//   pixels' tiles copied into shared memory at each step along k
//   (consecutive threads on consecutive k of the weight, conv2d's in
//   chunks of up to 16 bytes of a filter's row, on consecutive
//   output columns of the pixels), the padding and a transposed
//   convolution's gaps read as zeros where the pixels are copied (no padded
//   or spread copy of the input), the bias added as the tile is written.
// - causal_conv1d: a block per (batch, channel, stretch of time), a thread
//   per 4 consecutive outputs of the stretch (a warp reads and writes 128
//   consecutive values), the channel's K weights and bias read once per
//   thread.
//
//===----------------------------------------------------------------------===//

#include "Convolution.h"
#include "GpuBlockLoops.h"
#include "GpuSchedules.h"
#include "GpuStaged.h"

#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::fuel;

namespace {
/// Outputs per thread of causal_conv1d.
constexpr int64_t kCausalWidth = 4;
/// The most blocks a grid takes along y and z.
constexpr int64_t kMaxGridYZ = 65535;
} // namespace

static std::optional<StagedContraction> stagedConvolution(FusedOp op);

/// `op` as a staged contraction where it takes one with `options`.
static std::optional<StagedContraction>
stagedConvolution(FusedOp op, const GpuScheduleOptions &options) {
  std::optional<StagedContraction> staged = stagedConvolution(op);
  if (staged && canStageContraction(*staged, options))
    return staged;
  return std::nullopt;
}

LogicalResult mlir::fuel::canScheduleGpuConvolution(
    FusedOp op, const GpuScheduleOptions &options, std::string &why) {
  // The staged form takes any groups, dilation and padding.
  if (stagedConvolution(op, options))
    return success();
  if (failed(canScheduleConvolution(op, ScheduleOptions{}, why)))
    return failure();
  // A transposed convolution's register tiles read its input spread out
  // (one kernel), which takes one group and padding below the kernel.
  if (std::optional<ConvTranspose2dView> ct = ConvTranspose2dView::match(op)) {
    ArrayRef<int64_t> w =
        cast<RankedTensorType>(ct->getW().getType()).getShape();
    std::array<int64_t, 2> pad = ct->getPadding();
    if (ct->getGroups() != 1 || pad[0] > w[2] - 1 || pad[1] > w[3] - 1) {
      why = "the GPU convolution schedule's register tiles handle "
            "transposed convolutions with one group and padding below the "
            "kernel size";
      return failure();
    }
  }
  ArrayRef<int64_t> y =
      cast<RankedTensorType>(op->getResult(0).getType()).getShape();
  // The grid's y and z: (channel, batch) for causal_conv1d, (filter
  // blocks, batch x output rows) for the others (filter blocks are at
  // most the filters).
  if (CausalConv1dView::match(op)) {
    if (y[1] > kMaxGridYZ || y[0] > kMaxGridYZ) {
      why = "the GPU convolution schedule takes at most 65535 channels and "
            "batches";
      return failure();
    }
  } else if (y[1] > kMaxGridYZ || y[0] * y[2] > kMaxGridYZ) {
    why = "the GPU convolution schedule takes at most 65535 filters, and "
          "batches times output rows";
    return failure();
  }
  return success();
}

namespace {
/// What the staged form needs of a conv2d or conv_transpose_2d.
struct ConvGeometry {
  bool transposed;
  Value x, w;
  std::optional<Value> bias;
  int64_t groups;
  std::array<int64_t, 2> stride, padding, dilation = {1, 1};

  static std::optional<ConvGeometry> of(FusedOp op) {
    if (auto conv = Conv2dView::match(op))
      return ConvGeometry{false,          conv->getX(),      conv->getW(),
                          conv->getBias(), conv->getGroups(), conv->getStride(),
                          conv->getPadding()};
    if (auto conv = ConvTranspose2dView::match(op))
      return ConvGeometry{true,
                          conv->getX(),
                          conv->getW(),
                          std::nullopt,
                          conv->getGroups(),
                          conv->getStride(),
                          conv->getPadding(),
                          conv->getDilation()};
    return std::nullopt;
  }
};
} // namespace

/// conv2d and conv_transpose_2d (`op`, static shapes) as a staged
/// contraction per image and group g: A the group's weights [Fg, Cg * kh *
/// kw], B the input pixel each k = (c, kh, kw) meets at each output pixel
/// p (zero where it is padding, or between a transposed convolution's
/// strided pixels), the output [B * G, Fg, Ho * Wo].
static std::optional<StagedContraction> stagedConvolution(FusedOp op) {
  std::optional<ConvGeometry> conv = ConvGeometry::of(op);
  if (!conv || !hasF32OrHalfTensors(op))
    return std::nullopt;
  auto xType = cast<RankedTensorType>(conv->x.getType());
  auto wType = cast<RankedTensorType>(conv->w.getType());
  auto yType = cast<RankedTensorType>(op->getResult(0).getType());
  if (!xType.hasStaticShape() || !wType.hasStaticShape() ||
      !yType.hasStaticShape())
    return std::nullopt;
  ArrayRef<int64_t> xs = xType.getShape(), ws = wType.getShape(),
                    ys = yType.getShape();
  int64_t groups = conv->groups, channels = xs[1] / groups,
          filters = ys[1] / groups;
  int64_t size[2] = {xs[2], xs[3]}, kh = ws[2], kw = ws[3], wo = ys[3];
  StagedContraction c;
  c.batched = true;
  c.lead = ys[0] * groups;
  c.m = filters;
  c.n = ys[2] * ys[3];
  c.k = channels * kh * kw;
  c.resultType = RankedTensorType::get({c.lead, c.m, c.n},
                                       yType.getElementType());
  Location loc = op.getLoc();
  ConvGeometry g = *conv;
  auto index = [loc](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  // k as (channel in the group, row, column) of the filter.
  auto split = [=](OpBuilder &b, Value k) -> std::array<Value, 3> {
    Value window = index(b, kh * kw);
    Value rest = arith::RemUIOp::create(b, loc, k, window);
    return {arith::DivUIOp::create(b, loc, k, window),
            arith::DivUIOp::create(b, loc, rest, index(b, kw)),
            arith::RemUIOp::create(b, loc, rest, index(b, kw))};
  };
  // The image and the group of a leading index.
  auto imageAndGroup = [=](OpBuilder &b,
                           Value lead) -> std::pair<Value, Value> {
    return {arith::DivUIOp::create(b, loc, lead, index(b, groups)),
            arith::RemUIOp::create(b, loc, lead, index(b, groups))};
  };
  auto cmp = [loc](OpBuilder &b, arith::CmpIPredicate p, Value l, Value r) {
    return arith::CmpIOp::create(b, loc, p, l, r).getResult();
  };
  c.a = [=](OpBuilder &b, Value lead, Value f, Value k) {
    auto [ch, r, s] = split(b, k);
    Value group = imageAndGroup(b, lead).second;
    // conv2d: w[g * Fg + f, c, r, s]; transposed: w[g * Cg + c, f, r, s].
    Value first = g.transposed ? ch : f, second = g.transposed ? f : ch;
    first = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, group,
                              index(b, g.transposed ? channels : filters)),
        first);
    Value v = tensor::ExtractOp::create(b, loc, g.w,
                                        ValueRange{first, second, r, s});
    return widenToF32(b, loc, v);
  };
  // conv2d's weights are contiguous along k: [F, Cg * kh * kw] rows read
  // 16 bytes at once.
  if (!g.transposed) {
    c.aChunk = 128 / wType.getElementType().getIntOrFloatBitWidth();
    c.aChunks = [=](OpBuilder &b, Value lead, Value f, Value k,
                    int64_t width) {
      Value rows = tensor::CollapseShapeOp::create(
          b, loc, g.w, ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}});
      Value group = imageAndGroup(b, lead).second;
      Value row = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, group, index(b, filters)), f);
      return readChunkAsF32(b, loc, rows, {row, k}, width);
    };
  }
  c.b = [=](OpBuilder &b, Value lead, Value k, Value p) {
    auto [ch, r, s] = split(b, k);
    auto [image, group] = imageAndGroup(b, lead);
    Value outAt[2] = {arith::DivUIOp::create(b, loc, p, index(b, wo)),
                      arith::RemUIOp::create(b, loc, p, index(b, wo))};
    Value tap[2] = {r, s};
    // The input's row (d = 0) and column (d = 1) the output pixel meets
    // through the tap, clamped to 0 where there is none, and whether there
    // is: conv2d out * s + tap - pad in [0, size); transposed, t = out +
    // pad - tap * dilation a multiple of s with t / s in [0, size).
    Value inside, at[2];
    for (int d = 0; d < 2; ++d) {
      Value ok, i;
      if (!g.transposed) {
        i = arith::SubIOp::create(
            b, loc,
            arith::AddIOp::create(
                b, loc,
                arith::MulIOp::create(b, loc, outAt[d], index(b, g.stride[d])),
                tap[d]),
            index(b, g.padding[d]));
        ok = arith::AndIOp::create(
            b, loc, cmp(b, arith::CmpIPredicate::sge, i, index(b, 0)),
            cmp(b, arith::CmpIPredicate::slt, i, index(b, size[d])));
      } else {
        Value t = arith::SubIOp::create(
            b, loc,
            arith::AddIOp::create(b, loc, outAt[d], index(b, g.padding[d])),
            arith::MulIOp::create(b, loc, tap[d], index(b, g.dilation[d])));
        i = arith::DivSIOp::create(b, loc, t, index(b, g.stride[d]));
        ok = arith::AndIOp::create(
            b, loc,
            arith::AndIOp::create(
                b, loc, cmp(b, arith::CmpIPredicate::sge, t, index(b, 0)),
                cmp(b, arith::CmpIPredicate::eq,
                    arith::RemSIOp::create(b, loc, t, index(b, g.stride[d])),
                    index(b, 0))),
            cmp(b, arith::CmpIPredicate::slt, i, index(b, size[d])));
      }
      at[d] = arith::SelectOp::create(b, loc, ok, i, index(b, 0));
      inside = inside ? arith::AndIOp::create(b, loc, inside, ok).getResult()
                      : ok;
    }
    Value channel = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, group, index(b, channels)), ch);
    Value v = widenToF32(
        b, loc,
        tensor::ExtractOp::create(b, loc, g.x,
                                  ValueRange{image, channel, at[0], at[1]}));
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
    return arith::SelectOp::create(b, loc, inside, v, zero).getResult();
  };
  c.finish = [=](OpBuilder &b, Value lead, Value rows, Value, Value sums,
                 Value mine) -> Value {
    if (!g.bias)
      return finishTile(b, loc, sums, mine);
    // The group's filters' biases.
    Value first = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, imageAndGroup(b, lead).second,
                              index(b, filters)),
        rows);
    Value biasPart = tensor::ExtractSliceOp::create(
        b, loc, *g.bias, ArrayRef<OpFoldResult>{first},
        ArrayRef<OpFoldResult>{b.getIndexAttr(stagedThreadTile(sums))},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
    return finishTile(b, loc, sums, mine, biasPart, /*addendDim=*/0);
  };
  return c;
}

LogicalResult mlir::fuel::buildGpuConvolutionSchedule(
    RewriterBase &rewriter, FusedOp op, const GpuScheduleOptions &options) {
  if (std::optional<StagedContraction> staged =
          stagedConvolution(op, options)) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(op);
    Location loc = op.getLoc();
    Value flat = buildStagedContraction(rewriter, loc, *staged, options);
    // [B * G, Fg, Ho * Wo] is [B, F, Ho, Wo] in the same order.
    auto yType = cast<RankedTensorType>(op->getResult(0).getType());
    Value all = tensor::CollapseShapeOp::create(
        rewriter, loc, flat, ArrayRef<ReassociationIndices>{{0, 1, 2}});
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
        op, yType, all, ArrayRef<ReassociationIndices>{{0, 1, 2, 3}});
    return success();
  }
  if (CausalConv1dView::match(op))
    buildGpuCausalConv1d(rewriter, op, options.maxThreads, kCausalWidth);
  else
    buildGpuConvolution(rewriter, op, options.maxThreads);
  return success();
}
