//===- RowWise.h - The row-wise schedule ------------------------*- C++ -*-===//

#ifndef FUEL_LIB_CODEGEN_ROWWISE_H
#define FUEL_LIB_CODEGEN_ROWWISE_H

#include "FuelFused/Codegen/Schedules.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir {
namespace fuel {

/// The checks of canSchedule that are the row-wise schedule's own.
LogicalResult canScheduleRowWise(FusedOp op, const ScheduleOptions &options,
                                 std::string &why);

/// Applies the row-wise schedule (ScheduleKind::RowWise) to the
/// decomposition whose last op is `root` and whose ops are `decomposition`
/// (only those are fused into the row loop: what produced the op's operands
/// stays where it is). Fails, changing nothing, when the decomposition does
/// not fit it.
LogicalResult
scheduleRowWise(RewriterBase &rewriter, linalg::LinalgOp root,
                const llvm::SmallPtrSetImpl<Operation *> &decomposition,
                const ScheduleOptions &options);

/// The first steps of the row-wise schedule, on the CPU and the GPU: tiles
/// `root` (a parallel op over rows with one result and a static row) one
/// row per iteration of an scf.forall over its leading dims, fuses in its
/// producers among `decomposition`, computes a producer fused twice once,
/// and fuses the elementwise steps over the row into the ops that read
/// them (with `keepSharedMath`, not a step of the math dialect that more
/// than one op reads: it is computed once). Fails, changing nothing, when
/// tiling does.
FailureOr<scf::ForallOp>
tileRows(RewriterBase &rewriter, linalg::LinalgOp root,
         const llvm::SmallPtrSetImpl<Operation *> &decomposition,
         bool keepSharedMath = false);

/// Fuses the elementwise ops over whole rows (whose last loop runs over
/// `rowLength`) in `loop` into their consumers over whole rows (upstream's
/// elementwise fusion, restricted to the ops inside `loop`); with
/// `keepSharedMath`, a step computed by the math dialect that more than one
/// op reads is left as it is.
void fuseRowElementwise(RewriterBase &rewriter, Operation *loop,
                        int64_t rowLength, bool keepSharedMath = false);

} // namespace fuel
} // namespace mlir

#endif // FUEL_LIB_CODEGEN_ROWWISE_H
