//===- GpuConvolution.cpp - The convolution schedule on a GPU --------------===//
//
// The convolution schedule's GPU forms, built as the CPU's are
// (Convolution.cpp, CausalConv.cpp) with their loops on blocks and
// threads:
// - conv2d and conv_transpose_2d: a thread per register tile of 4 output
//   columns by up to 4 filters, accumulated over (kh, kw, c) in registers
//   (16 fused multiply-adds a step for 4 loads of pixels and one of 4
//   weights). A block's threads: along x the tiles of an output row (as
//   many as it has, up to a warp; wider rows in blocks of 16 to 32 tiles,
//   whichever pads the row least), so that a warp reads consecutive pixels
//   and writes consecutive outputs; along y filter tiles, as many as keep
//   the block within max-threads, so that the block's threads share each
//   pixel through the cache. Blocks: (b * Ho + oh, filter blocks, column
//   blocks) on (z, y, x). With stride s a thread reads s * 4 consecutive
//   pixels and keeps every s-th. The input is padded (and a transposed
//   convolution's spread out) and the weight transposed by loop nests
//   before the kernel, as on the CPU. The block's pixels and weights are
//   read through the caches; staging them in shared memory is to come.
// - causal_conv1d: a block per (batch, channel, stretch of time), a thread
//   per 4 consecutive outputs of the stretch (a warp reads and writes 128
//   consecutive values), the channel's K weights and bias read once per
//   thread.
//
//===----------------------------------------------------------------------===//

#include "Convolution.h"
#include "GpuSchedules.h"

#include "FuelFused/IR/FusedOpViews.h"

using namespace mlir;
using namespace mlir::fuel;

namespace {
/// Outputs per thread of causal_conv1d.
constexpr int64_t kCausalWidth = 4;
/// The most blocks a grid takes along y and z.
constexpr int64_t kMaxGridYZ = 65535;
} // namespace

LogicalResult mlir::fuel::canScheduleGpuConvolution(
    FusedOp op, const GpuScheduleOptions &options, std::string &why) {
  if (failed(canScheduleConvolution(op, ScheduleOptions{}, why)))
    return failure();
  ArrayRef<int64_t> y =
      cast<RankedTensorType>(op->getResult(0).getType()).getShape();
  // The grid's y and z: (channel, batch) for causal_conv1d, (filter
  // blocks, batch x output rows) for the others (filter blocks are at
  // most the filters).
  if (CausalConv1dView::match(op)) {
    if (y[1] > kMaxGridYZ || y[0] > kMaxGridYZ) {
      why = "the GPU convolution schedule takes at most 65535 channels and "
            "batches";
      return failure();
    }
  } else if (y[1] > kMaxGridYZ || y[0] * y[2] > kMaxGridYZ) {
    why = "the GPU convolution schedule takes at most 65535 filters, and "
          "batches times output rows";
    return failure();
  }
  return success();
}

LogicalResult mlir::fuel::buildGpuConvolutionSchedule(
    RewriterBase &rewriter, FusedOp op, const GpuScheduleOptions &options) {
  if (CausalConv1dView::match(op))
    buildGpuCausalConv1d(rewriter, op, options.maxThreads, kCausalWidth);
  else
    buildGpuConvolution(rewriter, op, options.maxThreads);
  return success();
}
