//===- Pipelines.cpp - fuel pipelines and pass registration ---------------===//

#include "FuelFused/Codegen/Schedules.h"
#include "FuelFused/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

/// fuel (and linalg) on tensors -> the LLVM dialect, for the CPU and the
/// ExecutionEngine: the ops with a schedule become tiled, fused, vectorized
/// code (fuel-codegen-cpu); the others are decomposed (fused ops, and linalg
/// ops defined by their decomposition); then bufferize (identity layouts at
/// function boundaries; copies between non-contiguous buffers as loops),
/// lower linalg to loops, vectors to LLVM vectors
/// (f32 math on vectors through polynomial approximations) and convert
/// everything to LLVM. Scalar math the LLVM dialect has no intrinsic for
/// (tanh) calls libm. Every step is deterministic, so results are
/// bit-for-bit reproducible.
static std::string getFuelToLLVMPipeline(const fuel::FuelToLLVMOptions &o) {
  std::string codegen =
      o.codegen ? llvm::formatv("fuel-codegen-cpu{{vector-width={0} "
                                "vector-registers={1} "
                                "vector-register-bits={2} reciprocal={3} "
                                "threads={4}},",
                                o.vectorWidth.getValue(),
                                o.vectorRegisters.getValue(),
                                o.vectorRegisterBits.getValue(),
                                o.approximateMath ? "true" : "false",
                                o.threads.getValue())
                      .str()
                : std::string();
  std::string distinct =
      o.outParams ? "func.func(fuel-distinct-results)," : "";
  std::string outParams =
      o.outParams ? "buffer-results-to-out-params{hoist-static-allocs "
                  "modify-public-functions},"
                  : "";
  // Scheduled loops (scf.forall) run on the async runtime's threads, or in
  // order on the calling thread.
  std::string forallLowering =
      o.threads > 1
          ? llvm::formatv("scf-forall-to-parallel,"
                          "async-parallel-for{{async-dispatch min-task-size=1 "
                          "num-workers={0}},"
                          "async-to-async-runtime,"
                          "async-runtime-ref-counting,"
                          "async-runtime-ref-counting-opt,"
                          "arith-expand,"
                          "convert-async-to-llvm,",
                          o.threads.getValue())
                .str()
          : std::string("scf-forall-to-for,");
  std::string approximate =
      o.codegen && o.approximateMath ? "fuel-approximate-math," : "";
  std::string memrefToLLVM =
      o.genericAllocation ? "finalize-memref-to-llvm{use-generic-functions},"
                          : "finalize-memref-to-llvm,";
  return "fuel-check-buffer-sizes," + codegen +
         "fuel-decompose,"
         "fuel-decompose-aggregates,"
         "canonicalize,"
         "cse,"
         "loop-invariant-subset-hoisting,"
         "canonicalize,"
         "eliminate-empty-tensors," +
         distinct +
         "one-shot-bufferize{bufferize-function-boundaries "
         "function-boundary-type-conversion=identity-layout-map}," +
         outParams +
         "buffer-deallocation-pipeline,"
         "convert-bufferization-to-memref,"
         "func.func(fuel-strided-copies-to-loops)," +
         forallLowering +
         "func.func(convert-linalg-to-loops)," +
         approximate +
         "fuel-vector-reduction-trees,"
         "func.func(lower-vector-multi-reduction),"
         "convert-vector-to-scf{full-unroll},"
         "convert-scf-to-cf,"
         "expand-strided-metadata,"
         "lower-affine,"
         "fuel-bool-memrefs-to-i8," +
         memrefToLLVM +
         "convert-vector-to-llvm{vector-contract-lowering=outerproduct},"
         "convert-math-to-llvm,"
         "convert-math-to-libm,"
         "convert-arith-to-llvm,"
         "convert-func-to-llvm,"
         "convert-cf-to-llvm,"
         "convert-index-to-llvm,"
         "convert-ub-to-llvm,"
         "reconcile-unrealized-casts";
}

