//===- RowWise.cpp - The row-wise schedule --------------------------------===//
//
// For ops that read and write whole rows of their last dim (softmax, RMS
// and layer norm): the decomposition's last op is tiled one row at a time
// in an scf.forall over the leading dims, and its producers (the row
// statistics, the elementwise steps, the fills) are fused into it, so each
// row is computed in one iteration and nothing full-size is materialized.
// Inside the row, each elementwise op runs over it in vectors of
// `vectorWidth` lanes (an scf.for), and each reduction accumulates partial
// sums in one vector that is reduced once per row.
//
//===----------------------------------------------------------------------===//

#include "RowWise.h"
#include "ScheduleUtils.h"

#include "FuelFused/IR/FuelOps.h"
#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::fuel;

LogicalResult mlir::fuel::canScheduleRowWise(FusedOp op,
                                             const ScheduleOptions &options,
                                             std::string &why) {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (type.getRank() < 2) {
    why = "the row-wise schedule needs rows: a rank of at least 2";
    return failure();
  }
  // Any number of rows; the row length (every tensor's last dim) static.
  for (Type t : llvm::concat<Type>(op->getOperandTypes(),
                                   op->getResultTypes()))
    if (auto shaped = dyn_cast<ShapedType>(t);
        shaped && (!shaped.hasRank() ||
                   (shaped.getRank() > 0 &&
                    shaped.isDynamicDim(shaped.getRank() - 1)))) {
      why = "the row-wise schedule needs a static row length";
      return failure();
    }
  // reduce_max_to_backward is row-wise when g reduces x's rows alone.
  if (auto rm = ReduceMaxToBackwardView::match(op)) {
    ArrayRef<int64_t> x =
        cast<RankedTensorType>(rm->getX().getType()).getShape();
    ArrayRef<int64_t> g =
        cast<RankedTensorType>(rm->getG().getType()).getShape();
    if (g.back() != 1 || x.drop_back() != g.drop_back()) {
      why = "the row-wise schedule needs g to reduce x's last dim alone";
      return failure();
    }
  }
  int64_t row = type.getShape().back();
  if (row < options.vectorWidth) {
    why = "the row (" + std::to_string(row) + ") is shorter than a vector (" +
          std::to_string(options.vectorWidth) + ")";
    return failure();
  }
  return success();
}

/// When `width` does not divide `rowLength`, splits the loop `tiling` made
/// into whole steps and the last, partial one, and makes the whole steps'
/// slices static again (so that they vectorize; the partial step stays as
/// a linalg op on dynamic shapes and lowers to scalar loops).
static void peelPartialStep(RewriterBase &rewriter,
                            ArrayRef<LoopLikeOpInterface> loops,
                            int64_t rowLength, int64_t width) {
  if (rowLength % width == 0 || loops.size() != 1)
    return;
  auto loop = dyn_cast<scf::ForOp>(
      LoopLikeOpInterface(loops.front()).getOperation());
  scf::ForOp partial;
  if (!loop || failed(scf::peelForLoopAndSimplifyBounds(rewriter, loop,
                                                        partial)))
    return;
  MLIRContext *ctx = loop.getContext();
  RewritePatternSet patterns(ctx);
  affine::AffineMinOp::getCanonicalizationPatterns(patterns, ctx);
  tensor::ExtractSliceOp::getCanonicalizationPatterns(patterns, ctx);
  tensor::InsertSliceOp::getCanonicalizationPatterns(patterns, ctx);
  tensor::CastOp::getCanonicalizationPatterns(patterns, ctx);
  tensor::EmptyOp::getCanonicalizationPatterns(patterns, ctx);
  linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
  ctx->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(
      patterns);
  ctx->getLoadedDialect<tensor::TensorDialect>()->getCanonicalizationPatterns(
      patterns);
  applyInside(loop, std::move(patterns));

  // The partial step in one masked vector of `width` lanes (AVX-512 masks
  // its loads and stores; the lanes past the row compute what they compute
  // and are not stored): not scalar code, whose math functions are libm
  // calls.
  SmallVector<linalg::LinalgOp> rest;
  partial->walk([&](linalg::LinalgOp op) { rest.push_back(op); });
  for (linalg::LinalgOp op : rest) {
    SmallVector<int64_t> sizes = op.getStaticLoopRanges();
    if (sizes.empty() || !ShapedType::isDynamic(sizes.back()) ||
        llvm::any_of(ArrayRef<int64_t>(sizes).drop_back(),
                     ShapedType::isDynamic))
      continue;
    sizes.back() = width;
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::VectorizationResult> vectorized =
        linalg::vectorize(rewriter, op, sizes,
                          SmallVector<bool>(sizes.size(), false));
    if (succeeded(vectorized))
      rewriter.replaceOp(op, vectorized->replacements);
  }
  // The masks as operands of the transfers they mask: canonicalization
  // patterns rewrite transfers without keeping a vector.mask region around
  // them to one op.
  RewritePatternSet masks(ctx);
  vector::populateVectorMaskLoweringPatternsForSideEffectingOps(masks);
  SmallVector<Operation *> masked;
  partial->walk([&](vector::MaskOp op) { masked.push_back(op); });
  (void)applyOpPatternsGreedily(masked, std::move(masks));
}

