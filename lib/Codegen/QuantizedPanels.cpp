//===- QuantizedPanels.cpp - Quantized matmuls with many rows of A --------===//
//
// The panel schedule: with many rows of A (prefill), tiles of rows of A by
// rows of W (Quantized.cpp, QuantizedTables.cpp) would each dequantize the
// weight again (qmatmul at 64 rows: 8 times with tiles of 8 rows). Here
// each scf.forall iteration takes `blockM` rows of A by `np` rows of W, the
// register tile's columns (16 with AVX2, 32 with AVX-512), and walks the
// reduction a block at a time: it dequantizes the block of its rows of W
// once, chunk by chunk through the format's decoding (`RowPanels`, in the
// order its packed A follows), into `rows` [np, kc]; transposes that into
// a panel [kc, np] (rows of W in lanes), a square of lanes x lanes at a
// time by shuffles; and runs every register tile of its rows of A over
// the panel (`accumulatePanel`), the outer products of a broadcast element
// of A with the panel's vectors, as fused_linear's schedule runs over its
// packed right operand. The panel (16 KiB) stays in L1 across the register
// tiles; the tiles' sums stay in the iteration's tile of C (f32) from
// block to block. awq_matmul, whose words already span columns, builds
// its panels without the transposition (QuantizedTables.cpp) and runs the
// same register tiles.
//
//===----------------------------------------------------------------------===//

#include "QuantizedTiles.h"
#include "ScheduleUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fuel;
using namespace mlir::fuel::quantized;

namespace {
/// Steps of the reduction per iteration of a register tile's loop.
constexpr int64_t kPanelUnroll = 8;

/// The panel schedule's sizes: its register tile is fused_linear's
/// (`registerTile`: 4 x 16 with AVX2, 8 x 32 with AVX-512), its panels the
/// register tile's columns by as many chunks as fit `kPanelBytes`.
struct PanelShape {
  int64_t regM, np; ///< the register tile: rows of A, rows of W.
  int64_t blockM;   ///< rows of A per iteration.
  int64_t subChunks; ///< chunks of a panel.
  int64_t outer;    ///< chunks per iteration of the loop over K: a panel's,
                    ///< or a step's when a step holds several panels.
  int64_t chunkWeights; ///< weights of a chunk.
  int64_t kc() const { return subChunks * chunkWeights; }
};

std::optional<PanelShape> panelShapeOf(const RowPanels &f, int64_t rows,
                                       int64_t k, int64_t n, int64_t lanes,
                                       const ScheduleOptions &options) {
  RegisterTile rt = registerTile(options);
  bool dynamic = ShapedType::isDynamic(rows);
  if (!panelColumnsFit(n, lanes, options) ||
      (dynamic ? options.rowsAtLeast : rows) < f.leastRows)
    return std::nullopt;
  PanelShape p;
  p.regM = rt.m;
  p.np = rt.n;
  p.blockM = panelBlockRows(rows, rt.m);
  int64_t most =
      std::max<int64_t>(kPanelBytes / (p.np * 4 * f.chunkWeights), 1);
  p.chunkWeights = f.chunkWeights;
  p.subChunks = f.stepChunks == 1
                    ? powerOfTwoDividing(k / f.chunkWeights, most)
                    : powerOfTwoDividing(f.stepChunks, most);
  p.outer = std::max(p.subChunks, f.stepChunks);
  return p;
}

} // namespace

int64_t quantized::panelBlockRows(int64_t rows, int64_t regM) {
  return ShapedType::isDynamic(rows)
             ? kPanelBlockM
             : std::min<int64_t>(kPanelBlockM, llvm::alignTo(rows, regM));
}

bool quantized::panelColumnsFit(int64_t n, int64_t lanes,
                                const ScheduleOptions &options) {
  RegisterTile rt = registerTile(options);
  return n % rt.n == 0 && rt.n % lanes == 0 && kPanelBlockM % rt.m == 0;
}

