//===- GpuQuantized.cpp - The quantized matmuls on a GPU ------------------===//
//
// qmatmul (every GGML type), nf4_matmul and awq_matmul with few rows of
// activations (decode) on a GPU: a block per output element (row m of the
// activations, column n of the weight), the K products split over the
// block's T threads in chunks of up to 8 consecutive k: thread t takes
// chunks t, t + T, ... (a warp's loads of activations and of quantized
// words are consecutive), reads a chunk's activations at once (ChunkReads:
// 16-byte vectors), decodes each weight where it reads it, in registers,
// and keeps its partial sum; the partials are combined across the block by
// `gpu.all_reduce`. What a chunk's weights share (a quant block's scale)
// is the same index arithmetic on consecutive k, which LLVM folds and reads
// once. The [N, K] f32 weight
// the decomposition materializes never exists: each quantized byte is read
// once per row of activations, from global memory or the cache.
//
// The decoding is the decomposition's own: the contraction's body, and the
// body of the elementwise op that dequantizes the weight, are evaluated at
// the thread's (m, n, k) (PointEvaluator), so every quant type
// the decomposition knows is scheduled, with its exact arithmetic. More
// rows (prefill) stage the activations and the decoded weight in shared
// memory per block tile and step along K (GpuStaged.h) where M and N are
// multiples of 32 and K of 8, else take the contraction schedule's block
// and thread tiles (GpuContraction.cpp) with the dequantization fused into
// each thread's reduction steps.
//
//===----------------------------------------------------------------------===//

#include "GpuBlockLoops.h"
#include "GpuSchedules.h"
#include "GpuStaged.h"

#include "FuelFused/IR/FuelOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::fuel;

/// Rows of activations a block-per-output schedule takes at most: each row
/// decodes the whole weight again.
static constexpr int64_t kMaxRows = 16;
/// Consecutive k a thread of the block-per-output schedule takes at a time
/// (at most).
static constexpr int64_t kChunk = 8;

LogicalResult mlir::fuel::canScheduleGpuQuantized(
    FusedOp op, const GpuScheduleOptions &options, std::string &why) {
  auto act = cast<RankedTensorType>(op->getOperand(0).getType());
  auto out = cast<RankedTensorType>(op->getResult(0).getType());
  Type elt = act.getElementType();
  if ((!elt.isF32() && !elt.isF16() && !elt.isBF16()) ||
      !out.getElementType().isF32()) {
    why = "the GPU quantized schedule handles f32, f16 and bf16 activations "
          "and an f32 result";
    return failure();
  }
  int64_t rows = act.getNumElements() / act.getShape().back();
  int64_t n = out.getShape().back();
  if (rows > kMaxRows && (act.getRank() != 2 || rows % 4 != 0 || n % 4 != 0)) {
    why = "the GPU quantized schedule takes up to " +
          std::to_string(kMaxRows) +
          " rows of activations, or a 2-d matrix of them with rows and "
          "columns multiples of 4 (got " +
          std::to_string(rows) + " x " + std::to_string(n) + ")";
    return failure();
  }
  return success();
}

namespace {
/// The reads of a chunk of consecutive k (kBase, ..., kBase + width - 1,
/// `ks` their index values; kBase a multiple of width): an element of a
/// tensor whose last index is one of `ks` comes from one vector read of the
/// chunk at kBase, in pieces of at most 16 bytes (one aligned load each
/// once fuel-gpu-align-vector-accesses has run), shared by the chunk's
/// points. So does one whose last index is one of `ks` floor-divided by a
/// power of two c dividing width (values packed c to an element along k,
/// as nf4's two 4-bit codes a byte): element j / c of the read of
/// width / c elements at kBase / c.
struct ChunkReads {
  Value kBase;
  SmallVector<Value> ks;
  /// A tensor's chunk read at some leading indices, in pieces.
  struct Read {
    Value tensor;
    SmallVector<Value> leading;
    int64_t packing;
    SmallVector<Value> pieces;
  };
  SmallVector<Read> reads;