/// Tiles `op` (inside a row) along its last loop by `width`: reductions as
/// partial vector sums, elementwise ops as a loop over the row; a last
/// partial step, when `width` does not divide the row, peeled off. Leaves
/// ops whose last loop is not a whole, static row as they are.
static void tileAlongRow(RewriterBase &rewriter, linalg::LinalgOp op,
                         int64_t rowLength, int64_t width) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges.empty() || ranges.back() != rowLength)
    return;
  unsigned last = ranges.size() - 1;
  SmallVector<OpFoldResult> sizes(ranges.size(), rewriter.getIndexAttr(0));
  sizes[last] = rewriter.getIndexAttr(width);
  SmallVector<unsigned> reductions;
  op.getReductionDims(reductions);
  rewriter.setInsertionPoint(op);
  if (!reductions.empty()) {
    if (reductions.size() != 1 || reductions.front() != last ||
        op.getNumDpsInits() != 1)
      return;
    FailureOr<scf::SCFTilingResult> tiled = scf::tileReductionUsingScf(
        rewriter, cast<PartialReductionOpInterface>(op.getOperation()),
        sizes);
    if (succeeded(tiled)) {
      rewriter.replaceOp(op, tiled->replacements);
      peelPartialStep(rewriter, tiled->loops, rowLength, width);
    }
    return;
  }
  scf::SCFTilingOptions options;
  options.setTileSizes(sizes);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (succeeded(tiled)) {
    rewriter.replaceOp(op, tiled->replacements);
    peelPartialStep(rewriter, tiled->loops, rowLength, width);
  }
}

/// Whether `op` runs over a whole row: its last loop is the row's.
static bool spansRow(linalg::LinalgOp op, int64_t rowLength) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  return !ranges.empty() && ranges.back() == rowLength;
}

/// Whether `op` computes a function of the math dialect (exp, tanh, ...)
/// per element: too costly to compute again in each op that reads it.
static bool computesMath(linalg::LinalgOp op) {
  return llvm::any_of(op.getBlock()->getOperations(), [](Operation &inner) {
    return isa<math::MathDialect>(inner.getDialect());
  });
}