Value quantized::accumulatePanel(OpBuilder &b, Location l, const PanelTile &t,
                                 Value a, Value m0, Value k0, Value panel,
                                 Value sums, Value liveRows) {
  Type f32 = b.getF32Type();
  auto lanesType = VectorType::get({t.lanes}, f32);
  Type aElt = cast<RankedTensorType>(a.getType()).getElementType();
  Value padF =
      arith::ConstantOp::create(b, l, f32, b.getF32FloatAttr(0.0));
  // The register tile's columns: two vectors (`registerTile`).
  int64_t groups = 2;
  return carriedLoop(
      b, l, 0, t.columns, groups * t.lanes, sums,
      [&](OpBuilder &cb, Value c0, Value sums) -> Value {
        Value rows = liveRows ? liveRows
                              : arith::ConstantIndexOp::create(cb, l, t.blockM)
                                    .getResult();
        return carriedLoop(
            cb, l, 0, rows, t.regM, sums,
            [&](OpBuilder &mb, Value mt, Value sums) -> Value {
              StepBuilder mst{mb, l};
              SmallVector<Value> accs, rowOf, colOf;
              for (int64_t g = 0; g < groups; ++g)
                colOf.push_back(
                    arith::AddIOp::create(mb, l, c0, mst.index(g * t.lanes)));
              for (int64_t i = 0; i < t.regM; ++i) {
                Value r = arith::AddIOp::create(mb, l, mt, mst.index(i));
                rowOf.push_back(arith::AddIOp::create(mb, l, m0, r));
                for (int64_t g = 0; g < groups; ++g)
                  accs.push_back(vector::TransferReadOp::create(
                      mb, l, lanesType, sums, ValueRange{r, colOf[g]}, padF,
                      ArrayRef<bool>{true}));
              }
              auto kLoop = scf::ForOp::create(
                  mb, l, mst.index(0), mst.index(t.kc),
                  mst.index(kPanelUnroll), accs,
                  [&](OpBuilder &kb, Location, Value k, ValueRange carried) {
                    StepBuilder kst{kb, l};
                    SmallVector<Value> next(carried);
                    for (int64_t ku = 0; ku < kPanelUnroll; ++ku) {
                      Value kk =
                          arith::AddIOp::create(kb, l, k, kst.index(ku));
                      Value col = arith::AddIOp::create(kb, l, k0, kk);
                      SmallVector<Value> wv;
                      for (int64_t g = 0; g < groups; ++g)
                        wv.push_back(vector::TransferReadOp::create(
                            kb, l, lanesType, panel, ValueRange{kk, colOf[g]},
                            padF, ArrayRef<bool>{true}));
                      for (int64_t i = 0; i < t.regM; ++i) {
                        Value x = tensor::ExtractOp::create(
                            kb, l, a, ValueRange{rowOf[i], col});
                        if (aElt != f32)
                          x = arith::ExtFOp::create(kb, l, f32, x);
                        Value xv =
                            vector::BroadcastOp::create(kb, l, lanesType, x);
                        for (int64_t g = 0; g < groups; ++g) {
                          Value &acc = next[i * groups + g];
                          acc = vector::FMAOp::create(kb, l, xv, wv[g], acc);
                        }
                      }
                    }
                    scf::YieldOp::create(kb, l, next);
                  });
              for (int64_t i = 0; i < t.regM; ++i) {
                Value r = arith::AddIOp::create(mb, l, mt, mst.index(i));
                for (int64_t g = 0; g < groups; ++g)
                  sums = vector::TransferWriteOp::create(
                             mb, l, kLoop.getResult(i * groups + g), sums,
                             ValueRange{r, colOf[g]}, ArrayRef<bool>{true})
                             .getResult();
              }
              return sums;
            });
      });
}

