//===- GpuQuantizedAlongN.cpp - Decoding a [K, N] weight on a GPU ---------===//
//
// The decode form (few rows of activations) of a quantized matmul whose
// weight is laid out [K, N], as awq_matmul's (eight 4-bit codes a u32 word
// along n): GpuQuantized.cpp's block per output element would have the
// lanes of a warp read a word of rows 8 k apart (a sector each, 12% of the
// bytes of a request used) and each word be read by the blocks of its 8
// columns. Here lanes go along n instead, a thread a word's columns; see
// AlongNDecode.
//
//===----------------------------------------------------------------------===//

#include "GpuBlockLoops.h"
#include "GpuQuantized.h"
#include "GpuSchedules.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::fuel;

/// Columns a thread takes (at most): a word of awq's codes.
static constexpr int64_t kColumns = 8;
/// Lanes along n (at most): 8 words, a 32-byte sector.
static constexpr int64_t kLanes = 8;
/// Workgroup memory the partials take at most (the static limit).
static constexpr int64_t kMaxSharedBytes = 48 * 1024;

/// Whether the contraction `op` (loops ..., n, k) reads a weight laid out
/// [K, N]: an input indexed (k, n).
static bool readsWeightAlongN(linalg::GenericOp op) {
  unsigned loops = op.getNumLoops();
  if (loops < 2)
    return false;
  MLIRContext *ctx = op.getContext();
  AffineMap kn = AffineMap::get(loops, 0,
                                {getAffineDimExpr(loops - 1, ctx),
                                 getAffineDimExpr(loops - 2, ctx)},
                                ctx);
  return llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *input) {
    return op.getMatchingIndexingMap(input) == kn;
  });
}

namespace {
/// The decode form for a weight laid out [K, N] (awq's: eight 4-bit codes
/// a word along n): a block per row of activations, run of L * C columns
/// and partition of K, its T threads L lanes along n by S = T / L splits of
/// the partition. Thread (s, l) takes C consecutive columns (a word of
/// awq's codes) and the partition's chunks s, s + S, ... of up to 8
/// consecutive k, and keeps C partial sums; so a warp reads L consecutive
/// words of each of 32 / L rows of the weight, and each word is read once
/// per row of activations, where a block per output column had its lanes
/// read a word of rows 8 k apart, each word read by the blocks of its C
/// columns.
///
/// The partials go to workgroup memory, and after a barrier a thread per
/// column adds its S partials and writes the column. Their layout keeps
/// both steps free of bank conflicts: thread (s, l)'s value j at
/// [s, j R + l], R an odd multiple of 32 / C no less than L (a warp of the
/// second step, 32 / C lanes l by the C values j, reads j R + l: 32
/// distinct banks), the rows `stride` apart, no less than C R and L modulo
/// 32 (a warp's writes of the first step, its threads' value j, fall at
/// s L + l: distinct banks too).
///
/// Where the rows and runs give fewer blocks than two per multiprocessor,
/// K is split into P partitions (a power of two, while each thread keeps a
/// chunk of each), the blocks write [P * rows, N] partial sums, and a
/// second kernel adds them, a thread per column.
struct AlongNDecode {
  RewriterBase &b;
  Location loc;
  linalg::GenericOp contraction;
  /// What converts the contraction's f32 result to the op's (or null).
  linalg::GenericOp conversion;
  Value term;
  const llvm::SmallPtrSetImpl<Operation *> &decomposition;
  /// Output shape (the contraction's loops but k), k, chunk along k,
  /// columns a thread, lanes along n, threads.
  SmallVector<int64_t> outShape;
  int64_t k, chunk, cols, lanes, threads;

  Value index(int64_t x) { return arith::ConstantIndexOp::create(b, loc, x); }

