//===- GpuStagedLinear.cpp - Contractions with shared-memory tiles --------===//
//
// A contraction on a GPU with its operands staged in shared memory
// (GpuStaged.h: fused_linear, the quantized matmuls' prefill with their
// weight decoded as it is staged, the convolutions): a block per TM x TN
// tile of the output (and per leading index), TM/T x TN/T threads, each
// owning a T x T tile of it: 64 x 64 (or down to 32 x 32) tiles of 4 x 4,
// or 128 x 128 tiles of 8 x 8 where the grid of those still has a block
// for every multiprocessor (GpuScheduleOptions::computeUnits); where even
// 64 x 64 tiles leave some without, halves of those (M first). The block
// walks K in steps of KT; at each step
//   1. all its threads copy the A tile [TM, KT] and the B tile [KT, TN]
//      from global memory into workgroup memory (widened to f32), a warp's
//      loads consecutive in memory; where an operand is contiguous along
//      the tile's columns (fused_linear's a and w), a thread copies chunks
//      of up to 16 bytes of consecutive columns, one vector read each;
//   2. each thread adds the products of its T rows of the A tile and its T
//      columns of the B tile to its accumulators (vector.contract: fused
//      multiply-adds); in 8 x 8 tiles a thread's columns are two groups of
//      4 in the B tile's two halves, so that shared loads do not conflict
//      (StagedBuilder::bColumn).
// Each element of A is then read from global memory N/TN times, not N/T
// times, and each element of B M/TM times, not M/T times. After the last
// step each thread finishes its tile (fused_linear: adds the bias) and
// writes it.
//
// In the tensor form each of these is a thread loop whose iterations are
// independent (so the form runs on the CPU, loop by loop): the copy is a
// thread loop whose shared outputs are the two workgroup tiles, and the
// accumulators are a tensor [TM/T, TN/T, T, T] carried by the K loop in
// the block's body, each thread loop touching the slice of its thread.
// fuel-gpu-map-forall puts the barriers between the thread loops (inside
// the K loop too), and fuel-gpu-private-allocs makes that tensor's buffer
// the one T x T slice each thread uses (registers once promoted).
//
//===----------------------------------------------------------------------===//

#include "GpuStaged.h"
#include "GpuBlockLoops.h"
#include "GpuSchedules.h"
#include "ScheduleUtils.h"

#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <numeric>

using namespace mlir;
using namespace mlir::fuel;

namespace {
/// A thread's tile of the output: 4 x 4, or 8 x 8 in the large tiles.
constexpr int64_t kThreadTile = 4, kLargeThreadTile = 8;
/// The large block tile's side: 16 x 16 threads of 8 x 8.
constexpr int64_t kLargeTile = 128;

/// The tiles of a staged contraction.
struct StagedTiles {
  /// Leading extent (1 when a is 2-d), M, K, N.
  int64_t lead, m, k, n;
  /// The block's tile of the output, a thread's (square), and the K step.
  int64_t tileM, tileN, thread = kThreadTile, stepK;
  /// The columns of A's and B's tiles a thread copies at once.
  int64_t aChunk = 1, bChunk = 1;

  int64_t threadsY() const { return tileM / thread; }
  int64_t threadsX() const { return tileN / thread; }
  int64_t threads() const { return threadsY() * threadsX(); }

