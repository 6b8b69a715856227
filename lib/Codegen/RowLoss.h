//===- RowLoss.h - The row-loss schedule ------------------------*- C++ -*-===//

#ifndef FUEL_LIB_CODEGEN_ROWLOSS_H
#define FUEL_LIB_CODEGEN_ROWLOSS_H

#include "FuelFused/Codegen/Schedules.h"

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

} // namespace fuel
} // namespace mlir

#endif // FUEL_LIB_CODEGEN_ROWLOSS_H
