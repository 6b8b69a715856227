//===- Recipe.cpp - Building recipes --------------------------------------===//

#include "FuelFused/Recipes/Recipe.h"
#include "RecipeDecls.h"

#include "FuelFused/IR/FuelOps.h"
#include "FuelFused/IR/Registry.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::fuel;

namespace {
struct RecipeBinding {
  uint32_t id;
  RecipeFn recipe;
};
using namespace mlir::fuel::recipes;
#define GET_FUSED_OP_RECIPE_TABLE
#include "FusedOpRecipes.inc"
} // namespace

/// Builds the recipe of an op defined in IR (`fuel.recipe`) from its steps:
/// elementwise over the operands, which all lie on the batch axis.
static void buildRuntimeRecipe(RecipeBuilder &rb) {
  const RuntimeRecipe &recipe = *rb.info.runtimeRecipe;
  SmallVector<RecipeValue> values;
  for (unsigned i = 0; i < recipe.numOperands; ++i)
    values.push_back(rb.input(rb.info.operands[i].name, {rb.batch()}));
  for (const std::string &p : recipe.params)
    values.push_back(rb.param(p));
  for (const RuntimeRecipe::Step &step : recipe.steps) {
    auto arg = [&](unsigned i) { return values[step.operands[i]]; };
    StringRef op = step.op;
    RecipeValue v;
    if (op == "arith.constant")
      v = rb.constant(step.constant);
    else if (op == "arith.addf")
      v = rb.add(arg(0), arg(1));
    else if (op == "arith.subf")
      v = rb.sub(arg(0), arg(1));
    else if (op == "arith.mulf")
      v = rb.mul(arg(0), arg(1));
    else if (op == "arith.divf")
      v = rb.div(arg(0), arg(1));
    else if (op == "arith.maximumf")
      v = rb.max(arg(0), arg(1));
    else if (op == "arith.negf")
      v = rb.neg(arg(0));
    else if (op == "math.exp")
      v = rb.exp(arg(0));
    else if (op == "math.log")
      v = rb.log(arg(0));
    else if (op == "math.sqrt")
      v = rb.sqrt(arg(0));
    else if (op == "math.rsqrt")
      v = rb.rsqrt(arg(0));
    else if (op == "math.tanh")
      v = rb.tanh(arg(0));
    else if (op == "math.erf")
      v = rb.erf(arg(0));
    else if (op == "math.absf")
      v = rb.abs(arg(0));
    else if (op == "math.log1p")
      v = rb.log1p(arg(0));
    else if (op == "math.expm1")
      v = rb.expm1(arg(0));
    else if (op == "arith.minimumf")
      v = rb.min(arg(0), arg(1));
    else
      llvm_unreachable("fuel.recipe's verifier admits only recipe steps");
    values.push_back(v);
  }
  rb.output(values[recipe.result]);
}

RecipeFn mlir::fuel::lookupRecipe(const FusedOpInfo &info) {
  if (!info.hasRecipe)
    return nullptr;
  if (info.runtimeRecipe)
    return buildRuntimeRecipe;
  const RecipeBinding *it = llvm::lower_bound(
      recipeTable, info.id,
      [](const RecipeBinding &b, uint32_t id) { return b.id < id; });
  return it != std::end(recipeTable) && it->id == info.id ? it->recipe
                                                         : nullptr;
}

ArrayRef<ValueChangingForm> mlir::fuel::getValueChangingForms() {
  static const ValueChangingForm forms[] = {
      {"layer_norm_last_dim",
       "the variance as mean(x^2) - mean(x)^2 (jax.nn.standardize)",
       recipes::layerNormLastDimOneSweep},
      {"layer_norm_last_dim",
       "the variance as max(0, mean(x^2) - mean(x)^2) (Flax's LayerNorm)",
       recipes::layerNormLastDimOneSweepClamped},
      {"fused_softmax_cross_entropy",
       "the loss as logsumexp(x) - x[t], no target ignored (optax's "
       "softmax_cross_entropy_with_integer_labels)",
       recipes::softmaxCrossEntropyLogSumExp},
  };
  return forms;
}

