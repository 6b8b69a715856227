//===- Scan.cpp - The scan schedule ---------------------------------------===//
//
// selective_scan (Mamba-1): per batch b and channel d, a state h[n] runs
// along the sequence, h = exp(dt[t] * a[d, n]) * h + (dt[t] * u[t]) * b[t, n],
// and y[t] = sum_n h[n] * c[t, n]. The recurrence is sequential in t and
// independent across (b, d, n). The schedule puts `vectorWidth` channels in
// the lanes of a vector and keeps the whole state, N vectors, in registers
// through an scf.for over the sequence; the b[t, n] and c[t, n] of a step
// are scalars every lane shares, so y needs no reduction across lanes. An
// scf.forall runs over batches and channel vectors (B * D / width
// iterations: enough for the threads of a CPU, so the sequence is not
// split into chunks here). The state is transposed once at the end into
// last_state [B, D, N]. A channel count that is not a multiple of the width
// is padded with zeros (and the padded channels dropped); f16 and bf16
// compute in f32, as the decomposition does, with the same operations in
// the same order.
//
// The decomposition runs the recurrence as an scf.for over the sequence of
// linalg ops on [B, D, N] slices, which lower to scalar loops with a
// scalar exp each.
//
// ssd_chunk_scan (Mamba-2's SSD) has the same form per head: per batch b
// and head h, the state h[p, n] runs along the sequence, h = exp(dt[t] *
// a[h]) * h + (dt[t] * x[t, p]) * b[t, n], y[t, p] = sum_n h[p, n] * c[t,
// n]. The schedule puts `vectorWidth` of the head's P channels in the lanes
// (x and y are contiguous along P) and keeps the state in registers, up to
// 16 vectors of it per pass over the sequence (y summed over the passes in
// an f32 tile). The decay is one scalar exp per step and head, b[t, n] and
// c[t, n] scalars every lane shares; the state update and y's sum are
// fused multiply-adds, y in four partial sums per step. An scf.forall runs
// over (B, H, P / width); chunk_size, which only changes a GPU's blocking,
// plays no part. P that is not a multiple of the width is padded with
// zeros.
//
//===----------------------------------------------------------------------===//

#include "Scan.h"
#include "ScheduleUtils.h"

#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fuel;

