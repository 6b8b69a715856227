//===- Passes.td - fuel passes -----------------------------*- tablegen -*-===//

#ifndef FUEL_PASSES_TD
#define FUEL_PASSES_TD

include "mlir/Pass/PassBase.td"

def FuelDecompose : Pass<"fuel-decompose"> {
  let summary = "Decompose fuel.fused ops into linalg on tensors";
  let description = [{
    Rewrites every `fuel.fused` op into linalg/tensor/arith/math on tensors
    by instantiating its recipe, the same definition that fusion matches.
    The result is in the normal form: one scalar op per `linalg.generic`,
    reductions over `linalg.fill` inits, f16/bf16 computed in f32.

    ```mlir
    %y = fuel.fused softmax_last_dim (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    // becomes a max reduction, subtract, exp, sum reduction and divide.
    ```

    The pass is total: an op it cannot decompose (no recipe yet, operands
    on memrefs) stays fused, with a warning that says why. `ops=` decomposes
    only the named ops, `keep=` all but the named ones; an unknown name is an
    error. Ops defined by a recipe in IR (`fuel.recipe`) decompose through
    it like the others, and recipes no op names any more are erased.
  }];
  let options = [
    ListOption<"ops", "ops", "std::string",
               "Decompose only these fused ops (default: all)">,
    ListOption<"keep", "keep", "std::string",
               "Keep these fused ops fused">,
    Option<"quiet", "quiet", "bool", /*default=*/"false",
           "Do not warn about ops left fused">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def FuelFuse : Pass<"fuel-fuse"> {
  let summary = "Find fused ops in linalg IR by matching their recipes";
  let description = [{
    Replaces subgraphs of linalg on tensors that compute an op's recipe with
    `fuel.fused`, recovering the op's inputs and params. The matcher reads
    the recipes that `--fuel-decompose` instantiates, so
    `fuse(decompose(op))` gives back `op`. It matches modulo the spellings
    frontends use, without rewriting them first: one op per generic or many
    in one body, named linalg ops (matmul, batch_matmul, reduce, transpose,
    broadcast), broadcasts through indexing maps or as ops of their own,
    size-1 kept dims and unit reshapes, `1/x`, `rsqrt`, `sqrt` and `pow`
    for the same power, `x*x` as `powi`/`pow`, a mean as a division by the
    size or a multiply by its reciprocal, constants as scalars, casts or
    splat tensors, intermediates computed wider (an f64 variance), a bias in
    a matmul's init, attention's scale wherever the frontend put it, causal
    masks built from iotas and the fully-masked-row guard, convolutions
    (windows `o * stride + k` over zero padding; NCHW, NHWC or a generic;
    weights and results in another layout transposed), classification
    losses (a gather by target, the ignore index, the count of kept
    targets), and ops upstream defines by their decomposition
    (linalg.softmax). An op found inside a larger body (after upstream
    elementwise fusion: a norm with its weight, a RoPE inside the matmul
    that reads it) becomes an input of that body's op. A recipe that reads
    bool or enum params (causal, reduction) or optional operands is tried
    once per choice; ops that are decompose-only, or whose recipe depends on
    an integer param, are not searched for. A subgraph is fused only when its intermediate values have
    no other users; what is not fused is left exactly as it was.
    `report=near-misses` emits a remark at each root where a recipe got at
    least a third of the way before a rule stopped it, naming that rule, the
    IR op where the match stopped (its line and column) and what was
    expected against what was found. `report=misses` emits one remark per
    recipe tried at each candidate root, however far it got (its progress
    in percent), to see why an op was not even a near miss.

    Ops defined by recipes in IR are searched for too: the `fuel.recipe`s of
    the module, and those of the files `recipes=` names (a library of
    recipes; each one the pass uses is copied into the module, so that it
    stays self-contained), and those registered for fusion in the process
    (`fuel_mlir.registry.register` from Python), as if in such a library.
    A product is matched in any association and order of its factors
    (through multiplies, divisions and integer powers up to 4, in one body
    or over several ops); constants computed by elementwise ops of
    constants are folded. Larger recipes are tried first, static or not.

    The functions of a module are fused independently, on the context's
    threads; the result and the report are those of a single thread.

    `value-changing` also fuses forms equal to an op's formula in exact
    arithmetic that round otherwise (a layer norm whose variance is
    mean(x^2) - mean(x)^2, as Flax and jax.nn.standardize compute it;
    optax's integer-label cross-entropy as logsumexp(x) - x[t]): the
    fused op computes its own definition, so results change. Without it,
    the near-miss report names the option where such a form matched.

    ```mlir
    // The normal form of softmax over the last dim (max, subtract, exp,
    // sum, divide) becomes:
    %y = fuel.fused softmax_last_dim (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let options = [
    ListOption<"ops", "ops", "std::string",
               "Search only for these fused ops (default: all with a recipe)">,
    ListOption<"recipes", "recipes", "std::string",
               "Files of fuel.recipe definitions to search for as well">,
    Option<"valueChanging", "value-changing", "bool", /*default=*/"false",
           "Also fuse the forms that equal an op's formula in exact arithmetic "
           "but round otherwise (the README lists them)">,
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "'near-misses': a remark at each candidate that almost matched, "
           "naming the rule that stopped it; 'misses': a remark for every "
           "recipe tried at each candidate, with how far it got">
  ];
  // The pass's work, for --mlir-pass-statistics (and the test that it
  // grows linearly with the module).
  let statistics = [
    Statistic<"numRoots", "roots", "Candidate roots tried">,
    Statistic<"numAttempts", "attempts", "Recipe matches attempted">,
    Statistic<"numFused", "fused", "Fused ops created">
  ];
  let dependentDialects = ["::mlir::fuel::FuelDialect"];
}

def FuelBoolMemrefsToI8 : Pass<"fuel-bool-memrefs-to-i8", "::mlir::ModuleOp"> {
  let summary = "Store i1 memrefs as bytes so that they lower to LLVM";
  let description = [{
    Rewrites every memref of `i1` (masks, after bufferization) into a memref
    of `i8` holding 0 or 1: loads truncate, stores extend, allocations,
    views, copies, globals and function signatures change type. LLVM lowering
    of memrefs cannot store sub-byte elements; one byte per bool is also the
    layout numpy uses for `bool_`, so such buffers pass to and from compiled
    functions as they are. Part of `fuel-to-llvm`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def FuelStridedCopiesToLoops : Pass<"fuel-strided-copies-to-loops"> {
  let summary = "Copy between non-contiguous memrefs with loops, not the "
                "runtime's element-by-element copy";
  let description = [{
    Rewrites each `memref.copy` whose source or target is not contiguous
    (a subview: a concatenation, a padded input, a slice written into a
    larger buffer) into `linalg.copy`, which `convert-linalg-to-loops`
    turns into loops that LLVM vectorizes. MemRefToLLVM lowers such a copy
    to a call of the runtime's `memrefCopy`, which computes every element's
    address from the strides in a generic loop (about 10x slower on the
    copies the schedules leave); contiguous copies stay `memref.copy` (a
    `memcpy`), except in a loop that a GPU's blocks or threads run (an
    `scf.forall` mapped to `#gpu.block`s or `#gpu.thread`s), where the
    `memcpy` would carry no alignment and the backends would move it a
    byte at a time (a block's one f32 result: four `st.global.b8`). A copy
    of a buffer onto itself (which bufferization leaves where a tile was
    written in place) is dropped. Part of `fuel-to-llvm` and the GPU
    pipelines, after bufferization.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def FuelDecomposeAggregates : Pass<"fuel-decompose-aggregates"> {
  let summary = "Decompose linalg ops defined by their decomposition "
                "(linalg.softmax) into linalg.generic";
  let description = [{
    Replaces every op implementing `linalg::AggregatedOpInterface` (upstream's
    `linalg.softmax`) by the decomposition the interface provides: fills and
    linalg.generic ops, which bufferize and lower to loops like any other.
    Part of `fuel-to-llvm`, so that IR holding such ops runs on the CPU.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FuelCodegenCPU : Pass<"fuel-codegen-cpu"> {
  let summary = "Decompose the fused ops that have a schedule into tiled, "
                "fused and vectorized code";
  let description = [{
    For every `fuel.fused` op whose record names a schedule and whose shapes
    suit it (static tensors; for the row-wise schedule of softmax, RMS norm,
    layer norm, their backwards and inplace_affine, a row length that is a
    multiple of `vector-width`), the
    op is decomposed and its decomposition scheduled: one row per iteration
    of an `scf.forall` with every step of the op fused into it, each step
    over the row in vectors, reductions as partial vector sums. Ops it does
    not schedule are left for `fuel-decompose`; with `report=true` a remark
    says why. Part of `fuel-to-llvm`.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16",
           "Vector lanes per step (16 f32 lanes fill an AVX-512 register)">,
    Option<"vectorRegisters", "vector-registers", "int64_t",
           /*default=*/"32",
           "Vector registers of the target (32 with AVX-512, 16 with AVX2): "
           "the contraction's register tile takes half of them">,
    Option<"vectorRegisterBits", "vector-register-bits", "int64_t",
           /*default=*/"512",
           "Bits of one vector register of the target (512 with AVX-512, "
           "256 with AVX2)">,
    Option<"reciprocal", "reciprocal", "bool", /*default=*/"true",
           "Divide a row by its statistic (softmax's sum, a norm's root "
           "mean square) as one reciprocal per row and a multiply per "
           "element (about one ulp from dividing); off: a divide per "
           "element">,
    Option<"threads", "threads", "int64_t", /*default=*/"1",
           "Threads the scheduled loops' iterations are shared by "
           "(fuel-to-llvm's threads): the contraction makes at least two "
           "cache tiles per thread where its shape allows">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Remark on each op with a schedule that is left unscheduled, "
           "and why">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect",
    // llvm.freeze, which keeps nf4_matmul's looked-up vectors whole.
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def FuelApproximateMath : Pass<"fuel-approximate-math"> {
  let summary = "Polynomial approximations of f32 math functions on vectors";
  let description = [{
    Rewrites `math.exp`, `math.log`, `math.tanh`, `math.erf` and the other
    f32 functions upstream approximates, when they operate on vectors, into
    polynomial approximations built from vector arithmetic, so they run in
    vector registers instead of one libm call per lane. Scalar math is left
    to libm. The approximations are accurate to a few ulp (the numerics
    suite checks them against numpy within its f32 tolerances). Part of
    `fuel-to-llvm`, after vectorization.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def FuelVectorReductionTrees : Pass<"fuel-vector-reduction-trees"> {
  let summary = "Float vector reductions as trees of halving steps";
  let description = [{
    Rewrites each `vector.reduction` of floats (add, mul, maximumf,
    minimumf, maxnumf, minnumf) on a fixed 1-D vector of 4 lanes or more into
    log2(n) steps that combine the vector's two halves with one vector
    operation, then takes the last lane (and combines it with the
    accumulator, if any). Without `reassoc`, LLVM lowers a float reduction in
    lane order, one dependent scalar operation per lane, which the row
    schedules would pay once per row. The schedules have already
    reassociated these reductions (partial results per lane), so the order
    of the last step changes results only as any reassociation does; it is
    fixed, so results stay reproducible. Masked reductions and integer ones
    (which LLVM already lowers as trees) are left alone. Part of
    `fuel-to-llvm`, after `lower-vector-multi-reduction`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::vector::VectorDialect"];
}

def FuelCheckBufferSizes : Pass<"fuel-check-buffer-sizes", "::mlir::ModuleOp"> {
  let summary = "Reject static shapes too large for any buffer";
  let description = [{
    Fails, with an error at the op, when a value of the module (an op's
    result or a block's argument) has a static shape whose elements, or
    whose bytes, do not fit in 64 bits: no buffer can hold it, and
    upstream's bufferization computes its strides in 64 bits and aborts on
    the overflow (an assertion) instead of reporting it. Dynamic dims are
    left to run time. The first step of `fuel-to-llvm`, `fuel-to-nvvm` and
    `fuel-to-rocdl`, which bufferize.
  }];
}

def FuelDistinctResults : Pass<"fuel-distinct-results", "::mlir::func::FuncOp"> {
  let summary = "Copy a tensor a function returns more than once";
  let description = [{
    Every further occurrence of a tensor among a function's return operands
    becomes a copy (`linalg.copy` into a `tensor.empty`), so that each result
    bufferizes to its own buffer and can be written into its own out-param.
    Part of `fuel-to-llvm{out-params}`, right before bufferization
    (upstream's `buffer-results-to-out-params{hoist-static-allocs}` cannot
    take one buffer returned twice).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FuelCodegenGPU : Pass<"fuel-codegen-gpu"> {
  let summary = "Decompose the fused ops that have a GPU schedule into "
                "block- and thread-mapped loops";
  let description = [{
    For every `fuel.fused` op whose record names a schedule with a GPU form
    and whose shapes suit it, the op is decomposed and its decomposition
    scheduled for a GPU. The row-wise ops (softmax, RMS and layer norm,
    their backwards, inplace_affine; static shapes, one to three leading
    dims, rows a multiple of 32 long) get one row per block (an `scf.forall`
    mapped to `#gpu.block`s) split over the block's threads (an
    `scf.forall` mapped to `#gpu.thread<x>`, thread t on elements t, t + T,
    ...: coalesced), each thread's elements in vector registers and each
    reduction combined across the block by `gpu.all_reduce`.
    `fused_softmax_cross_entropy` gets a block per row of logits in the same
    way (max, then sum of exponentials, each reduced across the block), and
    its sum or mean over the rows a block of its own; the quantized matmuls
    with up to 16 rows a block per output element whose threads decode
    each weight where they read it (a block per run of 64 columns whose
    threads take 8 columns each where the weight is laid out [K, N], as
    awq's). `fused_linear` gets
    block and thread tiles of its output, `flash_attn` a thread per query
    row of a block of queries, its key and value blocks staged in workgroup
    memory for heads up to `max-staged-head-dim` wide, and the block's
    query rows once where they fit `own-rows-bytes` (with fewer than 32
    query rows, a block per row and partition of its keys whose threads
    split them and combine their partials in workgroup memory), and its
    backwards a
    thread per query row (dq) or key row (dk, dv), staging the blocks the
    rows share likewise (see docs/GPU.md).
    Ops it does not
    schedule are left for `fuel-decompose` (and lowered one kernel per loop
    nest); with `report=true` a remark says why. Part of `fuel-to-nvvm`.
  }];
  let options = [
    Option<"maxThreads", "max-threads", "int64_t", /*default=*/"256",
           "Threads per block at most (a power of two, at least 32)">,
    Option<"maxStagedHeadDim", "max-staged-head-dim", "int64_t",
           /*default=*/"64",
           "Widest attention heads whose shared blocks are staged in "
           "workgroup memory (dq and dk: half as wide; a multiple of 16, 0 "
           "for none). fuel-to-nvvm sets 128 for sm_90 and later">,
    Option<"computeUnits", "compute-units", "int64_t", /*default=*/"108",
           "The GPU's multiprocessors (SMs, CUs): contractions take 128 x "
           "128 block tiles only where those give at least this many "
           "blocks, and halve 64 x 64 ones (to 32 x 32 at most) until "
           "they do. fuel-to-nvvm and fuel-to-rocdl set it from the chip">,
    Option<"ownRowsBytes", "own-rows-bytes", "int64_t",
           /*default=*/"32768",
           "The most workgroup memory (bytes, at most 49152) a staged "
           "attention block takes once the rows each thread reads at every "
           "step (queries; dk's and dv's keys) are staged there too; rows "
           "that do not fit are read from global memory (0: all of them)">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Remark on each op left without a GPU schedule, and why">
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def FuelGpuMapForall : Pass<"fuel-gpu-map-forall"> {
  let summary = "Turn scf.forall loops mapped to GPU blocks and threads into "
                "gpu.launch";
  let description = [{
    Each bufferized `scf.forall` mapped to `#gpu.block`s (and not inside a
    launch) becomes a `gpu.launch` whose grid is its trip counts; the
    `scf.forall` loops mapped to `#gpu.thread`s in its body, directly or in
    `scf.for` loops there (steps along a reduction that the block's threads
    take together), set the block size (the largest of their trip counts)
    and become the launch's thread ids, guarded where a loop has fewer
    iterations than the block has threads; such a loop must not
    synchronize the block (a `gpu.barrier` or `gpu.all_reduce` in it is an
    error: the threads it skips would never reach them). A `gpu.barrier`
    follows a thread loop where memory is accessed after it in its block,
    and always in an `scf.for` (the next step may overwrite what it
    read). A mapped
    loop anywhere else in the block's body is an error. Upstream does
    this only as transform ops (`transform.gpu.map_forall_to_blocks`,
    `map_nested_forall_to_threads`); this is the pass form the pipeline
    needs. Bounds and steps must be static; an induction variable becomes
    `lb + id * step`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect"];
}

def FuelGpuSingleTripLoops : Pass<"fuel-gpu-single-trip-loops"> {
  let summary = "Rewrite the GPU threads' loops that run at most once into "
                "their body or an scf.if";
  let description = [{
    Each `scf.for` in a loop on GPU threads (an `scf.forall` mapped to
    `#gpu.thread`s) whose bounds, by integer range analysis, let it run at
    most once (its lower bound's least value plus its constant step
    reaches its upper bound's greatest) becomes its body where it runs
    exactly once (its lower bound's greatest value is below its upper
    bound's least) and an `scf.if` on the lower bound being below the upper
    bound where it may not run; the induction variable is the lower bound.
    Such loops come of a schedule's strided loops over fewer elements than
    threads and of steps over a dim that the shape or a mask leaves
    shorter than a step (an attention key row's query blocks). Upstream
    folds only loops of constant bounds; as loops, LLVM's LICM takes every
    value of their body for loop-invariant and hoists their loads above the
    inner loops that precede their use, where they stay live: a key row's
    block of queries, read for its scores and again for dk, 512 values
    across the step, kernels that spilled 1.5 to 4 KiB (ptxas) or 1 KiB of
    scratch (gfx942). Part of the GPU pipelines, after bufferization (an
    `scf.if` on tensors would bufferize to a copy of its result).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def FuelGpuUnrollPrivateLoops : Pass<"fuel-gpu-unroll-private-loops"> {
  let summary = "Unroll the GPU threads' short loops that index private "
                "buffers";
  let description = [{
    Each `scf.for` in a loop on GPU threads (an `scf.forall` mapped to
    `#gpu.thread`s) whose body indexes a private buffer (a `memref.alloc`
    or `alloca` inside a loop on GPU blocks or threads, outside workgroup
    memory, or a view of one) at an offset that varies with the loop (is
    computed from its induction variable) is unrolled fully (upstream's
    `loopUnrollFull`), inner loops first, where it has at most
    `max-trips` iterations (constant bounds) that read at most
    `max-streamed-elements` elements of other buffers (global or
    workgroup memory) in all, and where every other loop that indexes
    the same buffers so may be unrolled too: a buffer that one loop still
    indexes at varying offsets stays in memory, and unrolling the others
    would gain nothing. Every offset then becomes a constant, and LLVM's
    SROA keeps the buffer in registers.

    Such loops come of a schedule's steps along a thread's registers: the
    attention forms' rows of 16 scores taken 8 at a time where the heads
    are wider than 64. Upstream unrolls `scf.for` only on request
    (`transform.loop.unroll`); LLVM unrolls such loops for AMDGPU, whose
    cost model favours loops that index private arrays, but not for
    NVPTX, where they stayed loops over arrays in local memory (a 112-byte
    stack frame, a local load for each read). The budget of streamed
    elements keeps the loops that read blocks of global memory a step
    (attention's p . v over [8, 128] blocks of values), which, unrolled,
    spilled (stacks of 2 to 7.5 KiB). Part of the GPU pipelines, after
    `fuel-gpu-single-trip-loops`.
  }];
  let options = [
    Option<"maxTrips", "max-trips", "uint64_t", /*default=*/"4",
           "The most iterations of a loop that is unrolled">,
    Option<"maxStreamedElements", "max-streamed-elements", "uint64_t",
           /*default=*/"1024",
           "The most elements that a loop that is unrolled reads, over all "
           "its iterations, from buffers that are not private">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def FuelGpuMapParallelLoops : Pass<"fuel-gpu-map-parallel-loops"> {
  let summary = "Tile and map the scf.parallel loops left on the host to "
                "GPU blocks and threads";
  let description = [{
    Every outermost `scf.parallel` outside a `gpu.launch` (the loops of the
    linalg ops no schedule took) is tiled by `max-threads` along its
    innermost dim and 1 along the others, the tiles mapped to blocks (the
    innermost three dims to x, y, z) and the innermost dim of a tile to
    threads, ready for `convert-parallel-loops-to-gpu`: consecutive threads
    touch consecutive elements. Loops nested deeper run sequentially in a
    thread. Memory accesses left on the host outside any loop (a scalar
    result) run in a kernel of one thread, so that the host never touches
    device memory.
  }];
  let options = [
    Option<"maxThreads", "max-threads", "int64_t", /*default=*/"256",
           "Threads per block at most">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect"];
}

def FuelGpuPrivateAllocs : Pass<"fuel-gpu-private-allocs"> {
  let summary = "Give the buffers allocated inside GPU kernels a place "
                "there";
  let description = [{
    A `memref.alloc` inside a `gpu.launch` would lower to a call of the
    device's `malloc` (upstream accepts it silently). A static buffer in the
    workgroup address space becomes a workgroup attribution of the launch,
    shared with an earlier buffer of its type where each is allocated and
    used only inside its own op of the kernel's body and a `gpu.barrier`
    of that body lies between the two ops (upstream gives every buffer an
    attribution of its own: dq's two key loops took 24 KiB, not 14);
    any other static buffer a thread's own `memref.alloca` (in the private
    address space where `private-address-space` is set, as AMDGPU needs);
    their deallocations go. A buffer whose leading dims every access
    indexes by the same thread ids (a tensor of per-thread accumulators in
    the schedule's tensor form, whose thread loops each touch their
    thread's slice; a vector access may span those dims with one element)
    is first shrunk to the one slice a thread uses: those
    dims become 1 (upstream has no such rewrite; the transform dialect's
    mapping leaves such buffers whole); with static indices elsewhere it
    then lives in registers. With `private-address-space`, allocas already
    in kernels move there too. A thread's static buffer is allocated at
    the start of the kernel's body where no loop encloses it in the kernel,
    or where no view of it outlives the iteration of the loops that
    allocated it (none is yielded by a terminator, passed to a call, or
    made into a memref other than a view of it: every iteration's buffer
    can then be the same one). LLVM promotes to registers only the allocas
    of a function's entry block; one in a branch's block (the mapping's
    `if` of the threads that have work) stays a stack slot (AMDGPU's
    scratch), and one in a loop's body is a new stack allocation each
    iteration (a dynamic stack on AMDGPU). A buffer that a loop passes from
    an iteration to the next stays in the loop. A buffer of dynamic size
    inside a kernel is an error.
  }];
  let options = [
    Option<"privateAddressSpace", "private-address-space", "bool",
           /*default=*/"false",
           "Put private buffers in #gpu.address_space<private> (AMDGPU)">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect"];
}

def FuelGpuExpandMath : Pass<"fuel-gpu-expand-math", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Rewrite the math ops that the ROCDL conversion would lower "
                "to ROCm device library calls or to libcalls";
  let description = [{
    `convert-gpu-to-rocdl` lowers some math ops to calls of OCML, the ROCm
    device library, which the code objects of `fuel-to-rocdl` (`llc-22`
    and `ld.lld-22`, no ROCm) are not linked with: their loading would
    fail on an undefined symbol. Others (f32 `tanh`, `atan`, `sinh`, ...)
    it lowers to LLVM intrinsics that the AMDGPU backend can only make
    library calls of, which `llc-22` rejects. Before that conversion, this
    computes f16 and bf16 math in f32; `erf`, `erfc`, `cbrt`, `tanh`,
    `atan`, `atan2`, `asin`, `acos`, `expm1` and `log1p` as upstream's
    polynomial approximations (those the CPU path uses on vectors; the
    conversion's own `expm1` and `log1p`, exp(x) - 1 and log(1 + x), lose
    small arguments); `asinh`, `acosh`,
    `atanh`, `powf`, `tan` and `cosh` as upstream's expansions, `sinh` as
    (expm1(x) - expm1(-x)) / 2;
    and `floor`, `ceil`, `exp2`, `log2`, `log10`, `sin` and `cos` as calls
    of the LLVM intrinsics (`llvm.call_intrinsic`: the conversion sends
    their intrinsic ops to OCML too), which the backend lowers to its
    instructions. The other math ops (f32 `exp`, `log`, `sqrt`, ...)
    already lower to instructions. Upstream links OCML where ROCm is
    installed; this is the pass for a toolchain without it.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def FuelGpuLowerAllReduce : Pass<"fuel-gpu-lower-all-reduce", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Lower gpu.all_reduce and clustered gpu.subgroup_reduce in "
                "kernels, their known launch sizes as constants";
  let description = [{
    Each `gpu.all_reduce` becomes warp shuffles and a pass through workgroup
    memory (upstream's all-reduce patterns, which convert-gpu-to-nvvm and
    convert-gpu-to-rocdl otherwise apply themselves), and each
    scalar `gpu.subgroup_reduce` over clusters of at most 32 lanes becomes
    butterfly shuffles (upstream's patterns, which neither conversion
    applies: it would reject the op).
    Clusters of up to 32 lanes shuffle alike in NVIDIA's warps and in AMD's
    waves of 32 or 64. Then each
    `gpu.block_dim` and `gpu.grid_dim` in a kernel whose `known_block_size`
    or `known_grid_size` gives that dimension becomes the constant. The
    reduction's guards for a partial last warp then fold away, and an AMDGPU
    kernel does not call `__ockl_get_local_size`, which lives in the ROCm
    device library that `llc-22` and `ld.lld-22` do not link.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect"];
}

def FuelGpuLowerVectors : Pass<"fuel-gpu-lower-vectors", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Lower the kernels' vector ops to those the GPU conversions "
                "convert, contractions as outer products";
  let description = [{
    The vector-to-vector lowering that `convert-vector-to-llvm` applies
    before it converts (contractions as outer products, transfers as loads
    and stores, slices, broadcasts, transposes, shape casts and masks
    unrolled), applied to a GPU module; `convert-gpu-to-nvvm` and
    `convert-gpu-to-rocdl` then convert the vector ops left with the rest.
    The gap it fills: `convert-vector-to-llvm`'s type converter has no
    mapping for the GPU address spaces, so in a kernel it reports an error
    for each vector access to workgroup memory (and leaves the access for
    the GPU conversion, which maps them), and a pipeline run in process
    fails on those errors; its first step is not a pass of its own.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def FuelGpuAlignVectorAccesses : Pass<"fuel-gpu-align-vector-accesses", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Load and store the kernels' short vectors of global memory "
                "with the alignment their addresses are known to have, and "
                "scalars with their element's";
  let description = [{
    Each in-bounds 1-D `vector.transfer_read` and `vector.transfer_write` of
    at most 16 bytes in a kernel, along the innermost dim of a kernel
    argument or a view of one (`memref.subview`, `expand_shape`,
    `collapse_shape`, `reinterpret_cast`) with static strides and a unit
    innermost one, becomes a `vector.load` or `vector.store` whose
    `alignment` is what its address is known to be a multiple of: the
    argument's start is taken to be aligned to 16 bytes, and the element
    offset (the views' offsets and each index times its stride) is a
    multiple of the powers of two that its constants, sums, products,
    shifts, floor-divisions and remainders by powers of two, minima,
    maxima, selects, affine maps and `scf.for` induction variables (lower
    bound plus steps) give (`FuelFused/Codegen/TrailingZeros.h`). The backends then emit one instruction per vector
    (`ld.global.v4.b32`, `global_load_dwordx4`) where, at the element's
    alignment, they split it into one per element: the row-wise schedule's
    threads read and write chunks of 16 bytes this way. It runs after
    outlining, before the loops and views are lowered.

    The 16 bytes are an assumption: every buffer a kernel of these pipelines
    gets is a `gpu.alloc` (the device copies of the host function's
    arguments and its allocations, fuel-gpu-host-buffers), which the CUDA
    and HIP runtimes align to 256 bytes. Wider vectors are left at the
    element's alignment: told theirs, ptxas keeps all of a loop step's
    loads in flight at once (flash_attn's decoding kernel, when a thread
    read whole key rows: 168 registers for sm_90, 70 without), a trade of
    occupancy for latency that needs a GPU to judge; aligned, the staged
    dv's rows of output (D = 32) spill for sm_80.

    Each `memref.load` and `memref.store` of an integer or float of 8 bits
    or more without an `alignment` gets its element's size: lowered without
    one, its LLVM load or store takes the alignment of the default data
    layout when the GPU module is translated to LLVM IR, 4 bytes for an
    i64, which NVPTX then splits into two 32-bit accesses
    (`fused_softmax_cross_entropy`'s labels).
  }];
  let dependentDialects = ["::mlir::vector::VectorDialect"];
}

def FuelGpuModuleToLLVMIR : Pass<"fuel-gpu-module-to-llvm-ir", "::mlir::ModuleOp"> {
  let summary = "Replace each GPU module by a gpu.binary holding its device "
                "LLVM IR";
  let description = [{
    Each `gpu.module`, lowered to the LLVM dialect and with one target
    attribute, is translated to LLVM IR (for a ROCDL target, with the
    `amdgcn-amd-amdhsa` triple and the target's chip, features and wave size
    on each function) and replaced by a `gpu.binary` whose one
    object holds the IR as text (the `offload` format). Upstream's
    `gpu-module-to-binary` needs the target's LLVM backend even for its
    `llvm` format, and the MLIR wheel's LLVM has no AMDGPU backend: this is
    how `fuel-to-rocdl` hands its kernels to `llc-22` and `ld.lld-22`. A
    ROCDL module that calls the ROCm device library (OCML or OCKL: f64
    math, which `fuel-gpu-expand-math` leaves) gets a warning naming the
    functions: `llc-22` and `ld.lld-22` alone do not link it.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def FuelGpuModuleToBinary
    : Pass<"fuel-gpu-module-to-binary", "::mlir::ModuleOp"> {
  let summary = "gpu-module-to-binary with 32-bit addresses of NVIDIA "
                "shared, local and constant memory";
  let description = [{
    Runs upstream's `gpu-module-to-binary` (its `format` and `toolkit`)
    with LLVM's NVPTX option `nvptx-short-ptr` set to `short-pointers`
    for the time of the pass, then as it was. With it, the data layout of
    the NVPTX target machine that serializes an NVVM module makes pointers
    into workgroup (`addrspace(3)`), private and constant memory 32 bits
    wide: a thread's shared-memory address is one register, not two (and
    `ld.shared [%r]`, as CUDA's compiler emits it). Upstream's serializer
    takes its target machine's data layout and has no option for it; the
    NVPTX backend has only the command-line option, which this pass scopes
    to the serialization (two pipelines serializing at once in one process
    share it). A GPU module with another target is serialized as upstream
    does.
  }];
  let options = [
    Option<"format", "format", "std::string", /*default=*/"\"isa\"",
           "gpu-module-to-binary's format (llvm, isa, bin, fatbin)">,
    Option<"toolkit", "toolkit", "std::string", /*default=*/"\"\"",
           "gpu-module-to-binary's toolkit path">,
    Option<"shortPointers", "short-pointers", "bool", /*default=*/"true",
           "32-bit pointers for NVPTX's shared, local and constant memory "
           "(LLVM's nvptx-short-ptr)">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def FuelGpuEmulatedKernels
    : Pass<"fuel-gpu-emulated-kernels", "::mlir::ModuleOp"> {
  let summary = "Compile NVVM or ROCDL kernels for the host, to run on the "
                "CPU emulator of the GPU runtime";
  let description = [{
    Takes the place of `gpu-module-to-binary` in `fuel-to-nvvm` and of
    `fuel-gpu-module-to-llvm-ir` in `fuel-to-rocdl` with `format=emulator`.
    The functions and globals of each `gpu.module` (with an NVVM or a ROCDL
    target, lowered to the LLVM dialect) move into the host module under
    the prefix `__fuel_emu.<module>.`; what only a GPU has becomes a call
    into the emulator (`runtime/GpuEmulator.c`, built with the Python
    package as `libfuel_gpu_emulator.so`):

    - a thread's position and the block's and grid's sizes
      (`nvvm.read.ptx.sreg.tid.x`, `ntid`, `ctaid`, `nctaid`, `laneid`,
      `warpsize`; `rocdl.workitem.id.x`, `workgroup.id`, `workgroup.dim`,
      `grid.dim`, `wavefrontsize`): `fuel_emu_sreg(code)`;
    - `nvvm.barrier0`, `rocdl.barrier`, `rocdl.s.barrier`:
      `fuel_emu_barrier()`;
    - `nvvm.shfl.sync`: `fuel_emu_shfl(kind, mask, value, offset, clamp)`,
      with PTX's rules for the source lane and the valid bit;
    - `rocdl.ds_bpermute`, `rocdl.ds_swizzle` (lane exchanges of a wave)
      and `rocdl.mbcnt.lo`/`hi` (the lane's number): `fuel_emu_bpermute`,
      `fuel_emu_swizzle`, `fuel_emu_mbcnt`;
    - workgroup (3) and private (5) memory: plain host memory;
    - libdevice's functions (`__nv_expf`, ...): the emulator defines them
      with the C library's.

    Any other NVVM or ROCDL operation is an error that names it. Each
    `gpu.module` becomes a `gpu.binary` whose object names the module, so
    the host side is the one a GPU gets: it loads the module, looks up the
    kernel and launches it through the runtime functions of MLIR's GPU
    runtime wrappers, which the emulator implements on host memory. Each
    kernel gets an entry that takes the launch's `void **params`, and a
    global constructor registers the entries (with the lanes of a warp:
    32, or 64 for a wave64 ROCDL target) and the workgroup buffers with the
    emulator.

    Upstream can run a GPU kernel only on a GPU; this runs the kernels the
    GPU pipelines make, barriers and lane exchanges included, on the CPU,
    so that their numerics are checked where there is no GPU.

    With `memory-profile`, each load and store of a kernel (but those of
    its private memory) first calls `fuel_emu_access(site, address,
    bytes, alignment)`, and the constructor registers the module's table of sites
    (one line each: the function, `load` or `store`, the type, the
    alignment, the location). The emulator counts, per warp-wide request, the 32-byte
    sectors of device memory and the wavefronts of workgroup memory a GPU
    would need, against the fewest possible (coalescing and bank
    conflicts; docs/GPU.md). `fuel-to-nvvm` and `fuel-to-rocdl` select it
    with `format=emulator-profile`.

    The accesses counted are those the GPU makes: before they are counted,
    each module goes through LLVM's optimizer as its serialization would
    run it (the default pipeline at the target's opt level, with the NVPTX
    target machine for an NVVM target; the target-independent one for
    ROCDL, which the LLVM libraries here cannot compile for), then EarlyCSE
    and the load-store vectorizer as the NVPTX and AMDGPU code generators
    run them, and comes back into the LLVM dialect. So a load repeated at
    the same address counts once and neighbouring loads the vectorizer
    joins count as one; at O0 nothing is merged. The sites keep their file
    locations (through line tables); the device operations, calls into the
    emulator by then, carry the attributes of the intrinsics they stand
    for, so the optimizer moves accesses around them as on the GPU.
  }];
  let options = [
    Option<"memoryProfile", "memory-profile", "bool", /*default=*/"false",
           "Call the emulator's memory-access profile before each load "
           "and store of device and workgroup memory">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def FuelGpuHostBuffers : Pass<"fuel-gpu-host-buffers", "::mlir::ModuleOp"> {
  let summary = "Keep the host side's buffers on the device";
  let description = [{
    After the loops became `gpu.launch` ops, every function's memref
    arguments and allocations are still host memory, which a kernel cannot
    read. Each memref argument, and each `memref.get_global` outside a
    launch (a table of constants a kernel reads), gets a device copy
    (`gpu.alloc`, copied in at entry or where the global is read with
    `gpu.memcpy`, and copied back at each return when anything writes it),
    each `memref.alloc` outside a launch becomes a
    `gpu.alloc`, each returned buffer is copied into a new host buffer, and
    the device buffers are freed at each return. Arguments and results must
    be contiguous (identity layouts, as the GPU pipelines' bufferization
    makes them). Part of `fuel-to-nvvm` and `fuel-to-rocdl`.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // FUEL_PASSES_TD
