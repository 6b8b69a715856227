//===- Match.cpp - Matching recipes against the normal form ---------------===//
//
// The inverse of Instantiate.cpp: given a value, check that it is computed
// by an op's recipe in the normal form and recover the op's inputs and
// params. The match walks the recipe from its output backwards, checking
// each linalg.generic's iterators, indexing maps (against the recipe's
// axes) and scalar body op, and binding inputs and scalar param slots.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Decompose.h"
#include "FuelFused/FuelOps.h"
#include "FuelFused/Recipe.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace mlir::fuel;

namespace {

class Matcher {
public:
  Matcher(const FusedOpInfo &info, const Recipe &recipe)
      : info(info), recipe(recipe) {}

  LogicalResult match(Value root, RecipeMatch &out, std::string &why);
  unsigned numCovered() const {
    return llvm::SetVector<Operation *>(ops.begin(), ops.end()).size();
  }

private:
  LogicalResult fail(const Twine &msg) {
    if (why->empty())
      *why = msg.str();
    return failure();
  }
  SmallVector<unsigned> layout(const RecipeNode &n) const {
    SmallVector<unsigned> dims;
    for (RecipeAxis a : n.axes)
      llvm::append_range(dims, axisDims[a]);
    return dims;
  }
  LogicalResult matchTensor(unsigned node, Value v);
  LogicalResult matchScalar(unsigned node, Value v);
  /// The generic defining `v` (any of its results: a frontend may compute
  /// values nobody uses next to it, like torch's argmax beside a max).
  linalg::GenericOp genericOf(Value v, unsigned &result);
  linalg::GenericOp genericOf(Value v) {
    unsigned result;
    linalg::GenericOp g = genericOf(v, result);
    return g && g->getNumResults() == 1 ? g : linalg::GenericOp();
  }
  /// Operand dims (in concrete numbering) of input `i` of `g`, whose loops
  /// are `loops` (concrete dims); fails unless the map is a projection.
  FailureOr<SmallVector<unsigned>> operandDims(linalg::GenericOp g,
                                               unsigned i,
                                               ArrayRef<unsigned> loops);
  /// Matches the scalar body op `op` against elementwise node `n` whose
  /// tensor operands are the generic's inputs.
  LogicalResult matchBodyOperands(const RecipeNode &n, linalg::GenericOp g,
                                  Operation *op, ArrayRef<unsigned> loops);
  LogicalResult bindParam(StringRef name, Value scalar);

  const FusedOpInfo &info;
  const Recipe &recipe;
  std::string *why = nullptr;
  Type computeType;
  SmallVector<SmallVector<unsigned>> axisDims;
  DenseMap<unsigned, Value> inputs; // operand spec index -> value
  DenseMap<unsigned, Value> matched; // recipe node -> value
  llvm::StringMap<Attribute> params;
  SmallVector<Operation *> ops;
  SmallVector<std::tuple<Value, int64_t, unsigned>> dimChecks;
};

} // namespace

linalg::GenericOp Matcher::genericOf(Value v, unsigned &result) {
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g || g->getNumResults() != g.getNumDpsInits())
    return {};
  result = cast<OpResult>(v).getResultNumber();
  return g;
}

FailureOr<SmallVector<unsigned>>
Matcher::operandDims(linalg::GenericOp g, unsigned i,
                     ArrayRef<unsigned> loops) {
  AffineMap m = g.getIndexingMapsArray()[i];
  auto type = cast<ShapedType>(g->getOperand(i).getType());
  SmallVector<unsigned> dims;
  for (unsigned r = 0; r < m.getNumResults(); ++r) {
    AffineExpr e = m.getResult(r);
    if (auto d = dyn_cast<AffineDimExpr>(e)) {
      dims.push_back(loops[d.getPosition()]);
      continue;
    }
    // A size-1 dim kept by the frontend (keepdim) and read at 0.
    auto c = dyn_cast<AffineConstantExpr>(e);
    if (!c || c.getValue() != 0 || type.getDimSize(r) != 1)
      return failure();
  }
  return dims;
}

/// The single scalar op of a generic body (besides the yield), or null.
static Operation *singleBodyOp(linalg::GenericOp g) {
  Block &body = g.getRegion().front();
  if (body.getOperations().size() != 2)
    return nullptr;
  Operation *op = &body.front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (yield.getNumOperands() != 1 || yield.getOperand(0) != op->getResult(0))
    return nullptr;
  return op;
}

