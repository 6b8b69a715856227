//===- MatchUtils.cpp - Helpers of the recipe matcher ---------------------===//

#include "Matcher.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::fuel;
using namespace mlir::fuel::match;

namespace mlir::fuel::match {

SmallVector<int64_t> staticLoopRanges(linalg::LinalgOp op) {
  SmallVector<int64_t> ranges(op.getNumLoops(), ShapedType::kDynamic);
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<ShapedType>(operand.get().getType());
    if (!type || !type.hasRank())
      continue;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    for (auto [r, e] : llvm::enumerate(map.getResults()))
      if (auto d = dyn_cast<AffineDimExpr>(e);
          d && ShapedType::isDynamic(ranges[d.getPosition()]))
        ranges[d.getPosition()] = type.getDimSize(r);
  }
  return ranges;
}

bool isUnitDim(Type t, int64_t pos) {
  return cast<ShapedType>(t).getDimSize(pos) == 1;
}

Value withoutUnitReshapes(Value t, SmallVectorImpl<Operation *> *views) {
  while (Operation *view = t.getDefiningOp()) {
    if (tensor::CollapseShapeOp flat = unitReshapePairSource(view)) {
      if (views)
        views->append({view, flat});
      t = flat.getSrc();
      continue;
    }
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(view) ||
        !isUnitReshape(view))
      break;
    if (views)
      views->push_back(view);
    t = view->getOperand(0);
  }
  return t;
}

Value withoutCastGenerics(Value v, function_ref<bool(Operation *)> isCast,
                          SmallVectorImpl<Operation *> &ops) {
  while (auto op = v.getDefiningOp<linalg::LinalgOp>()) {
    Operation *scalar = singleBodyOp(op);
    if (!scalar || !isCast(scalar) || numInputs(op) != 1 ||
        op->getNumResults() != 1 ||
        scalar->getOperand(0) != op.getBlock()->getArgument(0) ||
        !llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); }))
      break;
    ops.push_back(op);
    v = inputOperand(op, 0)->get();
  }
  return v;
}

Operation *fillOf(Value t) {
  // Any reshape of a fill holds the same value everywhere.
  while (Operation *def = t.getDefiningOp()) {
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
      break;
    t = def->getOperand(0);
  }
  auto op = t.getDefiningOp<linalg::LinalgOp>();
  if (!op)
    return nullptr;
  if (isa<linalg::FillOp>(op))
    return op;
  Block *body = op.getBlock();
  if (!body || numInputs(op) != 1 || numInits(op) != 1 ||
      isa<ShapedType>(op->getOperand(0).getType()))
    return nullptr;
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  if (yield.getOperand(0) != body->getArgument(0) ||
      op.getNumLoops() != op.getNumParallelLoops())
    return nullptr;
  return op.getOperation();
}

std::optional<int64_t> intConstant(Value v, const Body *body) {
  APInt value;
  if (matchPattern(v, m_ConstantInt(&value)))
    return value.getSExtValue();
  auto arg = dyn_cast<BlockArgument>(v);
  if (!body || !arg || arg.getOwner() != body->block() ||
      arg.getArgNumber() >= numInputs(body->op))
    return std::nullopt;
  Value t = inputOperand(body->op, arg.getArgNumber())->get();
  DenseIntElementsAttr dense;
  if (matchPattern(t, m_Constant(&dense)) && dense.isSplat())
    return dense.getSplatValue<APInt>().getSExtValue();
  if (Operation *fill = fillOf(t))
    return intConstant(fill->getOperand(0), nullptr);
  return std::nullopt;
}

