//===- GpuQuantizedPoints.cpp - A decomposition at one point --------------===//
//
// PointEvaluator, ChunkReads and convertElement (GpuQuantized.h).
//
//===----------------------------------------------------------------------===//

#include "GpuQuantized.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::fuel;

void ChunkReads::addAxis(OpBuilder &b, Location loc, Value base,
                         int64_t width) {
  Axis &axis = axes.emplace_back();
  axis.base = base;
  for (int64_t j = 0; j < width; ++j)
    axis.values.push_back(
        j ? arith::AddIOp::create(b, loc, base,
                                  arith::ConstantIndexOp::create(b, loc, j))
                .getResult()
          : base);
}

Value ChunkReads::element(OpBuilder &b, Location loc, Value tensor,
                          ValueRange indices) {
  if (indices.empty())
    return Value();
  Value last = indices.back(), unpacked;
  int64_t divisor = 1;
  if (auto apply = last.getDefiningOp<affine::AffineApplyOp>()) {
    AffineMap map = apply.getAffineMap();
    auto div = dyn_cast<AffineBinaryOpExpr>(map.getResult(0));
    auto dim = div ? dyn_cast<AffineDimExpr>(div.getLHS()) : nullptr;
    auto c = div ? dyn_cast<AffineConstantExpr>(div.getRHS()) : nullptr;
    if (div && div.getKind() == AffineExprKind::FloorDiv && dim && c &&
        c.getValue() > 1 && llvm::isPowerOf2_64(c.getValue()) &&
        map.getNumSymbols() == 0) {
      unpacked = apply.getMapOperands()[dim.getPosition()];
      divisor = c.getValue();
    }
  }
  for (auto [a, axis] : llvm::enumerate(axes)) {
    int64_t width = axis.values.size(), packing = 1;
    auto at = llvm::find(axis.values, last);
    if (at == axis.values.end() && unpacked && width % divisor == 0) {
      at = llvm::find(axis.values, unpacked);
      packing = divisor;
    }
    if (at != axis.values.end())
      return read(b, loc, tensor, indices.drop_back(), a, packing,
                  (at - axis.values.begin()) / packing);
  }
  return Value();
}

Value ChunkReads::read(OpBuilder &b, Location loc, Value tensor,
                       ValueRange leadingIndices, unsigned a, int64_t packing,
                       int64_t j) {
  int64_t width = static_cast<int64_t>(axes[a].values.size()) / packing;
  Type elt = cast<RankedTensorType>(tensor.getType()).getElementType();
  int64_t piece = std::min<int64_t>(
      width, std::max<int64_t>(1, 128 / elt.getIntOrFloatBitWidth()));
  SmallVector<Value> leading(leadingIndices);
  auto known = llvm::find_if(reads, [&](const Read &r) {
    return r.tensor == tensor && r.leading == leading && r.axis == a &&
           r.packing == packing;
  });
  if (known == reads.end()) {
    reads.push_back({tensor, leading, a, packing, {}});
    known = std::prev(reads.end());
  }
  SmallVector<Value> &pieces = known->pieces;
  if (pieces.empty()) {
    Value pad = ub::PoisonOp::create(b, loc, elt);
    // (A shift, whose known trailing zeros the alignment pass counts.)
    Value base =
        packing == 1
            ? axes[a].base
            : arith::ShRUIOp::create(
                  b, loc, axes[a].base,
                  arith::ConstantIndexOp::create(b, loc,
                                                 llvm::Log2_64(packing)))
                  .getResult();
    for (int64_t first = 0; first < width; first += piece) {
      SmallVector<Value> from(leading);
      from.push_back(first ? arith::AddIOp::create(
                                 b, loc, base,
                                 arith::ConstantIndexOp::create(b, loc,
                                                                first))
                                 .getResult()
                           : base);
      pieces.push_back(vector::TransferReadOp::create(
          b, loc, VectorType::get({piece}, elt), tensor, from, pad,
          ArrayRef<bool>{true}));
    }
  }
  return vector::ExtractOp::create(b, loc, pieces[j / piece], j % piece);
}

Value PointEvaluator::element(Value value, ValueRange indices) {
  if (auto fill = value.getDefiningOp<linalg::FillOp>();
      fill && decomposition.contains(fill))
    return fill.getInputs()[0];
  auto producer = value.getDefiningOp<linalg::GenericOp>();
  if (!producer || !isElementwise(producer)) {
    if (chunk)
      if (Value v = chunk->element(b, loc, value, indices))
        return v;
    return tensor::ExtractOp::create(b, loc, value, indices);
  }
  // The output map is a permutation: the loop indices are its inverse
  // applied to the element's indices.
  AffineMap inverse = inversePermutation(
      producer.getMatchingIndexingMap(producer.getDpsInitOperand(0)));
  return valueAt(producer, apply(inverse, indices),
                 producer.getBody()->getTerminator()->getOperand(0));
}

Value PointEvaluator::valueAt(linalg::GenericOp op, ValueRange ivs,
                              Value wanted) {
  Block *body = op.getBody();
  llvm::SmallPtrSet<Operation *, 32> needed;
  SmallVector<Value> work{wanted};
  llvm::SmallBitVector inputs(body->getNumArguments());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(v); arg && arg.getOwner() == body)
      inputs.set(arg.getArgNumber());
    Operation *def = v.getDefiningOp();
    if (def && def->getBlock() == body && needed.insert(def).second)
      llvm::append_range(work, def->getOperands());
  }
  IRMapping mapping;
  for (OpOperand *input : op.getDpsInputOperands())
    if (inputs.test(input->getOperandNumber()))
      mapping.map(body->getArgument(input->getOperandNumber()),
                  element(input->get(),
                          apply(op.getMatchingIndexingMap(input), ivs)));
  for (Operation &inner : body->without_terminator()) {
    if (!needed.contains(&inner))
      continue;
    if (auto index = dyn_cast<linalg::IndexOp>(inner))
      mapping.map(index.getResult(), ivs[index.getDim()]);
    else
      b.clone(inner, mapping);
  }
  return mapping.lookupOrDefault(wanted);
}

bool PointEvaluator::isElementwise(linalg::GenericOp op) const {
  OpOperand *init = op.getDpsInitOperand(0);
  return decomposition.contains(op) && op->getNumResults() == 1 &&
         op.getNumReductionLoops() == 0 &&
         op.getMatchingIndexingMap(init).isPermutation() &&
         op.getMatchingBlockArgument(init).use_empty() &&
         llvm::all_of(op.getBody()->without_terminator(),
                      [](Operation &inner) {
                        return inner.getNumRegions() == 0;
                      });
}

SmallVector<Value> PointEvaluator::apply(AffineMap map, ValueRange ivs) {
  SmallVector<Value> values;
  for (AffineExpr expr : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      values.push_back(ivs[dim.getPosition()]);
    else
      values.push_back(affine::AffineApplyOp::create(
          b, loc, AffineMap::get(map.getNumDims(), 0, expr), ivs));
  }
  return values;
}

Value mlir::fuel::convertElement(OpBuilder &b, linalg::GenericOp conversion,
                                 Value x) {
  Block *body = conversion.getBody();
  IRMapping mapping;
  mapping.map(body->getArgument(0), x);
  for (Operation &op : body->without_terminator())
    b.clone(op, mapping);
  return mapping.lookup(body->getTerminator()->getOperand(0));
}
