//===- Recipe.h - Fused-op recipes ------------------------------*- C++ -*-===//
//
// A recipe is the one definition of what a fused op computes, as a small DAG
// over a primitive vocabulary: elementwise arith/math, reductions along an
// axis, contractions, and a few positional primitives (rotate_half, the
// causal mask, sliding windows). Values live on named axes (a variadic
// batch axis stands for any number of leading dims), and broadcasting is by
// axis name, never by position. Decomposition instantiates a recipe as linalg
// on tensors in a normal form; fusion matches the same recipe against that form
// and the spellings frontends use for it.
//
// A recipe may cover only part of its op (`RecipeBuilder::unsupported`):
// such ops also have a hand-written decomposition for the rest.
//
// A recipe is written as a C++ function over RecipeBuilder and named in the
// op's record (FusedOps.td, `recipe`); `lookupRecipe` finds it from the
// generated table that binds ops to their recipe functions. It may read the
// op's params to choose its structure (`RecipeBuilder::intParam`); scalar
// params used as values are slots (`RecipeBuilder::param`).
//
//===----------------------------------------------------------------------===//

#ifndef FUELFUSED_RECIPES_RECIPE_H
#define FUELFUSED_RECIPES_RECIPE_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

#include <string>

namespace mlir {
namespace fuel {

struct FusedOpInfo;

enum class RecipeOp {
  // Leaves.
  Input,   ///< An operand of the fused op, on the given axes.
  Param,   ///< A scalar param slot (a float value).
  Const,   ///< A scalar constant.
  DimSize, ///< The size of an axis, as a float scalar.
  Splat,   ///< A constant broadcast to the axes of another value.
  // Elementwise (unary).
  Neg,
  Exp,
  Log,
  Sqrt,
  Rsqrt,
  Tanh,
  Erf,
  Abs,
  Log1p, ///< log(1 + x), accurate near 0.
  Expm1, ///< exp(x) - 1, accurate near 0.
  // Elementwise (binary).
  Add,
  Sub,
  Mul,
  Div,
  Max,
  Min,
  // x^n for an integer n (the node's `intValue`).
  Powi,
  // Reductions along one axis.
  ReduceSum,
  ReduceMax,
  // sum over one or more axes (`over`) of a * b.
  Contract,
  // x read through a sliding window along axis `index`: that axis becomes
  // an output axis o and a kernel axis k (`window`), x[..., o * stride + k -
  // padding, ...], 0 where that falls outside x. Stride and padding are
  // elements of integer-pair params.
  Window,
  // concat(-x[..., D/2:], x[..., :D/2]) along an axis.
  RotateHalf,
  // x where key j may be seen from query i (j <= i + Sk - Sq, the
  // bottom-right aligned causal mask), -inf elsewhere; `index` is the query
  // axis, `intValue` the key axis.
  CausalMask,
  // Positional primitives of a classification loss, reading an integer
  // input of targets (operands[1], on the value's axes) and an integer
  // param `param` (the ignore index):
  // x[..., t[...]] along axis `index` (the classes); a row whose target is
  // ignored may read any class (it is masked afterwards).
  Gather,
  // x where the target (operands[1]) is not ignored, 0 where it is.
  MaskIgnored,
  // The number of targets (operands[0]) that are not ignored, summed over
  // the batch axis: a float scalar.
  CountKept,
};

StringRef stringifyRecipeOp(RecipeOp op);

/// An axis of a recipe. Axis 0 of every recipe is the variadic batch axis
/// (zero or more leading dims of the inputs that carry it).
using RecipeAxis = unsigned;
constexpr RecipeAxis kBatchAxis = 0;

struct RecipeNode {
  RecipeOp op;
  SmallVector<unsigned> operands;
  /// The axes of the value, in layout order (empty for scalars).
  SmallVector<RecipeAxis> axes;
  /// Input: the operand index. Reduce/Contract/RotateHalf/DimSize/Window:
  /// the axis.
  unsigned index = 0;
  /// Contract: the axes summed over (`index` is the first).
  SmallVector<RecipeAxis> over;
  /// Window: the axes the windowed one becomes, and the params (pairs) and
  /// the element of them that give its stride and padding.
  struct WindowSpec {
    RecipeAxis out, kernel;
    std::string stride, padding;
    unsigned element;
  };
  std::optional<WindowSpec> window;
  /// Const: the value.
  double constant = 0.0;
  /// Powi: the exponent.
  int64_t intValue = 0;
  /// Param: the param name. Gather/MaskIgnored/CountKept: the ignore index.
  std::string param;

