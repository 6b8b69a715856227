//===- Contraction.h - The contraction schedule -----------------*- C++ -*-===//

#ifndef FUEL_LIB_CODEGEN_CONTRACTION_H
#define FUEL_LIB_CODEGEN_CONTRACTION_H

#include "FuelFused/Codegen/Schedules.h"

#include "llvm/ADT/SmallPtrSet.h"

namespace mlir {
namespace fuel {

/// The checks of canSchedule that are the contraction schedule's own.
LogicalResult canScheduleContraction(FusedOp op,
                                     const ScheduleOptions &options,
                                     std::string &why);

/// Applies the contraction schedule (ScheduleKind::Contraction) to the
/// decomposition whose last op is `root` and whose ops are `decomposition`.
/// Fails, changing nothing, when the decomposition does not fit it.
LogicalResult
scheduleContraction(RewriterBase &rewriter, linalg::LinalgOp root,
                    const llvm::SmallPtrSetImpl<Operation *> &decomposition,
                    const ScheduleOptions &options);

/// Tiles the one reduction loop of each contraction in `loop` by `step`
/// (an scf.for carrying the accumulator), with the widening casts of its
/// operands (f16, bf16) fused into the step.
void tileContractionReductions(RewriterBase &rewriter, Operation *loop,
                               int64_t step);

} // namespace fuel
} // namespace mlir

#endif // FUEL_LIB_CODEGEN_CONTRACTION_H
