//===- GpuSchedules.cpp - Which ops get which GPU schedule ----------------===//
//
// The GPU forms of the schedule kinds: the checks that say whether an op
// can be scheduled for a GPU, and the entry point that decomposes it and
// schedules its decomposition. The binding of ops to kinds is the CPU's
// (the records' `schedule` field); a kind without a GPU form yet leaves
// its ops to be lowered as decomposed. reduce_max_to_backward is row-wise
// where g reduces x's last dim alone and has a GPU form of its own for the
// other groups.
//
//===----------------------------------------------------------------------===//

#include "GpuSchedules.h"
#include "Scan.h"
#include "ScheduleUtils.h"

#include "FuelFused/Decompose/Decompose.h"
#include "FuelFused/IR/FuelOps.h"
#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::fuel;

void mlir::fuel::mapForall(RewriterBase &rewriter, scf::ForallOp loop,
                           bool threads) {
  MLIRContext *ctx = rewriter.getContext();
  SmallVector<Attribute> mapping;
  unsigned rank = loop.getRank();
  for (unsigned i = 0; i < rank; ++i) {
    auto id = static_cast<gpu::MappingId>(
        static_cast<unsigned>(gpu::MappingId::DimX) + rank - 1 - i);
    mapping.push_back(threads
                          ? Attribute(gpu::GPUThreadMappingAttr::get(ctx, id))
                          : Attribute(gpu::GPUBlockMappingAttr::get(ctx, id)));
  }
  rewriter.modifyOpInPlace(
      loop, [&] { loop.setMappingAttr(rewriter.getArrayAttr(mapping)); });
}

/// Whether reduce_max_to_backward `op` takes the GPU row-wise schedule (a
/// block per row, the row in registers, one kernel): where g reduces x's
/// last dim alone and the rows suit that schedule. Otherwise it takes the
/// block per group of GpuReduceMaxBackward.cpp.
static bool reduceMaxIsRowWise(FusedOp op, const GpuScheduleOptions &options) {
  ReduceMaxToBackwardView rm(op);
  auto x = cast<ShapedType>(rm.getX().getType());
  auto g = cast<ShapedType>(rm.getG().getType());
  if (!x.hasStaticShape() || !g.hasStaticShape() || x.getRank() < 2 ||
      g.getShape().back() != 1 ||
      x.getShape().drop_back() != g.getShape().drop_back())
    return false;
  std::string ignored;
  return succeeded(canScheduleGpuRowWise(op, options, ignored));
}

LogicalResult mlir::fuel::canScheduleGpu(FusedOp op,
                                         const GpuScheduleOptions &options,
                                         std::string &why) {
  std::optional<ScheduleKind> kind = lookupSchedule(op.getInfo());
  // Every schedule kind has a GPU form.
  bool reduceMax = ReduceMaxToBackwardView::match(op).has_value();
  if (!kind) {
    why = "the op has no GPU schedule";
    return failure();
  }
  for (Type t : llvm::concat<Type>(op->getOperandTypes(),
                                   op->getResultTypes())) {
    if (!isa<ShapedType>(t))
      continue;
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor || !tensor.hasStaticShape()) {
      why = "the schedule needs static tensor shapes";
      return failure();
    }
    if (tensor.getNumElements() == 0) {
      why = "the GPU schedules need non-empty tensors";
      return failure();
    }
  }
  if (*kind == ScheduleKind::Rotary)
    return canScheduleGpuRope(op, options, why);
  if (reduceMax && !reduceMaxIsRowWise(op, options))
    return canScheduleGpuReduceMaxBackward(op, options, why);
  if (*kind == ScheduleKind::Contraction)
    return canScheduleGpuContraction(op, options, why);
  if (*kind == ScheduleKind::Attention) {
    if (PagedAttnView::match(op))
      return canScheduleGpuPagedAttention(op, options, why);
    return FlashAttnView::match(op)
               ? canScheduleGpuAttention(op, options, why)
               : canScheduleGpuAttentionBackward(op, options, why);
  }
  if (*kind == ScheduleKind::RowLoss)
    return canScheduleGpuRowLoss(op, options, why);
  if (*kind == ScheduleKind::Quantized)
    return canScheduleGpuQuantized(op, options, why);
  if (*kind == ScheduleKind::Scan)
    return canScheduleScan(op, ScheduleOptions{}, why);
  if (*kind == ScheduleKind::Convolution)
    return canScheduleGpuConvolution(op, options, why);
  return canScheduleGpuRowWise(op, options, why);
}

