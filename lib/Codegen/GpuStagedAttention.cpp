//===- GpuStagedAttention.cpp - Attention with shared-memory key blocks ---===//
//
// flash_attn's GPU form with its key and value blocks staged in workgroup
// memory: a block per (batch, head, query block) of Bq rows, a thread per
// query row, and the key loop in the block's body rather than in each
// thread. At each block of 16 keys
//   1. all the block's threads copy the keys, transposed ([D, 16]; its
//      rows 20 words apart, workgroupRowStride; each thread writes 4 keys
//      of a row at once, free of bank conflicts), and
//      the values ([16, Dv]) from global memory into workgroup memory
//      (widened to f32), consecutive threads on consecutive elements of a
//      key's or value's row (coalesced loads);
//   2. each thread computes its row's 16 scores from the staged keys, masks
//      them, and updates its running max, sum and accumulator row from the
//      staged values (the online softmax of Attention.cpp).
// Each key and value is then read from global memory once per query block,
// not once per query row, and every thread of a warp reads the same staged
// element at a time (a broadcast, no bank conflicts). The transposed keys
// make the scores, like p . v, a sum of rows of the tile scaled by one
// element each (fused multiply-adds on vector loads): read as [16, D], the
// same contraction took 178 registers for D = 64 on sm_90, 134 this way.
// The key loop covers the keys any row of the block sees (causal and
// windowed attention); each row masks the rest.
//
// The rows' state (m [Bq], l [Bq], acc [Bq, Dv]) is carried by the key
// loop (GpuStagedRows.h). The block's queries, which each thread reads at
// every step, are copied into workgroup memory once where they fit
// own-rows-bytes (stageOwnRows), else read from global memory through the
// caches as in the unstaged form; the output rows leave through that tile
// (writeRows).
//
//===----------------------------------------------------------------------===//

#include "Contraction.h"
#include "GpuBlockLoops.h"
#include "GpuStaged.h"
#include "GpuStagedRows.h"
#include "ScheduleUtils.h"

#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fuel;
using namespace mlir::fuel::attention;

int64_t attention::stagedRows(int64_t len, int64_t block) {
  if (block == kMinStagedRows || block == 64 || len < kMinStagedRows)
    return block;
  return len == kMinStagedRows ? kMinStagedRows : 64;
}

AttnShape attention::stagedRowsShape(Value q, Value k, Value v,
                                     bool keyRows) {
  AttnShape s = AttnShape::of(q, k, v);
  int64_t &rows = keyRows ? s.blockK : s.blockQ;
  int64_t &steps = keyRows ? s.blockQ : s.blockK;
  rows = stagedRows(keyRows ? s.sk : s.sq, rows);
  steps = kStagedKeys;
  s.sqP = roundUp(s.sq, s.blockQ);
  s.skP = roundUp(s.sk, s.blockK);
  return s;
}

bool attention::canStageRows(int64_t rows, ArrayRef<int64_t> cols,
                             int64_t maxCols,
                             const GpuScheduleOptions &options) {
  if (rows < kMinStagedRows || rows > options.maxThreads)
    return false;
  for (int64_t c : cols)
    if (!c || c % 16 || c > maxCols ||
        !canStageTile(WorkgroupTile{c, kStagedKeys, true, {}}, rows) ||
        !canStageTile(WorkgroupTile{kStagedKeys, c, false, {}}, rows))
      return false;
  return true;
}

bool attention::hasStaticFloatShapes(FusedOp op) {
  if (!hasF32OrHalfTensors(op))
    return false;
  for (Type t : llvm::concat<const Type>(op->getOperandTypes(),
                                         op->getResultTypes()))
    if (auto ranked = dyn_cast<RankedTensorType>(t);
        ranked && !ranked.hasStaticShape())
      return false;
  return true;
}

