//===- Scan.h - The scan schedule -------------------------------*- C++ -*-===//

#ifndef FUEL_LIB_CODEGEN_SCAN_H
#define FUEL_LIB_CODEGEN_SCAN_H

#include "FuelFused/Codegen/Schedules.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

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

/// Replaces `op` (a selective_scan or ssd_chunk_scan canScheduleScan
/// accepts) by its recurrence with a channel per thread (the GPU form):
/// blocks of at most `maxThreads` channels (their count a power of two;
/// the channels padded to whole blocks), each thread's whole state in
/// registers through its loop over the sequence. Returns the scf.forall over
/// blocks and the one over a block's channels, unmapped.
std::pair<scf::ForallOp, scf::ForallOp>
buildScanThreads(RewriterBase &rewriter, FusedOp op, int64_t maxThreads);

} // namespace fuel
} // namespace mlir

#endif // FUEL_LIB_CODEGEN_SCAN_H
