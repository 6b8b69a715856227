//===- GpuMapping.cpp - Loops to GPU kernels ------------------------------===//
//
// The passes of fuel-to-nvvm between bufferization and outlining: the
// scheduled loops (scf.forall mapped to blocks and threads) and the loops
// of everything else (scf.parallel) become gpu.launch ops, and the buffers
// allocated inside kernels get a place there.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Transforms/Passes.h"
#include "GpuWorkgroupBuffers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::fuel {
#define GEN_PASS_DEF_FUELGPUMAPFORALL
#define GEN_PASS_DEF_FUELGPUMAPPARALLELLOOPS
#define GEN_PASS_DEF_FUELGPUPRIVATEALLOCS
#include "FuelFused/Transforms/Passes.h.inc"
} // namespace mlir::fuel

using namespace mlir;
using namespace mlir::fuel;

//===----------------------------------------------------------------------===//
// fuel-gpu-map-forall
//===----------------------------------------------------------------------===//

/// The mapping of `op` when every entry is of `Attr`'s kind.
template <typename Attr>
static bool isMappedTo(scf::ForallOp op) {
  std::optional<ArrayAttr> mapping = op.getMapping();
  return mapping && !mapping->empty() &&
         llvm::all_of(*mapping, [](Attribute a) { return isa<Attr>(a); });
}

/// The trip count of `op` along each grid dim (x, y, z) its mapping names;
/// fails with a diagnostic when one is not static, not normalized, or a dim
/// is named twice or beyond z.
static FailureOr<std::array<int64_t, 3>> getMappedSizes(scf::ForallOp op) {
  std::array<int64_t, 3> sizes = {1, 1, 1};
  std::array<bool, 3> seen = {false, false, false};
  for (auto [i, attr] : llvm::enumerate(*op.getMapping())) {
    std::optional<int64_t> lb = getConstantIntValue(op.getMixedLowerBound()[i]);
    std::optional<int64_t> ub = getConstantIntValue(op.getMixedUpperBound()[i]);
    std::optional<int64_t> step = getConstantIntValue(op.getMixedStep()[i]);
    if (!lb || !ub || !step || *step < 1)
      return op.emitError("fuel-gpu-map-forall: a mapped loop needs static "
                          "bounds and a positive static step");
    auto mapping = cast<DeviceMappingAttrInterface>(attr);
    if (mapping.isLinearMapping())
      return op.emitError("fuel-gpu-map-forall: linear mappings are not "
                          "supported");
    int64_t dim = mapping.getMappingId();
    if (dim > 2 || seen[dim])
      return op.emitError("fuel-gpu-map-forall: each of x, y and z can be "
                          "mapped once");
    seen[dim] = true;
    sizes[dim] = std::max<int64_t>(llvm::divideCeil(*ub - *lb, *step), 0);
  }
  return sizes;
}

/// Replaces `loop`'s body's induction variables by `lb + id * step`, the
/// id of the dim (x, y, z) its mapping picks, and inlines the body before
/// `before`.
static void inlineMapped(RewriterBase &rewriter, scf::ForallOp loop,
                         gpu::KernelDim3 ids, Operation *before) {
  std::array<Value, 3> byDim = {ids.x, ids.y, ids.z};
  SmallVector<Value> args;
  rewriter.setInsertionPoint(before);
  Location loc = loop.getLoc();
  for (auto [i, attr] : llvm::enumerate(*loop.getMapping())) {
    Value id = byDim[cast<DeviceMappingAttrInterface>(attr).getMappingId()];
    int64_t lb = *getConstantIntValue(loop.getMixedLowerBound()[i]);
    int64_t step = *getConstantIntValue(loop.getMixedStep()[i]);
    if (step != 1)
      id = arith::MulIOp::create(
          rewriter, loc, id,
          arith::ConstantIndexOp::create(rewriter, loc, step));
    if (lb != 0)
      id = arith::AddIOp::create(
          rewriter, loc, id, arith::ConstantIndexOp::create(rewriter, loc, lb));
    args.push_back(id);
  }
  rewriter.eraseOp(loop.getTerminator());
  rewriter.inlineBlockBefore(loop.getBody(), before, args);
}

