//===- GpuSingleTripLoops.cpp - A thread's loops that run at most once ----===//
//
// A thread's scf.for that its bounds' integer ranges let run at most once
// becomes its body (exactly once) or an scf.if (once or not at all).
// Upstream folds only loops of constant bounds (scf.for's canonicalization,
// promoteIfSingleIteration); these have bounds the thread's id or a mask
// computes. As loops, LLVM's LICM takes every value of their body for
// loop-invariant and hoists their loads above the inner loops that come
// before their use, where they stay live.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Transforms/Passes.h"
#include "GpuMappedLoops.h"

#include "mlir/Analysis/DataFlow/ConstantPropagationAnalysis.h"
#include "mlir/Analysis/DataFlow/DeadCodeAnalysis.h"
#include "mlir/Analysis/DataFlow/IntegerRangeAnalysis.h"
#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::fuel {
#define GEN_PASS_DEF_FUELGPUSINGLETRIPLOOPS
#include "FuelFused/Transforms/Passes.h.inc"
} // namespace mlir::fuel

using namespace mlir;

/// The range of values that `solver` found `v` to take, if it found one.
static std::optional<ConstantIntRanges> rangeOf(DataFlowSolver &solver,
                                                Value v) {
  // (A constant's, whether or not the solver reached it.)
  if (std::optional<int64_t> c = getConstantIntValue(v)) {
    unsigned width = v.getType().isIndex()
                         ? IndexType::kInternalStorageBitWidth
                         : v.getType().getIntOrFloatBitWidth();
    return ConstantIntRanges::constant(APInt(width, *c, /*isSigned=*/true));
  }
  auto *lattice = solver.lookupState<dataflow::IntegerValueRangeLattice>(v);
  if (!lattice || lattice->getValue().isUninitialized())
    return std::nullopt;
  return lattice->getValue().getValue();
}

namespace {
/// How many times a loop runs, where its bounds' ranges tell.
enum class Trips { Unknown, AtMostOnce, Once };
} // namespace

/// How many times `loop` runs on any of the values that `solver` allows
/// its bounds: at most once where its lower bound's least value and its
/// step reach its upper bound's greatest; exactly once where, besides, its
/// lower bound's greatest value is below its upper bound's least.
static Trips tripsOf(DataFlowSolver &solver, scf::ForOp loop) {
  if (loop.getUnsignedCmp())
    return Trips::Unknown;
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  std::optional<ConstantIntRanges> lb = rangeOf(solver, loop.getLowerBound());
  std::optional<ConstantIntRanges> ub = rangeOf(solver, loop.getUpperBound());
  if (!step || *step <= 0 || !lb || !ub)
    return Trips::Unknown;
  // In a bit more than the bounds' width: the sum does not overflow.
  unsigned width = lb->smin().getBitWidth() + 2;
  APInt reach = lb->smin().sext(width) + APInt(width, *step);
  if (reach.slt(ub->smax().sext(width)))
    return Trips::Unknown;
  return lb->smax().sext(width).slt(ub->smin().sext(width))
             ? Trips::Once
             : Trips::AtMostOnce;
}

/// Rewrites the loops under `root` that run at most once (see the pass).
static void foldSingleTripLoops(RewriterBase &rewriter, Operation *root) {
  DataFlowSolver solver;
  solver.load<dataflow::DeadCodeAnalysis>();
  solver.load<dataflow::SparseConstantPropagation>();
  solver.load<dataflow::IntegerRangeAnalysis>();
  if (failed(solver.initializeAndRun(root)))
    return;
  SmallVector<std::pair<scf::ForOp, Trips>> loops;
  root->walk([&](scf::ForOp loop) {
    // A thread's loops: those of a block's body hold the thread loops
    // that fuel-gpu-map-forall maps, which it takes in scf.for loops alone.
    if (!fuel::isInsideForallMappedTo<gpu::GPUThreadMappingAttr>(loop))
      return;
    if (Trips trips = tripsOf(solver, loop); trips != Trips::Unknown)
      loops.push_back({loop, trips});
  });
  for (auto [loop, trips] : loops) {
    // The body, its one iteration's: the induction variable is the lower
    // bound, the iteration arguments the loop's initial values.
    SmallVector<Value> arguments{loop.getLowerBound()};
    llvm::append_range(arguments, loop.getInitArgs());
    Block *body = loop.getBody();
    if (trips == Trips::Once) {
      auto yield = cast<scf::YieldOp>(body->getTerminator());
      SmallVector<Value> results(yield.getOperands());
      rewriter.inlineBlockBefore(body, loop, arguments);
      rewriter.eraseOp(yield);
      rewriter.replaceOp(loop, results);
      continue;
    }
    // At most once: the body if the lower bound is below the upper (its
    // scf.yield yields the if's results), the initial values if not.
    Location loc = loop.getLoc();
    rewriter.setInsertionPoint(loop);
    Value runs =
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt,
                              loop.getLowerBound(), loop.getUpperBound());
    auto branch =
        scf::IfOp::create(rewriter, loc, loop.getResultTypes(), runs,
                          /*addThenBlock=*/true, /*addElseBlock=*/true);
    Block *then = branch.thenBlock();
    if (!then->empty())
      rewriter.eraseOp(&then->back());
    rewriter.mergeBlocks(body, then, arguments);
    Block *otherwise = branch.elseBlock();
    if (otherwise->empty()) {
      rewriter.setInsertionPointToEnd(otherwise);
      scf::YieldOp::create(rewriter, loc, loop.getInitArgs());
    }
    rewriter.replaceOp(loop, branch.getResults());
  }
}

namespace {
struct FuelGpuSingleTripLoopsPass
    : public fuel::impl::FuelGpuSingleTripLoopsBase<
          FuelGpuSingleTripLoopsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    foldSingleTripLoops(rewriter, getOperation());
  }
};
} // namespace