  /// The partials' layout (see above): R, and the rows' stride.
  int64_t valueStride() const {
    int64_t r = 32 / cols;
    while (r < lanes)
      r += 2 * (32 / cols);
    return r;
  }
  int64_t rowStride() const {
    int64_t stride = cols * valueStride();
    while (stride % 32 != lanes % 32)
      ++stride;
    return stride;
  }

  /// The output's leading indices of flattened row `row`.
  SmallVector<Value> leadingOf(Value row) {
    return delinearize(b, loc, row, ArrayRef<int64_t>(outShape).drop_back());
  }

  /// Thread loop 1: each thread's C partial sums over chunks [first,
  /// last) of K, in workgroup memory.
  Value partials(ArrayRef<Value> leading, Value col0, Value first,
                 Value last) {
    int64_t splits = threads / lanes;
    Type f32 = b.getF32Type();
    auto loop = scf::ForallOp::create(
        b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(threads)},
        ValueRange{workgroupTensor(b, loc, {splits, rowStride()})},
        std::nullopt);
    mapForall(b, loop, /*threads=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar(0);
    Value lane = arith::RemUIOp::create(b, loc, t, index(lanes));
    Value split = arith::DivUIOp::create(b, loc, t, index(lanes));
    Value nBase = arith::AddIOp::create(
        b, loc, col0, arith::MulIOp::create(b, loc, lane, index(cols)));
    Value zero = arith::ConstantOp::create(b, loc, f32, b.getF32FloatAttr(0));
    auto steps = scf::ForOp::create(
        b, loc, arith::AddIOp::create(b, loc, first, split), last,
        index(splits), SmallVector<Value>(cols, zero),
        [&](OpBuilder &nb, Location, Value c, ValueRange sums) {
          ChunkReads reads;
          reads.addAxis(nb, loc,
                        arith::MulIOp::create(
                            nb, loc, c,
                            arith::ConstantIndexOp::create(nb, loc, chunk)),
                        chunk);
          reads.addAxis(nb, loc, nBase, cols);
          SmallVector<Value> next(sums);
          for (int64_t j = 0; j < cols; ++j)
            for (Value kk : reads.axes[0].values) {
              SmallVector<Value> point(leading);
              point.push_back(reads.axes[1].values[j]);
              point.push_back(kk);
              PointEvaluator eval(nb, loc, decomposition, &reads);
              next[j] = arith::AddFOp::create(
                  nb, loc, next[j],
                  eval.valueAt(contraction, point, term));
            }
          scf::YieldOp::create(nb, loc, next);
        });
    Value mine = tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({1, cols}, f32), steps.getResults());
    b.setInsertionPointToStart(loop.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(
        b, loc, mine, loop.getRegionIterArgs()[0],
        ArrayRef<OpFoldResult>{split, lane},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(cols)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1),
                               b.getIndexAttr(valueStride())});
    return loop.getResult(0);
  }

  /// A thread per column x of the block's [1, L * C] slice `out` (columns
  /// from col0): `count` values `part(s, x)` added; where `final`, to the
  /// output's initial value, and converted to the result's type.
  Value perColumn(Value out, ArrayRef<Value> leading, Value col0,
                  int64_t count, bool final,
                  function_ref<Value(OpBuilder &, Value, Value)> part) {
    Value init = contraction.getDpsInitOperand(0)->get();
    return threadSlices(
        b, loc, {cols * lanes}, out, {1, 1}, {1, 1},
        [&](ValueRange ids) {
          return SmallVector<OpFoldResult>{b.getIndexAttr(0), ids[0]};
        },
        [&](ValueRange ids, Value) -> Value {
          Value x = ids[0], start;
          if (final) {
            SmallVector<Value> ivs(leading);
            ivs.push_back(arith::AddIOp::create(b, loc, col0, x));
            start = PointEvaluator(b, loc, decomposition).element(init, ivs);
          } else {
            start = arith::ConstantOp::create(b, loc, b.getF32Type(),
                                              b.getF32FloatAttr(0));
          }
          auto sum = scf::ForOp::create(
              b, loc, index(0), index(count), index(1), ValueRange{start},
              [&](OpBuilder &nb, Location, Value s, ValueRange acc) {
                scf::YieldOp::create(
                    nb, loc,
                    ValueRange{arith::AddFOp::create(nb, loc, acc[0],
                                                     part(nb, s, x))});
              });
          Value value = sum.getResult(0);
          if (final && conversion)
            value = convertElement(b, conversion, value);
          return tensor::FromElementsOp::create(
              b, loc, RankedTensorType::get({1, 1}, value.getType()), value);
        });
  }

  /// A forall of `trips` blocks writing a [rows, N] tensor of `elt`, block
  /// x the slice [1, L * C] at (row, col0) = `at(x)`, which `body` is given
  /// with those and returns written.
  Value perBlock(int64_t trips, int64_t rows, Type elt,
                 function_ref<std::pair<Value, Value>(Value)> at,
                 function_ref<Value(Value row, Value col0, Value out)> body) {
    int64_t n = outShape.back();
    auto blocks = scf::ForallOp::create(
        b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(trips)},
        ValueRange{tensor::EmptyOp::create(b, loc, {rows, n}, elt)},
        std::nullopt);
    mapForall(b, blocks, /*threads=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(blocks.getBody());
    Value x = blocks.getInductionVar(0);
    auto [row, col0] = at(x);
    SmallVector<OpFoldResult> offsets = {row, col0},
                              sizes = {b.getIndexAttr(1),
                                       b.getIndexAttr(cols * lanes)},
                              strides(2, b.getIndexAttr(1));
    Value shared = blocks.getRegionIterArgs()[0];
    Value written =
        body(row, col0,
             tensor::ExtractSliceOp::create(b, loc, shared, offsets, sizes,
                                            strides));
    b.setInsertionPointToStart(blocks.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(b, loc, written, shared, offsets,
                                          sizes, strides);
    return blocks.getResult(0);
  }

  /// Partitions of K, a power of two: as many as make the blocks fill
  /// `fill` (two per multiprocessor), each thread still a chunk a
  /// partition.
  int64_t partitionsFor(int64_t fill) const {
    int64_t blocks = outShape.back() / (cols * lanes);
    for (int64_t size : ArrayRef<int64_t>(outShape).drop_back())
      blocks *= size;
    int64_t partitions = 1;
    while (partitions * blocks < fill &&
           k / chunk / (2 * partitions) >= threads / lanes)
      partitions *= 2;
    return partitions;
  }

  /// The [rows, N] result, of `elt`: with P partitions of K, P blocks per
  /// row and run of columns write [P * rows, N] f32 partial sums, and a
  /// second kernel, a block per row and run, adds them.
  Value build(int64_t partitions, Type elt) {
    int64_t n = outShape.back(), width = cols * lanes, runs = n / width;
    int64_t rows = 1;
    for (int64_t size : ArrayRef<int64_t>(outShape).drop_back())
      rows *= size;
    int64_t chunks = k / chunk, per = llvm::divideCeil(chunks, partitions);
    auto runOf = [&](Value x) -> std::pair<Value, Value> {
      Value run = arith::RemUIOp::create(b, loc, x, index(runs));
      return {arith::DivUIOp::create(b, loc, x, index(runs)),
              arith::MulIOp::create(b, loc, run, index(width))};
    };
    // Block x: partition x / (rows * runs), row (x / runs) % rows, and run
    // x % runs; its row of the partial sums x / runs.
    Value sums = perBlock(
        partitions * rows * runs, partitions * rows,
        partitions == 1 ? elt : b.getF32Type(), runOf,
        [&](Value prow, Value col0, Value out) {
          Value row = arith::RemUIOp::create(b, loc, prow, index(rows));
          Value p = arith::DivUIOp::create(b, loc, prow, index(rows));
          Value first = arith::MulIOp::create(b, loc, p, index(per));
          Value last = arith::MinUIOp::create(
              b, loc, index(chunks),
              arith::AddIOp::create(b, loc, first, index(per)));
          SmallVector<Value> leading = leadingOf(row);
          Value parts = partials(leading, col0, first, last);
          int64_t r = valueStride();
          return perColumn(
              out, leading, col0, threads / lanes, partitions == 1,
              [&](OpBuilder &nb, Value s, Value c) -> Value {
                // Column c is lane c / C's value c % C.
                Value at = arith::AddIOp::create(
                    nb, loc,
                    arith::MulIOp::create(
                        nb, loc,
                        arith::RemUIOp::create(nb, loc, c, index(cols)),
                        index(r)),
                    arith::DivUIOp::create(nb, loc, c, index(cols)));
                return tensor::ExtractOp::create(nb, loc, parts,
                                                 ValueRange{s, at});
              });
        });
    if (partitions == 1)
      return sums;
    return perBlock(rows * runs, rows, elt, runOf,
                    [&](Value row, Value col0, Value out) {
      SmallVector<Value> leading = leadingOf(row);
      return perColumn(
          out, leading, col0, partitions, /*final=*/true,
          [&](OpBuilder &nb, Value p, Value c) -> Value {
            Value prow = arith::AddIOp::create(
                nb, loc, arith::MulIOp::create(nb, loc, p, index(rows)), row);
            return tensor::ExtractOp::create(
                nb, loc, sums,
                ValueRange{prow, arith::AddIOp::create(nb, loc, col0, c)});
          });
    });
  }
};
} // namespace