/// The float value of `s`: a constant, a float cast of one or of an
/// integer constant, or (inside a body) an input whose elements are all one
/// constant (constantTensorValue).
FloatAttr constantValue(Value s, const Body *body) {
  FloatAttr c;
  if (matchPattern(s, m_Constant(&c)))
    return c;
  if (Operation *op = s.getDefiningOp()) {
    // An integer constant converted (ONNX's ignored-row 0, an i64 splat).
    if (isa<arith::SIToFPOp, arith::UIToFPOp>(op)) {
      std::optional<int64_t> i = intConstant(op->getOperand(0), body);
      auto type = dyn_cast<FloatType>(op->getResult(0).getType());
      if (!i || !type || (isa<arith::UIToFPOp>(op) && *i < 0))
        return {};
      APFloat v(static_cast<double>(*i));
      bool lost;
      v.convert(type.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      return FloatAttr::get(type, v);
    }
    if (isa<arith::ExtFOp, arith::TruncFOp>(op)) {
      FloatAttr inner = constantValue(op->getOperand(0), body);
      auto type = dyn_cast<FloatType>(op->getResult(0).getType());
      if (!inner || !type)
        return {};
      APFloat v = inner.getValue();
      bool lost;
      v.convert(type.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      return FloatAttr::get(type, v);
    }
    return {};
  }
  auto arg = dyn_cast<BlockArgument>(s);
  if (!body || !arg || arg.getOwner() != body->block() ||
      arg.getArgNumber() >= numInputs(body->op))
    return {};
  return constantTensorValue(
      inputOperand(body->op, arg.getArgNumber())->get());
}

/// The value of scalar `v` of an elementwise body whose inputs are all
/// constant (`inputs`), folded in double precision.
static std::optional<double> foldScalar(Value v, Block *block,
                                        ArrayRef<double> inputs,
                                        unsigned depth) {
  if (depth > 16)
    return std::nullopt;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (arg.getOwner() != block || arg.getArgNumber() >= inputs.size())
      return std::nullopt;
    return inputs[arg.getArgNumber()];
  }
  FloatAttr c;
  if (matchPattern(v, m_Constant(&c)))
    return c.getValueAsDouble();
  Operation *op = v.getDefiningOp();
  if (!op || op->getBlock() != block || op->getNumResults() != 1 ||
      op->getNumOperands() == 0 || op->getNumOperands() > 2)
    return std::nullopt;
  SmallVector<double, 2> x;
  for (Value operand : op->getOperands()) {
    std::optional<double> e = foldScalar(operand, block, inputs, depth + 1);
    if (!e)
      return std::nullopt;
    x.push_back(*e);
  }
  return llvm::TypeSwitch<Operation *, std::optional<double>>(op)
      .Case([&](arith::AddFOp) { return x[0] + x[1]; })
      .Case([&](arith::SubFOp) { return x[0] - x[1]; })
      .Case([&](arith::MulFOp) { return x[0] * x[1]; })
      .Case([&](arith::DivFOp) { return x[0] / x[1]; })
      .Case([&](arith::NegFOp) { return -x[0]; })
      .Case([&](arith::ExtFOp) { return x[0]; })
      .Case([&](arith::TruncFOp) { return x[0]; })
      .Case([&](arith::SIToFPOp) { return x[0]; })
      .Case([&](math::PowFOp) { return std::pow(x[0], x[1]); })
      .Case([&](math::SqrtOp) { return std::sqrt(x[0]); })
      .Case([&](math::RsqrtOp) { return 1.0 / std::sqrt(x[0]); })
      .Case([&](math::ExpOp) { return std::exp(x[0]); })
      .Case([&](math::LogOp) { return std::log(x[0]); })
      .Default([](Operation *) { return std::nullopt; });
}

/// Tensors of constants computed by elementwise ops are folded this deep.
static constexpr unsigned kMaxConstantDepth = 4;

/// The value every element of `t` holds, integer or float: a splat, a fill,
/// or an elementwise op of such, folded in double precision.
static std::optional<double> splatValue(Value t, unsigned depth) {
  DenseFPElementsAttr dense;
  if (matchPattern(t, m_Constant(&dense)) && dense.isSplat())
    return dense.getSplatValue<APFloat>().convertToDouble();
  DenseIntElementsAttr ints;
  if (matchPattern(t, m_Constant(&ints)) && ints.isSplat() &&
      ints.getElementType().getIntOrFloatBitWidth() > 1)
    return static_cast<double>(ints.getSplatValue<APInt>().getSExtValue());
  if (Operation *fill = fillOf(t)) {
    if (FloatAttr c = constantValue(fill->getOperand(0), nullptr))
      return c.getValueAsDouble();
    return std::nullopt;
  }
  // An elementwise op of constants (TOSA's pow(2 / pi, 0.5), StableHLO's
  // clip bound converted from an integer).
  t = withoutUnitReshapes(t);
  auto op = t.getDefiningOp<linalg::LinalgOp>();
  if (!op || depth >= kMaxConstantDepth || !op.getBlock() ||
      !op.hasPureTensorSemantics() || op.getNumReductionLoops() != 0)
    return std::nullopt;
  // (No input is a value from outside: an argument is no constant.)
  ValueRange ins = op->getOperands().take_front(numInputs(op));
  if (llvm::any_of(ins, [](Value in) { return isa<BlockArgument>(in); }))
    return std::nullopt;
  SmallVector<double> inputs;
  for (Value in : ins) {
    std::optional<double> c = splatValue(in, depth + 1);
    if (!c)
      return std::nullopt;
    inputs.push_back(*c);
  }
  auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
  std::optional<double> v =
      foldScalar(yield.getOperand(cast<OpResult>(t).getResultNumber()),
                 op.getBlock(), inputs, 0);
  if (!v || std::isnan(*v))
    return std::nullopt;
  return v;
}

FloatAttr constantTensorValue(Value t) {
  // (Float values of the types tensors hold are exact in a double.)
  auto type = dyn_cast<FloatType>(getElementTypeOrSelf(t.getType()));
  std::optional<double> v = type ? splatValue(t, 0) : std::nullopt;
  if (!v)
    return {};
  APFloat value(*v);
  bool lost;
  value.convert(type.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
  return FloatAttr::get(type, value);
}


bool isUnitReshape(Operation *op) {
  auto src = cast<RankedTensorType>(op->getOperand(0).getType());
  auto dst = cast<RankedTensorType>(op->getResult(0).getType());
  auto nonUnit = [](RankedTensorType t) {
    return llvm::count_if(t.getShape(), [](int64_t d) { return d != 1; });
  };
  return nonUnit(src) == nonUnit(dst);
}

/// The sizes of `t` other than 1, in order.
static SmallVector<int64_t> nonUnitSizes(Type t) {
  SmallVector<int64_t> sizes;
  for (int64_t d : cast<RankedTensorType>(t).getShape())
    if (d != 1)
      sizes.push_back(d);
  return sizes;
}

tensor::CollapseShapeOp unitReshapePairSource(Operation *op) {
  auto expand = dyn_cast_or_null<tensor::ExpandShapeOp>(op);
  if (!expand)
    return {};
  auto collapse = expand.getSrc().getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse || isUnitReshape(collapse))
    return {};
  SmallVector<int64_t> from = nonUnitSizes(collapse.getSrcType());
  if (llvm::is_contained(from, ShapedType::kDynamic) ||
      from != nonUnitSizes(expand.getResultType()))
    return {};
  return collapse;
}

/// The single scalar op of a body (besides the yield), or null.
Operation *singleBodyOp(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (!body || body->getOperations().size() != 2)
    return nullptr;
  Operation *scalar = &body->front();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  if (yield.getNumOperands() != 1 ||
      yield.getOperand(0) != scalar->getResult(0))
    return nullptr;
  return scalar;
}

/// Whether `op` only moves data: one input, all loops parallel, a body that
/// yields the input element (a broadcast, a transpose, a copy).
bool isDataMovement(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (!body || numInputs(op) != 1 || numInits(op) != 1 ||
      op.getNumLoops() != op.getNumParallelLoops() ||
      !op.hasPureTensorSemantics())
    return false;
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  return yield.getNumOperands() == 1 &&
         yield.getOperand(0) == body->getArgument(0);
}

bool isPermutationCopy(linalg::LinalgOp op) {
  if (!isDataMovement(op) || op->getNumResults() != 1)
    return false;
  auto src = dyn_cast<RankedTensorType>(inputOperand(op, 0)->get().getType());
  auto dst = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return src && dst && src.hasStaticShape() && dst.hasStaticShape() &&
         src.getNumElements() == dst.getNumElements() &&
         op.getMatchingIndexingMap(inputOperand(op, 0))
             .isProjectedPermutation(/*allowZeroInResults=*/true) &&
         op.getIndexingMapMatchingResult(op->getResult(0)).isPermutation();
}

bool isUnitDimMove(linalg::LinalgOp op) {
  if (!isDataMovement(op) || op->getNumResults() != 1)
    return false;
  auto src = dyn_cast<RankedTensorType>(inputOperand(op, 0)->get().getType());
  auto dst = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!src || !dst || !src.hasStaticShape() || !dst.hasStaticShape() ||
      src.getNumElements() != dst.getNumElements())
    return false;
  AffineMap in = op.getMatchingIndexingMap(inputOperand(op, 0));
  AffineMap out = op.getIndexingMapMatchingResult(op->getResult(0));
  if (!out.isPermutation())
    return false;
  SmallVector<int64_t> ranges = staticLoopRanges(op);
  // The loops of size > 1, in the order each operand holds them.
  auto order = [&](AffineMap map, SmallVectorImpl<int64_t> &loops) {
    for (AffineExpr e : map.getResults()) {
      auto d = dyn_cast<AffineDimExpr>(e);
      if (!d)
        return isa<AffineConstantExpr>(e);
      if (ranges[d.getPosition()] != 1)
        loops.push_back(d.getPosition());
    }
    return true;
  };
  SmallVector<int64_t> from, to;
  return order(in, from) && order(out, to) && from == to;
}

