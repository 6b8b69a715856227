//===- Contraction.cpp - The contraction schedule -------------------------===//
//
// For ops whose decomposition is a contraction and elementwise ops around it
// (fused_linear: a matmul and the bias add). The last op is tiled into
// cache tiles of the output (an scf.forall over them, the contraction and
// its fill fused in), each cache tile into register tiles (`regM` x
// `regN`), and the contraction of a register tile over the reduction dim in
// steps of `regK`: the accumulator stays in vector registers across the
// reduction loop, and the contraction becomes outer products
// (`vector.contract` lowered by convert-vector-to-llvm). A reduction longer
// than `kTileK` runs in short blocks of it (16 or 8 of b's rows) over cache
// tiles as wide as b's rows allow (up to kWideTileN columns): each block
// runs every register tile of the cache tile, which accumulate into the
// output tile from block to block, and b is read a few whole rows at a
// time. Sizes that are not multiples of the register tile's are padded
// with zeros first (padContraction). With enough rows, each cache tile
// copies its block of the right operand into contiguous panels of a
// register tile's columns first (packRightOperand). The register tile is
// sized to the target's vector registers (registerTile); an a of 1 to 4 rows
// takes narrower ones (contractionTile). Dynamic rows are told apart at
// run time: 1, 2 to 4 (run as static rows) and 5 to 16 (b read in place)
// run as ops of their own (splitFewRows). f16 and bf16 operands are
// widened to f32 in registers, step by step of the reduction (block by
// block, as each register tile reads them); the accumulator is f32.
//
//===----------------------------------------------------------------------===//

#include "Contraction.h"
#include "RowSplit.h"
#include "ScheduleUtils.h"

#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "llvm/ADT/MapVector.h"

using namespace mlir;
using namespace mlir::fuel;

namespace {
/// Steps of the reduction per iteration of a register tile (its rows and
/// columns: registerTile, from the target's registers).
constexpr int64_t kRegK = 16;
/// The cache tile of the output's columns, at most (one scf.forall
/// iteration), where the reduction runs whole.
constexpr int64_t kTileN = 256;
/// The longest reduction that runs whole; longer ones run in blocks.
constexpr int64_t kTileK = 256;
/// The cache tile's columns, at most, where the reduction runs in blocks:
/// each block reads whole rows of b (16 KiB of f32) rather than 1 KiB
/// pieces 16 KiB apart (cache tiles of 256 columns by blocks of 256 rows:
/// [16, 4096] x [4096, 4096] ran 1.9x slower, [1024, 4096] x [4096, 4096]
/// 1.15x).
constexpr int64_t kWideTileN = 4096;
/// The reduction's blocks: 16 rows of b when b is packed, 8 when its rows
/// are read in place (16 rows in place ran 1.05-1.3x slower for 4 to 16
/// rows of a).
constexpr int64_t kPackedBlockK = 16;
constexpr int64_t kBlockK = 8;
/// The fewest rows (M and the dims before it) for which the right operand
/// is packed (packRightOperand).
constexpr int64_t kPackRows = 32;
/// M up to which the register tiles are narrower (contractionTile).
constexpr int64_t kFewRows = 4;
/// Dynamic rows up to which b is read in place (splitContractionRows's
/// third branch). Unpacked, [M, 4096] x [4096, 4096] with M dynamic ran
/// 1.07-1.3x faster for 5 to 16 rows, as fast for 24, and 1.1x slower for
/// 31: the rows' dynamic tiles cost more than static ones, so packing pays
/// from fewer rows than kPackRows.
constexpr int64_t kUnpackedRows = 16;
} // namespace