  /// The tiles for `c`, if some fit: M and N multiples of 32, K of 8, at
  /// least 64 threads, a grid the GPU holds.
  static std::optional<StagedTiles> of(const StagedContraction &c,
                                       const GpuScheduleOptions &options) {
    StagedTiles t;
    t.lead = c.lead;
    t.m = c.m;
    t.k = c.k;
    t.n = c.n;
    int64_t maxThreads = options.maxThreads;
    // Static sizes only (a dynamic one is negative).
    if (t.lead <= 0 || t.m <= 0 || t.n <= 0 || t.k <= 0)
      return std::nullopt;
    t.stepK = t.k % 16 == 0 ? 16 : t.k % 8 == 0 ? 8 : 0;
    // 128 x 128 tiles of 256 threads, 8 x 8 each, where the shape divides
    // into them and they still give every multiprocessor a block: twice
    // the products per element read from workgroup memory as 4 x 4, and
    // each element of A and B read from global memory half as often.
    int64_t largeThreads = (kLargeTile / kLargeThreadTile) *
                           (kLargeTile / kLargeThreadTile);
    if (t.m % kLargeTile == 0 && t.n % kLargeTile == 0 &&
        largeThreads <= maxThreads &&
        t.lead * (t.m / kLargeTile) * (t.n / kLargeTile) >=
            options.computeUnits) {
      t.tileM = t.tileN = kLargeTile;
      t.thread = kLargeThreadTile;
    } else {
      // 64 x 64 tiles of 256 threads where the shape and max-threads
      // allow, down to 32 x 32 (64 threads).
      auto pick = [](int64_t size) -> int64_t {
        return size % 64 == 0 ? 64 : size % 32 == 0 ? 32 : 0;
      };
      t.tileM = pick(t.m);
      t.tileN = pick(t.n);
      auto halve = [&] {
        if (t.tileM >= t.tileN)
          t.tileM /= 2;
        else
          t.tileN /= 2;
      };
      while (t.tileM && t.tileN && t.threads() > maxThreads &&
             std::max(t.tileM, t.tileN) > 32)
        halve();
      // Where the grid leaves multiprocessors without a block, smaller
      // tiles (M's first, to keep the rows of the output and of B wide),
      // down to 32 x 32: each block's threads still own 4 x 4 tiles, and
      // the blocks of a small grid share the multiprocessors.
      while (t.tileM && t.tileN && std::max(t.tileM, t.tileN) > 32 &&
             t.lead * (t.m / t.tileM) * (t.n / t.tileN) <
                 options.computeUnits)
        halve();
    }
    if (!t.tileM || !t.tileN || !t.stepK || t.threads() > maxThreads ||
        t.lead > 65535 || t.m / t.tileM > 65535)
      return std::nullopt;
    // Chunks of the operands that are contiguous along the tile's columns.
    if (c.aChunks)
      t.aChunk = largestChunk({t.tileM, t.stepK, false, {}}, t.threads(),
                              c.aChunk);
    // (In 8 x 8 tiles' B layout, bColumn's, 4 consecutive columns of B
    // at most are consecutive in the tile.)
    if (c.bChunks && !c.bAlongK)
      t.bChunk = largestChunk(
          {t.stepK, t.tileN, false, {}}, t.threads(),
          t.thread == kThreadTile ? c.bChunk : std::min(c.bChunk, kThreadTile));
    return t;
  }
};

/// Builds the staged form of one contraction.
class StagedBuilder {
public:
  StagedBuilder(RewriterBase &b, Location loc, const StagedContraction &c,
                const StagedTiles &tiles)
      : b(b), loc(loc), c(c), tiles(tiles), f32(b.getF32Type()) {}

  Value build();

private:
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  OpFoldResult attr(int64_t v) { return b.getIndexAttr(v); }

  /// The thread loop over the block's TM/4 x TN/4 threads, with `init` as
  /// its one shared output: thread (y, x) gets its slice at `offsets` with
  /// `sizes` and `strides` and returns it written (`body`).
  Value
  threadLoop(Value init, ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides,
             function_ref<SmallVector<OpFoldResult>(Value, Value)> offsets,
             function_ref<Value(Value, Value, Value)> body);

  /// Thread (y, x)'s slice of the accumulators: its tile.
  SmallVector<OpFoldResult> accumulatorAt(Value y, Value x) {
    return {y, x, attr(0), attr(0)};
  }

  /// The staged B tile's layout. Thread x's columns x * T, ..., x * T +
  /// T - 1 are groups of 4 (16 bytes of f32), group h of every thread in
  /// the tile's h-th part (TN / (T / 4) columns): the 8 threads that one
  /// 16-byte shared load serves at a time (a quarter of a warp) read 128
  /// consecutive bytes, a bank each, where 8 x 8 tiles stored whole would
  /// put every other thread on the same banks. With 4 x 4 tiles the
  /// layout is the output's. The column of B (in the block's tile) that
  /// the B tile holds at `col`.
  Value bColumn(Value col) {
    int64_t groups = tiles.thread / kThreadTile;
    if (groups == 1)
      return col;
    int64_t part = tiles.tileN / groups;
    AffineExpr p = b.getAffineDimExpr(0);
    AffineExpr column = (p % part).floorDiv(kThreadTile) * tiles.thread +
                        p.floorDiv(part) * kThreadTile + p % kThreadTile;
    return affine::AffineApplyOp::create(
        b, loc, AffineMap::get(1, 0, column), ValueRange{col});
  }

