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

/// Replaces `op` (a conv2d or conv_transpose_2d canScheduleConvolution
/// accepts, with static shapes; a transposed one of one group and padding
/// below the kernel size, read spread out) by the same register tiles, a
/// thread's each: 4 output columns by up to 4 filters, a block of up to
/// `maxThreads` threads over filter tiles (y) and column tiles (x), blocks
/// over (batch and output row, filter blocks, column blocks), every loop
/// mapped (GpuConvolution.cpp).
void buildGpuConvolution(RewriterBase &rewriter, FusedOp op,
                         int64_t maxThreads);

/// canScheduleConvolution's checks for causal_conv1d (CausalConv.cpp).
LogicalResult canScheduleCausalConv1d(FusedOp op,
                                      const ScheduleOptions &options,
                                      std::string &why);

/// Replaces `op` (a causal_conv1d) by one scf.forall iteration per channel
/// of each batch, each over time in vectors (CausalConv.cpp).
LogicalResult buildCausalConv1d(RewriterBase &rewriter, FusedOp op,
                                const ScheduleOptions &options);

/// Replaces `op` (a causal_conv1d canScheduleCausalConv1d accepts, with
/// static shapes) by a block per (batch, channel, stretch of time) and a
/// thread per `width` consecutive outputs of the stretch, every loop mapped
/// (CausalConv.cpp).
void buildGpuCausalConv1d(RewriterBase &rewriter, FusedOp op,
                          int64_t maxThreads, int64_t width);

} // namespace fuel
} // namespace mlir

#endif // FUEL_LIB_CODEGEN_CONVOLUTION_H
