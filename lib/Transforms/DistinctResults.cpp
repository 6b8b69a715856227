//===- DistinctResults.cpp - The fuel-distinct-results pass ---------------===//
//
// A tensor returned twice would bufferize to one buffer for two results;
// each further occurrence is copied so every result has a buffer of its own.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::fuel {
#define GEN_PASS_DEF_FUELDISTINCTRESULTS
#include "FuelFused/Transforms/Passes.h.inc"
} // namespace mlir::fuel

using namespace mlir;

namespace {
struct FuelDistinctResultsPass
    : public fuel::impl::FuelDistinctResultsBase<FuelDistinctResultsPass> {
  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) {
      llvm::SmallPtrSet<Value, 4> seen;
      OpBuilder b(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        Value v = operand.get();
        auto type = dyn_cast<RankedTensorType>(v.getType());
        if (!type || seen.insert(v).second)
          continue;
        SmallVector<OpFoldResult> sizes =
            tensor::getMixedSizes(b, ret.getLoc(), v);
        Value init = tensor::EmptyOp::create(b, ret.getLoc(), sizes,
                                             type.getElementType());
        Value copy =
            linalg::CopyOp::create(b, ret.getLoc(), v, init).getResult(0);
        if (copy.getType() != type)
          copy = tensor::CastOp::create(b, ret.getLoc(), type, copy);
        operand.set(copy);
      }
    });
  }
};
} // namespace
