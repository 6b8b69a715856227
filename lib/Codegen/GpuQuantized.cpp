//===- GpuQuantized.cpp - The quantized matmuls on a GPU ------------------===//
//
// qmatmul (every GGML type), nf4_matmul and awq_matmul with few rows of
// activations (decode) on a GPU: a block per output element (row m of the
// activations, column n of the weight), the K products split over the
// block's T threads in chunks of up to 8 consecutive k: thread t takes
// chunks t, t + T, ... (a warp's loads of activations and of quantized
// words are consecutive), reads a chunk's activations at once (ChunkReads,
// GpuQuantized.h: 16-byte vectors), decodes each weight where it reads it,
// in registers, and keeps its partial sum; the partials are combined
// across the block by `gpu.all_reduce`. What a chunk's weights share (a
// quant block's scale) is the same index arithmetic on consecutive k,
// read once; the words that hold a chunk's bytes of quants (GGML's 8
// bytes: 2 or 3 words, which LLVM cannot tell apart and read a byte at a
// time) are read once each, every weight selecting its own
// (ChunkReads::word). The [N, K] f32 weight the decomposition
// materializes never exists: each quantized byte is read once per row of
// activations, from global memory or the cache. A weight laid out [K, N]
// (awq's, eight 4-bit codes a word along n) would be read down its columns
// that way, the lanes of a warp a word of rows 8 k apart and each word by
// 8 blocks; it takes lanes along n instead (GpuQuantizedAlongN.cpp: a
// thread per word of 8 columns, a block per run of 8 words and partition
// of K, the threads' partial sums added in workgroup memory).
//
// The decoding is the decomposition's own: the contraction's body, and the
// body of the elementwise op that dequantizes the weight, are evaluated at
// the thread's (m, n, k) (PointEvaluator), so every quant type
// the decomposition knows is scheduled, with its exact arithmetic. More
// rows (prefill) stage the activations and the decoded weight in shared
// memory per block tile and step along K (GpuStaged.h) where M and N are
// multiples of 32 and K of 8, else take the contraction schedule's block
// and thread tiles (GpuContraction.cpp) with the dequantization fused into
// each thread's reduction steps (tiles of the result's conversion to f16 or
// bf16 where there is one).
//
//===----------------------------------------------------------------------===//

#include "GpuBlockLoops.h"
#include "GpuQuantized.h"
#include "GpuSchedules.h"
#include "GpuStaged.h"

#include "FuelFused/IR/FuelOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

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
  auto isFloat = [](Type t) { return t.isF32() || t.isF16() || t.isBF16(); };
  if (!isFloat(elt) || !isFloat(out.getElementType())) {
    why = "the GPU quantized schedule handles f32, f16 and bf16 activations "
          "and results";
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
    if (Operation *def = v.getDefiningOp();
        def && def->getBlock() == op.getBody())
      llvm::append_range(work, def->getOperands());
  }
  return term;
}

/// The many-rows contraction `op` (loops m, n, k; its body `acc + x * w`
/// of its two inputs, one indexed (m, k), the other (n, k) or (k, n); its
/// init a fill) as a staged contraction whose elements are the
/// decomposition's evaluated where they are staged: the weight decoded
/// once per block tile and step. Where `conversion` is given (an
/// elementwise op that converts the contraction's result, see
/// convertElement), its result: each thread's tile converted as it is
/// written.
static std::optional<StagedContraction>
stagedQuantized(linalg::GenericOp op, Value term,
                const llvm::SmallPtrSetImpl<Operation *> &decomposition,
                linalg::GenericOp conversion) {
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
  c.resultType = cast<RankedTensorType>(
      (conversion ? conversion.getOperation() : op.getOperation())
          ->getResult(0)
          .getType());
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
  c.finish = [start, loc, conversion](OpBuilder &b, Value, Value, Value,
                                      Value sums, Value mine) {
    return finishTile(b, loc, sums, mine, start, /*addendDim=*/0,
                      [&](OpBuilder &nb, Value v) {
                        return convertElement(nb, conversion, v);
                      });
  };
  return c;
}