  /// The element at `indices` of `tensor` where its last index is one of
  /// `ks` (or one of them floor-divided, see above), else null.
  Value element(OpBuilder &b, Location loc, Value tensor,
                ValueRange indices) {
    if (indices.empty())
      return Value();
    Value last = indices.back();
    int64_t packing = 1;
    if (auto apply = last.getDefiningOp<affine::AffineApplyOp>()) {
      AffineMap map = apply.getAffineMap();
      auto div = dyn_cast<AffineBinaryOpExpr>(map.getResult(0));
      auto dim = div ? dyn_cast<AffineDimExpr>(div.getLHS()) : nullptr;
      auto c = div ? dyn_cast<AffineConstantExpr>(div.getRHS()) : nullptr;
      int64_t width = ks.size();
      if (div && div.getKind() == AffineExprKind::FloorDiv && dim && c &&
          c.getValue() > 1 && llvm::isPowerOf2_64(c.getValue()) &&
          width % c.getValue() == 0 &&
          map.getNumSymbols() == 0) {
        last = apply.getMapOperands()[dim.getPosition()];
        packing = c.getValue();
      }
    }
    auto at = llvm::find(ks, last);
    if (at == ks.end())
      return Value();
    int64_t j = (at - ks.begin()) / packing,
            width = static_cast<int64_t>(ks.size()) / packing;
    Type elt = cast<RankedTensorType>(tensor.getType()).getElementType();
    int64_t piece = std::min<int64_t>(
        width, std::max<int64_t>(1, 128 / elt.getIntOrFloatBitWidth()));
    SmallVector<Value> leading(indices.drop_back());
    auto known = llvm::find_if(reads, [&](const Read &r) {
      return r.tensor == tensor && r.leading == leading &&
             r.packing == packing;
    });
    if (known == reads.end()) {
      reads.push_back({tensor, leading, packing, {}});
      known = std::prev(reads.end());
    }
    SmallVector<Value> &read = known->pieces;
    if (read.empty()) {
      Value pad = ub::PoisonOp::create(b, loc, elt);
      // (A shift, whose known trailing zeros the alignment pass counts.)
      Value base =
          packing == 1
              ? kBase
              : arith::ShRUIOp::create(
                    b, loc, kBase,
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
        read.push_back(vector::TransferReadOp::create(
            b, loc, VectorType::get({piece}, elt), tensor, from, pad,
            ArrayRef<bool>{true}));
      }
    }
    return vector::ExtractOp::create(b, loc, read[j / piece], j % piece);
  }
};

/// Evaluates the linalg ops of a decomposition at one point of their
/// iteration space, as scalar code at the builder's insertion point.
class PointEvaluator {
public:
  PointEvaluator(OpBuilder &b, Location loc,
                 const llvm::SmallPtrSetImpl<Operation *> &decomposition,
                 ChunkReads *chunk = nullptr)
      : b(b), loc(loc), decomposition(decomposition), chunk(chunk) {}