Value mlir::fuel::buildGpuQuantizedAlongN(
    RewriterBase &rewriter, linalg::GenericOp contraction,
    linalg::GenericOp conversion, Value term,
    const llvm::SmallPtrSetImpl<Operation *> &decomposition,
    const GpuScheduleOptions &options, int64_t chunk) {
  SmallVector<int64_t> ranges = contraction.getStaticLoopRanges();
  int64_t k = ranges.back();
  SmallVector<int64_t> outShape(ArrayRef<int64_t>(ranges).drop_back());
  int64_t cols = kColumns;
  while (cols > 1 && outShape.back() % cols != 0)
    cols /= 2;
  if (!readsWeightAlongN(contraction) || cols == 1)
    return Value();
  int64_t lanes = kLanes;
  while (lanes > 1 && (outShape.back() / cols) % lanes != 0)
    lanes /= 2;
  Location loc = contraction.getLoc();
  int64_t threads = threadsFor(lanes * (k / chunk), options.maxThreads);
  AlongNDecode decode{rewriter,
                      loc,
                      contraction,
                      conversion,
                      term,
                      decomposition,
                      outShape,
                      k,
                      chunk,
                      cols,
                      lanes,
                      threads};
  // The partials within the static limit of workgroup memory (32 threads'
  // take a few KiB).
  while (decode.threads > 32 &&
         decode.threads / lanes * decode.rowStride() * 4 > kMaxSharedBytes)
    decode.threads /= 2;
  Operation *last = conversion ? conversion : contraction;
  auto resultType = cast<RankedTensorType>(last->getResult(0).getType());
  Value rowsByN = decode.build(decode.partitionsFor(2 * options.computeUnits),
                               resultType.getElementType());
  int64_t rank = resultType.getRank();
  if (rank == 1)
    return tensor::CollapseShapeOp::create(
        rewriter, loc, resultType, rowsByN,
        ArrayRef<ReassociationIndices>{{0, 1}});
  if (rank == 2)
    return rowsByN;
  SmallVector<ReassociationIndices> groups(2);
  for (int64_t d = 0; d + 1 < rank; ++d)
    groups[0].push_back(d);
  groups[1].push_back(rank - 1);
  return tensor::ExpandShapeOp::create(rewriter, loc, resultType, rowsByN,
                                       groups);
}
