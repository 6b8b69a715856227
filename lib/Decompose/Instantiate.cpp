//===- Instantiate.cpp - Recipes to linalg on tensors ---------------------===//
//
// Instantiates a recipe for one fused op as linalg on tensors, in the normal
// form that fusion matches against:
//   - one scalar op per linalg.generic, on the value's own axes, operands
//     broadcast through projected indexing maps (never materialized);
//   - a sliding window as a tensor.pad of zeros (its padding) read through
//     `o * stride + k` in the indexing map of the op that consumes it;
//   - reductions as linalg.generic with a reduction iterator over a
//     linalg.fill of the combiner's identity; a contraction's body is the
//     multiply and the add;
//   - scalars (params, constants, axis sizes) as arith values captured by
//     the bodies;
//   - f16 and bf16 inputs extended to f32 first, the results truncated back
//     last: all math runs in f32 for them.
//
//===----------------------------------------------------------------------===//

#include "Decompositions.h"
#include "Emit.h"
#include "FuelFused/Decompose/Decompose.h"
#include "FuelFused/IR/FuelOps.h"
#include "FuelFused/Recipes/Recipe.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::fuel;

namespace {

/// A tensor dim read through a sliding window: at `out * stride + kernel`.
struct WindowRead {
  unsigned dim, out, kernel;
  int64_t stride;
};

/// A recipe value during instantiation: a tensor on concrete loop dims, or a
/// scalar. A windowed value is its padded tensor, some of whose dims are
/// read through windows.
struct Instance {
  Value value;
  SmallVector<unsigned> dims; ///< Concrete dims, in layout order.
  SmallVector<WindowRead> windows;
};

/// The size of a window's output dim: (in + 2 * padding - kernel) / stride
/// + 1.
struct WindowSize {
  unsigned in, kernel;
  int64_t stride, padding;
};

class Instantiator {
public:
  Instantiator(OpBuilder &b, Location loc, const Recipe &recipe)
      : b(b), loc(loc), recipe(recipe) {}

  /// Binds the inputs and checks what the emission needs; reports why not.
  LogicalResult bind(FusedOp op, std::string &why);
  SmallVector<Value> emit(FusedOp op);

private:
  Value emitNode(const RecipeNode &node, FusedOp op);
  Value scalar(double v) {
    return arith::ConstantOp::create(b, loc, computeType,
                                     b.getFloatAttr(computeType, v));
  }
  Instance emitWindow(const RecipeNode &node, FusedOp op);
  OpFoldResult sizeOf(unsigned dim);
  Value emptyTensor(ArrayRef<unsigned> dims, Type elt);
  /// A linalg.generic over `loopDims` (all parallel, plus the reduction dims
  /// last) writing a tensor on `loopDims`.
  Value generic(ArrayRef<unsigned> loopDims, ArrayRef<unsigned> redDims,
                ArrayRef<Instance> inputs, Value init,
                function_ref<Value(OpBuilder &, Location, ValueRange)> body);
  Value castTensor(Value v, ArrayRef<unsigned> dims, Type to);

  OpBuilder &b;
  Location loc;
  const Recipe &recipe;
  Type computeType;
  /// Concrete dims of each recipe axis.
  SmallVector<SmallVector<unsigned>> axisDims;
  /// Where each concrete dim's size comes from: (operand, dim), or, for the
  /// output dim of a window, the window.
  SmallVector<std::pair<Value, unsigned>> dimSource;
  DenseMap<unsigned, WindowSize> windowDims;
  SmallVector<Instance> values;
};

} // namespace

