//===- ScheduleUtils.h - Steps the schedules share --------------*- C++ -*-===//

#ifndef FUEL_LIB_CODEGEN_SCHEDULEUTILS_H
#define FUEL_LIB_CODEGEN_SCHEDULEUTILS_H

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace fuel {

/// Vectorizes every linalg op inside `loop` that has static shapes, then
/// applies the cleanups upstream's vectorization does
/// (`transform.structured.vectorize_children_and_apply_patterns`) to the ops
/// inside `loop` only: nothing outside it is folded or erased. With
/// `contractions`, multiply-add reductions become vector.contract.
void vectorizeInside(RewriterBase &rewriter, Operation *loop,
                     bool contractions);

/// Erases the ops tile-and-fuse fused into a loop (`fused`, untiled) once
/// nothing uses them any more (the slices it fused through, left unused,
/// go first), users first.
void eraseFusedProducers(RewriterBase &rewriter,
                         const llvm::SetVector<Operation *> &fused);

} // namespace fuel
} // namespace mlir

#endif // FUEL_LIB_CODEGEN_SCHEDULEUTILS_H
