//===- Convolution.cpp - The convolution schedule -------------------------===//
//
// conv2d (NCHW input, FCHW weight; any stride and groups, depthwise
// included), and conv_transpose_2d with dilation 1 (as the stride-1
// convolutions of its output phases, see buildTransposed), as register
// tiles of outer products: y[b, f, oh, ow] = bias[f] + sum over (c, kh, kw)
// of x_pad[b, c, oh + kh, ow + kw] * w[f, c, kh, kw] (stride 1). For each
// output row (b, oh), a tile of 8 output columns by 32 filters is
// accumulated in registers over the reduction: each step (c, kh, kw) adds
// the outer product of 8 consecutive input pixels of row oh + kh (from
// column ow + kw) and 32 consecutive filters' weights. The weight is packed
// once per tile of 32 filters, [F / 32, C, kh, kw, 32], so that a tile
// reads its weights front to back, and the input is padded once; the tile
// is transposed in registers and written as 32 rows of 8 outputs. The
// loops: an scf.forall over (b, oh, filter tiles, blocks of a row's column
// tiles; narrow rows several to an iteration); in each iteration the
// reduction runs in blocks of channels whose weights fit 16 KiB, each
// block taken by the iteration's tiles in turn (the partial sums in memory
// between blocks), so that the block's weights are read from L1
// (buildBlockedCore).
//
// With stride s the 8 pixels of a tile are s_w apart: a tile reads
// s_w x 8 consecutive pixels of input row oh * s_h + kh and keeps every
// s_w-th (`readPixels`).
// With groups, a filter tile (within one group: the group's filters are a
// multiple of the tile) sums over its group's channels only. Where the
// filters per group are not a multiple of 16 (depthwise: one), the tile is
// filters-major (`ConvTile`): up to 4 filters by up to 64 output columns,
// each step a filter's weight broadcast over a vector of pixels.
//
// The decomposition's single generic over seven loops has an input map with
// sums of dims (oh + kh), which upstream's vectorizer does not turn into
// outer products, so the schedule builds this form itself, in the vector
// dialect on tensors.
//
//===----------------------------------------------------------------------===//

#include "Convolution.h"
#include "ConvolutionCore.h"
#include "GpuSchedules.h"
#include "ScheduleUtils.h"

#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::fuel;
using namespace mlir::fuel::convolution;

namespace {
/// The column tiles of a CPU iteration at most (buildBlockedCore): 8 tiles
/// of 4 x 16 f32 partial sums are 2 KiB with AVX2.
constexpr int64_t kMaxColTiles = 8;
/// The tiles of a CPU iteration at most, over its rows: 16 tiles of 4 x 16
/// f32 partial sums are 4 KiB with AVX2.
constexpr int64_t kMaxTiles = 16;

ConvTile convTile(int64_t filtersPerGroup, int64_t height, int64_t width,
                  const ScheduleOptions &options) {
  RegisterTile tile = registerTile(options);
  if (filtersPerGroup % tile.n == 0 || filtersPerGroup % 16 == 0) {
    // A row's column tiles in the fewest iterations of at most
    // kMaxColTiles, as even as they go (14 tiles: 2 of 7). A dynamic
    // width (passed as int32's largest) takes one tile an iteration: the
    // width is padded to whole iterations, which could be most of a
    // narrow row.
    ConvTile conv{tile.m, filtersPerGroup % tile.n == 0 ? tile.n : 16};
    if (width < std::numeric_limits<int32_t>::max()) {
      int64_t tiles = (width + tile.m - 1) / tile.m;
      int64_t iterations = (tiles + kMaxColTiles - 1) / kMaxColTiles;
      conv.colTiles = (tiles + iterations - 1) / iterations;
    }
    // Narrow rows (half the most column tiles or fewer, ResNet's of 7 and
    // 14): as many of the output's rows as divide its height and keep the
    // iteration within kMaxTiles (a static height), so that each block of
    // the weight serves more tiles. ([1, 512, 7, 7] with 512 3x3 filters,
    // 2 tiles a row, ran 1.12x faster in 7-row iterations; rows of 7 tiles
    // in pairs, [1, 128, 28, 28] and [1, 64, 56, 56], 0.96-0.97x.)
    if (!ShapedType::isDynamic(height) && 2 * conv.colTiles <= kMaxColTiles)
      for (int64_t r = kMaxTiles / conv.colTiles; r > 1; --r)
        if (height % r == 0) {
          conv.rowTiles = r;
          break;
        }
    return conv;
  }
  int64_t lanes = std::clamp<int64_t>(options.vectorRegisterBits / 32, 4, 16);
  int64_t vectors = std::clamp<int64_t>((width + lanes - 1) / lanes, 1, 4);
  int64_t filters = 1;
  while (2 * filters <= 4 && filtersPerGroup % (2 * filters) == 0)
    filters *= 2;
  return {vectors * lanes, filters, true};
}

/// The fewest threads a GPU block is given more output rows to reach.
constexpr int64_t kMinBlockThreads = 128;

/// A GPU thread's tile, and the threads of a block, for F filters
/// (`filtersPerGroup` a group) and an output `height` x `width`: 4 columns
/// by the most filters up to 4 that divide a group's, filters-major (the
/// accumulator is written as it is, with no transpose); along x, as many
/// threads as the row has column tiles up to a warp (beyond, the count from
/// 16 to 32 that pads the row least), along y the most filter tiles that
/// divide F's and keep the block within `maxThreads`, and along z the
/// fewest output rows (dividing the height) that make the block
/// kMinBlockThreads (a small output row of few filters is a few threads).
ConvTile gpuConvTile(int64_t filters, int64_t filtersPerGroup, int64_t height,
                     int64_t width, int64_t maxThreads) {
  ConvTile tile{4, 1, /*filtersOuter=*/true};
  while (2 * tile.filters <= 4 && filtersPerGroup % (2 * tile.filters) == 0)
    tile.filters *= 2;
  int64_t colTiles = (width + tile.cols - 1) / tile.cols;
  tile.threadCols = std::min<int64_t>(colTiles, 32);
  if (colTiles > 32) {
    int64_t best = std::numeric_limits<int64_t>::max();
    for (int64_t t = 32; t >= 16; --t) {
      int64_t padded = (colTiles + t - 1) / t * t;
      if (padded < best) {
        best = padded;
        tile.threadCols = t;
      }
    }
  }
  int64_t filterTiles = filters / tile.filters;
  tile.threadFilters = 1;
  for (int64_t t = 1; t <= filterTiles && t * tile.threadCols <= maxThreads;
       ++t)
    if (filterTiles % t == 0)
      tile.threadFilters = t;
  int64_t row = tile.threadFilters * tile.threadCols;
  tile.threadRows = 1;
  for (int64_t r = 1; r <= height && r * row <= maxThreads; ++r) {
    if (height % r != 0)
      continue;
    tile.threadRows = r;
    if (r * row >= kMinBlockThreads)
      break;
  }
  return tile;
}

/// The output width the schedule computes: `width` rounded up to whole
/// iterations of the outer loop (the columns past it read zeros and are
/// dropped).
int64_t paddedWidth(int64_t width, ConvTile tile) {
  return (width + tile.blockCols() - 1) / tile.blockCols() * tile.blockCols();
}

/// The checks both convolutions share: float types.
LogicalResult checkTypes(FusedOp op, std::string &why) {
  for (Type t : op->getOperandTypes()) {
    Type elt = cast<RankedTensorType>(t).getElementType();
    if (!elt.isF32() && !elt.isF16() && !elt.isBF16()) {
      why = "the convolution schedule handles f32, f16 and bf16";
      return failure();
    }
  }
  return success();
}
} // namespace