LogicalResult mlir::fuel::canScheduleContraction(
    FusedOp op, const ScheduleOptions &options, std::string &why) {
  for (Type t : llvm::concat<Type>(op->getOperandTypes(),
                                   op->getResultTypes())) {
    Type elt = cast<RankedTensorType>(t).getElementType();
    if (!elt.isF32() && !elt.isF16() && !elt.isBF16()) {
      why = "the contraction schedule handles f32, f16 and bf16";
      return failure();
    }
  }
  // fused_linear: a[..., M, K] @ b[K, N]; sizes that are not multiples of
  // the register tile's are padded (padContraction), empty ones are not.
  // Rows (M and the dims before it) may be dynamic.
  FusedLinearView linear(op);
  auto a = cast<RankedTensorType>(linear.getA().getType());
  auto b = cast<RankedTensorType>(linear.getB().getType());
  if (a.isDynamicDim(a.getRank() - 1) || !b.hasStaticShape()) {
    why = "the contraction schedule needs static K and N";
    return failure();
  }
  if (llvm::is_contained(a.getShape(), 0) || b.getNumElements() == 0) {
    why = "the contraction schedule needs operands that are not empty";
    return failure();
  }
  return success();
}

/// The register tile of a fused_linear whose M (a's dim before K) is `m`
/// (dynamic: unknown): the target's (registerTile), but with M of 1 to
/// kFewRows, one row of four vectors for M = 1 and two rows of four
/// vectors above: fewer rows of zeros computed, and more of b's columns
/// per load of the accumulators (with AVX2, [1, 4096] x [4096, 4096] ran
/// 1.8x and [2, 4096] x [4096, 4096] 1.6x faster than on its 4 x 16
/// tiles). 4 or 8 accumulators and 4 vectors of b: for targets of 16
/// registers or more.
static RegisterTile contractionTile(const ScheduleOptions &options,
                                    int64_t m) {
  RegisterTile tile = registerTile(options);
  if (ShapedType::isDynamic(m) || m > kFewRows ||
      options.vectorRegisters < 16)
    return tile;
  int64_t lanes = tile.n / 2;
  tile.m = m == 1 ? 1 : 2;
  tile.n = 4 * lanes;
  return tile;
}

/// `size` padded to a multiple of `unit`, and further to a multiple of
/// `wide` when it is larger than `most` and no tile of at least `least`
/// divides it (M = 104 has only tiles of 8 rows: one register tile per
/// cache tile, which reuses nothing).
static int64_t paddedSize(int64_t size, int64_t unit, int64_t most,
                          int64_t least, int64_t wide) {
  int64_t padded = llvm::alignTo(size, unit);
  if (padded > most && dividingTile(padded, most, unit) < least)
    padded = llvm::alignTo(size, wide);
  return padded;
}

/// padContraction for an `a` with dynamic rows (any dim but K dynamic):
/// a[..., M, K] is padded with zero rows to a multiple of regM and viewed
/// as [..., M' / regM, regM, K], so that the schedule's tiles are regM
/// static rows each (the leading dims are tiled by one); K and N are padded
/// as for static shapes. The result [..., M' / regM, regM, N] is viewed as
/// [..., M', N] and sliced to [..., M, N]. (The views split or merge one
/// dynamic dim with a static one: upstream's memref lowering takes no
/// more.)
static FusedOp padDynamicRows(RewriterBase &rewriter, FusedOp op, int64_t pk,
                              int64_t pn, int64_t regM) {
  FusedLinearView linear(op);
  Value a = linear.getA();
  auto aType = cast<RankedTensorType>(a.getType());
  auto y = cast<RankedTensorType>(op->getResult(0).getType());
  int64_t rank = aType.getRank(), n = y.getShape().back();
  Type elt = aType.getElementType();
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto one = rewriter.getIndexAttr(1), zero = rewriter.getIndexAttr(0);
  Value m = tensor::DimOp::create(rewriter, loc, a, rank - 2);
  Value tiles = arith::CeilDivUIOp::create(
      rewriter, loc, m, arith::ConstantIndexOp::create(rewriter, loc, regM));
  Value rows = arith::MulIOp::create(
      rewriter, loc, tiles,
      arith::ConstantIndexOp::create(rewriter, loc, regM));
  // Zeros [..., M', K'] with a inserted, viewed as [..., M' / 8, 8, K'].
  SmallVector<OpFoldResult> lead;
  for (int64_t d = 0; d + 2 < rank; ++d)
    lead.push_back(tensor::getMixedSize(rewriter, loc, a, d));
  SmallVector<OpFoldResult> paddedShape(lead);
  paddedShape.append({rows, rewriter.getIndexAttr(pk)});
  SmallVector<OpFoldResult> zerosAt(rank, zero), ones(rank, one);
  Value aPadded = padWithZeros(rewriter, loc, a, paddedShape);
  SmallVector<ReassociationIndices> split;
  for (int64_t d = 0; d + 2 < rank; ++d)
    split.push_back({d});
  split.push_back({rank - 2, rank - 1});
  split.push_back({rank});
  SmallVector<OpFoldResult> tiledShape(lead);
  tiledShape.append(
      {tiles, rewriter.getIndexAttr(regM), rewriter.getIndexAttr(pk)});
  SmallVector<int64_t> tiledStatic(aType.getShape().drop_back(2));
  tiledStatic.append({ShapedType::kDynamic, regM, pk});
  Value aTiles = tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get(tiledStatic, elt), aPadded, split,
      tiledShape);
  SmallVector<Value> operands(op->getOperands());
  operands[FusedLinearView::A] = aTiles;
  operands[FusedLinearView::B] =
      padWithZeros(rewriter, loc, linear.getB(), {pk, pn});
  operands[FusedLinearView::Bias] =
      padWithZeros(rewriter, loc, linear.getBias(), {pn});
  auto tiled = cast<FusedOp>(rewriter.clone(*op));
  tiled->setOperands(operands);
  SmallVector<int64_t> yTiled(tiledStatic);
  yTiled.back() = pn;
  tiled->getResult(0).setType(
      RankedTensorType::get(yTiled, y.getElementType()));
  // Back to [..., M', N'], then [..., M, N].
  Value yRows = tensor::CollapseShapeOp::create(rewriter, loc,
                                                tiled->getResult(0), split);
  SmallVector<OpFoldResult> ySizes(lead);
  ySizes.append({m, rewriter.getIndexAttr(n)});
  Value result = tensor::ExtractSliceOp::create(rewriter, loc, yRows, zerosAt,
                                                ySizes, ones);
  if (result.getType() != y)
    result = tensor::CastOp::create(rewriter, loc, y, result);
  rewriter.replaceOp(op, result);
  return tiled;
}

