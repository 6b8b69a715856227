//===- ConvolutionWeights.cpp - The convolution cores' weights -----------===//
//
// The weight of a convolution as its core reads it, widened to f32: for
// the CPU's blocked tiles packed per tile of T filters, [F / T, Cg, KH,
// KW, T], so that a tile reads its weights front to back in the order of
// its reduction; otherwise [KH, KW, Cg, F]. The packings read 8 x 8
// squares, 8 consecutive weights of 8 filters, and transpose them in
// registers; a generic copy read each element alone from rows of filters
// far apart ([512, 512, 3, 3]: 3 ms, 3/5 of its
// convolution on [1, 512, 7, 7], where PyTorch's whole convolution took
// 4.2).
//
//===----------------------------------------------------------------------===//

#include "ConvolutionCore.h"
#include "ScheduleUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fuel;
using namespace mlir::fuel::convolution;

namespace {
/// The lanes of a square: 8 f32, a 256-bit register.
constexpr int64_t kSquare = 8;

/// 8 rows of `src` read from `rowAt(i)` (8 consecutive elements of its
/// last dim each, zeros past its end where `inBounds` is false), widened to
/// f32 and transposed: vector j holds element j of every row.
SmallVector<Value> transposedSquare(OpBuilder &b, Location loc, Value src,
                                    function_ref<SmallVector<Value>(int64_t)>
                                        rowAt,
                                    bool inBounds) {
  Type f32 = b.getF32Type();
  Type elt = cast<RankedTensorType>(src.getType()).getElementType();
  Value pad = arith::ConstantOp::create(b, loc, elt, b.getFloatAttr(elt, 0.0));
  SmallVector<Value> rows;
  for (int64_t i = 0; i < kSquare; ++i) {
    Value row = vector::TransferReadOp::create(
        b, loc, VectorType::get({kSquare}, elt), src, rowAt(i), pad,
        ArrayRef<bool>{inBounds});
    if (elt != f32)
      row = arith::ExtFOp::create(b, loc, VectorType::get({kSquare}, f32),
                                  row);
    rows.push_back(row);
  }
  return transposeVectors(b, loc, rows);
}

/// An scf.forall over the `tiles` filter tiles producing, for each of
/// `shapes`, a tensor [tiles, shape...] in f32: `body(b, ft, slices)` fills
/// filter tile ft's slices [shape...] and returns them.
SmallVector<Value> forEachFilterTile(
    RewriterBase &rewriter, Location loc, int64_t tiles,
    ArrayRef<SmallVector<int64_t>> shapes,
    function_ref<SmallVector<Value>(OpBuilder &, Value, SmallVector<Value>)>
        body) {
  auto attr = [&](int64_t v) -> OpFoldResult {
    return rewriter.getIndexAttr(v);
  };
  Type f32 = rewriter.getF32Type();
  SmallVector<Value> inits;
  for (ArrayRef<int64_t> shape : shapes) {
    SmallVector<int64_t> all = {tiles};
    all.append(shape.begin(), shape.end());
    inits.push_back(tensor::EmptyOp::create(rewriter, loc, all, f32));
  }
  auto forall = scf::ForallOp::create(
      rewriter, loc, ArrayRef<OpFoldResult>{attr(tiles)}, inits,
      std::nullopt);
  Block *block = forall.getBody();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(block);
  // Tile ft's slice of each result: [1, shape...] at (ft, 0, ...).
  auto sliceOf = [&](ArrayRef<int64_t> shape) {
    SmallVector<OpFoldResult> at(shape.size() + 1, attr(0)),
        sizes = {attr(1)};
    at[0] = block->getArgument(0);
    for (int64_t d : shape)
      sizes.push_back(attr(d));
    return std::make_pair(at, sizes);
  };
  SmallVector<Value> slices;
  for (auto [i, shape] : llvm::enumerate(shapes)) {
    auto [at, sizes] = sliceOf(shape);
    slices.push_back(tensor::ExtractSliceOp::create(
        rewriter, loc, RankedTensorType::get(shape, f32),
        block->getArgument(1 + i), at, sizes,
        SmallVector<OpFoldResult>(at.size(), attr(1))));
  }
  slices = body(rewriter, block->getArgument(0), slices);
  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  for (auto [i, shape] : llvm::enumerate(shapes)) {
    auto [at, sizes] = sliceOf(shape);
    tensor::ParallelInsertSliceOp::create(
        rewriter, loc, slices[i], block->getArgument(1 + i), at, sizes,
        SmallVector<OpFoldResult>(at.size(), attr(1)));
  }
  return SmallVector<Value>(forall.getResults());
}
} // namespace

Value convolution::coreWeight(RewriterBase &rewriter, Location loc, Value w,
                              AffineMap wMap, ArrayRef<int64_t> sizes) {
  return copyWidened(rewriter, loc, w, wMap,
                     getAsIndexOpFoldResult(rewriter.getContext(), sizes));
}

