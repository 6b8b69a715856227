//===- QuantizedTiles.h - What the quantized schedules share ----*- C++ -*-===//
//
// The frame of every quantized-matmul schedule (GGML's qmatmul in
// Quantized.cpp, awq_matmul and nf4_matmul in QuantizedTables.cpp): tiles of
// rows of A by rows (or columns) of W in an scf.forall, a loop over the
// reduction carrying one vector accumulator per output, the tile written
// back.
//
//===----------------------------------------------------------------------===//

#ifndef FUEL_LIB_CODEGEN_QUANTIZEDTILES_H
#define FUEL_LIB_CODEGEN_QUANTIZEDTILES_H

#include "FuelFused/Codegen/Schedules.h"
#include "FuelFused/IR/FusedOpViews.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace fuel {
namespace quantized {

/// The rows of activations [..., K] with their leading dims folded: their
/// product, or dynamic when one is.
int64_t foldedRows(Value act);

/// The largest power of two at most `most` that divides `n` (1 at least).
int64_t powerOfTwoDividing(int64_t n, int64_t most);

/// The rows of A of a tile of at most `most` (rounded down to a power of
/// two): that for dynamic rows or many, else the fewest power of two that
/// covers them (the rows padded with zero rows to whole tiles: 5 rows in
/// one tile of 8 read the weight once, in tiles of one row 5 times).
int64_t rowTile(int64_t rows, int64_t most);

/// The f32 lanes of the target's vector registers, a power of two from 2 to
/// 16.
int64_t targetLanes(const ScheduleOptions &options);

/// A ([rows, K], folded) copied as f32 with its K reordered: K split into
/// dims of sizes `split` (outermost first), output dim d being input dim
/// `perm[d]` of them, and flattened back to [rows, K]. The rows may be
/// dynamic.
Value permuteColumns(RewriterBase &rewriter, Location loc, Value a,
                     ArrayRef<int64_t> split, ArrayRef<unsigned> perm);

/// Builds the vector code of one step.
struct StepBuilder {
  OpBuilder &b;
  Location loc;

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

  /// A constant vector of i32 lanes.
  Value lanesOf(ArrayRef<int32_t> values) {
    auto type = VectorType::get({static_cast<int64_t>(values.size())},
                                b.getI32Type());
    return arith::ConstantOp::create(b, loc, type,
                                     DenseElementsAttr::get(type, values));
  }

  /// The f16 in the low 16 bits of the i32 `word`, as f32.
  Value halfToF32(Value word) {
    Value bits = arith::TruncIOp::create(b, loc, b.getI16Type(), word);
    Value half = arith::BitcastOp::create(b, loc, b.getF16Type(), bits);
    return arith::ExtFOp::create(b, loc, b.getF32Type(), half);
  }
};

/// What the quantized builds share: A folded to [rows, K] (rows that are
/// not whole tiles padded with zero rows to a multiple of `tileM`, or of a
/// smaller row unit), an scf.forall over tiles of `tileM` rows of A by `tileN` columns
/// of C (the builder's insertion point inside it), and the write of each
/// tile and of C.
struct TileFrame {
  Value act, a;
  /// A's rows where they are dynamic; a's (padded) rows where tiles may
  /// pass them (dynamic rows, or a row unit below the tile's).
  Value rowCount, paddedRows;
  /// A's rows where the tiles' are more (C is sliced back to them).
  OpFoldResult usedRows;
  SmallVector<ReassociationIndices> fold;
  scf::ForallOp forall;
  Value m0, n0, outArg;
  int64_t tileM, tileN;
  RankedTensorType cType;

  /// Opens the scf.forall of `op`'s tiles; `prepare`, when given, turns the
  /// folded A into what the tiles read (the GGML schedule's packed copy).
  /// Rows that are not whole tiles (static, or dynamic at run time) are
  /// padded, a's to a multiple of `rowUnit` (dividing `tileM`; 0: `tileM`)
  /// and C's to whole tiles; a tile then has `liveRows` of a.
  static TileFrame open(RewriterBase &rewriter, FusedOp op, Value act,
                        int64_t rows, int64_t n, int64_t tileM,
                        int64_t tileN,
                        function_ref<Value(Value)> prepare = nullptr,
                        int64_t rowUnit = 0);

  /// The rows of a that the iteration's tile covers: a multiple of the row
  /// unit up to `tileM`, or null where every tile covers `tileM`.
  Value liveRows(OpBuilder &b, Location loc) const;

  /// Dot-product form: the accumulator of (row m of A, row j of W) gains
  /// the products of the dequantized pieces `w` of row j with the pieces
  /// `act[m]` of row m, lane by lane.
  template <typename Rows>
  void accumulate(OpBuilder &b, Location loc, MutableArrayRef<Value> accs,
                  int64_t j, ArrayRef<Value> w, const Rows &act) const {
    for (int64_t m = 0; m < tileM; ++m) {
      Value &acc = accs[m * tileN + j];
      for (size_t piece = 0; piece < w.size(); ++piece)
        acc = vector::FMAOp::create(b, loc, w[piece], act[m][piece], acc);
    }
  }