  bool isScalar() const { return axes.empty(); }
};

/// A built recipe: axes, nodes in topological order and the outputs.
struct Recipe {
  SmallVector<std::string> axisNames;
  SmallVector<RecipeNode, 0> nodes;
  SmallVector<unsigned> outputs;
  /// The op defines a row whose softmax inputs are all -inf as 0 (attention
  /// with a fully masked row): fusion may see through a frontend's guard
  /// that writes those zeros.
  bool zeroMaskedRows = false;
  /// A loss whose frontend ignores no target (JAX's): no target is compared
  /// with the ignore index, a mean divides by the number of targets, and the
  /// class read for a target may be computed from it by anything that is
  /// the identity on valid classes (a wrap of negative targets, a clamp)
  /// and guarded by a test that holds on them. The ignore index is then set
  /// to a value the targets' type cannot hold.
  bool noIgnoredTargets = false;
  /// A row max that is not finite may be replaced by 0 before it is used
  /// (JAX's logsumexp): equal on rows of finite values.
  bool finiteMaxGuard = false;
  /// Set when the recipe does not cover the op's params or operands (the
  /// op then decomposes by hand).
  std::string unsupported;
};

/// A handle on a recipe value.
struct RecipeValue {
  unsigned id = ~0u;
};

/// Builds a recipe. The params of the op being decomposed are available to
/// recipes whose structure depends on them.
class RecipeBuilder {
public:
  /// `op`: the op being decomposed, or null when the recipe is built to be
  /// matched (then optional operands are absent and params unset).
  RecipeBuilder(const FusedOpInfo &info, DictionaryAttr params,
                Operation *op = nullptr);

  const FusedOpInfo &info;

  /// The variadic batch axis and named axes.
  RecipeAxis batch() const { return kBatchAxis; }
  RecipeAxis axis(StringRef name);

  RecipeValue input(StringRef operandName, ArrayRef<RecipeAxis> axes);
  RecipeValue param(StringRef name);
  RecipeValue constant(double value);
  RecipeValue dimSize(RecipeAxis axis);
  /// `value` on the axes of `like` (not a function of `like`'s values).
  RecipeValue splat(double value, RecipeValue like);

  /// The value of an integer, bool or enum param, for recipes whose
  /// structure depends on it. A builder without params (building the recipe
  /// to match it) returns 1 and remembers that the recipe depends on params.
  int64_t intParam(StringRef name);
  bool readsIntParams() const { return readIntParams; }
  /// Whether every param `intParam` read is a bool or an enum (a choice
  /// among a few values): then the recipe has one structure per
  /// combination of them, which fusion tries in turn.
  bool readsOnlyChoiceParams() const { return onlyChoiceParams; }
  ArrayRef<std::string> choiceParamsRead() const { return choiceParams; }
  /// Whether a param is set (not left to its default).
  bool hasParam(StringRef name) const { return params && params.get(name); }
  /// The value of an integer param the recipe does not cover unless it has
  /// its default (the recipe reports `unsupported` otherwise); the default
  /// when matching (0 when probing without params). Unlike `intParam`, the
  /// recipe's structure does not depend on it.
  int64_t intParamOrDefault(StringRef name);
  /// Whether the op has the (optional) operand. When matching, each optional
  /// operand a recipe asks about is tried present and absent.
  bool hasOperand(StringRef name);
  ArrayRef<std::string> optionalOperandsRead() const { return optionalRead; }
  /// When matching: the optional operands to build the recipe with.
  void assumePresent(ArrayRef<std::string> names) {
    present.assign(names.begin(), names.end());
  }
  /// The type of an operand of the op; null when matching.
  Type operandType(StringRef name) const;
  /// The recipe does not cover this op (its params, operands or shapes).
  void unsupported(StringRef why) {
    if (recipe.unsupported.empty())
      recipe.unsupported = why.str();
  }
  void zeroMaskedRows() { recipe.zeroMaskedRows = true; }
  void noIgnoredTargets() { recipe.noIgnoredTargets = true; }
  void finiteMaxGuard() { recipe.finiteMaxGuard = true; }