void mlir::fuel::buildFuelToLLVMPipeline(OpPassManager &pm,
                                         const FuelToLLVMOptions &options) {
  if (failed(parsePassPipeline(getFuelToLLVMPipeline(options), pm)))
    llvm::report_fatal_error("fuel-to-llvm: a pass of the pipeline is not "
                             "registered");
}

/// The PTX ISA version (times 10) that `chip` (sm_NN, sm_NNa) needs at
/// least; 0 when the chip is not known here (LLVM decides).
static int minimumPtxVersion(StringRef chip) {
  unsigned sm = 0;
  if (!chip.consume_front("sm_"))
    return 0;
  chip.consume_back("a");
  chip.consume_back("f");
  if (chip.getAsInteger(10, sm))
    return 0;
  static const std::pair<unsigned, int> table[] = {
      {50, 40}, {60, 50}, {70, 60}, {72, 61}, {75, 63},  {80, 70},
      {86, 71}, {87, 74}, {89, 78}, {90, 78}, {100, 86}, {120, 87}};
  int ptx = 0;
  for (auto [arch, version] : table)
    if (sm >= arch)
      ptx = version;
  return ptx;
}

/// The checks both GPU pipelines make.
static LogicalResult checkGpuOptions(int optLevel, int64_t maxThreads,
                                     int64_t computeUnits,
                                     int64_t ownRowsBytes, std::string &why) {
  if (ownRowsBytes < 0 || ownRowsBytes > 48 * 1024) {
    why = "own-rows-bytes must be from 0 to 49152, got " +
          std::to_string(ownRowsBytes);
    return failure();
  }
  if (computeUnits < 0) {
    why = "compute-units must be 0 (from the chip) or more, got " +
          std::to_string(computeUnits);
    return failure();
  }
  if (optLevel < 0 || optLevel > 3) {
    why = "opt-level must be from 0 to 3, got " + std::to_string(optLevel);
    return failure();
  }
  if (maxThreads < 32 || maxThreads > 1024 ||
      !llvm::isPowerOf2_64(maxThreads)) {
    why = "max-threads must be a power of two from 32 to 1024, got " +
          std::to_string(maxThreads);
    return failure();
  }
  return success();
}

/// Checks the options of fuel-to-nvvm; the message says what is wrong.
static LogicalResult checkNVVMOptions(const fuel::FuelToNVVMOptions &o,
                                      std::string &why) {
  StringRef format = o.format.getValue();
  if (!llvm::is_contained(
          {"isa", "bin", "fatbin", "llvm", "offload", "emulator",
           "emulator-profile"},
          format)) {
    why = "format must be isa, bin, fatbin, llvm, offload, emulator or "
          "emulator-profile, got '" +
          format.str() + "'";
    return failure();
  }
  if (failed(
          checkGpuOptions(o.optLevel, o.maxThreads, o.computeUnits,
                          o.ownRowsBytes, why)))
    return failure();
  if (!StringRef(o.chip.getValue()).starts_with("sm_")) {
    why = "chip must be an NVIDIA architecture (sm_80, sm_90, ...), got '" +
          o.chip.getValue() + "'";
    return failure();
  }
  int needed = minimumPtxVersion(o.chip.getValue());
  StringRef features = o.features.getValue();
  size_t at = features.find("+ptx");
  unsigned have = 0;
  if (needed && at != StringRef::npos &&
      !features.drop_front(at + 4).take_while(llvm::isDigit).getAsInteger(
          10, have) &&
      static_cast<int>(have) < needed) {
    why = llvm::formatv("{0} needs PTX {1}.{2} at least (features=+ptx{3}), "
                        "got '{4}'",
                        o.chip.getValue(), needed / 10, needed % 10, needed,
                        features)
              .str();
    return failure();
  }
  return success();
}

/// Checks the options of fuel-to-rocdl; the message says what is wrong.
static LogicalResult checkROCDLOptions(const fuel::FuelToROCDLOptions &o,
                                       std::string &why) {
  if (failed(
          checkGpuOptions(o.optLevel, o.maxThreads, o.computeUnits,
                          o.ownRowsBytes, why)))
    return failure();
  if (!StringRef(o.chip.getValue()).starts_with("gfx")) {
    why = "chip must be an AMD GPU architecture (gfx90a, gfx942, ...), got '" +
          o.chip.getValue() + "'";
    return failure();
  }
  if (!llvm::is_contained({"llvm", "emulator", "emulator-profile"},
                          o.format.getValue())) {
    why = "format must be llvm, emulator or emulator-profile, got '" +
          o.format.getValue() + "'";
    return failure();
  }
  return success();
}

