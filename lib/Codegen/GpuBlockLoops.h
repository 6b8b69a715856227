//===- GpuBlockLoops.h - Block and thread loops built directly --*- C++ -*-===//
//
// The loops of the GPU schedules that are built directly rather than tiled
// from a decomposition (the row loss, the quantized matmuls): an scf.forall
// on `#gpu.block<x>` whose iterations each produce one value (an f32, or a
// result's type), an scf.forall on `#gpu.thread<x>` inside it whose threads
// all compute the same value, and block-wide reductions of a strided loop's
// partials (`gpu.all_reduce`).
//
//===----------------------------------------------------------------------===//

#ifndef FUEL_LIB_CODEGEN_GPUBLOCKLOOPS_H
#define FUEL_LIB_CODEGEN_GPUBLOCKLOOPS_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace fuel {

/// Lanes of a warp: the widest cluster of a subgroup reduction.
constexpr int64_t kWarpLanes = 32;

/// The lanes of a group that splits a row of `width` pieces between them:
/// the largest power of two up to a warp that divides it.
int64_t lanesFor(int64_t width);

/// A group's place in a loop whose trips are the same on every lane of a
/// warp. A warp's lanes shuffle together (shfl.sync names them all), so a
/// loop with a subgroup reduction of groups of `lanes` lanes in its body
/// runs over the items of the warp's first group: group g of a warp of
/// W = kWarpLanes / lanes groups takes the item (g mod W) units after each.
struct WarpUniformGroup {
  /// (g - g mod W) * unit: the warp's first group's offset in the range.
  Value warpStart;
  /// (g mod W) * unit: the group's offset from its warp's first group.
  Value shift;

  static WarpUniformGroup of(OpBuilder &b, Location loc, Value group,
                             int64_t lanes, int64_t unit);
};

/// Threads per block for `n` elements: a power of two from a warp (32) to
/// `maxThreads`, no more than `n` needs.
int64_t threadsFor(int64_t n, int64_t maxThreads);

/// A new tensor of `shape` f32 in workgroup memory (a
/// bufferization.alloc_tensor there), at the builder's insertion point.
Value workgroupTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape);

/// The row-major indices of `linear` in a shape of `sizes`.
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                               ArrayRef<int64_t> sizes);

/// Whether every tensor `op` reads or writes is of f32, f16 or bf16 (the
/// types the built GPU forms compute, the halves in f32).
bool hasF32OrHalfTensors(Operation *op);

/// An scf.forall of `trips` (1 to 3 dims) on `#gpu.thread`s (the last dim
/// on x), at the rewriter's insertion point, whose one shared output is
/// `init`: each thread owns the slice of it at `offsets(ids)` with `sizes`
/// and `strides` (disjoint across threads), which `body` is given, with the
/// thread's ids, and returns written; it is inserted back. Returns the
/// loop's result.
Value threadSlices(
    RewriterBase &rewriter, Location loc, ArrayRef<int64_t> trips, Value init,
    ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides,
    function_ref<SmallVector<OpFoldResult>(ValueRange ids)> offsets,
    function_ref<Value(ValueRange ids, Value slice)> body);

/// Builds block loops, thread loops in them, and the block-wide reductions
/// inside those, at the rewriter's insertion point.
class BlockLoops {
public:
  BlockLoops(RewriterBase &rewriter, Location loc)
      : b(rewriter), loc(loc), f32(rewriter.getF32Type()) {}

  Value index(int64_t x);
  Value f32Constant(double x);

  /// An scf.forall of `trips` iterations on `#gpu.block<x>` writing one f32
  /// per iteration into a new tensor<trips x f32>: the value `body` returns
  /// for the iteration's index.
  Value perBlock(int64_t trips, function_ref<Value(Value)> body);

  /// perBlock for values of `type` (a tensor<trips x type>).
  Value perBlock(int64_t trips, Type type, function_ref<Value(Value)> body);

  /// perBlock for `n` values an iteration, into `n` tensors (of `type`,
  /// f32 where null).
  SmallVector<Value> perBlock(int64_t trips, unsigned n,
                              function_ref<SmallVector<Value>(Value)> body,
                              Type type = {});

  /// onEveryThread for `n` values (a buffer of slots each).
  SmallVector<Value>
  onEveryThread(int64_t threads, unsigned n,
                function_ref<SmallVector<Value>(Value)> body);

  /// Inside a block: an scf.forall of `threads` iterations on
  /// `#gpu.thread<x>` computing `body` (the same value on every thread:
  /// made of block-wide reductions and uniform reads), and that value after
  /// the loop, read from thread 0's slot of a buffer in workgroup memory.
  Value onEveryThread(int64_t threads, function_ref<Value(Value)> body);

  /// In a thread loop of `threads` threads, thread `t`: the combination by
  /// `kind` of `step`'s values over j = t, t + threads, ... < n, from
  /// `identity`, then across the block.
  Value blockReduce(Value t, int64_t threads, int64_t n, double identity,
                    gpu::AllReduceOperation kind,
                    function_ref<Value(OpBuilder &, Value, Value)> step);

private:
  /// `values[i]` into element `at` of `loop`'s output i.
  void storeOne(scf::ForallOp loop, ValueRange values, Value at);

  RewriterBase &b;
  Location loc;
  Type f32;
};

} // namespace fuel
} // namespace mlir

#endif // FUEL_LIB_CODEGEN_GPUBLOCKLOOPS_H
