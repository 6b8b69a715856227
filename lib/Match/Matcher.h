//===- Matcher.h - The recipe matcher (private) -----------------*- C++ -*-===//
//
// The matcher behind matchRecipe: it walks an op's recipe from its output
// backwards and checks that the IR computes each value, modulo the
// spellings frontends use. Match.cpp holds the walk, MatchEntry.cpp where a
// match starts and the checks once it is complete, MatchPositions.cpp the
// patterns read through indices and slices (rotate_half, causal masks, the
// fully-masked-row guard, sliding windows), MatchTargets.cpp those read
// through a loss's class targets, MatchProducts.cpp products in any
// association, MatchUtils.cpp the helpers they share.
//
//===----------------------------------------------------------------------===//

#ifndef FUEL_LIB_MATCH_MATCHER_H
#define FUEL_LIB_MATCH_MATCHER_H

#include "FuelFused/Match/Match.h"
#include "FuelFused/IR/FuelOps.h"
#include "FuelFused/Recipes/Recipe.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/SaveAndRestore.h"

#include <cmath>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <cstdio>
#include <cstdlib>

namespace mlir::fuel::match {

/// What the matcher looks for: a recipe value raised to a power, in quarters
/// (4 is the value itself). Powers let the spellings of one formula meet:
/// `x / sqrt(v)` is found as `x * rsqrt(v)`, `x * (1 / sqrt(v))`,
/// `x * pow(v, -0.5)` or a division, with the reciprocal in its own generic
/// or in the same body.
struct Want {
  unsigned node;
  int quarters = 4;
};

/// Marks a loop that carries a size-1 dim the recipe does not name.
constexpr int64_t kUnitLoop = -1;
constexpr int64_t kUnsetLoop = -2;

/// A structured op whose body is being matched, and the concrete dim each of
/// its loops iterates.
struct Body {
  mutable linalg::LinalgOp op;
  SmallVector<int64_t> loops;
  Block *block() const { return op.getBlock(); }
};

struct DimCheck {
  Value src; ///< The tensor.dim source, or null for a constant.
  int64_t index;
  unsigned dim;
  double value;     ///< The constant (when src is null).
  int quarters;     ///< The power of the size the constant stands for.
  double tolerance; ///< Relative, from the constant's type.
};

/// An integer index as a linear function of the concrete dims plus a
/// multiple of the row's target (a gather's offset into flattened values).
struct FlatIndex {
  std::map<int64_t, int64_t> coef;
  int64_t c = 0;
  int64_t target = 0;
  bool isConstant() const {
    return target == 0 &&
           llvm::all_of(coef, [](auto &p) { return p.second == 0; });
  }
};

class Matcher {
public:
  Matcher(const FusedOpInfo &info, const Recipe &recipe, bool explain = true)
      : info(info), recipe(recipe), explain(explain) {}

