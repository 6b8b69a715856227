//===- GpuRowWise.cpp - The row-wise schedule on a GPU --------------------===//
//
// The row-wise schedule's GPU form. Its first steps are the CPU form's
// (RowWise.cpp): the decomposition's last op tiled one row at a time in an
// scf.forall over the leading dims with every step of the op fused in, and
// the elementwise steps fused into the ops that read them. Then:
//   - the row loop is mapped to blocks (`#gpu.block<x>`, then y and z for
//     more leading dims);
//   - the row is split over the block's T threads: an scf.forall mapped to
//     `#gpu.thread<x>` in which thread t computes every step of the op on
//     chunks t, t + T, t + 2T, ... of V consecutive elements of the row, so
//     each load and store of a warp touches consecutive addresses. V is as
//     many elements as 16 bytes hold (of the row's widest element type) and
//     T the most threads (a power of two from 32 to max-threads) whose
//     chunks of V tile the row; where none do, T is the most threads that
//     divide the row and V fewer, down to 1, so that T * V divides it (the
//     chunks of a thread hold at most kMaxRowElementsPerThread): a chunk is
//     then one 16-byte load or store (ld.global.v4.b32) once its alignment is
//     known (fuel-gpu-align-vector-accesses). The thread's slice of a row is
//     the row expanded to [C, T * V], cut to its [C, V] columns and
//     collapsed; once vectorized, its reads and writes are of the [C, V]
//     tile itself (populateFoldReshapesIntoTransfersPatterns);
//   - each reduction over the row becomes the thread's partial (the step on
//     its slice, from the reduction's identity) combined across the block by
//     `gpu.all_reduce` (subgroup shuffles and shared memory once lowered),
//     then with the reduction's initial value; steps over row statistics are
//     computed by every thread;
//   - each thread's slice is vectorized: it stays in registers.
// Nothing row-sized is allocated: a row is read from and written to global
// memory only.
//
//===----------------------------------------------------------------------===//

#include "GpuSchedules.h"
#include "RowWise.h"
#include "ScheduleUtils.h"

#include "FuelFused/Decompose/Decompose.h"
#include "FuelFused/IR/FuelOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/CSE.h"

using namespace mlir;
using namespace mlir::fuel;

/// The most elements of a row one thread holds (in vector registers).
static constexpr int64_t kMaxRowElementsPerThread = 256;

/// Threads per row: the largest power of two at most `maxThreads` (and the
/// row length) that divides the row; 0 when that is less than a warp.
static int64_t threadsForRow(int64_t row, int64_t maxThreads) {
  int64_t threads = 32;
  while (threads * 2 <= maxThreads && threads * 2 <= row &&
         row % (threads * 2) == 0)
    threads *= 2;
  return row % threads == 0 ? threads : 0;
}