void mlir::fuel::fuseRowElementwise(RewriterBase &rewriter, Operation *loop,
                                    int64_t rowLength, bool keepSharedMath) {
  SmallVector<Operation *> ops;
  loop->walk([&](linalg::GenericOp op) { ops.push_back(op); });
  RewritePatternSet patterns(loop->getContext());
  linalg::populateElementwiseOpsFusionPatterns(
      patterns, [&](OpOperand *operand) {
        auto producer = operand->get().getDefiningOp<linalg::LinalgOp>();
        auto consumer = dyn_cast<linalg::LinalgOp>(operand->getOwner());
        if (!producer || !consumer || !loop->isProperAncestor(producer) ||
            !spansRow(producer, rowLength) || !spansRow(consumer, rowLength))
          return false;
        return !keepSharedMath || producer->hasOneUse() ||
               !computesMath(producer);
      });
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  (void)applyOpPatternsGreedily(ops, std::move(patterns), config);
}

FailureOr<scf::ForallOp> mlir::fuel::tileRows(
    RewriterBase &rewriter, linalg::LinalgOp root,
    const llvm::SmallPtrSetImpl<Operation *> &decomposition,
    bool keepSharedMath) {
  SmallVector<int64_t> ranges = root.getStaticLoopRanges();
  int64_t rowLength = ranges.back();
  SmallVector<OpFoldResult> rowTile(ranges.size(), rewriter.getIndexAttr(1));
  rowTile.back() = rewriter.getIndexAttr(0);
  FailureOr<TiledRoot> tiled = tileAndFuseRoot(
      rewriter, cast<TilingInterface>(root.getOperation()), rowTile,
      scf::SCFTilingOptions::LoopType::ForallOp,
      [&](Operation *producer) { return decomposition.contains(producer); });
  if (failed(tiled))
    return failure();
  auto loop = cast<scf::ForallOp>(tiled->loop);

  // A producer fused for two consumers is computed twice: once is enough.
  DominanceInfo dominance;
  eliminateCommonSubExpressions(rewriter, dominance, loop);

  // Elementwise steps over the whole row fuse into the ops that read them
  // (softmax's subtract into its exp, and that into the sum and the divide:
  // the row is read three times, not five, and no row-sized temporary is
  // left). A row statistic is not fused into the elementwise op that reads
  // it: it would be computed once per element.
  fuseRowElementwise(rewriter, loop, rowLength, keepSharedMath);
  return loop;
}

/// The op computing the row that `loop` (one row per iteration) writes as
/// its result, when that is a linalg op with one result.
static linalg::GenericOp rowResultOp(scf::ForallOp loop) {
  scf::InParallelOp terminator = loop.getTerminator();
  auto yields = terminator.getYieldingOps();
  if (!llvm::hasSingleElement(yields))
    return nullptr;
  auto insert = dyn_cast<tensor::ParallelInsertSliceOp>(&*yields.begin());
  if (!insert)
    return nullptr;
  auto op = insert.getSource().getDefiningOp<linalg::GenericOp>();
  if (!op || op->getNumResults() != 1 || op.getNumDpsInits() != 1)
    return nullptr;
  return op;
}