/// The steps both GPU pipelines share: fuel and linalg on tensors to
/// outlined GPU kernels in the GPU dialect, on memrefs. The ops with a GPU
/// schedule become block- and thread-mapped loops (fuel-codegen-gpu);
/// everything else is decomposed, its loops tiled over blocks and threads
/// (fuel-gpu-map-parallel-loops); after bufferization a thread's loops
/// that run at most once become their body or an if
/// (fuel-gpu-single-trip-loops) and the short ones that index a thread's
/// buffer are unrolled (fuel-gpu-unroll-private-loops), so that it stays
/// in registers; both kinds of loops become gpu.launch
/// ops, buffers inside kernels go to registers or shared memory
/// (fuel-gpu-private-allocs), the host side's buffers go to the device
/// (fuel-gpu-host-buffers), and the launches are outlined.
static std::string getGpuKernelsPipeline(bool codegen, int64_t maxThreads,
                                         int64_t maxStagedHeadDim,
                                         int64_t computeUnits,
                                         int64_t ownRowsBytes,
                                         bool privateAddressSpace) {
  std::string schedule =
      codegen ? llvm::formatv("fuel-codegen-gpu{{max-threads={0} "
                              "max-staged-head-dim={1} compute-units={2} "
                              "own-rows-bytes={3}},",
                              maxThreads, maxStagedHeadDim, computeUnits,
                              ownRowsBytes)
                    .str()
              : std::string();
  return "fuel-check-buffer-sizes," + schedule +
         "fuel-decompose,"
         "fuel-decompose-aggregates,"
         "canonicalize,"
         "cse,"
         "loop-invariant-subset-hoisting,"
         "linalg-fuse-elementwise-ops,"
         "eliminate-empty-tensors,"
         "one-shot-bufferize{bufferize-function-boundaries "
         "function-boundary-type-conversion=identity-layout-map},"
         "convert-bufferization-to-memref,"
         "canonicalize,"
         "cse,"
         "func.func(fuel-strided-copies-to-loops),"
         "fuel-gpu-single-trip-loops,"
         "fuel-gpu-unroll-private-loops,"
         "fuel-gpu-map-forall,"
         "func.func(convert-linalg-to-parallel-loops)," +
         llvm::formatv("fuel-gpu-map-parallel-loops{{max-threads={0}},",
                       maxThreads)
             .str() +
         "convert-parallel-loops-to-gpu," +
         (privateAddressSpace
              ? "fuel-gpu-private-allocs{private-address-space},"
              : "fuel-gpu-private-allocs,") +
         "fuel-gpu-host-buffers,"
         "canonicalize,"
         "cse,"
         "func.func(lower-vector-multi-reduction),"
         "convert-vector-to-scf{full-unroll},"
         "fuel-bool-memrefs-to-i8,"
         "gpu-launch-sink-index-computations,"
         "gpu-kernel-outlining,"
         "gpu.module(fuel-gpu-align-vector-accesses),"
         "func.func(gpu-async-region),"
         "convert-scf-to-cf,"
         "convert-func-to-llvm,"
         "expand-strided-metadata,";
}

/// The widest attention heads whose key and value blocks the GPU forms
/// stage on `chip` (an sm_XX): 128 from sm_90 on, whose ptxas fits the
/// staged forward at D = 128 in 204 registers and dq at D = 64 in 167
/// without spills (ptxas for sm_80 spills 0.7 to 4.5 KiB of either), the
/// schedule's default before.
static int64_t stagedHeadDimFor(StringRef chip) {
  unsigned sm = 0;
  if (chip.consume_front("sm_") &&
      !chip.take_while(llvm::isDigit).getAsInteger(10, sm) && sm >= 90)
    return 128;
  return fuel::GpuScheduleOptions().maxStagedHeadDim;
}

