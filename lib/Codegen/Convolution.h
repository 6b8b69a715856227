//===- Convolution.h - The convolution schedule -----------------*- C++ -*-===//

#ifndef FUEL_LIB_CODEGEN_CONVOLUTION_H
#define FUEL_LIB_CODEGEN_CONVOLUTION_H

#include "FuelFused/Codegen/Schedules.h"

namespace mlir {
namespace fuel {

/// The checks of canSchedule that are the convolution schedule's own.
LogicalResult canScheduleConvolution(FusedOp op,
                                     const ScheduleOptions &options,
                                     std::string &why);

/// Replaces `op` (a conv2d canScheduleConvolution accepts) by register
/// tiles of outer products over its reduction, in an scf.forall over
/// output rows and tiles.
LogicalResult buildConvolution(RewriterBase &rewriter, FusedOp op,
                               const ScheduleOptions &options);

} // namespace fuel
} // namespace mlir

#endif // FUEL_LIB_CODEGEN_CONVOLUTION_H
