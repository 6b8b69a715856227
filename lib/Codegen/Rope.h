//===- Rope.h - The rotary schedule -----------------------------*- C++ -*-===//

#ifndef FUEL_LIB_CODEGEN_ROPE_H
#define FUEL_LIB_CODEGEN_ROPE_H

#include "FuelFused/Codegen/Schedules.h"
#include "FuelFused/IR/FusedOpViews.h"

namespace mlir {
namespace fuel {
namespace rope {

/// rope's x as rows of D: its leading dims and S flattened.
struct RowsShape {
  int64_t rows, s, d, half;
  static RowsShape of(RopeView rope);
};

/// x collapsed to [rows, D] (as it is when of rank 2).
Value asRows(OpBuilder &b, Location loc, Value x);

/// `rows` ([rows, D]) expanded to `type` (x's shape).
Value fromRows(OpBuilder &b, Location loc, Value rows, RankedTensorType type);

/// The pair (p, p + D/2) of a row rotated, from its elements `lo` and `hi`
/// and the tables' entries at its position (scalars or vectors of f32):
/// {lo * cosLo - hi * sinLo, hi * cosHi + lo * sinHi}.
std::pair<Value, Value> rotate(OpBuilder &b, Location loc, Value lo, Value hi,
                               Value cosLo, Value sinLo, Value cosHi,
                               Value sinHi);

} // namespace rope

/// The checks of canSchedule for rope (Rope.cpp): f32, f16 or bf16, static
/// shapes.
LogicalResult canScheduleRope(FusedOp op, const ScheduleOptions &options,
                              std::string &why);

/// Replaces `op` (a rope canScheduleRope accepts) by a row per iteration
/// of an scf.forall, the row's pairs in vectors (Rope.cpp).
LogicalResult buildRope(RewriterBase &rewriter, FusedOp op,
                        const ScheduleOptions &options);

} // namespace fuel
} // namespace mlir

#endif // FUEL_LIB_CODEGEN_ROPE_H
