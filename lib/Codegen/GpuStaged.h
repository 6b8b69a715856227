//===- GpuStaged.h - Contractions staged in workgroup memory ----*- C++ -*-===//
//
// The GPU form of a contraction C[m, n] = sum_k A[m, k] * B[k, n] whose
// operand tiles a block's threads stage in workgroup memory along K
// (GpuStagedLinear.cpp): fused_linear, the quantized matmuls with many
// rows (their weight decoded as it is staged) and the convolutions as
// implicit matrix products per image and group (GpuConvolution.cpp). The
// caller says how an element of A and of B is read (as f32) and how a
// thread's square tile of sums (4 x 4, or 8 x 8 in the largest block
// tiles) becomes the output's.
//
//===----------------------------------------------------------------------===//

#ifndef FUEL_LIB_CODEGEN_GPUSTAGED_H
#define FUEL_LIB_CODEGEN_GPUSTAGED_H

#include "FuelFused/Codegen/Schedules.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

#include <functional>

namespace mlir {
namespace fuel {

/// The side of a thread's square tile of the output in `sums` (the
/// tensor a StagedContraction's `finish` gets).
int64_t stagedThreadTile(Value sums);

/// A contraction to stage: its sizes, its operands' elements, its output.
struct StagedContraction {
  /// The leading dim's extent (the grid's z; 1 and `batched` unset where
  /// there is none), M, N, K.
  int64_t lead = 1, m = 0, n = 0, k = 0;
  bool batched = false;
  /// The output: [lead,] M, N.
  RankedTensorType resultType;
  /// Whether B is laid out along K (B[k, n] at n * K + k, the quantized
  /// weights [N, K]): its tile is then copied with consecutive threads on
  /// consecutive k, else on consecutive n.
  bool bAlongK = false;
  /// A[lead][m, k] and B[lead][k, n] as f32 (`lead` null where there is
  /// none), at the builder's insertion point.
  std::function<Value(OpBuilder &, Value lead, Value m, Value k)> a, b;
  /// Where A is contiguous along K (B along N, not `bAlongK`): the most
  /// elements a thread reads at once (16 bytes of them), and the f32
  /// vector of `width` of them from [lead][m, k] (B: [k, n]); 1 and null
  /// where not.
  int64_t aChunk = 1, bChunk = 1;
  std::function<Value(OpBuilder &, Value lead, Value m, Value k,
                      int64_t width)>
      aChunks, bChunks;
  /// The output's tile at (`rows`, `cols`) from the thread's `sums`
  /// (tensor<TxTxf32>, T = stagedThreadTile(sums)), written into `mine`
  /// (its T x T slice of the output) and returned.
  std::function<Value(OpBuilder &, Value lead, Value rows, Value cols,
                      Value sums, Value mine)>
      finish;
};

/// A tile of f32 in workgroup memory that a block's threads fill: element
/// (row, col) is `element(row, col)` (built at the builder's insertion
/// point), consecutive threads copying consecutive columns, or with
/// `alongRows` consecutive rows.
struct WorkgroupTile {
  int64_t rows, cols;
  bool alongRows;
  function_ref<Value(Value row, Value col)> element;
  /// Where set: a thread copies chunks of `chunk` consecutive columns
  /// (written as one vector), `chunkElements(row, col)` giving the f32
  /// vector of columns col, ..., col + chunk - 1 (read as one vector where
  /// the source is contiguous along them). Along rows, consecutive threads
  /// copy the same chunk of consecutive rows.
  int64_t chunk = 1;
  function_ref<Value(Value row, Value col)> chunkElements = {};
  /// Whether each of the block's threads then reads a row of its own, in
  /// 16-byte vectors: the rows are laid out 4 words wider
  /// (workgroupRowStride).
  bool readByRow = false;
  /// Where set, the tile is written into `into` (a [rows, cols] tensor of
  /// any float type, such as a block of an output: `element` and
  /// `chunkElements` then give values of its element type) rather than
  /// into a new workgroup tensor: the same copy, out of workgroup memory.
  Value into = {};
};

/// Whether `threads` threads copy `tile` in equal strided parts: groups of
/// G = gcd(E, threads) consecutive threads along the tile's extent E along
/// the threads (in chunks), the threads / G groups in whole passes over
/// the other dim (E a multiple of `threads`, or `threads` of E, are the
/// cases G = threads and G = E); and chunks that divide its columns and
/// its row stride.
bool canStageTile(const WorkgroupTile &tile, int64_t threads);

/// The most columns (a power of two, from `most` down to 1) that `tile`'s
/// threads can copy as chunks.
int64_t largestChunk(WorkgroupTile tile, int64_t threads, int64_t most);

/// The row stride of `tile` in workgroup memory: its columns, plus 4 where
/// it is copied along rows or read by row and a multiple of 8 wide, so
/// that each row still starts at a multiple of 16 bytes, for its readers'
/// vector loads (its columns where it has an `into`). A warp writing one
/// column of 32 rows then finds their words at banks 4 apart (4-way
/// conflicts, where a stride of 16 words gives 16-way and of 32, 32-way);
/// writing (or reading) chunks of 4 columns (16 bytes a lane, 8 lanes a
/// wavefront), 8 consecutive rows start at 4 * (an odd number) * i words,
/// 8 different multiples of 4 modulo 32, and cover the 32 banks: no
/// conflicts.
int64_t workgroupRowStride(const WorkgroupTile &tile);

/// `tiles` (canStageTile holds for each) in new workgroup tensors (or
/// their `into`), copied by one scf.forall on the threads of `threadDims`
/// (1 or 2 dims, the last on x) at the builder's insertion point; thread
/// t = y * TX + x copies elements t, t + threads, ... of each tile in the
/// order of its copy. A tile whose workgroupRowStride exceeds its columns
/// is a slice of a wider workgroup tensor. A chunk wider than 16 bytes of
/// the tile, where every 8 consecutive threads copy 8 consecutive chunks,
/// is written as 16-byte pieces starting at a piece that depends on the
/// thread, so that the 8 pieces of one wavefront take different banks.
SmallVector<Value> stageTiles(RewriterBase &b, Location loc,
                              ArrayRef<int64_t> threadDims,
                              ArrayRef<WorkgroupTile> tiles);

/// `v` (a float scalar) as f32.
Value widenToF32(OpBuilder &b, Location loc, Value v);

/// `width` consecutive elements of `from` along its last dim from `at`, as
/// an f32 vector read at once (a chunk of a staged tile).
Value readChunkAsF32(OpBuilder &b, Location loc, Value from, ValueRange at,
                     int64_t width);

/// The usual finish of a thread's tile: `sums` (tensor<TxTxf32>) plus,
/// where given, `addend` (an f32 scalar, or a tensor<TxE> slice with an
/// element per row of the tile for `addendDim` 0, per column for 1),
/// narrowed to the element type of `mine` (by `narrow` where given, else
/// truncated), written into `mine`.
Value finishTile(OpBuilder &b, Location loc, Value sums, Value mine,
                 Value addend = Value(), unsigned addendDim = 0,
                 function_ref<Value(OpBuilder &, Value)> narrow = {});

/// Whether `c` has block tiles with `options.maxThreads` threads at most:
/// M and N multiples of 32, K of 8, at least 64 threads, a grid the GPU
/// holds.
bool canStageContraction(const StagedContraction &c,
                         const GpuScheduleOptions &options);

/// The staged form of `c` (canStageContraction holds) at the rewriter's
/// insertion point: a tensor of `c.resultType`.
Value buildStagedContraction(RewriterBase &rewriter, Location loc,
                             const StagedContraction &c,
                             const GpuScheduleOptions &options);

} // namespace fuel
} // namespace mlir

#endif // FUEL_LIB_CODEGEN_GPUSTAGED_H
