//===- GpuQuantized.h - The quantized matmuls' decode forms -----*- C++ -*-===//
//
// What the quantized matmuls' GPU decode forms share (GpuQuantized.cpp, a
// block per output element; GpuQuantizedAlongN.cpp, lanes along n for a
// weight laid out [K, N]): the decomposition evaluated at one point of the
// contraction's iteration space, as scalar code (PointEvaluator), and the
// reads that the points of a chunk of consecutive k (or n) share
// (ChunkReads).
//
//===----------------------------------------------------------------------===//

#ifndef FUEL_LIB_CODEGEN_GPUQUANTIZED_H
#define FUEL_LIB_CODEGEN_GPUQUANTIZED_H

#include "FuelFused/Codegen/Schedules.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir {
namespace fuel {

/// The reads of a chunk of consecutive values of a loop index along one or
/// more axes (an axis: values base, ..., base + width - 1, base a multiple
/// of width; the decode forms chunk k, the one for a [K, N] weight n as
/// well): an element of a tensor whose last index is one of an axis's
/// values comes from one vector read of the axis's chunk at base, in pieces
/// of at most 16 bytes (one aligned load each once
/// fuel-gpu-align-vector-accesses has run), shared by the chunk's points.
/// So does one whose last index is one of them floor-divided by a power of
/// two c dividing width (values packed c to an element along the axis, as
/// nf4's two 4-bit codes a byte along k, awq's eight a word along n):
/// element j / c of the read of width / c elements at base / c.
struct ChunkReads {
  struct Axis {
    Value base;
    SmallVector<Value> values;
  };
  SmallVector<Axis> axes;
  /// A tensor's chunk read at some leading indices, in pieces.
  struct Read {
    Value tensor;
    SmallVector<Value> leading;
    unsigned axis;
    int64_t packing;
    SmallVector<Value> pieces;
  };
  SmallVector<Read> reads;

  /// A chunk of `width` consecutive values from `base` (index values, base
  /// a multiple of width), as a new axis.
  void addAxis(OpBuilder &b, Location loc, Value base, int64_t width);

  /// The element at `indices` of `tensor` where its last index is one of
  /// an axis's values (or one of them floor-divided, see above), else
  /// null.
  Value element(OpBuilder &b, Location loc, Value tensor,
                ValueRange indices);

  /// Whether `word` below applies (the decode form's chunks of k).
  bool windows = false;

  /// `extract` (a tensor.extract from a 1-D tensor in a decomposition's
  /// body, as a point evaluates it with `mapping`) where the chunk's
  /// points read it at a window of consecutive elements: GGML's bytes,
  /// each read from its u32 word at (byte offset) / 4, where a chunk's
  /// 8 bytes are 2 or 3 words that LLVM cannot tell apart (it reads one
  /// word a byte). Its first evaluation (the chunk's first point) is
  /// cloned; a later one whose index is the first's plus a constant is
  /// the window's element at that distance, and one whose index is (x +
  /// d) floor-divided by a power of two c where the first's is x / c
  /// (d >= 0 a constant, x a multiple of 2^t, d < 4 c) is the window's
  /// element (x mod c + d) / c, selected at run time. The window's
  /// elements are read once each, clamped to the tensor. Null where the
  /// index is neither (the extract is then cloned as it is).
  Value word(OpBuilder &b, Location loc, Operation *extract,
             IRMapping &mapping);

private:
  /// A window: the first evaluation's index, the value it floor-divides
  /// (null if none), by what, and the elements read from it on.
  struct Window {
    Value tensor, first, dividend;
    int64_t divisor;
    SmallVector<Value> elements;
  };
  llvm::DenseMap<Operation *, Window> windowOf;

  /// The constant d with `v` = `first` + d, where `v` and `first` are the
  /// same computation at two points of the chunk (their leaves the axes'
  /// values, or the same values); none where that is not known.
  std::optional<int64_t> distance(Value v, Value first, unsigned depth = 0);
  /// Element `i` of `window` (read at first + i, clamped to the tensor).
  Value windowElement(OpBuilder &b, Location loc, Window &window, int64_t i);

  /// Element `j` of `tensor`'s read along axis `a`, packed `packing` to an
  /// element, at `leadingIndices`.
  Value read(OpBuilder &b, Location loc, Value tensor,
             ValueRange leadingIndices,
             unsigned a, int64_t packing, int64_t j);
};

/// Evaluates the linalg ops of a decomposition at one point of their
/// iteration space, as scalar code at the builder's insertion point.
class PointEvaluator {
public:
  PointEvaluator(OpBuilder &b, Location loc,
                 const llvm::SmallPtrSetImpl<Operation *> &decomposition,
                 ChunkReads *chunk = nullptr)
      : b(b), loc(loc), decomposition(decomposition), chunk(chunk) {}

  /// The element of `value` at `indices`: a fill's value, the producer's
  /// body evaluated there where the decomposition computes `value`
  /// elementwise, else a tensor.extract (or the chunk's read of it).
  Value element(Value value, ValueRange indices);

  /// `wanted` (a value of `op`'s body that does not depend on the output's
  /// block argument) at loop indices `ivs`: the body ops it depends on
  /// cloned, the inputs' block arguments their elements at `ivs`, the
  /// linalg.index ops the indices.
  Value valueAt(linalg::GenericOp op, ValueRange ivs, Value wanted);

private:
  /// Whether `op` (a decomposition op) can be evaluated at any point: one
  /// result, parallel, a permutation as output map, a flat body that does
  /// not read the output.
  bool isElementwise(linalg::GenericOp op) const;

  /// `map`'s results at `ivs`.
  SmallVector<Value> apply(AffineMap map, ValueRange ivs);

  OpBuilder &b;
  Location loc;
  const llvm::SmallPtrSetImpl<Operation *> &decomposition;
  ChunkReads *chunk;
};

/// `x` converted as the elementwise `conversion` (one input, read by its
/// body alone) converts each element of its input: its body's ops cloned
/// at the builder's insertion point.
Value convertElement(OpBuilder &b, linalg::GenericOp conversion, Value x);

/// The decode form for the contraction `contraction` (loops ..., n, k, an
/// f32 output; each step adds `term`) where it reads a weight laid out
/// [K, N] (an input indexed (k, n)) and N is even: lanes along n, each
/// thread up to 8 consecutive columns and chunks of `chunk` consecutive k
/// (GpuQuantizedAlongN.cpp). Returns the contraction's result, or where
/// `conversion` is given (an elementwise op that converts the
/// contraction's result, see convertElement) that op's, built at the
/// rewriter's insertion point; or null (nothing built) where the form does
/// not apply.
Value buildGpuQuantizedAlongN(
    RewriterBase &rewriter, linalg::GenericOp contraction,
    linalg::GenericOp conversion, Value term,
    const llvm::SmallPtrSetImpl<Operation *> &decomposition,
    const GpuScheduleOptions &options, int64_t chunk);

} // namespace fuel
} // namespace mlir

#endif // FUEL_LIB_CODEGEN_GPUQUANTIZED_H
