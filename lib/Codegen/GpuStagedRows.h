//===- GpuStagedRows.h - Attention's rows on threads, staged ----*- C++ -*-===//
//
// What the staged GPU forms of attention (GpuStagedAttention.cpp, the
// forward; GpuStagedAttentionBackward.cpp, the backwards) are built of: a
// block loop over (batch, head, block of rows), a thread per row of the
// block, and in the block's body sequential loops over blocks of 16 of the
// other side (keys for the query rows of flash_attn and dq, queries for the
// key rows of dk and dv) whose rows all the block's threads first copy into
// workgroup memory (stageTiles, GpuStaged.h), then read.
//
// In the tensor form the rows' state ([rows, ...] tensors) is carried by
// the sequential loops and each thread loop touches its thread's row of
// it; fuel-gpu-map-forall puts the barriers between the thread loops and
// fuel-gpu-private-allocs makes the state's buffers the row each thread
// uses (registers once promoted).
//
//===----------------------------------------------------------------------===//

#ifndef FUEL_LIB_CODEGEN_GPUSTAGEDROWS_H
#define FUEL_LIB_CODEGEN_GPUSTAGEDROWS_H

#include "AttentionBlocks.h"
#include "GpuSchedules.h"

#include "llvm/ADT/MapVector.h"

namespace mlir {
namespace fuel {
namespace attention {

/// Rows of the other side per staged block.
constexpr int64_t kStagedKeys = 16;
/// Rows (threads) per block, at least: fewer share too little.
constexpr int64_t kMinStagedRows = 32;

/// Rows per block of a staged form for a sequence of `len` rows whose
/// CPU block is `block`: that block where it is 32 or 64 rows; else, for
/// a sequence of 32 rows or more, 64 rows (32 for 32), the sequence padded
/// to them: a block of 8 or 16 rows leaves most of a warp idle and shares
/// each staged block among few rows, and one of 40 or 48 rows does not
/// copy tiles in equal parts. Shorter sequences keep `block` (which the
/// staged forms decline).
int64_t stagedRows(int64_t len, int64_t block);

/// The shapes of the staged form of attention on q, k and v with a thread
/// per query row or, with `keyRows`, per key row: blocks of those rows of
/// stagedRows, the other side in steps of 16, each padded to them.
AttnShape stagedRowsShape(Value q, Value k, Value v, bool keyRows);

/// Whether blocks of `rows` rows (threads) stage blocks of 16 rows of
/// operands `cols` wide: each a multiple of 16 up to `maxCols`, 32 to
/// max-threads rows, [cols, 16] and [16, cols] tiles the rows copy in equal
/// parts.
bool canStageRows(int64_t rows, ArrayRef<int64_t> cols, int64_t maxCols,
                  const GpuScheduleOptions &options);

/// Whether every operand of `op` and its result have static shapes of
/// f32, f16 or bf16.
bool hasStaticFloatShapes(FusedOp op);

/// Builds a staged form: the block loop over (batch, head, block of rows),
/// and in its body thread loops over the block's rows and sequential loops
/// that stage blocks of the other side.
class StagedRows {
public:
  /// `rows`: the rows (threads) of a block; `s`: the op's shapes.
  StagedRows(RewriterBase &b, Location loc, const AttnShape &s, int64_t rows)
      : b(b), loc(loc), s(s), rows(rows), bb{b, loc}, f32(b.getF32Type()) {}

  /// Before `at`: the block loop over (B, `heads`, `count` blocks) writing
  /// `outs` ([B, heads, count * rows, ...] each), the rewriter left at the
  /// start of its body (sets blocks, bi, hi, row0).
  void open(Operation *at, int64_t heads, int64_t count, ValueRange outs);

  /// The block's rows of output `i`, [rows, ...].
  Value blockRows(unsigned i = 0);

  /// Writes `written` (blockRows(i) written, for each output i) into the
  /// outputs, tiles the contractions' reductions by whole staged blocks (a
  /// row of scores is then read at static offsets and stays in registers)
  /// and vectorizes the loop; returns the block loop's results, the
  /// rewriter after it.
  ValueRange close(ValueRange written);

  /// An scf.forall on `#gpu.thread<x>`s, a thread per row of `inits` (each
  /// [rows, ...]), at the builder's insertion point: `body` gets the
  /// thread's row and its row of each init ([1, ...]) and returns them
  /// written.
  scf::ForallOp
  rowThreads(ValueRange inits,
             function_ref<SmallVector<Value>(Value r, ValueRange mine)> body);