  /// Matches the recipe at `root`: a tensor, or a scalar of `inBody`'s body.
  /// `batchRank`: the number of batch dims, when the output does not carry
  /// the batch axis (a loss summed over it).
  /// `rootPerm`: the root holds the output's layout permuted (its dim i is
  /// the layout's dim rootPerm[i]); empty for the layout itself.
  /// `bodyLoops`: in a body, the loops the value lives on when not the
  /// op's whole (elementwise) iteration space.
  LogicalResult match(Value root, linalg::GenericOp inBody, RecipeMatch &out,
                      std::string &why, int64_t batchRank = 0,
                      ArrayRef<int64_t> rootPerm = {},
                      ArrayRef<unsigned> bodyLoops = {});
  /// How far the match went: the recipe values it found a computation of.
  unsigned numReached() const { return maxReached; }

private:
  /// Records why the match failed: the failure of the attempt that had
  /// found the most recipe values (the one a user wants to read about).
  LogicalResult fail(const Twine &msg) {
    if (!explain)
      return unexplained();
    if (why->empty() || st.reached.size() > whyDepth) {
      *why = msg.str() + where();
      whyDepth = st.reached.size();
    }
    return failure();
  }
  /// Where the match stopped, for a message: " (at <op>, <line>:<col>)".
  std::string where() const;
  /// The IR op the match is looking at (for where()).
  Operation *current = nullptr;
  /// A failure that also replaces one as deep: a product's verdict on its
  /// factors tells more than the failure of the product as written.
  LogicalResult failOverTies(const Twine &msg) {
    if (!explain)
      return unexplained();
    if (why->empty() || st.reached.size() >= whyDepth) {
      *why = msg.str() + where();
      whyDepth = st.reached.size();
    }
    return failure();
  }
  /// A failure of the whole match (after every value was found).
  LogicalResult failMatch(const Twine &msg) {
    if (!explain)
      return unexplained();
    *why = msg.str();
    return failure();
  }
  /// A failure when no one asked why (MatchOptions::explain).
  LogicalResult unexplained() {
    if (why->empty())
      *why = "no match";
    return failure();
  }
  /// Whether failures are explained: the callers that build a message
  /// before failing skip that when not.
  bool explain;
  void reach(unsigned node) {
    st.reached.insert(node);
    maxReached = std::max<unsigned>(maxReached, st.reached.size());
  }
  /// A run of consecutive concrete dims [a, b] that a value carries as one
  /// dim (batch dims a frontend collapsed for a batch matmul).
  static constexpr int64_t kGroupBase = int64_t(1) << 40;
  static int64_t groupCode(int64_t a, int64_t b) {
    return kGroupBase + a * (int64_t(1) << 20) + b;
  }
  static bool isGroup(int64_t d) { return d >= kGroupBase; }
  static std::pair<int64_t, int64_t> groupRange(int64_t d) {
    int64_t x = d - kGroupBase;
    return {x >> 20, x & ((int64_t(1) << 20) - 1)};
  }
  static SmallVector<int64_t> flatten(ArrayRef<int64_t> dims) {
    SmallVector<int64_t> flat;
    for (int64_t d : dims) {
      if (!isGroup(d)) {
        flat.push_back(d);
        continue;
      }
      auto [a, b] = groupRange(d);
      for (int64_t x = a; x <= b; ++x)
        flat.push_back(x);
    }
    return flat;
  }
  /// The dims of a reshape's source, given those of its result (one per
  /// result dim): merged dims become a group, a group split is unfolded.
  std::optional<SmallVector<int64_t>> throughReshape(Operation *view,
                                                     ArrayRef<int64_t> dims);
  /// `dims` without the concrete dims of size 1.
  SmallVector<int64_t> withoutUnitDims(ArrayRef<int64_t> dims) const {
    SmallVector<int64_t> kept;
    for (int64_t d : dims)
      if (d < 0 || d >= static_cast<int64_t>(unitDim.size()) || !unitDim[d])
        kept.push_back(d);
    return kept;
  }
  /// Whether two lists of concrete dims name the same dims, size-1 ones
  /// aside.
  bool sameDims(ArrayRef<int64_t> a, ArrayRef<int64_t> b) const {
    return a == b || withoutUnitDims(flatten(a)) == withoutUnitDims(flatten(b));
  }
  /// The dims of a value of `type` read on `dims`, which leave out some of
  /// `want`'s size-1 dims, with those put on the value's size-1 positions
  /// (which of them goes where does not matter: they hold one element);
  /// nullopt unless the value has `want`'s rank and the dims it is read on
  /// fit its sizes.
  std::optional<SmallVector<int64_t>>
  withUnitDimsOf(Type type, ArrayRef<int64_t> dims,
                 ArrayRef<int64_t> want) const {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || tensor.getRank() != static_cast<int64_t>(want.size()))
      return std::nullopt;
    auto isUnit = [&](int64_t d) {
      return d >= 0 && d < static_cast<int64_t>(unitDim.size()) && unitDim[d];
    };
    SmallVector<int64_t> nonUnit, unit;
    for (int64_t d : dims)
      (isUnit(d) ? unit : nonUnit).push_back(d);
    for (int64_t d : want) {
      if (llvm::is_contained(dims, d))
        continue;
      if (!isUnit(d))
        return std::nullopt;
      unit.push_back(d);
    }
    SmallVector<int64_t> full;
    unsigned u = 0, v = 0;
    for (int64_t size : tensor.getShape()) {
      if (size == 1 && u < unit.size())
        full.push_back(unit[u++]);
      else if (v < nonUnit.size())
        full.push_back(nonUnit[v++]);
      else
        return std::nullopt;
    }
    if (u != unit.size() || v != nonUnit.size())
      return std::nullopt;
    return full;
  }
  SmallVector<int64_t> layout(const RecipeNode &n) const {
    SmallVector<int64_t> dims;
    for (RecipeAxis a : n.axes)
      for (unsigned d : axisDims[a])
        dims.push_back(d);
    return dims;
  }
  /// Folds the recipe's own sqrt, rsqrt and 1/x into the wanted power.
  FailureOr<Want> normalize(Want w);
  /// `given`: the dims `v` carries, when not the recipe value's layout (a
  /// batch collapsed into one dim).
  LogicalResult matchTensor(Want w, Value v,
                            std::optional<SmallVector<int64_t>> given = {});
  LogicalResult matchScalar(Want w, Value s, const Body &body);
  /// `s` as a product of the factors of recipe product `w` (a Mul or Div),
  /// in any association and order (MatchProducts.cpp).
  LogicalResult matchProduct(Want w, Value s, const Body &body);
  /// Matches `w` against tensor `t` read on concrete `dims` (seeing
  /// through data movement to a tensor on the recipe value's own layout).
  LogicalResult matchRead(Want w, Value t, SmallVector<int64_t> dims);
  /// If `op` only moves data (a broadcast, a transpose, a copy) and its
  /// result `k` holds a value on `dims`: its input and the dims that input
  /// is read on.
  std::optional<std::pair<Value, SmallVector<int64_t>>>
  throughMove(linalg::LinalgOp op, unsigned k, ArrayRef<int64_t> dims);
  LogicalResult matchConstant(Want w, Value s, const Body *body);
  LogicalResult matchConstantAttr(Want w, FloatAttr c);
  /// `addend`: a recipe value the reduction accumulates onto (its init),
  /// for `sum + x` written as a reduction that starts from x.
  LogicalResult matchReduction(const RecipeNode &n, const Body &body,
                               unsigned result,
                               std::optional<unsigned> addend = {});
  LogicalResult matchRotateHalf(const RecipeNode &n, Value v);
  /// rotate_half in the body of the op that reads it: an scf.if that reads
  /// the two halves by index (indexedPieces).
  LogicalResult matchRotateHalfInBody(const RecipeNode &n, scf::IfOp branch,
                                      const Body &body);
  /// The halves of rotate_half: `first` the negated upper half and `second`
  /// the lower half of one value along `axis` (of the pieces, read on
  /// `dims` when given); `pieces` the ops that joined them.
  LogicalResult matchRotatedHalves(const RecipeNode &n, Value first,
                                   Value second, int64_t axis,
                                   ArrayRef<Operation *> pieces,
                                   std::optional<SmallVector<int64_t>> dims);
  LogicalResult matchCausalMask(Want w, Operation *op, const Body &body);
  /// `x`, an input of `body`, read through the window chain ending at
  /// `w.node`: the indexing map reads windowed dims at `o * stride + k`, the
  /// tensor is zero-padded (the padding) or not.
  LogicalResult matchWindow(Want w, Value x, const Body &body);
  LogicalResult bindIntElement(StringRef name, unsigned element,
                               int64_t value);
  /// Whether `c` (a bool in `body`) tells that a target is kept: a
  /// comparison of the targets (`targets`, a recipe input) with the ignore
  /// index (param `param`), maybe negated or computed in another op.
  /// `keptWhenTrue` says which way round.
  LogicalResult matchKept(Value c, const Body &body, unsigned targets,
                          StringRef param, bool &keptWhenTrue,
                          unsigned depth = 0);
  /// The arms of a select on whether a target is kept: (kept, ignored).
  FailureOr<std::pair<Value, Value>> keptAndIgnored(arith::SelectOp sel,
                                                    const Body &body,
                                                    unsigned targets,
                                                    StringRef param);
  /// `x` masked where the target is ignored: select(kept, x, 0).
  LogicalResult matchMaskIgnored(Want w, Operation *op, const Body &body);
  /// `x[..., t]`: a tensor.extract at the loops and the (safe) target.
  LogicalResult matchGather(Want w, Operation *op, const Body &body);
  /// The index a gather reads the class at: the target, or
  /// select(kept, target, c) (an ignored row reads class c).
  LogicalResult matchTargetIndex(const RecipeNode &n, Value index,
                                 const Body &body, unsigned depth = 0);
  /// The number of kept targets: a sum over the batch of kept ? 1 : 0 (as
  /// an extui or a select, in integers or floats, cast to float).
  LogicalResult matchCountKept(Want w, Value v);
  /// Where the recipe ignores no target (Recipe::noIgnoredTargets): integer
  /// `x` of `body` as a function of the row's target, checked on every
  /// class: the target itself (`isGuard` false: the class a gather reads),
  /// or true (a guard that holds on valid classes). The tensor the target
  /// is read from is bound to the recipe's targets.
  LogicalResult matchTargetFunction(const RecipeNode &n, Value x,
                                    const Body &body, bool isGuard);
  /// What a target function reads: the tensor of targets, the dims it is
  /// read on, and the elementwise ops computed from it on the way.
  struct TargetLeaf {
    Value tensor;
    SmallVector<int64_t> dims;
    llvm::SetVector<Operation *> ops;
  };
  /// Integer or bool `x` of `body` where the row's target is `t` (bools as
  /// 0 or 1, integers sign-extended from their width); nullopt for
  /// anything but integer arithmetic on the targets and constants.
  std::optional<int64_t> evalOfTarget(Value x, const Body &body, int64_t t,
                                      TargetLeaf &leaf, unsigned depth);
  /// The same for the element of tensor `v` read on `dims`.
  std::optional<int64_t> evalTensorOfTarget(Value v,
                                            ArrayRef<int64_t> dims,
                                            int64_t t, TargetLeaf &leaf,
                                            unsigned depth);
  /// Whether bool `c` (in `body`) tests that `x` is finite (|x| != inf),
  /// `x` read from the same tensor; the op computing `c` apart goes in
  /// `ops`.
  bool isFiniteTestOf(Value c, Value x, const Body &body,
                      SmallVectorImpl<Operation *> &ops);
  /// A gather from the values flattened (TOSA's): the extract's offset is
  /// row * V + target, in the layout of the value the reshapes flatten.
  LogicalResult matchFlatGather(Want w, tensor::ExtractOp extract,
                                const Body &body);
  /// The value of integer `x` in the body of `op`, its loops at `loopAt`
  /// (the row's target recognized through `gather`'s matchTargetIndex).
  std::optional<FlatIndex> evalFlat(Value x, linalg::LinalgOp op,
                                    ArrayRef<FlatIndex> loopAt,
                                    const RecipeNode &gather, unsigned depth);
  /// The element of integer tensor `t` at `at`: through reshapes,
  /// insert_slices, constants, elementwise ops and small sums.
  std::optional<FlatIndex> evalFlatTensor(Value t, ArrayRef<FlatIndex> at,
                                          const RecipeNode &gather,
                                          unsigned depth);
  /// Integer index arithmetic as a linear function of the concrete dims
  /// (linalg.index, iota constants, casts, +, -, * by a constant).
  struct Linear {
    std::map<int64_t, int64_t> coef;
    int64_t c = 0;
    /// Dynamic sizes: (tensor, dim) -> coefficient.
    std::map<std::pair<const void *, int64_t>, int64_t> sym;
  };
  /// A mask condition: `le` <= 0, or always true.
  struct Cond {
    bool always = false;
    Linear le;
  };
  /// If `x` is an input argument of `body`: the tensor it reads and the
  /// concrete dims it reads it on.
  std::optional<std::pair<Value, SmallVector<int64_t>>>
  readInput(Value x, const Body &body);
  /// The scalar an elementwise op yields for `t` and its body, the op's
  /// loops set from `dims` (the dims `t` is read on).
  std::optional<std::pair<Value, Body>>
  elementwiseProducer(Value t, ArrayRef<int64_t> dims);
  std::optional<Linear> evalIndex(Value x, const Body &body, unsigned depth);
  static Linear negated(Linear l);
  std::optional<Linear> evalIndexTensor(Value t, ArrayRef<int64_t> dims,
                                        unsigned depth);
  std::optional<Cond> evalCond(Value x, const Body &body, unsigned depth);
  /// Whether bool `x` (in `body`) is false everywhere.
  bool isFalse(Value x, const Body &body, unsigned depth);
  std::optional<Cond> evalCondTensor(Value t, ArrayRef<int64_t> dims,
                                     unsigned depth);
  /// `y` is 0 where the condition holds and -inf (or the lowest float)
  /// elsewhere: the visible condition.
  std::optional<Cond> evalMaskBias(Value y, const Body &body, unsigned depth);
  /// `c` (in `body`) is true where every score of the row is -inf; the
  /// scores are checked once the match is complete.
  LogicalResult matchMaskedRowGuard(Value c, const Body &body);
  LogicalResult matchIdentityInit(const RecipeNode &n, Value init,
                                  const Body &body, unsigned k);
  LogicalResult matchCombiner(const RecipeNode &n, const Body &body,
                              unsigned result);
  /// Matches `a` and `b` against the body values `x` and `y`, or, for a
  /// commutative op, `y` and `x`.
  LogicalResult matchPair(Want a, Want b, Value x, Value y, const Body &body,
                          bool commutative);
  /// The loops of `op` when its result `k` holds a value on `dims`, its
  /// reduction loops on `reductionDims` (in order).
  FailureOr<SmallVector<int64_t>> loopsOf(linalg::LinalgOp op, unsigned k,
                                          ArrayRef<int64_t> dims,
                                          ArrayRef<int64_t> reductionDims);
  /// Calls `fn` with the loops of `op`, whose result `k` holds reduction
  /// node `n` on `dims`, for each order its reduction loops may carry the
  /// node's reduced dims in, until `fn` succeeds (the state is restored
  /// after each failed try).
  LogicalResult withReductionLoops(const RecipeNode &n, linalg::LinalgOp op,
                                   unsigned k, ArrayRef<int64_t> dims,
                                   function_ref<LogicalResult(Body)> fn);
  /// The concrete dims input `i` of the body is read on (size-1 dims read
  /// at 0 or on unit loops are left out).
  FailureOr<SmallVector<int64_t>> operandDims(const Body &body, unsigned i);
  LogicalResult bindParam(StringRef name, FloatAttr value);
  LogicalResult bindInput(unsigned index, Value v, unsigned rank);
  bool isCastToSkip(Operation *op) const;

