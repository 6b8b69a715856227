//===- ConvolutionBlocked.cpp - The CPU convolution core in blocks --------===//
//
// The convolution schedule's core for CPU tiles of outer products that
// broadcast pixels (ConvTile::blocked; Convolution.cpp builds the rest):
// the weight packed per filter tile, the reduction in blocks of channels
// whose weights stay in L1 while each of a row's column tiles takes them
// in turn.
//
//===----------------------------------------------------------------------===//

#include "ConvolutionCore.h"
#include "ScheduleUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fuel;
using namespace mlir::fuel::convolution;

/// The bytes of one block of the packed weight at most: the column tiles
/// of a CPU iteration read it in turn (buildBlockedCore), from L1.
constexpr int64_t kWeightBlockBytes = 16384;

/// The channels of a block of the reduction of blocked tiles
/// (buildBlockedCore): the most that divide the `cg` channels of a group
/// and keep a block's weights, kh x kw x block x `filters` f32, within
/// kWeightBlockBytes; at least one.
static int64_t channelBlock(int64_t cg, int64_t kh, int64_t kw,
                            int64_t filters) {
  for (int64_t c = cg; c > 1; --c)
    if (cg % c == 0 && c * kh * kw * filters * 4 <= kWeightBlockBytes)
      return c;
  return 1;
}