/// When the row's last step reads an elementwise step computed by the math
/// dialect that another op of the row reads too (softmax's exp, read by the
/// sum and by the divide), computes that step once, into the result row,
/// and makes the last step update it in place: the row is then written
/// twice and its exponentials computed once, not twice.
static void computeSharedMathIntoResult(RewriterBase &rewriter,
                                        scf::ForallOp loop,
                                        int64_t rowLength) {
  linalg::GenericOp last = rowResultOp(loop);
  if (!last || !spansRow(last, rowLength))
    return;
  OpOperand *init = last.getDpsInitOperand(0);
  AffineMap initMap = last.getMatchingIndexingMap(init);
  // The result's row: a slice of the loop's output, or an empty tensor that
  // empty-tensor elimination makes one. Its copy must be valid at the step:
  // its operands are the loop's indices or come from outside the loop.
  Operation *row = init->get().getDefiningOp();
  auto validInLoop = [&](Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return arg.getOwner()->getParentOp() == loop.getOperation() ||
             !loop->isAncestor(arg.getOwner()->getParentOp());
    return !loop->isAncestor(v.getDefiningOp());
  };
  if (!isa_and_nonnull<tensor::EmptyOp, tensor::ExtractSliceOp>(row) ||
      last.payloadUsesValueFromOperand(init) ||
      !llvm::all_of(row->getOperands(), validInLoop))
    return;
  for (OpOperand *input : last.getDpsInputOperands()) {
    auto step = input->get().getDefiningOp<linalg::GenericOp>();
    if (!step || step->hasOneUse() || !computesMath(step) ||
        !spansRow(step, rowLength) || step->getNumResults() != 1 ||
        step.getNumLoops() != last.getNumLoops() ||
        !step.getMatchingIndexingMap(step.getDpsInitOperand(0))
             .isIdentity() ||
        last.getMatchingIndexingMap(input) != initMap ||
        !initMap.isIdentity() ||
        step->getResult(0).getType() != init->get().getType())
      continue;
    // The step writes into the result's slice of the loop's output...
    rewriter.setInsertionPoint(step);
    Value into = rewriter.clone(*row)->getResult(0);
    rewriter.modifyOpInPlace(
        step, [&] { step.getDpsInitOperand(0)->set(into); });
    // ...and the last step reads it where it writes.
    unsigned inputIndex = input->getOperandNumber();
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (OpOperand *other : last.getDpsInputOperands()) {
      if (other == input)
        continue;
      inputs.push_back(other->get());
      maps.push_back(last.getMatchingIndexingMap(other));
    }
    maps.push_back(initMap);
    rewriter.setInsertionPoint(last);
    auto inPlace = linalg::GenericOp::create(
        rewriter, last.getLoc(), last->getResultTypes(), inputs,
        ValueRange{step->getResult(0)}, maps, last.getIteratorTypesArray());
    Region &body = inPlace.getRegion();
    rewriter.inlineRegionBefore(last.getRegion(), body, body.end());
    Block *block = &body.front();
    BlockArgument stepArg = block->getArgument(inputIndex);
    rewriter.replaceAllUsesWith(stepArg, block->getArguments().back());
    block->eraseArgument(inputIndex);
    rewriter.replaceOp(last, inPlace->getResults());
    return;
  }
}

/// When a reduction over the row reads an elementwise step that is written
/// into the result row too (softmax's exponentials, once
/// computeSharedMathIntoResult has run), tiles the reduction in steps of
/// `step` with partial results and computes the step's slice inside the same
/// loop, which also writes it to the row: the row is read once for both, not
/// written by one loop and read back by the next. Returns whether it did.
static bool fuseStepIntoReduction(RewriterBase &rewriter,
                                  linalg::GenericOp reduction,
                                  int64_t rowLength, int64_t step) {
  SmallVector<unsigned> dims;
  reduction.getReductionDims(dims);
  unsigned last = reduction.getNumLoops() - 1;
  if (dims.size() != 1 || dims.front() != last ||
      reduction.getNumDpsInits() != 1 || !spansRow(reduction, rowLength))
    return false;
  linalg::GenericOp producer;
  for (OpOperand *input : reduction.getDpsInputOperands()) {
    auto generic = input->get().getDefiningOp<linalg::GenericOp>();
    if (generic && generic.getNumReductionLoops() == 0 &&
        generic->getNumResults() == 1 && spansRow(generic, rowLength) &&
        computesMath(generic) && !generic->hasOneUse() &&
        isa_and_nonnull<tensor::ExtractSliceOp, tensor::EmptyOp>(
            generic.getDpsInitOperand(0)->get().getDefiningOp()))
      producer = generic;
  }
  if (!producer)
    return false;
  SmallVector<OpFoldResult> sizes(reduction.getNumLoops(),
                                  rewriter.getIndexAttr(0));
  sizes[last] = rewriter.getIndexAttr(step);
  scf::SCFTileAndFuseOptions options;
  options.tilingOptions.setTileSizes(sizes)
      .setReductionTilingStrategy(
          ReductionTilingStrategy::PartialReductionOuterReduction)
      .setReductionDims({last});
  options.setFusionControlFn(
      [&](tensor::ExtractSliceOp, OpResult result, bool isDestination)
          -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        if (isDestination || result.getOwner() != producer.getOperation())
          return std::nullopt;
        return scf::SCFTileAndFuseOptions::ControlFnResult{
            /*yieldProducerReplacement=*/true};
      });
  rewriter.setInsertionPoint(reduction);
  FailureOr<scf::SCFTileAndFuseResult> fused =
      scf::tileConsumerAndFuseProducersUsingSCF(
          rewriter, cast<TilingInterface>(reduction.getOperation()), options);
  if (failed(fused))
    return false;
  for (auto [original, replacement] : fused->replacements)
    rewriter.replaceAllUsesWith(original, replacement);
  rewriter.eraseOp(reduction);
  if (producer->use_empty())
    rewriter.eraseOp(producer);
  peelPartialStep(rewriter, fused->loops, rowLength, step);
  return true;
}

