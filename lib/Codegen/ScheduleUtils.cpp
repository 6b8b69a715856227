//===- ScheduleUtils.cpp - Steps the schedules share ----------------------===//

#include "ScheduleUtils.h"

#include "FuelFused/Decompose/Decompose.h"
#include "FuelFused/IR/FuelOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::fuel;

void mlir::fuel::vectorizeInside(RewriterBase &rewriter, Operation *loop,
                                  bool contractions) {
  SmallVector<linalg::LinalgOp> toVectorize;
  loop->walk([&](linalg::LinalgOp op) { toVectorize.push_back(op); });
  for (linalg::LinalgOp op : toVectorize) {
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::VectorizationResult> vectorized =
        linalg::vectorize(rewriter, op);
    if (succeeded(vectorized))
      rewriter.replaceOp(op, vectorized->replacements);
  }
  MLIRContext *ctx = loop->getContext();
  RewritePatternSet patterns(ctx);
  vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
  if (contractions)
    vector::populateVectorReductionToContractPatterns(patterns);
  vector::populateSinkVectorOpsPatterns(patterns);
  vector::TransferReadOp::getCanonicalizationPatterns(patterns, ctx);
  vector::TransferWriteOp::getCanonicalizationPatterns(patterns, ctx);
  tensor::populateFoldTensorSubsetIntoVectorTransferPatterns(patterns);
  applyInside(loop, std::move(patterns));
}

namespace {
/// Whether `op` reads or writes the whole of its tensor from index 0, the
/// vector's shape the tensor's, unmasked and in bounds.
bool isWholeTensorTransfer(VectorTransferOpInterface op) {
  auto tensor = dyn_cast<RankedTensorType>(op.getBase().getType());
  VectorType vector = op.getVectorType();
  return tensor && !op.getMask() && tensor.getShape() == vector.getShape() &&
         op.getPermutationMap().isIdentity() &&
         llvm::all_of(op.getIndices(),
                      [](Value v) { return isZeroInteger(v); }) &&
         llvm::all_of(op.getInBoundsValues(), [](bool b) { return b; });
}

/// transfer_read(collapse_shape(x)) -> shape_cast(transfer_read(x)).
struct ReadThroughCollapse : OpRewritePattern<vector::TransferReadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::TransferReadOp op,
                                PatternRewriter &rewriter) const override {
    auto collapse = op.getBase().getDefiningOp<tensor::CollapseShapeOp>();
    if (!collapse || !isWholeTensorTransfer(op))
      return failure();
    RankedTensorType source = collapse.getSrcType();
    auto type = VectorType::get(source.getShape(), source.getElementType());
    Value zero = arith::ConstantIndexOp::create(rewriter, op.getLoc(), 0);
    SmallVector<Value> indices(source.getRank(), zero);
    SmallVector<bool> inBounds(source.getRank(), true);
    Value read = vector::TransferReadOp::create(
        rewriter, op.getLoc(), type, collapse.getSrc(), indices,
        op.getPadding(), inBounds);
    rewriter.replaceOpWithNewOp<vector::ShapeCastOp>(op, op.getVectorType(),
                                                     read);
    return success();
  }
};

/// expand_shape(transfer_write(v, d)) ->
/// transfer_write(shape_cast(v), expand_shape(d)).
struct WriteThroughExpand : OpRewritePattern<tensor::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExpandShapeOp op,
                                PatternRewriter &rewriter) const override {
    auto write = op.getSrc().getDefiningOp<vector::TransferWriteOp>();
    if (!write || !write->hasOneUse() || !isWholeTensorTransfer(write))
      return failure();
    RankedTensorType result = op.getResultType();
    Location loc = op.getLoc();
    Value dest = tensor::ExpandShapeOp::create(
        rewriter, loc, result, write.getBase(), op.getReassociationIndices(),
        op.getMixedOutputShape());
    Value vector = vector::ShapeCastOp::create(
        rewriter, loc,
        VectorType::get(result.getShape(), result.getElementType()),
        write.getVector());
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    SmallVector<Value> indices(result.getRank(), zero);
    SmallVector<bool> inBounds(result.getRank(), true);
    rewriter.replaceOpWithNewOp<vector::TransferWriteOp>(op, vector, dest,
                                                         indices, inBounds);
    return success();
  }
};
} // namespace

void mlir::fuel::populateFoldReshapesIntoTransfersPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ReadThroughCollapse, WriteThroughExpand>(
      patterns.getContext());
}