  /// The tile of C ([tileM, tileN]) to write into.
  Value emptyTile(RewriterBase &rewriter, Location loc) const;

  /// The tile of dot products: accumulator m * tileN + j, reduced across
  /// its lanes, is C[m0 + m, n0 + j].
  Value reducedTile(RewriterBase &rewriter, Location loc,
                    ValueRange accs) const;

  /// Writes `tile` as the forall's tile of C and replaces `op` by C.
  void close(RewriterBase &rewriter, FusedOp op, Value tile);
};

/// A quantized weight whose rows are rows of W (qmatmul's GGML blocks,
/// nf4_matmul's codes), as the panel schedule (`buildRowPanels`) reads it.
struct RowPanels {
  /// Weights of a chunk, what `decode` yields: a multiple of the lanes.
  int64_t chunkWeights;
  /// Chunks of a step: `decode` takes a chunk of its step statically.
  int64_t stepChunks;
  /// The fewest rows of A that run on panels.
  int64_t leastRows;
  /// A ([rows, K], folded) as f32, each chunk's K in the order `decode`
  /// yields its weights.
  function_ref<Value(Value)> pack;
  /// Chunk `c` of step `step` of row `row` of W, dequantized:
  /// `chunkWeights / lanes` vectors of f32.
  function_ref<SmallVector<Value, 16>(StepBuilder &st, Value row,
                                      Value step, int64_t c)>
      decode;
};

/// Whether the panel schedule's register tiles (`options`) fit N columns
/// and vectors of `lanes`.
bool panelColumnsFit(int64_t n, int64_t lanes,
                     const ScheduleOptions &options);

/// Replaces `op` (C = A W^T, A `act` [..., K], W [N, K] read through `f`)
/// by the panel schedule (QuantizedPanels.cpp) when its rows of A are at
/// least `f.leastRows` (static ones, padded to a multiple of the register
/// tile's; or dynamic ones, `options.rowsAtLeast` that many) and the tiles
/// fit N (`panelColumnsFit`); fails, changing nothing, otherwise.
LogicalResult buildRowPanels(RewriterBase &rewriter, FusedOp op, Value act,
                             int64_t k, int64_t n, int64_t lanes,
                             const RowPanels &f,
                             const ScheduleOptions &options);

/// The rows of A of one scf.forall iteration of a panel schedule, at most.
constexpr int64_t kPanelBlockM = 128;
/// The bytes of a panel of dequantized weights, at most (L1).
constexpr int64_t kPanelBytes = 16 * 1024;

/// The rows of A of a panel schedule's block: all of them (padded to a
/// multiple of the register tile's `regM`) up to kPanelBlockM, else
/// kPanelBlockM, the last block's register tiles stopping at A's rows
/// (padded likewise; `TileFrame::liveRows`).
int64_t panelBlockRows(int64_t rows, int64_t regM);

/// A panel of dequantized weights and the register tiles that run over it
/// (QuantizedPanels.cpp): `blockM` rows of A, in tiles of `regM` rows by
/// two vectors of `lanes` columns (fused_linear's register tile); a panel
/// of `kc` steps of the reduction by `columns` (a multiple of the tile's).
struct PanelTile {
  int64_t regM, lanes, blockM, kc, columns;
};

/// `sums` ([blockM, columns] f32) plus A's rows m0 to m0 + blockM (or to
/// m0 + `liveRows`, a multiple of regM known at run time), columns k0 to
/// k0 + kc (f32, f16 or bf16), times `panel` ([kc, columns] f32): per
/// register tile, its sums loaded into registers, each step an element of
/// A broadcast times the tile's two vectors of the panel, the sums stored
/// back.
Value accumulatePanel(OpBuilder &b, Location loc, const PanelTile &t,
                      Value a, Value m0, Value k0, Value panel, Value sums,
                      Value liveRows = nullptr);

/// The checks and builds of awq_matmul and nf4_matmul (QuantizedTables.cpp).
LogicalResult canScheduleAwq(AwqMatmulView awq, std::string &why);
LogicalResult buildAwq(RewriterBase &rewriter, AwqMatmulView awq,
                       const ScheduleOptions &options);
/// The fewest rows of A for which awq_matmul runs on panels, or 0 when the
/// panels do not fit it.
int64_t awqPanelRows(AwqMatmulView awq, const ScheduleOptions &options);
LogicalResult canScheduleNf4(Nf4MatmulView nf4, const ScheduleOptions &options,
                             std::string &why);
LogicalResult buildNf4(RewriterBase &rewriter, Nf4MatmulView nf4,
                       const ScheduleOptions &options);

} // namespace quantized
} // namespace fuel
} // namespace mlir

#endif // FUEL_LIB_CODEGEN_QUANTIZEDTILES_H