LogicalResult mlir::fuel::canScheduleGpuRowWise(FusedOp op,
                                           const GpuScheduleOptions &options,
                                           std::string &why) {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (type.getRank() < 2 || type.getRank() > 4) {
    why = "the GPU row-wise schedule needs rows in one to three leading dims "
          "(one grid dim each): a rank from 2 to 4, got " +
          std::to_string(type.getRank());
    return failure();
  }
  int64_t row = type.getShape().back();
  int64_t threads = threadsForRow(row, options.maxThreads);
  if (threads == 0) {
    why = "the row length (" + std::to_string(row) +
          ") is not a multiple of a warp (32)";
    return failure();
  }
  // Each thread holds its elements of the row in registers (a vector per
  // step): rows longer than that lower as decomposed.
  if (row / threads > kMaxRowElementsPerThread) {
    why = "the row length (" + std::to_string(row) + ") is more than " +
          std::to_string(kMaxRowElementsPerThread) + " elements for each of " +
          std::to_string(threads) + " threads to hold in registers";
    return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Splitting a row over the threads of a block
//===----------------------------------------------------------------------===//

namespace {
/// The cross-thread form of a reduction's combiner.
struct Combiner {
  gpu::AllReduceOperation kind;
  /// The combiner's identity: the thread partials start from it.
  TypedAttr identity;
  /// The scalar op that combines the block's total with the initial value.
  Operation *op;
};
} // namespace

/// The combiner of a reduction `op` with one init: the op that yields the
/// new accumulator from the old one (the init's block argument).
static std::optional<Combiner> getCombiner(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1)
    return std::nullopt;
  Block *body = op.getBlock();
  Value acc = body->getArgument(body->getNumArguments() - 1);
  Operation *yielded =
      body->getTerminator()->getOperand(0).getDefiningOp();
  if (!yielded || yielded->getNumOperands() != 2 ||
      !llvm::is_contained(yielded->getOperands(), acc))
    return std::nullopt;
  Type type = acc.getType();
  auto floatType = dyn_cast<FloatType>(type);
  if (!floatType)
    return std::nullopt;
  const llvm::fltSemantics &sem = floatType.getFloatSemantics();
  auto make = [&](gpu::AllReduceOperation kind,
                  const APFloat &identity) -> Combiner {
    return {kind, FloatAttr::get(type, identity), yielded};
  };
  if (isa<arith::AddFOp>(yielded))
    return make(gpu::AllReduceOperation::ADD, APFloat::getZero(sem));
  if (isa<arith::MulFOp>(yielded))
    return make(gpu::AllReduceOperation::MUL, APFloat::getOne(sem));
  if (isa<arith::MaximumFOp>(yielded))
    return make(gpu::AllReduceOperation::MAXIMUMF,
                APFloat::getInf(sem, /*Negative=*/true));
  if (isa<arith::MaxNumFOp>(yielded))
    return make(gpu::AllReduceOperation::MAXNUMF,
                APFloat::getInf(sem, /*Negative=*/true));
  if (isa<arith::MinimumFOp>(yielded))
    return make(gpu::AllReduceOperation::MINIMUMF, APFloat::getInf(sem));
  if (isa<arith::MinNumFOp>(yielded))
    return make(gpu::AllReduceOperation::MINNUMF, APFloat::getInf(sem));
  return std::nullopt;
}

/// Whether `type` holds a row: a tensor whose last dim is `rowLength`.
static bool isRowType(Type type, int64_t rowLength) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getRank() > 0 &&
         tensor.getShape().back() == rowLength;
}

/// Whether `type` is a tensor of one element (a row statistic).
static bool isSmallType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() && tensor.getNumElements() == 1;
}

/// The position of the last loop in `map`'s results: the last result when
/// the map reads the row there (as the loop itself), -1 when the map does
/// not read it; std::nullopt when it reads it any other way.
static std::optional<int> rowPosition(AffineMap map, unsigned rowLoop) {
  int position = -1;
  for (auto [i, expr] : llvm::enumerate(map.getResults())) {
    if (!expr.isFunctionOfDim(rowLoop))
      continue;
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim || i + 1 != map.getNumResults())
      return std::nullopt;
    position = i;
  }
  return position;
}

/// The reassociation of a tensor of rank `rank` - 1 with one of rank
/// `rank` whose last two dims are the other's last: [[0], ..., [r-2, r-1]].
static SmallVector<ReassociationIndices> lastTwoGrouped(int64_t rank) {
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i + 2 < rank; ++i)
    groups.push_back({i});
  groups.push_back({rank - 2, rank - 1});
  return groups;
}

namespace {
/// Splits the body of a row loop (one row per iteration) over `threads`
/// threads; see the file comment.
class RowSplitter {
public:
  RowSplitter(RewriterBase &rewriter, scf::ForallOp rowLoop,
              int64_t rowLength, int64_t threads)
      : rewriter(rewriter), rowLoop(rowLoop), rowLength(rowLength),
        threads(threads), chunk(chunkFor()) {}