static bool isOpKind(Operation *op, RecipeOp kind) {
  switch (kind) {
  case RecipeOp::Neg:
    return isa<arith::NegFOp>(op);
  case RecipeOp::Exp:
    return isa<math::ExpOp>(op);
  case RecipeOp::Log:
    return isa<math::LogOp>(op);
  case RecipeOp::Sqrt:
    return isa<math::SqrtOp>(op);
  case RecipeOp::Rsqrt:
    return isa<math::RsqrtOp>(op);
  case RecipeOp::Tanh:
    return isa<math::TanhOp>(op);
  case RecipeOp::Add:
    return isa<arith::AddFOp>(op);
  case RecipeOp::Sub:
    return isa<arith::SubFOp>(op);
  case RecipeOp::Mul:
    return isa<arith::MulFOp>(op);
  case RecipeOp::Div:
    return isa<arith::DivFOp>(op);
  case RecipeOp::Max:
    return isa<arith::MaximumFOp>(op);
  default:
    return false;
  }
}

static bool isCommutative(RecipeOp kind) {
  return kind == RecipeOp::Add || kind == RecipeOp::Mul || kind == RecipeOp::Max;
}

/// The shortest decimal that rounds to the constant in its type, as a
/// double: a param written as 1e-5 and materialized as an f32 comes back as
/// 1e-5.
static double shortestDecimal(FloatAttr attr) {
  double v = attr.getValueAsDouble();
  if (!attr.getType().isF32() || !std::isfinite(v))
    return v;
  float f = static_cast<float>(v);
  for (int digits = 1; digits <= 9; ++digits) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.*g", digits, v);
    if (std::strtof(text, nullptr) == f)
      return std::strtod(text, nullptr);
  }
  return v;
}

LogicalResult Matcher::bindParam(StringRef name, Value scalar) {
  FloatAttr value;
  if (!matchPattern(scalar, m_Constant(&value)))
    return fail("param '" + name + "' is not a constant");
  const ParamSpec *spec = info.getParam(name);
  double v = value.getType().isF64() ? value.getValueAsDouble()
                                     : shortestDecimal(value);
  MLIRContext *ctx = scalar.getContext();
  Attribute attr;
  if (spec->kind == ParamKind::F64)
    attr = FloatAttr::get(Float64Type::get(ctx), v);
  else if (spec->kind == ParamKind::F32)
    attr = FloatAttr::get(Float32Type::get(ctx), v);
  else
    return fail("param '" + name + "' is not a float slot");
  auto it = params.find(name);
  if (it != params.end() && it->second != attr)
    return fail("param '" + name + "' has two different values");
  params[name] = attr;
  return success();
}

LogicalResult Matcher::matchScalar(unsigned id, Value v) {
  const RecipeNode &n = recipe.nodes[id];
  switch (n.op) {
  case RecipeOp::Param:
    return bindParam(n.param, v);
  case RecipeOp::Const: {
    FloatAttr c;
    if (!matchPattern(v, m_Constant(&c)) || c.getValueAsDouble() != n.constant)
      return fail("expected the constant " + std::to_string(n.constant));
    return success();
  }
  case RecipeOp::DimSize: {
    // uitofp(index_cast(tensor.dim(src, d))), or the folded constant.
    unsigned dim = axisDims[n.index].front();
    FloatAttr c;
    if (matchPattern(v, m_Constant(&c))) {
      dimChecks.push_back({Value(), static_cast<int64_t>(c.getValueAsDouble()),
                           dim});
      return success();
    }
    auto toFp = v.getDefiningOp<arith::UIToFPOp>();
    auto cast = toFp ? toFp.getIn().getDefiningOp<arith::IndexCastOp>()
                     : arith::IndexCastOp();
    auto dimOp = cast ? cast.getIn().getDefiningOp<tensor::DimOp>()
                      : tensor::DimOp();
    std::optional<int64_t> index = dimOp ? dimOp.getConstantIndex()
                                         : std::optional<int64_t>();
    if (!index)
      return fail("expected the size of an axis");
    dimChecks.push_back({dimOp.getSource(), *index, dim});
    return success();
  }
  default:
    return fail("expected a scalar");
  }
}