namespace {
/// `v` (a scalar or a vector of a float type) as f32.
Value widenToF32(OpBuilder &b, Location loc, Value v) {
  Type f32 = b.getF32Type();
  if (getElementTypeOrSelf(v.getType()) == f32)
    return v;
  Type to = f32;
  if (auto vec = dyn_cast<VectorType>(v.getType()))
    to = VectorType::get(vec.getShape(), f32);
  return arith::ExtFOp::create(b, loc, to, v);
}

/// The most state vectors kept in registers (N): the step is unrolled over
/// them.
constexpr int64_t kMaxState = 128;
/// ssd_chunk_scan's state vectors per pass over the sequence: what the
/// registers hold beside the step's values, so that a state of 128 (Mamba-2's
/// usual) is not spilled and reloaded on every step. (Against one pass,
/// within this machine's noise.)
constexpr int64_t kStateGroup = 16;

/// The end of a step along the sequence: `y` (f32; narrowed to
/// `narrowTo` unless null) written as row t of `tile`, and the new `state`
/// and tile yielded.
void yieldStep(OpBuilder &b, Location loc, Value y, Type narrowTo,
               Value state, Value tile, Value t) {
  if (narrowTo)
    y = arith::TruncFOp::create(b, loc, narrowTo, y);
  Value written =
      vector::TransferWriteOp::create(
          b, loc, y, tile,
          ValueRange{t, arith::ConstantIndexOp::create(b, loc, 0)},
          ArrayRef<bool>{true})
          .getResult();
  scf::YieldOp::create(b, loc, ValueRange{state, written});
}

/// How a scan is laid out: `width` channels in a vector; with `threads`
/// (a GPU), blocks of that many channel vectors, a thread each; the state
/// in groups of `stateGroup` vectors, a pass over the sequence each
/// (ssd_chunk_scan).
struct ScanForm {
  int64_t width, threads, stateGroup;
};

/// Where a result's tile of one channel vector lies, per dim: at an outer
/// loop's index (its size 1), at the vector's first channel (size: the
/// width), or the whole dim.
enum class TileDim { Whole, Channel, Outer0, Outer1 };

/// The loops over the channel vectors of a scan whose results are `inits`
/// (`tiles[i]` says where a vector's tile of result i lies). On a CPU, an
/// scf.forall over `outer` and the vectors; on a GPU (`form.threads`), an
/// scf.forall over `outer` and blocks of `form.threads` vectors, with an
/// scf.forall over the block's vectors inside. `body(outerIvs, d0, tiles)`
/// computes the vector at channel d0 into its tiles (full rank) and returns
/// them. Returns the loops (the inner one null on a CPU).
std::pair<scf::ForallOp, scf::ForallOp>
channelLoops(RewriterBase &rewriter, Location loc,
             ArrayRef<OpFoldResult> outer, int64_t vectors, ValueRange inits,
             ArrayRef<SmallVector<TileDim>> tiles, const ScanForm &form,
             function_ref<SmallVector<Value>(ValueRange, Value, ValueRange)>
                 body) {
  auto attr = [&](int64_t v) { return rewriter.getIndexAttr(v); };
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, v);
  };
  // The results' sizes, outside the loops (a dynamic one is a tensor.dim).
  SmallVector<SmallVector<OpFoldResult>> whole;
  for (Value init : inits)
    whole.push_back(tensor::getMixedSizes(rewriter, loc, init));
  // The offsets and sizes of result i's tile of `channels` channels from
  // `c0`; `inBlock`: within a block's tile (outer dims at 0).
  auto place = [&](unsigned i, ValueRange outerIvs, OpFoldResult c0,
                   int64_t channels, bool inBlock) {
    SmallVector<OpFoldResult> offsets, sizes;
    for (auto [d, kind] : llvm::enumerate(tiles[i])) {
      switch (kind) {
      case TileDim::Whole:
        offsets.push_back(attr(0));
        sizes.push_back(whole[i][d]);
        break;
      case TileDim::Channel:
        offsets.push_back(c0);
        sizes.push_back(attr(channels));
        break;
      case TileDim::Outer0:
      case TileDim::Outer1:
        offsets.push_back(
            inBlock ? OpFoldResult(attr(0))
                    : OpFoldResult(outerIvs[kind == TileDim::Outer0 ? 0 : 1]));
        sizes.push_back(attr(1));
        break;
      }
    }
    return std::make_pair(offsets, sizes);
  };
  auto ones = [&](unsigned i) {
    return SmallVector<OpFoldResult>(tiles[i].size(), attr(1));
  };
  auto extract = [&](Value from, unsigned i, ValueRange outerIvs,
                     OpFoldResult c0, int64_t channels, bool inBlock) {
    auto [offsets, sizes] = place(i, outerIvs, c0, channels, inBlock);
    return tensor::ExtractSliceOp::create(rewriter, loc, from, offsets, sizes,
                                          ones(i))
        .getResult();
  };
  auto insert = [&](scf::ForallOp loop, ValueRange parts, ValueRange outerIvs,
                    OpFoldResult c0, int64_t channels, bool inBlock) {
    rewriter.setInsertionPointToStart(loop.getTerminator().getBody());
    for (auto [i, part] : llvm::enumerate(parts)) {
      auto [offsets, sizes] = place(i, outerIvs, c0, channels, inBlock);
      tensor::ParallelInsertSliceOp::create(
          rewriter, loc, part, loop.getRegionIterArgs()[i], offsets, sizes,
          ones(i));
    }
    rewriter.setInsertionPointAfter(loop);
  };

  // Each result's tile of `channels` channels from `c0` in `loop`'s
  // shared outputs.
  auto extractAll = [&](scf::ForallOp loop, ValueRange outerIvs,
                        OpFoldResult c0, int64_t channels, bool inBlock) {
    SmallVector<Value> tiles;
    for (unsigned i = 0; i < inits.size(); ++i)
      tiles.push_back(extract(loop.getRegionIterArgs()[i], i, outerIvs, c0,
                              channels, inBlock));
    return tiles;
  };

  int64_t perBlock = form.threads ? form.threads : 1;
  SmallVector<OpFoldResult> ubs(outer);
  ubs.push_back(attr(vectors / perBlock));
  auto blocks =
      scf::ForallOp::create(rewriter, loc, ubs, inits, std::nullopt);
  rewriter.setInsertionPointToStart(blocks.getBody());
  SmallVector<Value> ivs = llvm::to_vector(blocks.getInductionVars());
  ValueRange outerIvs = ValueRange(ivs).drop_back();
  Value c0 = arith::MulIOp::create(rewriter, loc, ivs.back(),
                                   constant(perBlock * form.width));
  SmallVector<Value> parts;
  scf::ForallOp threads;
  if (!form.threads) {
    parts = body(outerIvs, c0,
                 extractAll(blocks, outerIvs, c0, form.width,
                            /*inBlock=*/false));
  } else {
    SmallVector<Value> blockTiles = extractAll(
        blocks, outerIvs, c0, perBlock * form.width, /*inBlock=*/false);
    threads = scf::ForallOp::create(
        rewriter, loc, ArrayRef<OpFoldResult>{attr(perBlock)}, blockTiles,
        std::nullopt);
    rewriter.setInsertionPointToStart(threads.getBody());
    Value local = arith::MulIOp::create(
        rewriter, loc, threads.getInductionVars()[0], constant(form.width));
    Value d0 = arith::AddIOp::create(rewriter, loc, c0, local);
    SmallVector<Value> threadParts =
        body(outerIvs, d0,
             extractAll(threads, outerIvs, local, form.width,
                        /*inBlock=*/true));
    insert(threads, threadParts, outerIvs, local, form.width,
           /*inBlock=*/true);
    parts = llvm::to_vector_of<Value>(threads.getResults());
  }
  insert(blocks, parts, outerIvs, c0, perBlock * form.width,
         /*inBlock=*/false);
  return {blocks, threads};
}
} // namespace

