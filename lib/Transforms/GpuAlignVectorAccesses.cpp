//===- GpuAlignVectorAccesses.cpp - Aligned vector accesses ---------------===//
//
// fuel-gpu-align-vector-accesses: a kernel's in-bounds 1-D vector transfers
// of global memory of at most 16 bytes become vector.load and vector.store
// with the alignment their address is known to have (see the pass's
// description). Without it the conversion to LLVM
// gives every vector access its element's alignment, and the NVPTX and
// AMDGPU backends split a vector access that may be misaligned into one
// access per element. Scalar memref.load and memref.store get their
// element's size as alignment.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Transforms/Passes.h"

#include "FuelFused/Codegen/TrailingZeros.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::fuel {
#define GEN_PASS_DEF_FUELGPUALIGNVECTORACCESSES
#include "FuelFused/Transforms/Passes.h.inc"
} // namespace mlir::fuel

using namespace mlir;
using namespace mlir::fuel;

/// The alignment of a kernel's buffers assumed, in bytes: gpu.alloc
/// allocations (aligned to 256 by the CUDA and HIP runtimes).
static constexpr unsigned kBufferAlignmentLog2 = 4;
/// The widest vector access given its alignment: one instruction's. Wider
/// ones keep their element's (see the pass's description).
static constexpr int64_t kMaxAccessBytes = 16;
/// How far offsetZeros looks through the views of a kernel argument.
static constexpr unsigned kMaxDepth = 16;
/// Whether `v` is an argument of a kernel.
static bool isKernelArgument(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  auto kernel =
      arg ? dyn_cast<gpu::GPUFuncOp>(arg.getOwner()->getParentOp()) : nullptr;
  return kernel && kernel.isKernel() && arg.getOwner()->isEntryBlock();
}

/// The static strides of `memref`'s type, if they are.
static std::optional<SmallVector<int64_t>> staticStrides(Value memref) {
  int64_t offset;
  SmallVector<int64_t> strides;
  if (failed(cast<MemRefType>(memref.getType())
                 .getStridesAndOffset(strides, offset)) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return std::nullopt;
  return strides;
}

/// The trailing zeros of the element offset of `memref`'s first element
/// from the start of the kernel argument it is a view of; none where it is
/// not such a view, or its offset or a stride it depends on is unknown.
static std::optional<unsigned> offsetZeros(Value memref, unsigned depth = 0) {
  if (depth == kMaxDepth)
    return std::nullopt;
  if (isKernelArgument(memref)) {
    int64_t offset;
    SmallVector<int64_t> strides;
    if (failed(cast<MemRefType>(memref.getType())
                   .getStridesAndOffset(strides, offset)) ||
        ShapedType::isDynamic(offset))
      return std::nullopt;
    return trailingZerosOf(offset);
  }
  Operation *def = memref.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (auto subview = dyn_cast<memref::SubViewOp>(def)) {
    std::optional<unsigned> zeros = offsetZeros(subview.getSource(), depth + 1);
    std::optional<SmallVector<int64_t>> strides =
        staticStrides(subview.getSource());
    if (!zeros || !strides)
      return std::nullopt;
    for (auto [offset, stride] :
         llvm::zip(subview.getMixedOffsets(), *strides))
      zeros = std::min(*zeros, std::min(kAllTrailingZeros,
                                        knownTrailingZeros(offset) +
                                            trailingZerosOf(stride)));
    return zeros;
  }
  if (auto cast = dyn_cast<memref::ReinterpretCastOp>(def)) {
    // A new offset from the same start.
    if (!offsetZeros(cast.getSource(), depth + 1))
      return std::nullopt;
    return knownTrailingZeros(cast.getMixedOffsets().front());
  }
  if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp,
          memref::AssumeAlignmentOp>(def))
    return offsetZeros(def->getOperand(0), depth + 1);
  return std::nullopt;
}

