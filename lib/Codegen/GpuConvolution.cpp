//===- GpuConvolution.cpp - The convolution schedule on a GPU --------------===//
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
// - conv2d of one group whose filters and output pixels are multiples of
//   32 and whose C * kh * kw is a multiple of 8 is instead an implicit
//   matrix product staged in shared memory (GpuStaged.h): per image,
//   y[f, p] = sum over k = (c, kh, kw) of w[f, k] * x[c, oh * s_h + kh -
//   pad_h, ow * s_w + kw - pad_w] (p = oh * Wo + ow; zero outside x), the
//   weight's and the pixels' tiles copied into shared memory at each step
//   along k (consecutive threads on consecutive k of the weight, on
//   consecutive output columns of the pixels), the padding read as zeros
//   where the pixels are copied (no padded copy of the input), the bias
//   added as the tile is written.
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

LogicalResult mlir::fuel::canScheduleGpuConvolution(
    FusedOp op, const GpuScheduleOptions &options, std::string &why) {
  if (failed(canScheduleConvolution(op, ScheduleOptions{}, why)))
    return failure();
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

/// conv2d (`op`, one group, static shapes) as a staged contraction per
/// image: A the weight [F, C * kh * kw], B the pixels each k = (c, kh, kw)
/// reads for each output pixel p, the output [B, F, Ho * Wo].
static std::optional<StagedContraction> stagedConv2d(FusedOp op) {
  auto conv = Conv2dView::match(op);
  if (!conv || conv->getGroups() != 1 || !hasF32OrHalfTensors(op))
    return std::nullopt;
  auto xType = cast<RankedTensorType>(conv->getX().getType());
  auto wType = cast<RankedTensorType>(conv->getW().getType());
  auto yType = cast<RankedTensorType>(op->getResult(0).getType());
  if (!xType.hasStaticShape() || !wType.hasStaticShape() ||
      !yType.hasStaticShape())
    return std::nullopt;
  ArrayRef<int64_t> xs = xType.getShape(), ws = wType.getShape(),
                    ys = yType.getShape();
  int64_t height = xs[2], width = xs[3], kh = ws[2], kw = ws[3],
          wo = ys[3];
  auto [sh, sw] = conv->getStride();
  auto [ph, pw] = conv->getPadding();
  StagedContraction c;
  c.batched = true;
  c.lead = ys[0];
  c.m = ys[1];
  c.n = ys[2] * ys[3];
  c.k = ws[1] * kh * kw;
  c.resultType = RankedTensorType::get({c.lead, c.m, c.n},
                                       yType.getElementType());
  Location loc = op.getLoc();
  Value x = conv->getX(), w = conv->getW();
  std::optional<Value> bias = conv->getBias();
  auto index = [loc](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto widen = [loc](OpBuilder &b, Value v) -> Value {
    return v.getType().isF32()
               ? v
               : arith::ExtFOp::create(b, loc, b.getF32Type(), v);
  };
  // k as (channel, row, column) of the filter.
  auto split = [=](OpBuilder &b, Value k) -> std::array<Value, 3> {
    Value window = index(b, kh * kw);
    Value rest = arith::RemUIOp::create(b, loc, k, window);
    return {arith::DivUIOp::create(b, loc, k, window),
            arith::DivUIOp::create(b, loc, rest, index(b, kw)),
            arith::RemUIOp::create(b, loc, rest, index(b, kw))};
  };
  c.a = [=](OpBuilder &b, Value, Value f, Value k) {
    auto [ch, r, s] = split(b, k);
    return widen(b, tensor::ExtractOp::create(b, loc, w,
                                              ValueRange{f, ch, r, s}));
  };
  c.b = [=](OpBuilder &b, Value image, Value k, Value p) {
    auto [ch, r, s] = split(b, k);
    Value oh = arith::DivUIOp::create(b, loc, p, index(b, wo));
    Value ow = arith::RemUIOp::create(b, loc, p, index(b, wo));
    // The padded input's row and column; inside x where both are in
    // [pad, pad + size).
    auto at = [&](Value out, int64_t stride, Value tap, int64_t pad,
                  int64_t size) -> std::pair<Value, Value> {
      Value i = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, out, index(b, stride)), tap);
      Value inside = arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, i,
                                index(b, pad)),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i,
                                index(b, pad + size)));
      Value clamped = arith::SelectOp::create(
          b, loc, inside, arith::SubIOp::create(b, loc, i, index(b, pad)),
          index(b, 0));
      return {clamped, inside};
    };
    auto [row, rowInside] = at(oh, sh, r, ph, height);
    auto [col, colInside] = at(ow, sw, s, pw, width);
    Value v = widen(b, tensor::ExtractOp::create(
                           b, loc, x, ValueRange{image, ch, row, col}));
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
    return arith::SelectOp::create(
               b, loc, arith::AndIOp::create(b, loc, rowInside, colInside), v,
               zero)
        .getResult();
  };
  c.finish = [=](OpBuilder &b, Value, Value rows, Value, Value sums,
                 Value mine) -> Value {
    MLIRContext *ctx = b.getContext();
    Type f32 = b.getF32Type();
    Type elt = cast<RankedTensorType>(mine.getType()).getElementType();
    AffineMap all = b.getMultiDimIdentityMap(2);
    SmallVector<Value> inputs = {sums};
    SmallVector<AffineMap> maps = {all};
    if (bias) {
      inputs.push_back(tensor::ExtractSliceOp::create(
          b, loc, *bias, ArrayRef<OpFoldResult>{rows},
          ArrayRef<OpFoldResult>{b.getIndexAttr(kStagedThreadTile)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1)}));
      maps.push_back(AffineMap::get(2, 0, b.getAffineDimExpr(0), ctx));
    }
    maps.push_back(all);
    return linalg::GenericOp::create(
               b, loc, mine.getType(), inputs, ValueRange{mine}, maps,
               SmallVector<utils::IteratorType>(2,
                                                utils::IteratorType::parallel),
               [&](OpBuilder &nb, Location nl, ValueRange args) {
                 Value v = args[0];
                 if (bias) {
                   Value bv = args[1].getType() == f32
                                  ? args[1]
                                  : arith::ExtFOp::create(nb, nl, f32, args[1]);
                   v = arith::AddFOp::create(nb, nl, v, bv);
                 }
                 if (elt != f32)
                   v = arith::TruncFOp::create(nb, nl, elt, v);
                 linalg::YieldOp::create(nb, nl, v);
               })
        .getResult(0);
  };
  return c;
}

LogicalResult mlir::fuel::buildGpuConvolutionSchedule(
    RewriterBase &rewriter, FusedOp op, const GpuScheduleOptions &options) {
  if (std::optional<StagedContraction> staged = stagedConv2d(op);
      staged && canStageContraction(*staged, options.maxThreads)) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(op);
    Value flat = buildStagedContraction(rewriter, op.getLoc(), *staged,
                                        options.maxThreads);
    auto yType = cast<RankedTensorType>(op->getResult(0).getType());
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
        op, yType, flat, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
    return success();
  }
  if (CausalConv1dView::match(op))
    buildGpuCausalConv1d(rewriter, op, options.maxThreads, kCausalWidth);
  else
    buildGpuConvolution(rewriter, op, options.maxThreads);
  return success();
}
