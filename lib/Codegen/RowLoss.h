//===- RowLoss.h - The row-loss schedule ------------------------*- C++ -*-===//

#ifndef FUEL_LIB_CODEGEN_ROWLOSS_H
#define FUEL_LIB_CODEGEN_ROWLOSS_H

#include "FuelFused/Codegen/Schedules.h"

#include "mlir/IR/Builders.h"

namespace mlir {
namespace fuel {

/// The checks of canSchedule that are the row-loss schedule's own.
LogicalResult canScheduleRowLoss(FusedOp op, const ScheduleOptions &options,
                                 std::string &why);

/// Replaces `op` (a fused_softmax_cross_entropy canScheduleRowLoss
/// accepts) by one row per scf.forall iteration, each row's loss computed
/// in vectors, and the reduction over rows after the loop.
LogicalResult buildRowLoss(RewriterBase &rewriter, FusedOp op,
                           const ScheduleOptions &options);

/// `v` [d0, ..., dn] folded to one dim (a scalar tensor to [1]).
Value flattenToOneDim(OpBuilder &b, Location loc, Value v);

/// `logits` [d0, ..., dn, V] as [d0 * ... * dn, V] (one row for [V]).
Value logitsAsRows(OpBuilder &b, Location loc, Value logits);

/// The losses of the rows (`perRow`, one dim) in the shape of `targets`.
Value lossesInTargetsShape(OpBuilder &b, Location loc, Value perRow,
                           RankedTensorType targets);

} // namespace fuel
} // namespace mlir

#endif // FUEL_LIB_CODEGEN_ROWLOSS_H