LogicalResult mlir::fuel::canScheduleConvolution(
    FusedOp op, const ScheduleOptions &options, std::string &why) {
  if (CausalConv1dView::match(op))
    return canScheduleCausalConv1d(op, options, why);
  // The batch (dim 0 of x and y) may be dynamic, and conv2d's height and
  // width (dims 2 and 3); the rest is static.
  bool transposed = ConvTranspose2dView::match(op).has_value();
  for (Value t : llvm::concat<Value>(op->getOperands(), op->getResults())) {
    auto type = cast<RankedTensorType>(t.getType());
    bool image = t == op->getOperand(0) || t == op->getResult(0);
    for (auto [dim, size] : llvm::enumerate(type.getShape())) {
      if (!ShapedType::isDynamic(size) ||
          (image && (dim == 0 || (!transposed && dim >= 2))))
        continue;
      why = transposed ? "the convolution schedule needs static shapes but "
                         "for the batch in a transposed convolution"
                       : "the convolution schedule needs static channels "
                         "and kernel sizes";
      return failure();
    }
  }
  if (std::optional<ConvTranspose2dView> ct = ConvTranspose2dView::match(op)) {
    std::array<int64_t, 2> dil = ct->getDilation();
    if (dil[0] != 1 || dil[1] != 1) {
      why = "the convolution schedule handles transposed convolutions with "
            "dilation 1";
      return failure();
    }
    return checkTypes(op, why);
  }
  return checkTypes(op, why);
}

SmallVector<OpFoldResult>
convolution::withBatchOf(OpBuilder &b, Location loc, Value x,
                         ArrayRef<int64_t> shape) {
  SmallVector<OpFoldResult> sizes =
      getAsIndexOpFoldResult(b.getContext(), shape);
  if (cast<RankedTensorType>(x.getType()).isDynamicDim(0))
    sizes[0] = tensor::DimOp::create(b, loc, x, 0).getResult();
  return sizes;
}

Value convolution::inputOffset(OpBuilder &b, Location loc, Value o, Value k,
                               int64_t s) {
  if (s != 1)
    o = arith::MulIOp::create(b, loc, o,
                              arith::ConstantIndexOp::create(b, loc, s));
  return arith::AddIOp::create(b, loc, o, k);
}

Value convolution::readPixels(OpBuilder &b, Location loc, Value xp,
                              ValueRange at, int64_t width, int64_t stride) {
  Type f32 = b.getF32Type();
  Value pad = arith::ConstantOp::create(b, loc, f32, b.getF32FloatAttr(0.0));
  Value pixels = vector::TransferReadOp::create(
      b, loc, VectorType::get({stride * width}, f32), xp, at, pad,
      ArrayRef<bool>{true});
  if (stride == 1)
    return pixels;
  SmallVector<int64_t> every;
  for (int64_t i = 0; i < width; ++i)
    every.push_back(i * stride);
  return vector::ShuffleOp::create(b, loc, pixels, pixels, every);
}