LogicalResult Matcher::matchBodyOperands(const RecipeNode &n,
                                         linalg::GenericOp g, Operation *op,
                                         ArrayRef<unsigned> loops) {
  Block &body = g.getRegion().front();
  auto tryOrder = [&](ArrayRef<unsigned> order) -> LogicalResult {
    std::string saved = *why;
    for (auto [i, operandId] : llvm::enumerate(order)) {
      Value arg = op->getOperand(i);
      const RecipeNode &on = recipe.nodes[operandId];
      auto blockArg = dyn_cast<BlockArgument>(arg);
      bool isInput = blockArg && blockArg.getOwner() == &body &&
                     blockArg.getArgNumber() < g.getNumDpsInputs();
      if (on.isScalar()) {
        if (blockArg && blockArg.getOwner() == &body)
          return fail("expected a scalar operand");
        if (failed(matchScalar(operandId, arg)))
          return failure();
        continue;
      }
      if (!isInput)
        return fail("expected a tensor operand");
      unsigned idx = blockArg.getArgNumber();
      FailureOr<SmallVector<unsigned>> dims = operandDims(g, idx, loops);
      if (failed(dims) || *dims != layout(on))
        return fail("an operand is not on the recipe's axes");
      if (failed(matchTensor(operandId, g.getDpsInputOperand(idx)->get())))
        return failure();
    }
    return success();
  };
  SmallVector<unsigned> order(n.operands.begin(), n.operands.end());
  if (order.size() != op->getNumOperands())
    return fail("operand count mismatch");
  // Matching may bind inputs and params: try the swapped order only on a
  // fresh copy of the state.
  auto inputsBefore = inputs;
  auto paramsBefore = params;
  auto matchedBefore = matched;
  size_t opsBefore = ops.size(), checksBefore = dimChecks.size();
  if (succeeded(tryOrder(order)))
    return success();
  if (!isCommutative(n.op) || order.size() != 2)
    return failure();
  inputs = inputsBefore;
  params = paramsBefore;
  matched = matchedBefore;
  ops.resize(opsBefore);
  dimChecks.resize(checksBefore);
  why->clear();
  std::swap(order[0], order[1]);
  return tryOrder(order);
}