/// Whether `map` reads the same element for every point of the row (the
/// last loop): a row statistic.
static bool isRowStatistic(AffineMap map, unsigned rowLoop) {
  return !map.isFunctionOfDim(rowLoop);
}

/// Divisions of each element of a row by a statistic of the row (the norms'
/// root mean square, softmax's sum) become one reciprocal per row and a
/// multiply per element: a divide is several times the cost of a multiply
/// in vectors. The results can differ from dividing by about one ulp.
/// Adds the reciprocals' ops to `decomposition`, so they are fused into the
/// row loop.
static void
divideByReciprocals(RewriterBase &rewriter,
                    llvm::SmallPtrSetImpl<Operation *> &decomposition,
                    int64_t rowLength) {
  SmallVector<linalg::GenericOp> candidates;
  for (Operation *op : decomposition)
    if (auto generic = dyn_cast<linalg::GenericOp>(op))
      if (generic.getNumReductionLoops() == 0 && spansRow(generic, rowLength))
        candidates.push_back(generic);
  for (linalg::GenericOp op : candidates) {
    unsigned rowLoop = op.getNumLoops() - 1;
    for (OpOperand *input : op.getDpsInputOperands()) {
      auto type = dyn_cast<RankedTensorType>(input->get().getType());
      if (!type || !isa<FloatType>(type.getElementType()) ||
          !isRowStatistic(op.getMatchingIndexingMap(input), rowLoop))
        continue;
      BlockArgument arg = op.getMatchingBlockArgument(input);
      if (arg.use_empty() || !llvm::all_of(arg.getUses(), [](OpOperand &use) {
            auto div = dyn_cast<arith::DivFOp>(use.getOwner());
            return div && use.getOperandNumber() == 1;
          }))
        continue;
      Location loc = op.getLoc();
      rewriter.setInsertionPoint(op);
      Value empty = tensor::EmptyOp::create(
          rewriter, loc, tensor::getMixedSizes(rewriter, loc, input->get()),
          type.getElementType());
      AffineMap identity = rewriter.getMultiDimIdentityMap(type.getRank());
      auto reciprocal = linalg::GenericOp::create(
          rewriter, loc, TypeRange{type}, ValueRange{input->get()},
          ValueRange{empty}, ArrayRef<AffineMap>{identity, identity},
          SmallVector<utils::IteratorType>(type.getRank(),
                                           utils::IteratorType::parallel),
          [&](OpBuilder &b, Location loc, ValueRange args) {
            Value one = arith::ConstantOp::create(
                b, loc, b.getFloatAttr(type.getElementType(), 1.0));
            Value inverse = arith::DivFOp::create(b, loc, one, args[0]);
            linalg::YieldOp::create(b, loc, inverse);
          });
      decomposition.insert(empty.getDefiningOp());
      decomposition.insert(reciprocal);
      rewriter.modifyOpInPlace(op,
                               [&] { input->set(reciprocal->getResult(0)); });
      for (OpOperand &use : llvm::make_early_inc_range(arg.getUses())) {
        auto div = cast<arith::DivFOp>(use.getOwner());
        rewriter.setInsertionPoint(div);
        rewriter.replaceOpWithNewOp<arith::MulFOp>(
            div, div.getLhs(), div.getRhs(), div.getFastmathAttr());
      }
    }
  }
}