SmallVector<RowBranch>
mlir::fuel::splitContractionRows(RewriterBase &rewriter, FusedOp op) {
  return splitFewRows(rewriter, op, FusedLinearView::A, kFewRows,
                      kUnpackedRows);
}

/// A fused_linear whose a has dims before M as the same op on a viewed as
/// [rows, K], its result viewed back (viewRowsBack); `op` itself for a of
/// rank 2. The rows are then tiled as one dim: a batch of sequences of one
/// row each ([16, 1, 4096]) is 16 rows for the register tiles and b's
/// blocks, not 16 cache tiles that each read all of b.
static FusedOp collapseRows(RewriterBase &rewriter, FusedOp op) {
  FusedLinearView linear(op);
  Value a = linear.getA();
  auto aType = cast<RankedTensorType>(a.getType());
  auto y = cast<RankedTensorType>(op->getResult(0).getType());
  int64_t rank = aType.getRank();
  if (rank <= 2)
    return op;
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value aRows =
      tensor::CollapseShapeOp::create(rewriter, loc, a, rowGroups(rank));
  auto collapsed = cast<FusedOp>(rewriter.clone(*op));
  collapsed->setOperand(FusedLinearView::A, aRows);
  int64_t rows = cast<RankedTensorType>(aRows.getType()).getShape()[0];
  collapsed->getResult(0).setType(
      y.clone(ArrayRef<int64_t>{rows, y.getShape().back()}));
  rewriter.replaceOp(op, viewRowsBack(rewriter, loc, collapsed->getResult(0),
                                      a, y));
  return collapsed;
}

