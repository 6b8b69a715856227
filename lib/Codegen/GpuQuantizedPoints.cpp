//===- GpuQuantizedPoints.cpp - A decomposition at one point --------------===//
//
// PointEvaluator, ChunkReads and convertElement (GpuQuantized.h).
//
//===----------------------------------------------------------------------===//

#include "GpuQuantized.h"

#include "FuelFused/Codegen/TrailingZeros.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
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

/// How deep `distance` looks.
static constexpr unsigned kMaxDepth = 12;
/// The farthest element of a window from its first.
static constexpr int64_t kMaxWindow = 4;

/// `v`'s value where it is an integer constant.
static std::optional<int64_t> constantOf(Value v) {
  APInt c;
  if (v && matchPattern(v, m_ConstantInt(&c)))
    return c.getSExtValue();
  return std::nullopt;
}

/// log2 of `v` where it is a constant power of two.
static std::optional<unsigned> log2Of(Value v) {
  std::optional<int64_t> c = constantOf(v);
  if (!c || *c <= 0 || !llvm::isPowerOf2_64(*c))
    return std::nullopt;
  return llvm::Log2_64(*c);
}

/// s where `op` is x >> s (unsigned) or x / 2^s (s a constant).
static std::optional<unsigned> shiftOf(Operation *op) {
  if (op->getNumOperands() != 2)
    return std::nullopt;
  if (isa<arith::DivUIOp, arith::RemUIOp>(op))
    return log2Of(op->getOperand(1));
  std::optional<int64_t> s = constantOf(op->getOperand(1));
  if (isa<arith::ShRUIOp>(op) && s && *s >= 0 && *s < 64)
    return *s;
  return std::nullopt;
}

std::optional<int64_t> ChunkReads::distance(Value v, Value first,
                                            unsigned depth) {
  if (v == first)
    return 0;
  for (Axis &axis : axes) {
    auto at = llvm::find(axis.values, v), at0 = llvm::find(axis.values, first);
    if (at != axis.values.end() && at0 != axis.values.end())
      return at - at0;
  }
  Operation *op = v.getDefiningOp(), *op0 = first.getDefiningOp();
  if (!op || !op0 || depth == kMaxDepth || op->getName() != op0->getName() ||
      op->getNumOperands() != op0->getNumOperands() ||
      op->getNumResults() != 1 || op->getNumRegions() != 0 ||
      op->getAttrDictionary() != op0->getAttrDictionary())
    return std::nullopt;
  SmallVector<std::optional<int64_t>> d;
  for (auto [x, x0] : llvm::zip(op->getOperands(), op0->getOperands()))
    d.push_back(distance(x, x0, depth + 1));
  // The same computation of the same values (a constant: of the same
  // attributes).
  if (llvm::all_of(d, [](std::optional<int64_t> x) { return x == 0; }) &&
      (isMemoryEffectFree(op) || isa<tensor::ExtractOp>(op)))
    return 0;
  if (d.size() == 1 && d[0] &&
      isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtUIOp,
          arith::ExtSIOp>(op))
    return d[0];
  if (d.size() != 2 || !d[0] || !d[1])
    return std::nullopt;
  if (isa<arith::AddIOp>(op))
    return *d[0] + *d[1];
  if (isa<arith::SubIOp>(op))
    return *d[0] - *d[1];
  if (isa<arith::MulIOp>(op)) {
    if (std::optional<int64_t> c = constantOf(op->getOperand(1)); c && !*d[1])
      return *d[0] * *c;
    if (std::optional<int64_t> c = constantOf(op->getOperand(0)); c && !*d[0])
      return *d[1] * *c;
    return std::nullopt;
  }
  // (x + d) / 2^s and (x + d) mod 2^s where x mod 2^s + d stays below 2^s
  // (x a multiple of 2^t, so x mod 2^s at most 2^s - 2^t: d < 2^t).
  std::optional<unsigned> shift = shiftOf(op);
  if (!shift || *d[1] != 0 || *d[0] < 0 ||
      !isa<arith::DivUIOp, arith::ShRUIOp, arith::RemUIOp>(op))
    return std::nullopt;
  unsigned t = std::min(knownTrailingZeros(op0->getOperand(0)), *shift);
  if (*d[0] >= (int64_t(1) << t))
    return std::nullopt;
  return isa<arith::RemUIOp>(op) ? *d[0] : 0;
}

Value ChunkReads::windowElement(OpBuilder &b, Location loc, Window &window,
                                int64_t i) {
  if (window.elements.empty())
    window.elements.push_back(tensor::ExtractOp::create(
        b, loc, window.tensor, ValueRange{window.first}));
  while (static_cast<int64_t>(window.elements.size()) <= i) {
    int64_t k = window.elements.size();
    Value last = arith::SubIOp::create(
        b, loc, tensor::DimOp::create(b, loc, window.tensor, 0),
        arith::ConstantIndexOp::create(b, loc, 1));
    Value at = arith::MinUIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, window.first,
                              arith::ConstantIndexOp::create(b, loc, k)),
        last);
    window.elements.push_back(
        tensor::ExtractOp::create(b, loc, window.tensor, ValueRange{at}));
  }
  return window.elements[i];
}

Value ChunkReads::word(OpBuilder &b, Location loc, Operation *extract,
                       IRMapping &mapping) {
  auto op = dyn_cast<tensor::ExtractOp>(extract);
  if (!windows || !op || op.getIndices().size() != 1)
    return Value();
  Value tensor = mapping.lookupOrDefault(op.getTensor());
  Value index = mapping.lookupOrDefault(op.getIndices()[0]);
  auto [it, first] = windowOf.try_emplace(extract);
  Window &window = it->second;
  if (first) {
    window.tensor = tensor;
    window.first = index;
    if (auto div = index.getDefiningOp<arith::DivUIOp>();
        div && log2Of(div.getRhs())) {
      window.dividend = div.getLhs();
      window.divisor = *constantOf(div.getRhs());
    }
    return windowElement(b, loc, window, 0);
  }
  if (tensor != window.tensor)
    return Value();
  if (std::optional<int64_t> d = distance(index, window.first))
    return *d >= 0 && *d <= kMaxWindow ? windowElement(b, loc, window, *d)
                                       : Value();
  // index = (x + d) / c where the first is x / c: element (x mod c + d) /
  // c, at most (c - 2^t + d) / c.
  auto div = index.getDefiningOp<arith::DivUIOp>();
  if (!window.dividend || !div || constantOf(div.getRhs()) != window.divisor)
    return Value();
  std::optional<int64_t> d = distance(div.getLhs(), window.dividend);
  if (!d || *d < 0)
    return Value();
  int64_t c = window.divisor;
  unsigned t = std::min<unsigned>(knownTrailingZeros(window.dividend),
                                  llvm::Log2_64(c));
  int64_t most = (c - (int64_t(1) << t) + *d) / c;
  if (most > kMaxWindow)
    return Value();
  auto constant = [&](int64_t x) {
    return arith::ConstantIndexOp::create(b, loc, x);
  };
  Value at = arith::DivUIOp::create(
      b, loc,
      arith::AddIOp::create(
          b, loc, arith::RemUIOp::create(b, loc, window.dividend, constant(c)),
          constant(*d)),
      constant(c));
  Value element = windowElement(b, loc, window, 0);
  for (int64_t i = 1; i <= most; ++i)
    element = arith::SelectOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, at,
                              constant(i)),
        windowElement(b, loc, window, i), element);
  return element;
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
    else if (Value word = chunk ? chunk->word(b, loc, &inner, mapping)
                                : Value())
      mapping.map(inner.getResult(0), word);
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