/// Whether every use of `value` (a scalar in the body of an op of `ops`) is
/// an exponential, there or, through the op's result, in the bodies of the
/// ops of `ops` that read it.
static bool onlyExponentiated(Value value,
                              const llvm::SmallPtrSetImpl<Operation *> &ops) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (isa<math::ExpOp>(user))
      continue;
    auto generic = dyn_cast<linalg::GenericOp>(user->getParentOp());
    if (!isa<linalg::YieldOp>(user) || !generic)
      return false;
    for (OpOperand &read :
         generic->getResult(use.getOperandNumber()).getUses()) {
      auto reader = dyn_cast<linalg::GenericOp>(read.getOwner());
      if (!reader || !ops.contains(reader) || !reader.isDpsInput(&read) ||
          !llvm::all_of(reader.getMatchingBlockArgument(&read).getUsers(),
                        [](Operation *op) { return isa<math::ExpOp>(op); }))
        return false;
    }
  }
  return true;
}

/// A row maximum that is only subtracted from, the differences only
/// exponentiated (softmax's exp(x - max(x))), may take either zero when the
/// row's largest elements are -0 and +0: x - (-0) and x - (+0) are equal
/// for every x but -0, where they are +0 and -0, and exp maps both to 1.
/// So its `arith.maximumf` (the IEEE maximum: NaN propagating, -0 below
/// +0) gets `nsz`; NaNs still propagate. On x86 that is 3 vector
/// instructions per step (max, an unordered compare, a blend) where
/// ordering the zeros takes 6: a quarter of softmax's arithmetic on a row.
static void ignoreSignedZerosOfSubtractedMaxima(
    const llvm::SmallPtrSetImpl<Operation *> &ops) {
  for (Operation *op : ops) {
    auto reduction = dyn_cast<linalg::GenericOp>(op);
    if (!reduction || reduction.getNumReductionLoops() == 0 ||
        reduction->getNumResults() != 1 || reduction.getNumDpsInputs() != 1)
      continue;
    Block *body = reduction.getBody();
    auto max = dyn_cast<arith::MaximumFOp>(
        body->getTerminator()->getOperand(0).getDefiningOp());
    if (!max || max->getBlock() != body ||
        !llvm::is_contained(max->getOperands(),
                            reduction.getRegionOutputArgs()[0]))
      continue;
    // Every reader takes the maximum as an operand of subtractions only.
    bool onlySubtracted = true;
    for (OpOperand &use : reduction->getResult(0).getUses()) {
      auto reader = dyn_cast<linalg::GenericOp>(use.getOwner());
      if (!reader || !ops.contains(reader) ||
          !reader.isDpsInput(&use)) {
        onlySubtracted = false;
        break;
      }
      BlockArgument arg = reader.getMatchingBlockArgument(&use);
      onlySubtracted &= llvm::all_of(arg.getUsers(), [&](Operation *user) {
        auto sub = dyn_cast<arith::SubFOp>(user);
        return sub && sub.getRhs() == arg &&
               onlyExponentiated(sub.getResult(), ops);
      });
    }
    if (onlySubtracted)
      max.setFastmath(max.getFastmath() | arith::FastMathFlags::nsz);
  }
}