/// Whether `op` (or an op in it) may read or write memory; allocating
/// does not count.
static bool accessesMemory(Operation *op) {
  WalkResult found = op->walk([](Operation *inner) {
    if (inner->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(inner);
    if (!effects)
      return WalkResult::interrupt();
    return effects.hasEffect<MemoryEffects::Read>() ||
                   effects.hasEffect<MemoryEffects::Write>()
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  return found.wasInterrupted();
}

static LogicalResult mapForallToLaunch(RewriterBase &rewriter,
                                       scf::ForallOp blocks) {
  if (blocks.getNumResults() != 0)
    return blocks.emitError("fuel-gpu-map-forall: the loop is on tensors: "
                            "bufferize first");
  FailureOr<std::array<int64_t, 3>> grid = getMappedSizes(blocks);
  if (failed(grid))
    return failure();
  // The thread loops: in the block's body, or in scf.for loops there (a
  // loop along a reduction whose steps the block's threads take together).
  SmallVector<scf::ForallOp> threadLoops;
  std::array<int64_t, 3> blockSizes = {1, 1, 1};
  WalkResult walked =
      blocks.getBody()->walk<WalkOrder::PreOrder>([&](scf::ForallOp inner) {
        if (!inner.getMapping())
          return WalkResult::advance();
        if (!isMappedTo<gpu::GPUThreadMappingAttr>(inner))
          return WalkResult::interrupt();
        for (Operation *parent = inner->getParentOp(); parent != blocks;
             parent = parent->getParentOp())
          if (!isa<scf::ForOp>(parent))
            return WalkResult::interrupt();
        threadLoops.push_back(inner);
        return WalkResult::skip();
      });
  if (walked.wasInterrupted())
    return blocks.emitError("fuel-gpu-map-forall: a mapped loop nested "
                            "deeper than the block's body and the scf.for "
                            "loops in it");
  for (scf::ForallOp loop : threadLoops) {
    FailureOr<std::array<int64_t, 3>> sizes = getMappedSizes(loop);
    if (failed(sizes))
      return failure();
    for (int d = 0; d < 3; ++d)
      blockSizes[d] = std::max(blockSizes[d], (*sizes)[d]);
  }
  // A loop with fewer threads than the block is guarded, and every thread
  // of a block must reach a barrier (a block-wide reduction has them).
  for (scf::ForallOp loop : threadLoops) {
    std::array<int64_t, 3> sizes = *getMappedSizes(loop);
    if (sizes == blockSizes)
      continue;
    WalkResult synced = loop.getBody()->walk([](Operation *op) {
      return isa<gpu::BarrierOp, gpu::AllReduceOp>(op)
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    if (synced.wasInterrupted())
      return loop.emitError()
             << "fuel-gpu-map-forall: a thread loop of " << sizes[0] << " x "
             << sizes[1] << " x " << sizes[2] << " threads in a block of "
             << blockSizes[0] << " x " << blockSizes[1] << " x "
             << blockSizes[2]
             << " synchronizes the block (gpu.barrier, gpu.all_reduce), "
                "which the threads past its trip count would never reach";
  }

  Location loc = blocks.getLoc();
  rewriter.setInsertionPoint(blocks);
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, v);
  };
  auto launch = gpu::LaunchOp::create(
      rewriter, loc, index((*grid)[0]), index((*grid)[1]), index((*grid)[2]),
      index(blockSizes[0]), index(blockSizes[1]), index(blockSizes[2]));
  rewriter.setInsertionPointToEnd(&launch.getBody().front());
  auto terminator = gpu::TerminatorOp::create(rewriter, loc);
  inlineMapped(rewriter, blocks, launch.getBlockIds(), terminator);

  gpu::KernelDim3 tids = launch.getThreadIds();
  std::array<Value, 3> tidByDim = {tids.x, tids.y, tids.z};
  for (scf::ForallOp loop : threadLoops) {
    std::array<int64_t, 3> sizes = *getMappedSizes(loop);
    rewriter.setInsertionPoint(loop);
    Operation *before = loop;
    // Threads past the loop's trip count skip its body.
    Value inRange;
    for (int d = 0; d < 3; ++d) {
      if (sizes[d] == blockSizes[d])
        continue;
      Value lt = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult,
                                       tidByDim[d], index(sizes[d]));
      inRange = inRange ? arith::AndIOp::create(rewriter, loc, inRange, lt)
                        : lt;
    }
    if (inRange) {
      auto guard = scf::IfOp::create(rewriter, loc, inRange,
                                     /*withElseRegion=*/false);
      before = guard.thenBlock()->getTerminator();
    }
    Operation *next = loop->getNextNode();
    inlineMapped(rewriter, loop, tids, before);
    rewriter.eraseOp(loop);
    // What the threads wrote is read by others after the loop, or, in an
    // scf.for, in its next iteration (which may also overwrite what the
    // loop read).
    bool memoryAfter = isa<scf::ForOp>(next->getParentOp());
    for (Operation *op = next; op; op = op->getNextNode())
      memoryAfter |= accessesMemory(op);
    if (memoryAfter) {
      rewriter.setInsertionPoint(next);
      gpu::BarrierOp::create(rewriter, loc);
    }
  }
  rewriter.eraseOp(blocks);
  return success();
}

namespace {
struct FuelGpuMapForallPass
    : public fuel::impl::FuelGpuMapForallBase<FuelGpuMapForallPass> {
  void runOnOperation() override {
    SmallVector<scf::ForallOp> roots;
    getOperation()->walk([&](scf::ForallOp op) {
      if (isMappedTo<gpu::GPUBlockMappingAttr>(op) &&
          !op->getParentOfType<gpu::LaunchOp>())
        roots.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ForallOp op : roots)
      if (failed(mapForallToLaunch(rewriter, op)))
        return signalPassFailure();
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// fuel-gpu-map-parallel-loops
//===----------------------------------------------------------------------===//

/// Maps `loop`'s dims: the last `ids.size()` dims to `ids` (the last to the
/// first id), the others sequential.
static void setMapping(scf::ParallelOp loop,
                       ArrayRef<gpu::Processor> ids) {
  MLIRContext *ctx = loop.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(1, ctx);
  unsigned rank = loop.getNumLoops();
  SmallVector<gpu::ParallelLoopDimMappingAttr> mapping;
  for (unsigned i = 0; i < rank; ++i) {
    unsigned fromLast = rank - 1 - i;
    gpu::Processor p = fromLast < ids.size() ? ids[fromLast]
                                             : gpu::Processor::Sequential;
    mapping.push_back(
        gpu::ParallelLoopDimMappingAttr::get(ctx, p, identity, identity));
  }
  (void)gpu::setMappingAttr(loop, mapping);
}

/// Whether `op` is on the host: not inside a launch.
static bool onHost(Operation *op) {
  return !op->getParentOfType<gpu::LaunchOp>();
}

/// Wraps `ops` (consecutive in one block, none of whose results is used
/// after the last) in a launch of one thread.
static void launchOneThread(RewriterBase &rewriter, ArrayRef<Operation *> ops) {
  Location loc = ops.front()->getLoc();
  rewriter.setInsertionPoint(ops.front());
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto launch = gpu::LaunchOp::create(rewriter, loc, one, one, one, one, one,
                                      one);
  rewriter.setInsertionPointToEnd(&launch.getBody().front());
  auto terminator = gpu::TerminatorOp::create(rewriter, loc);
  for (Operation *op : ops)
    rewriter.moveOpBefore(op, terminator);
}

/// Replaces `loop` (with no reductions) by a nest of scf.for.
static void parallelToSequential(RewriterBase &rewriter, scf::ParallelOp loop) {
  rewriter.setInsertionPoint(loop);
  SmallVector<Value> ivs;
  for (auto [lb, ub, step] : llvm::zip(loop.getLowerBound(),
                                       loop.getUpperBound(), loop.getStep())) {
    auto inner = scf::ForOp::create(rewriter, loop.getLoc(), lb, ub, step);
    ivs.push_back(inner.getInductionVar());
    rewriter.setInsertionPoint(inner.getBody()->getTerminator());
  }
  Operation *before = &*rewriter.getInsertionPoint();
  rewriter.eraseOp(loop.getBody()->getTerminator());
  rewriter.inlineBlockBefore(loop.getBody(), before, ivs);
  rewriter.eraseOp(loop);
}

/// The ops from `first` on that must run with it: up to the last user of a
/// result of any of them in the same block. Fails when that includes a
/// terminator or a launch.
static FailureOr<SmallVector<Operation *>> serialGroup(Operation *first) {
  SmallVector<Operation *> group;
  Operation *last = first;
  for (Operation *op = first; op; op = op->getNextNode()) {
    if (op->hasTrait<OpTrait::IsTerminator>() || isa<gpu::LaunchOp>(op))
      return failure();
    group.push_back(op);
    for (Value result : op->getResults())
      for (Operation *user : result.getUsers()) {
        Operation *inBlock = first->getBlock()->findAncestorOpInBlock(*user);
        if (inBlock && last->isBeforeInBlock(inBlock))
          last = inBlock;
      }
    if (op == last)
      return group;
  }
  return failure();
}

namespace {
struct FuelGpuMapParallelLoopsPass
    : public fuel::impl::FuelGpuMapParallelLoopsBase<
          FuelGpuMapParallelLoopsPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    if (maxThreads < 1)
      return emitError(UnknownLoc::get(context))
             << "fuel-gpu-map-parallel-loops: max-threads must be at least "
                "1, got "
             << static_cast<int64_t>(maxThreads);
    return success();
  }

  void runOnOperation() override {
    SmallVector<scf::ParallelOp> roots;
    getOperation()->walk([&](scf::ParallelOp op) {
      if (onHost(op) && !op->getParentOfType<scf::ParallelOp>())
        roots.push_back(op);
    });
    for (scf::ParallelOp op : roots) {
      SmallVector<int64_t> tiles(op.getNumLoops(), 1);
      int64_t inner = maxThreads;
      if (std::optional<int64_t> ub =
              getConstantIntValue(op.getUpperBound().back()))
        inner = std::min<int64_t>(inner, std::max<int64_t>(*ub, 1));
      tiles.back() = inner;
      auto [outer, tile] =
          scf::tileParallelLoop(op, tiles, /*noMinMaxBounds=*/true);
      setMapping(outer, {gpu::Processor::BlockX, gpu::Processor::BlockY,
                         gpu::Processor::BlockZ});
      setMapping(tile, {gpu::Processor::ThreadX});
      tile.getBody()->walk(
          [&](scf::ParallelOp nested) { setMapping(nested, {}); });
    }

    // What still reads or writes memory on the host (a loop or access
    // outside any parallel loop: a reduction to a scalar) runs on one GPU
    // thread; a copy becomes a device copy.
    IRRewriter rewriter(&getContext());
    SmallVector<Operation *> serial;
    SmallVector<memref::CopyOp> copies;
    getOperation()->walk([&](FunctionOpInterface func) {
      for (Block &block : func.getFunctionBody()) {
        for (Operation &op : block) {
          if (isa<gpu::LaunchOp, scf::ParallelOp>(op))
            continue;
          if (auto copy = dyn_cast<memref::CopyOp>(op)) {
            copies.push_back(copy);
            continue;
          }
          // Loops mapped above become kernels where they are (in a host
          // loop: a launch per iteration).
          WalkResult accesses =
              op.walk<WalkOrder::PreOrder>([](Operation *inner) {
                if (isa<scf::ParallelOp>(inner))
                  return WalkResult::skip();
                return isa<memref::LoadOp, memref::StoreOp,
                           vector::TransferReadOp, vector::TransferWriteOp,
                           vector::LoadOp, vector::StoreOp, memref::CopyOp>(
                           inner)
                           ? WalkResult::interrupt()
                           : WalkResult::advance();
              });
          if (accesses.wasInterrupted())
            serial.push_back(&op);
        }
      }
    });
    llvm::SmallPtrSet<Operation *, 8> launched;
    for (Operation *op : serial) {
      if (launched.contains(op))
        continue;
      FailureOr<SmallVector<Operation *>> group = serialGroup(op);
      if (failed(group)) {
        op->emitError("fuel-gpu-map-parallel-loops: an op on the host "
                      "accesses memory and its results are returned or "
                      "read by a kernel");
        return signalPassFailure();
      }
      launched.insert(group->begin(), group->end());
      launchOneThread(rewriter, *group);
      // Loops in it run in that one thread.
      for (Operation *grouped : *group) {
        SmallVector<scf::ParallelOp> inside;
        grouped->walk([&](scf::ParallelOp loop) { inside.push_back(loop); });
        for (scf::ParallelOp loop : inside) {
          if (loop.getNumResults() != 0) {
            loop.emitError("fuel-gpu-map-parallel-loops: a parallel loop "
                           "with reductions in serial host code");
            return signalPassFailure();
          }
          parallelToSequential(rewriter, loop);
        }
      }
    }
    for (memref::CopyOp copy : copies) {
      auto source = cast<MemRefType>(copy.getSource().getType());
      auto target = cast<MemRefType>(copy.getTarget().getType());
      if (!source.getLayout().isIdentity() ||
          !target.getLayout().isIdentity()) {
        copy.emitError("fuel-gpu-map-parallel-loops: a copy between "
                       "non-contiguous buffers on the host (lower it to "
                       "loops first: fuel-strided-copies-to-loops)");
        return signalPassFailure();
      }
      rewriter.setInsertionPoint(copy);
      rewriter.replaceOpWithNewOp<gpu::MemcpyOp>(
          copy, /*asyncToken=*/Type(), ValueRange(), copy.getTarget(),
          copy.getSource());
    }
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// fuel-gpu-private-allocs
//===----------------------------------------------------------------------===//

/// The memref and the indices of `op` where it is an access that
/// shrinkThreadDims can rewrite, and the dims its vector spans with more
/// than one element; failure otherwise.
struct Access {
  OpOperand *memref;
  SmallVector<Value> indices;
  SmallVector<unsigned> vectorDims;
};
static FailureOr<Access> getAccess(Operation *op) {
  auto access = [](OpOperand &memref, ValueRange indices,
                   SmallVector<unsigned> vectorDims = {}) {
    return Access{&memref, llvm::to_vector(indices), std::move(vectorDims)};
  };
  // The memref dims of a transfer's vector dims longer than 1.
  auto spanned = [](AffineMap map, VectorType vector) {
    SmallVector<unsigned> dims;
    for (auto [e, size] : llvm::zip(map.getResults(), vector.getShape()))
      if (auto d = dyn_cast<AffineDimExpr>(e); d && size != 1)
        dims.push_back(d.getPosition());
    return dims;
  };
  // A vector.load's or vector.store's vector runs along the last dims.
  auto trailing = [](ValueRange indices, VectorType vector) {
    SmallVector<unsigned> dims;
    unsigned rank = indices.size(), n = vector.getRank();
    for (auto [i, size] : llvm::enumerate(vector.getShape()))
      if (size != 1)
        dims.push_back(rank - n + i);
    return dims;
  };
  if (auto read = dyn_cast<vector::TransferReadOp>(op))
    return access(read.getBaseMutable(), read.getIndices(),
                  spanned(read.getPermutationMap(), read.getVectorType()));
  if (auto write = dyn_cast<vector::TransferWriteOp>(op))
    return access(write.getBaseMutable(), write.getIndices(),
                  spanned(write.getPermutationMap(), write.getVectorType()));
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return access(load.getMemrefMutable(), load.getIndices());
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return access(store.getMemrefMutable(), store.getIndices());
  if (auto load = dyn_cast<vector::LoadOp>(op))
    return access(load.getBaseMutable(), load.getIndices(),
                  trailing(load.getIndices(), load.getVectorType()));
  if (auto store = dyn_cast<vector::StoreOp>(op))
    return access(store.getBaseMutable(), store.getIndices(),
                  trailing(store.getIndices(), store.getVectorType()));
  return failure();
}

/// Shrinks `alloc` (in `launch`) to the slice one thread uses where every
/// access indexes its leading dims by the same thread ids (a subview with
/// unit sizes there, or a load, store or transfer whose vector has one
/// element along them): those dims become 1, indexed by 0. Returns the new
/// buffer, or null where `alloc` is not such a buffer.
static Value shrinkThreadDims(RewriterBase &rewriter, gpu::LaunchOp launch,
                              memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  if (!type.getLayout().isIdentity() || type.getRank() == 0)
    return {};
  gpu::KernelDim3 tids = launch.getThreadIds();
  auto isThreadId = [&](Value v) {
    return v == tids.x || v == tids.y || v == tids.z;
  };
  // The thread ids indexing the leading dims, the same in every access.
  SmallVector<Value> leading;
  bool first = true;
  auto agree = [&](ArrayRef<Value> indices) {
    unsigned n = 0;
    while (n < indices.size() && isThreadId(indices[n]))
      ++n;
    if (first) {
      leading.assign(indices.begin(), indices.begin() + n);
      first = false;
      return n > 0;
    }
    return n >= leading.size() &&
           llvm::equal(leading, indices.take_front(leading.size()));
  };
  for (Operation *user : alloc->getUsers()) {
    if (isa<memref::DeallocOp>(user))
      continue;
    if (auto subview = dyn_cast<memref::SubViewOp>(user)) {
      SmallVector<Value> offsets;
      for (OpFoldResult o : subview.getMixedOffsets())
        offsets.push_back(dyn_cast<Value>(o));
      if (!agree(offsets))
        return {};
      continue;
    }
    FailureOr<Access> access = getAccess(user);
    if (failed(access) || access->memref->get() != alloc.getResult() ||
        !agree(access->indices))
      return {};
  }
  if (first || leading.empty())
    return {};
  unsigned d = leading.size();
  // Subviews keep unit sizes, accesses' vectors stay off those dims.
  for (Operation *user : alloc->getUsers()) {
    if (auto subview = dyn_cast<memref::SubViewOp>(user)) {
      ArrayRef<int64_t> sizes = subview.getStaticSizes();
      if (llvm::any_of(sizes.take_front(d), [](int64_t s) { return s != 1; }))
        return {};
    } else if (FailureOr<Access> access = getAccess(user);
               succeeded(access) &&
               llvm::any_of(access->vectorDims,
                            [&](unsigned dim) { return dim < d; })) {
      return {};
    }
  }

  SmallVector<int64_t> shape(type.getShape());
  std::fill_n(shape.begin(), d, 1);
  rewriter.setInsertionPoint(alloc);
  auto shrunk = memref::AllocOp::create(
      rewriter, alloc.getLoc(),
      MemRefType::get(shape, type.getElementType(), MemRefLayoutAttrInterface(),
                      type.getMemorySpace()),
      alloc.getAlignmentAttr());
  Value zero = arith::ConstantIndexOp::create(rewriter, alloc.getLoc(), 0);
  for (Operation *user : llvm::make_early_inc_range(alloc->getUsers())) {
    if (isa<memref::DeallocOp>(user)) {
      rewriter.eraseOp(user);
      continue;
    }
    if (auto subview = dyn_cast<memref::SubViewOp>(user)) {
      SmallVector<OpFoldResult> offsets = subview.getMixedOffsets();
      std::fill_n(offsets.begin(), d, rewriter.getIndexAttr(0));
      rewriter.setInsertionPoint(subview);
      MemRefType resultType = subview.getType();
      auto inferred = memref::SubViewOp::inferRankReducedResultType(
          resultType.getShape(), shrunk.getType(), offsets,
          subview.getMixedSizes(), subview.getMixedStrides());
      Value replacement = memref::SubViewOp::create(
          rewriter, subview.getLoc(), inferred, shrunk, offsets,
          subview.getMixedSizes(), subview.getMixedStrides());
      if (replacement.getType() != resultType)
        replacement = memref::CastOp::create(rewriter, subview.getLoc(),
                                             resultType, replacement);
      rewriter.replaceOp(subview, replacement);
      continue;
    }
    Access access = *getAccess(user);
    unsigned firstIndex = access.memref->getOperandNumber() + 1;
    rewriter.modifyOpInPlace(user, [&] {
      access.memref->set(shrunk);
      for (unsigned i = 0; i < d; ++i)
        user->setOperand(firstIndex + i, zero);
    });
  }
  rewriter.eraseOp(alloc);
  return shrunk;
}

/// Whether a view of `buffer` may outlive the loop iteration that
/// allocated it: passed on by a terminator (an `scf.yield` of the loop or
/// of a region in it), to a call, or to an op that makes a memref or a
/// tensor of it other than a view of it. Loads, stores, copies and other
/// accesses through it do not.
static bool mayOutliveIteration(Value buffer) {
  return !allBufferUsers(
      buffer, [](Operation *user) { return !mayPassBufferOn(user); });
}

/// Where a static private buffer allocated at `op` goes: the start of its
/// kernel's body, after the buffers put there before (`hoisted`, the last
/// per kernel), where it runs at most once a thread (no loop encloses it
/// there) or it serves one iteration of the loops that enclose it (no view
/// of it outlives the iteration: each iteration's buffer is then the same
/// one, whose contents no iteration reads before writing them); else `op`.
/// Returns whether it is the former. LLVM promotes to registers only the
/// allocas of a function's entry block; one in a block of a branch (the
/// mapping's `if` of the threads that have work) stays a stack slot
/// (AMDGPU's scratch), and one in a loop's body is a new stack allocation
/// each iteration.
static bool
setPrivateAllocPoint(RewriterBase &rewriter, Operation *op,
                     llvm::DenseMap<Operation *, Operation *> &hoisted) {
  auto launch = op->getParentOfType<gpu::LaunchOp>();
  bool inLoop = false;
  for (Operation *parent = op->getParentOp(); parent != launch;
       parent = parent->getParentOp())
    inLoop |= isa<LoopLikeOpInterface>(parent);
  if (inLoop && mayOutliveIteration(op->getResult(0))) {
    rewriter.setInsertionPoint(op);
    return false;
  }
  if (Operation *last = hoisted.lookup(launch))
    rewriter.setInsertionPointAfter(last);
  else
    rewriter.setInsertionPointToStart(&launch.getBody().front());
  return true;
}

namespace {
struct FuelGpuPrivateAllocsPass
    : public fuel::impl::FuelGpuPrivateAllocsBase<FuelGpuPrivateAllocsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<memref::AllocOp> allocs;
    getOperation()->walk([&](memref::AllocOp op) {
      if (op->getParentOfType<gpu::LaunchOp>())
        allocs.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    llvm::DenseMap<Operation *, Operation *> hoisted;
    WorkgroupBuffers workgroup;
    // Per-thread slices of a shared-looking buffer first.
    for (memref::AllocOp &alloc : allocs) {
      auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(
          alloc.getType().getMemorySpace());
      if (space && space.getValue() == gpu::AddressSpace::Workgroup)
        continue;
      if (Value shrunk = shrinkThreadDims(
              rewriter, alloc->getParentOfType<gpu::LaunchOp>(), alloc))
        alloc = shrunk.getDefiningOp<memref::AllocOp>();
    }
    for (memref::AllocOp alloc : allocs) {
      MemRefType type = alloc.getType();
      if (!type.hasStaticShape()) {
        alloc.emitError("fuel-gpu-private-allocs: a buffer of dynamic size "
                        "inside a GPU kernel (it would be allocated by the "
                        "device's malloc)");
        return signalPassFailure();
      }
      for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
        if (isa<memref::DeallocOp>(user))
          rewriter.eraseOp(user);
      auto space =
          dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace());
      if (space && space.getValue() == gpu::AddressSpace::Workgroup) {
        BlockArgument buffer = workgroup.bufferFor(
            alloc->getParentOfType<gpu::LaunchOp>(), alloc);
        rewriter.replaceOp(alloc, buffer);
        continue;
      }
      MemRefType privateType = type;
      if (privateAddressSpace && !space)
        privateType = MemRefType::get(
            type.getShape(), type.getElementType(), type.getLayout(),
            gpu::AddressSpaceAttr::get(&getContext(),
                                       gpu::AddressSpace::Private));
      bool atStart = setPrivateAllocPoint(rewriter, alloc, hoisted);
      auto alloca = memref::AllocaOp::create(rewriter, alloc.getLoc(),
                                             privateType,
                                             alloc.getAlignmentAttr());
      if (atStart)
        hoisted[alloc->getParentOfType<gpu::LaunchOp>()] = alloca;
      if (privateType == type) {
        rewriter.replaceOp(alloc, alloca);
        continue;
      }
      // Its users see the default address space through a cast.
      rewriter.setInsertionPoint(alloc);
      Value cast = memref::MemorySpaceCastOp::create(rewriter, alloc.getLoc(),
                                                     type, alloca);
      rewriter.replaceOp(alloc, cast);
    }

    // Allocas already in kernels (lowerings make some) get the private
    // address space too.
    if (!privateAddressSpace)
      return;
    SmallVector<memref::AllocaOp> allocas;
    getOperation()->walk([&](memref::AllocaOp op) {
      if (op->getParentOfType<gpu::LaunchOp>() &&
          !op.getType().getMemorySpace())
        allocas.push_back(op);
    });
    for (memref::AllocaOp alloca : allocas) {
      MemRefType type = alloca.getType();
      auto privateType = MemRefType::get(
          type.getShape(), type.getElementType(), type.getLayout(),
          gpu::AddressSpaceAttr::get(&getContext(),
                                     gpu::AddressSpace::Private));
      bool atStart = alloca.getDynamicSizes().empty() &&
                     setPrivateAllocPoint(rewriter, alloca, hoisted);
      if (!atStart)
        rewriter.setInsertionPoint(alloca);
      auto moved = memref::AllocaOp::create(rewriter, alloca.getLoc(),
                                            privateType,
                                            alloca.getDynamicSizes(),
                                            alloca.getAlignmentAttr());
      if (atStart)
        hoisted[alloca->getParentOfType<gpu::LaunchOp>()] = moved;
      rewriter.setInsertionPoint(alloca);
      Value cast = memref::MemorySpaceCastOp::create(rewriter, alloca.getLoc(),
                                                     type, moved);
      rewriter.replaceOp(alloca, cast);
    }
  }
};
} // namespace
