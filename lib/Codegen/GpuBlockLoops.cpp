//===- GpuBlockLoops.cpp - Block and thread loops built directly ----------===//

#include "GpuBlockLoops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::fuel;

int64_t mlir::fuel::threadsFor(int64_t n, int64_t maxThreads) {
  int64_t threads = 32;
  while (threads < maxThreads && threads < n)
    threads *= 2;
  return threads;
}

Value BlockLoops::index(int64_t x) {
  return arith::ConstantIndexOp::create(b, loc, x);
}

Value BlockLoops::f32Constant(double x) {
  return arith::ConstantOp::create(b, loc, f32,
                                   b.getF32FloatAttr(static_cast<float>(x)));
}

Value BlockLoops::perBlock(int64_t trips, function_ref<Value(Value)> body) {
  Value empty = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{trips}, f32);
  auto loop = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(trips)}, ValueRange{empty},
      b.getArrayAttr({gpu::GPUBlockMappingAttr::get(b.getContext(),
                                                    gpu::MappingId::DimX)}));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value value = body(loop.getInductionVar(0));
  storeOne(loop, value, loop.getInductionVar(0));
  return loop.getResult(0);
}

Value BlockLoops::onEveryThread(int64_t threads,
                                function_ref<Value(Value)> body) {
  MLIRContext *ctx = b.getContext();
  auto slotsType = RankedTensorType::get({threads}, f32);
  Value slots = bufferization::AllocTensorOp::create(
      b, loc, slotsType, ValueRange{}, /*copy=*/Value(),
      /*size_hint=*/Value(),
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
  auto loop = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(threads)},
      ValueRange{slots},
      b.getArrayAttr(
          {gpu::GPUThreadMappingAttr::get(ctx, gpu::MappingId::DimX)}));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value value = body(loop.getInductionVar(0));
    storeOne(loop, value, loop.getInductionVar(0));
  }
  return tensor::ExtractOp::create(b, loc, loop.getResult(0),
                                   ValueRange{index(0)});
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

void BlockLoops::storeOne(scf::ForallOp loop, Value value, Value at) {
  Value one = tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({1}, f32), ValueRange{value});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(
      b, loc, one, loop.getRegionIterArgs()[0], ArrayRef<OpFoldResult>{at},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
}