  const FusedOpInfo &info;
  const Recipe &recipe;
  std::string *why = nullptr;
  unsigned minWidth = 0;
  int64_t rootRank = 0;
  unsigned maxReached = 0;
  unsigned whyDepth = 0;
  SmallVector<SmallVector<unsigned>> axisDims;
  /// Concrete dims whose size is 1 (in the root's shape).
  SmallVector<bool> unitDim;
  /// While binding an input read in another layout: the permutation.
  SmallVector<int64_t> pendingPerm;

  /// What a match has bound so far; copied to try the other operand order
  /// of a commutative op.
  struct State {
    DenseMap<unsigned, Value> inputs; // operand spec index -> value
    DenseMap<unsigned, unsigned> inputRanks;
    llvm::StringMap<Attribute> params;
    /// Integer-pair params, element by element (a window's stride and
    /// padding).
    llvm::StringMap<SmallVector<std::optional<int64_t>, 2>> intParams;
    /// Inputs the op reads in another layout: operand = transpose(value,
    /// permutation).
    DenseMap<unsigned, SmallVector<int64_t>> inputPerms;
    std::set<std::tuple<unsigned, int, const void *>> done;
    SmallVector<Operation *> ops;
    SmallVector<Operation *> leafOps;
    SmallVector<DimCheck> dimChecks;
    llvm::SmallDenseSet<unsigned, 16> reached;
    /// Guards seen through: the recipe node and the value they test.
    SmallVector<std::pair<unsigned, Value>> guards;
    /// While matching a contraction's operands for `scale * (a . b)`: the
    /// constant factors taken off its inputs (the frontend put the scale on
    /// them, or its square root on both).
    bool collectingFactor = false;
    double factor = 1.0;
    /// A loss that ignores no target: the number of classes a gather reads
    /// from, and the constant a mean divides by.
    int64_t numClasses = 0;
    std::optional<double> countConstant;
    /// Causal masks seen: the query/key dims and the key offset they use.
    SmallVector<std::tuple<int64_t, int64_t, Linear>> causal;
  } st;
};


