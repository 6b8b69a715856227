//===- GpuAttention.cpp - The attention schedule on a GPU -----------------===//
//
// flash_attn's FlashAttention-2 form (Attention.cpp) on a GPU: a block per
// (batch, head, query block), a thread per query row of the block, each
// thread running its row's key loop with the online softmax in registers
// (its running max and sum, its accumulator row of Dv values), over blocks
// of 16 keys; the score row of a key block is 16 values. No [Sq, Sk] score
// tensor exists anywhere: memory is O(S * D) per head. The threads of a
// block read the same key and value blocks: where the shape allows, they
// stage them in shared memory (GpuStagedAttention.cpp); otherwise the
// caches serve them. With fewer than 32 query rows (decoding) a thread per
// row leaves each row's keys to one thread: GpuSplitKeysAttention.cpp
// splits them over a block's threads (and a long row's over blocks)
// instead.
//
// The backwards (flash_attn_backward_q/k/v) take the CPU's FlashAttention-2
// backward (AttentionBackward.cpp) in the same way: for dq, a thread per
// query row that computes its row's lse and D over the key blocks it sees,
// then dq += ds k over them again; for dk and dv, a first kernel with a
// thread per query row that writes every row's lse and D ([B, Hq, Sq]),
// then a thread per key row that adds up its row of dk (ds^T q) or dv
// (p^T do) over the query blocks that see the key and the query heads of
// its kv head. Scores and probabilities exist a step (16 keys or queries;
// 8 for heads of 16 or fewer) at a time, in registers: never [Sq, Sk].
// Where the shape allows, the blocks a block's rows share (keys and values
// for query rows, queries and do for key rows) are staged in shared
// memory (GpuStagedAttentionBackward.cpp).
//
//===----------------------------------------------------------------------===//

#include "Attention.h"
#include "AttentionBlocks.h"
#include "Contraction.h"
#include "GpuSchedules.h"
#include "ScheduleUtils.h"

#include "FuelFused/IR/FusedOpViews.h"


using namespace mlir;
using namespace mlir::fuel;

namespace {
/// Keys per step of a thread's key loop.
constexpr int64_t kBlockK = 16;
/// Keys (dq) or queries (dk, dv) per step of a backward thread's loop.
constexpr int64_t kBackwardStep = 16;
} // namespace

LogicalResult mlir::fuel::canScheduleGpuAttention(
    FusedOp op, const GpuScheduleOptions &options, std::string &why) {
  FlashAttnView attn(op);
  Value q = attn.getQ(), k = attn.getK(), v = attn.getV();
  if (failed(attention::checkAttention({q, k, v}, q, k, v, kBlockK, why)))
    return failure();
  attention::AttnShape s = attention::AttnShape::of(attn);
  if (s.blockQ > options.maxThreads) {
    why = "a query block (" + std::to_string(s.blockQ) +
          " rows, a thread each) is more than max-threads (" +
          std::to_string(options.maxThreads) + ")";
    return failure();
  }
  return success();
}

LogicalResult mlir::fuel::buildGpuAttention(RewriterBase &rewriter,
                                            FusedOp op,
                                            const GpuScheduleOptions &options) {
  // Key and value blocks staged in workgroup memory where the shape allows
  // (GpuStagedAttention.cpp); other shapes read them through the caches.
  if (canStageGpuAttention(op, options))
    return buildGpuStagedAttention(rewriter, op, options);
  // Too few query rows to stage: their keys split over a block's threads
  // (GpuSplitKeysAttention.cpp) where there are enough of them.
  if (canSplitGpuAttentionKeys(op, options))
    return buildGpuSplitKeysAttention(rewriter, op, options);
  attention::AttnShape s = attention::AttnShape::of(FlashAttnView(op));
  auto [blocks, rows] = buildAttentionRows(rewriter, op, kBlockK);
  // (batch, head, query block) on (z, y, x); the rows on threads.
  mapForall(rewriter, blocks, /*threads=*/false);
  mapForall(rewriter, rows, /*threads=*/true);
  // Each thread's contractions (q . k over the head dim, p . v over the
  // key block) in steps, then everything in registers. With head dims of
  // up to 64, a step is the whole key block: the score row is then read at
  // static offsets and stays in registers (128 registers, no stack, for
  // D = 64 on sm_90); wider heads take steps of 8 so that a step's key
  // block ([8, 16]) and value block ([8, Dv]) fit (255 registers, no
  // spills, for D = 128). Both dims count: q . k in steps of 16 at D = 96
  // (and Dv = 64) held a [16, 16] key block a step, 168 registers and
  // 3.5 KiB of spills on sm_80 and sm_90.
  tileContractionReductions(
      rewriter, rows, std::max(s.dP, s.dvP) <= 64 ? kBlockK : 8);
  vectorizeInside(rewriter, rows, /*contractions=*/true);
  return success();
}

LogicalResult mlir::fuel::canScheduleGpuAttentionBackward(
    FusedOp op, const GpuScheduleOptions &options, std::string &why) {
  ValueRange floats = op->getOperands().take_front(4);
  if (failed(attention::checkAttention(floats, floats[0], floats[1], floats[2],
                                       kBackwardStep, why)))
    return failure();
  attention::AttnShape s = attention::backwardRowsShape(op, kBackwardStep);
  bool dq = FlashAttnBackwardQView::match(op).has_value();
  int64_t rows = dq ? s.blockQ : s.blockK;
  if (rows > options.maxThreads) {
    why = std::string("a ") + (dq ? "query" : "key") + " block (" +
          std::to_string(rows) + " rows, a thread each) is more than " +
          "max-threads (" + std::to_string(options.maxThreads) + ")";
    return failure();
  }
  return success();
}

LogicalResult mlir::fuel::buildGpuAttentionBackward(
    RewriterBase &rewriter, FusedOp op, const GpuScheduleOptions &options) {
  // The blocks the rows share staged where the shape allows, as in the
  // forward (GpuStagedAttentionBackward.cpp).
  if (canStageGpuAttentionBackward(op, options))
    return buildGpuStagedAttentionBackward(rewriter, op, options);
  attention::AttnShape s = attention::backwardRowsShape(op, kBackwardStep);
  // As in the forward: whole steps of the contractions with head dims of
  // up to 64, steps of 8 beyond.
  int64_t step = std::max(s.dP, s.dvP) <= 64 ? kBackwardStep : 8;
  // Heads of 16 (or 8, padded to 16) take steps of 8 rows: a key row's
  // step reads [16, 16] blocks of q and of do, and q again for dk, which
  // ptxas held whole (255 registers and 300 to 600 bytes of spills for dk
  // at the random cases' heads of 8 and 16); a query row's step reads a
  // [16, 16] block of k^T and of v^T that every thread of the block reads
  // alike, which the AMDGPU backend loads into SGPRs that do not hold it
  // (512 VGPRs and 420 to 800 bytes of scratch for dq on gfx942). With
  // [8, 16] blocks, none spill. Wider heads keep steps of 16: their
  // contractions are stepped along the head dim already.
  int64_t rowStep = std::max(s.dP, s.dvP) <= 16 ? 8 : kBackwardStep;
  buildAttentionBackwardRows(
      rewriter, op, rowStep,
      [&](scf::ForallOp blocks, scf::ForallOp rows) {
        mapForall(rewriter, blocks, /*threads=*/false);
        mapForall(rewriter, rows, /*threads=*/true);
        tileContractionReductions(rewriter, rows, step);
        vectorizeInside(rewriter, rows, /*contractions=*/true);
      });
  return success();
}