/// flash_attn's staged shapes, when it has them: static shapes that
/// canStageRows accepts with query blocks of stagedRows and key blocks of
/// 16.
static std::optional<AttnShape>
stagedShape(FusedOp op, const GpuScheduleOptions &options) {
  if (!FlashAttnView::match(op) || !hasStaticFloatShapes(op))
    return std::nullopt;
  FlashAttnView attn(op);
  AttnShape s = stagedRowsShape(attn.getQ(), attn.getK(), attn.getV(),
                                /*keyRows=*/false);
  // The widest heads staged: options.maxStagedHeadDim. With D = Dv = 128
  // the staged forward needs 204 registers and no stack on sm_90, but
  // ptxas for sm_80 spills 3 to 4.5 KiB of it (255 registers): wider heads
  // keep the unstaged form.
  if (!canStageRows(s.blockQ, {s.d, s.dv}, options.maxStagedHeadDim, options))
    return std::nullopt;
  return s;
}

bool mlir::fuel::canStageGpuAttention(FusedOp op,
                                      const GpuScheduleOptions &options) {
  return stagedShape(op, options).has_value();
}

void StagedRows::open(Operation *at, int64_t heads, int64_t count,
                      ValueRange outs) {
  b.setInsertionPoint(at);
  blocks = scf::ForallOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{b.getIndexAttr(s.batch), b.getIndexAttr(heads),
                             b.getIndexAttr(count)},
      outs, std::nullopt);
  mapForall(b, blocks, /*threads=*/false);
  b.setInsertionPointToStart(blocks.getBody());
  bi = blocks.getInductionVar(0);
  hi = blocks.getInductionVar(1);
  row0 = arith::MulIOp::create(b, loc, blocks.getInductionVar(2),
                               bb.index(rows));
}

/// The offsets, sizes and strides of the block's rows of `out` ([B, H,
/// rows', ...]): [1, 1, rows, ...] at (bi, hi, row0, 0, ...).
static std::array<SmallVector<OpFoldResult>, 3>
rowsSlice(OpBuilder &b, Value out, Value bi, Value hi, Value row0,
          int64_t rows) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(out.getType()).getShape();
  std::array<SmallVector<OpFoldResult>, 3> slice;
  slice[0].assign(shape.size(), b.getIndexAttr(0));
  slice[0][0] = bi;
  slice[0][1] = hi;
  slice[0][2] = row0;
  slice[1] = getAsIndexOpFoldResult(b.getContext(), shape);
  slice[1][0] = slice[1][1] = b.getIndexAttr(1);
  slice[1][2] = b.getIndexAttr(rows);
  slice[2].assign(shape.size(), b.getIndexAttr(1));
  return slice;
}

Value StagedRows::blockRows(unsigned i) {
  Value out = blocks.getRegionIterArgs()[i];
  auto type = cast<RankedTensorType>(out.getType());
  auto [offsets, sizes, strides] = rowsSlice(b, out, bi, hi, row0, rows);
  SmallVector<int64_t> shape = {rows};
  llvm::append_range(shape, type.getShape().drop_front(3));
  return tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), out,
      offsets, sizes, strides);
}

ValueRange StagedRows::close(ValueRange written) {
  b.setInsertionPointToStart(blocks.getTerminator().getBody());
  for (auto [value, out] : llvm::zip(written, blocks.getRegionIterArgs())) {
    auto [offsets, sizes, strides] = rowsSlice(b, out, bi, hi, row0, rows);
    tensor::ParallelInsertSliceOp::create(b, loc, value, out, offsets, sizes,
                                          strides);
  }
  // The contractions in steps, then everything in registers.
  tileContractionReductions(b, blocks, kStagedKeys);
  vectorizeInside(b, blocks, /*contractions=*/true);
  b.setInsertionPointAfter(blocks);
  return blocks.getResults();
}

