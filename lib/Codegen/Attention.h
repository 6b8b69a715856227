//===- Attention.h - The attention schedule ---------------------*- C++ -*-===//

#ifndef FUEL_LIB_CODEGEN_ATTENTION_H
#define FUEL_LIB_CODEGEN_ATTENTION_H

#include "FuelFused/Codegen/Schedules.h"
#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir {
namespace fuel {

/// The checks of canSchedule that are the attention schedule's own.
LogicalResult canScheduleAttention(FusedOp op, const ScheduleOptions &options,
                                   std::string &why);

/// Replaces `op` (a flash_attn canScheduleAttention accepts) by its
/// FlashAttention-2 form: query blocks in an scf.forall, key blocks in an
/// scf.for with an online softmax, tiled and vectorized.
LogicalResult buildAttention(RewriterBase &rewriter, FusedOp op,
                             const ScheduleOptions &options);

/// Replaces `op` (a flash_attn) by FlashAttention-2's loops with a loop
/// over the rows of each query block inside (the GPU form: a thread per
/// query row, each with its own key loop over blocks of `blockK` keys, at
/// most). Returns the scf.forall over (batch, head, query block) and the
/// one over its rows, neither tiled nor vectorized.
std::pair<scf::ForallOp, scf::ForallOp>
buildAttentionRows(RewriterBase &rewriter, FusedOp op, int64_t blockK);

/// The checks of canSchedule for flash_attn's backwards.
LogicalResult canScheduleAttentionBackward(FusedOp op,
                                           const ScheduleOptions &options,
                                           std::string &why);

/// Replaces `op` (a flash_attn_backward_q/k/v canScheduleAttentionBackward
/// accepts) by FlashAttention-2's backward, tiled and vectorized.
LogicalResult buildAttentionBackward(RewriterBase &rewriter, FusedOp op,
                                     const ScheduleOptions &options);

/// Replaces `op` (a flash_attn_backward_q/k/v) by FlashAttention-2's
/// backward with a loop over the rows of each block inside (the GPU form):
/// a thread per query row for dq and for the row statistics (lse and D)
/// that dk and dv read, each running its loop over blocks of `step` keys;
/// a thread per key row for dk and dv, each running its loop over blocks of
/// `step` queries (attention::backwardRowsShape). `schedule` is called with
/// each scf.forall over blocks and the one over its rows as soon as both
/// are built; neither is tiled or vectorized.
void buildAttentionBackwardRows(
    RewriterBase &rewriter, FusedOp op, int64_t step,
    function_ref<void(scf::ForallOp blocks, scf::ForallOp rows)> schedule);

/// The checks of canSchedule for paged_attn (PagedAttention.cpp).
LogicalResult canSchedulePagedAttention(FusedOp op,
                                        const ScheduleOptions &options,
                                        std::string &why);

/// Replaces `op` (a paged_attn) by one scf.forall iteration per sequence
/// and query head, scores and the weighted sum of values in vectors
/// (PagedAttention.cpp).
LogicalResult buildPagedAttention(RewriterBase &rewriter, FusedOp op,
                                  const ScheduleOptions &options);

/// What the CPU and GPU forms of paged_attn share (PagedAttention.cpp).
namespace paged {
/// The sizes both forms read off a paged_attn.
struct PagedShape {
  int64_t heads, d, dv;
  /// Query heads per kv head.
  int64_t group;
  int64_t blockSize;
  /// The tokens the block table can address: max_blocks * block_size.
  int64_t tokens;
  static PagedShape of(PagedAttnView paged);
};

/// `n` elements of `from` at `at` as a vector, widened to f32.
Value readF32(OpBuilder &b, Location loc, Value from, ValueRange at,
              int64_t n);

/// Where token `t` of sequence `s` lives in the cache: (block, slot), from
/// the block table.
std::pair<Value, Value> locate(OpBuilder &b, Location loc, Value table,
                               Value s, Value t, int64_t blockSize);

/// context_lens[s] as an index.
Value contextLength(OpBuilder &b, Location loc, Value lens, Value s);

/// The tokens a sequence of `len` attends: those before `len`, at most the
/// table's `tokens` (the decomposition reads no further either).
Value liveTokens(OpBuilder &b, Location loc, Value len, int64_t tokens);

/// Token `t`'s score from `dot` (its key times the query): scaled,
/// soft-capped and, with a `slope`, less slope * |len - 1 - t| (ALiBi).
Value finishScore(OpBuilder &b, Location loc, PagedAttnView paged, Value dot,
                  Value slope, Value len, Value t);
} // namespace paged

} // namespace fuel
} // namespace mlir

#endif // FUEL_LIB_CODEGEN_ATTENTION_H