LogicalResult Matcher::matchTensor(unsigned id, Value v) {
  // A node used twice by the recipe must be one value in the IR.
  auto seen = matched.find(id);
  if (seen != matched.end()) {
    if (seen->second != v)
      return fail("a recipe value is computed twice");
    return success();
  }
  matched[id] = v;
  const RecipeNode &n = recipe.nodes[id];
  SmallVector<unsigned> dims = layout(n);
  // Look through reshapes that only add size-1 dims (a keepdim reduction
  // result expanded for broadcasting).
  while (auto expand = v.getDefiningOp<tensor::ExpandShapeOp>()) {
    auto src = cast<RankedTensorType>(expand.getSrc().getType());
    auto dst = cast<RankedTensorType>(expand.getType());
    int64_t units = llvm::count(dst.getShape(), 1) - llvm::count(src.getShape(), 1);
    if (units != dst.getRank() - src.getRank())
      break;
    ops.push_back(expand);
    v = expand.getSrc();
  }
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type)
    return fail("expected a ranked tensor");

  if (n.op == RecipeOp::Input) {
    if (type.getRank() != static_cast<int64_t>(dims.size()))
      return fail("an input has the wrong rank");
    Value operand = v;
    // Float inputs computed in a wider type come through an extf generic.
    if (type.getElementType() == computeType) {
      if (linalg::GenericOp g = genericOf(v))
        if (Operation *op = singleBodyOp(g))
          if (isa<arith::ExtFOp>(op) && g.getNumDpsInputs() == 1 &&
              g.getIndexingMapsArray()[0].isIdentity()) {
            operand = g.getDpsInputOperand(0)->get();
            ops.push_back(g);
          }
    }
    auto it = inputs.find(n.index);
    if (it != inputs.end() && it->second != operand)
      return fail("an input is bound to two values");
    inputs[n.index] = operand;
    return success();
  }
  if (type.getElementType() != computeType)
    return fail("a value has the wrong element type");

  if (n.op == RecipeOp::RotateHalf) {
    auto concat = v.getDefiningOp<tensor::ConcatOp>();
    if (!concat || concat.getInputs().size() != 2)
      return fail("expected rotate_half's concat");
    auto lower = concat.getInputs()[1].getDefiningOp<tensor::ExtractSliceOp>();
    linalg::GenericOp neg = genericOf(concat.getInputs()[0]);
    Operation *negOp = neg ? singleBodyOp(neg) : nullptr;
    auto upper = negOp && isa<arith::NegFOp>(negOp)
                     ? neg.getDpsInputOperand(0)->get()
                           .getDefiningOp<tensor::ExtractSliceOp>()
                     : tensor::ExtractSliceOp();
    if (!lower || !upper || lower.getSource() != upper.getSource())
      return fail("expected rotate_half's halves");
    ops.append({concat, lower, neg, upper});
    return matchTensor(n.operands[0], lower.getSource());
  }

  unsigned k = 0;
  linalg::GenericOp g = genericOf(v, k);
  if (!g)
    return fail("expected a linalg.generic");
  ops.push_back(g);
  bool isReduction = n.op == RecipeOp::ReduceSum ||
                     n.op == RecipeOp::ReduceMax || n.op == RecipeOp::Contract;
  unsigned numInputs = g.getNumDpsInputs(), numLoops = g.getNumLoops();
  SmallVector<utils::IteratorType> iters = g.getIteratorTypesArray();
  // The loops: those the output map names carry the value's dims, in order
  // (a kept size-1 dim is written at 0); a reduction has one more loop.
  AffineMap outMap = g.getIndexingMapsArray()[numInputs + k];
  SmallVector<int64_t> loopDim(numLoops, -1);
  unsigned next = 0;
  for (unsigned r = 0; r < outMap.getNumResults(); ++r) {
    AffineExpr e = outMap.getResult(r);
    if (auto d = dyn_cast<AffineDimExpr>(e)) {
      if (next >= dims.size() || loopDim[d.getPosition()] != -1 ||
          iters[d.getPosition()] != utils::IteratorType::parallel)
        return fail("unexpected output map");
      loopDim[d.getPosition()] = dims[next++];
      continue;
    }
    auto c = dyn_cast<AffineConstantExpr>(e);
    if (!c || c.getValue() != 0 || type.getDimSize(r) != 1)
      return fail("unexpected output map");
  }
  if (next != dims.size())
    return fail("a value has the wrong rank");
  SmallVector<unsigned> reductionLoops;
  for (unsigned l = 0; l < numLoops; ++l)
    if (loopDim[l] == -1)
      reductionLoops.push_back(l);
  if (reductionLoops.size() != (isReduction ? 1u : 0u) ||
      (isReduction &&
       iters[reductionLoops.front()] != utils::IteratorType::reduction))
    return fail("wrong iterators");
  if (isReduction)
    loopDim[reductionLoops.front()] = axisDims[n.index].front();
  SmallVector<unsigned> loops(loopDim.begin(), loopDim.end());
  Block &body = g.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Value result = yield.getOperand(k);
  Operation *op = result.getDefiningOp();
  if (!op || op->getBlock() != &body)
    return fail("expected a scalar op in the body");
  auto inputArg = [&](Value x) -> std::optional<unsigned> {
    auto arg = dyn_cast<BlockArgument>(x);
    if (!arg || arg.getOwner() != &body || arg.getArgNumber() >= numInputs)
      return std::nullopt;
    return arg.getArgNumber();
  };
  auto matchInput = [&](unsigned node, unsigned input) -> LogicalResult {
    FailureOr<SmallVector<unsigned>> d = operandDims(g, input, loops);
    if (failed(d) || *d != layout(recipe.nodes[node]))
      return fail("an operand is not on the recipe's axes");
    return matchTensor(node, g.getDpsInputOperand(input)->get());
  };

  if (isReduction) {
    // init = fill(identity); body = combine(in, out) or out + a * b.
    auto fill = g.getDpsInitOperand(k)->get().getDefiningOp<linalg::FillOp>();
    FloatAttr init;
    double identity = n.op == RecipeOp::ReduceMax ? -INFINITY : 0.0;
    if (!fill || !matchPattern(fill.getInputs()[0], m_Constant(&init)) ||
        init.getValueAsDouble() != identity)
      return fail("a reduction does not start from its identity");
    ops.push_back(fill);
    Value out = body.getArgument(numInputs + k);
    if (n.op == RecipeOp::Contract) {
      auto add = dyn_cast<arith::AddFOp>(op);
      Value prod = add && add.getLhs() == out   ? add.getRhs()
                   : add && add.getRhs() == out ? add.getLhs()
                                                : Value();
      auto mul = prod ? prod.getDefiningOp<arith::MulFOp>() : arith::MulFOp();
      std::optional<unsigned> a = mul ? inputArg(mul.getLhs()) : std::nullopt;
      std::optional<unsigned> b = mul ? inputArg(mul.getRhs()) : std::nullopt;
      if (!a || !b)
        return fail("expected multiply-accumulate of two inputs");
      if (failed(matchInput(n.operands[0], *a)) ||
          failed(matchInput(n.operands[1], *b)))
        return failure();
      return success();
    }
    bool kindOk = n.op == RecipeOp::ReduceSum ? isa<arith::AddFOp>(op)
                                              : isa<arith::MaximumFOp>(op);
    if (!kindOk || op->getNumOperands() != 2 ||
        !llvm::is_contained(op->getOperands(), out))
      return fail("expected a reduction combiner");
    Value in = op->getOperand(0) == out ? op->getOperand(1) : op->getOperand(0);
    std::optional<unsigned> input = inputArg(in);
    if (!input)
      return fail("expected a reduction combiner");
    return matchInput(n.operands[0], *input);
  }

  if (n.op == RecipeOp::Powi)
    return fail("powi recipes depend on params");
  if (!isOpKind(op, n.op))
    return fail(Twine("expected ") + stringifyRecipeOp(n.op) + ", found " +
                op->getName().getStringRef());
  return matchBodyOperands(n, g, op, loops);
}