// Packed, a tile reads its weights front to back, in the order of its
// reduction (c, then kh and kw: with c innermost, the weight packed to
// match, a [1, 64, 56, 56] convolution with 64 3 x 3 filters ran no faster
// than before the blocks, 1.1x slower than this order). conv2d's weight is
// [F, Cg * KH * KW] in that order already: each filter tile's rows of 8
// filters are transposed square by square.
Value convolution::packFilterTiles(RewriterBase &rewriter, Location loc,
                                   Value w, ConvTile tile) {
  ArrayRef<int64_t> s = cast<RankedTensorType>(w.getType()).getShape();
  int64_t tileF = tile.filters, m = s[1] * s[2] * s[3];
  Value flat = tensor::CollapseShapeOp::create(
      rewriter, loc, w, SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
  Value packed = forEachFilterTile(
      rewriter, loc, s[0] / tileF, {{m, tileF}},
      [&](OpBuilder &b, Value ft,
          SmallVector<Value> slices) -> SmallVector<Value> {
        Value packed = slices[0];
        auto index = [&](OpBuilder &b, int64_t v) -> Value {
          return arith::ConstantIndexOp::create(b, loc, v);
        };
        Value f0 = arith::MulIOp::create(b, loc, ft, index(b, tileF));
        // Weights [k, k + 8) of the tile's filters, `count` of them.
        auto squares = [&](OpBuilder &b, Value k, Value packed,
                           int64_t count) {
          for (int64_t g = 0; g < tileF / kSquare; ++g) {
            SmallVector<Value> cols = transposedSquare(
                b, loc, flat,
                [&](int64_t i) -> SmallVector<Value> {
                  return {arith::AddIOp::create(b, loc, f0,
                                                index(b, g * kSquare + i)),
                          k};
                },
                count == kSquare);
            for (int64_t j = 0; j < count; ++j)
              packed = vector::TransferWriteOp::create(
                           b, loc, cols[j], packed,
                           ValueRange{arith::AddIOp::create(b, loc, k,
                                                            index(b, j)),
                                      index(b, g * kSquare)},
                           ArrayRef<bool>{true})
                           .getResult();
          }
          return packed;
        };
        int64_t whole = m / kSquare * kSquare;
        packed = carriedLoop(b, loc, 0, whole, kSquare, packed,
                             [&](OpBuilder &b, Value k, Value packed) {
                               return squares(b, k, packed, kSquare);
                             });
        if (whole != m)
          packed = squares(b, index(b, whole), packed, m - whole);
        return {packed};
      })[0];
  return tensor::ExpandShapeOp::create(
      rewriter, loc,
      RankedTensorType::get({s[0] / tileF, s[1], s[2], s[3], tileF},
                            rewriter.getF32Type()),
      packed, SmallVector<ReassociationIndices>{{0}, {1, 2, 3}, {4}});
}

// conv_transpose_2d's weight is [Cin, Fg, KH * KW]: for each input channel
// a filter's taps are consecutive, filters KH * KW apart. Each square is 8
// filters' taps [p, p + 8) of one channel, read once for all phases: the
// vector of each phase's tap among them is written into that phase's
// packed weight. (Each phase packing its own read the weight once per
// phase; one packing of the whole kernel that each phase read with the
// stride of its taps made the phases' convolutions up to 1.2x slower.)
SmallVector<Value> convolution::packTransposedTaps(
    RewriterBase &rewriter, Location loc, Value w, ConvTile tile,
    int64_t groups, ArrayRef<PhaseTaps> phases) {
  ArrayRef<int64_t> s = cast<RankedTensorType>(w.getType()).getShape();
  int64_t tileF = tile.filters, cg = s[0] / groups, fg = s[1],
          positions = s[2] * s[3];
  Value flat = tensor::CollapseShapeOp::create(
      rewriter, loc, w, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  SmallVector<SmallVector<int64_t>> shapes;
  for (const PhaseTaps &p : phases)
    shapes.push_back(
        {cg, static_cast<int64_t>(p.positions.size()), tileF});
  SmallVector<Value> packed = forEachFilterTile(
      rewriter, loc, groups * fg / tileF, shapes,
      [&](OpBuilder &b, Value ft,
          SmallVector<Value> slices) -> SmallVector<Value> {
        auto index = [&](OpBuilder &b, int64_t v) -> Value {
          return arith::ConstantIndexOp::create(b, loc, v);
        };
        // The tile's group, and its first filter within the group (a tile
        // lies within one group).
        Value f0 = arith::MulIOp::create(b, loc, ft, index(b, tileF));
        Value g = arith::DivUIOp::create(b, loc, f0, index(b, fg));
        Value local = arith::RemUIOp::create(b, loc, f0, index(b, fg));
        Value c0 = arith::MulIOp::create(b, loc, g, index(b, cg));
        auto loop = scf::ForOp::create(
            b, loc, index(b, 0), index(b, cg), index(b, 1), slices,
            [&](OpBuilder &b, Location, Value c, ValueRange carried) {
              SmallVector<Value> packed(carried);
              Value channel = arith::AddIOp::create(b, loc, c0, c);
              for (int64_t p = 0; p < positions; p += kSquare) {
                for (int64_t sq = 0; sq < tileF / kSquare; ++sq) {
                  SmallVector<Value> cols = transposedSquare(
                      b, loc, flat,
                      [&](int64_t i) -> SmallVector<Value> {
                        return {channel,
                                arith::AddIOp::create(
                                    b, loc, local,
                                    index(b, sq * kSquare + i)),
                                index(b, p)};
                      },
                      p + kSquare <= positions);
                  for (auto [ph, phase] : llvm::enumerate(phases))
                    for (auto [t, tap] : llvm::enumerate(phase.positions))
                      if (tap >= p && tap < p + kSquare)
                        packed[ph] =
                            vector::TransferWriteOp::create(
                                b, loc, cols[tap - p], packed[ph],
                                ValueRange{c, index(b, t),
                                           index(b, sq * kSquare)},
                                ArrayRef<bool>{true})
                                .getResult();
                }
              }
              scf::YieldOp::create(b, loc, packed);
            });
        return SmallVector<Value>(loop.getResults());
      });
  SmallVector<Value> weights;
  for (auto [p, phase] : llvm::enumerate(phases))
    weights.push_back(tensor::ExpandShapeOp::create(
        rewriter, loc,
        RankedTensorType::get({groups * fg / tileF, cg, phase.shape[0],
                               phase.shape[1], tileF},
                              rewriter.getF32Type()),
        packed[p],
        SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}, {4}}));
  return weights;
}
