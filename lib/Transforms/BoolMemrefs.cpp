//===- BoolMemrefs.cpp - i1 memrefs stored as bytes -----------------------===//
//
// MemRefToLLVM cannot store sub-byte elements; masks (memrefs of i1 after
// bufferization) are rewritten into memrefs of i8 holding 0 or 1. Ops whose
// meaning does not depend on the element type (allocations, views, copies)
// only change type; loads and stores convert the element.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::fuel {
#define GEN_PASS_DEF_FUELBOOLMEMREFSTOI8
#include "FuelFused/Transforms/Passes.h.inc"
} // namespace mlir::fuel

using namespace mlir;

namespace {

static bool isBool(Type t) { return t.isInteger(1); }

static bool hasBoolMemref(TypeRange types) {
  return llvm::any_of(types, [](Type t) {
    auto m = dyn_cast<BaseMemRefType>(t);
    return m && isBool(m.getElementType());
  });
}

static bool hasBoolMemref(Operation *op) {
  return hasBoolMemref(op->getOperandTypes()) ||
         hasBoolMemref(op->getResultTypes());
}

struct LoadLowering : OpConversionPattern<memref::LoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(memref::LoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isBool(op.getType()))
      return failure();
    Value byte = memref::LoadOp::create(rewriter, op.getLoc(),
                                        adaptor.getMemref(),
                                        adaptor.getIndices());
    rewriter.replaceOpWithNewOp<arith::TruncIOp>(op, op.getType(), byte);
    return success();
  }
};

struct StoreLowering : OpConversionPattern<memref::StoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(memref::StoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isBool(op.getValueToStore().getType()))
      return failure();
    Value byte = arith::ExtUIOp::create(rewriter, op.getLoc(),
                                        rewriter.getI8Type(),
                                        adaptor.getValue());
    rewriter.replaceOpWithNewOp<memref::StoreOp>(op, byte, adaptor.getMemref(),
                                                 adaptor.getIndices());
    return success();
  }
};

struct GlobalLowering : OpConversionPattern<memref::GlobalOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(memref::GlobalOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<MemRefType>(getTypeConverter()->convertType(op.getType()));
    Attribute init = op.getInitialValueAttr();
    if (auto dense = dyn_cast_or_null<DenseIntElementsAttr>(init))
      init = dense.mapValues(rewriter.getI8Type(), [](const APInt &v) {
        return APInt(8, v.getZExtValue());
      });
    rewriter.modifyOpInPlace(op, [&] {
      op.setType(type);
      if (init)
        op.setInitialValueAttr(init);
    });
    return success();
  }
};

/// Ops that only carry memrefs around: the same op with converted types.
struct Retype : ConversionPattern {
  Retype(const TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}
  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (op->getNumRegions() != 0 || !hasBoolMemref(op) ||
        isa<memref::LoadOp, memref::StoreOp>(op))
      return failure();
    SmallVector<Type> types;
    if (failed(getTypeConverter()->convertTypes(op->getResultTypes(), types)))
      return failure();
    OperationState state(op->getLoc(), op->getName(), operands, types,
                         op->getAttrs(), op->getSuccessors());
    Operation *copy = rewriter.create(state);
    rewriter.replaceOp(op, copy->getResults());
    return success();
  }
};

struct FuelBoolMemrefsToI8Pass
    : public fuel::impl::FuelBoolMemrefsToI8Base<FuelBoolMemrefsToI8Pass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    TypeConverter converter;
    converter.addConversion([](Type t) { return t; });
    converter.addConversion([](MemRefType t) -> Type {
      if (!isBool(t.getElementType()))
        return t;
      return MemRefType::get(t.getShape(), IntegerType::get(t.getContext(), 8),
                             t.getLayout(), t.getMemorySpace());
    });
    converter.addConversion([](UnrankedMemRefType t) -> Type {
      if (!isBool(t.getElementType()))
        return t;
      return UnrankedMemRefType::get(IntegerType::get(t.getContext(), 8),
                                     t.getMemorySpace());
    });

    ConversionTarget target(*ctx);
    target.markUnknownOpDynamicallyLegal(
        [](Operation *op) { return !hasBoolMemref(op); });
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp f) {
      return converter.isSignatureLegal(f.getFunctionType()) &&
             converter.isLegal(&f.getBody());
    });
    target.addDynamicallyLegalOp<memref::GlobalOp>([](memref::GlobalOp g) {
      return !isBool(g.getType().getElementType());
    });

    RewritePatternSet patterns(ctx);
    patterns.add<LoadLowering, StoreLowering, GlobalLowering>(converter, ctx);
    patterns.add<Retype>(converter, ctx);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   converter);
    populateCallOpTypeConversionPattern(patterns, converter);
    populateReturnOpTypeConversionPattern(patterns, converter);
    populateBranchOpInterfaceTypeConversionPattern(patterns, converter);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