static LogicalResult canScheduleSsd(SsdChunkScanView scan,
                                    std::string &why);
static std::pair<scf::ForallOp, scf::ForallOp>
buildSsd(RewriterBase &rewriter, SsdChunkScanView scan, const ScanForm &form);

LogicalResult mlir::fuel::canScheduleScan(FusedOp op,
                                          const ScheduleOptions &options,
                                          std::string &why) {
  if (std::optional<SsdChunkScanView> ssd = SsdChunkScanView::match(op))
    return canScheduleSsd(*ssd, why);
  SelectiveScanView scan(op);
  Type elt = cast<RankedTensorType>(scan.getU().getType()).getElementType();
  if (!elt.isF32() && !elt.isF16() && !elt.isBF16()) {
    why = "the scan schedule handles f32, f16 and bf16";
    return failure();
  }
  // (The op's dtype rule gives every operand u's element type.)
  ArrayRef<int64_t> u =
      cast<RankedTensorType>(scan.getU().getType()).getShape();
  ArrayRef<int64_t> a =
      cast<RankedTensorType>(scan.getA().getType()).getShape();
  // Batches and the sequence may be dynamic; channels and the state not.
  if (ShapedType::isDynamic(u[2]) || !cast<RankedTensorType>(
                                          scan.getA().getType())
                                          .hasStaticShape()) {
    why = "the scan schedule needs static channels and state";
    return failure();
  }
  int64_t n = a[1];
  if (u[0] == 0 || u[1] == 0 || u[2] == 0 || n == 0 || n > kMaxState) {
    why = "the scan schedule needs a sequence, channels and a state of 1 "
          "to " + std::to_string(kMaxState) + " (got N = " +
          std::to_string(n) + ")";
    return failure();
  }
  return success();
}