  /// Thread x's columns of the B tile, [KT, T] (bColumn's layout).
  Value threadColumns(Value bTile, Value x) {
    int64_t tk = tiles.stepK, tt = tiles.thread;
    int64_t groups = tt / kThreadTile;
    if (groups == 1)
      return tensor::ExtractSliceOp::create(
          b, loc, bTile,
          ArrayRef<OpFoldResult>{attr(0),
                                 arith::MulIOp::create(b, loc, x, index(tt))
                                     .getResult()},
          ArrayRef<OpFoldResult>{attr(tk), attr(tt)},
          ArrayRef<OpFoldResult>{attr(1), attr(1)});
    int64_t part = tiles.tileN / groups;
    Value parts = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({tk, groups, part}, f32), bTile,
        ArrayRef<ReassociationIndices>{{0}, {1, 2}});
    Value mine = tensor::ExtractSliceOp::create(
        b, loc, parts,
        ArrayRef<OpFoldResult>{
            attr(0), attr(0),
            arith::MulIOp::create(b, loc, x, index(kThreadTile)).getResult()},
        ArrayRef<OpFoldResult>{attr(tk), attr(groups), attr(kThreadTile)},
        ArrayRef<OpFoldResult>{attr(1), attr(1), attr(1)});
    return tensor::CollapseShapeOp::create(
        b, loc, mine, ArrayRef<ReassociationIndices>{{0}, {1, 2}});
  }

  RewriterBase &b;
  Location loc;
  const StagedContraction &c;
  const StagedTiles &tiles;
  Type f32;
};
} // namespace

Value StagedBuilder::threadLoop(
    Value init, ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides,
    function_ref<SmallVector<OpFoldResult>(Value, Value)> offsets,
    function_ref<Value(Value, Value, Value)> body) {
  return threadSlices(
      b, loc, {tiles.threadsY(), tiles.threadsX()}, init, sizes, strides,
      [&](ValueRange ids) { return offsets(ids[0], ids[1]); },
      [&](ValueRange ids, Value slice) { return body(ids[0], ids[1], slice); });
}

bool mlir::fuel::canStageTile(const WorkgroupTile &tile, int64_t threads) {
  if (tile.chunk > 1 && (tile.cols % tile.chunk != 0 ||
                         workgroupRowStride(tile) % tile.chunk != 0))
    return false;
  int64_t fast = tile.alongRows ? tile.rows : tile.cols / tile.chunk;
  int64_t slow = tile.alongRows ? tile.cols / tile.chunk : tile.rows;
  return slow % (threads / std::gcd(fast, threads)) == 0;
}

int64_t mlir::fuel::largestChunk(WorkgroupTile tile, int64_t threads,
                                 int64_t most) {
  for (tile.chunk = most; tile.chunk > 1; tile.chunk /= 2)
    if (canStageTile(tile, threads))
      return tile.chunk;
  return 1;
}

int64_t mlir::fuel::workgroupRowStride(const WorkgroupTile &tile) {
  return !tile.into && (tile.alongRows || tile.readByRow) &&
                 tile.cols % 8 == 0
             ? tile.cols + 4
             : tile.cols;
}

/// The widest access of workgroup memory a thread makes at once, in bits,
/// and the lanes whose such accesses one wavefront serves (128 bytes).
static constexpr int64_t kPieceBits = 128;
static constexpr int64_t kPieceLanes = 8;

/// `chunk` (a vector) as `pieces` (2 or more) equal slices and the offset
/// of each in the chunk, in the order thread `t` writes them: thread t
/// starts at its piece (t / (8 / pieces)) mod pieces. Where consecutive
/// threads write consecutive chunks, their k-th writes then cover 8
/// distinct 16-byte groups of banks in every 8 threads that one wavefront
/// serves, where writing the chunks whole (each thread its first piece,
/// then its second, ...) puts threads 8 / pieces apart on the same banks
/// (2-way conflicts for the 32-byte chunks of f16 widened to f32).
static SmallVector<std::pair<Value, Value>>
rotatedPieces(RewriterBase &b, Location loc, Value chunk, Value t,
              int64_t pieces) {
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  // A widened chunk (f16 read as f32) is sliced and selected as it was
  // read, half the bits, and each piece widened.
  auto widened = chunk.getDefiningOp<arith::ExtFOp>();
  Value source = widened ? widened.getIn() : chunk;
  auto type = cast<VectorType>(chunk.getType());
  int64_t width = type.getNumElements() / pieces;
  SmallVector<Value> slices;
  for (int64_t p = 0; p < pieces; ++p)
    slices.push_back(vector::ExtractStridedSliceOp::create(
        b, loc, source, ArrayRef<int64_t>{p * width},
        ArrayRef<int64_t>{width}, ArrayRef<int64_t>{1}));
  Value first = arith::RemUIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, t, index(kPieceLanes / pieces)),
      index(pieces));
  SmallVector<std::pair<Value, Value>> order;
  for (int64_t k = 0; k < pieces; ++k) {
    // Piece (first + k) mod pieces: the one whose index it is.
    Value piece =
        k ? arith::RemUIOp::create(
                b, loc, arith::AddIOp::create(b, loc, first, index(k)),
                index(pieces))
                .getResult()
          : first;
    Value value = slices[0];
    for (int64_t p = 1; p < pieces; ++p)
      value = arith::SelectOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, piece,
                                index(p)),
          slices[p], value);
    if (widened)
      value = arith::ExtFOp::create(
          b, loc, VectorType::get({width}, type.getElementType()), value);
    order.push_back(
        {value, arith::MulIOp::create(b, loc, piece, index(width))});
  }
  if (widened && widened->use_empty())
    b.eraseOp(widened);
  return order;
}

