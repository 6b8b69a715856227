//===- ConvolutionCore.h - The convolution cores' shared parts -*- C++ -*-===//
//
// What the convolution schedule (Convolution.cpp: its shapes, its core of
// tiles that each run the whole reduction, its GPU form) and the CPU core
// of blocked tiles (ConvolutionBlocked.cpp) share: the register tile, how
// a core reads its input and weight and what it computes.
//
//===----------------------------------------------------------------------===//

#ifndef FUEL_LIB_CODEGEN_CONVOLUTIONCORE_H
#define FUEL_LIB_CODEGEN_CONVOLUTIONCORE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

#include <algorithm>
#include <array>
#include <optional>

namespace mlir {
namespace fuel {
namespace convolution {

/// The register tile of a convolution: `cols` output columns by `filters`
/// filters. Where the filters (per group) are a multiple of 16 it is the
/// contraction's (registerTile): its rows are output columns, its columns
/// filters, one outer product per step broadcasting each pixel (8 x 32 f32
/// accumulators are 16 AVX-512 registers; 4 x 16 on AVX2, where 8 x 32
/// spilled). Otherwise (depthwise convolutions, small groups, a few
/// filters) it is filters-major (`filtersOuter`): up to 4 filters by up to
/// 4 vectors of output columns, each step broadcasting each filter's weight
/// over a vector of pixels.
struct ConvTile {
  int64_t cols, filters;
  bool filtersOuter = false;
  /// On a GPU: the threads of a block along output rows, filter tiles and
  /// column tiles, a tile each (0 on the CPU, where one scf.forall covers
  /// them).
  int64_t threadRows = 0, threadFilters = 0, threadCols = 0;
  /// On the CPU, with filters inner: the column tiles of an iteration of
  /// the outer loop, which take each block of the reduction in turn
  /// (buildBlockedCore).
  int64_t colTiles = 1;
  /// On the CPU, with filters inner: the output rows of an iteration (of
  /// `colTiles` tiles each), which take each block of the reduction in
  /// turn with the others.
  int64_t rowTiles = 1;

  /// The output columns of an iteration of the outer loop: its tiles', or
  /// on a GPU a block's.
  int64_t blockCols() const {
    return cols * colTiles * std::max<int64_t>(threadCols, 1);
  }
  /// Whether the core reads the weight packed per filter tile (`coreWeight`)
  /// and runs the reduction in blocks (buildBlockedCore): CPU tiles of
  /// outer products that broadcast pixels.
  bool blocked() const { return threadCols == 0 && !filtersOuter; }
};

/// How the core reads its input xp, padded (with zeros on the right for
/// the output's columns in whole tiles): with stride s, a tile's pixels of
/// input row oh * s_h + kh are s_w apart (`readPixels`); with `groups`,
/// filter f reads the channels of its group.
struct CoreInput {
  std::array<int64_t, 2> stride = {1, 1};
  int64_t groups = 1;
};

/// The output's rows and columns, and its columns in whole register tiles
/// (the columns past y's are computed from zeros and dropped): constants,
/// or index values for a dynamic height or width.
struct OutExtent {
  OpFoldResult rows, cols, paddedCols;
};

/// The output a core fills: `sizes` [B, F, rows, padded columns] (B
/// xp's), `init` an empty tensor of them, and the iterations of the loop
/// along columns, `blockCols` columns each.
struct CoreOutput {
  SmallVector<OpFoldResult> sizes;
  Value init;
  OpFoldResult colBlocks;

  CoreOutput(RewriterBase &rewriter, Location loc, RankedTensorType yType,
             Value xp, OutExtent extent, int64_t blockCols);

  /// `result` (of `sizes`) without the columns past y's.
  Value crop(RewriterBase &rewriter, Location loc, RankedTensorType yType,
             Value result, OutExtent extent) const;
};

/// A [B, ...] size list: `shape` with its first size that of dim 0 of `x`
/// (a tensor.dim when dynamic: the batch).
SmallVector<OpFoldResult> withBatchOf(OpBuilder &b, Location loc, Value x,
                                      ArrayRef<int64_t> shape);

/// The bias of filters [f0, f0 + `filters`) as a vector of f32.
Value readBias(OpBuilder &b, Location loc, Value bias, Value f0,
               int64_t filters);

/// The input row (or column) of kernel offset `k` for output `o` along an
/// axis of stride `s`: o * s + k.
Value inputOffset(OpBuilder &b, Location loc, Value o, Value k, int64_t s);

/// `width` pixels of xp (f32, [B, C, H, W]) from `at`, `stride` apart:
/// stride x width consecutive pixels read, every stride-th kept by one
/// shuffle. (Blocked tiles broadcast the pixels one at a time, so LLVM
/// loads only those kept. Splitting the input into its s_h x s_w phases
/// first, where they are consecutive, copied it once more: a [1, 128, 56,
/// 56] convolution with stride 2 ran 1.08-1.14x slower, ResNet's 7 x 7
/// stem 1.03-1.15x.)
Value readPixels(OpBuilder &b, Location loc, Value xp, ValueRange at,
                 int64_t width, int64_t stride);

/// The weight as the core reads it for tiles that are not blocked, widened
/// to f32: `w` through `wMap` (from the dims (kh, kw, c, f) to w's
/// indices), [KH, KW, Cg, F] (`sizes`).
Value coreWeight(RewriterBase &rewriter, Location loc, Value w,
                 AffineMap wMap, ArrayRef<int64_t> sizes);

/// conv2d's weight w [F, Cg, KH, KW] packed for blocked tiles,
/// [F / tileF, Cg, KH, KW, tileF] in f32 (a tile's weights front to back),
/// 8 x 8 squares at a time transposed in registers
/// (ConvolutionWeights.cpp).
Value packFilterTiles(RewriterBase &rewriter, Location loc, Value w,
                      ConvTile tile);

/// The taps of one output phase of a transposed convolution: tap (i, j)
/// of its `shape` [TH, TW] is the kernel's position positions[i * TW + j]
/// (kh * KW + kw).
struct PhaseTaps {
  SmallVector<int64_t> positions;
  std::array<int64_t, 2> shape;
};

/// conv_transpose_2d's weight w [Cin, Fg, KH, KW] (`groups` of Cin / groups
/// input channels and Fg filters) packed for the blocked tiles of each of
/// `phases`: [groups * Fg / tileF, Cin / groups, TH, TW, tileF] in f32;
/// 8 x 8 squares at a time transposed in registers, the weight read once
/// for all phases (ConvolutionWeights.cpp).
SmallVector<Value> packTransposedTaps(RewriterBase &rewriter, Location loc,
                                      Value w, ConvTile tile, int64_t groups,
                                      ArrayRef<PhaseTaps> phases);

/// The convolution core for blocked tiles (ConvTile::blocked), on the CPU:
/// y (of `yType`) = bias + the convolution of xp with the packed weight wP
/// (packFilterTiles, packTransposedTaps), as the core of Convolution.cpp
/// computes it (ConvolutionBlocked.cpp).
Value buildBlockedCore(RewriterBase &rewriter, Location loc,
                       RankedTensorType yType, Value xp, Value wP,
                       std::optional<Value> bias, ConvTile tile,
                       OutExtent extent, CoreInput in);

} // namespace convolution
} // namespace fuel
} // namespace mlir

#endif // FUEL_LIB_CODEGEN_CONVOLUTIONCORE_H