LogicalResult Matcher::match(Value root, RecipeMatch &out, std::string &w) {
  why = &w;
  if (recipe.outputs.size() != 1)
    return fail("multi-output recipes are not matched");
  const RecipeNode &outNode = recipe.nodes[recipe.outputs.front()];
  auto rootType = dyn_cast<RankedTensorType>(root.getType());
  if (!rootType)
    return fail("not a ranked tensor");
  // A low-precision result comes through a truncf generic.
  Value value = root;
  computeType = rootType.getElementType();
  if (linalg::GenericOp g = genericOf(root))
    if (Operation *op = singleBodyOp(g))
      if (isa<arith::TruncFOp>(op)) {
        value = g.getDpsInputOperand(0)->get();
        computeType = cast<ShapedType>(value.getType()).getElementType();
        ops.push_back(g);
      }
  if (!isa<FloatType>(computeType))
    return fail("not a float value");
  // Concrete dims: the batch takes what the output's named axes leave.
  int64_t named = llvm::count_if(outNode.axes,
                                 [](RecipeAxis a) { return a != kBatchAxis; });
  bool hasBatch = llvm::is_contained(outNode.axes, kBatchAxis);
  int64_t batch = rootType.getRank() - named;
  if (batch < 0 || (!hasBatch && batch != 0))
    return fail("the value's rank does not fit the recipe");
  axisDims.assign(recipe.axisNames.size(), {});
  unsigned next = 0;
  for (int64_t i = 0; i < batch; ++i)
    axisDims[kBatchAxis].push_back(next++);
  for (unsigned a = 1; a < recipe.axisNames.size(); ++a)
    axisDims[a].push_back(next++);
  if (failed(matchTensor(recipe.outputs.front(), value)))
    return failure();
  // Every input and every axis size must be bound consistently.
  for (unsigned i = 0; i < info.operands.size(); ++i)
    if (!info.operands[i].optional && !inputs.count(i))
      return fail("operand '" + info.operands[i].name + "' is not used");
  for (auto [src, index, dim] : dimChecks) {
    // The axis size: find an input that carries the dim.
    bool ok = false;
    for (const RecipeNode &n : recipe.nodes) {
      if (n.op != RecipeOp::Input)
        continue;
      Value in = inputs.lookup(n.index);
      SmallVector<unsigned> d = layout(n);
      auto pos = llvm::find(d, dim);
      if (pos == d.end())
        continue;
      int64_t p = pos - d.begin();
      if (src) {
        ok |= src == in && index == p;
      } else {
        int64_t size = cast<ShapedType>(in.getType()).getDimSize(p);
        ok |= !ShapedType::isDynamic(size) && size == index;
      }
    }
    if (!ok)
      return fail("an axis size does not match the inputs");
  }
  for (unsigned i = 0; i < info.operands.size(); ++i)
    out.inputs.push_back(inputs.lookup(i));
  for (auto &p : params)
    out.params.push_back(
        NamedAttribute(StringAttr::get(root.getContext(), p.getKey()), p.getValue()));
  llvm::SetVector<Operation *> unique(ops.begin(), ops.end());
  out.ops.assign(unique.begin(), unique.end());
  return success();
}

FailureOr<RecipeMatch> mlir::fuel::matchRecipe(const FusedOpInfo &info,
                                               Value root, std::string &why,
                                               unsigned *progress) {
  if (!info.recipe) {
    why = "the op has no recipe";
    return failure();
  }
  RecipeBuilder rb(info, DictionaryAttr());
  info.recipe(rb);
  if (rb.readsIntParams()) {
    why = "the recipe's structure depends on params";
    return failure();
  }
  Recipe recipe = rb.take();
  Matcher m(info, recipe);
  RecipeMatch result;
  LogicalResult matched = m.match(root, result, why);
  if (progress)
    *progress = m.numCovered();
  if (failed(matched))
    return failure();
  return result;
}
