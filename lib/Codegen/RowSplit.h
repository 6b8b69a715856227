//===- RowSplit.h - Few dynamic rows run apart ------------------*- C++ -*-===//
//
// Ops that multiply activations [..., K] (their rows: the dims before K) by
// a weight: fused_linear and the quantized matmuls. Exports with a dynamic
// batch or sequence length give them dynamic rows, which a schedule tiles
// for many; a token decoded at a time is one row. These helpers view the
// rows as one dim and branch on their count at run time, so that few rows
// run as ops with static row counts.
//
//===----------------------------------------------------------------------===//

#ifndef FUEL_LIB_CODEGEN_ROWSPLIT_H
#define FUEL_LIB_CODEGEN_ROWSPLIT_H

#include "FuelFused/IR/FuelOps.h"

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace fuel {

/// The reassociation of a rank-`rank` a[..., M, K] into [rows, K].
SmallVector<ReassociationIndices> rowGroups(int64_t rank);

/// `rows` ([R, N], a's rows as one dim) viewed as `y` ([..., M, N], a's row
/// dims): expanded, or reshaped where two or more of a's row dims are
/// dynamic (upstream's expand-strided-metadata takes one dynamic dim per
/// group of an expand_shape).
Value viewRowsBack(RewriterBase &rewriter, Location loc, Value rows, Value a,
                   RankedTensorType y);

/// A copy of the op that splitFewRows makes, with the bounds of the row
/// counts it runs (0: none).
struct RowBranch {
  FusedOp op;
  int64_t rowsAtLeast, rowsAtMost;
};

/// For an op whose operand `actIndex` (activations [..., K]; its one result
/// [..., N]) has dynamic rows that may be few (no static row dim above 1):
/// replaces it by scf.ifs on the row count that run, for one row, the op on
/// a's row as a static [1, ..., 1, K] tensor (decoding a token); for 2 to
/// `fewRows` rows, the op on a's rows as one dim padded with zero rows to a
/// static `fewRows` (a few tokens), the result sliced and viewed back; with
/// `someRows` (above `fewRows`), up to that many rows the op as it was, to
/// be scheduled knowing that bound; and otherwise the op as it was (with
/// more rows than the branches before it). Returns the copies, the last
/// one the op as it was, or none when `op` is not such an op.
SmallVector<RowBranch> splitFewRows(RewriterBase &rewriter, FusedOp op,
                                    unsigned actIndex, int64_t fewRows,
                                    int64_t someRows = 0);

} // namespace fuel
} // namespace mlir

#endif // FUEL_LIB_CODEGEN_ROWSPLIT_H
