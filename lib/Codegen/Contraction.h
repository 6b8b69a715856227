//===- Contraction.h - The contraction schedule -----------------*- C++ -*-===//

#ifndef FUEL_LIB_CODEGEN_CONTRACTION_H
#define FUEL_LIB_CODEGEN_CONTRACTION_H

#include "RowSplit.h"

#include "FuelFused/Codegen/Schedules.h"
#include "FuelFused/IR/FuelOps.h"

#include "llvm/ADT/SmallPtrSet.h"

namespace mlir {
namespace fuel {

/// The checks of canSchedule that are the contraction schedule's own.
LogicalResult canScheduleContraction(FusedOp op,
                                     const ScheduleOptions &options,
                                     std::string &why);

/// Views a's rows (M and the dims before it) as one dim, then pads a
/// fused_linear whose M, N or K is not a
/// multiple of the register tile's (M and N from the target's registers,
/// `options`: 8 and 32 for AVX-512, 4 and 16 for AVX2, and for M of at
/// most 4, 1 or 2 rows of four vectors; K 16) with zeros up to the next
/// multiples, replacing it by the slice of the padded op's result that it
/// computes (viewed back); returns the op to schedule, `op` when it needs
/// neither. Zeros in K add nothing to the sums; the rows and columns M and
/// N gain are dropped.
FusedOp padContraction(RewriterBase &rewriter, FusedOp op,
                       const ScheduleOptions &options);

/// splitFewRows for a fused_linear (operand 0, a, [..., K]): one row and 2
/// to 4 rows (the narrow register tiles) as static rows, up to 16 rows
/// scheduled with that bound (b read in place), and the rest.
SmallVector<RowBranch> splitContractionRows(RewriterBase &rewriter,
                                            FusedOp op);

/// Applies the contraction schedule (ScheduleKind::Contraction) to the
/// decomposition whose last op is `root` and whose ops are `decomposition`.
/// Fails, changing nothing, when the decomposition does not fit it.
LogicalResult
scheduleContraction(RewriterBase &rewriter, linalg::LinalgOp root,
                    const llvm::SmallPtrSetImpl<Operation *> &decomposition,
                    const ScheduleOptions &options);

/// Tiles the one reduction loop of each contraction in `loop` by `step`
/// (an scf.for carrying the accumulator), with the widening casts of its
/// operands (f16, bf16) fused into the step; reductions of at most `step`
/// (static) are left whole. With `dividingSteps`, a static reduction takes
/// the largest power of two up to `step` that divides it, so that every
/// step has the same static size (a last partial step would have a size
/// known only at run time, which is not vectorized).
void tileContractionReductions(RewriterBase &rewriter, Operation *loop,
                               int64_t step, bool dividingSteps = false);

} // namespace fuel
} // namespace mlir

#endif // FUEL_LIB_CODEGEN_CONTRACTION_H
