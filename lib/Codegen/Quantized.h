//===- Quantized.h - The quantized-matmul schedule --------------*- C++ -*-===//

#ifndef FUEL_LIB_CODEGEN_QUANTIZED_H
#define FUEL_LIB_CODEGEN_QUANTIZED_H

#include "RowSplit.h"

#include "FuelFused/Codegen/Schedules.h"
#include "FuelFused/IR/FuelOps.h"

namespace mlir {
namespace fuel {

/// The checks of canSchedule that are the quantized schedule's own.
LogicalResult canScheduleQuantized(FusedOp op, const ScheduleOptions &options,
                                   std::string &why);

/// Replaces `op` (a qmatmul canScheduleQuantized accepts) by tiles of rows
/// in an scf.forall, each reading the quantized weight once and
/// dequantizing it in vector registers; a qmatmul with many rows of A by
/// blocks of rows over panels of the weight, each dequantized once.
LogicalResult buildQuantized(RewriterBase &rewriter, FusedOp op,
                             const ScheduleOptions &options);

/// splitFewRows for a quantized matmul (operand 0, the activations [...,
/// K]): one row and 2 to 4 rows as static rows; where the op has a panel
/// schedule (`options`), the rows short of its fewest in tiles of several
/// rows, and the rest on panels (both padded at run time); otherwise the
/// rest in tiles.
SmallVector<RowBranch> splitQuantizedRows(RewriterBase &rewriter, FusedOp op,
                                          const ScheduleOptions &options);

} // namespace fuel
} // namespace mlir

#endif // FUEL_LIB_CODEGEN_QUANTIZED_H