StringRef mlir::fuel::stringifyRecipeOp(RecipeOp op) {
  switch (op) {
  case RecipeOp::Input:
    return "input";
  case RecipeOp::Param:
    return "param";
  case RecipeOp::Const:
    return "const";
  case RecipeOp::DimSize:
    return "dim_size";
  case RecipeOp::Splat:
    return "splat";
  case RecipeOp::Neg:
    return "neg";
  case RecipeOp::Exp:
    return "exp";
  case RecipeOp::Log:
    return "log";
  case RecipeOp::Sqrt:
    return "sqrt";
  case RecipeOp::Rsqrt:
    return "rsqrt";
  case RecipeOp::Tanh:
    return "tanh";
  case RecipeOp::Erf:
    return "erf";
  case RecipeOp::Abs:
    return "abs";
  case RecipeOp::Log1p:
    return "log1p";
  case RecipeOp::Expm1:
    return "expm1";
  case RecipeOp::Add:
    return "add";
  case RecipeOp::Sub:
    return "sub";
  case RecipeOp::Mul:
    return "mul";
  case RecipeOp::Div:
    return "div";
  case RecipeOp::Max:
    return "max";
  case RecipeOp::Min:
    return "min";
  case RecipeOp::Powi:
    return "powi";
  case RecipeOp::ReduceSum:
    return "reduce_sum";
  case RecipeOp::ReduceMax:
    return "reduce_max";
  case RecipeOp::Contract:
    return "contract";
  case RecipeOp::RotateHalf:
    return "rotate_half";
  case RecipeOp::CausalMask:
    return "causal_mask";
  case RecipeOp::Window:
    return "window";
  case RecipeOp::Gather:
    return "gather";
  case RecipeOp::MaskIgnored:
    return "mask_ignored";
  case RecipeOp::CountKept:
    return "count_kept";
  }
  llvm_unreachable("unknown recipe op");
}


RecipeBuilder::RecipeBuilder(const FusedOpInfo &info, DictionaryAttr params,
                             Operation *op)
    : info(info), params(params), op(op) {
  recipe.axisNames.push_back("...");
}

bool RecipeBuilder::hasOperand(StringRef name) {
  if (auto fused = dyn_cast_or_null<FusedOp>(op))
    return static_cast<bool>(fused.getOperandNamed(name));
  if (!llvm::is_contained(optionalRead, name.str()))
    optionalRead.push_back(name.str());
  return llvm::is_contained(present, name.str());
}

int64_t RecipeBuilder::intParamOrDefault(StringRef name) {
  const ParamSpec *spec = info.getParam(name);
  assert(spec && spec->hasDefault() && "intParamOrDefault of a param "
                                       "without default");
  // Probing the structure without params: the value does not matter.
  if (!params)
    return 0;
  Attribute attr = params.get(name);
  if (!attr)
    attr = spec->getDefault(params.getContext());
  return cast<IntegerAttr>(attr).getInt();
}

Type RecipeBuilder::operandType(StringRef name) const {
  auto fused = dyn_cast_or_null<FusedOp>(op);
  Value v = fused ? fused.getOperandNamed(name) : Value();
  return v ? v.getType() : Type();
}

RecipeAxis RecipeBuilder::axis(StringRef name) {
  for (auto [i, n] : llvm::enumerate(recipe.axisNames))
    if (n == name)
      return i;
  recipe.axisNames.push_back(name.str());
  return recipe.axisNames.size() - 1;
}

RecipeValue RecipeBuilder::push(RecipeNode node) {
  recipe.nodes.push_back(std::move(node));
  return RecipeValue{static_cast<unsigned>(recipe.nodes.size() - 1)};
}

