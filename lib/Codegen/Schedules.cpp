//===- Schedules.cpp - Which ops get which schedule -----------------------===//
//
// The binding of ops to their schedules (generated from the records'
// `schedule` field), the checks that say whether an op can be scheduled,
// and the entry point that decomposes an op and schedules its
// decomposition.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Codegen/Schedules.h"
#include "Attention.h"
#include "Contraction.h"
#include "Convolution.h"
#include "Quantized.h"
#include "RowLoss.h"
#include "Rope.h"
#include "RowWise.h"
#include "Scan.h"
#include "ScheduleUtils.h"

#include "FuelFused/Decompose/Decompose.h"
#include "FuelFused/IR/FuelOps.h"
#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::fuel;

namespace {
struct ScheduleBinding {
  uint32_t id;
  ScheduleKind schedule;
};
#define GET_FUSED_OP_SCHEDULE_TABLE
#include "FusedOpSchedules.inc"
} // namespace

std::optional<ScheduleKind>
mlir::fuel::lookupSchedule(const FusedOpInfo &info) {
  const ScheduleBinding *it = llvm::lower_bound(
      scheduleTable, info.id,
      [](const ScheduleBinding &b, uint32_t id) { return b.id < id; });
  if (it == std::end(scheduleTable) || it->id != info.id)
    return std::nullopt;
  return it->schedule;
}

LogicalResult mlir::fuel::canSchedule(FusedOp op,
                                      const ScheduleOptions &options,
                                      std::string &why) {
  std::optional<ScheduleKind> kind = lookupSchedule(op.getInfo());
  if (!kind) {
    why = "the op has no schedule";
    return failure();
  }
  // The schedules take ranked tensors (not buffers); which dims may be
  // dynamic is each schedule's own check.
  for (Type t : llvm::concat<Type>(op->getOperandTypes(),
                                   op->getResultTypes()))
    if (isa<ShapedType>(t) && !isa<RankedTensorType>(t)) {
      why = "the schedule needs static tensor shapes";
      return failure();
    }
  switch (*kind) {
  case ScheduleKind::RowWise:
    return canScheduleRowWise(op, options, why);
  case ScheduleKind::Contraction:
    return canScheduleContraction(op, options, why);
  case ScheduleKind::Attention:
    if (PagedAttnView::match(op))
      return canSchedulePagedAttention(op, options, why);
    if (FlashAttnView::match(op))
      return canScheduleAttention(op, options, why);
    return canScheduleAttentionBackward(op, options, why);
  case ScheduleKind::Quantized:
    return canScheduleQuantized(op, options, why);
  case ScheduleKind::Rotary:
    return canScheduleRope(op, options, why);
  case ScheduleKind::Convolution:
    return canScheduleConvolution(op, options, why);
  case ScheduleKind::RowLoss:
    return canScheduleRowLoss(op, options, why);
  case ScheduleKind::Scan:
    return canScheduleScan(op, options, why);
  }
  llvm_unreachable("unknown schedule");
}