/// The contraction whose result the decomposition's result `root` is:
/// `root` itself where it sums products into an f32 output, or where
/// `root` only converts such a contraction's result elementwise (to f16 or
/// bf16 activations' result type), that contraction. Else null.
static linalg::GenericOp
contractionOf(linalg::LinalgOp root,
              const llvm::SmallPtrSetImpl<Operation *> &decomposition) {
  auto isF32Sum = [](linalg::GenericOp op) {
    return op && succeeded(summedTerm(op)) &&
           cast<RankedTensorType>(op->getResult(0).getType())
               .getElementType()
               .isF32();
  };
  auto generic = dyn_cast<linalg::GenericOp>(root.getOperation());
  if (!generic)
    return {};
  if (isF32Sum(generic))
    return generic;
  // (What convertElement takes: one input, read by a flat body alone.)
  if (generic.getNumDpsInputs() != 1 || generic.getNumReductionLoops() != 0 ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }) ||
      !generic.getMatchingBlockArgument(generic.getDpsInitOperand(0))
           .use_empty() ||
      llvm::any_of(generic.getBody()->without_terminator(),
                   [](Operation &op) {
                     return isa<linalg::IndexOp>(op) ||
                            op.getNumRegions() != 0;
                   }))
    return {};
  auto producer =
      generic.getDpsInputOperand(0)->get().getDefiningOp<linalg::GenericOp>();
  if (!producer || !decomposition.contains(producer) || !isF32Sum(producer))
    return {};
  return producer;
}

LogicalResult mlir::fuel::scheduleGpuQuantized(
    RewriterBase &rewriter, linalg::LinalgOp last,
    const llvm::SmallPtrSetImpl<Operation *> &decomposition,
    const GpuScheduleOptions &options, std::string &why) {
  // With f16 or bf16 activations the result is the f32 contraction's
  // converted: the decode forms and the staged prefill tiles convert each
  // output where they write it; the contraction schedule's tiles are then
  // of the conversion, the contraction fused in.
  linalg::GenericOp contraction = contractionOf(last, decomposition);
  if (!contraction) {
    why = "the op's last step is not a sum of products into an f32 output";
    return failure();
  }
  linalg::GenericOp conversion;
  if (last.getOperation() != contraction.getOperation())
    conversion = cast<linalg::GenericOp>(last.getOperation());
  FailureOr<Value> term = summedTerm(contraction);
  linalg::LinalgOp root = cast<linalg::LinalgOp>(contraction.getOperation());
  Location loc = root.getLoc();
  rewriter.setInsertionPoint(root);
  SmallVector<int64_t> ranges = root.getStaticLoopRanges();
  // Many rows (prefill): block tiles whose threads stage the activations
  // and the decoded weight in workgroup memory along K where the shape
  // allows; else the contraction schedule's block and thread tiles, the
  // weight decoded per thread tile and reduction step.
  if (ranges.size() == 3 && ranges[0] > kMaxRows) {
    std::optional<StagedContraction> staged =
        stagedQuantized(contraction, *term, decomposition, conversion);
    if (staged && canStageContraction(*staged, options)) {
      rewriter.replaceOp(
          last, buildStagedContraction(rewriter, loc, *staged, options));
      return success();
    }
    // With a conversion of the result (f16, bf16 activations), the tiles
    // are of it: each thread converts its outputs as it writes them, the
    // contraction fused in (no f32 result, no kernel of its own).
    linalg::LinalgOp tiled =
        conversion ? cast<linalg::LinalgOp>(conversion.getOperation()) : root;
    return scheduleGpuContraction(rewriter, tiled, decomposition, options,
                                  why);
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
  auto resultType = cast<RankedTensorType>(last->getResult(0).getType());
  // A [K, N] weight: lanes along n, each thread a run of columns.
  if (Value result =
          buildGpuQuantizedAlongN(rewriter, contraction, conversion, *term,
                                  decomposition, options, chunk)) {
    rewriter.replaceOp(last, result);
    return success();
  }

  int64_t threads = threadsFor(k / chunk, options.maxThreads);
  Value flat = build.perBlock(outputs, resultType.getElementType(),
                              [&](Value block) {
    // The block's output element: `block` in the output's row-major order.
    SmallVector<Value> ivs = delinearize(rewriter, loc, block, outShape);
    Value sum = build.onEveryThread(threads, [&](Value t) {
      Value sum = build.blockReduce(
          t, threads, k / chunk, 0.0, gpu::AllReduceOperation::ADD,
          [&](OpBuilder &b, Value c, Value acc) -> Value {
            ChunkReads reads;
            reads.windows = true;
            reads.addAxis(
                b, loc,
                arith::MulIOp::create(
                    b, loc, c, arith::ConstantIndexOp::create(b, loc, chunk)),
                chunk);
            for (Value kk : reads.axes[0].values) {
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
    return conversion ? convertElement(rewriter, conversion, sum) : sum;
  });

  Value result = flat;
  if (resultType.getRank() != 1) {
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0; d < resultType.getRank(); ++d)
      all.front().push_back(d);
    result =
        tensor::ExpandShapeOp::create(rewriter, loc, resultType, flat, all);
  }
  rewriter.replaceOp(last, result);
  return success();
}