/// If `op` multiplies its one tensor input by a constant (or divides it by
/// one), elementwise: that factor.
std::optional<double> scaleFactorOf(linalg::LinalgOp op) {
  Operation *scalar = singleBodyOp(op);
  if (!scalar || numInits(op) != 1 || op.getNumReductionLoops() != 0 ||
      !isa<arith::MulFOp, arith::DivFOp>(scalar) ||
      !op.getMatchingIndexingMap(inputOperand(op, 0)).isIdentity() ||
      !op.getMatchingIndexingMap(initOperand(op, 0)).isIdentity())
    return std::nullopt;
  Body body{op, {}};
  Value data = op.getBlock()->getArgument(0);
  Value lhs = scalar->getOperand(0), rhs = scalar->getOperand(1);
  bool isDiv = isa<arith::DivFOp>(scalar);
  Value other = lhs == data ? rhs : (!isDiv && rhs == data ? lhs : Value());
  FloatAttr c = other ? constantValue(other, &body) : FloatAttr();
  if (!c || c.getValueAsDouble() == 0.0)
    return std::nullopt;
  return isDiv ? 1.0 / c.getValueAsDouble() : c.getValueAsDouble();
}

Value withoutScalarTensors(Value s) {
  while (auto extract = s.getDefiningOp<tensor::ExtractOp>()) {
    auto from = extract.getTensor().getDefiningOp<tensor::FromElementsOp>();
    if (!from || from.getElements().size() != 1)
      break;
    s = from.getElements().front();
  }
  return s;
}