CoreOutput::CoreOutput(RewriterBase &rewriter, Location loc,
                       RankedTensorType yType, Value xp, OutExtent extent,
                       int64_t blockCols) {
  ArrayRef<int64_t> y = yType.getShape();
  sizes = withBatchOf(rewriter, loc, xp, {y[0], y[1], 1, 1});
  sizes[2] = extent.rows;
  sizes[3] = extent.paddedCols;
  init = tensor::EmptyOp::create(rewriter, loc, sizes, yType.getElementType());
  if (std::optional<int64_t> cols = getConstantIntValue(extent.paddedCols))
    colBlocks = rewriter.getIndexAttr(*cols / blockCols);
  else
    colBlocks = arith::DivUIOp::create(
                    rewriter, loc, cast<Value>(extent.paddedCols),
                    arith::ConstantIndexOp::create(rewriter, loc, blockCols))
                    .getResult();
}

Value CoreOutput::crop(RewriterBase &rewriter, Location loc,
                       RankedTensorType yType, Value result,
                       OutExtent extent) const {
  ArrayRef<int64_t> y = yType.getShape();
  if (getConstantIntValue(extent.paddedCols) == y[3])
    return result;
  auto attr = [&](int64_t v) -> OpFoldResult {
    return rewriter.getIndexAttr(v);
  };
  return tensor::ExtractSliceOp::create(
      rewriter, loc, yType, result,
      ArrayRef<OpFoldResult>{attr(0), attr(0), attr(0), attr(0)},
      ArrayRef<OpFoldResult>{sizes[0], attr(y[1]), extent.rows, extent.cols},
      SmallVector<OpFoldResult>(4, attr(1)));
}

Value convolution::readBias(OpBuilder &b, Location loc, Value bias, Value f0,
                            int64_t filters) {
  Type elt = cast<RankedTensorType>(bias.getType()).getElementType();
  Value v = vector::TransferReadOp::create(
      b, loc, VectorType::get({filters}, elt), bias, ValueRange{f0},
      arith::ConstantOp::create(b, loc, elt, b.getFloatAttr(elt, 0.0)),
      ArrayRef<bool>{true});
  if (elt.isF32())
    return v;
  return arith::ExtFOp::create(b, loc,
                               VectorType::get({filters}, b.getF32Type()), v);
}

/// `x` (widened to f32) placed in a zero [B, C, hp, wp] at (top, left),
/// its pixels `stride` apart (zeros between them).
static Value placeInZeros(RewriterBase &rewriter, Location loc, Value x,
                          OpFoldResult hp, OpFoldResult wp, int64_t top,
                          int64_t left, std::array<int64_t, 2> stride) {
  auto type = cast<RankedTensorType>(x.getType());
  ArrayRef<int64_t> shape = type.getShape();
  Type f32 = rewriter.getF32Type();
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, x);
  if (!type.getElementType().isF32())
    x = copyWidened(rewriter, loc, x, rewriter.getMultiDimIdentityMap(4),
                    sizes);
  if (getConstantIntValue(hp) == shape[2] &&
      getConstantIntValue(wp) == shape[3])
    return x;
  Value zero = arith::ConstantOp::create(rewriter, loc, f32,
                                         rewriter.getF32FloatAttr(0.0));
  Value filled = linalg::FillOp::create(
                     rewriter, loc, zero,
                     ValueRange{tensor::EmptyOp::create(
                         rewriter, loc,
                         ArrayRef<OpFoldResult>{sizes[0], sizes[1], hp, wp},
                         f32)})
                     .getResult(0);
  auto attr = [&](int64_t v) -> OpFoldResult {
    return rewriter.getIndexAttr(v);
  };
  return tensor::InsertSliceOp::create(
      rewriter, loc, x, filled,
      ArrayRef<OpFoldResult>{attr(0), attr(0), attr(top), attr(left)},
      sizes,
      ArrayRef<OpFoldResult>{attr(1), attr(1), attr(stride[0]),
                             attr(stride[1])});
}