//===----------------------------------------------------------------------===//
// Helpers (MatchUtils.cpp)
//===----------------------------------------------------------------------===//

bool isUnitDim(Type t, int64_t pos);

/// The inputs and inits of a linalg op, counted without the interface's
/// accessors: those build the init range, and with it an operand-segment
/// attribute, on every call (a fifth of the matcher's time).
template <typename OpT>
unsigned numInputs(OpT op) {
  if (auto g = dyn_cast<linalg::GenericOp>(op.getOperation()))
    return g.getInputs().size();
  return linalg::LinalgOp(op.getOperation()).getNumDpsInputs();
}
template <typename OpT>
unsigned numInits(OpT op) {
  if (auto g = dyn_cast<linalg::GenericOp>(op.getOperation()))
    return g.getOutputs().size();
  return linalg::LinalgOp(op.getOperation()).getNumDpsInits();
}
template <typename OpT>
OpOperand *inputOperand(OpT op, unsigned i) {
  return &op->getOpOperand(i);
}
template <typename OpT>
OpOperand *initOperand(OpT op, unsigned k) {
  return &op->getOpOperand(numInputs(op) + k);
}
/// getStaticLoopRanges without concatenating the indexing maps: each loop's
/// size from the first static dim that reads it directly.
SmallVector<int64_t> staticLoopRanges(linalg::LinalgOp op);