/// The alignment, in bytes, of the access of `vectorType` at `indices` of
/// `memref`, if it is known to be more than its element's and the access
/// is a contiguous one of global memory of at most kMaxAccessBytes.
static std::optional<int64_t> knownAlignment(Value memref, ValueRange indices,
                                             VectorType vectorType) {
  auto type = cast<MemRefType>(memref.getType());
  if (auto space =
          dyn_cast_if_present<gpu::AddressSpaceAttr>(type.getMemorySpace());
      space && space.getValue() != gpu::AddressSpace::Global)
    return std::nullopt;
  Type element = type.getElementType();
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8)
    return std::nullopt;
  int64_t elementBytes = element.getIntOrFloatBitWidth() / 8;
  int64_t bytes = vectorType.getNumElements() * elementBytes;
  if (vectorType.getRank() != 1 || bytes > kMaxAccessBytes ||
      !llvm::isPowerOf2_64(elementBytes))
    return std::nullopt;
  std::optional<unsigned> zeros = offsetZeros(memref);
  std::optional<SmallVector<int64_t>> strides = staticStrides(memref);
  if (!zeros || !strides || strides->back() != 1)
    return std::nullopt;
  // The element offset: the view's offset plus each index times its
  // stride; its bytes from an aligned start.
  for (auto [index, stride] : llvm::zip(indices, *strides))
    zeros = std::min(*zeros,
                     std::min(kAllTrailingZeros, knownTrailingZeros(index) +
                                                     trailingZerosOf(stride)));
  unsigned log2 = std::min<unsigned>(kBufferAlignmentLog2,
                                     *zeros + llvm::Log2_64(elementBytes));
  int64_t alignment = int64_t(1) << log2;
  if (alignment <= elementBytes)
    return std::nullopt;
  return alignment;
}

/// Whether `op` is an unmasked, in-bounds transfer of a memref (a write
/// then has no result) along its innermost dim.
static bool isContiguous(VectorTransferOpInterface op) {
  return isa<MemRefType>(op.getBase().getType()) && !op.getMask() &&
         op.getPermutationMap().isMinorIdentity() &&
         op.getPermutationMap().getNumResults() == 1 &&
         llvm::all_of(op.getInBoundsValues(), [](bool b) { return b; });
}

namespace {
struct FuelGpuAlignVectorAccessesPass
    : public fuel::impl::FuelGpuAlignVectorAccessesBase<
          FuelGpuAlignVectorAccessesPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<VectorTransferOpInterface> transfers;
    getOperation().walk(
        [&](VectorTransferOpInterface op) { transfers.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (VectorTransferOpInterface op : transfers) {
      if (!isContiguous(op))
        continue;
      std::optional<int64_t> alignment =
          knownAlignment(op.getBase(), op.getIndices(), op.getVectorType());
      if (!alignment)
        continue;
      rewriter.setInsertionPoint(op);
      llvm::MaybeAlign align(*alignment);
      if (auto read = dyn_cast<vector::TransferReadOp>(*op))
        rewriter.replaceOpWithNewOp<vector::LoadOp>(
            read, read.getVectorType(), read.getBase(), read.getIndices(),
            /*nontemporal=*/false, align);
      else
        rewriter.replaceOpWithNewOp<vector::StoreOp>(
            op, cast<vector::TransferWriteOp>(*op).getVector(), op.getBase(),
            op.getIndices(), /*nontemporal=*/false, align);
    }
    // Scalar accesses: their element's size, which the translation to LLVM
    // IR would otherwise take from the default data layout (4 for an i64).
    getOperation().walk([&](Operation *op) {
      auto load = dyn_cast<memref::LoadOp>(op);
      auto store = dyn_cast<memref::StoreOp>(op);
      if ((!load && !store) ||
          (load ? load.getAlignment() : store.getAlignment()))
        return;
      Type element = load ? load.getType() : store.getValueToStore().getType();
      if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() < 8 ||
          !llvm::isPowerOf2_64(element.getIntOrFloatBitWidth()))
        return;
      IntegerAttr alignment = rewriter.getI64IntegerAttr(
          element.getIntOrFloatBitWidth() / 8);
      if (load)
        load.setAlignmentAttr(alignment);
      else
        store.setAlignmentAttr(alignment);
    });
  }
};
} // namespace
