//===- GpuExpandMath.cpp - Math without the ROCm device library -----------===//
//
// fuel-gpu-expand-math: convert-gpu-to-rocdl lowers some math ops to calls
// of OCML, the ROCm device library, which fuel-to-rocdl's code objects
// (llc-22 and ld.lld-22, no ROCm) are not linked with: the call would be
// an undefined symbol when the code object is loaded. Others it lowers to
// LLVM intrinsics that the AMDGPU backend can only make libcalls of, which
// it rejects (llc-22: "no libcall available for ftanh"). This rewrites
// them first, in each GPU module, into what the backend lowers itself:
//
// - f16 and bf16 math in f32 (OCML has f16 exp, log, log1p, expm1, ...);
// - erf, erfc, cbrt, tanh, atan, atan2, asin, acos, expm1 and log1p:
//   upstream's polynomial approximations (those the CPU path uses on
//   vectors; the conversion's own expm1 and log1p, exp(x) - 1 and
//   log(1 + x), lose small arguments);
// - asinh, acosh, atanh, powf, tan and cosh: upstream's expansions (into
//   log, sqrt, exp, sin and cos); sinh through expm1 (below);
// - floor, ceil, exp2, log2, log10, sin and cos: calls of the LLVM
//   intrinsics (llvm.call_intrinsic: the conversion sends their intrinsic
//   ops to OCML as well), which the AMDGPU backend lowers to instructions
//   (v_floor_f32, v_exp_f32, v_sin_f32 after its range reduction, ...).
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fuel {
#define GEN_PASS_DEF_FUELGPUEXPANDMATH
#include "FuelFused/Transforms/Passes.h.inc"
} // namespace mlir::fuel

using namespace mlir;

namespace {
/// A unary math op on floats or a vector of them as a call of the LLVM
/// intrinsic `name` (a llvm.call_intrinsic: the ROCDL conversion sends the
/// intrinsic ops of these functions to OCML too).
template <typename MathOp>
struct ToIntrinsic : OpRewritePattern<MathOp> {
  ToIntrinsic(MLIRContext *ctx, StringRef name)
      : OpRewritePattern<MathOp>(ctx), name(name) {}

  LogicalResult matchAndRewrite(MathOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!isa<FloatType>(getElementTypeOrSelf(type)) ||
        (isa<ShapedType>(type) && !isa<VectorType>(type)))
      return rewriter.notifyMatchFailure(op, "not floats or a vector of them");
    rewriter.replaceOpWithNewOp<LLVM::CallIntrinsicOp>(
        op, type, rewriter.getStringAttr(name), op->getOperands());
    return success();
  }

  std::string name;
};

/// sinh(x) as (expm1(x) - expm1(-x)) / 2: upstream's expansion, (exp(x) -
/// exp(-x)) / 2, loses the relative precision of small x (the difference
/// of two values near 1), which expm1 keeps.
struct SinhByExpm1 : OpRewritePattern<math::SinhOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::SinhOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return rewriter.notifyMatchFailure(op, "not f32");
    Location loc = op.getLoc();
    Value x = op.getOperand();
    Value up = math::ExpM1Op::create(rewriter, loc, x);
    Value down = math::ExpM1Op::create(
        rewriter, loc, arith::NegFOp::create(rewriter, loc, x));
    TypedAttr half = rewriter.getF32FloatAttr(0.5);
    if (auto vector = dyn_cast<VectorType>(type))
      half = DenseElementsAttr::get(vector, half);
    rewriter.replaceOpWithNewOp<arith::MulFOp>(
        op, arith::SubFOp::create(rewriter, loc, up, down),
        arith::ConstantOp::create(rewriter, loc, type, half));
    return success();
  }
};

struct FuelGpuExpandMathPass
    : public fuel::impl::FuelGpuExpandMathBase<FuelGpuExpandMathPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    populateMathF32ExpansionPatterns(patterns,
                                     [](StringRef) { return true; });
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef op) {
      return llvm::is_contained(
          {math::ErfOp::getOperationName(), math::ErfcOp::getOperationName(),
           math::CbrtOp::getOperationName(), math::TanhOp::getOperationName(),
           math::AtanOp::getOperationName(), math::Atan2Op::getOperationName(),
           math::AsinOp::getOperationName(), math::AcosOp::getOperationName(),
           math::ExpM1Op::getOperationName(),
           math::Log1pOp::getOperationName()},
          op);
    });
    math::populateExpansionPatterns(
        patterns, {"asinh", "acosh", "atanh", "powf", "tan", "cosh"});
    patterns.add<SinhByExpm1>(ctx);
    patterns.add<ToIntrinsic<math::FloorOp>>(ctx, "llvm.floor");
    patterns.add<ToIntrinsic<math::CeilOp>>(ctx, "llvm.ceil");
    patterns.add<ToIntrinsic<math::Exp2Op>>(ctx, "llvm.exp2");
    patterns.add<ToIntrinsic<math::Log2Op>>(ctx, "llvm.log2");
    patterns.add<ToIntrinsic<math::Log10Op>>(ctx, "llvm.log10");
    patterns.add<ToIntrinsic<math::SinOp>>(ctx, "llvm.sin");
    patterns.add<ToIntrinsic<math::CosOp>>(ctx, "llvm.cos");
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