FusedOp mlir::fuel::padContraction(RewriterBase &rewriter, FusedOp op,
                                   const ScheduleOptions &options) {
  op = collapseRows(rewriter, op);
  FusedLinearView linear(op);
  auto a = cast<RankedTensorType>(linear.getA().getType());
  auto b = cast<RankedTensorType>(linear.getB().getType());
  auto y = cast<RankedTensorType>(op->getResult(0).getType());
  int64_t rank = a.getRank();
  auto [regM, regN, cacheM] = contractionTile(
      options, a.hasStaticShape() ? a.getShape()[rank - 2]
                                  : ShapedType::kDynamic);
  if (!a.hasStaticShape())
    return padDynamicRows(
        rewriter, op,
        llvm::alignTo(a.getShape().back(), kRegK),
        paddedSize(b.getShape().back(), regN, kTileN, kTileN / 2,
                   kTileN / 2),
        regM);
  int64_t m = a.getShape()[rank - 2], k = a.getShape().back(),
          n = b.getShape().back();
  int64_t pm = paddedSize(m, regM, cacheM, cacheM, cacheM / 2);
  int64_t pn = paddedSize(n, regN, kTileN, kTileN / 2, kTileN / 2);
  // (A reduction longer than kTileK runs in blocks of 16 or 8.)
  int64_t pk = llvm::alignTo(k, kRegK);
  if (pm == m && pk == k && pn == n)
    return op;
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  SmallVector<int64_t> aShape(a.getShape());
  aShape[rank - 2] = pm;
  aShape[rank - 1] = pk;
  SmallVector<int64_t> yShape(y.getShape());
  yShape[rank - 2] = pm;
  yShape[rank - 1] = pn;
  SmallVector<Value> operands(op->getOperands());
  operands[FusedLinearView::A] =
      padWithZeros(rewriter, loc, linear.getA(), aShape);
  operands[FusedLinearView::B] =
      padWithZeros(rewriter, loc, linear.getB(), {pk, pn});
  operands[FusedLinearView::Bias] =
      padWithZeros(rewriter, loc, linear.getBias(), {pn});
  auto padded = cast<FusedOp>(rewriter.clone(*op));
  padded->setOperands(operands);
  padded->getResult(0).setType(y.clone(yShape));
  SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)),
      strides(rank, rewriter.getIndexAttr(1)), sizes;
  for (int64_t d : y.getShape())
    sizes.push_back(rewriter.getIndexAttr(d));
  Value result = tensor::ExtractSliceOp::create(
      rewriter, loc, y, padded->getResult(0), offsets, sizes, strides);
  rewriter.replaceOp(op, result);
  return padded;
}

void mlir::fuel::tileContractionReductions(RewriterBase &rewriter,
                                           Operation *loop, int64_t step,
                                           bool dividingSteps) {
  SmallVector<std::pair<linalg::LinalgOp, int64_t>> contractions;
  loop->walk([&](linalg::LinalgOp op) {
    if (op.getNumReductionLoops() != 1)
      return;
    // A reduction of at most `step` is one step: tiled, it would be a step
    // of a size known only at run time, which is not vectorized.
    SmallVector<unsigned> reductions;
    op.getReductionDims(reductions);
    int64_t range = op.getStaticLoopRanges()[reductions.front()];
    if (ShapedType::isStatic(range) && range <= step)
      return;
    int64_t opStep = step;
    if (dividingSteps && ShapedType::isStatic(range))
      while (opStep > 1 && range % opStep)
        opStep /= 2;
    contractions.push_back({op, opStep});
  });
  // Widening casts of the operands (f16, bf16), and a dequantized weight
  // (an elementwise op of the quantized words, scales and zeros, or one
  // that reads them in its body), are computed per step, in registers:
  // each element is made where it is read. An elementwise op of several
  // values, one of which the loop computes otherwise (attention's
  // probabilities, of its scores and running maxima), stays whole: fused
  // per step, the others would be kept whole in private memory instead.
  auto elementwiseInLoop = [&](Operation *op) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    return generic && loop->isProperAncestor(op) &&
           generic.getNumReductionLoops() == 0;
  };
  // Whether `v` is read from outside the loop, through slices and
  // elementwise ops of such values only.
  std::function<bool(Value)> isRead = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return !loop->isAncestor(
          cast<BlockArgument>(v).getOwner()->getParentOp());
    if (!loop->isProperAncestor(def))
      return true;
    if (isa<tensor::ExtractSliceOp, tensor::CastOp, tensor::ExpandShapeOp,
            tensor::CollapseShapeOp>(def))
      return isRead(def->getOperand(0));
    return elementwiseInLoop(def) &&
           llvm::all_of(cast<linalg::GenericOp>(def).getDpsInputs(), isRead);
  };
  auto madePerStep = [&](Operation *producer) {
    if (!elementwiseInLoop(producer))
      return false;
    auto generic = cast<linalg::GenericOp>(producer);
    return generic.getNumDpsInputs() <= 1 ||
           llvm::all_of(generic.getDpsInputs(), isRead);
  };
  for (auto [op, opStep] : contractions) {
    if (llvm::none_of(op.getDpsInputs(), [&](Value v) {
          return v.getDefiningOp() && madePerStep(v.getDefiningOp());
        })) {
      tileReduction(rewriter, op, opStep);
      continue;
    }
    SmallVector<unsigned> reductions;
    op.getReductionDims(reductions);
    SmallVector<OpFoldResult> kTile(op.getNumLoops(),
                                    rewriter.getIndexAttr(0));
    kTile[reductions.front()] = rewriter.getIndexAttr(opStep);
    (void)tileAndFuseRoot(rewriter, cast<TilingInterface>(op.getOperation()),
                          kTile, scf::SCFTilingOptions::LoopType::ForOp,
                          madePerStep);
  }
}