void mlir::fuel::populateSplitWideTransfersPatterns(
    RewritePatternSet &patterns, int64_t maxBytes) {
  auto pieceOf =
      [maxBytes](Operation *op) -> std::optional<SmallVector<int64_t>> {
    auto transfer = dyn_cast<VectorTransferOpInterface>(op);
    if (!transfer)
      return std::nullopt;
    VectorType type = transfer.getVectorType();
    int64_t bits = type.getElementTypeBitWidth();
    if (type.getRank() == 0 || type.isScalable() || bits % 8 != 0)
      return std::nullopt;
    int64_t most = std::max<int64_t>(1, maxBytes / (bits / 8));
    int64_t last = type.getShape().back();
    if (last <= most || last % most != 0)
      return std::nullopt;
    SmallVector<int64_t> piece(type.getRank(), 1);
    piece.back() = most;
    return piece;
  };
  vector::populateVectorUnrollPatterns(
      patterns,
      vector::UnrollVectorOptions()
          .setNativeShapeFn(pieceOf)
          .setFilterConstraint([pieceOf](Operation *op) {
            return success(pieceOf(op).has_value());
          }));
}

void mlir::fuel::applyInside(Operation *loop, RewritePatternSet &&patterns) {
  SmallVector<Operation *> inside;
  loop->walk([&](Operation *op) {
    if (op != loop)
      inside.push_back(op);
  });
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  (void)applyOpPatternsGreedily(inside, std::move(patterns), config);
}

/// Erases the ops tile-and-fuse fused into a loop (`fused`, untiled) once
/// nothing uses them any more (the slices it fused through, left unused,
/// go first), users first.
static void eraseFusedProducers(RewriterBase &rewriter,
                                const llvm::SetVector<Operation *> &fused) {
  SmallVector<Operation *> pending(fused.begin(), fused.end());
  bool erased = true;
  while (erased) {
    erased = false;
    for (Operation *&op : pending) {
      if (!op)
        continue;
      // Tile-and-fuse leaves the slices it fused through in place, unused.
      for (Operation *user : llvm::make_early_inc_range(op->getUsers()))
        if (isa<tensor::ExtractSliceOp>(user) && user->use_empty())
          rewriter.eraseOp(user);
      if (!op->use_empty())
        continue;
      rewriter.eraseOp(op);
      op = nullptr;
      erased = true;
    }
  }
}

FailureOr<TiledRoot>
mlir::fuel::tileAndFuseRoot(RewriterBase &rewriter, TilingInterface root,
                            ArrayRef<OpFoldResult> tileSizes,
                            scf::SCFTilingOptions::LoopType loopType,
                            function_ref<bool(Operation *)> fuse,
                            ArrayRef<int64_t> interchange) {
  scf::SCFTileAndFuseOptions options;
  options.tilingOptions.setTileSizes(tileSizes).setLoopType(loopType);
  if (!interchange.empty())
    options.tilingOptions.setInterchange(interchange);
  options.setFusionControlFn(
      [&](tensor::ExtractSliceOp, OpResult producer, bool)
          -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        if (!fuse(producer.getOwner()))
          return std::nullopt;
        return scf::SCFTileAndFuseOptions::ControlFnResult{};
      });
  rewriter.setInsertionPoint(root);
  FailureOr<scf::SCFTileAndFuseResult> fused =
      scf::tileConsumerAndFuseProducersUsingSCF(rewriter, root, options);
  if (failed(fused) || fused->loops.empty())
    return failure();
  Value result = root->getResult(0);
  rewriter.replaceAllUsesWith(result, fused->replacements.lookup(result));
  rewriter.eraseOp(root);
  eraseFusedProducers(rewriter, fused->fusedProducers);
  return TiledRoot{fused->loops.front().getOperation(),
                   cast<TilingInterface>(fused->tiledAndFusedOps.front())};
}

void mlir::fuel::tileReduction(RewriterBase &rewriter, linalg::LinalgOp op,
                               int64_t step) {
  SmallVector<unsigned> reductions;
  op.getReductionDims(reductions);
  if (reductions.size() != 1)
    return;
  SmallVector<OpFoldResult> sizes(op.getNumLoops(), rewriter.getIndexAttr(0));
  sizes[reductions.front()] = rewriter.getIndexAttr(step);
  scf::SCFTilingOptions options;
  options.setTileSizes(sizes);
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (succeeded(tiled))
    rewriter.replaceOp(op, tiled->replacements);
}

void mlir::fuel::privatizeEmptySlices(RewriterBase &rewriter,
                                      Operation *loop) {
  // Outer slices first: a slice of a slice of an empty is then a slice of
  // an empty too.
  SmallVector<tensor::ExtractSliceOp> slices;
  loop->walk<WalkOrder::PreOrder>(
      [&](tensor::ExtractSliceOp slice) { slices.push_back(slice); });
  for (tensor::ExtractSliceOp slice : slices) {
    if (!slice.getSource().getDefiningOp<tensor::EmptyOp>() ||
        !slice.getType().hasStaticShape())
      continue;
    rewriter.setInsertionPoint(slice);
    rewriter.replaceOpWithNewOp<tensor::EmptyOp>(
        slice, slice.getType().getShape(), slice.getType().getElementType());
  }
}

int64_t mlir::fuel::dividingTile(int64_t size, int64_t most, int64_t unit) {
  for (int64_t t = most - most % unit; t >= unit; t -= unit)
    if (size % t == 0)
      return t;
  return 0;
}