/// Replaces `scan` by its recurrence in vectors of `form.width` channels;
/// returns the loops over channel vectors (channelLoops).
static std::pair<scf::ForallOp, scf::ForallOp>
buildSelectiveScan(RewriterBase &rewriter, SelectiveScanView scan,
                   const ScanForm &form) {
  FusedOp op = scan.getOperation();
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  ArrayRef<int64_t> uShape =
      cast<RankedTensorType>(scan.getU().getType()).getShape();
  int64_t channels = uShape[2];
  // Batches and the sequence, static or dynamic.
  OpFoldResult batches = tensor::getMixedSize(rewriter, loc, scan.getU(), 0);
  OpFoldResult length = tensor::getMixedSize(rewriter, loc, scan.getU(), 1);
  int64_t staticLength = uShape[1];
  int64_t n = cast<RankedTensorType>(scan.getA().getType()).getShape()[1];
  int64_t width = form.width;
  int64_t padded =
      llvm::alignTo(channels, width * std::max<int64_t>(form.threads, 1));
  Type elt = cast<RankedTensorType>(scan.getU().getType()).getElementType();
  Type f32 = rewriter.getF32Type();
  auto lanes = VectorType::get({width}, f32);
  auto eltLanes = VectorType::get({width}, elt);
  auto index = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto widen = [&](OpBuilder &b, Value v) { return widenToF32(b, loc, v); };
  auto splat = [&](OpBuilder &b, double v) -> Value {
    return arith::ConstantOp::create(
        b, loc, lanes, DenseElementsAttr::get(lanes, static_cast<float>(v)));
  };

  // The channels padded to whole vectors (and blocks); a as [N, D] (f32),
  // so that a step reads a[:, n] for its channels as one vector.
  SmallVector<OpFoldResult> paddedShape = {batches, length,
                                           rewriter.getIndexAttr(padded)};
  Value u = scan.getU(), delta = scan.getDelta();
  if (padded != channels) {
    u = padWithZeros(rewriter, loc, u, paddedShape);
    delta = padWithZeros(rewriter, loc, delta, paddedShape);
  }
  Value aPadded = padWithZeros(rewriter, loc, scan.getA(),
                               ArrayRef<int64_t>{padded, n});
  Value aT = linalg::TransposeOp::create(
                 rewriter, loc, aPadded,
                 tensor::EmptyOp::create(rewriter, loc,
                                         ArrayRef<int64_t>{n, padded}, elt),
                 ArrayRef<int64_t>{1, 0})
                 .getResult()[0];
  Value bm = scan.getB(), cm = scan.getC();

  Value yEmpty = tensor::EmptyOp::create(rewriter, loc, paddedShape, elt);
  Value sEmpty = tensor::EmptyOp::create(
      rewriter, loc,
      ArrayRef<OpFoldResult>{batches, rewriter.getIndexAttr(padded),
                             rewriter.getIndexAttr(n)},
      elt);
  // y's tile [1, L, width] at (b, 0, d0); the last state's [1, width, N] at
  // (b, d0, 0).
  SmallVector<TileDim> yTiles = {TileDim::Outer0, TileDim::Whole,
                                 TileDim::Channel};
  SmallVector<TileDim> sTiles = {TileDim::Outer0, TileDim::Channel,
                                 TileDim::Whole};
  bool softplus = scan.getDeltaSoftplus();
  auto computeChannels = [&](ValueRange outerIvs, Value d0,
                             ValueRange tiles) -> SmallVector<Value> {
    Value b = outerIvs[0];
    auto one = [&] { return rewriter.getIndexAttr(1); };
    auto zero = [&] { return rewriter.getIndexAttr(0); };
    auto yTileType = RankedTensorType::get({staticLength, width}, elt);
    Value yTile = tensor::ExtractSliceOp::create(
        rewriter, loc, yTileType, tiles[0],
        ArrayRef<OpFoldResult>{zero(), zero(), zero()},
        ArrayRef<OpFoldResult>{one(), length, rewriter.getIndexAttr(width)},
        ArrayRef<OpFoldResult>{one(), one(), one()});
    Value pad = arith::ConstantOp::create(rewriter, loc, elt,
                                          rewriter.getFloatAttr(elt, 0.0));
    auto stateType = VectorType::get({n, width}, f32);
    Value state0 = arith::ConstantOp::create(
        rewriter, loc, stateType, DenseElementsAttr::get(stateType, 0.0f));
    auto loop = scf::ForOp::create(
        rewriter, loc, index(rewriter, 0),
        getValueOrCreateConstantIndexOp(rewriter, loc, length),
        index(rewriter, 1), ValueRange{state0, yTile},
        [&](OpBuilder &nb, Location, Value t, ValueRange iter) {
          auto read = [&](Value from, ValueRange at) -> Value {
            return widen(nb, vector::TransferReadOp::create(
                                 nb, loc, eltLanes, from, at, pad,
                                 ArrayRef<bool>{true}));
          };
          Value dt = read(delta, {b, t, d0});
          if (softplus) {
            // dt > 20 ? dt : log(1 + exp(dt)), as the decomposition.
            Value sp = math::LogOp::create(
                nb, loc,
                arith::AddFOp::create(nb, loc, splat(nb, 1.0),
                                      math::ExpOp::create(nb, loc, dt)));
            Value big = arith::CmpFOp::create(
                nb, loc, arith::CmpFPredicate::OGT, dt, splat(nb, 20.0));
            dt = arith::SelectOp::create(nb, loc, big, dt, sp);
          }
          Value du = arith::MulFOp::create(nb, loc, dt, read(u, {b, t, d0}));
          Value state = iter[0];
          Value y = splat(nb, 0.0);
          for (int64_t i = 0; i < n; ++i) {
            Value at = index(nb, i);
            Value a = read(aT, {at, d0});
            Value decay = math::ExpOp::create(
                nb, loc, arith::MulFOp::create(nb, loc, dt, a));
            auto shared = [&](Value m) -> Value {
              return vector::BroadcastOp::create(
                  nb, loc, lanes,
                  widen(nb, tensor::ExtractOp::create(nb, loc, m,
                                                      ValueRange{b, t, at})));
            };
            Value h = vector::ExtractOp::create(nb, loc, state, i);
            h = arith::AddFOp::create(
                nb, loc, arith::MulFOp::create(nb, loc, decay, h),
                arith::MulFOp::create(nb, loc, du, shared(bm)));
            state = vector::InsertOp::create(nb, loc, h, state, i);
            y = arith::AddFOp::create(
                nb, loc, y, arith::MulFOp::create(nb, loc, h, shared(cm)));
          }
          yieldStep(nb, loc, y, elt != f32 ? eltLanes : Type(), state,
                    iter[1], t);
        });
    Value yPart = tensor::InsertSliceOp::create(
        rewriter, loc, loop.getResult(1), tiles[0],
        ArrayRef<OpFoldResult>{zero(), zero(), zero()},
        ArrayRef<OpFoldResult>{one(), length, rewriter.getIndexAttr(width)},
        ArrayRef<OpFoldResult>{one(), one(), one()});

    // The last state, [width, N] for these channels.
    Value last = vector::TransposeOp::create(rewriter, loc, loop.getResult(0),
                                             ArrayRef<int64_t>{1, 0});
    if (elt != f32)
      last = arith::TruncFOp::create(rewriter, loc,
                                     VectorType::get({width, n}, elt), last);
    Value sPart = vector::TransferWriteOp::create(
                      rewriter, loc, last, tiles[1],
                      ValueRange{index(rewriter, 0), index(rewriter, 0),
                                 index(rewriter, 0)},
                      AffineMap::get(3, 0,
                                     {rewriter.getAffineDimExpr(1),
                                      rewriter.getAffineDimExpr(2)},
                                     rewriter.getContext()),
                      ArrayRef<bool>{true, true})
                      .getResult();
    return {yPart, sPart};
  };
  auto loops = channelLoops(rewriter, loc, {batches}, padded / width,
                            ValueRange{yEmpty, sEmpty}, {yTiles, sTiles},
                            form, computeChannels);

  // The padded channels dropped.
  scf::ForallOp forall = loops.first;
  rewriter.setInsertionPointAfter(forall);
  SmallVector<Value> results;
  auto slice = [&](Value v, ArrayRef<OpFoldResult> sizes) -> Value {
    if (padded == channels)
      return v;
    SmallVector<OpFoldResult> zeros(sizes.size(), rewriter.getIndexAttr(0)),
        ones(sizes.size(), rewriter.getIndexAttr(1));
    return tensor::ExtractSliceOp::create(rewriter, loc, v, zeros, sizes,
                                          ones);
  };
  OpFoldResult d = rewriter.getIndexAttr(channels);
  results.push_back(slice(forall.getResult(0), {batches, length, d}));
  results.push_back(
      slice(forall.getResult(1), {batches, d, rewriter.getIndexAttr(n)}));
  rewriter.replaceOp(op, results);
  return loops;
}

