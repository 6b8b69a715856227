//===- GpuBlockLoops.cpp - Block and thread loops built directly ----------===//

#include "GpuBlockLoops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::fuel;

int64_t mlir::fuel::threadsFor(int64_t n, int64_t maxThreads) {
  int64_t threads = 32;
  while (threads < maxThreads && threads < n)
    threads *= 2;
  return threads;
}

int64_t mlir::fuel::lanesFor(int64_t width) {
  int64_t lanes = kWarpLanes;
  while (lanes > 1 && width % lanes != 0)
    lanes /= 2;
  return lanes;
}

WarpUniformGroup WarpUniformGroup::of(OpBuilder &b, Location loc,
                                      Value group, int64_t lanes,
                                      int64_t unit) {
  assert(lanes >= 1 && kWarpLanes % lanes == 0 && "lanes of a warp");
  auto scaled = [&](Value x) -> Value {
    if (unit == 1)
      return x;
    return arith::MulIOp::create(b, loc, x,
                                 arith::ConstantIndexOp::create(b, loc, unit));
  };
  Value groups = arith::ConstantIndexOp::create(b, loc, kWarpLanes / lanes);
  Value inWarp = arith::RemUIOp::create(b, loc, group, groups);
  Value warpFirst = arith::SubIOp::create(b, loc, group, inWarp);
  return {scaled(warpFirst), scaled(inWarp)};
}

Value mlir::fuel::workgroupTensor(OpBuilder &b, Location loc,
                                 ArrayRef<int64_t> shape) {
  return bufferization::AllocTensorOp::create(
      b, loc, RankedTensorType::get(shape, b.getF32Type()), ValueRange{},
      /*copy=*/Value(), /*size_hint=*/Value(),
      gpu::AddressSpaceAttr::get(b.getContext(),
                                 gpu::AddressSpace::Workgroup));
}

SmallVector<Value> mlir::fuel::delinearize(OpBuilder &b, Location loc,
                                           Value linear,
                                           ArrayRef<int64_t> sizes) {
  SmallVector<Value> indices(sizes.size());
  for (int64_t i = sizes.size() - 1; i > 0; --i) {
    Value size = arith::ConstantIndexOp::create(b, loc, sizes[i]);
    indices[i] = arith::RemUIOp::create(b, loc, linear, size);
    linear = arith::DivUIOp::create(b, loc, linear, size);
  }
  if (!sizes.empty())
    indices[0] = linear;
  return indices;
}

bool mlir::fuel::hasF32OrHalfTensors(Operation *op) {
  return llvm::all_of(
      llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes()),
      [](Type t) {
        auto tensor = dyn_cast<RankedTensorType>(t);
        if (!tensor)
          return true;
        Type elt = tensor.getElementType();
        return elt.isF32() || elt.isF16() || elt.isBF16();
      });
}