  /// New [rows, ...] tensors of f32, each thread's row filled with `values`.
  SmallVector<Value> filledRows(ArrayRef<ArrayRef<int64_t>> shapes,
                                ArrayRef<double> values);

  /// A loop from `lo` to `hi` in steps of `step` carrying `inits`:
  /// `body(x0, carried)` builds a step (returns the carried values
  /// updated).
  scf::ForOp
  stepLoop(Value lo, Value hi, ValueRange inits,
           function_ref<SmallVector<Value>(Value x0, ValueRange)> body,
           int64_t step = kStagedKeys);

  /// Rows x0 to x0 + 16 of head `head` of each of `operands` ([B, H, len,
  /// cols]) in workgroup memory as f32, copied by one thread loop: [cols,
  /// 16] (transposed) where the bool says so, [16, cols] otherwise; 0 past
  /// `len`. With `chunked`, a [16, cols] block is copied in chunks of up to
  /// 16 bytes of a row, each one vector read (the forward's values), and a
  /// [cols, 16] block in chunks of 4 of its columns, each one 16-byte
  /// write free of bank conflicts (the forward's keys). The backwards'
  /// kernels are at ptxas's register limit for sm_80 (dv at D = 32: 128),
  /// where the chunks' vectors spill (dk at D = 32: 8 bytes).
  SmallVector<Value> stage(Value head, Value x0, int64_t len,
                           ArrayRef<std::pair<Value, bool>> operands,
                           bool chunked = false);

  /// The bytes of workgroup memory stage() takes for `operands`.
  int64_t stageBytes(ArrayRef<std::pair<Value, bool>> operands) const;

  /// Rows row0 to row0 + rows of head `head` of the first `operands`
  /// ([B, H, len, cols] each) that fit, with `otherBytes` (the kernel's
  /// other tiles), in `maxBytes` of workgroup memory
  /// (GpuScheduleOptions::maxOwnRowsBlockBytes), as f32, [rows, cols]
  /// each, copied once by one thread loop in chunks of up to 16 bytes of a
  /// row (padded rows, past len, copy the last row); ownRow then reads
  /// them there. Returns how many were staged. A thread reads its own row
  /// at every step: from workgroup memory in 16-byte vectors free of bank
  /// conflicts (workgroupRowStride), where from global memory a warp's
  /// request (a float a lane, rows apart) touches 32 sectors of 32 cache
  /// lines.
  unsigned stageOwnRows(ArrayRef<Value> operands, Value head, int64_t len,
                        int64_t otherBytes, int64_t maxBytes);

  /// Row row0 + r of head `head` of `t` ([B, H, len, cols]) as [1, cols]
  /// of f32 (padded rows, past len, read the last row: their results are
  /// dropped): from workgroup memory where stageOwnRows staged it.
  Value ownRow(Value t, Value head, Value r, int64_t len);

  /// Row r of `t` ([rows, ...]) as [1, ...].
  Value rowOf(Value t, Value r);

  /// The block's rows of output `i` ([rows, cols] of its element type)
  /// written by a thread loop, `row(r, mine)` writing thread r's row into
  /// `mine` ([1, cols], of f32 or of the output's type) and returning it.
  /// Where stageOwnRows staged rows as wide, their tile (read by then)
  /// takes the rows, each thread's in 16-byte vectors free of bank
  /// conflicts, and the block's threads then copy them out, narrowed,
  /// consecutive threads on consecutive 16-byte chunks of a row: whole
  /// requests, where a warp writing its threads' own rows of global memory
  /// moves a float a lane, lanes a row apart (32 sectors a request).
  Value writeRows(unsigned i, function_ref<Value(Value r, Value mine)> row);

  /// out[0, j] = sum_c row[0, c] * tile[c, j] (f32, [1, 16]).
  Value scoresRow(Value row, Value tileT);

  RewriterBase &b;
  Location loc;
  const AttnShape &s;
  int64_t rows;
  BlockBuilder bb;
  Type f32;
  scf::ForallOp blocks;
  Value bi, hi, row0;

private:
  /// Row row0 + r of a sequence of `len` rows, or its last row where that
  /// is past len (a padded row, whose results are dropped).
  Value ownRowIndex(Value r, int64_t len);

  /// The rows stageOwnRows staged: (operand, head) to the tile, in the
  /// order staged.
  llvm::MapVector<std::pair<Value, Value>, Value> ownRows;
};

} // namespace attention
} // namespace fuel
} // namespace mlir

#endif // FUEL_LIB_CODEGEN_GPUSTAGEDROWS_H