  RecipeValue neg(RecipeValue x) { return unary(RecipeOp::Neg, x); }
  RecipeValue exp(RecipeValue x) { return unary(RecipeOp::Exp, x); }
  RecipeValue log(RecipeValue x) { return unary(RecipeOp::Log, x); }
  RecipeValue sqrt(RecipeValue x) { return unary(RecipeOp::Sqrt, x); }
  RecipeValue rsqrt(RecipeValue x) { return unary(RecipeOp::Rsqrt, x); }
  RecipeValue tanh(RecipeValue x) { return unary(RecipeOp::Tanh, x); }
  RecipeValue erf(RecipeValue x) { return unary(RecipeOp::Erf, x); }
  RecipeValue abs(RecipeValue x) { return unary(RecipeOp::Abs, x); }
  RecipeValue log1p(RecipeValue x) { return unary(RecipeOp::Log1p, x); }
  RecipeValue expm1(RecipeValue x) { return unary(RecipeOp::Expm1, x); }
  RecipeValue add(RecipeValue a, RecipeValue b) {
    return binary(RecipeOp::Add, a, b);
  }
  RecipeValue sub(RecipeValue a, RecipeValue b) {
    return binary(RecipeOp::Sub, a, b);
  }
  RecipeValue mul(RecipeValue a, RecipeValue b) {
    return binary(RecipeOp::Mul, a, b);
  }
  RecipeValue div(RecipeValue a, RecipeValue b) {
    return binary(RecipeOp::Div, a, b);
  }
  RecipeValue max(RecipeValue a, RecipeValue b) {
    return binary(RecipeOp::Max, a, b);
  }
  RecipeValue min(RecipeValue a, RecipeValue b) {
    return binary(RecipeOp::Min, a, b);
  }
  RecipeValue powi(RecipeValue x, int64_t exponent);
  RecipeValue reduceSum(RecipeValue x, RecipeAxis axis) {
    return reduce(RecipeOp::ReduceSum, x, axis);
  }
  RecipeValue reduceMax(RecipeValue x, RecipeAxis axis) {
    return reduce(RecipeOp::ReduceMax, x, axis);
  }
  /// mean over an axis: sum / size.
  RecipeValue mean(RecipeValue x, RecipeAxis axis) {
    return div(reduceSum(x, axis), dimSize(axis));
  }
  RecipeValue contract(RecipeValue a, RecipeValue b, RecipeAxis axis) {
    return contract(a, b, ArrayRef<RecipeAxis>{axis});
  }
  /// sum over `over` of a * b; the result on `layout` if given, else on a's
  /// remaining axes followed by b's.
  RecipeValue contract(RecipeValue a, RecipeValue b,
                       ArrayRef<RecipeAxis> over,
                       ArrayRef<RecipeAxis> layout = {});
  /// `x` through a sliding window along `axis` (see RecipeOp::Window): the
  /// axis is replaced by `out` and `kernel`, in that order.
  RecipeValue window(RecipeValue x, RecipeAxis axis, RecipeAxis out,
                     RecipeAxis kernel, StringRef strideParam,
                     StringRef paddingParam, unsigned element);
  RecipeValue rotateHalf(RecipeValue x, RecipeAxis axis);
  RecipeValue causalMask(RecipeValue x, RecipeAxis query, RecipeAxis key);
  /// x[..., targets[...]] along `axis`; `ignoreParam` names the ignore
  /// index (see RecipeOp::Gather).
  RecipeValue gather(RecipeValue x, RecipeValue targets, RecipeAxis axis,
                     StringRef ignoreParam);
  RecipeValue maskIgnored(RecipeValue x, RecipeValue targets,
                          StringRef ignoreParam);
  RecipeValue countKept(RecipeValue targets, StringRef ignoreParam);

  void output(RecipeValue v) { recipe.outputs.push_back(v.id); }

  Recipe take() { return std::move(recipe); }

private:
  RecipeValue unary(RecipeOp op, RecipeValue x);
  RecipeValue binary(RecipeOp op, RecipeValue a, RecipeValue b);
  RecipeValue reduce(RecipeOp op, RecipeValue x, RecipeAxis axis);
  RecipeValue push(RecipeNode node);
  const RecipeNode &node(RecipeValue v) const { return recipe.nodes[v.id]; }

  DictionaryAttr params;
  Operation *op;
  Recipe recipe;
  bool readIntParams = false;
  SmallVector<std::string> choiceParams;
  bool onlyChoiceParams = true;
  SmallVector<std::string> optionalRead;
  SmallVector<std::string> present;
};

/// A recipe function (named in the op's record, FusedOps.td `recipe`).
using RecipeFn = void (*)(RecipeBuilder &);

/// The function that builds `info`'s recipe; null when the op has none
/// (`info.recipeNote` says why).
RecipeFn lookupRecipe(const FusedOpInfo &info);

/// A formula equal to an op's recipe in exact arithmetic that rounds
/// otherwise: a frontend's spelling that fusion accepts only when asked
/// (`--fuel-fuse=value-changing`), since the fused op computes its own
/// definition.
struct ValueChangingForm {
  /// The op it computes.
  StringRef op;
  /// What it computes otherwise, for the docs and the near-miss report.
  StringRef description;
  RecipeFn recipe;
};

/// Every value-changing form, in the order fusion tries them.
ArrayRef<ValueChangingForm> getValueChangingForms();

} // namespace fuel
} // namespace mlir

#endif // FUELFUSED_RECIPES_RECIPE_H