std::pair<scf::ForallOp, scf::ForallOp>
mlir::fuel::buildScanThreads(RewriterBase &rewriter, FusedOp op,
                             int64_t maxThreads) {
  std::optional<SsdChunkScanView> ssd = SsdChunkScanView::match(op);
  // The channels: selective_scan's D, ssd_chunk_scan's P (a head's).
  int64_t channels =
      cast<RankedTensorType>(op->getOperand(0).getType()).getShape().back();
  // The largest block (a power of two, from a warp up) whose padding is at
  // most an eighth of the channels; else the one with the least padding.
  int64_t most = std::min<int64_t>(
      maxThreads, llvm::PowerOf2Ceil(static_cast<uint64_t>(channels)));
  int64_t threads = most, leastPadding = INT64_MAX;
  for (int64_t t = most; t >= std::min<int64_t>(32, most); t /= 2) {
    int64_t padding = llvm::alignTo(channels, t) - channels;
    if (padding * 8 <= channels) {
      threads = t;
      break;
    }
    if (padding < leastPadding) {
      threads = t;
      leastPadding = padding;
    }
  }
  ScanForm form{/*width=*/1, threads, /*stateGroup=*/kMaxState};
  return ssd ? buildSsd(rewriter, *ssd, form)
             : buildSelectiveScan(rewriter, SelectiveScanView(op), form);
}