SmallVector<Value> mlir::fuel::stageTiles(RewriterBase &b, Location loc,
                                          ArrayRef<int64_t> threadDims,
                                          ArrayRef<WorkgroupTile> tiles) {
  MLIRContext *ctx = b.getContext();
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  int64_t threads = 1;
  for (int64_t dim : threadDims)
    threads *= dim;
  SmallVector<Value> inits;
  for (const WorkgroupTile &tile : tiles) {
    assert(canStageTile(tile, threads) && "a tile the threads cannot copy");
    assert((!tile.into || cast<RankedTensorType>(tile.into.getType())
                                  .getShape() ==
                              ArrayRef<int64_t>{tile.rows, tile.cols}) &&
           "a destination of the tile's shape");
    Value init = tile.into ? tile.into
                           : workgroupTensor(
                                 b, loc, {tile.rows, workgroupRowStride(tile)});
    // Chunked: the tile as [rows, stride / chunk, chunk], a thread's slice
    // whole chunks.
    if (tile.chunk > 1)
      init = tensor::ExpandShapeOp::create(
          b, loc,
          RankedTensorType::get({tile.rows,
                                 workgroupRowStride(tile) / tile.chunk,
                                 tile.chunk},
                                getElementTypeOrSelf(init.getType())),
          init, ArrayRef<ReassociationIndices>{{0}, {1, 2}});
    inits.push_back(init);
  }
  auto loop = scf::ForallOp::create(
      b, loc, getAsIndexOpFoldResult(ctx, threadDims), inits, std::nullopt);
  mapForall(b, loop, /*threads=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  // Thread t = y * TX + x.
  Value t = loop.getInductionVar(0);
  for (unsigned i = 1; i < threadDims.size(); ++i)
    t = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, t, index(threadDims[i])),
        loop.getInductionVar(i));
  SmallVector<std::array<SmallVector<OpFoldResult>, 3>> slices;
  SmallVector<Value> written;
  for (auto [tile, shared] : llvm::zip(tiles, loop.getRegionIterArgs())) {
    // Along columns, the threads form R = T / G groups of G = gcd(cols, T)
    // consecutive threads: thread t copies the columns t % G, t % G + G,
    // ... of rows t / G, t / G + R, ... (every row's columns t, t + T, ...
    // when T divides the columns; column t % cols of every R-th row when
    // the columns divide T). Along rows, the same with rows and columns
    // swapped. Chunked, the same with chunks for columns.
    int64_t fast = tile.alongRows ? tile.rows : tile.cols / tile.chunk;
    int64_t slow = tile.alongRows ? tile.cols / tile.chunk : tile.rows;
    int64_t group = std::gcd(fast, threads);
    bool wide = group == threads;
    int64_t perPass = threads / group;
    int64_t slowCount = slow / perPass, fastCount = fast / group;
    int64_t fastStride = fastCount > 1 ? group : 1;
    auto ordered = [&](auto slowPart, auto fastPart) {
      using T = decltype(slowPart);
      return tile.alongRows ? SmallVector<T>{fastPart, slowPart}
                            : SmallVector<T>{slowPart, fastPart};
    };
    Value slow0 = wide ? index(0)
                       : arith::DivUIOp::create(b, loc, t, index(group))
                             .getResult();
    Value fast0 = wide ? t
                       : arith::RemUIOp::create(b, loc, t, index(group))
                             .getResult();
    std::array<SmallVector<OpFoldResult>, 3> slice = {
        ordered(OpFoldResult(slow0), OpFoldResult(fast0)),
        getAsIndexOpFoldResult(ctx, ordered(slowCount, fastCount)),
        getAsIndexOpFoldResult(ctx, ordered(perPass, fastStride))};
    if (tile.chunk > 1) {
      slice[0].push_back(b.getIndexAttr(0));
      slice[1].push_back(b.getIndexAttr(tile.chunk));
      slice[2].push_back(b.getIndexAttr(1));
    }
    Value mine = tensor::ExtractSliceOp::create(b, loc, shared, slice[0],
                                                slice[1], slice[2]);
    // Chunks wider than 16 bytes of workgroup memory, every 8 consecutive
    // threads on 8 consecutive chunks (a pass over whole rows, or over
    // groups of threads a multiple of 8): written in rotated 16-byte
    // pieces.
    int64_t pieces = 1;
    int64_t bits =
        getElementTypeOrSelf(shared.getType()).getIntOrFloatBitWidth();
    bool consecutive =
        wide || group % kPieceLanes == 0 ||
        (group == fast && workgroupRowStride(tile) == tile.cols);
    if (tile.chunk * bits > kPieceBits && !tile.alongRows && consecutive &&
        threads % kPieceLanes == 0 &&
        tile.chunk * bits <= kPieceBits * kPieceLanes)
      pieces = tile.chunk * bits / kPieceBits;
    for (int64_t i = 0; i < slowCount; ++i) {
      Value slowAt = arith::AddIOp::create(b, loc, slow0, index(i * perPass));
      for (int64_t j = 0; j < fastCount; ++j) {
        Value fastAt = j ? arith::AddIOp::create(b, loc, fast0,
                                                 index(j * fastStride))
                               .getResult()
                         : fast0;
        SmallVector<Value> at = ordered(slowAt, fastAt);
        if (tile.chunk > 1) {
          // Columns at[1] * chunk, ... of row at[0], as one vector (its
          // pieces in the thread's order where rotated).
          Value col = arith::MulIOp::create(b, loc, at[1], index(tile.chunk));
          SmallVector<Value> into = ordered(index(i), index(j));
          if (pieces == 1) {
            into.push_back(index(0));
            mine = vector::TransferWriteOp::create(
                       b, loc, tile.chunkElements(at[0], col), mine, into,
                       ArrayRef<bool>{true})
                       .getResult();
            continue;
          }
          for (auto [value, offset] : rotatedPieces(
                   b, loc, tile.chunkElements(at[0], col), t, pieces)) {
            SmallVector<Value> piece = into;
            piece.push_back(offset);
            mine = vector::TransferWriteOp::create(b, loc, value, mine, piece,
                                                   ArrayRef<bool>{true})
                       .getResult();
          }
          continue;
        }
        mine = tensor::InsertOp::create(b, loc, tile.element(at[0], at[1]),
                                        mine, ordered(index(i), index(j)));
      }
    }
    slices.push_back(slice);
    written.push_back(mine);
  }
  b.setInsertionPointToStart(loop.getTerminator().getBody());
  for (auto [slice, value, shared] :
       llvm::zip(slices, written, loop.getRegionIterArgs()))
    tensor::ParallelInsertSliceOp::create(b, loc, value, shared, slice[0],
                                          slice[1], slice[2]);
  b.setInsertionPointAfter(loop);
  SmallVector<Value> results;
  for (auto [tile, result] : llvm::zip(tiles, loop.getResults())) {
    Value staged = result;
    if (tile.chunk > 1)
      staged = tensor::CollapseShapeOp::create(
          b, loc, staged, ArrayRef<ReassociationIndices>{{0}, {1, 2}});
    if (workgroupRowStride(tile) != tile.cols)
      // The tile's columns of the wider tensor.
      staged = tensor::ExtractSliceOp::create(
          b, loc, staged,
          ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(tile.rows),
                                 b.getIndexAttr(tile.cols)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
    results.push_back(staged);
  }
  return results;
}

Value StagedBuilder::build() {
  MLIRContext *ctx = b.getContext();
  Type elt = c.resultType.getElementType();
  int64_t tm = tiles.tileM, tn = tiles.tileN, tk = tiles.stepK;
  int64_t ty = tiles.threadsY(), tx = tiles.threadsX(), tt = tiles.thread;

  // The block loop: (leading index,) row tile, column tile.
  SmallVector<OpFoldResult> grid;
  if (c.batched)
    grid.push_back(attr(tiles.lead));
  grid.append({attr(tiles.m / tm), attr(tiles.n / tn)});
  Value empty = tensor::EmptyOp::create(b, loc, c.resultType.getShape(), elt);
  auto blocks = scf::ForallOp::create(b, loc, grid, ValueRange{empty},
                                      std::nullopt);
  mapForall(b, blocks, /*threads=*/false);
  b.setInsertionPointToStart(blocks.getBody());
  SmallVector<Value> ivs = blocks.getInductionVars();
  Value lead = c.batched ? ivs[0] : Value();
  Value m0 = arith::MulIOp::create(b, loc, ivs[ivs.size() - 2], index(tm));
  Value n0 = arith::MulIOp::create(b, loc, ivs.back(), index(tn));

  // The accumulators, zero.
  auto tileType = RankedTensorType::get({tt, tt}, f32);
  Value accInit = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{ty, tx, tt, tt}, f32);
  SmallVector<int64_t> oneTile = {1, 1, tt, tt};
  SmallVector<int64_t> unit = {1, 1, 1, 1};
  auto accumulatorLoop = [&](Value init,
                             function_ref<Value(Value, Value, Value)> body) {
    // The slice rank-reduced to the thread's tile.
    auto loop = scf::ForallOp::create(
        b, loc, ArrayRef<OpFoldResult>{attr(ty), attr(tx)}, ValueRange{init},
        b.getArrayAttr(
            {gpu::GPUThreadMappingAttr::get(ctx, gpu::MappingId::DimY),
             gpu::GPUThreadMappingAttr::get(ctx, gpu::MappingId::DimX)}));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value y = loop.getInductionVar(0), x = loop.getInductionVar(1);
    Value shared = loop.getRegionIterArgs()[0];
    SmallVector<OpFoldResult> at = accumulatorAt(y, x);
    SmallVector<OpFoldResult> sizes = getAsIndexOpFoldResult(ctx, oneTile),
                              strides = getAsIndexOpFoldResult(ctx, unit);
    Value mine = tensor::ExtractSliceOp::create(b, loc, tileType, shared, at,
                                                sizes, strides);
    Value written = body(y, x, mine);
    b.setInsertionPointToStart(loop.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(b, loc, written, shared, at, sizes,
                                          strides);
    return loop.getResult(0);
  };
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
  Value acc = accumulatorLoop(accInit, [&](Value, Value, Value mine) -> Value {
    return linalg::FillOp::create(b, loc, zero, mine).getResult(0);
  });

  // The K loop: stage, then accumulate.
  auto steps = scf::ForOp::create(
      b, loc, index(0), index(tiles.k), index(tk), ValueRange{acc},
      [&](OpBuilder &nb, Location, Value k0, ValueRange carried) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        auto aElement = [&](Value row, Value col) {
          return c.a(b, lead, arith::AddIOp::create(b, loc, m0, row),
                     arith::AddIOp::create(b, loc, k0, col));
        };
        auto bElement = [&](Value row, Value col) {
          return c.b(b, lead, arith::AddIOp::create(b, loc, k0, row),
                     arith::AddIOp::create(b, loc, n0, bColumn(col)));
        };
        auto aChunk = [&](Value row, Value col) {
          return c.aChunks(b, lead, arith::AddIOp::create(b, loc, m0, row),
                           arith::AddIOp::create(b, loc, k0, col),
                           tiles.aChunk);
        };
        auto bChunk = [&](Value row, Value col) {
          return c.bChunks(b, lead, arith::AddIOp::create(b, loc, k0, row),
                           arith::AddIOp::create(b, loc, n0, bColumn(col)),
                           tiles.bChunk);
        };
        SmallVector<Value> staged = stageTiles(
            b, loc, {ty, tx},
            {WorkgroupTile{tm, tk, /*alongRows=*/false, aElement,
                           tiles.aChunk, aChunk},
             WorkgroupTile{tk, tn, c.bAlongK, bElement, tiles.bChunk,
                           bChunk}});
        Value aTile = staged[0], bTile = staged[1];
        Value next = accumulatorLoop(
            carried[0], [&](Value y, Value x, Value mine) -> Value {
              Value rows = arith::MulIOp::create(b, loc, y, index(tt));
              Value aPart = tensor::ExtractSliceOp::create(
                  b, loc, aTile, ArrayRef<OpFoldResult>{rows, attr(0)},
                  ArrayRef<OpFoldResult>{attr(tt), attr(tk)},
                  ArrayRef<OpFoldResult>{attr(1), attr(1)});
              Value bPart = threadColumns(bTile, x);
              return linalg::MatmulOp::create(b, loc, ValueRange{aPart, bPart},
                                              ValueRange{mine})
                  .getResult(0);
            });
        scf::YieldOp::create(b, loc, next);
      });
  acc = steps.getResult(0);

  // Each thread's tile finished and written into the block's.
  SmallVector<OpFoldResult> blockOffsets, blockSizes, blockStrides;
  if (c.batched) {
    blockOffsets.push_back(lead);
    blockSizes.push_back(attr(1));
    blockStrides.push_back(attr(1));
  }
  blockOffsets.append({m0, n0});
  blockSizes.append({attr(tm), attr(tn)});
  blockStrides.append({attr(1), attr(1)});
  Value blockOut = tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({tm, tn}, elt),
      blocks.getRegionIterArgs()[0], blockOffsets, blockSizes, blockStrides);
  Value written = threadLoop(
      blockOut, {tt, tt}, {1, 1},
      [&](Value y, Value x) -> SmallVector<OpFoldResult> {
        Value rows = arith::MulIOp::create(b, loc, y, index(tt));
        Value cols = arith::MulIOp::create(b, loc, x, index(tt));
        return {rows, cols};
      },
      [&](Value y, Value x, Value mine) -> Value {
        Value sums = tensor::ExtractSliceOp::create(
            b, loc, tileType, acc, accumulatorAt(y, x),
            getAsIndexOpFoldResult(ctx, oneTile),
            getAsIndexOpFoldResult(ctx, unit));
        Value rows = arith::AddIOp::create(
            b, loc, m0, arith::MulIOp::create(b, loc, y, index(tt)));
        Value cols = arith::AddIOp::create(
            b, loc, n0, arith::MulIOp::create(b, loc, x, index(tt)));
        return c.finish(b, lead, rows, cols, sums, mine);
      });
  b.setInsertionPointToStart(blocks.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(b, loc, written,
                                        blocks.getRegionIterArgs()[0],
                                        blockOffsets, blockSizes, blockStrides);
  vectorizeInside(b, blocks, /*contractions=*/true);
  // The finish reads and writes rows of its tile (an 8 x 8 tile's f32 rows
  // are 32 bytes) in pieces of 16 bytes, each one aligned load or store.
  RewritePatternSet split(b.getContext());
  populateSplitWideTransfersPatterns(split, /*maxBytes=*/16);
  applyInside(written.getDefiningOp(), std::move(split));
  // A thread's B columns in groups (bColumn) read as [KT, T / 4, 4].
  if (tt != kThreadTile) {
    RewritePatternSet groups(b.getContext());
    populateFoldReshapesIntoTransfersPatterns(groups);
    applyInside(blocks, std::move(groups));
  }
  return blocks.getResult(0);
}