/// Tiles the contraction in `loop` (a cache tile) along its reduction in
/// blocks of `block` (an scf.for carrying the output tile), then the
/// block's contraction and the cache tile's last op (`root`: the bias add)
/// into register tiles of `regSizes`, the elementwise ops before each
/// (widening casts) fused in. Fails, changing nothing, when the
/// contraction's operands are computed in the loop otherwise than
/// elementwise, or the reduction is not longer than kTileK or not a
/// multiple of `block`.
static LogicalResult blockReduction(RewriterBase &rewriter, Operation *loop,
                                    TilingInterface root, unsigned rank,
                                    ArrayRef<OpFoldResult> regSizes,
                                    int64_t block) {
  SmallVector<linalg::LinalgOp> contractions;
  loop->walk([&](linalg::LinalgOp op) {
    if (op.getNumReductionLoops() == 1)
      contractions.push_back(op);
  });
  if (contractions.size() != 1)
    return failure();
  linalg::LinalgOp contraction = contractions.front();
  // Operands widened in the loop (f16, bf16: elementwise ops of slices of
  // a and b) are widened per block and then per register tile, where they
  // are read, as the whole reduction's steps are without blocks.
  auto widening = [&](Operation *producer) {
    auto generic = dyn_cast_or_null<linalg::GenericOp>(producer);
    return generic && loop->isProperAncestor(producer) &&
           generic.getNumReductionLoops() == 0;
  };
  if (llvm::any_of(contraction.getDpsInputs(), [&](Value v) {
        Operation *producer = v.getDefiningOp();
        return producer && !isa<tensor::ExtractSliceOp>(producer) &&
               loop->isProperAncestor(producer) && !widening(producer);
      }))
    return failure();
  SmallVector<unsigned> reductions;
  contraction.getReductionDims(reductions);
  SmallVector<int64_t> ranges = contraction.getStaticLoopRanges();
  int64_t k = ranges[reductions.front()];
  if (ShapedType::isDynamic(k) || k <= kTileK || k % block != 0)
    return failure();

  bool rootIsContraction = root.getOperation() == contraction.getOperation();
  SmallVector<unsigned> parallel;
  contraction.getParallelDims(parallel);
  if (parallel.size() != rank)
    return failure();
  SmallVector<OpFoldResult> sizes(contraction.getNumLoops(),
                                  rewriter.getIndexAttr(0));
  sizes[reductions.front()] = rewriter.getIndexAttr(block);
  FailureOr<TiledRoot> blocks = tileAndFuseRoot(
      rewriter, cast<TilingInterface>(contraction.getOperation()), sizes,
      scf::SCFTilingOptions::LoopType::ForOp, widening);
  if (failed(blocks))
    return failure();

  // Register tiles of each block's contraction: the contraction's loops
  // are those of the output with the reduction last.
  SmallVector<OpFoldResult> contractionTile(sizes.size(),
                                            rewriter.getIndexAttr(0));
  for (auto [dim, size] : llvm::zip(parallel, regSizes))
    contractionTile[dim] = size;
  if (failed(tileAndFuseRoot(rewriter, blocks->tiled, contractionTile,
                             scf::SCFTilingOptions::LoopType::ForOp,
                             [&](Operation *producer) {
                               return widening(producer) &&
                                      blocks->loop->isProperAncestor(
                                          producer);
                             })))
    return failure();

  // The last op (the bias add) in register tiles of its own, with the
  // elementwise ops before it (the bias widened, the add before narrowing).
  if (!rootIsContraction)
    (void)tileAndFuseRoot(rewriter, root, regSizes,
                          scf::SCFTilingOptions::LoopType::ForOp, widening);
  return success();
}