/// Applies the GPU form of `kind` to the decomposition whose last op is
/// `root`.
static LogicalResult
scheduleRoot(RewriterBase &rewriter, ScheduleKind kind, linalg::LinalgOp root,
             const llvm::SmallPtrSetImpl<Operation *> &decomposition,
             const GpuScheduleOptions &options, std::string &why) {
  if (kind == ScheduleKind::Contraction)
    return scheduleGpuContraction(rewriter, root, decomposition, options, why);
  if (kind == ScheduleKind::Quantized)
    return scheduleGpuQuantized(rewriter, root, decomposition, options, why);
  return scheduleGpuRowWise(rewriter, root, decomposition, options, why);
}

LogicalResult mlir::fuel::decomposeWithGpuSchedule(
    RewriterBase &rewriter, FusedOp op, const GpuScheduleOptions &options,
    std::string &why) {
  // reduce_max_to_backward is row-wise where g reduces x's last dim alone
  // and a block per group of x otherwise (the decomposition reduces each
  // group in one thread).
  if (ReduceMaxToBackwardView::match(op) && !reduceMaxIsRowWise(op, options))
    return buildGpuReduceMaxBackward(rewriter, op, options);
  ScheduleKind kind = *lookupSchedule(op.getInfo());
  // Attention is built in its tiled form, not scheduled from its
  // decomposition (see Attention.cpp; paged_attn: GpuPagedAttention.cpp).
  if (kind == ScheduleKind::Attention && PagedAttnView::match(op))
    return buildGpuPagedAttention(rewriter, op, options);
  if (kind == ScheduleKind::Attention)
    return FlashAttnView::match(op)
               ? buildGpuAttention(rewriter, op, options)
               : buildGpuAttentionBackward(rewriter, op, options);
  // So is rope, a thread per pair of elements of a row (GpuRope.cpp),
  if (kind == ScheduleKind::Rotary)
    return buildGpuRope(rewriter, op, options);
  // the scans, a thread per channel (Scan.cpp), with no more to
  // do for the GPU than mapping the loops,
  if (kind == ScheduleKind::Scan) {
    auto [blocks, threads] = buildScanThreads(rewriter, op, options.maxThreads);
    mapForall(rewriter, blocks, /*threads=*/false);
    mapForall(rewriter, threads, /*threads=*/true);
    return success();
  }
  // the row loss (see GpuRowLoss.cpp),
  if (kind == ScheduleKind::RowLoss)
    return buildGpuRowLoss(rewriter, op, options);
  // and the convolutions (GpuConvolution.cpp).
  if (kind == ScheduleKind::Convolution)
    return buildGpuConvolutionSchedule(rewriter, op, options);
  // fused_linear stages its operands' tiles in workgroup memory where its
  // shape allows (GpuStagedLinear.cpp); other shapes take the contraction
  // schedule's tiles of its decomposition, read through the caches.
  if (kind == ScheduleKind::Contraction && canStageGpuLinear(op, options))
    return buildGpuStagedLinear(rewriter, op, options);
  FailureOr<Decomposition> decomposed = decomposeInPlace(rewriter, op, why);
  if (failed(decomposed))
    return failure();
  const llvm::SmallPtrSetImpl<Operation *> &decomposition = decomposed->ops;
  SmallVector<Value> &values = decomposed->values;
  // Each result's root; a root the schedule does not fit stays as
  // decomposed.
  for (auto [i, v] : llvm::enumerate(values)) {
    if (auto cast = v.getDefiningOp<tensor::CastOp>())
      v = cast.getSource();
    auto root = v.getDefiningOp<linalg::LinalgOp>();
    std::string rootWhy;
    if (!root) {
      rootWhy = "it is not computed by a linalg op";
    } else if (succeeded(scheduleRoot(rewriter, kind, root, decomposition,
                                      options, rootWhy))) {
      continue;
    }
    why += (why.empty() ? "" : "; ") + std::string("result ") +
           std::to_string(i) + " stays as decomposed: " + rootWhy;
  }
  return success();
}