/// Whether `loop` computes a function of the math dialect.
static bool loopComputesMath(scf::ForOp loop) {
  return loop
      ->walk([](Operation *op) {
        return isa<math::MathDialect>(op->getDialect())
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// The row loops read their input from memory in the first pass over a row
/// (the maximum, the mean) and from cache in the next; the first has little
/// to compute and waits on memory, the one that computes the math functions
/// (softmax's exponentials) waits on arithmetic. So the latter asks for the
/// next row's input, one prefetch per cache line, and the next row's first
/// pass finds it in cache: the two overlap. Without math functions (the
/// norms, the backwards), the row's last pass asks: it reads from cache and
/// writes, while the memory would otherwise idle until the next row's first
/// pass.
static void prefetchNextRow(RewriterBase &rewriter, scf::ForallOp rows,
                            int64_t rowLength) {
  constexpr int64_t kCacheLine = 64;
  scf::ForOp heavy;
  SmallVector<scf::ForOp> loops(rows.getBody()->getOps<scf::ForOp>());
  for (scf::ForOp loop : loops)
    if (loopComputesMath(loop)) {
      heavy = loop;
      break;
    }
  // Without math, the row's last pass: it reads the row from cache.
  if (!heavy && loops.size() >= 2)
    heavy = loops.back();
  std::optional<int64_t> step =
      heavy ? getConstantIntValue(heavy.getStep()) : std::nullopt;
  std::optional<int64_t> upper =
      heavy ? getConstantIntValue(heavy.getUpperBound()) : std::nullopt;
  if (!step || upper != rowLength - rowLength % *step)
    return;

  // The inputs read a row at a time: tensors from outside the loop, indexed
  // by the row loop's indices and then along the row.
  SmallVector<Value> ivs(rows.getInductionVars());
  llvm::SetVector<Value> inputs;
  rows.getBody()->walk([&](vector::TransferReadOp read) {
    Value source = read.getBase();
    auto type = dyn_cast<RankedTensorType>(source.getType());
    if (!type || !type.hasStaticShape() ||
        rows->isAncestor(source.getParentBlock()->getParentOp()) ||
        type.getRank() != static_cast<int64_t>(ivs.size()) + 1 ||
        type.getShape().back() != rowLength ||
        !llvm::equal(read.getIndices().drop_back(), ivs))
      return;
    inputs.insert(source);
  });
  if (inputs.empty())
    return;

  Location loc = rows.getLoc();
  for (Value input : inputs) {
    auto type = cast<RankedTensorType>(input.getType());
    int64_t bytes = type.getElementTypeBitWidth() / 8;
    if (bytes == 0 || (*step * bytes) % kCacheLine != 0)
      continue;
    // The buffer, read-only, with any layout the input bufferizes to.
    rewriter.setInsertionPoint(rows);
    SmallVector<int64_t> strides(type.getRank(), ShapedType::kDynamic);
    auto layout = StridedLayoutAttr::get(rewriter.getContext(),
                                         ShapedType::kDynamic, strides);
    auto memrefType = MemRefType::get(type.getShape(), type.getElementType(),
                                      layout);
    Value buffer = bufferization::ToBufferOp::create(
        rewriter, loc, memrefType, input, /*read_only=*/true);
    // The next row's index (the last row asks for itself again).
    rewriter.setInsertionPoint(heavy);
    SmallVector<Value> index(ivs.begin(), ivs.end());
    int64_t lastRow = type.getShape()[type.getRank() - 2] - 1;
    // (Further ahead was slower for rows of 4 KiB and no faster for rows of
    // 128 KiB.)
    Value next = arith::AddIOp::create(
        rewriter, loc, index.back(),
        arith::ConstantIndexOp::create(rewriter, loc, 1));
    index.back() = arith::MinSIOp::create(
        rewriter, loc, next,
        arith::ConstantIndexOp::create(rewriter, loc, lastRow));
    rewriter.setInsertionPointToStart(heavy.getBody());
    for (int64_t offset = 0; offset < *step * bytes; offset += kCacheLine) {
      Value column = heavy.getInductionVar();
      if (offset != 0)
        column = arith::AddIOp::create(
            rewriter, loc, column,
            arith::ConstantIndexOp::create(rewriter, loc, offset / bytes));
      SmallVector<Value> at(index);
      at.push_back(column);
      memref::PrefetchOp::create(rewriter, loc, buffer, at, /*isWrite=*/false,
                                 /*localityHint=*/2, /*isDataCache=*/true);
    }
  }
}

LogicalResult mlir::fuel::scheduleRowWise(
    RewriterBase &rewriter, linalg::LinalgOp root,
    const llvm::SmallPtrSetImpl<Operation *> &decomposition,
    const ScheduleOptions &options) {
  if (root.getNumReductionLoops() != 0 || root.getNumLoops() < 2 ||
      root->getNumResults() != 1)
    return failure();
  SmallVector<int64_t> ranges = root.getStaticLoopRanges();
  int64_t rowLength = ranges.back();
  if (ShapedType::isDynamic(rowLength))
    return failure();

  // 1. One row per iteration, the producers fused in, the elementwise steps
  // fused into the ops that read them; with `reciprocal`, a reciprocal per
  // row instead of a divide per element; a maximum that is only subtracted
  // from, without ordering -0 below +0.
  llvm::SmallPtrSet<Operation *, 16> ops(decomposition.begin(),
                                         decomposition.end());
  if (options.reciprocal)
    divideByReciprocals(rewriter, ops, rowLength);
  ignoreSignedZerosOfSubtractedMaxima(ops);
  FailureOr<scf::ForallOp> rows =
      tileRows(rewriter, root, ops, /*keepSharedMath=*/true);
  if (failed(rows))
    return failure();
  computeSharedMathIntoResult(rewriter, *rows, rowLength);
  Operation *loop = *rows;

  // 2. Each op over the row in vectors.
  SmallVector<linalg::LinalgOp> inRow;
  loop->walk([&](linalg::LinalgOp op) { inRow.push_back(op); });
  // Reductions in steps of `unroll` vectors: as many independent partial
  // results, so the combiners (a NaN-propagating max takes several
  // instructions) do not wait on each other. Elementwise steps in one
  // vector: nothing carries from one to the next.
  int64_t reductionStep = options.vectorWidth * options.unroll;
  if (rowLength % reductionStep != 0 &&
      (rowLength % options.vectorWidth == 0 || rowLength < reductionStep))
    reductionStep = options.vectorWidth;
  SmallVector<linalg::GenericOp> reductions;
  for (linalg::LinalgOp op : inRow)
    if (op.getNumReductionLoops() != 0)
      if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation()))
        reductions.push_back(generic);
  // A reduction that computes exp as it goes (softmax's sum) holds the
  // exponential's constants and intermediates besides its partial sums:
  // two vectors of partial sums per step, not `unroll` (with four, AVX2's
  // 16 registers spill; two measured about 7% faster than four and than
  // one on softmax over rows of 32768, bench/row_ops.py's shape).
  int64_t fusedStep = rowLength % (options.vectorWidth * 2) == 0
                          ? options.vectorWidth * 2
                          : reductionStep;
  bool fusedAny = false;
  for (linalg::GenericOp op : reductions)
    fusedAny |= fuseStepIntoReduction(rewriter, op, rowLength, fusedStep);
  if (fusedAny) {
    inRow.clear();
    loop->walk([&](linalg::LinalgOp op) { inRow.push_back(op); });
  }
  for (linalg::LinalgOp op : inRow)
    tileAlongRow(rewriter, op, rowLength,
                 op.getNumReductionLoops() ? reductionStep
                                           : options.vectorWidth);

  // 3. Vectorize everything in the loop that has static shapes now.
  vectorizeInside(rewriter, loop, /*contractions=*/false);

  // 4. While computing, ask for the next row.
  prefetchNextRow(rewriter, *rows, rowLength);
  return success();
}