// An iteration of the scf.forall over (b, blocks of rows, filter tiles,
// blocks of columns) computes `rowTiles` x `colTiles` register tiles (tile
// t: row t / colTiles, column tile t mod colTiles), with the reduction in
// blocks of channels: for each block, each tile in turn loads its partial
// sums, adds the block's steps (c, then kh and kw) and stores them. The
// block's weights (at most kWeightBlockBytes) are then read from L1 by
// all the tiles: read tile by tile over all the channels, as the weight of
// a layer of 256 channels is too large for L1 (147 KiB a filter tile on
// AVX2 for 3 x 3 kernels), each tile streamed it from L2 and a
// [1, 256, 14, 14] convolution ran at 30 GFLOP/s.
Value convolution::buildBlockedCore(RewriterBase &rewriter, Location loc,
                                    RankedTensorType yType, Value xp,
                                    Value wP, std::optional<Value> bias,
                                    ConvTile tile, OutExtent extent,
                                    CoreInput in) {
  int64_t tileW = tile.cols, tileF = tile.filters, colTiles = tile.colTiles,
          rowTiles = tile.rowTiles, tiles = rowTiles * colTiles;
  Type f32 = rewriter.getF32Type();
  Type yElt = yType.getElementType();
  ArrayRef<int64_t> y = yType.getShape(),
                    w = cast<RankedTensorType>(wP.getType()).getShape();
  int64_t cg = w[1], kh = w[2], kw = w[3];
  int64_t block = channelBlock(cg, kh, kw, tileF);
  auto index = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto attr = [&](int64_t v) -> OpFoldResult {
    return rewriter.getIndexAttr(v);
  };

  // The output's width in whole iterations; the columns past y's are
  // dropped at the end.
  int64_t blockCols = tile.blockCols();
  CoreOutput output(rewriter, loc, yType, xp, extent, blockCols);
  // (rowTiles > 1 only where the height is static.)
  OpFoldResult rowBlocks = extent.rows;
  if (rowTiles > 1)
    rowBlocks = attr(*getConstantIntValue(extent.rows) / rowTiles);
  auto forall = scf::ForallOp::create(
      rewriter, loc,
      ArrayRef<OpFoldResult>{output.sizes[0], rowBlocks, attr(y[1] / tileF),
                             output.colBlocks},
      ValueRange{output.init}, std::nullopt);
  Block *body = forall.getBody();
  rewriter.setInsertionPointToStart(body);
  Value bi = body->getArgument(0), ft = body->getArgument(2);
  Value oh0 = arith::MulIOp::create(rewriter, loc, body->getArgument(1),
                                    index(rewriter, rowTiles));
  Value f0 = arith::MulIOp::create(rewriter, loc, ft, index(rewriter, tileF));
  Value ow0 = arith::MulIOp::create(rewriter, loc, body->getArgument(3),
                                    index(rewriter, blockCols));
  // The first input channel of the tile's group.
  Value c0 = index(rewriter, 0);
  if (in.groups != 1)
    c0 = arith::MulIOp::create(
        rewriter, loc,
        arith::DivUIOp::create(rewriter, loc, f0,
                               index(rewriter, y[1] / in.groups)),
        index(rewriter, cg));
  auto accType = VectorType::get({tileW, tileF}, f32);
  Value pad = arith::ConstantOp::create(rewriter, loc, f32,
                                        rewriter.getF32FloatAttr(0.0));
  Value zero = index(rewriter, 0);
  auto loop = [&](OpBuilder &b, int64_t lb, int64_t ub, int64_t step,
                  Value init,
                  function_ref<Value(OpBuilder &, Value, Value)> body) {
    return carriedLoop(b, loc, lb, ub, step, init, body);
  };

  // acc (`width` columns) + the steps of the channels [cb, cb + block)
  // for the columns from col0:
  // acc += xp[b, c, oh + kh, col0 + kw : +width] (outer) wP[ft, c, kh, kw, :]
  auto accumulateCols = [&](OpBuilder &b1, Value acc, Value cb, Value oh,
                            Value col0, int64_t width) {
    auto type = VectorType::get({width, tileF}, f32);
    return loop(b1, 0, block, 1, acc, [&](OpBuilder &b2, Value ci,
                                          Value a2) {
      Value c = arith::AddIOp::create(b2, loc, cb, ci);
      Value channel =
          in.groups == 1 ? c : arith::AddIOp::create(b2, loc, c0, c);
      return loop(b2, 0, kh, 1, a2, [&](OpBuilder &b3, Value r, Value a3) {
        Value row = inputOffset(b3, loc, oh, r, in.stride[0]);
        return loop(b3, 0, kw, 1, a3, [&](OpBuilder &b4, Value q, Value a4) {
          Value col = inputOffset(b4, loc, col0, q, in.stride[1]);
          Value pixels = readPixels(b4, loc, xp, {bi, channel, row, col},
                                    width, in.stride[1]);
          Value weights = vector::TransferReadOp::create(
              b4, loc, VectorType::get({tileF}, f32), wP,
              ValueRange{ft, c, r, q, index(b4, 0)}, pad,
              ArrayRef<bool>{true});
          return vector::OuterProductOp::create(b4, loc, type, pixels,
                                                weights, a4)
              .getResult();
        });
      });
    });
  };
  // The same for column tile t: all its columns where y has them all; only
  // y's where the tile holds y's last columns (`last` of them, a narrower
  // accumulator); none past y's (the tiles that round the row up to whole
  // iterations). With a static width that is not a multiple of the
  // iterations', as for ResNet's rows of 14 and 7 (tiles of 4 with AVX2).
  std::optional<int64_t> cols = getConstantIntValue(extent.cols);
  std::optional<int64_t> paddedCols = getConstantIntValue(extent.paddedCols);
  int64_t last = cols ? *cols % tileW : 0;
  // Tile t is the iteration's row t / colTiles, column tile t % colTiles.
  auto rowOf = [&](OpBuilder &b, Value t) -> Value {
    return arith::DivUIOp::create(b, loc, t, index(b, colTiles));
  };
  auto colOf = [&](OpBuilder &b, Value t) -> Value {
    return arith::MulIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, t, index(b, colTiles)),
        index(b, tileW));
  };
  auto accumulate = [&](OpBuilder &b1, Value acc, Value cb, Value t) {
    Value oh = arith::AddIOp::create(b1, loc, oh0, rowOf(b1, t));
    Value col0 = arith::AddIOp::create(b1, loc, ow0, colOf(b1, t));
    if (!cols || cols == paddedCols)
      return accumulateCols(b1, acc, cb, oh, col0, tileW);
    Value whole = arith::CmpIOp::create(
        b1, loc, arith::CmpIPredicate::ule,
        arith::AddIOp::create(b1, loc, col0, index(b1, tileW)),
        index(b1, *cols));
    auto ifWhole = scf::IfOp::create(
        b1, loc, whole,
        [&](OpBuilder &b, Location) {
          scf::YieldOp::create(b, loc,
                               accumulateCols(b, acc, cb, oh, col0, tileW));
        },
        [&](OpBuilder &b, Location) {
          if (!last) {
            scf::YieldOp::create(b, loc, acc);
            return;
          }
          Value part = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                             col0, index(b, *cols));
          auto ifPart = scf::IfOp::create(
              b, loc, part,
              [&](OpBuilder &pb, Location) {
                Value narrow = vector::ExtractStridedSliceOp::create(
                    pb, loc, acc, ArrayRef<int64_t>{0, 0},
                    ArrayRef<int64_t>{last, tileF}, ArrayRef<int64_t>{1, 1});
                narrow = accumulateCols(pb, narrow, cb, oh, col0, last);
                scf::YieldOp::create(
                    pb, loc,
                    vector::InsertStridedSliceOp::create(
                        pb, loc, narrow, acc, ArrayRef<int64_t>{0, 0},
                        ArrayRef<int64_t>{1, 1})
                        .getResult());
              },
              [&](OpBuilder &pb, Location) {
                scf::YieldOp::create(pb, loc, acc);
              });
          scf::YieldOp::create(b, loc, ifPart.getResult(0));
        });
    return ifWhole.getResult(0);
  };

  // Tile t's sums with the bias, transposed, written into `rows`, the
  // iteration's slice of y [tileF, blockCols].
  Value bv;
  if (bias)
    bv = vector::BroadcastOp::create(rewriter, loc, accType,
                                     readBias(rewriter, loc, *bias, f0, tileF));
  auto finish = [&](OpBuilder &b, Value acc, Value t, Value rows) {
    if (bv)
      acc = arith::AddFOp::create(b, loc, acc, bv);
    Value accT = vector::TransposeOp::create(b, loc, acc,
                                             ArrayRef<int64_t>{1, 0});
    if (yElt != f32)
      accT = arith::TruncFOp::create(
          b, loc, VectorType::get({tileF, tileW}, yElt), accT);
    AffineMap skipRow = AffineMap::get(
        3, 0, {b.getAffineDimExpr(0), b.getAffineDimExpr(2)}, b.getContext());
    return vector::TransferWriteOp::create(
               b, loc, accT, rows, ValueRange{zero, rowOf(b, t), colOf(b, t)},
               skipRow, ArrayRef<bool>{true, true})
        .getResult();
  };
  // The iteration's slice of y, [tileF, rowTiles, blockCols].
  SmallVector<OpFoldResult> ySlice = {attr(1), attr(tileF), attr(rowTiles),
                                      attr(blockCols)};
  Value rows = tensor::ExtractSliceOp::create(
      rewriter, loc,
      RankedTensorType::get({tileF, rowTiles, blockCols}, yElt),
      body->getArgument(4), ArrayRef<OpFoldResult>{bi, f0, oh0, ow0},
      ySlice, SmallVector<OpFoldResult>(4, attr(1)));
  Value zeros = arith::ConstantOp::create(
      rewriter, loc, accType, DenseElementsAttr::get(accType, 0.0f));

  // One block: each tile's sums in registers from zeros to y. (Through
  // memory, as below, a [1, 64, 56, 56] convolution with 256 1 x 1
  // filters ran 10% slower.)
  if (block == cg) {
    rows = loop(rewriter, 0, tiles, 1, rows, [&](OpBuilder &b, Value t,
                                                  Value rows) {
      return finish(b, accumulate(b, zeros, index(b, 0), t), t, rows);
    });
  } else {
    // The partial sums [tiles, tileW, tileF] through the blocks: the first
    // block starts from zeros, the others from the previous block's sums.
    Value partial = tensor::EmptyOp::create(
        rewriter, loc, ArrayRef<int64_t>{tiles, tileW, tileF}, f32);
    partial = loop(rewriter, 0, cg, block, partial, [&](OpBuilder &b0,
                                                        Value cb,
                                                        Value sums) {
      Value first = arith::CmpIOp::create(b0, loc, arith::CmpIPredicate::eq,
                                          cb, index(b0, 0));
      return loop(b0, 0, tiles, 1, sums, [&](OpBuilder &b1, Value t,
                                              Value sums) {
        auto start = scf::IfOp::create(
            b1, loc, first,
            [&](OpBuilder &b, Location) {
              scf::YieldOp::create(b, loc, zeros);
            },
            [&](OpBuilder &b, Location) {
              scf::YieldOp::create(
                  b, loc,
                  vector::TransferReadOp::create(
                      b, loc, accType, sums, ValueRange{t, zero, zero}, pad,
                      ArrayRef<bool>{true, true})
                      .getResult());
            });
        Value acc = accumulate(b1, start.getResult(0), cb, t);
        return vector::TransferWriteOp::create(b1, loc, acc, sums,
                                               ValueRange{t, zero, zero},
                                               ArrayRef<bool>{true, true})
            .getResult();
      });
    });
    rows = loop(rewriter, 0, tiles, 1, rows, [&](OpBuilder &b, Value t,
                                                  Value rows) {
      Value acc = vector::TransferReadOp::create(
          b, loc, accType, partial, ValueRange{t, zero, zero}, pad,
          ArrayRef<bool>{true, true});
      return finish(b, acc, t, rows);
    });
  }
  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(
      rewriter, loc, rows, body->getArgument(4),
      ArrayRef<OpFoldResult>{bi, f0, oh0, ow0}, ySlice,
      SmallVector<OpFoldResult>(4, attr(1)));
  rewriter.setInsertionPointAfter(forall);
  return output.crop(rewriter, loc, yType, forall.getResult(0), extent);
}