LogicalResult Instantiator::bind(FusedOp op, std::string &why) {
  const FusedOpInfo &info = op.getInfo();
  // The batch axis takes the leading dims that each input's named axes
  // leave; every input carrying it must agree on how many.
  std::optional<int64_t> batchRank;
  SmallVector<std::optional<std::pair<Value, unsigned>>> axisSource(
      recipe.axisNames.size());
  for (const RecipeNode &n : recipe.nodes) {
    if (n.op != RecipeOp::Input)
      continue;
    Value v = op.getOperandNamed(info.operands[n.index].name);
    if (!v) {
      why = ("the recipe reads operand '" + info.operands[n.index].name +
             "', which is absent")
                .str();
      return failure();
    }
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type) {
      why = "only tensor operands are decomposed";
      return failure();
    }
    int64_t named = llvm::count_if(
        n.axes, [](RecipeAxis a) { return a != kBatchAxis; });
    bool hasBatch = llvm::is_contained(n.axes, kBatchAxis);
    int64_t rank = type.getRank();
    if (!hasBatch && rank != named) {
      why = "operand rank does not match the recipe";
      return failure();
    }
    if (hasBatch) {
      if (rank < named) {
        why = "operand rank does not match the recipe";
        return failure();
      }
      if (batchRank && *batchRank != rank - named) {
        why = "the inputs disagree on the number of leading dims";
        return failure();
      }
      batchRank = rank - named;
    }
  }
  // Concrete dims: the batch dims first, then one per named axis.
  unsigned next = 0;
  axisDims.resize(recipe.axisNames.size());
  for (int64_t i = 0; i < batchRank.value_or(0); ++i)
    axisDims[kBatchAxis].push_back(next++);
  for (unsigned a = 1; a < recipe.axisNames.size(); ++a)
    axisDims[a].push_back(next++);
  dimSource.resize(next);
  SmallVector<bool> known(next, false);
  for (const RecipeNode &n : recipe.nodes) {
    if (n.op != RecipeOp::Input)
      continue;
    Value v = op.getOperandNamed(info.operands[n.index].name);
    unsigned pos = 0;
    for (RecipeAxis a : n.axes)
      for (unsigned d : axisDims[a]) {
        if (!known[d])
          dimSource[d] = {v, pos};
        known[d] = true;
        ++pos;
      }
  }
  // A window's output axis: sized from its input and kernel axes.
  for (const RecipeNode &n : recipe.nodes) {
    if (n.op != RecipeOp::Window)
      continue;
    const RecipeNode::WindowSpec &spec = *n.window;
    auto element = [&](StringRef name) {
      Attribute attr = op.getParam(name);
      return cast<DenseI64ArrayAttr>(attr).asArrayRef()[spec.element];
    };
    unsigned out = axisDims[spec.out].front();
    windowDims[out] = {axisDims[n.index].front(),
                       axisDims[spec.kernel].front(), element(spec.stride),
                       element(spec.padding)};
    known[out] = true;
  }
  if (!llvm::all_of(known, [](bool k) { return k; })) {
    why = "an axis of the recipe has no input that carries it";
    return failure();
  }
  // All math in f32 for f16/bf16, else in the element type.
  for (Value v : op.getOperands())
    if (auto t = dyn_cast<RankedTensorType>(v.getType()))
      if (auto ft = dyn_cast<FloatType>(t.getElementType())) {
        computeType = ft.getWidth() < 32 ? b.getF32Type() : ft;
        break;
      }
  if (!computeType) {
    why = "the op has no float operand";
    return failure();
  }
  return success();
}

OpFoldResult Instantiator::sizeOf(unsigned dim) {
  auto it = windowDims.find(dim);
  if (it == windowDims.end())
    return tensor::getMixedSize(b, loc, dimSource[dim].first,
                                dimSource[dim].second);
  WindowSize w = it->second;
  // (in + 2 * padding - kernel) / stride + 1, folded where static.
  Emitter e(b, loc);
  OpFoldResult span = sizeOf(w.in);
  if (w.padding)
    span = e.add(span, e.index(2 * w.padding));
  span = e.sub(span, sizeOf(w.kernel));
  if (w.stride != 1)
    span = e.floorDiv(span, w.stride);
  return e.add(span, e.index(1));
}

Value Instantiator::emptyTensor(ArrayRef<unsigned> dims, Type elt) {
  SmallVector<OpFoldResult> sizes;
  for (unsigned d : dims)
    sizes.push_back(sizeOf(d));
  return tensor::EmptyOp::create(b, loc, sizes, elt);
}