RecipeValue RecipeBuilder::input(StringRef operandName,
                                 ArrayRef<RecipeAxis> axes) {
  RecipeNode n{RecipeOp::Input, {}, SmallVector<RecipeAxis>(axes)};
  unsigned index = ~0u;
  for (auto [i, spec] : llvm::enumerate(info.operands))
    if (spec.name == operandName)
      index = i;
  assert(index != ~0u && "recipe names an operand its op does not have");
  n.index = index;
  return push(std::move(n));
}

RecipeValue RecipeBuilder::param(StringRef name) {
  assert(info.getParam(name) && "recipe names a param its op does not have");
  RecipeNode n{RecipeOp::Param, {}, {}};
  n.param = name.str();
  return push(std::move(n));
}

RecipeValue RecipeBuilder::constant(double value) {
  RecipeNode n{RecipeOp::Const, {}, {}};
  n.constant = value;
  return push(std::move(n));
}

RecipeValue RecipeBuilder::splat(double value, RecipeValue like) {
  RecipeNode n{RecipeOp::Splat, {}, node(like).axes};
  n.constant = value;
  return push(std::move(n));
}

RecipeValue RecipeBuilder::dimSize(RecipeAxis a) {
  RecipeNode n{RecipeOp::DimSize, {}, {}};
  n.index = a;
  return push(std::move(n));
}

int64_t RecipeBuilder::intParam(StringRef name) {
  readIntParams = true;
  const ParamSpec *spec = info.getParam(name);
  bool choice = spec && (spec->kind == ParamKind::Bool ||
                         spec->kind == ParamKind::Reduction);
  if (!choice)
    onlyChoiceParams = false;
  else if (!llvm::is_contained(choiceParams, name.str()))
    choiceParams.push_back(name.str());
  if (!params)
    return 1;
  Attribute attr = params.get(name);
  if (!attr) {
    assert(spec && spec->hasDefault() && "intParam of an unset param");
    attr = spec->getDefault(params.getContext());
  }
  if (auto b = dyn_cast<BoolAttr>(attr))
    return b.getValue();
  if (auto r = dyn_cast<ReductionAttr>(attr))
    return static_cast<int64_t>(r.getValue());
  return cast<IntegerAttr>(attr).getInt();
}

RecipeValue RecipeBuilder::unary(RecipeOp op, RecipeValue x) {
  return push(RecipeNode{op, {x.id}, node(x).axes});
}

RecipeValue RecipeBuilder::binary(RecipeOp op, RecipeValue a, RecipeValue b) {
  // The result lives on the union of the axes: the layout of the operand
  // that has them all, else a's axes followed by b's others.
  const auto &ax = node(a).axes, &bx = node(b).axes;
  SmallVector<RecipeAxis> axes;
  if (llvm::all_of(bx, [&](RecipeAxis x) { return llvm::is_contained(ax, x); }))
    axes = ax;
  else if (llvm::all_of(
               ax, [&](RecipeAxis x) { return llvm::is_contained(bx, x); }))
    axes = bx;
  else {
    axes = ax;
    for (RecipeAxis x : bx)
      if (!llvm::is_contained(axes, x))
        axes.push_back(x);
  }
  return push(RecipeNode{op, {a.id, b.id}, axes});
}

RecipeValue RecipeBuilder::powi(RecipeValue x, int64_t exponent) {
  RecipeNode n{RecipeOp::Powi, {x.id}, node(x).axes};
  n.intValue = exponent;
  return push(std::move(n));
}

RecipeValue RecipeBuilder::reduce(RecipeOp op, RecipeValue x, RecipeAxis a) {
  assert(llvm::is_contained(node(x).axes, a) && "reducing a missing axis");
  SmallVector<RecipeAxis> axes;
  for (RecipeAxis y : node(x).axes)
    if (y != a)
      axes.push_back(y);
  RecipeNode n{op, {x.id}, axes};
  n.index = a;
  return push(std::move(n));
}