  /// The element of `value` at `indices`: a fill's value, the producer's
  /// body evaluated there where the decomposition computes `value`
  /// elementwise, else a tensor.extract (or the chunk's read of it).
  Value element(Value value, ValueRange indices) {
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

  /// `wanted` (a value of `op`'s body that does not depend on the output's
  /// block argument) at loop indices `ivs`: the body ops it depends on
  /// cloned, the inputs' block arguments their elements at `ivs`, the
  /// linalg.index ops the indices.
  Value valueAt(linalg::GenericOp op, ValueRange ivs, Value wanted) {
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

private:
  /// Whether `op` (a decomposition op) can be evaluated at any point: one
  /// result, parallel, a permutation as output map, a flat body that does
  /// not read the output.
  bool isElementwise(linalg::GenericOp op) const {
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

  /// `map`'s results at `ivs`.
  SmallVector<Value> apply(AffineMap map, ValueRange ivs) {
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

  OpBuilder &b;
  Location loc;
  const llvm::SmallPtrSetImpl<Operation *> &decomposition;
  ChunkReads *chunk;
};
} // namespace

/// The term a quantized matmul's last step (`op`: one result, its last loop
/// the one reduction, the output indexed by the other loops in order) adds
/// to the output's element: the body yields `acc + term`, `term` not
/// reading `acc`.
static FailureOr<Value> summedTerm(linalg::GenericOp op) {
  unsigned loops = op.getNumLoops();
  SmallVector<AffineExpr> outer;
  for (unsigned d = 0; d + 1 < loops; ++d)
    outer.push_back(getAffineDimExpr(d, op.getContext()));
  if (op->getNumResults() != 1 || op.getNumReductionLoops() != 1 ||
      op.getIteratorTypesArray().back() != utils::IteratorType::reduction ||
      op.getMatchingIndexingMap(op.getDpsInitOperand(0)) !=
          AffineMap::get(loops, 0, outer, op.getContext()))
    return failure();
  BlockArgument acc = op.getMatchingBlockArgument(op.getDpsInitOperand(0));
  auto add = op.getBody()
                 ->getTerminator()
                 ->getOperand(0)
                 .getDefiningOp<arith::AddFOp>();
  if (!add || (add.getLhs() == acc) == (add.getRhs() == acc))
    return failure();
  Value term = add.getLhs() == acc ? add.getRhs() : add.getLhs();
  SmallVector<Value> work{term};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (v == acc)
      return failure();
    if (Operation *def = v.getDefiningOp(); def && def->getBlock() == op.getBody())
      llvm::append_range(work, def->getOperands());
  }
  return term;
}

/// The many-rows contraction `op` (loops m, n, k; its body `acc + x * w`
/// of its two inputs, one indexed (m, k), the other (n, k) or (k, n); its
/// init a fill) as a staged contraction whose elements are the
/// decomposition's evaluated where they are staged: the weight decoded
/// once per block tile and step.
static std::optional<StagedContraction>
stagedQuantized(linalg::GenericOp op, Value term,
                const llvm::SmallPtrSetImpl<Operation *> &decomposition) {
  auto mul = term.getDefiningOp<arith::MulFOp>();
  auto fill = op.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>();
  if (!mul || !fill || !decomposition.contains(fill) ||
      op.getNumDpsInputs() != 2)
    return std::nullopt;
  MLIRContext *ctx = op.getContext();
  auto dims = [&](unsigned i, unsigned j) {
    return AffineMap::get(3, 0,
                          {getAffineDimExpr(i, ctx), getAffineDimExpr(j, ctx)},
                          ctx);
  };
  Value aInput, bInput;
  bool bAlongK = false;
  for (OpOperand *input : op.getDpsInputOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(input);
    if (mul.getLhs() != arg && mul.getRhs() != arg)
      return std::nullopt;
    AffineMap map = op.getMatchingIndexingMap(input);
    if (map == dims(0, 2))
      aInput = input->get();
    else if (map == dims(1, 2) || map == dims(2, 1)) {
      bInput = input->get();
      bAlongK = map == dims(1, 2);
    }
  }
  if (!aInput || !bInput || mul.getLhs() == mul.getRhs())
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  StagedContraction c;
  c.m = ranges[0];
  c.n = ranges[1];
  c.k = ranges[2];
  c.resultType = cast<RankedTensorType>(op->getResult(0).getType());
  c.bAlongK = bAlongK;
  Location loc = op.getLoc();
  c.a = [&, aInput, loc](OpBuilder &b, Value, Value m, Value k) {
    return PointEvaluator(b, loc, decomposition).element(aInput, {m, k});
  };
  c.b = [&, bInput, bAlongK, loc](OpBuilder &b, Value, Value k, Value n) {
    PointEvaluator eval(b, loc, decomposition);
    return bAlongK ? eval.element(bInput, {n, k})
                   : eval.element(bInput, {k, n});
  };
  Value start = fill.getInputs()[0];
  c.finish = [start, loc](OpBuilder &b, Value, Value, Value, Value sums,
                          Value mine) {
    return finishTile(b, loc, sums, mine, start);
  };
  return c;
}

LogicalResult mlir::fuel::scheduleGpuQuantized(
    RewriterBase &rewriter, linalg::LinalgOp root,
    const llvm::SmallPtrSetImpl<Operation *> &decomposition,
    const GpuScheduleOptions &options, std::string &why) {
  auto contraction = dyn_cast<linalg::GenericOp>(root.getOperation());
  FailureOr<Value> term =
      contraction ? summedTerm(contraction) : FailureOr<Value>(failure());
  if (failed(term) ||
      !cast<RankedTensorType>(contraction->getResult(0).getType())
           .getElementType()
           .isF32()) {
    why = "the op's last step is not a sum of products into an f32 output";
    return failure();
  }
  Location loc = root.getLoc();
  rewriter.setInsertionPoint(root);
  SmallVector<int64_t> ranges = root.getStaticLoopRanges();
  // Many rows (prefill): block tiles whose threads stage the activations
  // and the decoded weight in workgroup memory along K where the shape
  // allows; else the contraction schedule's block and thread tiles, the
  // weight decoded per thread tile and reduction step.
  if (ranges.size() == 3 && ranges[0] > kMaxRows) {
    std::optional<StagedContraction> staged =
        stagedQuantized(contraction, *term, decomposition);
    if (staged && canStageContraction(*staged, options)) {
      rewriter.replaceOp(
          root, buildStagedContraction(rewriter, loc, *staged, options));
      return success();
    }
    return scheduleGpuContraction(rewriter, root, decomposition, options, why);
  }
  int64_t k = ranges.back();
  ArrayRef<int64_t> outShape = ArrayRef<int64_t>(ranges).drop_back();
  int64_t outputs = 1;
  for (int64_t size : outShape)
    outputs *= size;
  Value init = contraction.getDpsInitOperand(0)->get();

  BlockLoops build(rewriter, loc);
  // Thread t takes chunks t, t + T, ... of up to 8 consecutive k: the
  // activations of a chunk are read at once, and what its weights share
  // (a quant block's scale, a word of quants) LLVM reads once.
  int64_t chunk = kChunk;
  while (chunk > 1 && k % chunk != 0)
    chunk /= 2;
  int64_t threads = threadsFor(k / chunk, options.maxThreads);
  Value flat = build.perBlock(outputs, [&](Value block) {
    // The block's output element: `block` in the output's row-major order.
    SmallVector<Value> ivs(outShape.size());
    Value rest = block;
    for (int64_t d = static_cast<int64_t>(outShape.size()) - 1; d > 0; --d) {
      Value size = build.index(outShape[d]);
      ivs[d] = arith::RemUIOp::create(rewriter, loc, rest, size);
      rest = arith::DivUIOp::create(rewriter, loc, rest, size);
    }
    ivs[0] = rest;
    return build.onEveryThread(threads, [&](Value t) {
      Value sum = build.blockReduce(
          t, threads, k / chunk, 0.0, gpu::AllReduceOperation::ADD,
          [&](OpBuilder &b, Value c, Value acc) -> Value {
            ChunkReads reads;
            reads.kBase = arith::MulIOp::create(
                b, loc, c, arith::ConstantIndexOp::create(b, loc, chunk));
            for (int64_t j = 0; j < chunk; ++j)
              reads.ks.push_back(
                  j ? arith::AddIOp::create(
                          b, loc, reads.kBase,
                          arith::ConstantIndexOp::create(b, loc, j))
                          .getResult()
                    : reads.kBase);
            for (Value kk : reads.ks) {
              SmallVector<Value> point(ivs);
              point.push_back(kk);
              PointEvaluator eval(b, loc, decomposition, &reads);
              Value x = eval.valueAt(contraction, point, *term);
              acc = arith::AddFOp::create(b, loc, acc, x);
            }
            return acc;
          });
      // The output's initial value (the decomposition's fill) added once.
      Value start = PointEvaluator(rewriter, loc, decomposition)
                        .element(init, ivs);
      return arith::AddFOp::create(rewriter, loc, start, sum).getResult();
    });
  });

  auto resultType = cast<RankedTensorType>(root->getResult(0).getType());
  Value result = flat;
  if (resultType.getRank() != 1) {
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0; d < resultType.getRank(); ++d)
      all.front().push_back(d);
    result =
        tensor::ExpandShapeOp::create(rewriter, loc, resultType, flat, all);
  }
  rewriter.replaceOp(root, result);
  return success();
}
