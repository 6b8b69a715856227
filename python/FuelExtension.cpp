//===- FuelExtension.cpp - Python extension for fuel-mlir -----------------===//
//
// Loaded by fuel_mlir._mlir_libs as a site initializer: registers the fuel
// dialect in every context the package creates, and exposes the registry's
// runtime registration to fuel_mlir.registry, and the runner's call path
// (FastCall.cpp).
//
//===----------------------------------------------------------------------===//

#include "Allocation.h"
#include "FastCall.h"

#include "fuel-c/Dialects.h"
#include "mlir-c/IR.h"
#include "mlir/Bindings/Python/Nanobind.h"
#include "mlir/Bindings/Python/NanobindAdaptors.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <string>
#include <vector>

namespace nb = nanobind;

/// An error callback of the C API: appends the message to a std::string.
static void appendMessage(MlirStringRef msg, void *user) {
  static_cast<std::string *>(user)->append(msg.data, msg.length);
}

/// The host's vector registers, as the CPU schedules size their register
/// tiles: (how many, bits each). What the JIT compiles for (the host CPU
/// and its features) decides: x86 with AVX-512 has 32 of 512 bits, with
/// AVX 16 of 256, else 16 of 128; AArch64 32 of 128.
static std::pair<int, int> hostVectorRegisters() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  llvm::Triple host(llvm::sys::getProcessTriple());
  if (host.isAArch64())
    return {32, 128};
  if (host.isX86()) {
    if (features.lookup("avx512f"))
      return {32, 512};
    if (features.lookup("avx"))
      return {16, 256};
  }
  return {16, 128};
}

NB_MODULE(_site_initialize_0, m) {
  m.doc() = "fuel-mlir: dialect registration and the runtime registry";
  fuelRegisterPasses();

  fuel::bindFastCall(m);
  fuel::bindAllocationFunctions(m);

  m.def("host_vector_registers", &hostVectorRegisters,
        "The host CPU's vector registers the JIT compiles for: (count, "
        "bits each).");

  m.def(
      "register_dialects",
      [](MlirDialectRegistry registry) {
        mlirDialectHandleInsertDialect(mlirGetDialectHandle__fuel__(),
                                       registry);
      },
      nb::arg("registry"), "Adds the fuel dialect to a dialect registry.");

  m.def(
      "register_runtime_op",
      [](const std::string &name, unsigned numOperands,
         const std::vector<std::string> &paramNames) {
        std::vector<MlirStringRef> params;
        for (const std::string &p : paramNames)
          params.push_back(mlirStringRefCreate(p.data(), p.size()));
        std::string error;
        unsigned id = fuelRegisterRuntimeOp(
            mlirStringRefCreate(name.data(), name.size()), numOperands,
            params.size(), params.data(),
            appendMessage,
            &error);
        if (!id)
          throw nb::value_error(error.c_str());
        return id;
      },
      nb::arg("name"), nb::arg("num_operands"),
      nb::arg("param_names") = std::vector<std::string>(),
      "Registers a fused op at run time and returns its id (>= 0x8000).");

  m.def(
      "add_fusion_recipe",
      [](const std::string &name, const std::string &text) {
        std::string error;
        if (!fuelAddFusionRecipe(
                mlirStringRefCreate(name.data(), name.size()),
                mlirStringRefCreate(text.data(), text.size()),
                appendMessage,
                &error))
          throw nb::value_error(error.c_str());
      },
      nb::arg("name"), nb::arg("text"),
      "Makes an op defined by a recipe a candidate of later fuel-fuse runs.");

  m.def(
      "lookup_id",
      [](const std::string &name) {
        return fuelLookupFusedOpId(
            mlirStringRefCreate(name.data(), name.size()));
      },
      nb::arg("name"),
      "The id of a registered fused op (static or runtime), or 0.");
}