/// y[b, f, oh, ow] = bias[f] + sum over (kh, kw, c) of
/// xp[b, g(f) * Cg + c, oh * s_h + kh, ow * s_w + kw] * wT[kh, kw, c, f]:
/// xp in f32 [B, C, Hp, Wp] (`CoreInput`), wT in f32 [KH, KW, Cg, F]
/// (coreWeight; packed for blocked tiles, packFilterTiles and
/// packTransposedTaps, which buildBlockedCore builds), Cg the channels per
/// group, y of `yType` (its batch xp's, its rows and columns `extent`'s).
/// The tiles of an iteration of the scf.forall over (b, oh, filter tiles,
/// column tiles), or on a GPU of its threads, each run the whole reduction
/// (kh, kw, c).
static Value buildCore(RewriterBase &rewriter, Location loc,
                       RankedTensorType yType, Value xp, Value wT,
                       std::optional<Value> bias, ConvTile registers,
                       OutExtent extent, CoreInput in = {}) {
  if (registers.blocked())
    return buildBlockedCore(rewriter, loc, yType, xp, wT, bias, registers,
                            extent, in);
  int64_t tileW = registers.cols;
  Type f32 = rewriter.getF32Type();
  Type yElt = yType.getElementType();
  ArrayRef<int64_t> y = yType.getShape(),
                    w = cast<RankedTensorType>(wT.getType()).getShape();
  int64_t tileF = registers.filters;
  bool filtersOuter = registers.filtersOuter;
  auto index = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };

  // The output's width in whole tiles (the caller padded the input for
  // it); the columns past y's are dropped at the end.
  int64_t blockCols = registers.blockCols();
  CoreOutput output(rewriter, loc, yType, xp, extent, blockCols);
  // The loops over tiles, and where the tile goes: on the CPU one
  // scf.forall over (b, oh, filter tiles, column tiles); on a GPU blocks
  // over (b * Ho + oh, filter blocks, column blocks) and in each a thread
  // per tile, over (filter tiles, column tiles) of the block.
  bool gpu = registers.threadCols != 0;
  auto one = rewriter.getIndexAttr(1);
  scf::ForallOp forall, threads;
  Value bi, oh, f0, ow0, outArg;
  SmallVector<OpFoldResult> tileAt;
  if (!gpu) {
    SmallVector<OpFoldResult> ubs = {output.sizes[0], extent.rows,
                                     rewriter.getIndexAttr(y[1] / tileF),
                                     output.colBlocks};
    forall = scf::ForallOp::create(rewriter, loc, ubs, ValueRange{output.init},
                                   std::nullopt);
    Block *body = forall.getBody();
    rewriter.setInsertionPointToStart(body);
    bi = body->getArgument(0);
    oh = body->getArgument(1);
    f0 = arith::MulIOp::create(rewriter, loc, body->getArgument(2),
                               index(rewriter, tileF));
    ow0 = arith::MulIOp::create(rewriter, loc, body->getArgument(3),
                                index(rewriter, tileW));
    outArg = body->getArgument(4);
    tileAt = {bi, f0, oh, ow0};
  } else {
    // (canScheduleGpu has checked that the shapes are static.)
    int64_t blockF = tileF * registers.threadFilters;
    int64_t blockRows = registers.threadRows;
    int64_t rowBlocks = *getConstantIntValue(extent.rows) / blockRows;
    SmallVector<OpFoldResult> ubs = {rewriter.getIndexAttr(y[0] * rowBlocks),
                                     rewriter.getIndexAttr(y[1] / blockF),
                                     output.colBlocks};
    forall = scf::ForallOp::create(rewriter, loc, ubs, ValueRange{output.init},
                                   std::nullopt);
    Block *body = forall.getBody();
    rewriter.setInsertionPointToStart(body);
    Value r = body->getArgument(0);
    bi = arith::DivUIOp::create(rewriter, loc, r, index(rewriter, rowBlocks));
    Value rb = arith::MulIOp::create(
        rewriter, loc,
        arith::RemUIOp::create(rewriter, loc, r, index(rewriter, rowBlocks)),
        index(rewriter, blockRows));
    Value fb = arith::MulIOp::create(rewriter, loc, body->getArgument(1),
                                     index(rewriter, blockF));
    Value cb = arith::MulIOp::create(rewriter, loc, body->getArgument(2),
                                     index(rewriter, blockCols));
    SmallVector<OpFoldResult> blockAt = {bi, fb, rb, cb};
    SmallVector<OpFoldResult> blockSizes = {
        one, rewriter.getIndexAttr(blockF), rewriter.getIndexAttr(blockRows),
        rewriter.getIndexAttr(blockCols)};
    SmallVector<OpFoldResult> strides(4, one);
    Value blockTile = tensor::ExtractSliceOp::create(
        rewriter, loc,
        RankedTensorType::get({blockF, blockRows, blockCols}, yElt),
        body->getArgument(3), blockAt, blockSizes, strides);
    threads = scf::ForallOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(blockRows),
                               rewriter.getIndexAttr(registers.threadFilters),
                               rewriter.getIndexAttr(registers.threadCols)},
        ValueRange{blockTile}, std::nullopt);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
      tensor::ParallelInsertSliceOp::create(rewriter, loc, threads.getResult(0),
                                            body->getArgument(3), blockAt,
                                            blockSizes, strides);
    }
    Block *threadBody = threads.getBody();
    rewriter.setInsertionPointToStart(threadBody);
    Value tr = threadBody->getArgument(0);
    Value tf = arith::MulIOp::create(rewriter, loc, threadBody->getArgument(1),
                                     index(rewriter, tileF));
    Value tw = arith::MulIOp::create(rewriter, loc, threadBody->getArgument(2),
                                     index(rewriter, tileW));
    oh = arith::AddIOp::create(rewriter, loc, rb, tr);
    f0 = arith::AddIOp::create(rewriter, loc, fb, tf);
    ow0 = arith::AddIOp::create(rewriter, loc, cb, tw);
    outArg = threadBody->getArgument(3);
    tileAt = {tf, tr, tw};
  }
  // The first input channel of the tile's group.
  Value c0 = in.groups == 1
                 ? index(rewriter, 0)
                 : arith::MulIOp::create(rewriter, loc,
                                         arith::DivUIOp::create(
                                             rewriter, loc, f0,
                                             index(rewriter, y[1] / in.groups)),
                                         index(rewriter, w[2]))
                       .getResult();
  auto accType = filtersOuter ? VectorType::get({tileF, tileW}, f32)
                              : VectorType::get({tileW, tileF}, f32);
  Value acc0 = arith::ConstantOp::create(
      rewriter, loc, accType, DenseElementsAttr::get(accType, 0.0f));
  Value pad = arith::ConstantOp::create(rewriter, loc, f32,
                                        rewriter.getF32FloatAttr(0.0));

  // for kh, kw, c: acc += xp[b, c, oh + kh, ow0 + kw : +8] (outer)
  //                       wT[kh, kw, c, f0 : +tileF]
  auto nest = [&](OpBuilder &b, int64_t ub, Value init,
                  function_ref<Value(OpBuilder &, Value, Value)> step) {
    return carriedLoop(b, loc, 0, ub, 1, init, step);
  };
  Value acc = nest(rewriter, w[0], acc0, [&](OpBuilder &b1, Value kh,
                                             Value a1) {
    Value row = inputOffset(b1, loc, oh, kh, in.stride[0]);
    return nest(b1, w[1], a1, [&](OpBuilder &b2, Value kw, Value a2) {
      Value col = inputOffset(b2, loc, ow0, kw, in.stride[1]);
      return nest(b2, w[2], a2, [&](OpBuilder &b3, Value c, Value a3) {
        Value channel =
            in.groups == 1 ? c : arith::AddIOp::create(b3, loc, c0, c);
        Value pixels = readPixels(b3, loc, xp, {bi, channel, row, col}, tileW,
                                  in.stride[1]);
        Value weights = vector::TransferReadOp::create(
            b3, loc, VectorType::get({tileF}, f32), wT,
            ValueRange{kh, kw, c, f0}, pad, ArrayRef<bool>{true});
        if (filtersOuter)
          return vector::OuterProductOp::create(b3, loc, accType, weights,
                                                pixels, a3)
              .getResult();
        return vector::OuterProductOp::create(b3, loc, accType, pixels,
                                              weights, a3)
            .getResult();
      });
    });
  });
  if (bias) {
    Value bv = readBias(rewriter, loc, *bias, f0, tileF);
    // (Filters-major: each filter's bias along its row.)
    if (filtersOuter)
      bv = vector::ShapeCastOp::create(
          rewriter, loc, VectorType::get({tileF, 1}, f32), bv);
    acc = arith::AddFOp::create(
        rewriter, loc, acc,
        vector::BroadcastOp::create(rewriter, loc, accType, bv));
  }
  // [columns, filters] -> [filters, columns], rows of y.
  Value tileT = filtersOuter ? acc
                             : vector::TransposeOp::create(
                                   rewriter, loc, acc, ArrayRef<int64_t>{1, 0})
                                   .getResult();
  if (yElt != f32)
    tileT = arith::TruncFOp::create(
        rewriter, loc, VectorType::get({tileF, tileW}, yElt), tileT);
  Value tile = tensor::EmptyOp::create(
      rewriter, loc, ArrayRef<int64_t>{tileF, tileW}, yElt);
  Value zero = index(rewriter, 0);
  tile = vector::TransferWriteOp::create(rewriter, loc, tileT, tile,
                                         ValueRange{zero, zero},
                                         ArrayRef<bool>{true, true})
             .getResult();
  scf::ForallOp tileLoop = gpu ? threads : forall;
  rewriter.setInsertionPointToStart(tileLoop.getTerminator().getBody());
  SmallVector<OpFoldResult> tileSizes =
      gpu ? SmallVector<OpFoldResult>{rewriter.getIndexAttr(tileF), one,
                                      rewriter.getIndexAttr(tileW)}
          : SmallVector<OpFoldResult>{one, rewriter.getIndexAttr(tileF), one,
                                      rewriter.getIndexAttr(tileW)};
  tensor::ParallelInsertSliceOp::create(
      rewriter, loc, tile, outArg, tileAt, tileSizes,
      SmallVector<OpFoldResult>(tileAt.size(), one));
  if (gpu) {
    mapForall(rewriter, forall, /*threads=*/false);
    mapForall(rewriter, threads, /*threads=*/true);
  }
  rewriter.setInsertionPointAfter(forall);
  return output.crop(rewriter, loc, yType, forall.getResult(0), extent);
}