std::optional<unsigned> identityOperand(Operation *op, const Body *body) {
  // (Not maxnumf/minnumf: maxnumf(NaN, -inf) is -inf, not the NaN.)
  if (op->getNumOperands() != 2 || op->getNumResults() != 1 ||
      !isa<arith::MaximumFOp, arith::MinimumFOp, arith::MulFOp, arith::DivFOp,
           arith::AddFOp, arith::SubFOp>(op))
    return std::nullopt;
  for (unsigned i = 0; i < 2; ++i) {
    FloatAttr c =
        constantValue(withoutScalarTensors(op->getOperand(1 - i)), body);
    if (!c)
      continue;
    APFloat v = c.getValue();
    bool rhs = i == 0;
    bool identity =
        (isa<arith::MaximumFOp>(op) && v.isInfinity() && v.isNegative()) ||
        (isa<arith::MinimumFOp>(op) && v.isInfinity() && !v.isNegative()) ||
        (isa<arith::MulFOp>(op) && v.isExactlyValue(1.0)) ||
        (isa<arith::DivFOp>(op) && rhs && v.isExactlyValue(1.0)) ||
        (isa<arith::AddFOp>(op) && v.isZero() && v.isNegative()) ||
        (isa<arith::SubFOp>(op) && rhs && v.isPosZero());
    if (identity)
      return i;
  }
  return std::nullopt;
}