Value Instantiator::generic(
    ArrayRef<unsigned> loopDims, ArrayRef<unsigned> redDims,
    ArrayRef<Instance> inputs, Value init,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  SmallVector<unsigned> loops(loopDims);
  llvm::append_range(loops, redDims);
  auto loop = [&](unsigned d) {
    return b.getAffineDimExpr(llvm::find(loops, d) - loops.begin());
  };
  auto mapFor = [&](ArrayRef<unsigned> dims, ArrayRef<WindowRead> windows) {
    SmallVector<AffineExpr> exprs;
    for (unsigned d : dims) {
      const WindowRead *w = llvm::find_if(
          windows, [&](const WindowRead &r) { return r.dim == d; });
      exprs.push_back(w == windows.end()
                          ? loop(d)
                          : loop(w->out) * w->stride + loop(w->kernel));
    }
    return AffineMap::get(loops.size(), 0, exprs, b.getContext());
  };
  SmallVector<AffineMap> maps;
  SmallVector<Value> ins;
  for (const Instance &in : inputs) {
    ins.push_back(in.value);
    maps.push_back(mapFor(in.dims, in.windows));
  }
  maps.push_back(mapFor(loopDims, {}));
  SmallVector<utils::IteratorType> iters(loopDims.size(),
                                         utils::IteratorType::parallel);
  iters.append(redDims.size(), utils::IteratorType::reduction);
  auto g = linalg::GenericOp::create(
      b, loc, init.getType(), ins, init, maps, iters,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc, body(nb, nloc, args));
      });
  return g.getResult(0);
}

Value Instantiator::castTensor(Value v, ArrayRef<unsigned> dims, Type to) {
  Type from = cast<ShapedType>(v.getType()).getElementType();
  if (from == to)
    return v;
  Value init = emptyTensor(dims, to);
  return generic(dims, {}, {Instance{v, SmallVector<unsigned>(dims), {}}},
                 init, [&](OpBuilder &nb, Location nloc, ValueRange args) {
                   if (cast<FloatType>(to).getWidth() >
                       cast<FloatType>(from).getWidth())
                     return arith::ExtFOp::create(nb, nloc, to, args[0])
                         .getResult();
                   return arith::TruncFOp::create(nb, nloc, to, args[0])
                       .getResult();
                 });
}

/// The scalar op of an elementwise node on scalar arguments.
static Value applyElementwise(OpBuilder &b, Location loc, RecipeOp op,
                              ValueRange args, int64_t intValue) {
  switch (op) {
  case RecipeOp::Neg:
    return arith::NegFOp::create(b, loc, args[0]);
  case RecipeOp::Exp:
    return math::ExpOp::create(b, loc, args[0]);
  case RecipeOp::Log:
    return math::LogOp::create(b, loc, args[0]);
  case RecipeOp::Sqrt:
    return math::SqrtOp::create(b, loc, args[0]);
  case RecipeOp::Rsqrt:
    return math::RsqrtOp::create(b, loc, args[0]);
  case RecipeOp::Tanh:
    return math::TanhOp::create(b, loc, args[0]);
  case RecipeOp::Erf:
    return math::ErfOp::create(b, loc, args[0]);
  case RecipeOp::Abs:
    return math::AbsFOp::create(b, loc, args[0]);
  case RecipeOp::Log1p:
    return math::Log1pOp::create(b, loc, args[0]);
  case RecipeOp::Expm1:
    return math::ExpM1Op::create(b, loc, args[0]);
  case RecipeOp::Add:
    return arith::AddFOp::create(b, loc, args[0], args[1]);
  case RecipeOp::Sub:
    return arith::SubFOp::create(b, loc, args[0], args[1]);
  case RecipeOp::Mul:
    return arith::MulFOp::create(b, loc, args[0], args[1]);
  case RecipeOp::Div:
    return arith::DivFOp::create(b, loc, args[0], args[1]);
  case RecipeOp::Max:
    return arith::MaximumFOp::create(b, loc, args[0], args[1]);
  case RecipeOp::Min:
    return arith::MinimumFOp::create(b, loc, args[0], args[1]);
  case RecipeOp::Powi: {
    Value n = arith::ConstantOp::create(b, loc, b.getI32Type(),
                                        b.getI32IntegerAttr(intValue));
    return math::FPowIOp::create(b, loc, args[0], n);
  }
  default:
    llvm_unreachable("not an elementwise recipe op");
  }
}

