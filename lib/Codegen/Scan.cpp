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
/// The most state vectors kept in registers (N): the step is unrolled over
/// them.
constexpr int64_t kMaxState = 128;
} // namespace

LogicalResult mlir::fuel::canScheduleScan(FusedOp op,
                                          const ScheduleOptions &options,
                                          std::string &why) {
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
  auto widen = [&](OpBuilder &b, Value v) -> Value {
    if (getElementTypeOrSelf(v.getType()) == f32)
      return v;
    Type to = isa<VectorType>(v.getType()) ? Type(lanes) : f32;
    return arith::ExtFOp::create(b, loc, to, v);
  };
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