LogicalResult mlir::fuel::buildScan(RewriterBase &rewriter, FusedOp op,
                                    const ScheduleOptions &options) {
  ScanForm form{options.vectorWidth, /*threads=*/0, kStateGroup};
  if (std::optional<SsdChunkScanView> ssd = SsdChunkScanView::match(op))
    buildSsd(rewriter, *ssd, form);
  else
    buildSelectiveScan(rewriter, SelectiveScanView(op), form);
  return success();
}

//===----------------------------------------------------------------------===//
// ssd_chunk_scan
//===----------------------------------------------------------------------===//

static LogicalResult canScheduleSsd(SsdChunkScanView scan,
                                    std::string &why) {
  auto x = cast<RankedTensorType>(scan.getX().getType());
  Type elt = x.getElementType();
  if (!elt.isF32() && !elt.isF16() && !elt.isBF16()) {
    why = "the scan schedule handles f32, f16 and bf16";
    return failure();
  }
  auto b = cast<RankedTensorType>(scan.getB().getType());
  // Batches and the sequence may be dynamic; heads, P and N not.
  if (x.isDynamicDim(2) || x.isDynamicDim(3) || b.isDynamicDim(3)) {
    why = "the scan schedule needs static heads, head dims and state";
    return failure();
  }
  int64_t n = b.getDimSize(3);
  if (x.getDimSize(0) == 0 || x.getDimSize(1) == 0 || x.getDimSize(2) == 0 ||
      x.getDimSize(3) == 0 || n == 0 || n > kMaxState) {
    why = "the scan schedule needs a sequence, heads, head dims and a state "
          "of 1 to " + std::to_string(kMaxState) + " (got N = " +
          std::to_string(n) + ")";
    return failure();
  }
  return success();
}

