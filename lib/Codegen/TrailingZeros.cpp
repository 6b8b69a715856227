//===- TrailingZeros.cpp - Known powers of two of index values ------------===//

#include "FuelFused/Codegen/TrailingZeros.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::fuel;

/// How far knownTrailingZeros looks through the ops defining a value.
static constexpr unsigned kMaxDepth = 16;
static constexpr unsigned kAll = kAllTrailingZeros;

unsigned mlir::fuel::trailingZerosOf(int64_t c) {
  return c == 0 ? kAll
                : static_cast<unsigned>(
                      llvm::countr_zero(static_cast<uint64_t>(c)));
}

static unsigned knownTrailingZeros(Value v, unsigned depth);

/// The trailing zeros of `expr`, an affine expression of `operands`
/// (dims, then symbols).
static unsigned knownTrailingZeros(AffineExpr expr, ValueRange operands,
                                   unsigned numDims, unsigned depth) {
  if (auto constant = dyn_cast<AffineConstantExpr>(expr))
    return trailingZerosOf(constant.getValue());
  if (auto dim = dyn_cast<AffineDimExpr>(expr))
    return knownTrailingZeros(operands[dim.getPosition()], depth + 1);
  if (auto symbol = dyn_cast<AffineSymbolExpr>(expr))
    return knownTrailingZeros(operands[numDims + symbol.getPosition()],
                              depth + 1);
  auto binary = cast<AffineBinaryOpExpr>(expr);
  unsigned lhs = knownTrailingZeros(binary.getLHS(), operands, numDims, depth);
  unsigned rhs = knownTrailingZeros(binary.getRHS(), operands, numDims, depth);
  switch (expr.getKind()) {
  case AffineExprKind::Add:
    return std::min(lhs, rhs);
  case AffineExprKind::Mul:
    return std::min(kAll, lhs + rhs);
  case AffineExprKind::Mod:
    // x mod c = x - c * floor(x / c), c > 0.
    return std::min(lhs, rhs);
  default:
    return 0;
  }
}

static unsigned knownTrailingZeros(Value v, unsigned depth) {
  APInt constant;
  if (matchPattern(v, m_ConstantInt(&constant)))
    return trailingZerosOf(constant.getSExtValue());
  if (depth == kMaxDepth)
    return 0;
  // An scf.for's induction variable: its lower bound plus steps.
  if (auto loop = scf::getForInductionVarOwner(v))
    return std::min(knownTrailingZeros(loop.getLowerBound(), depth + 1),
                    knownTrailingZeros(loop.getStep(), depth + 1));
  Operation *def = v.getDefiningOp();
  if (!def)
    return 0;
  if (auto apply = dyn_cast<affine::AffineApplyOp>(def))
    return knownTrailingZeros(apply.getAffineMap().getResult(0),
                              apply.getMapOperands(),
                              apply.getAffineMap().getNumDims(), depth);
  auto operand = [&](unsigned i) {
    return knownTrailingZeros(def->getOperand(i), depth + 1);
  };
  if (isa<arith::AddIOp, arith::SubIOp>(def))
    return std::min(operand(0), operand(1));
  if (isa<arith::MulIOp>(def))
    return std::min(kAll, operand(0) + operand(1));
  // The lesser or greater of two values, or either: a multiple of what
  // both are.
  if (isa<arith::MinUIOp, arith::MinSIOp, arith::MaxUIOp, arith::MaxSIOp>(
          def))
    return std::min(operand(0), operand(1));
  if (isa<arith::SelectOp>(def))
    return std::min(operand(1), operand(2));
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
          arith::ExtUIOp>(def))
    return operand(0);
  if (def->getNumOperands() != 2 ||
      !matchPattern(def->getOperand(1), m_ConstantInt(&constant)))
    return 0;
  // By a constant: x << c, x >> c and x / 2^s keep the zeros of x beyond
  // c (of those below, nothing is known); x mod 2^s those below s.
  uint64_t shift = constant.getLimitedValue(kAll);
  bool byPowerOfTwo = constant.isStrictlyPositive() && constant.isPowerOf2();
  if (isa<arith::DivUIOp, arith::RemUIOp>(def)) {
    if (!byPowerOfTwo)
      return 0;
    shift = constant.logBase2();
  }
  unsigned zeros = operand(0);
  if (isa<arith::ShLIOp>(def))
    return std::min<unsigned>(kAll, zeros + shift);
  if (isa<arith::ShRUIOp, arith::ShRSIOp, arith::DivUIOp>(def))
    return zeros == kAll ? kAll : zeros > shift ? zeros - shift : 0;
  if (isa<arith::RemUIOp>(def))
    return zeros >= shift ? kAll : zeros;
  return 0;
}

unsigned mlir::fuel::knownTrailingZeros(Value v) {
  return ::knownTrailingZeros(v, 0);
}

unsigned mlir::fuel::knownTrailingZeros(OpFoldResult value) {
  if (auto attr = dyn_cast<Attribute>(value))
    return trailingZerosOf(cast<IntegerAttr>(attr).getInt());
  return knownTrailingZeros(cast<Value>(value));
}