Value mlir::fuel::widenToF32(OpBuilder &b, Location loc, Value v) {
  return v.getType().isF32()
             ? v
             : arith::ExtFOp::create(b, loc, b.getF32Type(), v).getResult();
}

Value mlir::fuel::readChunkAsF32(OpBuilder &b, Location loc, Value from,
                                 ValueRange at, int64_t width) {
  Type elt = cast<RankedTensorType>(from.getType()).getElementType();
  Value v = vector::TransferReadOp::create(
      b, loc, VectorType::get({width}, elt), from, at,
      ub::PoisonOp::create(b, loc, elt), ArrayRef<bool>{true});
  auto f32 = VectorType::get({width}, b.getF32Type());
  return elt.isF32() ? v : arith::ExtFOp::create(b, loc, f32, v).getResult();
}

Value mlir::fuel::finishTile(OpBuilder &b, Location loc, Value sums,
                             Value mine, Value addend, unsigned addendDim,
                             function_ref<Value(OpBuilder &, Value)> narrow) {
  Type elt = cast<RankedTensorType>(mine.getType()).getElementType();
  AffineMap all = b.getMultiDimIdentityMap(2);
  SmallVector<Value> inputs = {sums};
  SmallVector<AffineMap> maps = {all};
  bool perElement = addend && isa<RankedTensorType>(addend.getType());
  if (perElement) {
    inputs.push_back(addend);
    maps.push_back(AffineMap::get(2, 0, b.getAffineDimExpr(addendDim),
                                  b.getContext()));
  }
  maps.push_back(all);
  return linalg::GenericOp::create(
             b, loc, mine.getType(), inputs, ValueRange{mine}, maps,
             SmallVector<utils::IteratorType>(2,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value v = args[0];
               if (addend)
                 v = arith::AddFOp::create(
                     nb, nl, v,
                     perElement ? widenToF32(nb, nl, args[1]) : addend);
               if (elt != v.getType())
                 v = narrow ? narrow(nb, v)
                            : arith::TruncFOp::create(nb, nl, elt, v);
               linalg::YieldOp::create(nb, nl, v);
             })
      .getResult(0);
}

