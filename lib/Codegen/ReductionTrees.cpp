//===- ReductionTrees.cpp - Vector reductions in log2(n) steps ------------===//
//
// A schedule's reduction over a row accumulates partial results in a vector
// and reduces that vector once per row (`vector.reduction`). For floats,
// LLVM lowers an `add` or `mul` reduction without `reassoc` in lane order,
// one scalar operation after another, and a NaN-propagating `maximumf` or
// `minimumf` lane by lane on x86 too: for the 64 partial sums of a row that
// is a chain of 64 dependent adds (about 200 cycles), paid again on every
// row. The partial sums have already reassociated the reduction, so the
// order of the last step is the schedule's to choose: this halves the vector
// until one lane is left (n / 2 lanes combined with the other n / 2, as a
// vector operation), which takes log2(n) vector operations. The order is
// fixed, so results stay reproducible bit for bit.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Codegen/Schedules.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::fuel;

/// Whether a reduction of `kind` is worth a tree: the float kinds, which
/// LLVM reduces lane by lane (integer reductions it already lowers as
/// trees).
static bool isOrderedFloatKind(vector::CombiningKind kind) {
  using Kind = vector::CombiningKind;
  return llvm::is_contained({Kind::ADD, Kind::MUL, Kind::MAXIMUMF,
                             Kind::MINIMUMF, Kind::MAXNUMF, Kind::MINNUMF},
                            kind);
}

/// Rewrites `op` into halving steps; leaves it when it is not a float
/// reduction of a fixed vector of 4 lanes or more, or is masked.
static void reduceAsTree(RewriterBase &rewriter, vector::ReductionOp op) {
  VectorType type = op.getSourceVectorType();
  if (type.getRank() != 1 || type.isScalable() ||
      !isa<FloatType>(type.getElementType()) ||
      !isOrderedFloatKind(op.getKind()) || type.getNumElements() < 4 ||
      isa<vector::MaskOp>(op->getParentOp()))
    return;
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  vector::CombiningKind kind = op.getKind();
  arith::FastMathFlagsAttr fastmath = op.getFastmathAttr();
  Value v = op.getVector();
  int64_t n = type.getNumElements();
  while (n > 1 && n % 2 == 0) {
    int64_t half = n / 2;
    auto slice = [&](int64_t offset) -> Value {
      return vector::ExtractStridedSliceOp::create(
          rewriter, loc, v, ArrayRef<int64_t>{offset},
          ArrayRef<int64_t>{half}, ArrayRef<int64_t>{1});
    };
    Value low = slice(0);
    Value high = slice(half);
    v = vector::makeArithReduction(rewriter, loc, kind, low, high, fastmath);
    n = half;
  }
  // An odd number of lanes left (n > 1 only when the lane count is not a
  // power of two): those few in order.
  Value result =
      n == 1 ? vector::ExtractOp::create(rewriter, loc, v, ArrayRef<int64_t>{0})
                   .getResult()
             : vector::ReductionOp::create(rewriter, loc, kind, v,
                                           op.getFastmath())
                   .getResult();
  if (Value acc = op.getAcc())
    result = vector::makeArithReduction(rewriter, loc, kind, result, acc,
                                        fastmath);
  rewriter.replaceOp(op, result);
}

/// A `vector.multi_reduction` whose kept dims are all of size 1 (the
/// reduction of one row's partial results, vector<1xNxf32> to
/// vector<1xf32>) as a `vector.reduction` of its lanes, which
/// `reduceAsTree` then halves. (upstream's lower-vector-multi-reduction
/// would reduce it lane by lane, one extract and one add per lane.) Returns
/// the new reduction, or null where `op` is left as it was.
static vector::ReductionOp asOneReduction(RewriterBase &rewriter,
                                          vector::MultiDimReductionOp op) {
  VectorType type = op.getSourceVectorType();
  if (type.isScalable() || !isa<FloatType>(type.getElementType()) ||
      !isOrderedFloatKind(op.getKind()) ||
      isa<vector::MaskOp>(op->getParentOp()))
    return nullptr;
  for (auto [dim, size] : llvm::enumerate(type.getShape()))
    if (!op.isReducedDim(dim) && size != 1)
      return nullptr;
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  auto flat = VectorType::get({type.getNumElements()}, type.getElementType());
  Value lanes =
      vector::ShapeCastOp::create(rewriter, loc, flat, op.getSource());
  Value acc = op.getAcc();
  auto accType = dyn_cast<VectorType>(acc.getType());
  if (accType)
    acc = vector::ExtractOp::create(
        rewriter, loc, acc, SmallVector<int64_t>(accType.getRank(), 0));
  auto reduction = vector::ReductionOp::create(rewriter, loc, op.getKind(),
                                               lanes, acc);
  Value result = reduction.getResult();
  if (accType)
    result = vector::BroadcastOp::create(rewriter, loc, accType, result);
  rewriter.replaceOp(op, result);
  return reduction;
}

void mlir::fuel::reduceVectorsAsTrees(Operation *root) {
  IRRewriter rewriter(root->getContext());
  SmallVector<vector::MultiDimReductionOp> multi;
  root->walk([&](vector::MultiDimReductionOp op) { multi.push_back(op); });
  for (vector::MultiDimReductionOp op : multi)
    (void)asOneReduction(rewriter, op);
  SmallVector<vector::ReductionOp> reductions;
  root->walk([&](vector::ReductionOp op) { reductions.push_back(op); });
  for (vector::ReductionOp op : reductions)
    reduceAsTree(rewriter, op);
}