  /// Checks, changing nothing, that every step of the row has a split form.
  LogicalResult check(std::string &why);
  /// Builds the thread loop; returns it.
  scf::ForallOp split();
  /// Whether each thread's elements are chunks of more than one.
  bool chunked() const { return chunk > 1; }

private:
  bool isRowLinalg(linalg::LinalgOp op) const {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    return !ranges.empty() && ranges.back() == rowLength &&
           llvm::any_of(op.getIndexingMapsArray(), [&](AffineMap map) {
             return map.getNumResults() > 0 &&
                    map.getResults().back() ==
                        getAffineDimExpr(ranges.size() - 1, op.getContext());
           });
  }
  /// This thread's elements of `value`, a row tensor defined outside the
  /// row loop or of the row: a strided slice.
  /// `type`, when given, is the slice's type (rank-reducing).
  Value threadSlice(OpBuilder &b, Location loc, Value value,
                    ArrayRef<OpFoldResult> offsets,
                    ArrayRef<OpFoldResult> sizes, Type type = {});
  Value threadSliceOfWhole(OpBuilder &b, Location loc, Value value,
                           Type type = {});
  Type threadType(Type rowType) const {
    auto tensor = cast<RankedTensorType>(rowType);
    SmallVector<int64_t> shape(tensor.getShape());
    shape.back() = rowLength / threads;
    return tensor.clone(shape);
  }
  void splitLinalg(OpBuilder &b, linalg::LinalgOp op);

  /// The elements of a chunk: 16 bytes of the widest element type of the
  /// rows the loop reads and writes, or fewer so that the threads' chunks
  /// tile the row.
  int64_t chunkFor();
  /// `row` (a tensor whose last dim is the row) as [..., C, T * V].
  Value expandRow(OpBuilder &b, Location loc, Value row) const;
  /// This thread's chunks of `expanded` (a row expanded by expandRow):
  /// its [..., C, V] columns, rank-reduced to `type`'s leading dims where
  /// given, collapsed to [..., C * V].
  Value chunksOf(OpBuilder &b, Location loc, Value expanded,
                 Type type = {}) const;
  /// The offsets, sizes and strides of this thread's [..., C, V] columns
  /// of an expanded row of rank `rank`.
  std::array<SmallVector<OpFoldResult>, 3> chunkColumns(OpBuilder &b,
                                                        int64_t rank) const;

  RewriterBase &rewriter;
  scf::ForallOp rowLoop;
  int64_t rowLength, threads, chunk;
  IRMapping mapping;
  Value threadId;
};
} // namespace

LogicalResult RowSplitter::check(std::string &why) {
  auto fail = [&](Operation *op, const Twine &what) {
    why = ("the row step '" + op->getName().getStringRef() + "' " + what)
              .str();
    return failure();
  };
  auto terminator = rowLoop.getTerminator();
  if (!llvm::hasSingleElement(terminator.getYieldingOps()) ||
      !isa<tensor::ParallelInsertSliceOp>(
          *terminator.getYieldingOps().begin()))
    return fail(terminator, "does not insert one row");
  for (Operation &op : rowLoop.getBody()->without_terminator()) {
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
      if (!isRowType(slice.getType(), rowLength))
        continue;
      std::optional<int64_t> stride =
          getConstantIntValue(slice.getMixedStrides().back());
      if (!stride || *stride != 1)
        return fail(&op, "reads a row with a stride");
      continue;
    }
    if (isa<tensor::EmptyOp>(op))
      continue;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      if (!linalgOp.hasPureTensorSemantics())
        return fail(&op, "is not on tensors");
      if (!isRowLinalg(linalgOp)) {
        // A step on row statistics: every thread computes it.
        for (Value v : op.getOperands())
          if (isa<ShapedType>(v.getType()) && !isSmallType(v.getType()))
            return fail(&op, "is neither over the row nor on statistics");
        continue;
      }
      unsigned rowLoopDim = linalgOp.getNumLoops() - 1;
      for (OpOperand &operand : op.getOpOperands()) {
        AffineMap map = linalgOp.getMatchingIndexingMap(&operand);
        std::optional<int> position = rowPosition(map, rowLoopDim);
        if (!position)
          return fail(&op, "reads the row other than along its last dim");
        if (*position < 0 && isa<ShapedType>(operand.get().getType()) &&
            !isSmallType(operand.get().getType()) &&
            operand.get().getParentRegion() ==
                &rowLoop.getRegion())
          return fail(&op, "reads a row-loop value that is not a row "
                           "statistic");
      }
      SmallVector<utils::IteratorType> iterators =
          linalgOp.getIteratorTypesArray();
      if (llvm::count(iterators, utils::IteratorType::reduction) == 0)
        continue;
      if (iterators.back() != utils::IteratorType::reduction ||
          llvm::count(iterators, utils::IteratorType::reduction) != 1)
        return fail(&op, "reduces over another dim than the row");
      if (!getCombiner(linalgOp))
        return fail(&op, "reduces with a combiner other than a floating "
                         "add, mul, max or min");
      if (!isSmallType(op.getResult(0).getType()))
        return fail(&op, "reduces to more than one value per row");
      continue;
    }
    if (isMemoryEffectFree(&op) &&
        llvm::none_of(op.getResultTypes(),
                      [](Type t) { return isa<ShapedType>(t); }))
      continue; // Scalar and index arithmetic: every thread computes it.
    return fail(&op, "has no split form");
  }
  return success();
}