int64_t mlir::fuel::stagedThreadTile(Value sums) {
  return cast<RankedTensorType>(sums.getType()).getDimSize(0);
}

bool mlir::fuel::canStageContraction(const StagedContraction &c,
                                     const GpuScheduleOptions &options) {
  return StagedTiles::of(c, options).has_value();
}

Value mlir::fuel::buildStagedContraction(RewriterBase &rewriter, Location loc,
                                         const StagedContraction &c,
                                         const GpuScheduleOptions &options) {
  std::optional<StagedTiles> tiles = StagedTiles::of(c, options);
  assert(tiles && "a contraction canStageContraction rejects");
  OpBuilder::InsertionGuard guard(rewriter);
  return StagedBuilder(rewriter, loc, c, *tiles).build();
}

//===----------------------------------------------------------------------===//
// fused_linear
//===----------------------------------------------------------------------===//

/// fused_linear as a staged contraction: A is a, B is b, and the finish
/// adds the bias (widened) and narrows to the result's type.
static std::optional<StagedContraction> stagedLinear(FusedOp op) {
  auto linear = FusedLinearView::match(op);
  if (!linear || !hasF32OrHalfTensors(op))
    return std::nullopt;
  auto a = cast<RankedTensorType>(linear->getA().getType());
  auto w = cast<RankedTensorType>(linear->getB().getType());
  if (a.getRank() > 3)
    return std::nullopt;
  StagedContraction c;
  c.batched = a.getRank() == 3;
  c.lead = c.batched ? a.getShape()[0] : 1;
  c.m = a.getShape()[a.getRank() - 2];
  c.k = w.getShape()[0];
  c.n = w.getShape()[1];
  c.resultType = cast<RankedTensorType>(op->getResult(0).getType());
  Location loc = op.getLoc();
  auto read = [loc](OpBuilder &b, Value from, ValueRange at) -> Value {
    return widenToF32(b, loc, tensor::ExtractOp::create(b, loc, from, at));
  };
  Value aValue = linear->getA(), wValue = linear->getB(),
        bias = linear->getBias();
  bool batched = c.batched;
  c.a = [=](OpBuilder &b, Value lead, Value m, Value k) {
    return batched ? read(b, aValue, {lead, m, k}) : read(b, aValue, {m, k});
  };
  c.b = [=](OpBuilder &b, Value, Value k, Value n) {
    return read(b, wValue, {k, n});
  };
  // a along K and w along N: 16 bytes at once.
  c.aChunk = 128 / a.getElementType().getIntOrFloatBitWidth();
  c.bChunk = 128 / w.getElementType().getIntOrFloatBitWidth();
  c.aChunks = [=](OpBuilder &b, Value lead, Value m, Value k,
                  int64_t width) {
    return batched ? readChunkAsF32(b, loc, aValue, {lead, m, k}, width)
                   : readChunkAsF32(b, loc, aValue, {m, k}, width);
  };
  c.bChunks = [=](OpBuilder &b, Value, Value k, Value n, int64_t width) {
    return readChunkAsF32(b, loc, wValue, {k, n}, width);
  };
  c.finish = [=](OpBuilder &b, Value, Value, Value cols, Value sums,
                 Value mine) -> Value {
    Value biasPart = tensor::ExtractSliceOp::create(
        b, loc, bias, ArrayRef<OpFoldResult>{cols},
        ArrayRef<OpFoldResult>{b.getIndexAttr(stagedThreadTile(sums))},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
    return finishTile(b, loc, sums, mine, biasPart, /*addendDim=*/1);
  };
  return c;
}

bool mlir::fuel::canStageGpuLinear(FusedOp op,
                                   const GpuScheduleOptions &options) {
  std::optional<StagedContraction> c = stagedLinear(op);
  return c && canStageContraction(*c, options);
}

LogicalResult mlir::fuel::buildGpuStagedLinear(
    RewriterBase &rewriter, FusedOp op, const GpuScheduleOptions &options) {
  std::optional<StagedContraction> c = stagedLinear(op);
  assert(c && "not a fused_linear canStageGpuLinear accepts");
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  rewriter.replaceOp(
      op, buildStagedContraction(rewriter, op.getLoc(), *c, options));
  return success();
}