/// The right operand's reads in the cache tile `loop` (the register tiles'
/// [regK, regN] blocks of b[K, N], found as the vector.contract right
/// operands, read directly or widened) are made from a copy of the tile's
/// block of b packed as [tileN / regN, K', regN], so that each register
/// column's panel is contiguous; K' is the reduction block when `blocked`
/// (the copy is made per block, at the start of the block loop, while the
/// block is in cache) and all of K otherwise. Read in place, consecutive
/// steps of the reduction are N elements apart: with N = 1024 every row of
/// a block is a new 4 KiB page and the same L1 set, and a 1024^3 GEMM ran
/// at a quarter of the speed of N = 16's. (A copy of the whole of b before
/// the loop was as fast for 1024^3, but a b of 64 MiB is a fresh mapping
/// on every call, whose page faults cost more than the GEMM.)
static void packRightOperand(RewriterBase &rewriter, scf::ForallOp loop,
                             int64_t regN, bool blocked) {
  llvm::MapVector<Value, SmallVector<vector::TransferReadOp>> reads;
  loop->walk([&](vector::ContractionOp contract) {
    Value rhs = contract.getRhs();
    if (auto ext = rhs.getDefiningOp<arith::ExtFOp>())
      rhs = ext.getIn();
    auto read = rhs.getDefiningOp<vector::TransferReadOp>();
    if (!read || read.getMask() || !read.getPermutationMap().isIdentity() ||
        read.getVectorType().getRank() != 2 ||
        read.getVectorType().getShape()[1] != regN ||
        llvm::any_of(read.getInBoundsValues(), [](bool b) { return !b; }))
      return;
    Value base = read.getBase();
    auto type = dyn_cast<RankedTensorType>(base.getType());
    if (!type || type.getRank() != 2 || !type.hasStaticShape() ||
        type.getShape()[1] % regN != 0 || type.getShape()[1] == regN ||
        loop->isAncestor(base.getParentBlock()->getParentOp()))
      return;
    reads[base].push_back(read);
  });
  std::optional<SmallVector<OpFoldResult>> steps = loop.getLoopSteps();
  if (reads.empty() || !steps)
    return;
  std::optional<int64_t> tileN = getConstantIntValue(steps->back());
  if (!tileN || *tileN % regN != 0)
    return;
  Value n0 = loop.getInductionVars().back();
  Location loc = loop.getLoc();
  auto index = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  for (auto &[b, uses] : reads) {
    // Where the copy goes: the start of the reduction block's loop (the
    // op of the tile's body that holds the reads), or of the tile.
    Operation *top = uses.front();
    while (top->getParentOp() != loop.getOperation())
      top = top->getParentOp();
    auto blockLoop = dyn_cast<scf::ForOp>(top);
    if (llvm::any_of(uses, [&](Operation *read) {
          return !top->isAncestor(read);
        }))
      continue;
    auto type = cast<RankedTensorType>(b.getType());
    int64_t kExtent = type.getShape()[0];
    Value k0;
    if (blocked) {
      std::optional<int64_t> block =
          blockLoop ? getConstantIntValue(blockLoop.getStep()) : std::nullopt;
      if (!block)
        continue;
      kExtent = *block;
      rewriter.setInsertionPointToStart(blockLoop.getBody());
      k0 = blockLoop.getInductionVar();
    } else {
      rewriter.setInsertionPointToStart(loop.getBody());
      k0 = index(rewriter, 0);
    }
    int64_t panels = *tileN / regN;
    int64_t step = kExtent % regN == 0 ? regN : 1;
    Type elt = type.getElementType();
    Value packed = tensor::EmptyOp::create(
        rewriter, loc, ArrayRef<int64_t>{panels, kExtent, regN}, elt);
    Value zero = arith::ConstantOp::create(rewriter, loc,
                                           rewriter.getZeroAttr(elt));
    auto vectorType = VectorType::get({step, regN}, elt);
    AffineMap rows = AffineMap::getMinorIdentityMap(3, 2,
                                                    rewriter.getContext());
    // `step` rows of the block at a time, across all its panels: b's rows
    // are read in order.
    auto copy = scf::ForOp::create(
        rewriter, loc, index(rewriter, 0), index(rewriter, kExtent),
        index(rewriter, step), ValueRange{packed},
        [&](OpBuilder &ob, Location loc, Value kk, ValueRange outer) {
          Value row = arith::AddIOp::create(ob, loc, k0, kk);
          auto across = scf::ForOp::create(
              ob, loc, index(ob, 0), index(ob, panels), index(ob, 1), outer,
              [&](OpBuilder &ib, Location loc, Value p, ValueRange inner) {
                Value column = arith::AddIOp::create(
                    ib, loc, n0,
                    arith::MulIOp::create(ib, loc, p, index(ib, regN)));
                Value v = vector::TransferReadOp::create(
                    ib, loc, vectorType, b, ValueRange{row, column}, zero,
                    ArrayRef<bool>{true, true});
                Value w = vector::TransferWriteOp::create(
                              ib, loc, v, inner[0],
                              ValueRange{p, kk, index(ib, 0)}, rows,
                              ArrayRef<bool>{true, true})
                              .getResult();
                scf::YieldOp::create(ib, loc, w);
              });
          scf::YieldOp::create(ob, loc, across.getResult(0));
        });
    // Each read of b[k, n : n + regN] reads panel (n - n0) / regN, from
    // row k - k0.
    for (vector::TransferReadOp read : uses) {
      rewriter.setInsertionPoint(read);
      ValueRange at = read.getIndices();
      Location rloc = read.getLoc();
      Value panel = arith::DivUIOp::create(
          rewriter, rloc, arith::SubIOp::create(rewriter, rloc, at[1], n0),
          index(rewriter, regN));
      Value row = arith::SubIOp::create(rewriter, rloc, at[0], k0);
      rewriter.replaceOpWithNewOp<vector::TransferReadOp>(
          read, read.getVectorType(), copy.getResult(0),
          ValueRange{panel, row, index(rewriter, 0)}, rows, read.getPadding(),
          /*mask=*/Value(), rewriter.getBoolArrayAttr({true, true}));
    }
  }
}