/// The multiprocessors of the largest GPU of `chip`'s generation (NVIDIA's
/// SMs, AMD's compute units): H100 and H200 (sm_90), A100 (sm_80),
/// MI300X (gfx942), MI250X's GCD (gfx90a); else fuel-codegen-gpu's
/// default (A100's); `given` where it is set (above 0).
static int64_t computeUnitsFor(StringRef chip, int64_t given) {
  if (given > 0)
    return given;
  return llvm::StringSwitch<int64_t>(chip)
      .StartsWith("sm_90", 132)
      .Case("gfx942", 304)
      .Case("gfx90a", 110)
      .Default(fuel::GpuScheduleOptions().computeUnits);
}

/// After the target is attached: the kernels lowered with `convertGpu`
/// (convert-gpu-to-nvvm or -rocdl, with its options), then the host. The
/// kernels go first: a memref.dim whose index is still a constant lowers
/// without a stack array (which AMDGPU rejects outside address space 5).
/// `withoutDeviceLibrary`: the kernels' math is rewritten first into what
/// needs no call into the device library (fuel-gpu-expand-math).
static std::string getGpuLoweringPipeline(const std::string &convertGpu,
                                          bool withoutDeviceLibrary) {
  return std::string("lower-affine,"
                     "gpu.module(fuel-gpu-lower-all-reduce,"
                     "canonicalize,"
                     "strip-debuginfo,"
                     "fuel-gpu-lower-vectors,") +
         (withoutDeviceLibrary ? "fuel-gpu-expand-math," : "") + convertGpu +
         ","
         "canonicalize,"
         "cse,"
         "reconcile-unrealized-casts),"
         "convert-arith-to-llvm,"
         "convert-index-to-llvm,"
         "canonicalize,"
         "cse,"
         "gpu-to-llvm,";
}

/// The host's last steps, after the kernels are serialized.
static const char *const kGpuHostTail = "convert-math-to-llvm,"
                                        "canonicalize,"
                                        "cse,"
                                        "reconcile-unrealized-casts";

/// The last step of format=emulator and emulator-profile: the kernels
/// compiled for the host, for the GPU emulator (with each load and store
/// counted by its memory-access profile).
static std::string getEmulatedKernels(StringRef format) {
  return format == "emulator-profile"
             ? "fuel-gpu-emulated-kernels{memory-profile},"
             : "fuel-gpu-emulated-kernels,";
}

/// fuel (and linalg) on tensors -> GPU kernels for NVIDIA GPUs, serialized
/// (PTX by default), and host code that launches them through the GPU
/// runtime (libmlir_cuda_runtime); lowered as upstream's
/// gpu-lower-to-nvvm-pipeline does.
static std::string getFuelToNVVMPipeline(const fuel::FuelToNVVMOptions &o) {
  std::string toolkit =
      o.toolkit.getValue().empty()
          ? std::string()
          : llvm::formatv(" toolkit={0}", o.toolkit.getValue()).str();
  return getGpuKernelsPipeline(o.codegen, o.maxThreads,
                               stagedHeadDimFor(o.chip.getValue()),
                               computeUnitsFor(o.chip, o.computeUnits),
                               o.ownRowsBytes,
                               /*privateAddressSpace=*/false) +
         "convert-nvvm-to-llvm," +
         llvm::formatv("nvvm-attach-target{{chip={0} features={1} O={2}},",
                       o.chip.getValue(), o.features.getValue(),
                       o.optLevel.getValue())
             .str() +
         getGpuLoweringPipeline("convert-gpu-to-nvvm",
                                /*withoutDeviceLibrary=*/false) +
         (StringRef(o.format.getValue()).starts_with("emulator")
              ? getEmulatedKernels(o.format.getValue())
              : llvm::formatv("fuel-gpu-module-to-binary{{format={0}{1} "
                              "short-pointers={2}},",
                              o.format.getValue(), toolkit,
                              o.shortPointers.getValue())
                    .str()) +
         kGpuHostTail;
}

