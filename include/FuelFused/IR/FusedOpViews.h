//===- FusedOpViews.h - Typed views of the static fused ops -----*- C++ -*-===//
//
// Generated from the records of FusedOps.td: `FusedOpKind`, the static ops by
// id, and per op a view class over a `fuel.fused` op of that kind, with its
// operands and params by name and typed (optional ones as std::optional,
// params with a default as their value). Code written for one op (shape
// rules, folds, hand-written decompositions) reads the op through its view
// instead of looking names up as strings:
//
//   if (auto rope = RopeView::match(op))
//     Value x = rope->getX();
//
//===----------------------------------------------------------------------===//

#ifndef FUELFUSED_IR_FUSEDOPVIEWS_H
#define FUELFUSED_IR_FUSEDOPVIEWS_H

#include "FuelFused/IR/FuelAttrs.h"
#include "FuelFused/IR/FuelOps.h"

#include "llvm/ADT/StringRef.h"

#include <array>
#include <cassert>
#include <cstdint>
#include <optional>

namespace mlir {
namespace fuel {

#define GET_FUSED_OP_VIEW_DECLS
#include "FuelFused/IR/FusedOpViews.h.inc"

/// Whether `op` is the static op `kind`.
inline bool isFusedOpKind(FusedOp op, FusedOpKind kind) {
  return op.getKind().getId() == static_cast<uint32_t>(kind);
}

} // namespace fuel
} // namespace mlir

#endif // FUELFUSED_IR_FUSEDOPVIEWS_H
