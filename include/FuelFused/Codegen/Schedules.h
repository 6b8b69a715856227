//===- Schedules.h - How fused ops become fast code -------------*- C++ -*-===//
//
// A schedule says how the linalg that decomposition produces for an op is
// tiled, fused and vectorized. Which schedule an op gets is data: the
// `schedule` field of its record (FusedOps.td), bound to the op by a table
// generated for this library. The same kinds serve every target; a target
// picks their parameters (`ScheduleOptions`).
//
// The CPU schedules run on linalg on tensors and leave scf loops (an
// scf.forall over independent tiles) and vector ops; the fuel-to-llvm
// pipeline bufferizes and lowers them.
//
//===----------------------------------------------------------------------===//

#ifndef FUELFUSED_CODEGEN_SCHEDULES_H
#define FUELFUSED_CODEGEN_SCHEDULES_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>

namespace mlir {
namespace fuel {

class FusedOp;
struct FusedOpInfo;

enum class ScheduleKind {
  /// Ops that read and write whole rows of their last dim (softmax, RMS
  /// and layer norm, their backwards, inplace_affine, and
  /// reduce_max_to_backward where g reduces x's last dim alone):
  /// one row per iteration of an scf.forall over the leading dims, the
  /// decomposition's producers fused into it; inside, each elementwise op
  /// and each reduction runs over the row in vectors, reductions as partial
  /// vector sums merged once per row. No temporary outlives its row.
  RowWise,
  /// Ops whose decomposition is a contraction with elementwise ops around
  /// it (fused_linear): cache tiles of the output in an scf.forall, register
  /// tiles inside, the reduction of a register tile in vector steps with the
  /// accumulator in registers, lowered to outer products. f32, f16 and bf16
  /// (widened to f32 in registers), with the output and reduction sizes
  /// multiples of the register tile.
  Contraction,
  /// Attention (flash_attn and its backwards): FlashAttention-2's tiling,
  /// query blocks in an scf.forall and key blocks in an scf.for with an
  /// online softmax, the block contractions in register tiles; no [Sq, Sk]
  /// scores, memory O(S * D). The backwards compute each row's
  /// log-sum-exp and rowsum(p * dp) in a first pass, then dq per query
  /// block, dk and dv per key block. Unlike the others it does not schedule
  /// the op's decomposition (a softmax over whole rows) but builds the tiled
  /// form, which no tiling of that decomposition reaches. f32, f16 and bf16
  /// (computed in f32), with every param and optional operand, any static
  /// shape (sequences padded to whole blocks, head dims to 16).
  Attention,
  /// Matmuls with a quantized weight (qmatmul's Q8_0 and Q4_0, awq_matmul,
  /// nf4_matmul): tiles of rows of A and of W in an scf.forall, the weight
  /// read as vectors of words or bytes and dequantized in registers (static
  /// shuffles, masks, shifts, NF4's code book by a gather), each weight
  /// byte read once per tile of rows of A. Built in its tiled form like
  /// Attention: decoding packed weights has no linalg form that vectorizes.
  Quantized,
  /// 2-D convolutions (conv2d, any stride and groups; conv_transpose_2d
  /// with dilation 1, as the stride-1 convolutions of its output phases):
  /// per output row, tiles of 8 output columns by 32 filters accumulated
  /// in registers as outer products over (c, kh, kw), in blocks of
  /// channels that each of a row's tiles takes in turn; the weight packed
  /// (and, transposed, flipped) once per filter tile, [F / 32, C, kh, kw,
  /// 32], the input padded once. Built in its tiled form: the
  /// decomposition's input map (oh + kh) does not vectorize upstream.
  Convolution,
  /// Ops that reduce each row of their last dim to one value
  /// (fused_softmax_cross_entropy): one row per scf.forall iteration, read
  /// twice in vectors (max, sum of exponentials) and the target's logit
  /// once; the reduction over rows after the loop. Built: the
  /// decomposition gathers from a full log-softmax, which tile-and-fuse
  /// cannot fuse into a row loop.
  RowLoss,
  /// Rotary embeddings (rope): a row of x per scf.forall iteration, the
  /// row's pairs (p, p + D/2) in vectors, each element of x and y read and
  /// written once (the decomposition slices, negates and joins the halves
  /// in x-sized tensors first). Built. f32, f16 and bf16, static shapes.
  Rotary,
  /// Recurrences along a sequence (selective_scan): channels in the lanes
  /// of a vector, the state in registers through a loop over the
  /// sequence, an scf.forall over batches and channel vectors. Built: the
  /// decomposition's per-step linalg ops on slices lower to scalar loops.
  Scan,
};

/// The schedule of `info`'s op; std::nullopt when it has none (it is lowered
/// as decomposed).
std::optional<ScheduleKind> lookupSchedule(const FusedOpInfo &info);

/// Target parameters of the schedules.
struct ScheduleOptions {
  /// Elements per vector (16 f32 lanes fill an AVX-512 register).
  int64_t vectorWidth = 16;
  /// The target's vector registers: how many, and their width in bits
  /// (x86 with AVX-512: 32 of 512; with AVX2: 16 of 256). The register
  /// tiles (the contraction's accumulators) are sized to fit them.
  int64_t vectorRegisters = 32;
  int64_t vectorRegisterBits = 512;
  /// Vectors per step of a reduction along a row (where the row holds a
  /// whole number of steps): independent partial results. (4 measured
  /// 25-30% faster than 1 on softmax over rows of 4096 and 32768, and
  /// within noise on the norms, bench/row_ops.py.)
  int64_t unroll = 4;
  /// Divisions by a row statistic (softmax's sum, the norms' root mean
  /// square) as one reciprocal per row and a multiply per element; results
  /// can differ from dividing by about one ulp.
  bool reciprocal = true;
  /// Threads the scf.forall iterations are shared by: the contraction makes
  /// at least two cache tiles per thread where the shape allows.
  int64_t threads = 1;
  /// The most and the fewest rows (the dims before K) of the matmuls by a
  /// weight (fused_linear, the quantized matmuls) scheduled with these
  /// options where their row count is dynamic; 0: no bound.
  /// decomposeWithSchedule sets them for the branches on the row count it
  /// makes (splitFewRows), and does not branch again where one is set.
  int64_t rowsAtMost = 0;
  int64_t rowsAtLeast = 0;
};

/// Checks, changing nothing, that `op` can be decomposed with its schedule:
/// it has one, its operands are static tensors, and its shape suits the
/// schedule (a row length that is a multiple of the vector width for
/// RowWise; sizes that are multiples of the register tile for Contraction,
/// of the blocks for Attention and of two weight blocks for Quantized).
/// Sets `why` when not.
LogicalResult canSchedule(FusedOp op, const ScheduleOptions &options,
                          std::string &why);

/// Decomposes `op` (which `canSchedule` accepts) and applies its schedule to
/// the decomposition; replaces and erases `op`. Fails, with `why` set, when
/// decomposition fails, leaving `op` as it was, or replaced by the same op
/// on padded operands (the contraction schedule views a's rows as one dim,
/// runs few dynamic rows apart and pads them first).
LogicalResult decomposeWithSchedule(RewriterBase &rewriter, FusedOp op,
                                    const ScheduleOptions &options,
                                    std::string &why);

/// Target parameters of the GPU schedules.
struct GpuScheduleOptions {
  /// Threads per block at most (a power of two, at least a warp of 32).
  int64_t maxThreads = 256;
  /// The widest attention heads (D and Dv) whose shared blocks the GPU
  /// forms stage in workgroup memory; dq and dk stage heads half as wide
  /// (GpuStagedAttention.cpp, GpuStagedAttentionBackward.cpp). Wider rows
  /// take more registers than some assemblers fit without spills: 64 suits
  /// sm_80 and gfx9, 128 sm_90.
  int64_t maxStagedHeadDim = 64;
  /// The GPU's multiprocessors (NVIDIA's SMs, AMD's compute units): the
  /// staged contractions take their largest block tiles (128 x 128, 8 x 8
  /// a thread) only where those still give at least this many blocks, and
  /// halve their 64 x 64 ones (down to 32 x 32) until they do.
  int64_t computeUnits = 108;
  /// The most workgroup memory (bytes) a block of a staged attention form
  /// takes once the rows its threads read at every step (flash_attn's and
  /// dq's queries, dk's and dv's keys; GpuStagedRows.h) are staged there
  /// too; rows that do not fit are read from global memory. 32 KiB keeps
  /// 7 blocks of 64 threads on an H100; 0 stages none.
  int64_t maxOwnRowsBlockBytes = 32 * 1024;
};

/// Checks, changing nothing, that `op` has a GPU schedule and that its
/// shape suits it: static, non-empty tensors, and each schedule's own
/// checks (for the row-wise one: at most 3 leading dims, a grid dim each,
/// and a row length that is a multiple of a warp). Sets `why` when not.
LogicalResult canScheduleGpu(FusedOp op, const GpuScheduleOptions &options,
                             std::string &why);

/// Decomposes `op` (which `canScheduleGpu` accepts) and applies its GPU
/// schedule: one row per block (an scf.forall mapped to `#gpu.block`s), the
/// row split over the block's threads (an scf.forall mapped to
/// `#gpu.thread<x>`; thread t takes elements t, t + T, t + 2T, ..., so
/// every load of a warp is coalesced), each thread's part in vector
/// registers, and every reduction over the row a per-thread partial
/// combined across the block by `gpu.all_reduce`. Replaces and erases `op`.
/// Fails, leaving `op` as it was, with `why` set, when decomposition fails;
/// on success `why` names the results, if any, whose decomposition does not
/// fit the schedule (they stay as decomposed: one kernel per loop nest).
LogicalResult decomposeWithGpuSchedule(RewriterBase &rewriter, FusedOp op,
                                       const GpuScheduleOptions &options,
                                       std::string &why);

/// Rewrites the f32 `math` ops on vectors under `root` (exp, log, tanh, erf
/// and the others upstream approximates) into polynomial approximations, so
/// they vectorize instead of calling libm per element. Scalars are left to
/// libm. The approximations' error is within a few ulp (see the docs).
void approximateVectorMath(Operation *root);

/// Rewrites each float `vector.reduction` under `root` (add, mul, the
/// maximums and minimums) of a fixed vector of 4 lanes or more into log2(n)
/// halving steps of vector operations, where LLVM would reduce it lane by
/// lane. The order is fixed: results are reproducible, and differ from the
/// lane-order reduction only as any reassociation of the sum does.
void reduceVectorsAsTrees(Operation *root);

} // namespace fuel
} // namespace mlir

#endif // FUELFUSED_CODEGEN_SCHEDULES_H
