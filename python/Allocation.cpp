//===- Allocation.cpp - The compiled code's buffer allocation -------------===//
//
// The generic allocation functions that code compiled with
// `fuel-to-llvm{generic-allocation}` calls (upstream's
// `finalize-memref-to-llvm{use-generic-functions}`), as the runner provides
// them: malloc and free, with a buffer of 4 MiB or more advised onto
// transparent huge pages, as numpy does for its arrays. Where the kernel
// gives huge pages on request only (THP "madvise", a common default), the
// first touch of a large buffer fresh from the system (a result of dynamic
// shape, a temporary) is then a page fault per 2 MiB instead of per 4 KiB:
// softmax over [4096, 1024] with the last 4 results kept alive, 4,096
// faults and 10.2 ms a call from malloc alone, 519 and 4.5 ms advised
// (bench/dynamic_calls.py). A result's buffer is freed with free() by the
// array that takes it over.
//
//===----------------------------------------------------------------------===//

#include "Allocation.h"

#include <cstdint>
#include <cstdlib>
#include <sys/mman.h>

namespace nb = nanobind;

namespace {
/// Buffers from this size on are advised onto huge pages (numpy's bound).
constexpr size_t kHugePageBytes = size_t(1) << 22;

void adviseHugePages(void *buffer, size_t size) {
#ifdef MADV_HUGEPAGE
  if (!buffer || size < kHugePageBytes)
    return;
  // madvise takes whole pages: from the first page boundary in the buffer.
  auto begin = reinterpret_cast<uintptr_t>(buffer);
  uintptr_t first = (begin + 4095) & ~uintptr_t(4095);
  // Advice only: a kernel without transparent huge pages says no, and the
  // buffer is as good as malloc made it.
  (void)madvise(reinterpret_cast<void *>(first), size - (first - begin),
                MADV_HUGEPAGE);
#else
  (void)buffer;
  (void)size;
#endif
}

extern "C" void *fuelAllocate(uint64_t size) {
  void *buffer = std::malloc(size);
  adviseHugePages(buffer, size);
  return buffer;
}

extern "C" void *fuelAllocateAligned(uint64_t alignment, uint64_t size) {
  void *buffer = nullptr;
  if (posix_memalign(&buffer, alignment, size) != 0)
    return nullptr;
  adviseHugePages(buffer, size);
  return buffer;
}

extern "C" void fuelFree(void *buffer) { std::free(buffer); }
} // namespace

void fuel::bindAllocationFunctions(nb::module_ &m) {
  m.def(
      "allocation_functions",
      [] {
        nb::dict functions;
        functions["_mlir_memref_to_llvm_alloc"] =
            reinterpret_cast<uintptr_t>(&fuelAllocate);
        functions["_mlir_memref_to_llvm_aligned_alloc"] =
            reinterpret_cast<uintptr_t>(&fuelAllocateAligned);
        functions["_mlir_memref_to_llvm_free"] =
            reinterpret_cast<uintptr_t>(&fuelFree);
        return functions;
      },
      "The generic allocation functions of code compiled with "
      "fuel-to-llvm{generic-allocation}, {symbol: address}: malloc and free, "
      "buffers of 4 MiB or more advised onto transparent huge pages.");
}