/// The op that fills `t` with a scalar (its operand 0): linalg.fill, or its
/// generic form (a body that yields a scalar input), maybe reshaped.
Operation *fillOf(Value t);
/// The integer value of `v`: a constant, or (inside `body`) an input that is
/// a splat constant or a fill of one.
std::optional<int64_t> intConstant(Value v, const Body *body);
/// The float value of `s`: a constant, a float cast of one or of an integer
/// constant (intConstant), or (inside a
/// body) an input that is a splat constant or a fill of one.
FloatAttr constantValue(Value s, const Body *body);
/// The value every element of tensor `t` holds: a splat constant, a fill,
/// or an elementwise op of such (folded); null when it is not a constant.
FloatAttr constantTensorValue(Value t);
/// Whether an expand/collapse_shape only adds or drops size-1 dims.
bool isUnitReshape(Operation *op);
/// Where `op` is an expand_shape of a collapse_shape that together only add
/// or drop size-1 dims (StableHLO's reshape through a flat vector, as
/// [1, 4, 16, 1] -> [64] -> [1, 1, 4, 16]): the collapse_shape.
tensor::CollapseShapeOp unitReshapePairSource(Operation *op);
/// `t` without the reshapes that only add or drop size-1 dims, alone or in
/// pairs (unitReshapePairSource), collected in `views` when given.
Value withoutUnitReshapes(Value t,
                          SmallVectorImpl<Operation *> *views = nullptr);
