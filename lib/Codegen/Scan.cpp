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
} // namespace

static LogicalResult canScheduleSsd(SsdChunkScanView scan,
                                    std::string &why);
static LogicalResult buildSsd(RewriterBase &rewriter, SsdChunkScanView scan,
                              const ScheduleOptions &options);

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

LogicalResult mlir::fuel::buildScan(RewriterBase &rewriter, FusedOp op,
                                    const ScheduleOptions &options) {
  if (std::optional<SsdChunkScanView> ssd = SsdChunkScanView::match(op))
    return buildSsd(rewriter, *ssd, options);
  SelectiveScanView scan(op);
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
  int64_t width = options.vectorWidth;
  int64_t padded = llvm::alignTo(channels, width);
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

  // The channels padded to whole vectors; a as [N, D] (f32), so that a
  // step reads a[:, n] for its channels as one vector.
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
  auto forall = scf::ForallOp::create(
      rewriter, loc,
      ArrayRef<OpFoldResult>{batches, rewriter.getIndexAttr(padded / width)},
      ValueRange{yEmpty, sEmpty}, std::nullopt);
  Block *body = forall.getBody();
  rewriter.setInsertionPointToStart(body);
  Value b = body->getArgument(0);
  Value d0 = arith::MulIOp::create(rewriter, loc, body->getArgument(1),
                                   index(rewriter, width));
  Value yOut = body->getArgument(2), sOut = body->getArgument(3);
  auto one = [&] { return rewriter.getIndexAttr(1); };
  auto yTileType = RankedTensorType::get({staticLength, width}, elt);
  Value yTile = tensor::ExtractSliceOp::create(
      rewriter, loc, yTileType, yOut,
      ArrayRef<OpFoldResult>{b, rewriter.getIndexAttr(0), d0},
      ArrayRef<OpFoldResult>{one(), length, rewriter.getIndexAttr(width)},
      ArrayRef<OpFoldResult>{one(), one(), one()});
  Value pad = arith::ConstantOp::create(rewriter, loc, elt,
                                        rewriter.getFloatAttr(elt, 0.0));
  auto stateType = VectorType::get({n, width}, f32);
  Value state0 = arith::ConstantOp::create(
      rewriter, loc, stateType, DenseElementsAttr::get(stateType, 0.0f));

  bool softplus = scan.getDeltaSoftplus();
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
        if (elt != f32)
          y = arith::TruncFOp::create(nb, loc, eltLanes, y);
        Value tile = vector::TransferWriteOp::create(
                         nb, loc, y, iter[1], ValueRange{t, index(nb, 0)},
                         ArrayRef<bool>{true})
                         .getResult();
        scf::YieldOp::create(nb, loc, ValueRange{state, tile});
      });

  // The last state, [width, N] for these channels.
  Value last = vector::TransposeOp::create(rewriter, loc, loop.getResult(0),
                                           ArrayRef<int64_t>{1, 0});
  if (elt != f32)
    last = arith::TruncFOp::create(rewriter, loc,
                                   VectorType::get({width, n}, elt), last);
  auto sTileType = RankedTensorType::get({width, n}, elt);
  Value sTile = tensor::EmptyOp::create(rewriter, loc, sTileType.getShape(),
                                        elt);
  sTile = vector::TransferWriteOp::create(
              rewriter, loc, last, sTile,
              ValueRange{index(rewriter, 0), index(rewriter, 0)},
              ArrayRef<bool>{true, true})
              .getResult();

  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(
      rewriter, loc, loop.getResult(1), yOut,
      ArrayRef<OpFoldResult>{b, rewriter.getIndexAttr(0), d0},
      ArrayRef<OpFoldResult>{one(), length, rewriter.getIndexAttr(width)},
      ArrayRef<OpFoldResult>{one(), one(), one()});
  tensor::ParallelInsertSliceOp::create(
      rewriter, loc, sTile, sOut,
      ArrayRef<OpFoldResult>{b, d0, rewriter.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{one(), rewriter.getIndexAttr(width),
                             rewriter.getIndexAttr(n)},
      ArrayRef<OpFoldResult>{one(), one(), one()});

  // The padded channels dropped.
  rewriter.setInsertionPointAfter(forall);
  SmallVector<Value> results;
  auto slice = [&](Value v, ArrayRef<OpFoldResult> sizes) -> Value {
    if (padded == channels)
      return v;
    SmallVector<OpFoldResult> zeros(sizes.size(), rewriter.getIndexAttr(0)),
        ones(sizes.size(), one());
    return tensor::ExtractSliceOp::create(rewriter, loc, v, zeros, sizes,
                                          ones);
  };
  OpFoldResult d = rewriter.getIndexAttr(channels);
  results.push_back(slice(forall.getResult(0), {batches, length, d}));
  results.push_back(
      slice(forall.getResult(1), {batches, d, rewriter.getIndexAttr(n)}));
  rewriter.replaceOp(op, results);
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

static LogicalResult buildSsd(RewriterBase &rewriter, SsdChunkScanView scan,
                              const ScheduleOptions &options) {
  FusedOp op = scan.getOperation();
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto xType = cast<RankedTensorType>(scan.getX().getType());
  ArrayRef<int64_t> xShape = xType.getShape();
  int64_t heads = xShape[2], channels = xShape[3];
  int64_t n = cast<RankedTensorType>(scan.getB().getType()).getDimSize(3);
  OpFoldResult batches = tensor::getMixedSize(rewriter, loc, scan.getX(), 0);
  OpFoldResult length = tensor::getMixedSize(rewriter, loc, scan.getX(), 1);
  int64_t width = options.vectorWidth;
  int64_t padded = llvm::alignTo(channels, width);
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
  auto forall = scf::ForallOp::create(
      rewriter, loc,
      ArrayRef<OpFoldResult>{batches, rewriter.getIndexAttr(heads),
                             rewriter.getIndexAttr(padded / width)},
      ValueRange{yEmpty}, std::nullopt);
  Block *body = forall.getBody();
  rewriter.setInsertionPointToStart(body);
  Value bi = body->getArgument(0), h = body->getArgument(1);
  Value p0 = arith::MulIOp::create(rewriter, loc, body->getArgument(2),
                                   index(rewriter, width));
  Value yOut = body->getArgument(3);
  // The tile of y: [L, width] of head h.
  auto yTileType =
      RankedTensorType::get({xShape[1], width}, elt);
  SmallVector<OpFoldResult> tileOffsets = {bi, rewriter.getIndexAttr(0), h,
                                           p0};
  SmallVector<OpFoldResult> tileSizes = {one(), length, one(),
                                         rewriter.getIndexAttr(width)};
  SmallVector<OpFoldResult> tileStrides(4, one());
  Value yTile = tensor::ExtractSliceOp::create(
      rewriter, loc, yTileType, yOut, tileOffsets, tileSizes, tileStrides);
  Value a = widen(rewriter, tensor::ExtractOp::create(rewriter, loc,
                                                      scan.getA(),
                                                      ValueRange{h}));
  Value pad = arith::ConstantOp::create(rewriter, loc, elt,
                                        rewriter.getFloatAttr(elt, 0.0));
  Value bm = scan.getB(), cm = scan.getC();
  // The state in groups of kStateGroup vectors, a pass over the sequence
  // each: y's partial sums in an f32 tile between passes (none with one
  // group), the last pass writing y.
  int64_t groups = (n + kStateGroup - 1) / kStateGroup;
  Value partial;
  if (groups > 1)
    partial = tensor::EmptyOp::create(
        rewriter, loc, ArrayRef<OpFoldResult>{length, rewriter.getIndexAttr(width)},
        f32);
  Value fpad = arith::ConstantOp::create(rewriter, loc, f32,
                                         rewriter.getF32FloatAttr(0.0));
  for (int64_t g = 0; g < groups; ++g) {
    int64_t first = g * kStateGroup, count = std::min(kStateGroup, n - first);
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
          Value dt = widen(nb, tensor::ExtractOp::create(
                                   nb, loc, scan.getDt(), ValueRange{bi, t, h}));
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
          if (last && elt != f32)
            y = arith::TruncFOp::create(nb, loc, eltLanes, y);
          Value tile = vector::TransferWriteOp::create(
                           nb, loc, y, iter[1], ValueRange{t, index(nb, 0)},
                           ArrayRef<bool>{true})
                           .getResult();
          scf::YieldOp::create(nb, loc, ValueRange{state, tile});
        });
    if (last)
      yTile = loop.getResult(1);
    else
      partial = loop.getResult(1);
  }

  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(rewriter, loc, yTile,
                                        yOut, tileOffsets, tileSizes,
                                        tileStrides);
  rewriter.setInsertionPointAfter(forall);
  Value result = forall.getResult(0);
  if (padded != channels) {
    SmallVector<OpFoldResult> zeros(4, rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes = {batches, length,
                                       rewriter.getIndexAttr(heads),
                                       rewriter.getIndexAttr(channels)};
    result = tensor::ExtractSliceOp::create(rewriter, loc, result, zeros,
                                            sizes, tileStrides);
  }
  rewriter.replaceOp(op, result);
  return success();
}