/// One output phase of a transposed convolution along one axis: the
/// outputs o = q * s + r (q from 0 to `size`), which only the taps
/// k = K - 1 - (first + t * s) of the kernel (t from 0 to `taps`) reach,
/// from the inputs q + t + offset. (With the kernel flipped, the stride-1
/// convolution of the input spread out and padded by K - 1 - padding
/// reads the spread input at o + first + t * s, a pixel where that is
/// K - 1 - padding plus a multiple of s.)
struct TransposedPhase {
  int64_t first, taps, offset, size;
};

/// The phase r (0 <= r < `stride`) of a transposed convolution's axis of
/// `outSize` outputs, a `kernel`-tap kernel and `padding`.
static TransposedPhase transposedPhase(int64_t r, int64_t stride,
                                       int64_t kernel, int64_t padding,
                                       int64_t outSize) {
  int64_t top = kernel - 1 - padding;
  int64_t first = ((top - r) % stride + stride) % stride;
  int64_t taps = first < kernel ? (kernel - first + stride - 1) / stride : 0;
  int64_t size = outSize > r ? (outSize - r + stride - 1) / stride : 0;
  return {first, taps, (r + first - top) / stride, size};
}

using ChooseConvTile =
    function_ref<ConvTile(int64_t, int64_t, int64_t, int64_t)>;

