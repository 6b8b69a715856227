//===- DecomposeScan.cpp - Decompositions: Mamba scans --------------------===//
//
// The state-space scans as an scf.for over the sequence carrying the state
// as a tensor: per step, extract the step's slices, update the state with
// one generic and write the step's output with another. chunk_size (SSD)
// only changes GPU blocking, never the result, so the CPU scan is
// sequential.
//
//===----------------------------------------------------------------------===//

#include "Decompositions.h"
#include "Emit.h"

#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::fuel;

/// The slice of `t` at position `l` of dim `dim`, with that dim dropped.
static Value sliceAt(Emitter &e, Value t, unsigned dim, Value l) {
  OpBuilder &b = e.b;
  auto type = cast<RankedTensorType>(t.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, e.loc, t);
  SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
  offsets[dim] = l;
  sizes[dim] = b.getIndexAttr(1);
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (i != dim)
      shape.push_back(type.getDimSize(i));
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  return tensor::ExtractSliceOp::create(b, e.loc, resultType, t, offsets, sizes,
                                        strides);
}

/// Writes `v` (the slice with `dim` dropped) into `t` at position `l`.
static Value insertAt(Emitter &e, Value v, Value t, unsigned dim, Value l) {
  OpBuilder &b = e.b;
  auto type = cast<RankedTensorType>(t.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, e.loc, t);
  SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
  offsets[dim] = l;
  sizes[dim] = b.getIndexAttr(1);
  return tensor::InsertSliceOp::create(b, e.loc, v, t, offsets, sizes, strides);
}

/// Mamba-1: dt = softplus(delta) if delta_softplus (log(1 + exp(x)), x for
/// x > 20 as PyTorch); h_t = exp(dt_t * a) * h_{t-1} + (dt_t * u_t) * b_t;
/// y_t = sum_n h_t * c_t. Results: y and the last state.
LogicalResult decompositions::checkSelectiveScan(FusedOp, std::string &) {
  return success(); // Every verified op.
}

SmallVector<Value> decompositions::buildSelectiveScan(OpBuilder &builder,
                                                      FusedOp op) {
  SelectiveScanView scan(op);
  Value u = scan.getU(), delta = scan.getDelta(), a = scan.getA(),
        bm = scan.getB(), c = scan.getC();
  Emitter e(builder, op.getLoc());
  OpBuilder &b = e.b;
  Location loc = e.loc;
  Type elt = cast<ShapedType>(u.getType()).getElementType();
  Type ct = e.computeType(elt);
  Value uf = e.castTo(u, ct), df = e.castTo(delta, ct), af = e.castTo(a, ct),
        bf = e.castTo(bm, ct), cf = e.castTo(c, ct);
  if (scan.getDeltaSoftplus()) {
    Value one = e.constF(ct, 1.0), threshold = e.constF(ct, 20.0);
    df = e.elementwise(
        {df}, df, ct, [&](OpBuilder &nb, Location nl, ValueRange x) {
          Value sp = math::LogOp::create(
              nb, nl,
              arith::AddFOp::create(nb, nl, one,
                                    math::ExpOp::create(nb, nl, x[0])));
          Value big = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGT,
                                            x[0], threshold);
          return arith::SelectOp::create(nb, nl, big, x[0], sp).getResult();
        });
  }
  // State h[b, d, n] and output y[b, l, d].
  SmallVector<OpFoldResult> hSizes = {e.dim(uf, 0), e.dim(uf, 2), e.dim(af, 1)};
  Value h0 = e.full(hSizes, ct, 0.0);
  Value y0 = e.empty(tensor::getMixedSizes(b, loc, uf), ct);
  Value zero = e.constIndex(0), one = e.constIndex(1);
  Value len = e.dimValue(uf, 1);
  auto loop = scf::ForOp::create(
      b, loc, zero, len, one, ValueRange{h0, y0},
      [&](OpBuilder &lb, Location ll, Value l, ValueRange iter) {
        Emitter le(lb, ll);
        Value dtL = sliceAt(le, df, 1, l), uL = sliceAt(le, uf, 1, l); // [B, D]
        Value bL = sliceAt(le, bf, 1, l), cL = sliceAt(le, cf, 1, l); // [B, N]
        // h = exp(dt * a) * h + dt * u * b; loops (b, d, n).
        Value h = le.generic(
            3,
            {{dtL, le.loops(3, {0, 1})},
             {af, le.loops(3, {1, 2})},
             {uL, le.loops(3, {0, 1})},
             {bL, le.loops(3, {0, 2})}},
            iter[0], le.loops(3, {0, 1, 2}), {},
            [](OpBuilder &nb, Location nl, ValueRange x) {
              Value decay = math::ExpOp::create(
                  nb, nl, arith::MulFOp::create(nb, nl, x[0], x[1]));
              Value in = arith::MulFOp::create(
                  nb, nl, arith::MulFOp::create(nb, nl, x[0], x[2]), x[3]);
              return arith::AddFOp::create(
                         nb, nl, arith::MulFOp::create(nb, nl, decay, x[4]), in)
                  .getResult();
            });
        // y_l[b, d] = sum_n h[b, d, n] * c[b, n]; loops (b, d, n).
        SmallVector<OpFoldResult> ySizes = {le.dim(h, 0), le.dim(h, 1)};
        Value yL = le.generic(
            3, {{h, le.loops(3, {0, 1, 2})}, {cL, le.loops(3, {0, 2})}},
            le.full(ySizes, ct, 0.0), le.loops(3, {0, 1}), {2},
            multiplyAccumulate);
        Value y = insertAt(le, yL, iter[1], 1, l);
        scf::YieldOp::create(lb, ll, ValueRange{h, y});
      });
  return SmallVector<Value>{e.castTo(loop.getResult(1), elt),
                            e.castTo(loop.getResult(0), elt)};
}