Value Instantiator::emitNode(const RecipeNode &n, FusedOp op) {
  const FusedOpInfo &info = op.getInfo();
  auto concrete = [&](ArrayRef<RecipeAxis> axes) {
    SmallVector<unsigned> dims;
    for (RecipeAxis a : axes)
      llvm::append_range(dims, axisDims[a]);
    return dims;
  };
  SmallVector<unsigned> dims = concrete(n.axes);
  switch (n.op) {
  case RecipeOp::Input: {
    Value v = op.getOperandNamed(info.operands[n.index].name);
    Type elt = cast<ShapedType>(v.getType()).getElementType();
    return isa<FloatType>(elt) ? castTensor(v, dims, computeType) : v;
  }
  case RecipeOp::Param:
    return scalar(cast<FloatAttr>(op.getParam(n.param)).getValueAsDouble());
  case RecipeOp::Const:
    return scalar(n.constant);
  case RecipeOp::DimSize: {
    auto [src, pos] = dimSource[axisDims[n.index].front()];
    Value size = tensor::DimOp::create(b, loc, src, pos);
    Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), size);
    return arith::UIToFPOp::create(b, loc, computeType, i64);
  }
  case RecipeOp::Splat: {
    Value init = emptyTensor(dims, computeType);
    return linalg::FillOp::create(b, loc, scalar(n.constant), init)
        .getResult(0);
  }
  case RecipeOp::ReduceSum:
  case RecipeOp::ReduceMax:
  case RecipeOp::Contract: {
    bool isMax = n.op == RecipeOp::ReduceMax;
    double identity =
        isMax ? -std::numeric_limits<double>::infinity() : 0.0;
    Value init = linalg::FillOp::create(b, loc, scalar(identity),
                                        emptyTensor(dims, computeType))
                     .getResult(0);
    SmallVector<unsigned> red;
    for (RecipeAxis a : n.op == RecipeOp::Contract
                            ? ArrayRef<RecipeAxis>(n.over)
                            : ArrayRef<RecipeAxis>(n.index))
      llvm::append_range(red, axisDims[a]);
    SmallVector<Instance> ins;
    for (unsigned o : n.operands)
      ins.push_back(values[o]);
    RecipeOp kind = n.op;
    return generic(dims, red, ins, init,
                   [&](OpBuilder &nb, Location nloc, ValueRange args) {
                     if (kind == RecipeOp::Contract) {
                       Value p = arith::MulFOp::create(nb, nloc, args[0],
                                                       args[1]);
                       return arith::AddFOp::create(nb, nloc, args[2], p)
                           .getResult();
                     }
                     if (kind == RecipeOp::ReduceMax)
                       return arith::MaximumFOp::create(nb, nloc, args[0],
                                                        args[1])
                           .getResult();
                     return arith::AddFOp::create(nb, nloc, args[0], args[1])
                         .getResult();
                   });
  }
  case RecipeOp::CausalMask: {
    // select(j <= i + (Sk - Sq), x, -inf), i and j the query and key loops.
    const Instance &x = values[n.operands[0]];
    unsigned qDim = axisDims[n.index].front();
    unsigned kDim = axisDims[n.intValue].front();
    unsigned qPos = llvm::find(dims, qDim) - dims.begin();
    unsigned kPos = llvm::find(dims, kDim) - dims.begin();
    Value sq = getValueOrCreateConstantIndexOp(
        b, loc, tensor::getMixedSize(b, loc, dimSource[qDim].first,
                                     dimSource[qDim].second));
    Value sk = getValueOrCreateConstantIndexOp(
        b, loc, tensor::getMixedSize(b, loc, dimSource[kDim].first,
                                     dimSource[kDim].second));
    Value offset = arith::SubIOp::create(b, loc, sk, sq);
    Value init = emptyTensor(dims, computeType);
    return generic(
        dims, {}, {x}, init,
        [&](OpBuilder &nb, Location nloc, ValueRange args) {
          Value i = linalg::IndexOp::create(nb, nloc, qPos);
          Value j = linalg::IndexOp::create(nb, nloc, kPos);
          Value limit = arith::AddIOp::create(nb, nloc, i, offset);
          Value visible = arith::CmpIOp::create(
              nb, nloc, arith::CmpIPredicate::sle, j, limit);
          Value ninf = arith::ConstantOp::create(
              nb, nloc, computeType,
              nb.getFloatAttr(computeType,
                              -std::numeric_limits<double>::infinity()));
          return arith::SelectOp::create(nb, nloc, visible, args[0], ninf)
              .getResult();
        });
  }
  case RecipeOp::Gather:
  case RecipeOp::MaskIgnored:
  case RecipeOp::CountKept: {
    // Targets equal to the ignore index are masked: the gather reads class
    // 0 for them, the mask writes 0, the count skips them.
    const Instance &targets =
        values[n.operands[n.op == RecipeOp::CountKept ? 0 : 1]];
    Type intType = cast<ShapedType>(targets.value.getType()).getElementType();
    int64_t ignore = cast<IntegerAttr>(op.getParam(n.param)).getInt();
    auto kept = [&](OpBuilder &nb, Location nloc, Value t) {
      Value ignored = arith::ConstantOp::create(
          nb, nloc, intType, nb.getIntegerAttr(intType, ignore));
      return arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::ne, t,
                                   ignored)
          .getResult();
    };
    auto zero = [&](OpBuilder &nb, Location nloc) {
      return arith::ConstantOp::create(nb, nloc, computeType,
                                       nb.getFloatAttr(computeType, 0.0))
          .getResult();
    };
    if (n.op == RecipeOp::CountKept) {
      Value init = linalg::FillOp::create(b, loc, scalar(0.0),
                                          emptyTensor({}, computeType))
                       .getResult(0);
      return generic({}, targets.dims, {targets}, init,
                     [&](OpBuilder &nb, Location nloc, ValueRange args) {
                       Value one = arith::ConstantOp::create(
                           nb, nloc, computeType,
                           nb.getFloatAttr(computeType, 1.0));
                       Value c = arith::SelectOp::create(
                           nb, nloc, kept(nb, nloc, args[0]), one,
                           zero(nb, nloc));
                       return arith::AddFOp::create(nb, nloc, args[1], c)
                           .getResult();
                     });
    }
    Value init = emptyTensor(dims, computeType);
    if (n.op == RecipeOp::MaskIgnored)
      return generic(dims, {}, {values[n.operands[0]], targets}, init,
                     [&](OpBuilder &nb, Location nloc, ValueRange args) {
                       return arith::SelectOp::create(
                                  nb, nloc, kept(nb, nloc, args[1]), args[0],
                                  zero(nb, nloc))
                           .getResult();
                     });
    const Instance &x = values[n.operands[0]];
    unsigned classDim = axisDims[n.index].front();
    return generic(
        dims, {}, {targets}, init,
        [&](OpBuilder &nb, Location nloc, ValueRange args) {
          Value first = arith::ConstantOp::create(
              nb, nloc, intType, nb.getIntegerAttr(intType, 0));
          Value safe = arith::SelectOp::create(
              nb, nloc, kept(nb, nloc, args[0]), args[0], first);
          SmallVector<Value> indices;
          for (unsigned d : x.dims)
            indices.push_back(
                d == classDim
                    ? arith::IndexCastOp::create(nb, nloc, nb.getIndexType(),
                                                 safe)
                          .getResult()
                    : linalg::IndexOp::create(
                          nb, nloc, llvm::find(dims, d) - dims.begin())
                          .getResult());
          return tensor::ExtractOp::create(nb, nloc, x.value, indices)
              .getResult();
        });
  }
  case RecipeOp::RotateHalf: {
    // concat(-x[..., D/2:], x[..., :D/2]) along the axis.
    const Instance &x = values[n.operands[0]];
    unsigned pos = llvm::find(x.dims, axisDims[n.index].front()) -
                   x.dims.begin();
    auto type = cast<RankedTensorType>(x.value.getType());
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, x.value);
    OpFoldResult full = sizes[pos];
    OpFoldResult half;
    if (std::optional<int64_t> n = getConstantIntValue(full))
      half = b.getIndexAttr(*n / 2);
    else
      half = arith::DivUIOp::create(b, loc, cast<Value>(full),
                                    arith::ConstantIndexOp::create(b, loc, 2))
                 .getResult();
    SmallVector<OpFoldResult> zeros(type.getRank(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> ones(type.getRank(), b.getIndexAttr(1));
    SmallVector<OpFoldResult> halfSizes = sizes;
    halfSizes[pos] = half;
    SmallVector<OpFoldResult> upperOffsets = zeros;
    upperOffsets[pos] = half;
    Value lower = tensor::ExtractSliceOp::create(b, loc, x.value, zeros,
                                                 halfSizes, ones);
    Value upper = tensor::ExtractSliceOp::create(b, loc, x.value, upperOffsets,
                                                 halfSizes, ones);
    Value negInit = tensor::EmptyOp::create(
        b, loc, halfSizes, type.getElementType());
    Value negUpper = generic(
        x.dims, {}, {Instance{upper, x.dims, {}}}, negInit,
        [&](OpBuilder &nb, Location nloc, ValueRange args) {
          return arith::NegFOp::create(nb, nloc, args[0]).getResult();
        });
    return tensor::ConcatOp::create(b, loc, pos, ValueRange{negUpper, lower});
  }
  default:
    break;
  }
  // Elementwise: scalars stay scalars; tensors get a generic on the node's
  // dims with scalar operands captured by the body.
  SmallVector<Instance> tensorIns;
  SmallVector<int> argOf; // per operand: index into the block args, or -1
  for (unsigned o : n.operands) {
    if (values[o].dims.empty() &&
        !isa<RankedTensorType>(values[o].value.getType())) {
      argOf.push_back(-1);
      continue;
    }
    argOf.push_back(tensorIns.size());
    tensorIns.push_back(values[o]);
  }
  auto operandsIn = [&](ValueRange args) {
    SmallVector<Value> scalars;
    for (auto [i, o] : llvm::enumerate(n.operands))
      scalars.push_back(argOf[i] < 0 ? values[o].value : args[argOf[i]]);
    return scalars;
  };
  if (tensorIns.empty())
    return applyElementwise(b, loc, n.op, operandsIn({}), n.intValue);
  Value init = emptyTensor(dims, computeType);
  return generic(dims, {}, tensorIns, init,
                 [&](OpBuilder &nb, Location nloc, ValueRange args) {
                   return applyElementwise(nb, nloc, n.op, operandsIn(args),
                                           n.intValue);
                 });
}