/// fuel (and linalg) on tensors -> GPU kernels for AMD GPUs as device LLVM
/// IR (fuel-gpu-module-to-llvm-ir), and host code that launches them.
static std::string getFuelToROCDLPipeline(const fuel::FuelToROCDLOptions &o) {
  std::string features =
      o.features.getValue().empty()
          ? std::string()
          : llvm::formatv(" features={0}", o.features.getValue()).str();
  return getGpuKernelsPipeline(o.codegen, o.maxThreads,
                               fuel::GpuScheduleOptions().maxStagedHeadDim,
                               computeUnitsFor(o.chip, o.computeUnits),
                               o.ownRowsBytes,
                               /*privateAddressSpace=*/true) +
         llvm::formatv("rocdl-attach-target{{chip={0} wave64={1} O={2}{3}},",
                       o.chip.getValue(), o.wave64 ? "true" : "false",
                       o.optLevel.getValue(), features)
             .str() +
         getGpuLoweringPipeline(
             llvm::formatv("convert-gpu-to-rocdl{{chipset={0}}",
                           o.chip.getValue())
                 .str(),
             /*withoutDeviceLibrary=*/true) +
         (StringRef(o.format.getValue()).starts_with("emulator")
              ? getEmulatedKernels(o.format.getValue())
              : std::string("fuel-gpu-module-to-llvm-ir,")) +
         kGpuHostTail;
}

LogicalResult
mlir::fuel::buildFuelToNVVMPipeline(OpPassManager &pm,
                                    const FuelToNVVMOptions &options) {
  std::string why;
  if (failed(checkNVVMOptions(options, why)))
    return failure();
  return parsePassPipeline(getFuelToNVVMPipeline(options), pm);
}

LogicalResult
mlir::fuel::buildFuelToROCDLPipeline(OpPassManager &pm,
                                     const FuelToROCDLOptions &options) {
  std::string why;
  if (failed(checkROCDLOptions(options, why)))
    return failure();
  return parsePassPipeline(getFuelToROCDLPipeline(options), pm);
}

/// Registers a GPU pipeline whose options are checked before it is built.
template <typename Options>
static void registerGpuPipeline(
    StringRef name, StringRef description,
    LogicalResult (*check)(const Options &, std::string &),
    std::string (*build)(const Options &)) {
  std::string prefix = name.str() + ": ";
  registerPassPipeline(
      name, description,
      [=](OpPassManager &pm, StringRef text,
          function_ref<LogicalResult(const Twine &)> errorHandler) {
        Options options;
        if (failed(options.parseFromString(text)))
          return failure();
        std::string why;
        if (failed(check(options, why)))
          return errorHandler(prefix + why);
        if (failed(parsePassPipeline(build(options), pm)))
          return errorHandler(prefix +
                              "a pass of the pipeline is not registered");
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> print) {
        print(Options());
      });
}

void mlir::fuel::registerFuelPassesAndPipelines() {
  registerFuelPasses();
  PassPipelineRegistration<FuelToLLVMOptions>(
      "fuel-to-llvm",
      "Lower fuel and linalg on tensors to the LLVM dialect for the CPU "
      "(schedule or decompose, bufferize, loops and vectors, LLVM)",
      [](OpPassManager &pm, const FuelToLLVMOptions &options) {
        buildFuelToLLVMPipeline(pm, options);
      });
  registerGpuPipeline<FuelToNVVMOptions>(
      "fuel-to-nvvm",
      "Compile fuel and linalg on tensors to GPU kernels for NVIDIA GPUs "
      "(GPU schedules or decomposition, loops mapped to blocks and threads, "
      "NVVM, PTX or cubin) and host code that launches them",
      checkNVVMOptions, getFuelToNVVMPipeline);
  registerGpuPipeline<FuelToROCDLOptions>(
      "fuel-to-rocdl",
      "Compile fuel and linalg on tensors to GPU kernels for AMD GPUs (GPU "
      "schedules or decomposition, loops mapped to blocks and threads, "
      "ROCDL, device LLVM IR for llc-22 and ld.lld-22) and host code that "
      "launches them",
      checkROCDLOptions, getFuelToROCDLPipeline);
}

