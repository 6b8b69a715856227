//===- CheckBufferSizes.cpp - The fuel-check-buffer-sizes pass ------------===//
//
// Static shapes whose elements or bytes overflow 64 bits are errors before
// bufferization, which would abort on them.
//
//===----------------------------------------------------------------------===//

#include "FuelFused/Transforms/Passes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/CheckedArithmetic.h"

namespace mlir::fuel {
#define GEN_PASS_DEF_FUELCHECKBUFFERSIZES
#include "FuelFused/Transforms/Passes.h.inc"
} // namespace mlir::fuel

using namespace mlir;

/// Whether the static dims of `type` (a shaped type with a rank), and its
/// bytes, can be counted in 64 bits.
static bool fitsInABuffer(ShapedType type) {
  std::optional<int64_t> elements = 1;
  for (int64_t dim : type.getShape())
    if (!ShapedType::isDynamic(dim))
      elements = elements ? llvm::checkedMul(*elements, dim) : std::nullopt;
  if (!elements)
    return false;
  Type element = type.getElementType();
  if (!element.isIntOrIndexOrFloat())
    return true;
  int64_t bytes = llvm::divideCeil(
      element.isIndex() ? 64 : element.getIntOrFloatBitWidth(), 8);
  return llvm::checkedMul(*elements, bytes).has_value();
}

namespace {
struct FuelCheckBufferSizesPass
    : public fuel::impl::FuelCheckBufferSizesBase<FuelCheckBufferSizesPass> {
  void runOnOperation() override {
    auto tooLarge = [](Type type) {
      auto shaped = dyn_cast<ShapedType>(type);
      return shaped && shaped.hasRank() && !fitsInABuffer(shaped);
    };
    WalkResult walked = getOperation().walk([&](Operation *op) {
      SmallVector<Type> types(op->getResultTypes());
      for (Region &region : op->getRegions())
        for (Block &block : region)
          llvm::append_range(types, block.getArgumentTypes());
      for (Type type : types)
        if (tooLarge(type)) {
          op->emitError() << type
                          << " has more elements or bytes than 64 bits "
                             "count: no buffer can hold it";
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    if (walked.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