Instance Instantiator::emitWindow(const RecipeNode &n, FusedOp op) {
  // Pad the windowed dim with zeros; the consumer reads it at o * s + k.
  Instance x = values[n.operands[0]];
  unsigned dim = axisDims[n.index].front();
  const WindowSize &size = windowDims.lookup(axisDims[n.window->out].front());
  unsigned pos = llvm::find(x.dims, dim) - x.dims.begin();
  if (size.padding > 0) {
    // One pad for all the windows of a value.
    Value src = x.value;
    auto type = cast<RankedTensorType>(src.getType());
    SmallVector<OpFoldResult> low(type.getRank(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> high = low;
    auto previous = src.getDefiningOp<tensor::PadOp>();
    if (x.windows.empty())
      previous = {};
    Value zero;
    if (previous) {
      src = previous.getSource();
      low = previous.getMixedLowPad();
      high = previous.getMixedHighPad();
      zero = previous.getConstantPaddingValue();
    } else {
      zero = scalar(0.0);
    }
    low[pos] = high[pos] = b.getIndexAttr(size.padding);
    x.value = tensor::PadOp::create(b, loc, Type(), src, low, high, zero)
                  .getResult();
    if (previous && previous->use_empty())
      previous->erase();
  }
  x.windows.push_back({dim, axisDims[n.window->out].front(),
                       axisDims[n.window->kernel].front(), size.stride});
  return x;
}

SmallVector<Value> Instantiator::emit(FusedOp op) {
  for (const RecipeNode &n : recipe.nodes) {
    if (n.op == RecipeOp::Window) {
      values.push_back(emitWindow(n, op));
      continue;
    }
    SmallVector<unsigned> dims;
    for (RecipeAxis a : n.axes)
      llvm::append_range(dims, axisDims[a]);
    Value v = emitNode(n, op);
    values.push_back(Instance{v, dims, {}});
  }
  SmallVector<Value> results;
  for (auto [o, resultType] : llvm::zip(recipe.outputs, op.getResultTypes())) {
    Instance out = values[o];
    Type elt = cast<ShapedType>(resultType).getElementType();
    results.push_back(castTensor(out.value, out.dims, elt));
  }
  return results;
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

/// The recipe `op` decomposes through: the op has one, and it covers the
/// op's params, operands and shapes (else the hand-written decomposition,
/// if any, takes the op). Sets `why` when the recipe cannot.
static std::optional<Recipe> coveringRecipe(FusedOp op, std::string &why) {
  const FusedOpInfo &info = op.getInfo();
  if (!info.hasRecipe)
    return std::nullopt;
  RecipeBuilder rb(info, op.getParams(), op);
  lookupRecipe(info)(rb);
  Recipe recipe = rb.take();
  if (!recipe.unsupported.empty()) {
    why = "the recipe does not cover " + recipe.unsupported;
    return std::nullopt;
  }
  if (recipe.outputs.size() != op.getNumResults()) {
    why = "the recipe's outputs do not match the op's results";
    return std::nullopt;
  }
  OpBuilder b(op->getContext());
  if (failed(Instantiator(b, op.getLoc(), recipe).bind(op, why)))
    return std::nullopt;
  return recipe;
}

/// What no decomposition can take: an op without recipe or hand-written
/// decomposition, or operands on memrefs.
static LogicalResult checkDecomposable(FusedOp op, std::string &why) {
  const FusedOpInfo &info = op.getInfo();
  if (!info.hasRecipe && !info.hasDecomposition) {
    why = info.recipeNote.empty() ? std::string("the op has no recipe yet")
                                  : info.recipeNote.str();
    return failure();
  }
  for (Type t : op->getOperandTypes())
    if (isa<MemRefType>(t)) {
      why = "only tensor operands are decomposed; bufferize after "
            "decomposing";
      return failure();
    }
  return success();
}

FailureOr<SmallVector<Value>> mlir::fuel::decomposeFusedOp(OpBuilder &b,
                                                           FusedOp op,
                                                           std::string &why) {
  if (failed(checkDecomposable(op, why)))
    return failure();
  const FusedOpInfo &info = op.getInfo();
  SmallVector<Value> values;
  std::string recipeWhy;
  if (std::optional<Recipe> recipe = coveringRecipe(op, recipeWhy)) {
    Instantiator inst(b, op.getLoc(), *recipe);
    if (failed(inst.bind(op, why)))
      return failure();
    values = inst.emit(op);
  } else if (std::optional<HandDecomposition> hand =
                 lookupDecomposition(info)) {
    // Checked first: nothing is built for an op it does not apply to.
    if (failed(hand->check(op, why)))
      return failure();
    values = hand->build(b, op);
  } else {
    why = recipeWhy;
    return failure();
  }
  // A declared result type may be more static than what was computed.
  for (auto [v, t] : llvm::zip(values, op.getResultTypes()))
    if (v.getType() != t)
      v = tensor::CastOp::create(b, op.getLoc(), t, v);
  return values;
}