/// The elements of the widest element type of the rows `rowLoop` reads
/// (slices) and writes (the outputs' slices) that fill 16 bytes; the steps
/// between them are in registers.
static int64_t sixteenBytesOfRows(scf::ForallOp rowLoop, int64_t rowLength) {
  unsigned widest = 8;
  rowLoop.getBody()->walk([&](tensor::ExtractSliceOp slice) {
    Type element = slice.getType().getElementType();
    if (isRowType(slice.getType(), rowLength))
      widest = std::max(widest, element.getIntOrFloatBitWidth());
  });
  return std::max<int64_t>(1, 128 / widest);
}

/// Threads per row where each takes chunks of `elements` (16 bytes): the
/// most, a power of two from 32 to `maxThreads`, whose chunks tile the row
/// with at most kMaxRowElementsPerThread elements a thread; 0 when none.
/// A row of 512 f32 takes 128 threads of 4 rather than 256 of 2, one of
/// 768 64 of 4 x 3 rather than 256 of 3 single elements.
static int64_t threadsForChunks(int64_t row, int64_t elements,
                                int64_t maxThreads) {
  for (int64_t threads = maxThreads; threads >= 32; threads /= 2)
    if (row % (threads * elements) == 0 &&
        row / threads <= kMaxRowElementsPerThread)
      return threads;
  return 0;
}

int64_t RowSplitter::chunkFor() {
  int64_t elements = sixteenBytesOfRows(rowLoop, rowLength);
  while (elements > 1 && rowLength % (threads * elements) != 0)
    elements /= 2;
  return elements;
}