/// The single scalar op of a body (besides the yield), or null.
Operation *singleBodyOp(linalg::LinalgOp op);
/// `v` without the elementwise generics that only cast their one input
/// (`isCast` tells which casts), collected in `ops`.
Value withoutCastGenerics(Value v, function_ref<bool(Operation *)> isCast,
                          SmallVectorImpl<Operation *> &ops);
/// Whether `op` only moves data (a broadcast, a transpose, a copy).
bool isDataMovement(linalg::LinalgOp op);
/// Whether `op` only moves size-1 dims: a data movement of as many elements
/// as it reads, its other dims in the same order (StableHLO's transposes of
/// a [1, 4, 16, 1] row statistic into [1, 1, 4, 16]), a reshape in effect.
bool isUnitDimMove(linalg::LinalgOp op);
/// Whether `op` only permutes its one input (a transpose, maybe moving
/// size-1 dims): a data movement of as many elements as it reads.
bool isPermutationCopy(linalg::LinalgOp op);
/// If `op` multiplies its one tensor input by a constant (or divides it by
/// one), elementwise: that factor.
std::optional<double> scaleFactorOf(linalg::LinalgOp op);
/// Scalar `s` without the round trips through 0-d tensors some lowerings
/// leave in bodies: tensor.extract(tensor.from_elements(x)) is x.
Value withoutScalarTensors(Value s);
/// If binary `op` returns one of its operands unchanged, the other being
/// that op's identity constant (maximumf with -inf, minimumf with +inf, a
/// multiply or a division by 1, an addition of -0 or a subtraction of +0),
/// NaNs included: that operand's index.
std::optional<unsigned> identityOperand(Operation *op, const Body *body);
/// `v` without integer casts (index casts, extensions, truncations).
Value withoutIntCasts(Value v);
bool isOpKind(Operation *op, RecipeOp kind);
bool isCommutative(RecipeOp kind);
bool isScalarKind(RecipeOp kind);
/// The relative tolerance of a constant of `type` standing for an exact
/// value.
double toleranceOf(Type type);
/// The shortest decimal that rounds to the constant in its type.
double shortestDecimal(FloatAttr attr);
bool closeTo(double value, double expected, double tolerance);
/// Whether `c` is a value a mask hides scores with: -inf, or a negative
/// value so large that exp of it less any score a row sees is 0 (the type's
/// lowest, or at most -1e30: JAX's -0.7 * FLT_MAX). On finite scores such a
/// mask computes what -inf does.
bool isNegInfOrLowest(FloatAttr c);

} // namespace mlir::fuel::match

#endif // FUEL_LIB_MATCH_MATCHER_H