RecipeValue RecipeBuilder::contract(RecipeValue a, RecipeValue b,
                                    ArrayRef<RecipeAxis> over,
                                    ArrayRef<RecipeAxis> layout) {
  assert(!over.empty() && "a contraction sums over at least one axis");
  SmallVector<RecipeAxis> axes;
  for (RecipeAxis y : node(a).axes)
    if (!llvm::is_contained(over, y))
      axes.push_back(y);
  for (RecipeAxis y : node(b).axes)
    if (!llvm::is_contained(over, y) && !llvm::is_contained(axes, y))
      axes.push_back(y);
  if (!layout.empty()) {
    assert(layout.size() == axes.size() &&
           llvm::all_of(layout,
                        [&](RecipeAxis y) {
                          return llvm::is_contained(axes, y);
                        }) &&
           "a contraction's layout must permute its axes");
    axes.assign(layout.begin(), layout.end());
  }
  RecipeNode n{RecipeOp::Contract, {a.id, b.id}, axes};
  n.index = over.front();
  n.over.assign(over.begin(), over.end());
  return push(std::move(n));
}

RecipeValue RecipeBuilder::window(RecipeValue x, RecipeAxis axis,
                                  RecipeAxis out, RecipeAxis kernel,
                                  StringRef strideParam,
                                  StringRef paddingParam, unsigned element) {
  assert(llvm::is_contained(node(x).axes, axis) && "windowing a missing axis");
  assert(info.getParam(strideParam) && info.getParam(paddingParam) &&
         "a window's params must be params of the op");
  SmallVector<RecipeAxis> axes;
  for (RecipeAxis y : node(x).axes) {
    if (y != axis) {
      axes.push_back(y);
      continue;
    }
    axes.push_back(out);
    axes.push_back(kernel);
  }
  RecipeNode n{RecipeOp::Window, {x.id}, axes};
  n.index = axis;
  n.window = RecipeNode::WindowSpec{out, kernel, strideParam.str(),
                                    paddingParam.str(), element};
  return push(std::move(n));
}

RecipeValue RecipeBuilder::causalMask(RecipeValue x, RecipeAxis query,
                                      RecipeAxis key) {
  assert(llvm::is_contained(node(x).axes, query) &&
         llvm::is_contained(node(x).axes, key) && "masking missing axes");
  RecipeNode n{RecipeOp::CausalMask, {x.id}, node(x).axes};
  n.index = query;
  n.intValue = key;
  return push(std::move(n));
}

RecipeValue RecipeBuilder::rotateHalf(RecipeValue x, RecipeAxis a) {
  RecipeNode n{RecipeOp::RotateHalf, {x.id}, node(x).axes};
  n.index = a;
  return push(std::move(n));
}

RecipeValue RecipeBuilder::gather(RecipeValue x, RecipeValue targets,
                                  RecipeAxis axis, StringRef ignoreParam) {
  assert(llvm::is_contained(node(x).axes, axis) && "gathering a missing axis");
  assert(info.getParam(ignoreParam) && "the ignore index must be a param");
  SmallVector<RecipeAxis> axes;
  for (RecipeAxis y : node(x).axes)
    if (y != axis)
      axes.push_back(y);
  assert(axes == node(targets).axes && "targets index the other axes");
  RecipeNode n{RecipeOp::Gather, {x.id, targets.id}, axes};
  n.index = axis;
  n.param = ignoreParam.str();
  return push(std::move(n));
}

RecipeValue RecipeBuilder::maskIgnored(RecipeValue x, RecipeValue targets,
                                       StringRef ignoreParam) {
  assert(node(x).axes == node(targets).axes && "targets shaped like x");
  assert(info.getParam(ignoreParam) && "the ignore index must be a param");
  RecipeNode n{RecipeOp::MaskIgnored, {x.id, targets.id}, node(x).axes};
  n.param = ignoreParam.str();
  return push(std::move(n));
}

RecipeValue RecipeBuilder::countKept(RecipeValue targets,
                                     StringRef ignoreParam) {
  assert(info.getParam(ignoreParam) && "the ignore index must be a param");
  RecipeNode n{RecipeOp::CountKept, {targets.id}, {}};
  n.index = kBatchAxis;
  n.param = ignoreParam.str();
  return push(std::move(n));
}
