//===- Scan.h - The scan schedule -------------------------------*- C++ -*-===//

#ifndef FUEL_LIB_CODEGEN_SCAN_H
#define FUEL_LIB_CODEGEN_SCAN_H

#include "FuelFused/Codegen/Schedules.h"

namespace mlir {
namespace fuel {

/// The checks of canSchedule that are the scan schedule's own.
LogicalResult canScheduleScan(FusedOp op, const ScheduleOptions &options,
                              std::string &why);

/// Replaces `op` (a selective_scan canScheduleScan accepts) by the
/// recurrence along the sequence in vectors of channels, an scf.forall over
/// batches and channel vectors.
LogicalResult buildScan(RewriterBase &rewriter, FusedOp op,
                        const ScheduleOptions &options);

} // namespace fuel
} // namespace mlir

#endif // FUEL_LIB_CODEGEN_SCAN_H