/// Whether the contraction among `decomposition` runs its reduction in
/// blocks (blockReduction): longer than kTileK.
static bool reducesInBlocks(
    const llvm::SmallPtrSetImpl<Operation *> &decomposition) {
  for (Operation *op : decomposition) {
    auto contraction = dyn_cast<linalg::LinalgOp>(op);
    if (!contraction || contraction.getNumReductionLoops() != 1)
      continue;
    SmallVector<unsigned> reductions;
    contraction.getReductionDims(reductions);
    int64_t k = contraction.getStaticLoopRanges()[reductions.front()];
    return ShapedType::isStatic(k) && k > kTileK;
  }
  return false;
}

LogicalResult mlir::fuel::scheduleContraction(
    RewriterBase &rewriter, linalg::LinalgOp root,
    const llvm::SmallPtrSetImpl<Operation *> &decomposition,
    const ScheduleOptions &options) {
  unsigned rank = root.getNumLoops();
  if (root.getNumReductionLoops() != 0 || rank < 2 ||
      root->getNumResults() != 1)
    return failure();
  SmallVector<int64_t> ranges = root.getStaticLoopRanges();
  int64_t m = ranges[rank - 2], n = ranges[rank - 1];
  // Packing b is one more pass over it; it pays when every panel is read
  // by several register tiles of rows (dynamic rows: batches of tokens,
  // unless known to be at most kUnpackedRows).
  int64_t rows = 1;
  for (int64_t r : ArrayRef<int64_t>(ranges).drop_back())
    rows = ShapedType::isDynamic(r) || ShapedType::isDynamic(rows)
               ? ShapedType::kDynamic
               : rows * r;
  bool pack = ShapedType::isDynamic(rows)
                  ? !options.rowsAtMost || options.rowsAtMost > kUnpackedRows
                  : rows >= kPackRows;
  // (Dynamic rows were padded to tiles of the target's register tile.)
  auto [regM, regN, cacheM] = contractionTile(
      options, ShapedType::isDynamic(rows) ? ShapedType::kDynamic : m);
  bool blocks = reducesInBlocks(decomposition);
  int64_t tileM = dividingTile(m, cacheM, regM),
          tileN = dividingTile(n, blocks ? kWideTileN : kTileN, regN);
  if (!tileM || !tileN)
    return failure();
  // With threads, at least two cache tiles per thread, where the columns
  // allow (one per thread ran [16, 4096] x [4096, 4096] on two threads
  // 1.6x slower than two per thread).
  int64_t rowTiles = !ShapedType::isDynamic(rows) ? rows / tileM
                     : options.rowsAtMost
                         ? llvm::divideCeil(options.rowsAtMost, cacheM)
                         : 2 * options.threads;
  while (options.threads > 1 &&
         rowTiles * (n / tileN) < 2 * options.threads) {
    int64_t narrower = dividingTile(n, tileN - regN, regN);
    if (!narrower)
      break;
    tileN = narrower;
  }

  // 1. Cache tiles of the output in an scf.forall, the decomposition fused.
  auto sizes = [&](int64_t lead, int64_t tm, int64_t tn) {
    SmallVector<OpFoldResult> s(rank, rewriter.getIndexAttr(lead));
    s[rank - 2] = rewriter.getIndexAttr(tm);
    s[rank - 1] = rewriter.getIndexAttr(tn);
    return s;
  };
  // Dynamic rows, padded to tiles of regM rows ([..., T, regM, K],
  // padDynamicRows): a cache tile takes up to cacheM / regM of them, so
  // that each block of b it packs serves them all (one a cache tile, [64,
  // 4096] x [4096, 4096] ran 2x slower than with static rows).
  SmallVector<OpFoldResult> cacheSizes = sizes(1, tileM, tileN);
  if (rank >= 3 && ShapedType::isDynamic(ranges[rank - 3]) && m == regM)
    cacheSizes[rank - 3] = rewriter.getIndexAttr(cacheM / regM);
  FailureOr<TiledRoot> cacheTiles = tileAndFuseRoot(
      rewriter, cast<TilingInterface>(root.getOperation()),
      cacheSizes, scf::SCFTilingOptions::LoopType::ForallOp,
      [&](Operation *producer) { return decomposition.contains(producer); });
  if (failed(cacheTiles))
    return failure();
  Operation *loop = cacheTiles->loop;

  // 2. Blocks of the reduction: the contraction of the cache tile runs over
  // the reduction a few of b's rows at a time, all its register tiles per
  // block, so that the block of the right operand stays in cache between
  // register tiles (a [block, tileN] block of it is read by every register
  // row). The register tiles then accumulate into the output tile in
  // memory from one block to the next.
  if (blocks &&
      succeeded(blockReduction(rewriter, loop, cacheTiles->tiled, rank,
                               sizes(1, regM, regN),
                               pack ? kPackedBlockK : kBlockK))) {
    tileContractionReductions(rewriter, loop, kRegK);
    vectorizeInside(rewriter, loop, /*contractions=*/true);
    if (pack)
      packRightOperand(rewriter, cast<scf::ForallOp>(loop), regN,
                       /*blocked=*/true);
    return success();
  }

  // 2. Register tiles of the cache tile, the contraction fused.
  if (failed(tileAndFuseRoot(rewriter, cacheTiles->tiled, sizes(1, regM, regN),
                             scf::SCFTilingOptions::LoopType::ForOp,
                             [&](Operation *producer) {
                               return loop->isProperAncestor(producer);
                             })))
    return failure();

  // 3. The reduction of each register tile in steps of kRegK.
  tileContractionReductions(rewriter, loop, kRegK);

  // 4. Vectorize what has static shapes now.
  vectorizeInside(rewriter, loop, /*contractions=*/true);

  // 5. The right operand's register panels contiguous.
  if (pack)
    packRightOperand(rewriter, cast<scf::ForallOp>(loop), regN,
                     /*blocked=*/false);
  return success();
}
