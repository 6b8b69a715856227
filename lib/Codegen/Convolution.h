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

/// canScheduleConvolution's checks for causal_conv1d (CausalConv.cpp).
LogicalResult canScheduleCausalConv1d(FusedOp op,
                                      const ScheduleOptions &options,
                                      std::string &why);

/// Replaces `op` (a causal_conv1d) by one scf.forall iteration per channel
/// of each batch, each over time in vectors (CausalConv.cpp).
LogicalResult buildCausalConv1d(RewriterBase &rewriter, FusedOp op,
                                const ScheduleOptions &options);

} // namespace fuel
} // namespace mlir

#endif // FUEL_LIB_CODEGEN_CONVOLUTION_H