Value RowSplitter::expandRow(OpBuilder &b, Location loc, Value row) const {
  auto type = cast<RankedTensorType>(row.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> shape(type.getShape().drop_back());
  shape.append({rowLength / (threads * chunk), threads * chunk});
  return tensor::ExpandShapeOp::create(b, loc, type.clone(shape), row,
                                       lastTwoGrouped(rank + 1));
}

Value RowSplitter::chunksOf(OpBuilder &b, Location loc, Value expanded,
                           Type type) const {
  auto expandedType = cast<RankedTensorType>(expanded.getType());
  int64_t rank = expandedType.getRank();
  auto [offsets, sizes, strides] = chunkColumns(b, rank);
  // The leading dims: `type`'s (rank-reducing) or the row's.
  SmallVector<int64_t> tileShape(
      type ? cast<RankedTensorType>(type).getShape().drop_back()
           : expandedType.getShape().drop_back(2));
  tileShape.append({rowLength / (threads * chunk), chunk});
  Value tile = tensor::ExtractSliceOp::create(
      b, loc, expandedType.clone(tileShape), expanded, offsets, sizes,
      strides);
  return tensor::CollapseShapeOp::create(b, loc, tile,
                                         lastTwoGrouped(tileShape.size()));
}

std::array<SmallVector<OpFoldResult>, 3>
RowSplitter::chunkColumns(OpBuilder &b, int64_t rank) const {
  std::array<SmallVector<OpFoldResult>, 3> slice = {
      SmallVector<OpFoldResult>(rank, b.getIndexAttr(0)),
      SmallVector<OpFoldResult>(rank, b.getIndexAttr(1)),
      SmallVector<OpFoldResult>(rank, b.getIndexAttr(1))};
  slice[0].back() = affine::makeComposedFoldedAffineApply(
      b, threadId.getLoc(), b.getAffineDimExpr(0) * chunk, {threadId});
  slice[1][rank - 2] = b.getIndexAttr(rowLength / (threads * chunk));
  slice[1].back() = b.getIndexAttr(chunk);
  return slice;
}

Value RowSplitter::threadSlice(OpBuilder &b, Location loc, Value value,
                               ArrayRef<OpFoldResult> offsets,
                               ArrayRef<OpFoldResult> sizes, Type type) {
  SmallVector<OpFoldResult> newOffsets(offsets), newSizes(sizes);
  SmallVector<OpFoldResult> strides(offsets.size(), b.getIndexAttr(1));
  if (chunk > 1) {
    // The row, expanded, cut to the thread's chunks, collapsed.
    Value row;
    if (type) {
      auto rowType = cast<RankedTensorType>(type);
      SmallVector<int64_t> shape(rowType.getShape());
      shape.back() = rowLength;
      row = tensor::ExtractSliceOp::create(b, loc, rowType.clone(shape), value,
                                           offsets, sizes, strides);
    } else {
      row = tensor::ExtractSliceOp::create(b, loc, value, offsets, sizes,
                                           strides);
    }
    return chunksOf(b, loc, expandRow(b, loc, row), type);
  }
  std::optional<int64_t> last = getConstantIntValue(offsets.back());
  newOffsets.back() =
      last && *last == 0
          ? OpFoldResult(threadId)
          : OpFoldResult(arith::AddIOp::create(
                             b, loc,
                             getValueOrCreateConstantIndexOp(b, loc,
                                                             offsets.back()),
                             threadId)
                             .getResult());
  newSizes.back() = b.getIndexAttr(rowLength / threads);
  strides.back() = b.getIndexAttr(threads);
  if (type)
    return tensor::ExtractSliceOp::create(b, loc, cast<RankedTensorType>(type),
                                          value, newOffsets, newSizes, strides);
  return tensor::ExtractSliceOp::create(b, loc, value, newOffsets, newSizes,
                                        strides);
}

Value RowSplitter::threadSliceOfWhole(OpBuilder &b, Location loc,
                                      Value value, Type type) {
  auto valueType = cast<RankedTensorType>(value.getType());
  SmallVector<OpFoldResult> offsets(valueType.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes;
  for (int64_t size : valueType.getShape())
    sizes.push_back(b.getIndexAttr(size));
  return threadSlice(b, loc, value, offsets, sizes, type);
}

void RowSplitter::splitLinalg(OpBuilder &b, linalg::LinalgOp op) {
  Location loc = op.getLoc();
  unsigned rowLoopDim = op.getNumLoops() - 1;
  SmallVector<Value> operands;
  for (OpOperand &operand : op->getOpOperands()) {
    Value value = operand.get();
    Value mapped = mapping.lookupOrNull(value);
    int position = *rowPosition(op.getMatchingIndexingMap(&operand),
                                rowLoopDim);
    if (position >= 0 && !mapped)
      mapped = threadSliceOfWhole(b, loc, value);
    operands.push_back(mapped ? mapped : value);
  }
  std::optional<Combiner> combiner;
  if (op.getNumReductionLoops() != 0)
    combiner = getCombiner(op);
  if (!combiner) {
    SmallVector<Type> resultTypes;
    for (Value init : ValueRange(operands).take_back(op.getNumDpsInits()))
      resultTypes.push_back(init.getType());
    Operation *split = clone(b, op, resultTypes, operands);
    mapping.map(op->getResults(), split->getResults());
    return;
  }
  // A reduction: the thread's partial from the identity, combined across
  // the block, then with the initial value.
  Value init = operands.back();
  auto initType = cast<RankedTensorType>(init.getType());
  Value empty = tensor::EmptyOp::create(b, loc, initType.getShape(),
                                        initType.getElementType());
  Value identity = arith::ConstantOp::create(b, loc, combiner->identity);
  operands.back() =
      linalg::FillOp::create(b, loc, identity, empty).getResult(0);
  Operation *partial = clone(b, op, TypeRange{initType}, operands);
  SmallVector<Value> zeros(initType.getRank(),
                           arith::ConstantIndexOp::create(b, loc, 0));
  Value mine =
      tensor::ExtractOp::create(b, loc, partial->getResult(0), zeros);
  Value total = gpu::AllReduceOp::create(
      b, loc, mine,
      gpu::AllReduceOperationAttr::get(b.getContext(), combiner->kind),
      b.getUnitAttr());
  Value initial = tensor::ExtractOp::create(b, loc, init, zeros);
  IRMapping scalar;
  Block *body = op.getBlock();
  Value acc = body->getArgument(body->getNumArguments() - 1);
  Value other = combiner->op->getOperand(0) == acc
                    ? combiner->op->getOperand(1)
                    : combiner->op->getOperand(0);
  scalar.map(acc, initial);
  scalar.map(other, total);
  Value combined = b.clone(*combiner->op, scalar)->getResult(0);
  Value result = tensor::InsertOp::create(b, loc, combined, init, zeros);
  mapping.map(op->getResult(0), result);
}

scf::ForallOp RowSplitter::split() {
  auto terminator = rowLoop.getTerminator();
  auto insert =
      cast<tensor::ParallelInsertSliceOp>(*terminator.getYieldingOps().begin());
  SmallVector<Operation *> steps;
  for (Operation &op : rowLoop.getBody()->without_terminator())
    steps.push_back(&op);

  Location loc = rowLoop.getLoc();
  rewriter.setInsertionPoint(terminator);
  Value rowOut = tensor::ExtractSliceOp::create(
      rewriter, loc, insert.getSourceType(), insert.getDest(),
      insert.getMixedOffsets(), insert.getMixedSizes(),
      insert.getMixedStrides());
  MLIRContext *ctx = rewriter.getContext();
  // With chunks, the threads share the row expanded to [..., C, T * V].
  if (chunk > 1)
    rowOut = expandRow(rewriter, loc, rowOut);
  auto threadLoop = scf::ForallOp::create(
      rewriter, loc, ArrayRef<OpFoldResult>{rewriter.getIndexAttr(threads)},
      ValueRange{rowOut},
      rewriter.getArrayAttr(
          {gpu::GPUThreadMappingAttr::get(ctx, gpu::MappingId::DimX)}));
  threadId = threadLoop.getInductionVar(0);

  OpBuilder b(ctx);
  b.setInsertionPoint(threadLoop.getTerminator());
  for (Operation *op : steps) {
    Location opLoc = op->getLoc();
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op);
        slice && isRowType(slice.getType(), rowLength)) {
      Value threadPart;
      if (llvm::is_contained(rowLoop.getRegionIterArgs(), slice.getSource()))
        // The row being written (the last step's init): this thread's part
        // of the thread loop's output.
        threadPart =
            chunk > 1
                ? chunksOf(b, opLoc, threadLoop.getRegionIterArgs()[0],
                           threadType(slice.getType()))
                : threadSliceOfWhole(b, opLoc,
                                     threadLoop.getRegionIterArgs()[0],
                                     threadType(slice.getType()));
      else
        // A rank-reducing slice stays rank-reducing: it is read with the
        // row's maps.
        threadPart = threadSlice(b, opLoc,
                                 mapping.lookupOrDefault(slice.getSource()),
                                 slice.getMixedOffsets(), slice.getMixedSizes(),
                                 threadType(slice.getType()));
      mapping.map(slice.getResult(), threadPart);
      continue;
    }
    if (auto empty = dyn_cast<tensor::EmptyOp>(op);
        empty && isRowType(empty.getType(), rowLength)) {
      auto type = cast<RankedTensorType>(threadType(empty.getType()));
      mapping.map(empty.getResult(),
                  tensor::EmptyOp::create(b, opLoc, type.getShape(),
                                          type.getElementType()));
      continue;
    }
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
        linalgOp && isRowLinalg(linalgOp)) {
      splitLinalg(b, linalgOp);
      continue;
    }
    b.clone(*op, mapping);
  }
  // The thread's part of the row, into the row.
  Value part = mapping.lookup(insert.getSource());
  auto rowType = cast<RankedTensorType>(insert.getSourceType());
  Value shared = threadLoop.getRegionIterArgs()[0];
  if (chunk > 1) {
    int64_t rank = rowType.getRank() + 1;
    auto [offsets, sizes, strides] = chunkColumns(b, rank);
    SmallVector<int64_t> tileShape(rowType.getShape().drop_back());
    tileShape.append({rowLength / (threads * chunk), chunk});
    part = tensor::ExpandShapeOp::create(b, loc, rowType.clone(tileShape),
                                         part, lastTwoGrouped(rank));
    b.setInsertionPointToStart(threadLoop.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(b, loc, part, shared, offsets,
                                          sizes, strides);
  } else {
    b.setInsertionPointToStart(threadLoop.getTerminator().getBody());
    SmallVector<OpFoldResult> offsets(rowType.getRank(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes, strides(rowType.getRank(),
                                             b.getIndexAttr(1));
    for (int64_t size : rowType.getShape())
      sizes.push_back(b.getIndexAttr(size));
    offsets.back() = threadId;
    sizes.back() = b.getIndexAttr(rowLength / threads);
    strides.back() = b.getIndexAttr(threads);
    tensor::ParallelInsertSliceOp::create(b, loc, part, shared, offsets,
                                          sizes, strides);
  }

  Value written = threadLoop.getResult(0);
  if (chunk > 1) {
    rewriter.setInsertionPointAfter(threadLoop);
    int64_t rank = cast<RankedTensorType>(written.getType()).getRank();
    written = tensor::CollapseShapeOp::create(rewriter, loc, written,
                                              lastTwoGrouped(rank));
  }
  rewriter.modifyOpInPlace(insert, [&] {
    insert.getSourceMutable().assign(written);
  });
  for (Operation *op : llvm::reverse(steps))
    if (op->use_empty())
      rewriter.eraseOp(op);
  return threadLoop;
}

//===----------------------------------------------------------------------===//
// The schedule
//===----------------------------------------------------------------------===//

/// When the row's steps have no split form, the row loop is left unmapped
/// (the op still lowers, one kernel per loop nest).
LogicalResult mlir::fuel::scheduleGpuRowWise(
    RewriterBase &rewriter, linalg::LinalgOp root,
    const llvm::SmallPtrSetImpl<Operation *> &decomposition,
    const GpuScheduleOptions &options, std::string &why) {
  if (root.getNumReductionLoops() != 0 || root.getNumLoops() < 2 ||
      root.getNumLoops() > 4 || root->getNumResults() != 1) {
    why = "the op's last step does not write whole rows";
    return failure();
  }
  SmallVector<int64_t> ranges = root.getStaticLoopRanges();
  int64_t rowLength = ranges.back();
  int64_t threads = threadsForRow(rowLength, options.maxThreads);
  if (threads == 0) {
    why = "the row length is not a multiple of a warp";
    return failure();
  }

  FailureOr<scf::ForallOp> rows = tileRows(rewriter, root, decomposition);
  if (failed(rows)) {
    why = "tiling the op's rows failed";
    return failure();
  }
  scf::ForallOp rowLoop = *rows;

  // Fewer threads where that gives each 16-byte chunks of the row (one
  // load or store each) and the threads that divide it do not.
  if (int64_t chunkThreads = threadsForChunks(
          rowLength, sixteenBytesOfRows(rowLoop, rowLength),
          options.maxThreads))
    threads = chunkThreads;

  // Room for a step's result is the thread's own: a slice of a buffer shared
  // by the block would be written by every thread.
  privatizeEmptySlices(rewriter, rowLoop);
  RowSplitter splitter(rewriter, rowLoop, rowLength, threads);
  if (failed(splitter.check(why)))
    return failure();
  scf::ForallOp threadLoop = splitter.split();

  // Leading dims to grid dims, the innermost to x.
  mapForall(rewriter, rowLoop, /*threads=*/false);

  vectorizeInside(rewriter, threadLoop, /*contractions=*/false);
  if (splitter.chunked()) {
    MLIRContext *ctx = rewriter.getContext();
    RewritePatternSet patterns(ctx);
    populateFoldReshapesIntoTransfersPatterns(patterns);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::populateFoldTensorEmptyPatterns(patterns);
    tensor::populateFoldTensorSubsetIntoVectorTransferPatterns(patterns);
    applyInside(threadLoop, std::move(patterns));
  }
  return success();
}