LogicalResult quantized::buildRowPanels(RewriterBase &rewriter, FusedOp op,
                                        Value act, int64_t k, int64_t n,
                                        int64_t lanes, const RowPanels &f,
                                        const ScheduleOptions &options) {
  int64_t rowCount = foldedRows(act);
  std::optional<PanelShape> shape =
      panelShapeOf(f, rowCount, k, n, lanes, options);
  if (!shape)
    return failure();
  const PanelShape &p = *shape;
  Location loc = op.getLoc();
  Type f32 = rewriter.getF32Type();
  TileFrame frame = TileFrame::open(rewriter, op, act, rowCount, n, p.blockM,
                                    p.np, f.pack, p.regM);
  Value a = frame.a, m0 = frame.m0, n0 = frame.n0;
  Value live = frame.liveRows(rewriter, loc);
  StepBuilder sb{rewriter, loc};
  int64_t kc = p.kc(), groups = p.np / lanes;
  int64_t pieces = f.chunkWeights / lanes;
  auto lanesType = VectorType::get({lanes}, f32);
  Value padF = arith::ConstantOp::create(rewriter, loc, f32,
                                         rewriter.getF32FloatAttr(0.0));
  // The iteration's sums, from zeros; in C's tile itself when C is f32.
  Type cElt = frame.cType.getElementType();
  Value sums = cElt.isF32()
                   ? frame.emptyTile(rewriter, loc)
                   : tensor::EmptyOp::create(
                         rewriter, loc, ArrayRef<int64_t>{p.blockM, p.np},
                         f32)
                         .getResult();
  sums = linalg::FillOp::create(rewriter, loc, padF, sums).getResult(0);
  Value rows = tensor::EmptyOp::create(
      rewriter, loc, ArrayRef<int64_t>{p.np, kc}, f32);
  Value panel = tensor::EmptyOp::create(
      rewriter, loc, ArrayRef<int64_t>{kc, p.np}, f32);
  int64_t stepsPerIter = p.outer / f.stepChunks;
  auto loop = scf::ForOp::create(
      rewriter, loc, sb.index(0), sb.index(k / (p.outer * f.chunkWeights)),
      sb.index(1), ValueRange{sums, rows, panel},
      [&](OpBuilder &b, Location l, Value it, ValueRange args) {
        StepBuilder st{b, l};
        Value sums = args[0], rows = args[1], panel = args[2];
        Value firstStep =
            arith::MulIOp::create(b, l, it, st.index(stepsPerIter));
        for (int64_t sub = 0; sub < p.outer / p.subChunks; ++sub) {
          // The panel's rows of W, dequantized, a row of `rows` each.
          rows = carriedLoop(
              b, l, 0, p.np, 1, rows,
              [&](OpBuilder &rb, Value j, Value rows) -> Value {
                StepBuilder rst{rb, l};
                Value row = arith::AddIOp::create(rb, l, n0, j);
                for (int64_t u = 0; u < p.subChunks; ++u) {
                  int64_t g = sub * p.subChunks + u;
                  Value step = arith::AddIOp::create(
                      rb, l, firstStep, rst.index(g / f.stepChunks));
                  SmallVector<Value, 16> w =
                      f.decode(rst, row, step, g % f.stepChunks);
                  for (int64_t piece = 0; piece < pieces; ++piece)
                    rows = vector::TransferWriteOp::create(
                               rb, l, w[piece], rows,
                               ValueRange{j, rst.index(u * f.chunkWeights +
                                                       piece * lanes)},
                               ArrayRef<bool>{true})
                               .getResult();
                }
                return rows;
              });
          // Transposed into the panel, `lanes` x `lanes` at a time.
          panel = carriedLoop(
              b, l, 0, kc, lanes, panel,
              [&](OpBuilder &tb, Value k, Value panel) -> Value {
                StepBuilder tst{tb, l};
                for (int64_t g = 0; g < groups; ++g) {
                  SmallVector<Value> v;
                  for (int64_t r = 0; r < lanes; ++r)
                    v.push_back(vector::TransferReadOp::create(
                        tb, l, lanesType, rows,
                        ValueRange{tst.index(g * lanes + r), k}, padF,
                        ArrayRef<bool>{true}));
                  v = transposeVectors(tb, l, v);
                  for (int64_t r = 0; r < lanes; ++r)
                    panel = vector::TransferWriteOp::create(
                                tb, l, v[r], panel,
                                ValueRange{arith::AddIOp::create(
                                               tb, l, k, tst.index(r)),
                                           tst.index(g * lanes)},
                                ArrayRef<bool>{true})
                                .getResult();
                }
                return panel;
              });
          // Every register tile of the iteration's rows over the panel.
          Value k0 = arith::AddIOp::create(
              b, l,
              arith::MulIOp::create(b, l, it,
                                    st.index(p.outer * f.chunkWeights)),
              st.index(sub * kc));
          sums = accumulatePanel(b, l,
                                 PanelTile{p.regM, lanes, p.blockM, kc, p.np},
                                 a, m0, k0, panel, sums, live);
        }
        scf::YieldOp::create(b, l, ValueRange{sums, rows, panel});
      });
  Value tile = loop.getResult(0);
  if (!cElt.isF32()) {
    Value out = frame.emptyTile(rewriter, loc);
    AffineMap id = rewriter.getMultiDimIdentityMap(2);
    tile = linalg::GenericOp::create(
               rewriter, loc, out.getType(), tile, out,
               SmallVector<AffineMap>{id, id},
               SmallVector<utils::IteratorType>(
                   2, utils::IteratorType::parallel),
               [&](OpBuilder &nb, Location nl, ValueRange args) {
                 linalg::YieldOp::create(
                     nb, nl, arith::TruncFOp::create(nb, nl, cElt, args[0])
                                 .getResult());
               })
               .getResult(0);
  }
  frame.close(rewriter, op, tile);
  return success();
}