Value mlir::fuel::threadSlices(
    RewriterBase &rewriter, Location loc, ArrayRef<int64_t> trips, Value init,
    ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides,
    function_ref<SmallVector<OpFoldResult>(ValueRange ids)> offsets,
    function_ref<Value(ValueRange ids, Value slice)> body) {
  MLIRContext *ctx = rewriter.getContext();
  SmallVector<Attribute> mapping;
  for (size_t i = 0; i < trips.size(); ++i)
    mapping.push_back(gpu::GPUThreadMappingAttr::get(
        ctx, static_cast<gpu::MappingId>(
                 static_cast<unsigned>(gpu::MappingId::DimX) + trips.size() -
                 1 - i)));
  auto loop = scf::ForallOp::create(
      rewriter, loc, getAsIndexOpFoldResult(ctx, trips), ValueRange{init},
      rewriter.getArrayAttr(mapping));
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(loop.getBody());
  SmallVector<Value> ids = loop.getInductionVars();
  Value shared = loop.getRegionIterArgs()[0];
  SmallVector<OpFoldResult> at = offsets(ids);
  SmallVector<OpFoldResult> sizeAttrs = getAsIndexOpFoldResult(ctx, sizes),
                            strideAttrs = getAsIndexOpFoldResult(ctx, strides);
  Value slice = tensor::ExtractSliceOp::create(rewriter, loc, shared, at,
                                               sizeAttrs, strideAttrs);
  Value written = body(ids, slice);
  rewriter.setInsertionPointToStart(loop.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(rewriter, loc, written, shared, at,
                                        sizeAttrs, strideAttrs);
  return loop.getResult(0);
}

Value BlockLoops::index(int64_t x) {
  return arith::ConstantIndexOp::create(b, loc, x);
}

Value BlockLoops::f32Constant(double x) {
  return arith::ConstantOp::create(b, loc, f32,
                                   b.getF32FloatAttr(static_cast<float>(x)));
}

Value BlockLoops::perBlock(int64_t trips, function_ref<Value(Value)> body) {
  return perBlock(trips, f32, body);
}

Value BlockLoops::perBlock(int64_t trips, Type type,
                           function_ref<Value(Value)> body) {
  return perBlock(
      trips, 1, [&](Value i) -> SmallVector<Value> { return {body(i)}; },
      type)[0];
}

SmallVector<Value>
BlockLoops::perBlock(int64_t trips, unsigned n,
                     function_ref<SmallVector<Value>(Value)> body,
                     Type type) {
  SmallVector<Value> empties;
  for (unsigned i = 0; i < n; ++i)
    empties.push_back(tensor::EmptyOp::create(
        b, loc, ArrayRef<int64_t>{trips}, type ? type : f32));
  auto loop = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(trips)}, empties,
      b.getArrayAttr({gpu::GPUBlockMappingAttr::get(b.getContext(),
                                                    gpu::MappingId::DimX)}));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  SmallVector<Value> values = body(loop.getInductionVar(0));
  storeOne(loop, values, loop.getInductionVar(0));
  return loop.getResults();
}

Value BlockLoops::onEveryThread(int64_t threads,
                                function_ref<Value(Value)> body) {
  return onEveryThread(threads, 1, [&](Value t) -> SmallVector<Value> {
    return {body(t)};
  })[0];
}

SmallVector<Value>
BlockLoops::onEveryThread(int64_t threads, unsigned n,
                          function_ref<SmallVector<Value>(Value)> body) {
  SmallVector<Value> slots;
  for (unsigned i = 0; i < n; ++i)
    slots.push_back(workgroupTensor(b, loc, {threads}));
  auto loop = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(threads)}, slots,
      b.getArrayAttr(
          {gpu::GPUThreadMappingAttr::get(b.getContext(),
                                          gpu::MappingId::DimX)}));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> values = body(loop.getInductionVar(0));
    storeOne(loop, values, loop.getInductionVar(0));
  }
  SmallVector<Value> firsts;
  for (Value result : loop.getResults())
    firsts.push_back(
        tensor::ExtractOp::create(b, loc, result, ValueRange{index(0)}));
  return firsts;
}

Value BlockLoops::blockReduce(
    Value t, int64_t threads, int64_t n, double identity,
    gpu::AllReduceOperation kind,
    function_ref<Value(OpBuilder &, Value, Value)> step) {
  Value partial =
      scf::ForOp::create(
          b, loc, t, index(n), index(threads),
          ValueRange{f32Constant(identity)},
          [&](OpBuilder &nested, Location, Value j, ValueRange acc) {
            scf::YieldOp::create(nested, loc, step(nested, j, acc[0]));
          })
          .getResult(0);
  return gpu::AllReduceOp::create(
      b, loc, partial, gpu::AllReduceOperationAttr::get(b.getContext(), kind),
      b.getUnitAttr());
}

void BlockLoops::storeOne(scf::ForallOp loop, ValueRange values, Value at) {
  SmallVector<Value> ones;
  for (Value value : values)
    ones.push_back(tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({1}, value.getType()),
        ValueRange{value}));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getTerminator().getBody());
  for (auto [one, into] : llvm::zip(ones, loop.getRegionIterArgs()))
    tensor::ParallelInsertSliceOp::create(
        b, loc, one, into, ArrayRef<OpFoldResult>{at},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
}