/// conv_transpose_2d (dilation 1) as its s_h x s_w output phases
/// (sub-pixel): the phase (r_h, r_w), the outputs y[b, f, q_h * s_h + r_h,
/// q_w * s_w + r_w], is the stride-1 convolution of the input (padded
/// once, for all phases) with the taps of the kernel that reach it,
/// flipped and its channel dims swapped: wT[t_h, t_w, c, f] =
/// w[g * Cg + c, f - g * Fg, KH - 1 - first_h - t_h * s_h, ...] for f in
/// group g of Fg filters (`TransposedPhase`). Each phase is the core's,
/// into a tensor of its own, inserted into y `stride` apart. Against the
/// convolution of the input with its pixels `stride` apart, this skips the
/// zeros between them, all but 1 / (s_h * s_w) of the multiply-adds.
static void buildTransposed(RewriterBase &rewriter, ConvTranspose2dView ct,
                            ChooseConvTile chooseTile) {
  FusedOp op = ct.getOperation();
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  auto yType = cast<RankedTensorType>(op->getResult(0).getType());
  ArrayRef<int64_t> x = cast<RankedTensorType>(ct.getX().getType()).getShape(),
                    w = cast<RankedTensorType>(ct.getW().getType()).getShape(),
                    y = yType.getShape();
  std::array<int64_t, 2> stride = ct.getStride(), pad = ct.getPadding();
  int64_t groups = ct.getGroups(), cg = w[0] / groups, fg = w[1];
  // The phases that have outputs, their tiles, and the input's padding
  // before (lo) and its padded height and width (hp, wp) for them all.
  struct Phase {
    int64_t rh, rw;
    TransposedPhase h, w;
    ConvTile tile;
  };
  SmallVector<Phase> phases;
  bool emptyPhase = false;
  int64_t loH = 0, loW = 0;
  for (int64_t rh = 0; rh < stride[0]; ++rh) {
    TransposedPhase ph = transposedPhase(rh, stride[0], w[2], pad[0], y[2]);
    for (int64_t rw = 0; rw < stride[1]; ++rw) {
      TransposedPhase pw = transposedPhase(rw, stride[1], w[3], pad[1], y[3]);
      if (ph.size == 0 || pw.size == 0)
        continue;
      // (A phase no tap reaches, where the kernel is smaller than the
      // stride, is zeros.)
      if (ph.taps == 0 || pw.taps == 0) {
        emptyPhase = true;
        continue;
      }
      phases.push_back(
          {rh, rw, ph, pw, chooseTile(y[1], fg, ph.size, pw.size)});
      loH = std::max(loH, -ph.offset);
      loW = std::max(loW, -pw.offset);
    }
  }
  int64_t hp = loH + x[2], wp = loW + x[3];
  for (const Phase &p : phases) {
    hp = std::max(hp, loH + p.h.offset + p.h.size + p.h.taps - 1);
    wp = std::max(wp, loW + p.w.offset + paddedWidth(p.w.size, p.tile) +
                          p.w.taps - 1);
  }
  Value xp =
      placeInZeros(rewriter, loc, ct.getX(), rewriter.getIndexAttr(hp),
                   rewriter.getIndexAttr(wp), loH, loW, /*stride=*/{1, 1});

  SmallVector<OpFoldResult> ySizes = withBatchOf(rewriter, loc, xp, y);
  Value result = tensor::EmptyOp::create(rewriter, loc, ySizes,
                                         yType.getElementType());
  if (emptyPhase) {
    Type elt = yType.getElementType();
    Value zero = arith::ConstantOp::create(rewriter, loc, elt,
                                           rewriter.getFloatAttr(elt, 0.0));
    result = linalg::FillOp::create(rewriter, loc, zero, result).getResult(0);
  }
  auto attr = [&](int64_t v) -> OpFoldResult {
    return rewriter.getIndexAttr(v);
  };
  AffineExpr d0, d1, d2, d3;
  bindDims(ctx, d0, d1, d2, d3);
  // Blocked tiles (every phase's or none's: they depend on the filters
  // per group) read the phases' weights packed at once: tap (i, j) of a
  // phase is the kernel's (KH - 1 - first_h - i s_h, KW - 1 - first_w -
  // j s_w).
  // (Every phase's tile is blocked or none is, of the same filters: both
  // follow from the filters per group.)
  SmallVector<Value> packed;
  if (!phases.empty() && phases.front().tile.blocked()) {
    SmallVector<PhaseTaps> taps;
    for (const Phase &p : phases) {
      PhaseTaps &t = taps.emplace_back();
      t.shape = {p.h.taps, p.w.taps};
      for (int64_t i = 0; i < p.h.taps; ++i)
        for (int64_t j = 0; j < p.w.taps; ++j)
          t.positions.push_back(
              (w[2] - 1 - p.h.first - stride[0] * i) * w[3] + w[3] - 1 -
              p.w.first - stride[1] * j);
    }
    packed = packTransposedTaps(rewriter, loc, ct.getW(), phases.front().tile,
                                groups, taps);
  }
  for (const Phase &p : phases) {
    // The input rows and columns the phase reads.
    int64_t colsP = paddedWidth(p.w.size, p.tile);
    SmallVector<OpFoldResult> inSizes =
        withBatchOf(rewriter, loc, xp,
                    {x[0], x[1], p.h.size + p.h.taps - 1,
                     colsP + p.w.taps - 1});
    Value in = tensor::ExtractSliceOp::create(
        rewriter, loc, xp,
        ArrayRef<OpFoldResult>{attr(0), attr(0), attr(loH + p.h.offset),
                               attr(loW + p.w.offset)},
        inSizes, SmallVector<OpFoldResult>(4, attr(1)));
    assert(p.tile.blocked() == !packed.empty() &&
           p.tile.filters == phases.front().tile.filters);
    Value wT =
        p.tile.blocked()
            ? packed[&p - phases.begin()]
            : coreWeight(
                  rewriter, loc, ct.getW(),
                  AffineMap::get(4, 0,
                                 {groups == 1 ? d2 : d3.floorDiv(fg) * cg + d2,
                                  groups == 1 ? d3 : d3 % fg,
                                  w[2] - 1 - p.h.first - stride[0] * d0,
                                  w[3] - 1 - p.w.first - stride[1] * d1},
                                 ctx),
                  {p.h.taps, p.w.taps, cg, y[1]});
    auto phaseType = RankedTensorType::get({y[0], y[1], p.h.size, p.w.size},
                                           yType.getElementType());
    CoreInput coreIn;
    coreIn.groups = groups;
    Value phase = buildCore(rewriter, loc, phaseType, in, wT, std::nullopt,
                            p.tile,
                            {attr(p.h.size), attr(p.w.size), attr(colsP)},
                            coreIn);
    if (stride[0] == 1 && stride[1] == 1) {
      result = phase;
      continue;
    }
    SmallVector<OpFoldResult> sizes = ySizes;
    sizes[2] = attr(p.h.size);
    sizes[3] = attr(p.w.size);
    result = tensor::InsertSliceOp::create(
        rewriter, loc, phase, result,
        ArrayRef<OpFoldResult>{attr(0), attr(0), attr(p.rh), attr(p.rw)},
        sizes,
        ArrayRef<OpFoldResult>{attr(1), attr(1), attr(stride[0]),
                               attr(stride[1])});
  }
  rewriter.replaceOp(op, result);
}

