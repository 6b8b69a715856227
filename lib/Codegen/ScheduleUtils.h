//===- ScheduleUtils.h - Steps the schedules share --------------*- C++ -*-===//

#ifndef FUEL_LIB_CODEGEN_SCHEDULEUTILS_H
#define FUEL_LIB_CODEGEN_SCHEDULEUTILS_H

#include "FuelFused/Codegen/Schedules.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <string>

namespace mlir {
namespace fuel {

class FusedOp;

/// An op replaced by its decomposition: the values that replaced its
/// results, and the ops that compute them.
struct Decomposition {
  SmallVector<Value> values;
  llvm::SmallPtrSet<Operation *, 32> ops;
};

/// Decomposes `op` where it is and replaces it by the decomposition. Fails,
/// changing nothing, with `why` set, when decomposition does.
FailureOr<Decomposition> decomposeInPlace(RewriterBase &rewriter, FusedOp op,
                                          std::string &why);

/// Vectorizes every linalg op inside `loop` that has static shapes, then
/// applies the cleanups upstream's vectorization does
/// (`transform.structured.vectorize_children_and_apply_patterns`) to the ops
/// inside `loop` only: nothing outside it is folded or erased. With
/// `contractions`, multiply-add reductions become vector.contract.
void vectorizeInside(RewriterBase &rewriter, Operation *loop,
                     bool contractions);

/// Patterns that move a reshape (tensor.collapse_shape, expand_shape) out of
/// a vector transfer of a whole tensor into a vector.shape_cast: a read of
/// collapse_shape(x) becomes a read of x, shape-cast; expand_shape of a
/// write into d becomes a write, shape-cast, into expand_shape(d). A thread's
/// non-contiguous slice collapsed to one dim (GpuRowWise.cpp) is then read
/// and written as its tile, a row of it a contiguous vector.
void populateFoldReshapesIntoTransfersPatterns(RewritePatternSet &patterns);

/// Patterns that unroll each vector transfer whose innermost dim holds more
/// than `maxBytes` into transfers of [1, ..., maxBytes / element size]
/// (upstream's vector unrolling): what a GPU loads or stores at once, each
/// a piece that fuel-gpu-align-vector-accesses can align.
void populateSplitWideTransfersPatterns(RewritePatternSet &patterns,
                                        int64_t maxBytes);

/// Applies `patterns` greedily to the ops inside `loop` (not `loop`
/// itself), and to the ops they create.
void applyInside(Operation *loop, RewritePatternSet &&patterns);

/// What tileAndFuseRoot made: the outermost loop and the tiled root.
struct TiledRoot {
  Operation *loop;
  TilingInterface tiled;
};

/// Tiles `root` (an op with one result) by `tileSizes` in loops of
/// `loopType`, fusing in the producers `fuse` accepts; replaces `root` by
/// the loops' result and erases it and the producers nothing uses any more.
/// Fails, changing nothing, when tiling does. `interchange`, when given,
/// orders the loops (outermost first) as scf::SCFTilingOptions does.
FailureOr<TiledRoot> tileAndFuseRoot(RewriterBase &rewriter,
                                     TilingInterface root,
                                     ArrayRef<OpFoldResult> tileSizes,
                                     scf::SCFTilingOptions::LoopType loopType,
                                     function_ref<bool(Operation *)> fuse,
                                     ArrayRef<int64_t> interchange = {});

/// `x` with zeros after it up to `shape` (as large in every dim): a fill
/// of zeros with `x` inserted at the origin; `x` itself when it has that
/// shape.
Value padWithZeros(RewriterBase &rewriter, Location loc, Value x,
                   ArrayRef<int64_t> shape);

/// `x` inserted into zeros of `shape` (dims that may be dynamic; each at
/// least x's), at the origin.
Value padWithZeros(RewriterBase &rewriter, Location loc, Value x,
                   ArrayRef<OpFoldResult> shape);

/// A linalg.generic over all dims of a new f32 tensor of sizes `shape`,
/// reading `in` through `inMap` (from those dims to in's indices) and
/// widening to f32: a copy, transposed or regrouped by the map.
Value copyWidened(OpBuilder &b, Location loc, Value in, AffineMap inMap,
                  ArrayRef<OpFoldResult> shape);

/// `v` (as many vectors as they have lanes, a power of two) transposed:
/// for each bit of the lane index, from the highest, the off-diagonal
/// blocks of that size swapped between pairs of vectors (one shuffle per
/// vector and bit: LLVM selects 8 vperm2f128, 8 unpck*pd and 16 shufps for
/// 8 vectors of 8 f32).
SmallVector<Value> transposeVectors(OpBuilder &b, Location loc,
                                    SmallVector<Value> v);

/// An scf.for from `lb` to `ub` by `step` carrying one value, from
/// `init`: `body(b, iv, carried)` builds the value an iteration yields.
Value carriedLoop(OpBuilder &b, Location loc, int64_t lb, int64_t ub,
                  int64_t step, Value init,
                  function_ref<Value(OpBuilder &, Value, Value)> body);
/// The same to a bound known at run time.
Value carriedLoop(OpBuilder &b, Location loc, int64_t lb, Value ub,
                  int64_t step, Value init,
                  function_ref<Value(OpBuilder &, Value, Value)> body);

/// A register tile of a contraction: `m` rows by `n` columns of the
/// output, accumulated in half the target's vector registers (`options`):
/// `n` is two registers wide, `m` a power of two up to 8 (AVX-512's 32
/// registers of 16 f32 lanes: 8 x 32; AVX2's 16 of 8: 4 x 16, where 8 x 32
/// spilled two accumulators in three and ran fused_linear at 32 GFLOP/s
/// against 4 x 16's 85). `cacheM`: the rows of a contraction's cache tile
/// of the output, at most: 64 for 8-row register tiles; 128 for fewer
/// rows (4 x 16 on AVX2 measured 15% faster on 1024^3 with 128 than with
/// 64: the right operand's block is packed per cache tile, and its copy
/// then serves twice the rows).
struct RegisterTile {
  int64_t m, n, cacheM;
};
RegisterTile registerTile(const ScheduleOptions &options);

/// The largest multiple of `unit` up to `most` that divides `size` (not
/// only powers of two: 4000 has tiles of 160 columns); 0 when none does.
int64_t dividingTile(int64_t size, int64_t most, int64_t unit);

/// The largest power-of-two multiple of `unit` (itself a power of two), at
/// most `most`, that divides `size`; 0 when there is none.
int64_t tileOf(int64_t size, int64_t most, int64_t unit);

/// Replaces each static tensor.extract_slice of a tensor.empty inside `loop`
/// by a tensor.empty of its own: a tile's room for a result is then the
/// tile's, not a part of a buffer the size of the whole (which, shared by
/// the loop's iterations and read inside them, bufferizes to copies).
void privatizeEmptySlices(RewriterBase &rewriter, Operation *loop);

/// Tiles the one reduction loop of `op` by `step` in an scf.for (a
/// register tile's reduction: the accumulator is carried, in registers once
/// vectorized). Leaves `op` as it is when it has not exactly one reduction
/// loop or tiling fails.
void tileReduction(RewriterBase &rewriter, linalg::LinalgOp op, int64_t step);

} // namespace fuel
} // namespace mlir

#endif // FUEL_LIB_CODEGEN_SCHEDULEUTILS_H