static std::pair<scf::ForallOp, scf::ForallOp>
buildSsd(RewriterBase &rewriter, SsdChunkScanView scan, const ScanForm &form) {
  FusedOp op = scan.getOperation();
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto xType = cast<RankedTensorType>(scan.getX().getType());
  ArrayRef<int64_t> xShape = xType.getShape();
  int64_t heads = xShape[2], channels = xShape[3];
  int64_t n = cast<RankedTensorType>(scan.getB().getType()).getDimSize(3);
  OpFoldResult batches = tensor::getMixedSize(rewriter, loc, scan.getX(), 0);
  OpFoldResult length = tensor::getMixedSize(rewriter, loc, scan.getX(), 1);
  int64_t width = form.width;
  int64_t padded =
      llvm::alignTo(channels, width * std::max<int64_t>(form.threads, 1));
  Type elt = xType.getElementType();
  Type f32 = rewriter.getF32Type();
  auto lanes = VectorType::get({width}, f32);
  auto eltLanes = VectorType::get({width}, elt);
  auto index = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto widen = [&](OpBuilder &b, Value v) { return widenToF32(b, loc, v); };
  auto one = [&] { return rewriter.getIndexAttr(1); };

  SmallVector<OpFoldResult> paddedShape = {batches, length,
                                           rewriter.getIndexAttr(heads),
                                           rewriter.getIndexAttr(padded)};
  Value x = scan.getX();
  if (padded != channels)
    x = padWithZeros(rewriter, loc, x, paddedShape);
  Value yEmpty = tensor::EmptyOp::create(rewriter, loc, paddedShape, elt);
  Value bm = scan.getB(), cm = scan.getC();
  // y's tile [1, L, 1, width] at (b, 0, h, p0).
  SmallVector<TileDim> yTiles = {TileDim::Outer0, TileDim::Whole,
                                 TileDim::Outer1, TileDim::Channel};
  auto computeChannels = [&](ValueRange outerIvs, Value p0,
                             ValueRange tiles) -> SmallVector<Value> {
    Value bi = outerIvs[0], h = outerIvs[1];
    // The tile of y: [L, width] of head h.
    auto yTileType =
        RankedTensorType::get({xShape[1], width}, elt);
    SmallVector<OpFoldResult> tileOffsets(4, rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> tileSizes = {one(), length, one(),
                                           rewriter.getIndexAttr(width)};
    SmallVector<OpFoldResult> tileStrides(4, one());
    Value yTile = tensor::ExtractSliceOp::create(
        rewriter, loc, yTileType, tiles[0], tileOffsets, tileSizes,
        tileStrides);
    Value a = widen(rewriter, tensor::ExtractOp::create(rewriter, loc,
                                                        scan.getA(),
                                                        ValueRange{h}));
    Value pad = arith::ConstantOp::create(rewriter, loc, elt,
                                          rewriter.getFloatAttr(elt, 0.0));
    // The state in groups of form.stateGroup vectors, a pass over the
    // sequence each: y's partial sums in an f32 tile between passes (none
    // with one group), the last pass writing y.
    int64_t groups = (n + form.stateGroup - 1) / form.stateGroup;
    Value partial;
    if (groups > 1)
      partial = tensor::EmptyOp::create(
          rewriter, loc,
          ArrayRef<OpFoldResult>{length, rewriter.getIndexAttr(width)},
          f32);
    Value fpad = arith::ConstantOp::create(rewriter, loc, f32,
                                           rewriter.getF32FloatAttr(0.0));
    for (int64_t g = 0; g < groups; ++g) {
      int64_t first = g * form.stateGroup,
              count = std::min(form.stateGroup, n - first);
      bool last = g + 1 == groups;
      auto stateType = VectorType::get({count, width}, f32);
      Value state0 = arith::ConstantOp::create(
          rewriter, loc, stateType, DenseElementsAttr::get(stateType, 0.0f));
      Value before = partial;
      auto loop = scf::ForOp::create(
          rewriter, loc, index(rewriter, 0),
          getValueOrCreateConstantIndexOp(rewriter, loc, length),
          index(rewriter, 1), ValueRange{state0, last ? yTile : partial},
          [&](OpBuilder &nb, Location, Value t, ValueRange iter) {
            Value dt =
                widen(nb, tensor::ExtractOp::create(nb, loc, scan.getDt(),
                                                    ValueRange{bi, t, h}));
            // As the decomposition: exp(dt * a), (dt * x) * b.
            Value decay = vector::BroadcastOp::create(
                nb, loc, lanes,
                math::ExpOp::create(nb, loc,
                                    arith::MulFOp::create(nb, loc, dt, a)));
            Value xs = widen(nb, vector::TransferReadOp::create(
                                     nb, loc, eltLanes, x,
                                     ValueRange{bi, t, h, p0}, pad,
                                     ArrayRef<bool>{true}));
            Value dx = arith::MulFOp::create(
                nb, loc, vector::BroadcastOp::create(nb, loc, lanes, dt), xs);
            Value state = iter[0];
            Value ys[4] = {};
            Value y = g == 0 ? arith::ConstantOp::create(
                                   nb, loc, lanes,
                                   DenseElementsAttr::get(lanes, 0.0f))
                                   .getResult()
                             : vector::TransferReadOp::create(
                                   nb, loc, lanes, last ? before : iter[1],
                                   ValueRange{t, index(nb, 0)}, fpad,
                                   ArrayRef<bool>{true})
                                   .getResult();
            for (int64_t i = 0; i < count; ++i) {
              Value at = index(nb, first + i);
              auto shared = [&](Value m) -> Value {
                return vector::BroadcastOp::create(
                    nb, loc, lanes,
                    widen(nb, tensor::ExtractOp::create(
                                  nb, loc, m, ValueRange{bi, t, h, at})));
              };
              Value hv = vector::ExtractOp::create(nb, loc, state, i);
              hv = vector::FMAOp::create(
                  nb, loc, decay, hv,
                  arith::MulFOp::create(nb, loc, dx, shared(bm)));
              state = vector::InsertOp::create(nb, loc, hv, state, i);
              // Four partial sums, so that the step's additions do not wait
              // on each other.
              Value &sum = ys[i % 4];
              sum = sum ? vector::FMAOp::create(nb, loc, hv, shared(cm), sum)
                              .getResult()
                        : arith::MulFOp::create(nb, loc, hv, shared(cm))
                              .getResult();
            }
            for (Value sum : ys)
              if (sum)
                y = arith::AddFOp::create(nb, loc, y, sum);
            yieldStep(nb, loc, y, last && elt != f32 ? eltLanes : Type(),
                      state, iter[1], t);
          });
      if (last)
        yTile = loop.getResult(1);
      else
        partial = loop.getResult(1);
    }

    return {tensor::InsertSliceOp::create(rewriter, loc, yTile, tiles[0],
                                          tileOffsets, tileSizes, tileStrides)
                .getResult()};
  };
  auto loops = channelLoops(
      rewriter, loc, {batches, rewriter.getIndexAttr(heads)}, padded / width,
      ValueRange{yEmpty}, {yTiles}, form, computeChannels);
  scf::ForallOp forall = loops.first;
  rewriter.setInsertionPointAfter(forall);
  Value result = forall.getResult(0);
  if (padded != channels) {
    SmallVector<OpFoldResult> zeros(4, rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes = {batches, length,
                                       rewriter.getIndexAttr(heads),
                                       rewriter.getIndexAttr(channels)};
    result = tensor::ExtractSliceOp::create(
        rewriter, loc, result, zeros, sizes,
        SmallVector<OpFoldResult>(4, rewriter.getIndexAttr(1)));
  }
  rewriter.replaceOp(op, result);
  return loops;
}