/// With dynamic shapes, the decomposition and the tiling read sizes from
/// the intermediate results of the decomposition (tensor.dim of them),
/// which keeps the full-size ops computing them alive next to the loops
/// that now compute them tile by tile. Reads those sizes from the ops'
/// inputs instead, then erases what that left dead: the ops the dims read
/// and, from them, their operands' ops, when trivially dead. Looks only at
/// the ops the decomposition and the schedule put between `before` (or the
/// start of `block`) and `after`, so that scheduling every op of a large
/// function stays linear. (Pointers in `decomposition` may be to ops the
/// schedule erased: they are only compared against.)
static void
dropFullSizeLeftovers(RewriterBase &rewriter, Block *block, Operation *before,
                      Operation *after,
                      const llvm::SmallPtrSetImpl<Operation *> &decomposition) {
  SmallVector<Operation *> dims;
  llvm::SetVector<Operation *> candidates;
  for (Operation *op = before ? before->getNextNode() : &block->front();
       op && op != after; op = op->getNextNode())
    op->walk([&](tensor::DimOp dim) {
      Operation *source = dim.getSource().getDefiningOp();
      if (source && isa<linalg::LinalgOp, tensor::EmptyOp>(source)) {
        dims.push_back(dim);
        candidates.insert(source);
      }
    });
  if (dims.empty())
    return;
  RewritePatternSet patterns(block->getParent()->getContext());
  memref::populateResolveRankedShapedTypeResultDimsPatterns(patterns);
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  (void)applyOpPatternsGreedily(dims, std::move(patterns), config);
  // Dead code elimination from the candidates, through their operands.
  while (!candidates.empty()) {
    Operation *op = candidates.pop_back_val();
    if (!isOpTriviallyDead(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && (decomposition.contains(def) || def->getBlock() == block))
        candidates.insert(def);
    rewriter.eraseOp(op);
  }
}

LogicalResult
mlir::fuel::decomposeWithSchedule(RewriterBase &rewriter, FusedOp op,
                                  const ScheduleOptions &givenOptions,
                                  std::string &why) {
  std::optional<ScheduleKind> kind = lookupSchedule(op.getInfo());
  assert(kind && "decomposeWithSchedule needs an op canSchedule accepts");
  // Dynamic rows that may be few, of a matmul by a weight: one row and a
  // few rows (their row counts static), for fused_linear up to 16 rows and
  // for a quantized matmul with panels the rows short of them, scheduled
  // apart, each knowing its bounds, as the rest does (a copy the scheduler
  // does not take is decomposed later, as ops without a schedule are).
  ScheduleOptions options = givenOptions;
  if (!options.rowsAtMost && !options.rowsAtLeast &&
      (*kind == ScheduleKind::Contraction ||
       *kind == ScheduleKind::Quantized)) {
    SmallVector<RowBranch> copies =
        *kind == ScheduleKind::Contraction
            ? splitContractionRows(rewriter, op)
            : splitQuantizedRows(rewriter, op, options);
    for (const RowBranch &copy : copies) {
      ScheduleOptions bounded = options;
      bounded.rowsAtLeast = copy.rowsAtLeast;
      bounded.rowsAtMost = copy.rowsAtMost;
      if (&copy == &copies.back()) {
        op = copy.op;
        options = bounded;
        break;
      }
      std::string copyWhy;
      if (succeeded(canSchedule(copy.op, bounded, copyWhy)))
        (void)decomposeWithSchedule(rewriter, copy.op, bounded, copyWhy);
    }
  }
  // Attention, quantized matmuls, convolutions, row losses, scans and rope
  // are built in their tiled form, not scheduled from their decomposition
  // (see Attention.cpp, Quantized.cpp, Convolution.cpp, RowLoss.cpp,
  // Scan.cpp, Rope.cpp).
  if (*kind == ScheduleKind::Attention && PagedAttnView::match(op))
    return buildPagedAttention(rewriter, op, options);
  if (*kind == ScheduleKind::Attention)
    return FlashAttnView::match(op)
               ? buildAttention(rewriter, op, options)
               : buildAttentionBackward(rewriter, op, options);
  if (*kind == ScheduleKind::Quantized)
    return buildQuantized(rewriter, op, options);
  if (*kind == ScheduleKind::Convolution)
    return buildConvolution(rewriter, op, options);
  if (*kind == ScheduleKind::RowLoss)
    return buildRowLoss(rewriter, op, options);
  if (*kind == ScheduleKind::Scan)
    return buildScan(rewriter, op, options);
  if (*kind == ScheduleKind::Rotary)
    return buildRope(rewriter, op, options);
  if (*kind == ScheduleKind::Contraction)
    op = padContraction(rewriter, op, options);
  Block *block = op->getBlock();
  Operation *before = op->getPrevNode(), *after = op->getNextNode();
  FailureOr<Decomposition> decomposed = decomposeInPlace(rewriter, op, why);
  if (failed(decomposed))
    return failure();
  const llvm::SmallPtrSetImpl<Operation *> &decomposition = decomposed->ops;
  SmallVector<Value> &values = decomposed->values;
  // The op that computes each result, behind a cast to a more static type.
  for (Value v : values) {
    if (auto cast = v.getDefiningOp<tensor::CastOp>())
      v = cast.getSource();
    auto root = v.getDefiningOp<linalg::LinalgOp>();
    if (!root)
      continue;
    switch (*kind) {
    case ScheduleKind::RowWise:
      // A decomposition the schedule does not fit stays as decomposed:
      // correct, only slower.
      (void)scheduleRowWise(rewriter, root, decomposition, options);
      break;
    case ScheduleKind::Contraction:
      (void)scheduleContraction(rewriter, root, decomposition, options);
      break;
    case ScheduleKind::Attention:
    case ScheduleKind::Quantized:
    case ScheduleKind::Convolution:
    case ScheduleKind::RowLoss:
    case ScheduleKind::Scan:
    case ScheduleKind::Rotary:
      llvm_unreachable("built, not scheduled");
    }
  }
  dropFullSizeLeftovers(rewriter, block, before, after, decomposition);
  return success();
}