/// Mamba-2 SSD: h_t = exp(dt_t * a) * h_{t-1} + dt_t * x_t (outer) b_t with
/// h [B, H, P, N]; y_t[b, h, p] = sum_n h_t[b, h, p, n] * c_t[b, h, n].
LogicalResult decompositions::checkSsdChunkScan(FusedOp, std::string &) {
  return success(); // Every verified op.
}

SmallVector<Value> decompositions::buildSsdChunkScan(OpBuilder &builder,
                                                     FusedOp op) {
  SsdChunkScanView scan(op);
  Value x = scan.getX(), dt = scan.getDt(), a = scan.getA(), bm = scan.getB(),
        c = scan.getC();
  Emitter e(builder, op.getLoc());
  OpBuilder &b = e.b;
  Location loc = e.loc;
  Type elt = cast<ShapedType>(x.getType()).getElementType();
  Type ct = e.computeType(elt);
  Value xf = e.castTo(x, ct), dtf = e.castTo(dt, ct), af = e.castTo(a, ct),
        bf = e.castTo(bm, ct), cf = e.castTo(c, ct);
  SmallVector<OpFoldResult> hSizes = {e.dim(xf, 0), e.dim(xf, 2), e.dim(xf, 3),
                                      e.dim(bf, 3)};
  Value h0 = e.full(hSizes, ct, 0.0);
  Value y0 = e.empty(tensor::getMixedSizes(b, loc, xf), ct);
  Value zero = e.constIndex(0), one = e.constIndex(1);
  Value len = e.dimValue(xf, 1);
  auto loop = scf::ForOp::create(
      b, loc, zero, len, one, ValueRange{h0, y0},
      [&](OpBuilder &lb, Location ll, Value l, ValueRange iter) {
        Emitter le(lb, ll);
        Value xL = sliceAt(le, xf, 1, l);   // [B, H, P]
        Value dtL = sliceAt(le, dtf, 1, l); // [B, H]
        Value bL = sliceAt(le, bf, 1, l);   // [B, H, N]
        Value cL = sliceAt(le, cf, 1, l);   // [B, H, N]
        // Loops (b, h, p, n).
        Value h = le.generic(
            4,
            {{dtL, le.loops(4, {0, 1})},
             {af, le.loops(4, {1})},
             {xL, le.loops(4, {0, 1, 2})},
             {bL, le.loops(4, {0, 1, 3})}},
            iter[0], le.loops(4, {0, 1, 2, 3}), {},
            [](OpBuilder &nb, Location nl, ValueRange v) {
              Value decay = math::ExpOp::create(
                  nb, nl, arith::MulFOp::create(nb, nl, v[0], v[1]));
              Value in = arith::MulFOp::create(
                  nb, nl, arith::MulFOp::create(nb, nl, v[0], v[2]), v[3]);
              return arith::AddFOp::create(
                         nb, nl, arith::MulFOp::create(nb, nl, decay, v[4]), in)
                  .getResult();
            });
        SmallVector<OpFoldResult> ySizes = {le.dim(h, 0), le.dim(h, 1),
                                            le.dim(h, 2)};
        Value yL = le.generic(
            4, {{h, le.loops(4, {0, 1, 2, 3})}, {cL, le.loops(4, {0, 1, 3})}},
            le.full(ySizes, ct, 0.0), le.loops(4, {0, 1, 2}), {3},
            multiplyAccumulate);
        Value y = insertAt(le, yL, iter[1], 1, l);
        scf::YieldOp::create(lb, ll, ValueRange{h, y});
      });
  return SmallVector<Value>{e.castTo(loop.getResult(1), elt)};
}