Value withoutIntCasts(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
             arith::ExtUIOp, arith::TruncIOp>(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

bool isOpKind(Operation *op, RecipeOp kind) {
  switch (kind) {
  case RecipeOp::Neg:
    return isa<arith::NegFOp>(op);
  case RecipeOp::Exp:
    return isa<math::ExpOp>(op);
  case RecipeOp::Log:
    return isa<math::LogOp>(op);
  case RecipeOp::Tanh:
    return isa<math::TanhOp>(op);
  case RecipeOp::Erf:
    return isa<math::ErfOp>(op);
  case RecipeOp::Abs:
    return isa<math::AbsFOp>(op);
  case RecipeOp::Log1p:
    return isa<math::Log1pOp>(op);
  case RecipeOp::Expm1:
    return isa<math::ExpM1Op>(op);
  case RecipeOp::Add:
    return isa<arith::AddFOp>(op);
  case RecipeOp::Sub:
    return isa<arith::SubFOp>(op);
  case RecipeOp::Mul:
    return isa<arith::MulFOp>(op);
  case RecipeOp::Div:
    return isa<arith::DivFOp>(op);
  case RecipeOp::Max:
    return isa<arith::MaximumFOp, arith::MaxNumFOp>(op);
  case RecipeOp::Min:
    return isa<arith::MinimumFOp, arith::MinNumFOp>(op);
  default:
    return false;
  }
}

bool isCommutative(RecipeOp kind) {
  return kind == RecipeOp::Add || kind == RecipeOp::Mul ||
         kind == RecipeOp::Max || kind == RecipeOp::Min;
}

bool isScalarKind(RecipeOp kind) {
  return kind == RecipeOp::Param || kind == RecipeOp::Const ||
         kind == RecipeOp::DimSize || kind == RecipeOp::Splat;
}

/// The relative tolerance of a constant of `type` standing for an exact
/// value (1/n rounded to the type, say).
double toleranceOf(Type type) {
  auto f = dyn_cast<FloatType>(type);
  if (!f)
    return 0.0;
  return std::ldexp(1.0, -static_cast<int>(f.getFPMantissaWidth()) + 1);
}

/// The shortest decimal that rounds to the constant in its type, as a
/// double: a param written as 1e-5 and materialized as an f32 comes back as
/// 1e-5.
double shortestDecimal(FloatAttr attr) {
  double v = attr.getValueAsDouble();
  if (attr.getType().isF64() || !std::isfinite(v))
    return v;
  for (int digits = 1; digits <= 17; ++digits) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.*g", digits, v);
    FloatAttr back = FloatAttr::get(attr.getType(), std::strtod(text, nullptr));
    if (back.getValue().bitwiseIsEqual(attr.getValue()))
      return std::strtod(text, nullptr);
  }
  return v;
}


bool closeTo(double value, double expected, double tolerance) {
  if (value == expected)
    return true;
  return std::isfinite(expected) &&
         std::fabs(value - expected) <= tolerance * std::fabs(expected);
}


bool isNegInfOrLowest(FloatAttr c) {
  return c && c.getValue().isNegative() &&
         (c.getValue().isInfinity() || c.getValue().isLargest() ||
          c.getValueAsDouble() <= -1e30);
}


} // namespace mlir::fuel::match
