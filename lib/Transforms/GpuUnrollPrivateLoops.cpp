//===- GpuUnrollPrivateLoops.cpp - Unroll loops that index private buffers ===//
//
// A thread's short scf.for whose iterations index a private buffer (a
// thread's own, which fuel-gpu-private-allocs makes an alloca) at offsets
// that vary with the loop is unrolled fully, so that every offset becomes
// a constant and LLVM's SROA can keep the buffer in registers. Upstream
// unrolls scf.for only on request (transform.loop.unroll, the
// loopUnrollFull utility); LLVM's loop unroller does unroll such loops for
// AMDGPU, whose TTI raises its threshold for loops that index private
// arrays, but not for NVPTX, where they stay loops over an array in local
// memory: a stack frame and a load or store of local memory for each of
// their accesses. Loops that stream much global or workgroup memory stay
// loops (unrolled, their loads are issued together and spill), and so do
// the other loops over the buffers they index, which stay in memory.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Transforms/Passes.h"
#include "GpuMappedLoops.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::fuel {
#define GEN_PASS_DEF_FUELGPUUNROLLPRIVATELOOPS
#include "FuelFused/Transforms/Passes.h.inc"
} // namespace mlir::fuel

using namespace mlir;

/// The buffer of one GPU thread that `memref` is or views, if it is one:
/// allocated inside a loop on GPU blocks or threads, outside workgroup
/// memory; null otherwise.
static Operation *getPrivateBuffer(Value memref) {
  if (!isa<MemRefType>(memref.getType()))
    return nullptr;
  while (auto view = memref.getDefiningOp<ViewLikeOpInterface>())
    memref = view.getViewSource();
  Operation *alloc = memref.getDefiningOp();
  if (!isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(alloc))
    return nullptr;
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(
      cast<MemRefType>(memref.getType()).getMemorySpace());
  if (space && space.getValue() != gpu::AddressSpace::Private)
    return nullptr;
  if (!fuel::isInsideForallMappedTo<gpu::GPUBlockMappingAttr,
                                    gpu::GPUThreadMappingAttr>(alloc))
    return nullptr;
  return alloc;
}

/// The private buffers that ops in `loop`'s body access or view at an
/// index that varies with the loop (computed from its induction variable):
/// offsets that only unrolling the loop makes constant.
static llvm::SmallPtrSet<Operation *, 4> getIndexedBuffers(scf::ForOp loop) {
  llvm::SmallPtrSet<Operation *, 4> buffers;
  // The values computed from the induction variable: the results of ops
  // that take one, and the induction variables of the loops inside whose
  // lower bound or step is one (defined before their uses: pre-order).
  DenseSet<Value> varying{loop.getInductionVar()};
  auto varies = [&](Value v) { return varying.contains(v); };
  loop.getBody()->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (llvm::any_of(op->getOperands(), [&](Value v) {
          return v.getType().isIndex() && varies(v);
        }))
      for (Value operand : op->getOperands())
        if (Operation *buffer = getPrivateBuffer(operand))
          buffers.insert(buffer);
    if (llvm::any_of(op->getOperands(), varies))
      varying.insert(op->result_begin(), op->result_end());
    if (auto inner = dyn_cast<scf::ForOp>(op);
        inner && (varies(inner.getLowerBound()) || varies(inner.getStep())))
      varying.insert(inner.getInductionVar());
  });
  return buffers;
}

/// The elements that one iteration of `loop` reads from buffers that are
/// not private (global or workgroup memory), the iterations of the loops
/// inside counted; nullopt where a loop inside has no static trip count
/// or a read no static size.
static std::optional<uint64_t> streamedElements(scf::ForOp loop) {
  uint64_t total = 0;
  WalkResult walked = loop.getBody()->walk([&](Operation *op) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return WalkResult::advance();
    SmallVector<MemoryEffects::EffectInstance> reads;
    effects.getEffectsOnResource(SideEffects::DefaultResource::get(), reads);
    std::optional<uint64_t> elements;
    for (const MemoryEffects::EffectInstance &effect : reads) {
      Value buffer = effect.getValue();
      if (!isa<MemoryEffects::Read>(effect.getEffect()) || !buffer ||
          getPrivateBuffer(buffer))
        continue;
      // A value read (a vector's elements, a scalar) or, for an op that
      // reads into another buffer, the buffer's elements.
      uint64_t read = 0;
      for (Type type : op->getResultTypes())
        read += isa<VectorType>(type) ? cast<VectorType>(type).getNumElements()
                                      : 1;
      if (op->getNumResults() == 0) {
        auto type = dyn_cast<MemRefType>(buffer.getType());
        if (!type || !type.hasStaticShape())
          return WalkResult::interrupt();
        read = type.getNumElements();
      }
      elements = std::max(elements.value_or(0), read);
    }
    if (!elements)
      return WalkResult::advance();
    // Times the loops between `loop` and the read run.
    for (auto inner = op->getParentOfType<scf::ForOp>(); inner != loop;
         inner = inner->getParentOfType<scf::ForOp>()) {
      std::optional<APInt> trips = inner.getStaticTripCount();
      if (!trips)
        return WalkResult::interrupt();
      *elements *= trips->getZExtValue();
    }
    total += *elements;
    return WalkResult::advance();
  });
  if (walked.wasInterrupted())
    return std::nullopt;
  return total;
}

namespace {
struct FuelGpuUnrollPrivateLoopsPass
    : public fuel::impl::FuelGpuUnrollPrivateLoopsBase<
          FuelGpuUnrollPrivateLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    // Each thread loop, innermost first (the walk's post-order), with the
    // private buffers it indexes; the buffers that a loop that may not be
    // unrolled indexes.
    SmallVector<std::pair<scf::ForOp, llvm::SmallPtrSet<Operation *, 4>>>
        loops;
    llvm::SmallPtrSet<Operation *, 8> stay;
    getOperation()->walk([&](scf::ForOp loop) {
      if (!fuel::isInsideForallMappedTo<gpu::GPUThreadMappingAttr>(loop))
        return;
      llvm::SmallPtrSet<Operation *, 4> buffers = getIndexedBuffers(loop);
      if (buffers.empty())
        return;
      if (!fitsUnrolled(loop))
        stay.insert(buffers.begin(), buffers.end());
      loops.push_back({loop, std::move(buffers)});
    });
    // Unrolling gains nothing for a buffer that another loop still indexes
    // at offsets that vary: it stays in memory.
    for (auto &[loop, buffers] : loops) {
      if (llvm::any_of(buffers, [&](Operation *b) { return stay.count(b); }))
        continue;
      if (failed(loopUnrollFull(loop))) {
        loop.emitError("fuel-gpu-unroll-private-loops: could not unroll "
                       "a loop that indexes a private buffer");
        return signalPassFailure();
      }
    }
  }

  /// Whether `loop` is short enough to unroll: at most max-trips
  /// iterations, which read at most max-streamed-elements elements of
  /// buffers that are not private.
  bool fitsUnrolled(scf::ForOp loop) {
    std::optional<APInt> trips = loop.getStaticTripCount();
    if (!trips || trips->isZero() || trips->ugt(maxTrips))
      return false;
    std::optional<uint64_t> streamed = streamedElements(loop);
    return streamed && *streamed * trips->getZExtValue() <=
                           maxStreamedElements;
  }
};
} // namespace