int64_t mlir::fuel::tileOf(int64_t size, int64_t most, int64_t unit) {
  for (int64_t t = most; t >= unit; t /= 2)
    if (size % t == 0 && t % unit == 0)
      return t;
  return 0;
}

FailureOr<Decomposition> mlir::fuel::decomposeInPlace(RewriterBase &rewriter,
                                                      FusedOp op,
                                                      std::string &why) {
  rewriter.setInsertionPoint(op);
  Operation *prev = op->getPrevNode();
  FailureOr<SmallVector<Value>> values = decomposeFusedOp(rewriter, op, why);
  if (failed(values))
    return failure();
  Decomposition result;
  result.values = *values;
  // The decomposition: what was built between `prev` and `op`.
  for (Operation *built = prev ? prev->getNextNode() : &op->getBlock()->front();
       built != op.getOperation(); built = built->getNextNode())
    result.ops.insert(built);
  rewriter.replaceOp(op, *values);
  return result;
}

Value mlir::fuel::padWithZeros(RewriterBase &rewriter, Location loc,
                               Value x, ArrayRef<int64_t> shape) {
  if (cast<RankedTensorType>(x.getType()).getShape() == shape)
    return x;
  return padWithZeros(rewriter, loc, x,
                      getAsIndexOpFoldResult(rewriter.getContext(), shape));
}

Value mlir::fuel::padWithZeros(RewriterBase &rewriter, Location loc,
                               Value x, ArrayRef<OpFoldResult> shape) {
  Type elt = cast<RankedTensorType>(x.getType()).getElementType();
  Value empty = tensor::EmptyOp::create(rewriter, loc, shape, elt);
  Value zero =
      arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(elt));
  Value zeros =
      linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);
  SmallVector<OpFoldResult> offsets(shape.size(), rewriter.getIndexAttr(0)),
      strides(shape.size(), rewriter.getIndexAttr(1));
  return tensor::InsertSliceOp::create(
      rewriter, loc, x, zeros, offsets,
      tensor::getMixedSizes(rewriter, loc, x), strides);
}

Value mlir::fuel::copyWidened(OpBuilder &b, Location loc, Value in,
                              AffineMap inMap, ArrayRef<OpFoldResult> shape) {
  Type f32 = b.getF32Type();
  Value init = tensor::EmptyOp::create(b, loc, shape, f32);
  unsigned rank = shape.size();
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, init.getType(), in, init,
             SmallVector<AffineMap>{inMap,
                                    b.getMultiDimIdentityMap(rank)},
             iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value v = args[0];
               if (v.getType() != f32)
                 v = arith::ExtFOp::create(nb, nl, f32, v);
               linalg::YieldOp::create(nb, nl, v);
             })
      .getResult(0);
}

SmallVector<Value> mlir::fuel::transposeVectors(OpBuilder &b, Location loc,
                                                SmallVector<Value> v) {
  int64_t n = static_cast<int64_t>(v.size());
  for (int64_t s = n / 2; s >= 1; s /= 2) {
    SmallVector<int64_t> low, high;
    for (int64_t l = 0; l < n; ++l) {
      low.push_back(l & s ? n + l - s : l);
      high.push_back(l & s ? n + l : l + s);
    }
    for (int64_t r = 0; r < n; ++r) {
      if (r & s)
        continue;
      Value x = v[r], y = v[r + s];
      v[r] = vector::ShuffleOp::create(b, loc, x, y, low);
      v[r + s] = vector::ShuffleOp::create(b, loc, x, y, high);
    }
  }
  return v;
}

Value mlir::fuel::carriedLoop(
    OpBuilder &b, Location loc, int64_t lb, int64_t ub, int64_t step,
    Value init, function_ref<Value(OpBuilder &, Value, Value)> body) {
  return carriedLoop(b, loc, lb, arith::ConstantIndexOp::create(b, loc, ub),
                     step, init, body);
}

Value mlir::fuel::carriedLoop(
    OpBuilder &b, Location loc, int64_t lb, Value ub, int64_t step,
    Value init, function_ref<Value(OpBuilder &, Value, Value)> body) {
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  return scf::ForOp::create(
             b, loc, index(lb), ub, index(step), init,
             [&](OpBuilder &nb, Location, Value iv, ValueRange args) {
               scf::YieldOp::create(nb, loc, body(nb, iv, args[0]));
             })
      .getResult(0);
}

RegisterTile mlir::fuel::registerTile(const ScheduleOptions &options) {
  int64_t lanes = std::max<int64_t>(options.vectorRegisterBits / 32, 1);
  int64_t rows = std::clamp<int64_t>(options.vectorRegisters / 4, 1, 8);
  int64_t m =
      static_cast<int64_t>(llvm::bit_floor(static_cast<uint64_t>(rows)));
  return {m, 2 * lanes, m >= 8 ? 64 : 128};
}