scf::ForallOp StagedRows::rowThreads(
    ValueRange inits,
    function_ref<SmallVector<Value>(Value r, ValueRange mine)> body) {
  auto loop = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(rows)}, inits,
      std::nullopt);
  mapForall(b, loop, /*threads=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value r = loop.getInductionVar(0);
  SmallVector<std::array<SmallVector<OpFoldResult>, 3>> at;
  SmallVector<Value> mine;
  for (Value shared : loop.getRegionIterArgs()) {
    ArrayRef<int64_t> shape =
        cast<RankedTensorType>(shared.getType()).getShape();
    std::array<SmallVector<OpFoldResult>, 3> slice;
    slice[0].assign(shape.size(), b.getIndexAttr(0));
    slice[0][0] = r;
    slice[1] = getAsIndexOpFoldResult(b.getContext(), shape);
    slice[1][0] = b.getIndexAttr(1);
    slice[2].assign(shape.size(), b.getIndexAttr(1));
    mine.push_back(tensor::ExtractSliceOp::create(b, loc, shared, slice[0],
                                                  slice[1], slice[2]));
    at.push_back(slice);
  }
  SmallVector<Value> written = body(r, mine);
  b.setInsertionPointToStart(loop.getTerminator().getBody());
  for (auto [value, shared, slice] :
       llvm::zip(written, loop.getRegionIterArgs(), at))
    tensor::ParallelInsertSliceOp::create(b, loc, value, shared, slice[0],
                                          slice[1], slice[2]);
  return loop;
}

SmallVector<Value>
StagedRows::filledRows(ArrayRef<ArrayRef<int64_t>> shapes,
                       ArrayRef<double> values) {
  SmallVector<Value> inits;
  for (ArrayRef<int64_t> shape : shapes)
    inits.push_back(bb.empty(shape, f32));
  auto loop = rowThreads(inits, [&](Value, ValueRange mine) {
    SmallVector<Value> filled;
    for (auto [value, slice] : llvm::zip(values, mine))
      filled.push_back(
          linalg::FillOp::create(b, loc, bb.constF(value), slice).getResult(0));
    return filled;
  });
  return loop.getResults();
}

scf::ForOp StagedRows::stepLoop(
    Value lo, Value hi, ValueRange inits,
    function_ref<SmallVector<Value>(Value x0, ValueRange)> body,
    int64_t step) {
  return scf::ForOp::create(
      b, loc, lo, hi, bb.index(step), inits,
      [&](OpBuilder &nb, Location, Value x0, ValueRange carried) {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        scf::YieldOp::create(b, loc, body(x0, carried));
      });
}

/// The widest chunk in which the block's threads copy rows into or out of
/// a workgroup tile (stage, stageOwnRows, writeRows): 16 bytes of the f32
/// tile a thread, 8 consecutive threads on 128 consecutive bytes (free of
/// bank conflicts). Chunks of 8 (16 bytes of f16 in global memory) put
/// threads 0 and 4 of a quarter of a warp on the same banks (2
/// wavefronts), where the global side is whole sectors either way. The
/// staged contractions (GpuStagedLinear.cpp) copy 16 bytes of f16 a
/// thread, for their 16-byte global loads, and write the chunk's two
/// halves in an order that depends on the thread (stageTiles: selects a
/// chunk); rows padded for their readers (workgroupRowStride) take no
/// chunks of 8, and the value blocks keep chunks of 4 without the selects.
static constexpr int64_t kTileChunk = 4;

/// The workgroup tile of stage() for `from` ([B, H, len, cols]), or of
/// stageOwnRows with `ownRows` rows.
static WorkgroupTile stagedTileOf(Value from, bool transposed,
                                  int64_t ownRows = 0) {
  int64_t cols = cast<RankedTensorType>(from.getType()).getDimSize(3);
  if (ownRows) {
    WorkgroupTile tile{ownRows, cols, false, {}};
    tile.readByRow = true;
    return tile;
  }
  return transposed ? WorkgroupTile{cols, kStagedKeys, true, {}}
                    : WorkgroupTile{kStagedKeys, cols, false, {}};
}

static int64_t bytesOf(const WorkgroupTile &tile) {
  return tile.rows * workgroupRowStride(tile) * 4;
}

SmallVector<Value>
StagedRows::stage(Value head, Value x0, int64_t len,
                  ArrayRef<std::pair<Value, bool>> operands, bool chunked) {
  // The steps cover roundUp(len, 16) rows.
  bool pads = len % kStagedKeys != 0;
  // Row x0 + j, and the row read for it (the last where it is past len).
  auto rowAt = [&](Value j) -> std::pair<Value, Value> {
    Value at = arith::AddIOp::create(b, loc, x0, j);
    Value row = pads ? arith::MinSIOp::create(b, loc, at, bb.index(len - 1))
                           .getResult()
                     : at;
    return {at, row};
  };
  // `x`, read for row `at`, or zeros where that is past len.
  auto masked = [&](Value at, Value x) -> Value {
    if (!pads)
      return x;
    Value live = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, at,
                                       bb.index(len));
    Value zero = arith::ConstantOp::create(
        b, loc, cast<TypedAttr>(b.getZeroAttr(x.getType())));
    return arith::SelectOp::create(b, loc, live, x, zero);
  };
  // Element (j, c) of row x0 + j of `from`, as f32; 0 past len.
  auto element = [&](Value from, Value j, Value c) -> Value {
    auto [at, row] = rowAt(j);
    return masked(at, widenToF32(b, loc,
                                 tensor::ExtractOp::create(
                                     b, loc, from,
                                     ValueRange{bi, head, row, c})));
  };
  // Columns c, ..., c + width - 1 of row x0 + j of `from`, as an f32
  // vector read at once (the row is contiguous along them); 0 past len.
  auto chunk = [&](Value from, Value j, Value c, int64_t width) -> Value {
    auto [at, row] = rowAt(j);
    return masked(at,
                  readChunkAsF32(b, loc, from, {bi, head, row, c}, width));
  };
  // The element and chunk functions outlive the loop below (WorkgroupTile
  // holds references to them).
  SmallVector<std::function<Value(Value, Value)>> elements, chunks;
  SmallVector<int64_t> widths;
  for (auto [from, transposed] : operands) {
    Value t = from;
    auto type = cast<RankedTensorType>(from.getType());
    int64_t cols = type.getDimSize(3);
    if (transposed) {
      elements.push_back([&, t](Value c, Value j) { return element(t, j, c); });
      // Transposed: chunks of 4 rows (4 elements of a column, each read on
      // its own), so that the threads' 16-byte writes into the padded tile
      // are free of bank conflicts (workgroupRowStride).
      int64_t width =
          chunked && canStageTile({cols, kStagedKeys, true, {}, 4}, rows)
              ? 4
              : 1;
      chunks.push_back([&, t, width](Value c, Value j) {
        SmallVector<Value> column;
        for (int64_t k = 0; k < width; ++k)
          column.push_back(element(
              t, arith::AddIOp::create(b, loc, j, bb.index(k)), c));
        return vector::FromElementsOp::create(
            b, loc, VectorType::get({width}, b.getF32Type()), column);
      });
      widths.push_back(width);
      continue;
    }
    elements.push_back([&, t](Value j, Value c) { return element(t, j, c); });
    // Rows as they are: chunks of up to 16 bytes of the tile's row.
    int64_t width =
        chunked
            ? largestChunk({kStagedKeys, cols, false, {}}, rows, kTileChunk)
            : 1;
    chunks.push_back([&, t, width](Value j, Value c) {
      return chunk(t, j, c, width);
    });
    widths.push_back(width);
  }
  SmallVector<WorkgroupTile> tiles;
  for (auto [operand, fn, chunkFn, width] :
       llvm::zip(operands, elements, chunks, widths)) {
    // Consecutive threads on consecutive columns (or chunks) of a row.
    WorkgroupTile tile = stagedTileOf(operand.first, operand.second);
    tile.element = fn;
    tile.chunk = width;
    tile.chunkElements = chunkFn;
    tiles.push_back(tile);
  }
  return stageTiles(b, loc, {rows}, tiles);
}

int64_t
StagedRows::stageBytes(ArrayRef<std::pair<Value, bool>> operands) const {
  int64_t bytes = 0;
  for (auto [from, transposed] : operands)
    bytes += bytesOf(stagedTileOf(from, transposed));
  return bytes;
}

unsigned StagedRows::stageOwnRows(ArrayRef<Value> operands, Value head,
                                  int64_t len, int64_t otherBytes,
                                  int64_t maxBytes) {
  // The first operands whose rows fit.
  int64_t bytes = otherBytes;
  SmallVector<Value> ts;
  for (Value t : operands) {
    bytes += bytesOf(stagedTileOf(t, false, rows));
    if (bytes > maxBytes)
      break;
    ts.push_back(t);
  }
  if (ts.empty())
    return 0;
  auto rowAt = [&](Value j) { return ownRowIndex(j, len); };
  // They outlive the tiles below, which hold references to them.
  SmallVector<std::function<Value(Value, Value)>> elements, chunks;
  elements.reserve(ts.size());
  chunks.reserve(ts.size());
  SmallVector<WorkgroupTile> tiles;
  for (Value t : ts) {
    WorkgroupTile tile = stagedTileOf(t, false, rows);
    tile.chunk = largestChunk(tile, rows, kTileChunk);
    int64_t width = tile.chunk;
    elements.push_back([&, t](Value j, Value c) {
      return widenToF32(b, loc,
                        tensor::ExtractOp::create(
                            b, loc, t, ValueRange{bi, head, rowAt(j), c}));
    });
    chunks.push_back([&, t, width](Value j, Value c) {
      return readChunkAsF32(b, loc, t, {bi, head, rowAt(j), c}, width);
    });
    tile.element = elements.back();
    tile.chunkElements = chunks.back();
    tiles.push_back(tile);
  }
  for (auto [t, staged] : llvm::zip(ts, stageTiles(b, loc, {rows}, tiles)))
    ownRows[{t, head}] = staged;
  return ts.size();
}

Value StagedRows::ownRowIndex(Value r, int64_t len) {
  Value at = arith::AddIOp::create(b, loc, row0, r);
  if (len % rows)
    at = arith::MinSIOp::create(b, loc, at, bb.index(len - 1));
  return at;
}

Value StagedRows::ownRow(Value t, Value head, Value r, int64_t len) {
  if (Value staged = ownRows.lookup({t, head}))
    return rowOf(staged, r);
  Value at = ownRowIndex(r, len);
  auto type = cast<RankedTensorType>(t.getType());
  return toF32(bb, bb.block(t, bi, head, at, b.getIndexAttr(0), 1,
                            type.getDimSize(3), type.getElementType()));
}

Value StagedRows::rowOf(Value t, Value r) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(t.getType()).getShape();
  SmallVector<OpFoldResult> offsets(shape.size(), b.getIndexAttr(0));
  offsets[0] = r;
  SmallVector<OpFoldResult> sizes = getAsIndexOpFoldResult(b.getContext(),
                                                           shape);
  sizes[0] = b.getIndexAttr(1);
  return tensor::ExtractSliceOp::create(
      b, loc, t, offsets, sizes,
      SmallVector<OpFoldResult>(shape.size(), b.getIndexAttr(1)));
}

Value StagedRows::writeRows(unsigned i,
                            function_ref<Value(Value, Value)> row) {
  Value out = blockRows(i);
  auto type = cast<RankedTensorType>(out.getType());
  auto written = [&](Value init) {
    return rowThreads(init, [&](Value r, ValueRange mine) {
             return SmallVector<Value>{row(r, mine[0])};
           })
        .getResult(0);
  };
  if (type.getRank() != 2)
    return written(out);
  // A staged tile of rows as wide as the output's, and how the block's
  // threads copy it out.
  WorkgroupTile copy{rows, type.getDimSize(1), false, {}};
  copy.into = out;
  Value tile;
  for (Value staged : llvm::make_second_range(ownRows)) {
    if (cast<RankedTensorType>(staged.getType()).getDimSize(1) == copy.cols) {
      tile = staged;
      break;
    }
  }
  Type elt = type.getElementType();
  copy.chunk = largestChunk(copy, rows, kTileChunk);
  if (!tile || !canStageTile(copy, rows))
    return written(out);
  Value rowsF32 = written(tile);
  auto narrow = [&](Value x) -> Value {
    if (elt.isF32())
      return x;
    Type to = elt;
    if (auto vector = dyn_cast<VectorType>(x.getType()))
      to = vector.clone(elt);
    return arith::TruncFOp::create(b, loc, to, x);
  };
  auto element = [&](Value r, Value c) {
    return narrow(
        tensor::ExtractOp::create(b, loc, rowsF32, ValueRange{r, c}));
  };
  auto chunk = [&](Value r, Value c) {
    return narrow(readChunkAsF32(b, loc, rowsF32, {r, c}, copy.chunk));
  };
  copy.element = element;
  copy.chunkElements = chunk;
  return stageTiles(b, loc, {rows}, {copy})[0];
}

Value StagedRows::scoresRow(Value row, Value tileT) {
  return bb.matmul(row, tileT, bb.full({1, kStagedKeys}, f32, 0.0));
}

LogicalResult mlir::fuel::buildGpuStagedAttention(
    RewriterBase &rewriter, FusedOp op, const GpuScheduleOptions &options) {
  std::optional<AttnShape> shape = stagedShape(op, options);
  assert(shape && "not a flash_attn canStageGpuAttention accepts");
  const AttnShape &s = *shape;
  FlashAttnView attn(op);
  OpBuilder::InsertionGuard guard(rewriter);
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  StagedRows g(rewriter, loc, s, s.blockQ);
  BlockBuilder &bb = g.bb;
  RewriterBase &b = g.b;
  b.setInsertionPoint(op);
  Value out = bb.empty({s.batch, s.heads, s.sqP, s.dv}, type.getElementType());
  g.open(op, s.heads, s.sqP / s.blockQ, out);
  HeadParams hp = headParams(bb, paramsOf(attn), attn.getKLen(),
                             attn.getAlibi(), s, g.bi, g.hi);

  // The rows' state: m = -inf, l = 0, acc = 0; at each key block, the keys
  // (transposed) and values staged, then each row's online softmax step.
  SmallVector<Value> state =
      g.filledRows({{s.blockQ}, {s.blockQ}, {s.blockQ, s.dv}},
                   {-INFINITY, 0.0, 0.0});
  auto [lo, hiKey] = keyRange(bb, s, hp.bp, g.row0, hp.off);
  std::pair<Value, bool> steps[] = {{attn.getK(), true},
                                    {attn.getV(), false}};
  g.stageOwnRows(attn.getQ(), g.hi, s.sq, g.stageBytes(steps),
                 options.maxOwnRowsBlockBytes);
  auto keys = g.stepLoop(lo, hiKey, state, [&](Value j0, ValueRange carried) {
    SmallVector<Value> staged =
        g.stage(hp.kvHead, j0, s.sk, steps, /*chunked=*/true);
    auto update = g.rowThreads(carried, [&](Value r, ValueRange mine) {
      Value q = g.ownRow(attn.getQ(), g.hi, r, s.sq);
      Value scores =
          maskBlock(bb, g.scoresRow(q, staged[0]), hp.bp,
                    arith::AddIOp::create(b, loc, g.row0, r), j0, hp.off);
      RowState next =
          onlineUpdate(bb, scores, staged[1], {mine[0], mine[1], mine[2]});
      return SmallVector<Value>{next.m, next.l, next.acc};
    });
    return SmallVector<Value>(update.getResults());
  });

  // Each row's o = acc / l into the block's rows of the output.
  Value acc = keys.getResult(2), l = keys.getResult(1);
  Value finish = g.writeRows(0, [&](Value r, Value mine) {
    return normalizeRows(bb, g.rowOf(acc, r), g.rowOf(l, r), mine);
  });
  Value padded = g.close(finish)[0];
  rewriter.replaceOp(op, sliceToResult(rewriter, loc, padded, type));
  return success();
}