/// conv_transpose_2d (one group, dilation 1, padding below the kernel
/// size) as one stride-1 convolution: of the input with its pixels
/// `stride` apart, padded by k - 1 - padding (and output_padding at the
/// end), with the kernel flipped and its channel dims swapped:
/// wT[kh, kw, c, f] = w[c, f, KH - 1 - kh, KW - 1 - kw]. The zeros between
/// pixels cost stride^2 times the multiply-adds of buildTransposed's
/// phases, but it is one loop nest (on a GPU, one kernel against a kernel
/// and two copies per phase).
static void buildSpreadTransposed(RewriterBase &rewriter,
                                  ConvTranspose2dView ct,
                                  ChooseConvTile chooseTile) {
  FusedOp op = ct.getOperation();
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  AffineExpr d0, d1, d2, d3;
  bindDims(ctx, d0, d1, d2, d3);
  auto yType = cast<RankedTensorType>(op->getResult(0).getType());
  ArrayRef<int64_t> x = cast<RankedTensorType>(ct.getX().getType()).getShape(),
                    w = cast<RankedTensorType>(ct.getW().getType()).getShape(),
                    y = yType.getShape();
  std::array<int64_t, 2> stride = ct.getStride(), pad = ct.getPadding(),
                         outPad = ct.getOutputPadding();
  int64_t top = w[2] - 1 - pad[0], left = w[3] - 1 - pad[1];
  int64_t hp = (x[2] - 1) * stride[0] + 1 + 2 * top + outPad[0];
  int64_t wp = (x[3] - 1) * stride[1] + 1 + 2 * left + outPad[1];
  // Zeros on the right for the output's columns in whole tiles.
  int64_t wo = wp - w[3] + 1;
  ConvTile tile = chooseTile(w[1], w[1], y[2], wo);
  wp += paddedWidth(wo, tile) - wo;
  Value xp = placeInZeros(rewriter, loc, ct.getX(),
                          rewriter.getIndexAttr(hp),
                          rewriter.getIndexAttr(wp), top, left, stride);
  // (GPU tiles: never blocked.)
  assert(!tile.blocked());
  Value wT = coreWeight(
      rewriter, loc, ct.getW(),
      AffineMap::get(4, 0, {d2, d3, w[2] - 1 - d0, w[3] - 1 - d1}, ctx),
      {w[2], w[3], w[0], w[1]});
  rewriter.replaceOp(
      op, buildCore(rewriter, loc, yType, xp, wT, std::nullopt, tile,
                    {rewriter.getIndexAttr(y[2]), rewriter.getIndexAttr(y[3]),
                     rewriter.getIndexAttr(paddedWidth(y[3], tile))}));
}

