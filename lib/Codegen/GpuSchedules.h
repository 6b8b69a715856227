//===- GpuSchedules.h - The GPU forms of the schedules ----------*- C++ -*-===//

#ifndef FUEL_LIB_CODEGEN_GPUSCHEDULES_H
#define FUEL_LIB_CODEGEN_GPUSCHEDULES_H

#include "FuelFused/Codegen/Schedules.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include "llvm/ADT/SmallPtrSet.h"

namespace mlir {
namespace fuel {

/// Maps `loop`'s dims (at most 3) to GPU blocks, or with `threads` to the
/// threads of a block: the last dim to x, the one before to y, then z.
void mapForall(RewriterBase &rewriter, scf::ForallOp loop, bool threads);

/// The checks of canScheduleGpu that are the GPU row-wise schedule's own.
LogicalResult canScheduleGpuRowWise(FusedOp op,
                                    const GpuScheduleOptions &options,
                                    std::string &why);

/// Applies the GPU row-wise schedule to the decomposition whose last op is
/// `root` (GpuRowWise.cpp). Fails with `why` set when the decomposition does
/// not fit it; the row loop may then be left, unmapped (it still lowers).
LogicalResult
scheduleGpuRowWise(RewriterBase &rewriter, linalg::LinalgOp root,
                   const llvm::SmallPtrSetImpl<Operation *> &decomposition,
                   const GpuScheduleOptions &options, std::string &why);

/// The checks of canScheduleGpu that are the GPU contraction schedule's
/// own.
LogicalResult canScheduleGpuContraction(FusedOp op,
                                        const GpuScheduleOptions &options,
                                        std::string &why);

/// Applies the GPU contraction schedule to the decomposition whose last op
/// is `root` (GpuContraction.cpp). Fails, changing nothing, with `why` set
/// when the decomposition does not fit it.
LogicalResult
scheduleGpuContraction(RewriterBase &rewriter, linalg::LinalgOp root,
                       const llvm::SmallPtrSetImpl<Operation *> &decomposition,
                       const GpuScheduleOptions &options, std::string &why);

/// Whether `op` is a fused_linear whose operands the staged GPU form
/// (GpuStagedLinear.cpp) can tile: M and N multiples of 32, K of 8, and
/// max-threads at least 64, a grid the GPU holds.
bool canStageGpuLinear(FusedOp op, const GpuScheduleOptions &options);
/// Replaces `op` (a fused_linear canStageGpuLinear accepts) by block tiles
/// of the output whose threads stage A's and B's tiles in workgroup memory
/// at each step along K and accumulate 4 x 4 tiles in registers
/// (GpuStagedLinear.cpp).
LogicalResult buildGpuStagedLinear(RewriterBase &rewriter, FusedOp op,
                                   const GpuScheduleOptions &options);
/// Whether `op` is a flash_attn whose key and value blocks the staged GPU
/// form (GpuStagedAttention.cpp) can stage: static shapes, head dims
/// multiples of 16 up to options.maxStagedHeadDim, 32 queries or more (in
/// blocks of 32 or 64 rows).
bool canStageGpuAttention(FusedOp op, const GpuScheduleOptions &options);
/// Replaces `op` (a flash_attn canStageGpuAttention accepts) by
/// FlashAttention-2's GPU form with its key and value blocks staged in
/// workgroup memory (GpuStagedAttention.cpp).
LogicalResult buildGpuStagedAttention(RewriterBase &rewriter, FusedOp op,
                                      const GpuScheduleOptions &options);
/// Whether `op` is a flash_attn with too few query rows to stage (fewer
/// than 32) whose keys the split-keys GPU form (GpuSplitKeysAttention.cpp)
/// spreads over a block's threads: static shapes, 64 keys or more, head
/// dims multiples of 16 up to 256, max-threads at least 32.
bool canSplitGpuAttentionKeys(FusedOp op, const GpuScheduleOptions &options);
/// Replaces `op` (a flash_attn canSplitGpuAttentionKeys accepts) by a block
/// per (batch, head, query row) and partition of its keys whose threads
/// each run the online softmax over a share of the keys, then combine their
/// partials in workgroup memory; with several partitions a second kernel
/// combines theirs (GpuSplitKeysAttention.cpp).
LogicalResult buildGpuSplitKeysAttention(RewriterBase &rewriter, FusedOp op,
                                         const GpuScheduleOptions &options);
/// Whether `op` is a backward of flash_attn whose shared blocks the staged
/// GPU form (GpuStagedAttentionBackward.cpp) can stage: static shapes, head
/// dims multiples of 16 up to half of options.maxStagedHeadDim (dv: all
/// of it), 32 queries (and for dk and dv, keys) or more, in blocks of 32
/// or 64 rows.
bool canStageGpuAttentionBackward(FusedOp op,
                                  const GpuScheduleOptions &options);
/// Replaces `op` (a backward canStageGpuAttentionBackward accepts) by
/// FlashAttention-2's backward on a GPU with the key and value blocks (dq)
/// or query blocks (dk, dv) its rows share staged in workgroup memory
/// (GpuStagedAttentionBackward.cpp).
LogicalResult
buildGpuStagedAttentionBackward(RewriterBase &rewriter, FusedOp op,
                                const GpuScheduleOptions &options);
/// The checks of canScheduleGpu that are the GPU attention schedule's own.
LogicalResult canScheduleGpuAttention(FusedOp op,
                                      const GpuScheduleOptions &options,
                                      std::string &why);

/// Replaces `op` (a flash_attn canScheduleGpuAttention accepts) by
/// FlashAttention-2's GPU form (GpuAttention.cpp).
LogicalResult buildGpuAttention(RewriterBase &rewriter, FusedOp op,
                                const GpuScheduleOptions &options);

/// The checks of canScheduleGpu that are the GPU schedule of flash_attn's
/// backwards' own.
LogicalResult canScheduleGpuAttentionBackward(FusedOp op,
                                              const GpuScheduleOptions &options,
                                              std::string &why);

/// Replaces `op` (a flash_attn_backward_q/k/v canScheduleGpuAttentionBackward
/// accepts) by FlashAttention-2's backward on a GPU (GpuAttention.cpp).
LogicalResult buildGpuAttentionBackward(RewriterBase &rewriter, FusedOp op,
                                        const GpuScheduleOptions &options);

/// The checks of canScheduleGpu that are the GPU schedule of paged_attn's
/// own: f32, f16 or bf16; value rows of at most max-threads (two less for
/// a table split into partitions); at most 65,535 sequences and heads.
LogicalResult canScheduleGpuPagedAttention(FusedOp op,
                                           const GpuScheduleOptions &options,
                                           std::string &why);

/// Replaces `op` (a paged_attn canScheduleGpuPagedAttention accepts) by a
/// block per (sequence, query head) and partition of the table's tokens:
/// the scores a thread per token into workgroup memory, then the output a
/// thread per column; with several partitions, a second kernel combines
/// theirs (GpuPagedAttention.cpp).
LogicalResult buildGpuPagedAttention(RewriterBase &rewriter, FusedOp op,
                                     const GpuScheduleOptions &options);

/// The checks of canScheduleGpu that are the GPU schedule of rope's own:
/// f32, f16 or bf16, and blocks of rows the grid holds.
LogicalResult canScheduleGpuRope(FusedOp op, const GpuScheduleOptions &options,
                                 std::string &why);

/// Replaces `op` (a rope canScheduleGpuRope accepts) by one kernel: a
/// thread per pair of elements (p, p + D/2) of a row, blocks of rows
/// (GpuRope.cpp).
LogicalResult buildGpuRope(RewriterBase &rewriter, FusedOp op,
                           const GpuScheduleOptions &options);

/// The checks of canScheduleGpu that are the GPU schedule of
/// reduce_max_to_backward's own: f32, f16 or bf16, x's last dim reduced,
/// groups the grid holds.
LogicalResult canScheduleGpuReduceMaxBackward(FusedOp op,
                                              const GpuScheduleOptions &options,
                                              std::string &why);

/// Replaces `op` (a reduce_max_to_backward canScheduleGpuReduceMaxBackward
/// accepts) by a block per group that reduces it (its max and the count of
/// elements equal to it) and an elementwise kernel for dx
/// (GpuReduceMaxBackward.cpp).
LogicalResult buildGpuReduceMaxBackward(RewriterBase &rewriter, FusedOp op,
                                        const GpuScheduleOptions &options);

/// The checks of canScheduleGpu that are the GPU row-loss schedule's own.
LogicalResult canScheduleGpuRowLoss(FusedOp op,
                                    const GpuScheduleOptions &options,
                                    std::string &why);

/// Replaces `op` (a fused_softmax_cross_entropy canScheduleGpuRowLoss
/// accepts) by a block per row of logits and, for the sum or the mean, a
/// block that reduces the rows' losses (GpuRowLoss.cpp).
LogicalResult buildGpuRowLoss(RewriterBase &rewriter, FusedOp op,
                              const GpuScheduleOptions &options);

/// The checks of canScheduleGpu that are the GPU quantized schedule's own.
LogicalResult canScheduleGpuQuantized(FusedOp op,
                                      const GpuScheduleOptions &options,
                                      std::string &why);

/// Replaces the quantized matmul's contraction of the activations with the
/// dequantized weight (`root`, or the contraction whose f32 result `root`
/// converts to f16 or bf16) by a block per output element whose threads
/// decode the weight where they read it (GpuQuantized.cpp).
LogicalResult
scheduleGpuQuantized(RewriterBase &rewriter, linalg::LinalgOp root,
                     const llvm::SmallPtrSetImpl<Operation *> &decomposition,
                     const GpuScheduleOptions &options, std::string &why);

/// The checks of canScheduleGpu that are the GPU convolution schedule's
/// own.
LogicalResult canScheduleGpuConvolution(FusedOp op,
                                        const GpuScheduleOptions &options,
                                        std::string &why);

/// Replaces `op` (a conv2d, conv_transpose_2d or causal_conv1d
/// canScheduleGpuConvolution accepts) by the convolution schedule's tiles
/// on blocks and threads (GpuConvolution.cpp).
LogicalResult buildGpuConvolutionSchedule(RewriterBase &rewriter, FusedOp op,
                                          const GpuScheduleOptions &options);

} // namespace fuel
} // namespace mlir

#endif // FUEL_LIB_CODEGEN_GPUSCHEDULES_H