/// buildConvolution and buildGpuConvolution, their register tiles chosen
/// by `chooseTile` for F filters, the filters of a group and the output's
/// height and width (ShapedType::kDynamic where not static); a transposed
/// convolution as its phases, or `spread` out.
static void buildConvolutionWith(RewriterBase &rewriter, FusedOp op,
                                 ChooseConvTile chooseTile, bool spread) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  MLIRContext *ctx = rewriter.getContext();
  AffineExpr d0, d1, d2, d3;
  bindDims(ctx, d0, d1, d2, d3);
  if (std::optional<ConvTranspose2dView> ct = ConvTranspose2dView::match(op))
    return spread ? buildSpreadTransposed(rewriter, *ct, chooseTile)
                  : buildTransposed(rewriter, *ct, chooseTile);
  Conv2dView conv(op);
  ArrayRef<int64_t> x =
      cast<RankedTensorType>(conv.getX().getType()).getShape();
  ArrayRef<int64_t> w =
      cast<RankedTensorType>(conv.getW().getType()).getShape();
  std::array<int64_t, 2> pad = conv.getPadding(), stride = conv.getStride();
  // Padded, with zeros on the right for the output's columns in whole
  // tiles (zeros no output reads); with a dynamic width the tile is chosen
  // as for a wide output.
  int64_t outWidth = ShapedType::isDynamic(x[3])
                   ? std::numeric_limits<int32_t>::max()
                   : (x[3] + 2 * pad[1] - w[3]) / stride[1] + 1;
  int64_t outHeight = ShapedType::isDynamic(x[2])
                          ? ShapedType::kDynamic
                          : (x[2] + 2 * pad[0] - w[2]) / stride[0] + 1;
  ConvTile tile =
      chooseTile(w[0], w[0] / conv.getGroups(), outHeight, outWidth);
  // The weight as [kh, kw, Cg, F] (coreWeight), or packed.
  Value wT = tile.blocked()
                 ? packFilterTiles(rewriter, loc, conv.getW(), tile)
                 : coreWeight(rewriter, loc, conv.getW(),
                              AffineMap::get(4, 0, {d3, d2, d0, d1}, ctx),
                              {w[2], w[3], w[1], w[0]});
  // (With stride s_w, the last tile reads s_w - 1 pixels past its last.)
  int64_t tail = stride[1] - 1;
  // The sizes as affine maps of x's height and width (s0, s1): folded to
  // constants where those are static, affine.apply on tensor.dim where not.
  AffineExpr h = getAffineSymbolExpr(0, ctx), wd = getAffineSymbolExpr(1, ctx);
  SmallVector<OpFoldResult> hw = {
      tensor::getMixedSize(rewriter, loc, conv.getX(), 2),
      tensor::getMixedSize(rewriter, loc, conv.getX(), 3)};
  auto size = [&](AffineExpr e) {
    return affine::makeComposedFoldedAffineApply(
        rewriter, loc, AffineMap::get(0, 2, e, ctx), hw);
  };
  auto roundUp = [](AffineExpr e, int64_t unit) {
    return e.ceilDiv(unit) * unit;
  };
  AffineExpr wo = (wd + 2 * pad[1] - w[3]).floorDiv(stride[1]) + 1;
  AffineExpr woP = roundUp(wo, tile.blockCols());
  OutExtent extent = {size((h + 2 * pad[0] - w[2]).floorDiv(stride[0]) + 1),
                      size(wo), size(woP)};
  OpFoldResult hp = size(h + 2 * pad[0]);
  OpFoldResult wp = affine::makeComposedFoldedAffineMax(
      rewriter, loc,
      AffineMap::get(0, 2,
                     {wd + 2 * pad[1], (woP - 1) * stride[1] + w[3] + tail},
                     ctx),
      hw);
  Value xp = placeInZeros(rewriter, loc, conv.getX(), hp, wp, pad[0], pad[1],
                          {1, 1});
  CoreInput in{stride, conv.getGroups()};
  auto yType = cast<RankedTensorType>(op->getResult(0).getType());
  rewriter.replaceOp(op, buildCore(rewriter, loc, yType, xp, wT,
                                   conv.getBias(), tile, extent, in));
}

LogicalResult mlir::fuel::buildConvolution(RewriterBase &rewriter, FusedOp op,
                                           const ScheduleOptions &options) {
  if (CausalConv1dView::match(op))
    return buildCausalConv1d(rewriter, op, options);
  buildConvolutionWith(rewriter, op,
                       [&](int64_t, int64_t filtersPerGroup, int64_t height,
                           int64_t width) {
                         return convTile(filtersPerGroup, height, width,
                                         options);
                       },
                       /*spread=*/false);
  return success();
}

void mlir::fuel::buildGpuConvolution(RewriterBase &rewriter, FusedOp op,
                                     int64_t maxThreads) {
  buildConvolutionWith(
      rewriter, op,
      [&](int64_t filters, int64_t filtersPerGroup, int64_t height,
          int64_t width) {
        return gpuConvTile(filters, filtersPerGroup, height, width,
                           maxThreads);
      },
      /*spread=*/true);
}
